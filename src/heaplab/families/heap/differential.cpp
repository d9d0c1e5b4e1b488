// DifferentialRunner (differential.hpp).
#include "heaplab/families/heap/differential.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <sstream>

#include "heaplab/check/defrag_obligations.hpp"
#include "heaplab/check/oom_obligations.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/families/heap/reports.hpp"
#include "heaplab/model/interpreter.hpp"

namespace heaplab::heap_family {

namespace {

check::Violation violation(std::string name, std::string message) {
  check::Violation v;
  v.invariant = std::move(name);
  v.message   = std::move(message);
  return v;
}

std::string ref_text(std::optional<core::SlotRef> const& r) {
  return r ? std::to_string(r->block) + ":" + std::to_string(r->slot) : "null";
}

Failure failure_of(std::size_t step,
                   std::string const& description,
                   FailureKind kind,
                   std::string check,
                   std::string message) {
  Failure f;
  f.step             = step;
  f.kind             = kind;
  f.check            = std::move(check);
  f.message          = std::move(message);
  f.step_description = description;
  return f;
}

bool allocates(schedule::Step const& step) {
  return std::holds_alternative<schedule::AllocWave>(step) ||
         std::holds_alternative<schedule::ParallelDo>(step);
}

/// The mirror's side of one step (DifferentialRunner::run, steps 3 and 4): it follows the
/// implementation (refinement for placements, exact prediction for everything else), then the
/// implementation's snapshot is checked and compared with it.
class Mirror {
 public:
  Mirror(core::HeapConfig const& config, DifferentialOptions const& options)
      : config_(config), options_(options), model_(config) {}

  [[nodiscard]] model::HeapModel const& model() const { return model_; }

  /// Plans the step on the accepted id graph (new objects get the next ids). The graph is built
  /// only for the steps whose plan reads it (schedule::plan_reads_graph).
  schedule::StepPlan plan(schedule::Step const& step) {
    static schedule::IdGraph const kNoGraph;
    schedule::StepPlan plan =
        schedule::plan_step(config_,
                            schedule::plan_reads_graph(step) ? model::id_graph(model_) : kNoGraph,
                            step,
                            next_id_);
    next_id_ = plan.next_id;
    return plan;
  }

  /// Step 3: the mirror follows `got`. Returns the refinement violations (placement, out of
  /// memory, pass count); throws for a model-side error.
  std::vector<check::Violation> follow(schedule::Step const& step,
                                       schedule::StepPlan const& plan,
                                       ExecutedStep const& got,
                                       HeapStepStats& stats) {
    std::vector<check::Violation> refinement;
    defrag_result_.reset();
    if (!allocates(step) && !got.placements.empty())
      refinement.push_back(violation(checks::kPlacement,
                                     "a " + std::string(schedule::step_name(step)) +
                                         " step reported " + std::to_string(got.placements.size()) +
                                         " new objects (first: id " +
                                         std::to_string(got.placements.front().id) + ")"));
    if (!std::holds_alternative<schedule::AllocWave>(step)) {
      model::apply_nulling(model_, plan);
      model::apply_deletes(model_, plan);
    }
    if (allocates(step) && refinement.empty())
      accept_placements(step, plan, got, stats, refinement);
    stats.deleted = plan.deletes.size();
    if (auto const* d = std::get_if<schedule::Defrag>(&step)) {
      defrag_result_      = model_.defrag(d->type, schedule::defrag_options(*d));
      stats.defrag_passes = defrag_result_->passes.size();
      for (auto const& p : defrag_result_->passes) stats.moved += p.objects_moved;
      if (got.defrag_passes && *got.defrag_passes != defrag_result_->passes.size())
        refinement.push_back(violation(
            checks::kDefragPasses,
            "the implementation ran " + std::to_string(*got.defrag_passes) + " passes, the model " +
                std::to_string(defrag_result_->passes.size()) +
                " (CompactGpu sec. 3.6: the pass sequence is deterministic given the heap)"));
    }
    return refinement;
  }

