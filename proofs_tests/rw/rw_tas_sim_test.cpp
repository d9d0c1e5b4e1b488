// The checks of gpu_rw_bm_tas_test (RW-BM and CoRW against Eq. 4-5 and Theorems 1-2, docs/rw.md
// "TAS and WAS") on the CPU: the whole table on the host simulation of the GPU's wave
// (rw_tas_support.hpp: the same walk code, preset and random numbers), and each check fed a
// broken measurement, which it must reject.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "heaplab/rw/analysis.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "rw_tas_support.hpp"

namespace core     = heaplab::core;
namespace rw       = heaplab::rw;
namespace analysis = heaplab::rw::analysis;
namespace rt       = heaplab::rw_test;

namespace {

rw::PoolConfig sim_config(rt::TasCell const& c) {
  rw::PoolConfig cfg;
  cfg.num_pages  = c.t;
  cfg.page_bytes = 256;
  cfg.word_bits  = c.word_bits();
  cfg.max_steps  = 1u << 24;
  return cfg;
}

rw::AllocResult simulate_with(rt::TasCell const& c,
                              std::uint64_t preset_seed,
                              std::uint64_t seed,
                              rt::detail::Overlap overlap) {
  rw::PoolConfig const cfg = sim_config(c);
  return c.word_bits() == 64 ? rt::simulate_wave<std::uint64_t>(
                                   cfg, c.algorithm, c.a, preset_seed, c.n, seed, overlap)
                             : rt::simulate_wave<std::uint32_t>(
                                   cfg, c.algorithm, c.a, preset_seed, c.n, seed, overlap);
}

rw::AllocResult simulate(rt::TasCell const& c, std::uint64_t preset_seed, std::uint64_t seed) {
  return simulate_with(c, preset_seed, seed, rt::detail::Overlap::one_by_one);
}

TEST(RwTasSim, TheGpuTableHoldsOnTheHostSimulation) {
  // 4 runs per cell (8 for RW), as the GPU test's 8 (16): the tolerances scale with the runs. Both
  // extremes of overlap: the GPU's wave lies between them.
  rt::Failures const f = rt::run_tas_table(simulate, 4, 8);
  EXPECT_TRUE(f.empty()) << f.size() << " failures, the first: " << f.front();
  auto const together = [](rt::TasCell const& c, std::uint64_t preset_seed, std::uint64_t seed) {
    return simulate_with(c, preset_seed, seed, rt::detail::Overlap::together);
  };
  rt::Failures const g = rt::run_tas_table(together, 4, 8);
  EXPECT_TRUE(g.empty()) << g.size() << " failures, the first: " << g.front();
}

TEST(RwTasSim, StepCandidateIsTheWalksStep) {
  // The together mode's step (step_candidate, then claim_bits) against get_page_* bounded to one
  // step, on two copies of the same pool with the same random numbers, 2000 steps each (about
  // 100 claims at 200 free pages of 4096: both outcomes often).
  for (core::RwAlgorithm a : {core::RwAlgorithm::rw, core::RwAlgorithm::rw_bm}) {
    rt::TasCell const c{a, 32, 1u << 12, 200, 1};
    rw::PoolConfig cfg = sim_config(c);
    cfg.max_steps      = 1;
    rw::HostPool<std::uint32_t> x(cfg), y(cfg);
    rt::preset_free_like_device(x, c.a, 3);
    rt::preset_free_like_device(y, c.a, 3);
    auto const rx = x.ref<core::HostAtomics>();
    auto const ry = y.ref<core::HostAtomics>();
    rw::PageRng gx{11}, gy{11};
    for (int k = 0; k < 2000; ++k) {
      rw::GetPageResult const g =
          a == core::RwAlgorithm::rw ? rx.get_page_rw(gx) : rx.get_page_bm(gx);
      rt::detail::Candidate const cd = rt::detail::step_candidate(ry, a, gy);
      bool const won                 = cd.ok && ry.claim_bits(cd.word, 1u << cd.bit) != 0;
      ASSERT_EQ(g.ok(), won) << "step " << k;
      if (won) {
        EXPECT_EQ(g.page, cd.word * 32 + cd.bit);
      }
      ASSERT_EQ(gx.state, gy.state);
    }
  }
}

TEST(RwTasSim, TheTableRejectsRwBmReadingHalfTheWord) {
  // A broken RW-BM: the 64-bit cells walk 32-bit words (half the bits per step). The TAS checks
  // of the rw-bm64 cells and Theorems 1-2 for w = 64 must fail.
  auto const half = [](rt::TasCell const& c, std::uint64_t preset_seed, std::uint64_t seed) {
    rt::TasCell narrow = c;
    if (c.w == 64) narrow.w = 32;
    return simulate(narrow, preset_seed, seed);
  };
  rt::Failures const f = rt::run_tas_table(half, 4, 8);
  bool tas = false, theorem1 = false;
  for (std::string const& s : f) {
    tas |= s.rfind("rw-bm64: TAS", 0) == 0;
    theorem1 |= s.rfind("rw-bm64: Theorem 1", 0) == 0;
  }
  EXPECT_TRUE(tas && theorem1) << f.size() << " failures";
}

TEST(RwTasSim, OneThreadWalksLikeASingleGetPage) {
  // The simulation runs the pool's code: one thread's page and steps equal get_page_bm's on the
  // same preset pool with thread_rng(seed, 0).
  rt::TasCell const c{core::RwAlgorithm::rw_bm, 32, 1u << 16, 300, 1};
  rw::AllocResult const r = simulate(c, 5, 9);
  rw::HostPool<std::uint32_t> pool(sim_config(c));
  rt::preset_free_like_device(pool, c.a, 5);
  rw::PageRng rng           = rw::thread_rng(9, 0);
  rw::GetPageResult const g = pool.ref<core::HostAtomics>().get_page_bm(rng);
  EXPECT_EQ(r.first[0], g.page);
  EXPECT_EQ(r.steps[0], g.steps);
}

TEST(RwTasSim, OwnershipProblemsAreNamed) {
  rw::AllocResult r{{3, 7, 9}, {1, 1, 1}};
  EXPECT_EQ(rt::ownership_problem(r, 10), "");
  r.first[2] = 3;
  EXPECT_EQ(rt::ownership_problem(r, 10), "page 3 went to two threads");
  r.first[1] = rw::kNoPage;
  EXPECT_NE(rt::ownership_problem(r, 10).find("thread 1 got no page"), std::string::npos);
}

/// A measurement of `runs` runs with the given means and small spreads.
rt::Measured fake(double tas, double was, unsigned runs = 8) {
  rt::Measured m;
  m.runs        = runs;
  m.tas         = tas;
  m.was         = was;
  m.tas_run_sd  = 0.01 * tas;
  m.was_run_sd  = 0.01 * was;
  m.warps       = 157u * runs;
  m.warp_max_sd = 0.2 * was;
  return m;
}

TEST(RwTasChecks, WalkerTasRejectsEq4OfTheWrongWidthAndTooFarFromTheModel) {
  rt::TasCell const c{core::RwAlgorithm::rw_bm, 32, 1u << 20, 10486, 5000};
  double const occ = analysis::rw_bm_occupancy(c.t, c.a, c.n, 32).tas;
  double const eq4 = analysis::tas(c.t, c.a, c.n, 32);
  rt::Failures f;
  rt::check_walker_tas(c, fake(occ, 20), f);
  EXPECT_TRUE(f.empty()) << f.front();
  for (double bad : {analysis::tas(c.t, c.a, c.n, 1), occ * 1.2, eq4 * 0.8}) {
    rt::Failures g;
    rt::check_walker_tas(c, fake(bad, 20), g);
    EXPECT_FALSE(g.empty()) << "TAS " << bad;
  }
}

TEST(RwTasChecks, WasAboveTheBoundFails) {
  rt::TasCell const c{core::RwAlgorithm::rw_bm, 64, 1u << 20, 10486, 5000};
  double const limit = rt::was_limit(c);
  rt::Failures ok, bad, none;
  rt::check_was(c, fake(3, limit * 0.95), ok);
  rt::check_was(c, fake(3, limit * 2), bad);  // above even with 32 lanes of collisions
  EXPECT_TRUE(ok.empty());
  EXPECT_FALSE(bad.empty());
  rt::check_was({core::RwAlgorithm::rw_bm, 64, 1u << 20, 5000, 5000}, fake(3, 1e9), none);
  EXPECT_TRUE(none.empty()) << "A = N has no bound";
}

TEST(RwTasChecks, CorwRejectsMoreStepsThanRwBmAndTasFarFromWasAtTenPercent) {
  rt::TasCell const ten{core::RwAlgorithm::corw, 32, 1u << 20, 104858, 5000};
  rt::Failures ok, gap, slow;
  rt::check_corw(ten, fake(1.0, 1.01), ok);
  rt::check_corw(ten, fake(1.0, 1.3), gap);
  rt::check_corw(ten, fake(3.0, 3.0), slow);
  EXPECT_TRUE(ok.empty()) << ok.front();
  EXPECT_FALSE(gap.empty());
  EXPECT_FALSE(slow.empty());
}

TEST(RwTasChecks, TheoremsRejectARatioFarFromW) {
  std::uint32_t const t = 1u << 20, a = 5243;
  rt::TasCell const rw_a{core::RwAlgorithm::rw, 1, t, a, a},
      bm_a{core::RwAlgorithm::rw_bm, 32, t, a, a};
  double const rw_tas = analysis::tas(t, a, a, 1);
  double const bm_tas = analysis::rw_bm_occupancy(t, a, a, 32).tas;
  rt::Failures ok1, bad1;
  rt::check_theorem1(rw_a, fake(rw_tas, 1e4, 16), bm_a, fake(bm_tas, 1e3), ok1);
  rt::check_theorem1(rw_a, fake(rw_tas, 1e4, 16), bm_a, fake(rw_tas / 16, 1e3), bad1);
  EXPECT_TRUE(ok1.empty()) << ok1.front();
  EXPECT_FALSE(bad1.empty());
  rt::TasCell const rw_n{core::RwAlgorithm::rw, 1, t, a, 5000},
      bm_n{core::RwAlgorithm::rw_bm, 32, t, a, 5000};
  double const v      = 6000;  // a measured WAS of RW
  double const scaled = v / 32 + 31.0 / 64;
  double const ratio =
      analysis::was_bound_occupancy(t, a, 5000, 32) / analysis::was_bound(t, a, 5000, 32);
  rt::Failures ok2, bad2;
  rt::check_theorem2(rw_n, fake(640, v, 16), bm_n, fake(21, scaled * ratio), ok2);
  rt::check_theorem2(rw_n, fake(640, v, 16), bm_n, fake(21, v / 16), bad2);
  EXPECT_TRUE(ok2.empty()) << ok2.front();
  EXPECT_FALSE(bad2.empty());
}

}  // namespace
