// Building StepReports and Failures from the model's StepOutcome (shared by ModelRunner and
// DifferentialRunner).
#pragma once

#include "heaplab/model/interpreter.hpp"
#include "heaplab/runner/runner.hpp"

namespace heaplab::runner::detail {

/// The StepReport of a model step (statistics from `model` after the step).
StepReport report_of(model::StepOutcome const& out, model::HeapModel const& model);

/// The failure of a step that is not ok(): a crash for an exception, else the first violation
/// decides kind and check (every violation is kept).
Failure failure_of(model::StepOutcome const& out, check::HeapSnapshot actual);

/// A failure whose kind and check come from the first of `violations` (non-empty).
Failure failure_from_violations(std::size_t step,
                                std::string description,
                                std::vector<check::Violation> violations);

}  // namespace heaplab::runner::detail