  /// Step 4: the catalog and CompactGpu's obligations on the implementation's snapshot, the
  /// snapshot diff against `expected` (the mirror's snapshot after step 3), the roots and the check
  /// step's digests. `refinement` is step 3's result. Returns the step's failure, if any.
  std::optional<Failure> compare(std::size_t index,
                                 std::string const& description,
                                 schedule::Step const& step,
                                 check::HeapSnapshot expected,
                                 ExecutedStep& got,
                                 std::vector<check::Violation> const& refinement) const {
    std::vector<check::Violation> invariants = check::check_all(got.snapshot);
    if (auto const* d = std::get_if<schedule::Defrag>(&step)) {
      std::uint32_t const passes =
          got.defrag_passes.value_or(static_cast<std::uint32_t>(defrag_result_->passes.size()));
      // The one implementation of CompactGpu's obligations, with the variant's source cap
      // (model::defrag_call takes it from the mirror's result).
      for (auto& v : check::check_defrag_obligations(
               got.snapshot, model::defrag_call(d->type, *defrag_result_, passes)))
        invariants.push_back(std::move(v));
    }
    check::SnapshotDiff diff                  = check::diff(expected, got.snapshot, options_.diff);
    std::vector<check::Violation> const roots = compare_roots(got);
    std::vector<check::Violation> const digests = compare_digests(step);

    std::vector<check::Violation> all = refinement;
    all.insert(all.end(), invariants.begin(), invariants.end());
    all.insert(all.end(), roots.begin(), roots.end());
    all.insert(all.end(), digests.begin(), digests.end());
    std::optional<Failure> failure;
    if (!refinement.empty() || !invariants.empty()) {
      failure = runner::failure_from_violations(index, description, all, &kind_of_violation);
      if (!refinement.empty()) failure->kind = FailureKind::divergence;
    } else if (!diff.empty()) {
      failure             = failure_of(index,
                           description,
                           FailureKind::divergence,
                           checks::kSnapshotDiff,
                           std::to_string(diff.total) + " differences from the model; first: " +
                               diff.differences.front().to_string());
      failure->violations = all;
    } else if (!roots.empty() || !digests.empty()) {
      failure = runner::failure_from_violations(index, description, all, &kind_of_violation);
      if (!roots.empty()) failure->kind = FailureKind::divergence;
    }
    if (failure) {
      auto detail = std::make_shared<HeapFailureDetail>();
      if (!diff.empty()) detail->diff = std::move(diff);
      detail->expected = std::move(expected);
      detail->actual   = std::move(got.snapshot);
      failure->detail  = std::move(detail);
    }
    return failure;
  }

 private:
  /// Refinement of an allocating step's placements, with the oom-justified rule.
  void accept_placements(schedule::Step const& step,
                         schedule::StepPlan const& plan,
                         ExecutedStep const& got,
                         HeapStepStats& stats,
                         std::vector<check::Violation>& refinement) {
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
    if (allocation_only && failed > 0 && options_.check_out_of_memory) before = model_.snapshot();
    if (auto error = model::apply_placements(model_, plan, got.placements)) {
      refinement.push_back(violation(checks::kPlacement, error->to_string()));
      return;
    }
    stats.created       = got.placements.size();
    stats.out_of_memory = failed;
    if (!before) return;
    std::set<schedule::ObjectId> placed;
    for (auto const& p : got.placements) placed.insert(p.id);
    std::vector<std::uint64_t> nulls(config_.num_types(), 0);
    for (auto const& a : plan.allocations)
      if (!placed.count(a.id)) ++nulls.at(a.type);
    for (auto& v : check::check_oom_justified(*before, got.snapshot, nulls))
      refinement.push_back(std::move(v));
  }

  [[nodiscard]] std::vector<check::Violation> compare_roots(ExecutedStep const& got) const {
    if (!got.roots) return {};
    auto const want = model_.root_locations();
    if (*got.roots == want) return {};
    std::size_t r = 0;
    while (r < want.size() && r < got.roots->size() && want[r] == (*got.roots)[r]) ++r;
    std::string msg = "root " + std::to_string(r) + ": expected ";
    msg += r < want.size() ? ref_text(want[r]) : "none";
    msg += ", actual ";
    msg += r < got.roots->size() ? ref_text((*got.roots)[r]) : "none";
    msg += " (" + std::to_string(want.size()) + " roots expected, " +
           std::to_string(got.roots->size()) + " reported)";
    return {violation(checks::kRoots, msg)};
  }

  [[nodiscard]] std::vector<check::Violation> compare_digests(schedule::Step const& step) const {
    auto const* c = std::get_if<schedule::Check>(&step);
    if (c == nullptr || !c->graph_digest) return {};
    std::uint64_t const actual = schedule::graph_digest(model::id_graph(model_));
    if (actual == *c->graph_digest) return {};
    return {violation(checks::kGraphDigest,
                      "expected " + schedule::format_digest(*c->graph_digest) + ", got " +
                          schedule::format_digest(actual))};
  }

  core::HeapConfig const& config_;
  DifferentialOptions const& options_;
  model::HeapModel model_;
  schedule::ObjectId next_id_ = schedule::kFirstObjectId;
  std::optional<model::DefragResult> defrag_result_;  // of the current step, if a defrag
};

/// StepReport::times: each lap adds the time since the previous one.
class Laps {
 public:
  void lap(double& into) {
    auto const now = std::chrono::steady_clock::now();
    into += std::chrono::duration<double>(now - mark_).count();
    mark_ = now;
  }

