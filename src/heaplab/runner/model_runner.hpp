// ModelRunner: a ScheduleRunner over the sequential reference model (model::ModelInterpreter).
//
// The model places allocations deterministically and checks itself: the catalog after every step,
// CompactGpu's obligations after defrag steps, the digests of check steps (docs/schedules.md
// "Interpreters"). A failure here is a bug in the model, in the checks, or a schedule whose
// digests were pinned wrongly; `expected` is never set (the model is its own oracle) and `actual`
// is the model's snapshot after the failing step.
#pragma once

#include "heaplab/runner/runner.hpp"

namespace heaplab::runner {

class ModelRunner final : public ScheduleRunner {
 public:
  [[nodiscard]] std::string name() const override { return "model"; }
  [[nodiscard]] Support supports(core::HeapConfig const& config) const override;
  RunOutcome run(schedule::Schedule const& schedule, StepCallback const& on_step = {}) override;
  [[nodiscard]] bool deterministic() const override { return true; }
};

}  // namespace heaplab::runner
