// ModelRunner: the heap family's reference runner, "model": the sequential reference model
// (model::ModelInterpreter) alone.
//
// The model places allocations deterministically and checks itself: the catalog after every step,
// CompactGpu's obligations after defrag steps, the digests of check steps (docs/schedules.md
// "Interpreters"). A failure here is a bug in the model, in the checks, or a schedule whose
// digests were pinned wrongly; its detail has no `expected` (the model is its own oracle) and
// `actual` is the model's snapshot after the failing step.
#pragma once

#include "heaplab/families/heap/heap_runner.hpp"

namespace heaplab::heap_family {

class ModelRunner final : public HeapRunner {
 public:
  [[nodiscard]] std::string name() const override { return "model"; }
  [[nodiscard]] bool deterministic() const override { return true; }

 protected:
  RunOutcome run_schedule(schedule::Schedule const& schedule, StepCallback const& on_step) override;
  [[nodiscard]] Support supports_config(core::HeapConfig const& config) const override;
};

}  // namespace heaplab::heap_family
