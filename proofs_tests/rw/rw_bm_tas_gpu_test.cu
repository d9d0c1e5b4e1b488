// TAS and WAS of RW-BM (32- and 64-bit words) and CoRW on the GPU against the paper's model (RW
// sec. 4.1.1 Eq. 4-5, Theorems 1-2; RW sec. 4.2 for CoRW), on rw::DevicePool: T = 2^20 pages
// preset on the device with A/T in {50, 10, 1, 0.7, 0.5} % free (and N = A at 0.5 %), one wave of
// N = 5000 threads asking for one page each, 8 runs per cell (16 for RW, whose TAS at N = A varies
// most). The table and its checks are rw_tas_support.hpp's run_tas_table, which rw_test
// (RwTasSim.*) also runs on the host simulation of the same wave; docs/rw.md "TAS and WAS" states
// the tolerances:
//  - every thread gets a distinct page below T;
//  - RW / RW-BM TAS within 5 standard errors (tas_variance or between runs, the larger) plus a
//    collision allowance of the occupancy model, and of Eq. 4 up to the model's own error
//    (occupancy - Eq. 4, Eq. 4 underestimates RW-BM when N approaches A);
//  - mean warp-max WAS below Eq. 5 (or the occupancy model's bound where higher) + 32 lanes'
//    collision allowance + 5 SE (the first steps of all 5000 threads overlap on the GPU: at
//    A/T = 50 % a few walkers read the same word and target the same page);
//  - CoRW: per-lane TAS at most RW-BM's, WAS below RW-BM's bound, WAS - TAS <= 0.05 at >= 10 %;
//  - Theorem 1 (A = N): TAS_RW / TAS_RWBM against Eq. 2 / occupancy model (~ w); Theorem 2
//    (N = 5000, A = 5243): WAS_RWBM / (WAS_RW / w + (w - 1) / (2w)) against the bounds' ratio.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/rw/device_pool.hpp"
#include "rw_tas_support.hpp"

namespace rw = heaplab::rw;
namespace rt = heaplab::rw_test;

namespace {

rw::AllocResult gpu_wave(rt::TasCell const& c, std::uint64_t preset_seed, std::uint64_t seed) {
  rw::PoolConfig cfg;
  cfg.num_pages  = c.t;
  cfg.page_bytes = 256;
  cfg.word_bits  = c.word_bits();
  cfg.max_steps  = 1u << 24;
  rw::DevicePool pool(cfg);
  pool.preset_free(c.a, preset_seed);
  rw::GetPageWave wave;
  wave.algorithm     = c.algorithm;
  wave.pages         = std::vector<std::uint32_t>(c.n, 1);
  wave.block_threads = 256;
  wave.seed          = seed;
  return pool.allocate(wave);
}

TEST(RwBmTasGpu, RwBmAndCorwMatchEq4AndEq5AndTheTheorems) {
  HEAPLAB_REQUIRE_GPU();
  rt::Failures const f = rt::run_tas_table(gpu_wave, 8, 16);
  rt::Failures ownership, statistics;
  for (auto const& s : f)
    (s.rfind(rt::kOwnershipFailure, 0) == 0 ? ownership : statistics).push_back(s);
  EXPECT_TRUE(ownership.empty()) << ownership.size() << " failures, the first: " << ownership[0];
  // Under a CUDA tool (compute-sanitizer) the tool schedules the threads: how many walkers
  // overlap, and so TAS / WAS, are the tool's, not the GPU's (racecheck once measured a Theorem 2
  // ratio of 0.97 for w = 64 where the GPU gives 1.15). The table is printed; only ownership is
  // asserted there.
  if (heaplab::testing::under_cuda_tool()) {
    if (!statistics.empty())
      std::printf("under a CUDA tool: %zu statistical checks not asserted, the first: %s\n",
                  statistics.size(),
                  statistics[0].c_str());
    return;
  }
  EXPECT_TRUE(statistics.empty()) << statistics.size() << " failures, the first: " << statistics[0];
}

}  // namespace
