// DifferentialRunner (differential.hpp).
#include "heaplab/runner/differential.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <sstream>

#include "heaplab/check/defrag_obligations.hpp"
#include "heaplab/check/oom_obligations.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/model/interpreter.hpp"
#include "heaplab/runner/detail/reports.hpp"

namespace heaplab::runner {

namespace {

check::Violation violation(std::string name, std::string message) {
  check::Violation v;
  v.invariant = std::move(name);
  v.message   = std::move(message);
  return v;
}

std::string ref_text(std::optional<check::ObjRef> const& r) {
  return r ? std::to_string(r->block) + ":" + std::to_string(r->slot) : "null";
}

}  // namespace

DifferentialRunner::DifferentialRunner(std::unique_ptr<StepExecutor> executor,
                                       DifferentialOptions options,
                                       std::string name)
    : executor_(std::move(executor)), options_(std::move(options)), name_(std::move(name)) {
  HEAPLAB_EXPECTS(executor_ != nullptr, "DifferentialRunner needs an executor");
  if (name_.empty()) name_ = executor_->name();
}

Support DifferentialRunner::supports(core::HeapConfig const& config) const {
  try {
    config.validate();
  } catch (std::exception const& e) {
    return {false, e.what()};
  }
  return executor_->supports(config);
}

RunOutcome DifferentialRunner::run(schedule::Schedule const& schedule,
                                   StepCallback const& on_step) {
  schedule::validate(schedule);
  HEAPLAB_EXPECTS(usable_, "DifferentialRunner::run after a hang: the device is still busy");
  if (Support const s = supports(schedule.config); !s.supported)
    throw core::precondition_error("runner '" + name_ +
                                   "' does not support this config: " + s.reason);
  auto const& config = schedule.config;
  RunOutcome outcome;
  if (schedule.steps.empty()) return outcome;

  model::HeapModel mirror(config);
  schedule::ObjectId next_id = schedule::kFirstObjectId;

  auto crash = [&](std::size_t index, std::string const& description, std::string message) {
    Failure f;
    f.step             = index;
    f.kind             = FailureKind::crash;
    f.check            = checks::kException;
    f.message          = std::move(message);
    f.step_description = description;
    return f;
  };

  try {
    executor_->reset(config);
  } catch (std::exception const& e) {
    outcome.steps_run = 1;
    outcome.failure =
        crash(0,
              schedule::describe(config, schedule.steps[0]),
              std::string("reset of '") + executor_->name() + "' failed: " + e.what());
    return outcome;
  }

  for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
    schedule::Step const& step    = schedule.steps[i];
    std::string const description = schedule::describe(config, step);
    ++outcome.steps_run;
    StepReport report;
    report.index       = i;
    report.op          = schedule::step_name(step);
    report.description = description;
    report.num_blocks  = config.num_blocks;
    // Where the time goes (StepReport::times): each lap adds the time since the previous one.
    auto mark = std::chrono::steady_clock::now();
    auto lap  = [&mark](double& into) {
      auto const now = std::chrono::steady_clock::now();
      into += std::chrono::duration<double>(now - mark).count();
      mark = now;
    };

    auto finish = [&](std::optional<Failure> failure) {
      report.ok            = !failure.has_value();
      report.live_objects  = mirror.num_live();
      report.blocks_in_use = mirror.blocks_in_use();
      report.fragmentation = mirror.fragmentation();
      outcome.failure      = std::move(failure);
      if (on_step) on_step(report);
    };

    schedule::StepPlan const plan =
        schedule::plan_step(config, model::id_graph(mirror), step, next_id);
    next_id = plan.next_id;
    lap(report.times.model);

    // 2. The implementation runs the step.
    ExecutedStep got;
    try {
      got = executor_->execute(step, plan);
    } catch (execution_check_failed const& e) {
      Failure f;
      f.step             = i;
      f.kind             = FailureKind::invariant_violation;
      f.check            = e.check();
      f.message          = std::string(executor_->name()) + ": " + e.what();
      f.step_description = description;
      f.violations.push_back(violation(e.check(), e.what()));
      finish(std::move(f));
      return outcome;
    } catch (std::exception const& e) {
      finish(crash(i, description, std::string(executor_->name()) + ": " + e.what()));
      return outcome;
    }
    lap(report.times.implementation);
    if (got.hang) {
      usable_ = false;
      Failure f;
      f.step             = i;
      f.kind             = FailureKind::hang;
      f.check            = checks::kWatchdog;
      f.message          = *got.hang;
      f.step_description = description;
      finish(std::move(f));
      return outcome;
    }

    // 3. The mirror follows: refinement for placements, exact prediction for the rest.
    std::vector<check::Violation> refinement;  // placement, out of memory, passes
    std::optional<model::DefragResult> defrag_result;
    try {
      bool const allocates = std::holds_alternative<schedule::AllocWave>(step) ||
                             std::holds_alternative<schedule::ParallelDo>(step);
      if (!allocates && !got.placements.empty())
        refinement.push_back(violation(
            checks::kPlacement,
            "a " + report.op + " step reported " + std::to_string(got.placements.size()) +
                " new objects (first: id " + std::to_string(got.placements.front().id) + ")"));
      if (!std::holds_alternative<schedule::AllocWave>(step)) {
        model::apply_nulling(mirror, plan);
        model::apply_deletes(mirror, plan);
      }
      if (allocates && refinement.empty()) {
        // oom-justified (check/oom_obligations.hpp) needs the heap before the wave: the mirror,
        // which equals the implementation's heap after the previous step (else that step failed).
        // Only allocation-only waves: an alloc wave, or a parallel_do that deletes nothing (its
        // action is allocate_child). With deletes in the wave a block may be emptied, invalidated
        // and re-claimed during it, and no two snapshots can tell whether a slot stayed free.
        bool const allocation_only =
            std::holds_alternative<schedule::AllocWave>(step) || plan.deletes.empty();
        std::size_t const failed = plan.allocations.size() >= got.placements.size()
                                       ? plan.allocations.size() - got.placements.size()
                                       : 0;
        std::optional<check::HeapSnapshot> before;
        if (allocation_only && failed > 0 && options_.check_out_of_memory)
          before = mirror.snapshot();
        if (auto error = model::apply_placements(mirror, plan, got.placements)) {
          refinement.push_back(violation(checks::kPlacement, error->to_string()));
        } else {
          report.created       = got.placements.size();
          report.out_of_memory = failed;
          if (before) {
            std::set<schedule::ObjectId> placed;
            for (auto const& p : got.placements) placed.insert(p.id);
            std::vector<std::uint64_t> nulls(config.num_types(), 0);
            for (auto const& a : plan.allocations)
              if (!placed.count(a.id)) ++nulls.at(a.type);
            for (auto& v : check::check_oom_justified(*before, got.snapshot, nulls))
              refinement.push_back(std::move(v));
          }
        }
      }
      report.deleted = plan.deletes.size();
      if (auto const* d = std::get_if<schedule::Defrag>(&step)) {
        defrag_result        = mirror.defrag(d->type, model::defrag_options(*d, schedule.config));
        report.defrag_passes = defrag_result->passes.size();
        for (auto const& p : defrag_result->passes) report.moved += p.moved_objects;
        if (got.defrag_passes && *got.defrag_passes != defrag_result->passes.size())
          refinement.push_back(violation(
              checks::kDefragPasses,
              "the implementation ran " + std::to_string(*got.defrag_passes) +
                  " passes, the model " + std::to_string(defrag_result->passes.size()) +
                  " (CompactGpu sec. 3.6: the pass sequence is deterministic given the heap)"));
      }
    } catch (std::exception const& e) {
      finish(crash(i, description, std::string("model side: ") + e.what()));
      outcome.failure->actual = std::move(got.snapshot);
      return outcome;
    }

    // 4. Checks on the implementation's snapshot and the comparison with the mirror.
    // After a rejected placement the mirror is unchanged (apply_placements applies nothing).
    check::HeapSnapshot expected = mirror.snapshot();
    lap(report.times.model);
    std::vector<check::Violation> invariants = check::check_all(got.snapshot);
    if (auto const* d = std::get_if<schedule::Defrag>(&step)) {
      std::uint32_t const passes =
          got.defrag_passes.value_or(static_cast<std::uint32_t>(defrag_result->passes.size()));
      // The one implementation of CompactGpu's obligations, with the variant's source cap
      // (model::defrag_call takes it from the mirror's result).
      for (auto& v : check::check_defrag_obligations(
               got.snapshot, model::defrag_call(d->type, *defrag_result, passes)))
        invariants.push_back(std::move(v));
    }
    check::SnapshotDiff diff = check::diff(expected, got.snapshot, options_.diff);
    std::vector<check::Violation> roots;
    if (got.roots) {
      auto const want = mirror.root_locations();
      if (*got.roots != want) {
        std::size_t r = 0;
        while (r < want.size() && r < got.roots->size() && want[r] == (*got.roots)[r]) ++r;
        std::string msg = "root " + std::to_string(r) + ": expected ";
        msg += r < want.size() ? ref_text(want[r]) : "none";
        msg += ", actual ";
        msg += r < got.roots->size() ? ref_text((*got.roots)[r]) : "none";
        msg += " (" + std::to_string(want.size()) + " roots expected, " +
               std::to_string(got.roots->size()) + " reported)";
        roots.push_back(violation(checks::kRoots, msg));
      }
    }
    std::vector<check::Violation> digests;
    if (auto const* c = std::get_if<schedule::Check>(&step); c && c->graph_digest) {
      std::uint64_t const actual = schedule::graph_digest(model::id_graph(mirror));
      if (actual != *c->graph_digest)
        digests.push_back(violation(checks::kGraphDigest,
                                    "expected " + schedule::format_digest(*c->graph_digest) +
                                        ", got " + schedule::format_digest(actual)));
    }

    std::optional<Failure> failure;
    auto all = [&] {
      std::vector<check::Violation> v = refinement;
      v.insert(v.end(), invariants.begin(), invariants.end());
      v.insert(v.end(), roots.begin(), roots.end());
      v.insert(v.end(), digests.begin(), digests.end());
      return v;
    };
    if (!refinement.empty() || !invariants.empty()) {
      failure = detail::failure_from_violations(i, description, all());
      if (!refinement.empty()) failure->kind = FailureKind::divergence;
    } else if (!diff.empty()) {
      failure                   = Failure{};
      failure->step             = i;
      failure->step_description = description;
      failure->kind             = FailureKind::divergence;
      failure->check            = checks::kSnapshotDiff;
      failure->message = std::to_string(diff.total) + " differences from the model; first: " +
                         diff.differences.front().to_string();
      failure->violations = all();
    } else if (!roots.empty() || !digests.empty()) {
      failure = detail::failure_from_violations(i, description, all());
      if (!roots.empty()) failure->kind = FailureKind::divergence;
    }
    if (failure) {
      if (!diff.empty()) failure->diff = std::move(diff);
      failure->expected = std::move(expected);
      failure->actual   = std::move(got.snapshot);
    }
    bool const failed = failure.has_value();
    lap(report.times.checks);
    finish(std::move(failure));
    if (failed) return outcome;
  }
  return outcome;
}

}  // namespace heaplab::runner
