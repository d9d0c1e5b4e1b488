// ModelExecutor: a StepExecutor whose "implementation" is a second HeapModel (differential.hpp).
//
// It stands in for the GPU allocator where none is present: it executes each step's plan on its
// own model the way the GPU interpreter does (nulling and frees exactly, allocations at placements
// of its own choosing, accepted through model::apply_placements, defragmentation through
// HeapModel::defrag) and reports the placements, its snapshot, its roots and its pass counts.
// Wrapped in a DifferentialRunner (runner name "differential-model") it exercises the whole
// differential path (refinement, diff, out-of-memory rule) on the CPU; tests wrap it further in
// deliberately broken executors to prove that the path catches what it should.
//
// Placement policies:
//   lowest         the model's own rule (lowest active block, else lowest free block; lowest
//                  free slot), in plan order;
//   random_legal   any legal placement, as a nondeterministic allocator might choose (DynaSOAr
//                  sec. 3.2): the plan's allocations in a random order, each into a random active
//                  block of its type, else a random free block, at a random free slot; seeded, so
//                  a run is reproducible (reset() restarts the sequence from the seed).
#pragma once

#include <cstdint>
#include <optional>

#include "heaplab/families/heap/differential.hpp"
#include "heaplab/model/heap_model.hpp"

namespace heaplab::heap_family {

enum class PlacementPolicy { lowest, random_legal };

class ModelExecutor : public StepExecutor {
 public:
  explicit ModelExecutor(PlacementPolicy policy = PlacementPolicy::random_legal,
                         std::uint64_t seed     = 1);

  [[nodiscard]] std::string name() const override { return "differential-model"; }
  [[nodiscard]] Support supports(core::HeapConfig const& config) const override;
  [[nodiscard]] bool deterministic() const override { return true; }
  void reset(core::HeapConfig const& config) override;
  ExecutedStep execute(schedule::Step const& step, schedule::StepPlan const& plan) override;

  /// The executor's own model (after the last step).
  [[nodiscard]] model::HeapModel const& model() const { return *model_; }

  /// Placements for the plan's allocations on `m` (which must already reflect the step's nulling
  /// and deletes), by `policy`; allocations that find no room are left out (out of memory).
  static std::vector<model::ObservedAllocation> place(model::HeapModel const& m,
                                                      schedule::StepPlan const& plan,
                                                      PlacementPolicy policy,
                                                      std::uint64_t& rng_state);

 private:
  PlacementPolicy policy_;
  std::uint64_t seed_;
  std::uint64_t rng_state_ = 0;
  std::optional<model::HeapModel> model_;
};

}  // namespace heaplab::heap_family
