// Warp-order perturbation's delays (core/perturb.hpp): off for seed 0, one warp in four
// delayed, bounded, deterministic, and different for different seeds and points. The GPU side
// (the delays really reorder warps) is gpu_bitops_test's PerturbGpu.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "heaplab/core/perturb.hpp"

namespace core = heaplab::core;
using core::PerturbPoint;

TEST(Perturb, SeedZeroNeverDelays) {
  for (std::uint64_t w = 0; w < 10000; ++w) {
    EXPECT_EQ(core::perturb_delay_ns(0, w, PerturbPoint::move), 0u);
    EXPECT_EQ(core::perturb_delay_ns(0, w, PerturbPoint::allocate), 0u);
  }
  EXPECT_EQ(core::perturb_seed_for(0, 7), 0u);
}

TEST(Perturb, AboutOneWarpInFourIsDelayedWithinBounds) {
  constexpr std::uint64_t kWarps = 200000;
  for (std::uint64_t seed : {1ull, 2ull, 0xDEADBEEFull, ~0ull}) {
    std::uint64_t delayed  = 0;
    std::uint32_t shortest = ~0u, longest = 0;
    for (std::uint64_t w = 0; w < kWarps; ++w) {
      std::uint32_t const ns = core::perturb_delay_ns(seed, w, PerturbPoint::move);
      if (ns == 0) continue;
      ++delayed;
      shortest = ns < shortest ? ns : shortest;
      longest  = ns > longest ? ns : longest;
    }
    double const share = static_cast<double>(delayed) / kWarps;
    EXPECT_GT(share, 0.24) << "seed " << seed;
    EXPECT_LT(share, 0.26) << "seed " << seed;
    EXPECT_GE(shortest, 256u);
    EXPECT_LT(longest, core::kPerturbMaxDelayNs);
    EXPECT_GT(longest, core::kPerturbMaxDelayNs / 2) << "delays should span the range";
  }
}

TEST(Perturb, DelaysAreDeterministicAndDependOnSeedAndPoint) {
  auto delayed_set = [](std::uint64_t seed, PerturbPoint p) {
    std::set<std::uint64_t> s;
    for (std::uint64_t w = 0; w < 4096; ++w)
      if (core::perturb_delay_ns(seed, w, p) != 0) s.insert(w);
    return s;
  };
  EXPECT_EQ(delayed_set(5, PerturbPoint::move), delayed_set(5, PerturbPoint::move));
  EXPECT_NE(delayed_set(5, PerturbPoint::move), delayed_set(6, PerturbPoint::move));
  EXPECT_NE(delayed_set(5, PerturbPoint::move), delayed_set(5, PerturbPoint::forwarding));
  // Adjacent warps are not correlated: both of warps 2k, 2k+1 delayed in about 1/16 of pairs.
  std::uint64_t both = 0;
  for (std::uint64_t k = 0; k < 100000; ++k)
    both += core::perturb_delay_ns(9, 2 * k, PerturbPoint::move) != 0 &&
            core::perturb_delay_ns(9, 2 * k + 1, PerturbPoint::move) != 0;
  EXPECT_GT(both, 5500u);
  EXPECT_LT(both, 7000u);
}

TEST(Perturb, SeedsPerPartDifferAndAreNeverOff) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t part = 0; part < 1000; ++part) {
    std::uint64_t const s = core::perturb_seed_for(42, part);
    EXPECT_NE(s, 0u);
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 1000u);
}
