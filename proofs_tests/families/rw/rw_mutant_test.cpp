// Planted bug rw_cpu_slice_drops_last (docs/mutants.md), compiled into this test's own copy of
// the CPU threads pool: the last thread of every OS thread's slice never runs. The differential
// runner must report it as rw-request-steps (an active thread with 0 steps) at the first wave,
// naming a thread at a slice boundary.
#include <gtest/gtest.h>

#include "heaplab/core/mutants.hpp"
#include "heaplab/families/rw/cpu_pool.hpp"
#include "heaplab/families/rw/rw_runner.hpp"

static_assert(heaplab::core::mutant::rw_cpu_slice_drops_last,
              "this test is compiled with HEAPLAB_MUTANT_NAME=rw_cpu_slice_drops_last");

namespace hr = heaplab::rw_family;
namespace hs = heaplab::schedule;

TEST(RwMutant, RwCpuSliceDropsLastIsFoundByTheRequestCheck) {
  hs::RwSchedule s;
  s.pool.num_pages = 1024;
  hs::RwAllocWave w;
  w.algorithm = heaplab::core::RwAlgorithm::rw_bm;
  w.threads   = 400;  // 13 warps, 4 OS threads: slices of 4 warps; the mutant drops warps 3, 7, ...
  s.steps.push_back(w);
  hr::RwRunner runner(
      "rw-cpu",
      [](heaplab::rw::PoolConfig const& c) { return std::make_unique<hr::CpuThreadsPool>(c, 4); },
      [](heaplab::core::RwAlgorithm) { return std::string(); },
      false);
  auto const out = runner.run(s);
  ASSERT_TRUE(out.failure) << "the planted bug went unnoticed";
  EXPECT_EQ(out.failure->check, hr::checks::kRwRequestSteps) << out.failure->message;
  EXPECT_EQ(out.failure->step, 0u);
  ASSERT_TRUE(hr::thread_of(*out.failure));
  EXPECT_EQ(*hr::thread_of(*out.failure), 96u) << out.failure->message;  // warp 3's first
}
