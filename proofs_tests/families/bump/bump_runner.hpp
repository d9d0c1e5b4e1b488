// The bump family's runner: runs a BumpSchedule on a BumpBackend next to the refinement model
// (bump_model.hpp) and reports the first failure. bump-model, bump-cpu and the planted
// bump-cpu-planted are BumpRunners over different backends.
//
// Per step: run it on the backend (an alloc wave, or free_all), read the backend's bump pointer,
// let the model build the state after the step from the answers, run the catalog
// (bump_invariants.hpp) on it and, when it holds, commit it to the model. The first violated
// invariant names the failure (kind invariant_violation, check = its name, every violation of the
// step listed); an exception of the backend is a crash (check "exception"). A run never lets a
// backend's exception escape; it throws only for bad input (an invalid schedule:
// schedule_error; a schedule of another family: core::precondition_error).
//
// Each step's StepReport: live = ranges live, in_use = the bump pointer, capacity = the arena,
// counts "requests", "granted", "nulls", "bytes" (granted) and "free_alls"; its line:
// "step 3: alloc threads=8 size=24 align=8 seed=3 | live 20, top 480/4096 B | granted 8, nulls 0
// | ok".
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "bump_allocator.hpp"
#include "bump_schedule.hpp"
#include "heaplab/runner/family.hpp"

namespace heaplab::bump_family {

/// Makes the backend of one run (fresh, over an arena of the given bytes).
using BackendFactory = std::function<std::unique_ptr<BumpBackend>(std::uint64_t arena)>;

class BumpRunner final : public runner::Runner {
 public:
  BumpRunner(std::string name, BackendFactory make, bool deterministic);

  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] bool deterministic() const override { return deterministic_; }
  /// Every valid bump schedule runs on every bump runner.
  [[nodiscard]] runner::Support supports(runner::AnySchedule const& s) const override;

  /// From a fresh backend, every step in order; the first failure ends the run.
  runner::RunOutcome run(BumpSchedule const& s, runner::StepCallback const& on_step = {});
  runner::RunOutcome run(runner::AnySchedule const& s,
                         runner::StepCallback const& on_step = {}) override;

 private:
  std::string name_;
  BackendFactory make_;
  bool deterministic_;
};

}  // namespace heaplab::bump_family
