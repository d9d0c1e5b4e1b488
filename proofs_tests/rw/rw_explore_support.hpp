// Shared by the CPU tests that explore the pools' workloads (rw_test, corw_test, rw_malloc_test,
// rw_queue_explorer_test): run the explorer with a budget and expect nothing found.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>

#include "heaplab/explore/explore.hpp"

namespace heaplab::rw_test {

/// Explores `factory` with `o` and expects every run to pass and all o.max_runs to run; prints
/// the memory model, the runs and atomic operations ("%s: N <what>, M atomic operations").
inline void expect_explorer_finds_nothing(explore::ProgramFactory const& factory,
                                          explore::ExploreOptions const& o,
                                          char const* what = "runs") {
  explore::ExploreReport const r = explore::explore(factory, o);
  EXPECT_FALSE(r.failure.has_value()) << r.failure_report;
  EXPECT_EQ(r.runs, o.max_runs);
  std::printf("%s: %llu %s, %llu atomic operations, %.2f s, nothing found\n",
              explore::to_string(o.run.memory_model),
              static_cast<unsigned long long>(r.runs),
              what,
              static_cast<unsigned long long>(r.steps),
              r.seconds);
}

}  // namespace heaplab::rw_test
