// Minimizing a failing random-walk schedule (`heaplab minimize` on an rw file; docs/rw.md
// "Schedules and runners", docs/replay.md "Minimize"). Greedy reductions, repeated until none
// applies or the budget is spent; a candidate is kept when it still fails with the target check
// in one of `reruns` runs (rw-cpu is nondeterministic: a race may need several tries):
//   1. drop waves: chunks of half, a quarter, ... down to single waves (at least one stays);
//   2. halve the threads of each alloc wave (down to 1);
//   3. shrink the pool: halve T (pre-taken pages: the count scaled, the list cut to < T), then
//      drop the pre-taken pages altogether.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "heaplab/runner/rw_runner.hpp"
#include "heaplab/schedule/rw_schedule.hpp"

namespace heaplab::runner {

struct RwMinimizeOptions {
  unsigned reruns      = 1;
  std::size_t max_runs = 5000;
  double seconds       = 600;
  std::function<void(std::string const&)> log;  // one line per accepted reduction
};

struct RwMinimizeResult {
  bool reproduced = false;  // the input failed at all (else nothing was minimized)
  schedule::RwSchedule schedule;
  std::optional<RwFailure> failure;  // the minimized schedule's failure
  std::size_t runs = 0;
};

/// Minimizes `input` keeping a failure of check `target` (empty: the input's first failure's).
RwMinimizeResult rw_minimize(schedule::RwSchedule const& input,
                             RwRunner& runner,
                             std::string target,
                             RwMinimizeOptions const& options);

}  // namespace heaplab::runner
