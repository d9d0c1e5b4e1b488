// Shared pieces of the runner interface (runner.hpp, detail/reports.hpp).
#include "heaplab/runner/runner.hpp"

#include <cstdio>
#include <sstream>

#include "heaplab/runner/detail/reports.hpp"

namespace heaplab::runner {

std::string StepReport::summary() const {
  char stats[160];
  std::snprintf(stats,
                sizeof stats,
                "live %zu, blocks %zu/%zu, F %.4f",
                live_objects,
                blocks_in_use,
                num_blocks,
                fragmentation);
  std::ostringstream out;
  out << "step " << index << ": " << description << " | " << stats;
  if (op == "alloc" || (op == "parallel_do" && (created || out_of_memory)))
    out << " | created " << created
        << (out_of_memory ? ", out of memory " + std::to_string(out_of_memory) : "");
  if (deleted) out << " | deleted " << deleted;
  if (op == "defrag") out << " | passes " << defrag_passes << ", moved " << moved;
  out << (ok ? " | ok" : " | FAILED");
  return out.str();
}

FailureKind kind_of_violation(check::Violation const& v) {
  if (v.invariant == checks::kGraphDigest || v.invariant == checks::kSnapshotDigest)
    return FailureKind::digest_mismatch;
  return FailureKind::invariant_violation;
}

namespace detail {

StepReport report_of(model::StepOutcome const& out, model::HeapModel const& model) {
  StepReport r;
  r.index         = out.index;
  r.op            = out.op;
  r.description   = out.description;
  r.ok            = out.ok();
  r.created       = out.created;
  r.out_of_memory = out.failed;
  r.deleted       = out.deleted;
  r.live_objects  = out.live_objects;
  r.blocks_in_use = out.blocks_in_use;
  r.num_blocks    = model.num_blocks();
  r.fragmentation = out.fragmentation;
  if (out.defrag) {
    r.defrag_passes = out.defrag->passes.size();
    for (auto const& p : out.defrag->passes) r.moved += p.objects_moved;
  }
  return r;
}

Failure failure_from_violations(std::size_t step,
                                std::string description,
                                std::vector<check::Violation> violations) {
  Failure f;
  f.step             = step;
  f.step_description = std::move(description);
  f.kind             = kind_of_violation(violations.front());
  f.check            = violations.front().invariant;
  f.message          = violations.front().to_string();
  if (violations.size() > 1)
    f.message += " (and " + std::to_string(violations.size() - 1) + " more)";
  f.violations = std::move(violations);
  return f;
}

Failure failure_of(model::StepOutcome const& out, check::HeapSnapshot actual) {
  Failure f;
  if (!out.error.empty()) {
    f.step             = out.index;
    f.step_description = out.description;
    f.kind             = FailureKind::crash;
    f.check            = checks::kException;
    f.message          = out.error;
    f.violations       = out.violations;
  } else {
    f = failure_from_violations(out.index, out.description, out.violations);
  }
  f.actual = std::move(actual);
  return f;
}

}  // namespace detail
}  // namespace heaplab::runner
