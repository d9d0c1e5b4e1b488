// The random-walk paper's performance model (rw/analysis.hpp): the formulas against each other
// and against the paper's theorems, and the implementation's measured step counts against them
// (N requests one after another, the setting the formulas model; RW sec. 3.2.2, 4.1.1), and the
// occupancy refinement of Eq. 4 (rw_bm_occupancy). The concurrent comparison (T = 2^20, A/T in
// {50, 10, 1, 0.7, 0.5} %) is gpu_rw_tas_test, gpu_rw_bm_tas_test and RwTasSim.*.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "heaplab/core/expects.hpp"
#include "heaplab/rw/analysis.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "rw_test_support.hpp"

namespace core     = heaplab::core;
namespace rw       = heaplab::rw;
namespace analysis = heaplab::rw::analysis;

namespace {

TEST(RwAnalysis, Eq2IsTheHarmonicSumAndItsLogApproximation) {
  std::uint64_t const t = 1u << 20, a = t / 2, n = 5000;
  double direct = 0;
  for (std::uint64_t j = 0; j < n; ++j) direct += 1.0 / static_cast<double>(a - j);
  direct *= static_cast<double>(t) / static_cast<double>(n);
  EXPECT_NEAR(analysis::tas(t, a, n), direct, 1e-9 * direct);
  EXPECT_NEAR(analysis::rw_tas_approx(t, a, n), direct, 1e-3 * direct);
  EXPECT_DOUBLE_EQ(analysis::tas(100, 100, 1), 1.0);  // every page free: one step
  EXPECT_DOUBLE_EQ(analysis::queue_tas(1), 1.0);
  EXPECT_DOUBLE_EQ(analysis::queue_tas(5000), 2500.5);
  EXPECT_THROW((void)analysis::tas(100, 10, 11), core::precondition_error);  // N > A
}

TEST(RwAnalysis, Theorem1RwBmDividesTasByWAsAApproachesN) {
  // RW Theorem 1: lim_{A -> N} U' = U / w. At A = N, T = 2^20, N = 1000 the ratio is within 1 %.
  std::uint64_t const t = 1u << 20, n = 1000;
  for (unsigned w : {32u, 64u}) {
    double const ratio = analysis::tas(t, n, n, 1) / analysis::tas(t, n, n, w);
    EXPECT_NEAR(ratio, w, 0.01 * w) << "w = " << w;
  }
}

TEST(RwAnalysis, Theorem2TheWasBoundOfRwBmIsVOverWPlusWMinus1Over2W) {
  // RW Theorem 2: lim_{A -> N} V' = V / w + (w - 1) / (2w); at A = N + 1 (q = 1 - 1/T).
  std::uint64_t const t = 1u << 16, n = 1000, a = n + 1;
  double const v = analysis::was_bound(t, a, n, 1);
  for (unsigned w : {32u, 64u}) {
    double const expected = v / w + (w - 1.0) / (2.0 * w);
    EXPECT_NEAR(analysis::was_bound(t, a, n, w), expected, 1e-6 * expected) << "w = " << w;
  }
  EXPECT_EQ(analysis::was_bound(t, n, n), std::numeric_limits<double>::infinity());
  // The bound is above the TAS it bounds the warp maximum of.
  EXPECT_GT(analysis::was_bound(t, t / 10, n), analysis::tas(t, t / 10, n));
}

/// Mean X_i of n requests one after another (none freed) on a pool of T pages with `a` free
/// pages placed at random, averaged over `runs` pools.
template <class W>
double measured_tas(std::uint32_t t, std::uint32_t a, std::uint32_t n, bool bm, unsigned runs) {
  double total = 0;
  for (unsigned run = 0; run < runs; ++run) {
    rw::PoolConfig c;
    c.num_pages = t;
    c.word_bits = sizeof(W) * 8;
    c.max_steps = 1u << 24;
    rw::HostPool<W> pool(c);
    (void)heaplab::rw_test::leave_random_pages_free(pool, a, 0x9e3779b97f4a7c15ull ^ run);
    auto const ref = pool.template ref<core::HostAtomics>();
    rw::PageRng walk{1234567u + run};
    std::uint64_t steps = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      rw::GetPageResult const r = bm ? ref.get_page_bm(walk) : ref.get_page_rw(walk);
      EXPECT_TRUE(r.ok());
      steps += r.steps;
    }
    total += static_cast<double>(steps) / n;
  }
  return total / runs;
}

TEST(RwAnalysis, MeasuredRwTasOfSequentialRequestsMatchesEq2) {
  // T = 4096, A = 64 free at random, N = 48 requests, 200 pools. Tolerance: 5 standard errors of
  // the mean under the model (analysis::tas_variance / runs): a correct walk fails this with
  // probability below 1e-6; a walk that, say, skipped the used check or retried the same page
  // would be off by far more.
  std::uint32_t const t = 4096, a = 64, n = 48;
  unsigned const runs   = 200;
  double const expected = analysis::tas(t, a, n, 1);
  double const se       = std::sqrt(analysis::tas_variance(t, a, n, 1) / runs);
  double const got      = measured_tas<std::uint32_t>(t, a, n, false, runs);
  std::printf("RW: measured TAS %.3f, Eq. 2 %.3f, tolerance %.3f\n", got, expected, 5 * se);
  EXPECT_NEAR(got, expected, 5 * se);
}

