// Minimizing a failing schedule: `heaplab minimize` (docs/replay.md "Minimize").
//
// A candidate schedule "fails the same way" as the target when one of K runs of it (K = reruns)
// fails with the same FailureKind and the same check name (Failure::same_way; the step may move).
// GPU runs are nondeterministic, so a candidate that fails only sometimes still counts once it
// failed once; K trades time for confidence. Candidates the runner rejects (invalid schedules,
// unsupported configs) count as not failing.
//
// The reduction, repeated until nothing changes or the budget ends:
//   1. cut every step after the failing one;
//   2. ddmin (Zeller and Hildebrandt, "Simplifying and Isolating Failure-Inducing Input", 2002)
//      over the steps: try each of n chunks alone, then each complement; on success restart with
//      the smaller list, otherwise double n until chunks are single steps;
//   3. config size: the smallest M (binary search) that still fails;
//   4. wave sizes, step by step: alloc threads and counts (binary search down to 1), simpler
//      divergence patterns, fewer link rules and lane types, no roots; free and parallel_do
//      fractions halved; defrag overrides dropped; check digests dropped.
// Every accepted candidate is a schedule that failed the same way, so the result is always a
// valid, failing schedule, never larger than the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "heaplab/runner/runner.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace heaplab::runner {

struct MinimizeOptions {
  unsigned reruns      = 1;      // K >= 1
  std::size_t max_runs = 20000;  // calls of runner.run, all candidates together
  double seconds       = 600;    // wall-clock budget
  bool reduce_config   = true;   // step 3
  bool reduce_sizes    = true;   // step 4
  /// One line per accepted reduction ("steps 37 -> 12 (ddmin)").
  std::function<void(std::string const&)> log;
};

/// What "the same way" means: kind and check of the original failure.
struct FailureSignature {
  FailureKind kind = FailureKind::invariant_violation;
  std::string check;
};

struct MinimizeResult {
  schedule::Schedule schedule;  // the smallest schedule found that fails the same way
  Failure failure;              // its failure, from the run that confirmed it
  std::size_t original_steps    = 0;
  std::uint32_t original_blocks = 0;
  std::size_t runs              = 0;      // runner.run calls
  bool budget_exhausted         = false;  // stopped by max_runs or seconds
  bool hang_aborted             = false;  // a candidate hung: the runner is unusable, the process
                                          // must end; `schedule` is the smallest found before
};

/// Minimizes `input` on `runner`. With `target` unset, the target is the input's first failure.
/// Returns nullopt (and sets *why) when the input does not fail the same way in K runs.
std::optional<MinimizeResult> minimize(ScheduleRunner& runner,
                                       schedule::Schedule const& input,
                                       std::optional<FailureSignature> target,
                                       MinimizeOptions const& options,
                                       std::string* why = nullptr);

}  // namespace heaplab::runner
