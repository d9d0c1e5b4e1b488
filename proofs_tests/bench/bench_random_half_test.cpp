// heaplab_bench parallel-do's fragmented case (bench/parallel_do_bench.hpp RandomHalf): the
// Feistel permutation with cycle walking is a bijection of [0, n), so exactly floor(n / 2)
// objects are deleted, the same ones for the same seed, scattered over every 64-object block.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "parallel_do_bench.hpp"

using heaplab::bench::RandomHalf;

TEST(BenchRandomHalf, IsABijectionAndDeletesExactlyHalf) {
  for (std::uint64_t n : {1ull, 2ull, 3ull, 64ull, 1000ull, 4096ull, 196608ull, 1ull << 20}) {
    for (std::uint64_t seed : {1ull, 7ull}) {
      RandomHalf const half(n, seed);
      std::vector<bool> seen(n, false);
      std::uint64_t deleted = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        std::uint64_t const p = half.permutation(i);
        ASSERT_LT(p, n) << "n " << n << " seed " << seed << " i " << i;
        ASSERT_FALSE(seen[p]) << "n " << n << " seed " << seed << ": " << p << " twice";
        seen[p] = true;
        deleted += half.deleted(i) ? 1 : 0;
      }
      EXPECT_EQ(deleted, n / 2) << "n " << n << " seed " << seed;
    }
  }
}

TEST(BenchRandomHalf, ScattersOverEveryBlockAndDependsOnTheSeed) {
  std::uint64_t const n = std::uint64_t{1} << 20;  // 16384 blocks of 64
  RandomHalf const a(n, 1);
  RandomHalf const b(n, 2);
  std::vector<int> per_block(n / 64, 0);
  std::uint64_t differ = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    per_block[i / 64] += a.deleted(i) ? 1 : 0;
    differ += a.deleted(i) != b.deleted(i) ? 1 : 0;
  }
  auto const [lo, hi] = std::minmax_element(per_block.begin(), per_block.end());
  // Hypergeometric around 32 of 64: no block emptied or untouched, not every block exactly 32.
  EXPECT_GT(*lo, 8);
  EXPECT_LT(*hi, 56);
  EXPECT_NE(*lo, *hi);
  EXPECT_GT(differ, n / 4) << "another seed deletes another half";
}
