// ModelRunner (model_runner.hpp).
#include "heaplab/families/heap/model_runner.hpp"

#include "heaplab/families/heap/reports.hpp"
#include "heaplab/model/interpreter.hpp"

namespace heaplab::heap_family {

Support ModelRunner::supports_config(core::HeapConfig const& config) const {
  try {
    config.validate();
  } catch (std::exception const& e) {
    return {false, e.what()};
  }
  return {};
}

RunOutcome ModelRunner::run_schedule(schedule::Schedule const& schedule,
                                     StepCallback const& on_step) {
  model::ModelInterpreter interpreter(schedule);  // validates; throws for bad input
  RunOutcome outcome;
  while (!interpreter.finished()) {
    model::StepOutcome const out = interpreter.step();
    ++outcome.steps_run;
    if (!out.ok()) outcome.failure = detail::failure_of(out, interpreter.model().snapshot());
    if (on_step)
      on_step(step_report(out.index,
                          out.op,
                          out.description,
                          out.ok(),
                          detail::stats_of(out, interpreter.model())));
    if (outcome.failure) break;
  }
  return outcome;
}

}  // namespace heaplab::heap_family
