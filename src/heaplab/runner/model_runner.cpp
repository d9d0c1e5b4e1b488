// ModelRunner (model_runner.hpp).
#include "heaplab/runner/model_runner.hpp"

#include "heaplab/model/interpreter.hpp"
#include "heaplab/runner/detail/reports.hpp"

namespace heaplab::runner {

Support ModelRunner::supports(core::HeapConfig const& config) const {
  try {
    config.validate();
  } catch (std::exception const& e) {
    return {false, e.what()};
  }
  return {};
}

RunOutcome ModelRunner::run(schedule::Schedule const& schedule, StepCallback const& on_step) {
  model::ModelInterpreter interpreter(schedule);  // validates; throws for bad input
  RunOutcome outcome;
  while (!interpreter.finished()) {
    model::StepOutcome const out = interpreter.step();
    ++outcome.steps_run;
    StepReport const report = detail::report_of(out, interpreter.model());
    if (!out.ok()) outcome.failure = detail::failure_of(out, interpreter.model().snapshot());
    if (on_step) on_step(report);
    if (outcome.failure) break;
  }
  return outcome;
}

}  // namespace heaplab::runner
