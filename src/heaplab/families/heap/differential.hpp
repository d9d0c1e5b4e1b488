// DifferentialRunner: the heap family's differential runner: runs an implementation and the
// reference model side by side, step by step, and reports the first step where they disagree
// (docs/replay.md "Differential runs").
//
// The implementation side is a StepExecutor: it executes one schedule step at a time on its own
// heap and reports what it did. The GPU runner is a StepExecutor over the GPU allocator wrapped
// in a DifferentialRunner; tests use fakes (a second model with a random legal placement policy,
// and deliberately broken ones), so the comparison below is proven before a GPU runs it.
//
// Per step i, with the mirror model holding the accepted state after step i-1:
//   1. plan := schedule::plan_step(config, id_graph(mirror), step, next_id). The plan fixes every
//      id-level decision (ids, types, initial pointers, frees, pointer writes); placement is the
//      one thing left to the implementation.
//   2. The executor runs the step: executor.execute(step, plan) -> ExecutedStep. An exception is
//      a crash; ExecutedStep::hang a hang (the runner is then unusable).
//   3. The mirror follows:
//      - alloc: model::apply_placements(mirror, plan, placements): every placement must be one
//        the allocator may make (refinement, docs/model.md); an illegal one is a divergence
//        "placement-refinement". Allocations of the plan missing from `placements` ran out of
//        memory, which must be justified ("oom-justified", check/oom_obligations.hpp): after the
//        wave no block may be free that was free before it, and no block of the requested type
//        may have a slot that was free before and after it (DynaSOAr Alg. 1 fails an
//        allocation only when it finds no free block and no active block of its type).
//      - free: model::apply_nulling, model::apply_deletes: predicted exactly.
//      - parallel_do: nulling and deletes, then the children's placements as for alloc; the
//        out-of-memory rule applies when the step deletes nothing (allocate_child), because
//        with concurrent deletes a block may be emptied and re-claimed during the step.
//      - defrag: mirror.defrag(type, n, k1): predicted exactly; if the executor reports its
//        pass count, it must equal the model's ("defrag-passes").
//      - check: nothing changes; the graph digest is compared on the mirror's id graph (equal to
//        the implementation's once its placements are accepted). Snapshot digests are
//        placement-dependent (docs/schedules.md "check") and are not compared here.
//   4. Checks on the implementation's snapshot: the whole catalog (invariant_violation); after a
//      defrag step CompactGpu's obligations and the pass bound with the variant's source cap
//      (check::check_defrag_obligations, the implementation the model interpreter uses); then
//      check::diff(mirror snapshot, implementation snapshot) must be empty ("snapshot-diff":
//      placements, bitmaps, state bitmaps, payloads, pointer targets); reported roots must equal
//      mirror.root_locations().
//   Priority when several fail: crash, hang, placement/out-of-memory/passes, catalog and
//   obligations, snapshot diff, roots, digest. The failure keeps every violation, and its detail
//   (HeapFailureDetail) the diff and both snapshots.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "heaplab/families/heap/heap_runner.hpp"
#include "heaplab/model/heap_model.hpp"
#include "heaplab/schedule/plan.hpp"

namespace heaplab::heap_family {

/// What an implementation did in one step.
struct ExecutedStep {
  /// Steps that allocate (alloc, parallel_do allocate_child): one entry per object created, with
  /// the id the plan gave it, its type and where it went: (id, type, block, slot). `refs` may be
  /// left empty (meaning "as planned"). Plan allocations missing here ran out of memory. Empty
  /// for every other step.
  std::vector<model::ObservedAllocation> placements;
  /// The heap after the step, with payloads (ids, cookies, pointer targets as block:slot).
  check::HeapSnapshot snapshot;
  /// The external roots as locations, if the implementation keeps them (nullopt: not compared).
  std::optional<std::vector<std::optional<core::SlotRef>>> roots;
  /// defrag steps: the number of passes run (nullopt: not compared).
  std::optional<std::uint32_t> defrag_passes;
  /// Set when the watchdog reported a hang (which kernel, how long); nothing else is valid then.
  std::optional<std::string> hang;
  /// Seconds of execute() spent reading the heap back (snapshot, roots): StepTimes::readback.
  double readback_seconds = 0;
};

/// The implementation side of a differential run (the GPU runner implements this).
///
/// Contract: reset() starts an empty heap of the config; execute() runs exactly one step at
/// quiescence and returns only after the heap is quiescent again (every kernel of the step has
/// finished, or the watchdog fired). The implementation keeps its own map from object ids to
/// its objects: `plan` names objects by id (deletes, pointer writes, link targets) and assigns
/// the ids of new objects; the implementation must give new objects exactly those ids (their
/// cookies are core::cookie_of(id)). It must not consult the model: placement is its own choice.
/// Exceptions thrown by execute() are reported as crashes of that step, except
/// execution_check_failed: a rule the implementation checks on what it observed during the step
/// (e.g. which objects a parallel_do visited), reported as an invariant violation of that check.
class StepExecutor {
 public:
  virtual ~StepExecutor()                                                      = default;
  [[nodiscard]] virtual std::string name() const                               = 0;
  [[nodiscard]] virtual Support supports(core::HeapConfig const& config) const = 0;
  [[nodiscard]] virtual bool deterministic() const                             = 0;
  [[nodiscard]] virtual std::string device_name() const { return "none"; }
  virtual void reset(core::HeapConfig const& config)                                       = 0;
  virtual ExecutedStep execute(schedule::Step const& step, schedule::StepPlan const& plan) = 0;
};

/// An executor's own check of the step failed (see StepExecutor); what() is the message.
class execution_check_failed : public std::runtime_error {
 public:
  execution_check_failed(std::string check, std::string const& message)
      : std::runtime_error(message), check_(std::move(check)) {}
  [[nodiscard]] std::string const& check() const { return check_; }

 private:
  std::string check_;
};

struct DifferentialOptions {
  /// Check that allocation-only waves run out of memory only when justified (oom-justified).
  bool check_out_of_memory = true;
  /// Passed to check::diff.
  check::DiffOptions diff;
};

class DifferentialRunner final : public HeapRunner {
 public:
  /// `name` defaults to the executor's name.
  explicit DifferentialRunner(std::unique_ptr<StepExecutor> executor,
                              DifferentialOptions options = {},
                              std::string name            = {});

  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] bool deterministic() const override { return executor_->deterministic(); }
  [[nodiscard]] bool usable() const override { return usable_; }
  [[nodiscard]] std::string device_name() const override { return executor_->device_name(); }
  [[nodiscard]] StepExecutor& executor() { return *executor_; }

 protected:
  RunOutcome run_schedule(schedule::Schedule const& schedule, StepCallback const& on_step) override;
  [[nodiscard]] Support supports_config(core::HeapConfig const& config) const override;

 private:
  std::unique_ptr<StepExecutor> executor_;
  DifferentialOptions options_;
  std::string name_;
  bool usable_ = true;
};

}  // namespace heaplab::heap_family
