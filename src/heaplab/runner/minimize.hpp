// Minimizing a failing schedule of any family: `heaplab minimize` (docs/replay.md "Minimize").
//
// A candidate schedule "fails the same way" as the target when one of K runs of it (K = reruns)
// fails with the same FailureKind and the same check name (Failure::same_way; the step may move).
// GPU and CPU-thread runs are nondeterministic, so a candidate that fails only sometimes still
// counts once it failed once; K trades time for confidence. Candidates the runner rejects
// (invalid schedules, unsupported configs) count as not failing.
//
// The reduction, repeated until a whole round changes nothing or the budget ends:
//   1. cut every step after the failing one;
//   2. ddmin (Zeller and Hildebrandt, "Simplifying and Isolating Failure-Inducing Input", 2002)
//      over the steps: try each of n chunks alone, then each complement; on success restart with
//      the smaller list, otherwise double n until chunks are single steps;
//   3. the family's own reductions (Family::reduce: a smaller heap or pool, smaller waves).
// Every accepted candidate is a schedule that failed the same way, so the result is always a
// valid, failing schedule, never larger than the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "heaplab/runner/family.hpp"

namespace heaplab::runner {

struct MinimizeOptions {
  unsigned reruns      = 1;      // K >= 1
  std::size_t max_runs = 20000;  // calls of runner.run, all candidates together
  double seconds       = 600;    // wall-clock budget
  ReductionOptions reductions;   // which of the family's reductions to try
  /// One line per accepted reduction ("steps 37 -> 12 (ddmin)").
  std::function<void(std::string const&)> log;
};

/// What "the same way" means: kind and check of the original failure.
struct FailureSignature {
  FailureKind kind = FailureKind::invariant_violation;
  std::string check;
};

struct MinimizeResult {
  AnySchedule schedule;  // the smallest schedule found that fails the same way
  Failure failure;       // its failure, from the run that confirmed it
  std::size_t original_steps = 0;
  std::size_t runs           = 0;      // runner.run calls
  bool budget_exhausted      = false;  // stopped by max_runs or seconds
  bool hang_aborted          = false;  // a candidate hung: the runner is unusable, the process
                                       // must end; `schedule` is the smallest found before
};

/// Minimizes `input` on `runner` (a runner of input's family). With `target` unset, the target
/// is the input's first failure. Returns nullopt (and sets *why) when the input does not fail the
/// same way in K runs, or was not run at all (the budget ended first: *input_ran is then false).
std::optional<MinimizeResult> minimize(Runner& runner,
                                       AnySchedule const& input,
                                       std::optional<FailureSignature> target,
                                       MinimizeOptions const& options,
                                       std::string* why = nullptr,
                                       bool* input_ran  = nullptr);

/// The smallest value in [lo, current] for which make(value) still fails, by binary search
/// (assuming failures are monotone in the value; the result always failed). Logs
/// "what before -> after". A helper for Family::reduce.
void shrink_number(Reducer& reducer,
                   std::uint64_t current,
                   std::uint64_t lo,
                   std::function<AnySchedule(std::uint64_t)> const& make,
                   std::string const& what);

}  // namespace heaplab::runner