TEST(RwAnalysis, MeasuredRwBmTasMatchesEq4WhenNIsSmallAgainstA) {
  // Eq. 4 assumes the free pages stay independently placed; claims empty words unevenly, which
  // matters only when N approaches A (header comment). With N = 8 of A = 64 the model holds to a
  // few percent: tolerance 5 standard errors plus 3 % for that approximation.
  std::uint32_t const t = 4096, a = 64, n = 8;
  unsigned const runs = 1000;
  for (unsigned w : {32u, 64u}) {
    double const expected  = analysis::tas(t, a, n, w);
    double const se        = std::sqrt(analysis::tas_variance(t, a, n, w) / runs);
    double const got       = w == 32 ? measured_tas<std::uint32_t>(t, a, n, true, runs)
                                     : measured_tas<std::uint64_t>(t, a, n, true, runs);
    double const tolerance = 5 * se + 0.03 * expected;
    std::printf(
        "RW-BM w=%u: measured TAS %.3f, Eq. 4 %.3f, tolerance %.3f\n", w, got, expected, tolerance);
    EXPECT_NEAR(got, expected, tolerance) << "w = " << w;
  }
}

TEST(RwAnalysis, OccupancyModelIsEq2ForOneBitAndEq4ForOneRequest) {
  // w = 1: every "word" is one page, so the occupancy model is Eq. 2's exact form; N = 1: nothing
  // has been claimed yet, so it is Eq. 4's first term; with N << A it stays within 0.5 % of Eq. 4
  // and never below it (uneven emptying only adds full words).
  std::uint64_t const t = 1u << 20;
  for (std::uint64_t a : {t / 2, t / 100, t / 200}) {
    for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{100}, a / 2, a}) {
      EXPECT_NEAR(analysis::rw_bm_occupancy(t, a, n, 1).tas,
                  analysis::tas(t, a, n, 1),
                  1e-9 * analysis::tas(t, a, n, 1));
      for (unsigned w : {32u, 64u})
        EXPECT_GE(analysis::rw_bm_occupancy(t, a, n, w).tas,
                  analysis::tas(t, a, n, w) * (1 - 1e-12));
    }
    for (unsigned w : {32u, 64u}) {
      EXPECT_NEAR(analysis::rw_bm_occupancy(t, a, 1, w).tas, analysis::tas(t, a, 1, w), 1e-9);
      EXPECT_NEAR(analysis::rw_bm_occupancy(t, a, 100, w).tas,
                  analysis::tas(t, a, 100, w),
                  0.005 * analysis::tas(t, a, 100, w));
      EXPECT_NEAR(analysis::rw_bm_occupancy(t, a, 100, w).tas_variance,
                  analysis::tas_variance(t, a, 100, w),
                  0.02 * analysis::tas_variance(t, a, 100, w) + 1e-9);
    }
  }
  // Collisions: for w = 1 the rate is RW sec. 3.2.2's A / T; a word with one free page makes two
  // walkers target the same page for sure, so at N = A (the last pages alone in their words) the
  // rate is the fraction of non-full words.
  EXPECT_NEAR(analysis::rw_bm_occupancy(t, t / 100, 100, 1).collide_rate, 0.01, 1e-6);
  EXPECT_GT(analysis::rw_bm_occupancy(t, t / 2, 100, 32).collide_rate, 0.1);
  EXPECT_LT(analysis::rw_bm_occupancy(t, t / 2, 100, 32).collide_rate, 0.15);
  // The end state: N = A empties every word, so (nearly: the mean field's last request) all are
  // full; N = A / 2 leaves more full words than independent placement, ((T - A/2) / T)^w.
  EXPECT_NEAR(analysis::rw_bm_occupancy(4096, 64, 64, 32).full_end, 1.0, 2e-3);
  EXPECT_GT(analysis::rw_bm_occupancy(4096, 64, 32, 32).full_end, std::pow(1 - 32.0 / 4096, 32));
  EXPECT_THROW((void)analysis::rw_bm_occupancy(100, 10, 11, 32), core::precondition_error);
  // Eq. 5's form: one step when nothing fails; a warp of one is a geometric mean 1 / (1 - q).
  EXPECT_DOUBLE_EQ(analysis::max_geometric_mean(0.0), 1.0);
  EXPECT_NEAR(analysis::max_geometric_mean(0.75, 1), 4.0, 1e-9);
  EXPECT_GE(analysis::was_bound_occupancy(t, t / 10, 5000, 64),
            analysis::was_bound(t, t / 10, 5000, 64));
}

TEST(RwAnalysis, MeasuredRwBmTasWithNCloseToAMatchesTheOccupancyModelNotEq4) {
  // N = 48 of A = 64 (T = 4096), 1000 pools: Eq. 4 underestimates RW-BM (docs/rw.md "TAS and
  // WAS"); the occupancy model predicts the measured mean within 5 standard errors, and Eq. 4 is
  // more than 5 standard errors below it -- the model's own error, measured.
  std::uint32_t const t = 4096, a = 64, n = 48;
  unsigned const runs = 1000;
  for (unsigned w : {32u, 64u}) {
    analysis::OccupancyModel const occ = analysis::rw_bm_occupancy(t, a, n, w);
    double const eq4                   = analysis::tas(t, a, n, w);
    double const se                    = std::sqrt(occ.tas_variance / runs);
    double const got                   = w == 32 ? measured_tas<std::uint32_t>(t, a, n, true, runs)
                                                 : measured_tas<std::uint64_t>(t, a, n, true, runs);
    std::printf(
        "RW-BM w=%u, N=%u of A=%u: measured TAS %.3f, occupancy %.3f, Eq. 4 %.3f, 5 SE %.3f\n",
        w,
        n,
        a,
        got,
        occ.tas,
        eq4,
        5 * se);
    EXPECT_NEAR(got, occ.tas, 5 * se) << "w = " << w;
    EXPECT_GT(got - eq4, 5 * se) << "w = " << w;
  }
}

}  // namespace
