// Shared pieces of the heap family's runners (heap_runner.hpp, reports.hpp).
#include "heaplab/families/heap/heap_runner.hpp"

#include <cstdio>
#include <set>
#include <sstream>

#include "heaplab/check/dump.hpp"
#include "heaplab/families/heap/report.hpp"
#include "heaplab/families/heap/reports.hpp"

namespace heaplab::heap_family {

FailureKind kind_of_violation(check::Violation const& v) {
  if (v.invariant == checks::kGraphDigest || v.invariant == checks::kSnapshotDigest)
    return FailureKind::digest_mismatch;
  return FailureKind::invariant_violation;
}

HeapFailureDetail const* heap_detail(Failure const& failure) {
  return dynamic_cast<HeapFailureDetail const*>(failure.detail.get());
}

std::string HeapFailureDetail::report(Failure const& f, runner::ReportOptions const& o) const {
  std::ostringstream out;
  if (diff) {
    out << "  diff (expected = model, actual = " << (o.runner.empty() ? "implementation" : o.runner)
        << "): " << diff->total << " difference" << (diff->total == 1 ? "" : "s") << "\n";
    std::istringstream lines(format_diff(f.step, *diff, o.max_differences));
    for (std::string line; std::getline(lines, line);) out << "    " << line << "\n";
  }
  if (o.dump_snapshot && actual) {
    std::set<std::uint32_t> const blocks = relevant_blocks(f, *actual);
    out << "\n  snapshot after step " << f.step << " ("
        << (actual->producer.empty() ? "actual" : actual->producer)
        << (o.full_dump ? ")" : "; the blocks the failure is about, --full-dump for all)") << ":\n";
    std::istringstream lines(o.full_dump ? check::dump(*actual) : relevant_dump(*actual, blocks));
    for (std::string line; std::getline(lines, line);) out << "    " << line << "\n";
  }
  return out.str();
}

namespace {

/// One line: index, description, live objects, blocks in use, F, what the step did.
std::string step_line(std::size_t index,
                      std::string const& op,
                      std::string const& description,
                      bool ok,
                      HeapStepStats const& s) {
  char stats[160];
  std::snprintf(stats,
                sizeof stats,
                "live %zu, blocks %zu/%zu, F %.4f",
                s.live_objects,
                s.blocks_in_use,
                s.num_blocks,
                s.fragmentation);
  std::ostringstream out;
  out << "step " << index << ": " << description << " | " << stats;
  if (op == "alloc" || (op == "parallel_do" && (s.created || s.out_of_memory)))
    out << " | created " << s.created
        << (s.out_of_memory ? ", out of memory " + std::to_string(s.out_of_memory) : "");
  if (s.deleted) out << " | deleted " << s.deleted;
  if (op == "defrag") out << " | passes " << s.defrag_passes << ", moved " << s.moved;
  out << (ok ? " | ok" : " | FAILED");
  return out.str();
}

}  // namespace

StepReport step_report(std::size_t index,
                       std::string op,
                       std::string description,
                       bool ok,
                       HeapStepStats const& stats,
                       runner::StepTimes const& times) {
  StepReport r;
  r.index       = index;
  r.line        = step_line(index, op, description, ok, stats);
  r.op          = std::move(op);
  r.description = std::move(description);
  r.ok          = ok;
  r.live        = stats.live_objects;
  r.in_use      = stats.blocks_in_use;
  r.capacity    = stats.num_blocks;
  r.times       = times;
  r.counts      = {{"created", stats.created},
                   {"out_of_memory", stats.out_of_memory},
                   {"deleted", stats.deleted},
                   {"defrags", r.op == "defrag" ? 1u : 0u},
                   {"defrag_passes", stats.defrag_passes},
                   {"moved", stats.moved}};
  return r;
}

RunOutcome HeapRunner::run(runner::AnySchedule const& schedule, StepCallback const& on_step) {
  return run_schedule(schedule.get<schedule::Schedule>(), on_step);
}

Support HeapRunner::supports(runner::AnySchedule const& schedule) const {
  return supports_config(schedule.get<schedule::Schedule>().config);
}

namespace detail {

HeapStepStats stats_of(model::StepOutcome const& out, model::HeapModel const& model) {
  HeapStepStats s;
  s.created       = out.created;
  s.out_of_memory = out.failed;
  s.deleted       = out.deleted;
  s.live_objects  = out.live_objects;
  s.blocks_in_use = out.blocks_in_use;
  s.num_blocks    = model.num_blocks();
  s.fragmentation = out.fragmentation;
  if (out.defrag) {
    s.defrag_passes = out.defrag->passes.size();
    for (auto const& p : out.defrag->passes) s.moved += p.objects_moved;
  }
  return s;
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
    f = runner::failure_from_violations(
        out.index, out.description, out.violations, &kind_of_violation);
  }
  auto detail    = std::make_shared<HeapFailureDetail>();
  detail->actual = std::move(actual);
  f.detail       = std::move(detail);
  return f;
}

}  // namespace detail
}  // namespace heaplab::heap_family
