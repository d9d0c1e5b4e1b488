// Running schedules on the model (docs/schedules.md "Interpreters").
//
// The interpreter plans every step at the level of ids (schedule::plan_step), executes the plan on
// a HeapModel with the model's own deterministic placement, and then checks the whole invariant
// catalog (check::check_all) on the model's snapshot, plus CompactGpu's defragmentation
// obligations after a defrag step and the digests of a check step. The first violation stops a
// run; the outcome names the step index, the step and the violations.
//
// The pieces are public so that the GPU interpreter can reuse them: it plans with the same
// function, applies the deterministic phases (pointer nulling, frees) to its mirror model with
// apply_nulling/apply_deletes, and replaces the model's placement with the GPU's through
// apply_placements (HeapModel::accept_allocations).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/check/defrag_obligations.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/model/heap_model.hpp"
#include "heaplab/schedule/plan.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace heaplab::model {

/// The model's heap as an id graph (live objects, types, pointers by id, roots).
schedule::IdGraph id_graph(HeapModel const& model);

/// A 64-bit digest of everything check::diff compares by default: the config, every block's
/// header type (allocated blocks only: free blocks keep a stale type) and allocation bitmap, the
/// object records, and level 0 of every state bitmap (upper levels follow from it once the
/// catalog holds). Iteration bitmaps are left out. Placement-dependent: use it to pin a model run.
std::uint64_t snapshot_digest(check::HeapSnapshot const& snapshot);

/// Phase 1 of a plan: the pointer slots and roots that refer to doomed objects become null.
void apply_nulling(HeapModel& model, schedule::StepPlan const& plan);
/// Phase 2: every object the plan deletes is freed, ascending id (free waves; for parallel_do
/// deletes this is the GPU path, the model's own path deletes inside HeapModel::parallel_do).
void apply_deletes(HeapModel& model, schedule::StepPlan const& plan);

/// Phase 3 on the GPU path (refinement): applies the placements a GPU chose for the plan's
/// allocations (any subset of them, in any order; the plan's allocations missing from `observed`
/// ran out of memory) with HeapModel::accept_allocations, then the plan's pointer writes (parent
/// slots of allocate_child, relinks) and roots. Call after apply_nulling and apply_deletes.
/// Returns an error, applying nothing, if a placement is illegal, names an id the plan does not
/// create, has another type, or carries other initial pointers than the plan's (an empty refs
/// vector means "as planned").
std::optional<PlacementError> apply_placements(HeapModel& model,
                                               schedule::StepPlan const& plan,
                                               std::vector<ObservedAllocation> observed);

/// The call a defragmentation result describes, for check::check_defrag_obligations (the one
/// implementation of CompactGpu's obligations: the interpreter, the differential runner and the
/// GPU compaction tests all use it). `passes`: the passes an implementation reports (default:
/// the model's own count). The source cap is the result's, i.e. the variant's.
check::DefragCall defrag_call(std::uint32_t type,
                              DefragResult const& r,
                              std::optional<std::uint32_t> passes = std::nullopt);

/// What one step did and what the checks found.
struct StepOutcome {
  std::size_t index = 0;
  std::string op;           // "alloc", "free", ...
  std::string description;  // schedule::describe
  std::size_t created = 0;  // objects allocated
  std::size_t failed  = 0;  // allocations that found no memory (the ids stay unused)
  std::vector<std::uint64_t> failed_by_type;  // failed, per type id (empty when none failed)
  std::size_t deleted  = 0;
  std::size_t relinked = 0;
  std::optional<DefragResult> defrag;
  std::size_t live_objects  = 0;
  std::size_t blocks_in_use = 0;
  double fragmentation      = 0;  // F over all allocated blocks, after the step
  /// Violations of the catalog (after the step) and of the step's own obligations.
  std::vector<check::Violation> violations;
  /// An exception raised while executing the step (an illegal operation or a model bug).
  std::string error;
  [[nodiscard]] bool ok() const { return violations.empty() && error.empty(); }
  /// One line: index, description, live objects, blocks in use, F, and what the step did.
  [[nodiscard]] std::string summary() const;
};

class ModelInterpreter {
 public:
  /// Validates the schedule (schedule::validate) and creates an empty model of its config.
  explicit ModelInterpreter(schedule::Schedule schedule);

  [[nodiscard]] bool finished() const { return next_step_ == schedule_.steps.size(); }
  [[nodiscard]] std::size_t next_step() const { return next_step_; }
  /// Runs the next step and checks it. Precondition: !finished().
  StepOutcome step();

  [[nodiscard]] HeapModel const& model() const { return model_; }
  [[nodiscard]] schedule::Schedule const& schedule() const { return schedule_; }
  [[nodiscard]] schedule::ObjectId next_id() const { return next_id_; }

 private:
  void execute(schedule::Step const& step, StepOutcome& out);
  void check_defrag(schedule::Defrag const& d,
                    DefragResult const& r,
                    check::HeapSnapshot const& after,
                    StepOutcome& out) const;

  schedule::Schedule schedule_;
  HeapModel model_;
  /// The snapshot after the previous step (the heap before the next one), kept for oom-justified.
  std::optional<check::HeapSnapshot> last_snapshot_;
  std::size_t next_step_      = 0;
  schedule::ObjectId next_id_ = schedule::kFirstObjectId;
};

struct RunResult {
  std::vector<StepOutcome> steps;  // every step run, the failing one last
  [[nodiscard]] bool ok() const { return steps.empty() || steps.back().ok(); }
  /// Index of the failing step, if any.
  [[nodiscard]] std::optional<std::size_t> failed_step() const;
};

/// Runs every step until the first failing one; on_step (if given) sees each outcome as it ends.
RunResult run_on_model(
    schedule::Schedule const& schedule,
    std::function<void(StepOutcome const&, HeapModel const&)> const& on_step = {});

}  // namespace heaplab::model
