// Building step reports and failures from the model's StepOutcome (shared by ModelRunner and
// DifferentialRunner).
#pragma once

#include "heaplab/families/heap/heap_runner.hpp"
#include "heaplab/model/interpreter.hpp"

namespace heaplab::heap_family::detail {

/// The statistics of a model step (from `model` after the step).
HeapStepStats stats_of(model::StepOutcome const& out, model::HeapModel const& model);

/// The failure of a step that is not ok(): a crash for an exception, else the first violation
/// decides kind and check (every violation is kept); `actual` is the model's snapshot.
Failure failure_of(model::StepOutcome const& out, check::HeapSnapshot actual);

}  // namespace heaplab::heap_family::detail