 private:
  std::chrono::steady_clock::time_point mark_ = std::chrono::steady_clock::now();
};

/// One step of DifferentialRunner::run (steps 2 to 4); `hung` is set when the watchdog fired.
std::optional<Failure> run_step(StepExecutor& executor,
                                Mirror& mirror,
                                schedule::Step const& step,
                                std::size_t i,
                                std::string const& description,
                                HeapStepStats& stats,
                                runner::StepTimes& times,
                                bool& hung) {
  Laps laps;
  schedule::StepPlan const plan = mirror.plan(step);
  laps.lap(times.model);

  // 2. The implementation runs the step.
  ExecutedStep got;
  try {
    got = executor.execute(step, plan);
  } catch (execution_check_failed const& e) {
    Failure f = failure_of(i,
                           description,
                           FailureKind::invariant_violation,
                           e.check(),
                           std::string(executor.name()) + ": " + e.what());
    f.violations.push_back(violation(e.check(), e.what()));
    return f;
  } catch (std::exception const& e) {
    return failure_of(i,
                      description,
                      FailureKind::crash,
                      checks::kException,
                      std::string(executor.name()) + ": " + e.what());
  }
  laps.lap(times.implementation);
  times.readback = std::min(got.readback_seconds, times.implementation);
  times.implementation -= times.readback;
  if (got.hang) {
    hung = true;
    return failure_of(i, description, FailureKind::hang, checks::kWatchdog, *got.hang);
  }

  // 3. The mirror follows: refinement for placements, exact prediction for the rest.
  std::vector<check::Violation> refinement;
  try {
    refinement = mirror.follow(step, plan, got, stats);
  } catch (std::exception const& e) {
    Failure f      = failure_of(i,
                           description,
                           FailureKind::crash,
                           checks::kException,
                           std::string("model side: ") + e.what());
    auto detail    = std::make_shared<HeapFailureDetail>();
    detail->actual = std::move(got.snapshot);
    f.detail       = std::move(detail);
    return f;
  }
  check::HeapSnapshot expected = mirror.model().snapshot();
  laps.lap(times.model);

  // 4. Checks on the implementation's snapshot and the comparison with the mirror. After a
  // rejected placement the mirror is unchanged (apply_placements applies nothing).
  std::optional<Failure> failure =
      mirror.compare(i, description, step, std::move(expected), got, refinement);
  laps.lap(times.checks);
  return failure;
}

}  // namespace

DifferentialRunner::DifferentialRunner(std::unique_ptr<StepExecutor> executor,
                                       DifferentialOptions options,
                                       std::string name)
    : executor_(std::move(executor)), options_(std::move(options)), name_(std::move(name)) {
  HEAPLAB_EXPECTS(executor_ != nullptr, "DifferentialRunner needs an executor");
  if (name_.empty()) name_ = executor_->name();
}

Support DifferentialRunner::supports_config(core::HeapConfig const& config) const {
  try {
    config.validate();
  } catch (std::exception const& e) {
    return {false, e.what()};
  }
  return executor_->supports(config);
}

RunOutcome DifferentialRunner::run_schedule(schedule::Schedule const& schedule,
                                            StepCallback const& on_step) {
  schedule::validate(schedule);
  HEAPLAB_EXPECTS(usable_, "DifferentialRunner::run after a hang: the device is still busy");
  if (Support const s = supports_config(schedule.config); !s.supported)
    throw core::precondition_error("runner '" + name_ +
                                   "' does not support this config: " + s.reason);
  auto const& config = schedule.config;
  RunOutcome outcome;
  if (schedule.steps.empty()) return outcome;

  // 1. Both sides start empty.
  Mirror mirror(config, options_);
  try {
    executor_->reset(config);
  } catch (std::exception const& e) {
    outcome.steps_run = 1;
    outcome.failure =
        failure_of(0,
                   schedule::describe(config, schedule.steps[0]),
                   FailureKind::crash,
                   checks::kException,
                   std::string("reset of '") + executor_->name() + "' failed: " + e.what());
    return outcome;
  }

  for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
    schedule::Step const& step = schedule.steps[i];
    ++outcome.steps_run;
    std::string const description = schedule::describe(config, step);
    HeapStepStats stats;
    runner::StepTimes times;
    stats.num_blocks = config.num_blocks;
    bool hung        = false;
    outcome.failure  = run_step(*executor_, mirror, step, i, description, stats, times, hung);
    if (hung) usable_ = false;
    stats.live_objects  = mirror.model().num_live();
    stats.blocks_in_use = mirror.model().blocks_in_use();
    stats.fragmentation = mirror.model().fragmentation();
    if (on_step)
      on_step(step_report(
          i, schedule::step_name(step), description, !outcome.failure.has_value(), stats, times));
    if (outcome.failure) break;
  }
  return outcome;
}

}  // namespace heaplab::heap_family
