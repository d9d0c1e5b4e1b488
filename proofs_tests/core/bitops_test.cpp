// Core bit operations against naive loops (RapidCheck, >= 100 cases per property).
// The naive references below are written for obviousness: one bit at a time.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>

#include "heaplab/core/bitops.hpp"

namespace core = heaplab::core;

namespace {

bool bit(std::uint64_t x, unsigned i) { return ((x >> i) & 1u) != 0; }

int naive_ffs(std::uint64_t x) {
  for (unsigned i = 0; i < 64; ++i)
    if (bit(x, i)) return static_cast<int>(i);
  return -1;
}

int naive_popc(std::uint64_t x) {
  int c = 0;
  for (unsigned i = 0; i < 64; ++i) c += bit(x, i) ? 1 : 0;
  return c;
}

int naive_nth(std::uint64_t x, int n) {
  for (unsigned i = 0; i < 64; ++i) {
    if (bit(x, i)) {
      if (n == 0) return static_cast<int>(i);
      --n;
    }
  }
  return -1;
}

std::uint64_t naive_rotl(std::uint64_t x, unsigned r) {
  std::uint64_t out = 0;
  for (unsigned i = 0; i < 64; ++i)
    if (bit(x, i)) out |= std::uint64_t{1} << ((i + r) % 64);
  return out;
}

int naive_first_from(std::uint64_t x, unsigned start, bool want) {
  for (unsigned k = 0; k < 64; ++k) {
    unsigned const i = (start + k) % 64;
    if (bit(x, i) == want) return static_cast<int>(i);
  }
  return -1;
}

// Words with interesting densities: uniform, sparse, dense, all-zero and all-one corners.
rc::Gen<std::uint64_t> gen_word() {
  return rc::gen::oneOf(
      rc::gen::arbitrary<std::uint64_t>(),
      rc::gen::map(rc::gen::inRange(0, 64), [](int i) { return std::uint64_t{1} << i; }),
      rc::gen::map(rc::gen::arbitrary<std::uint64_t>(),
                   [](std::uint64_t v) { return v & (v >> 7) & (v >> 13); }),
      rc::gen::map(rc::gen::arbitrary<std::uint64_t>(),
                   [](std::uint64_t v) { return v | (v << 5) | (v >> 11); }),
      rc::gen::element(std::uint64_t{0}, ~std::uint64_t{0}));
}

}  // namespace

RC_GTEST_PROP(Bitops, FindFirstSetMatchesLoop, ()) {
  auto const x = *gen_word();
  RC_ASSERT(core::find_first_set(x) == naive_ffs(x));
}

RC_GTEST_PROP(Bitops, FindFirstSet32MatchesLoopOnTheLowWord, ()) {
  auto const x = static_cast<std::uint32_t>(*gen_word());
  RC_ASSERT(core::find_first_set32(x) == naive_ffs(x));
}

RC_GTEST_PROP(Bitops, PopcountMatchesLoop, ()) {
  auto const x = *gen_word();
  RC_ASSERT(core::popcount(x) == naive_popc(x));
}

RC_GTEST_PROP(Bitops, NthSetBitMatchesLoop, ()) {
  auto const x = *gen_word();
  auto const n = *rc::gen::inRange(-2, 66);
  RC_ASSERT(core::nth_set_bit(x, n) == naive_nth(x, n));
}

RC_GTEST_PROP(Bitops, RotationsMatchLoopAndInvert, ()) {
  auto const x = *gen_word();
  auto const r = *rc::gen::inRange(0u, 200u);
  RC_ASSERT(core::rotate_left(x, r) == naive_rotl(x, r % 64));
  RC_ASSERT(core::rotate_right(core::rotate_left(x, r), r) == x);
}

RC_GTEST_PROP(Bitops, RotatedSearchesMatchLoop, ()) {
  auto const x     = *gen_word();
  auto const start = *rc::gen::inRange(0u, 200u);
  RC_ASSERT(core::find_first_set_rotated(x, start) == naive_first_from(x, start % 64, true));
  RC_ASSERT(core::find_first_zero_rotated(x, start) == naive_first_from(x, start % 64, false));
}

RC_GTEST_PROP(Bitops, LowestSetBitsMatchesLoop, ()) {
  auto const x           = *gen_word();
  auto const k           = *rc::gen::inRange(0u, 70u);
  std::uint64_t expected = 0;
  unsigned taken         = 0;
  for (unsigned i = 0; i < 64 && taken < k; ++i)
    if (bit(x, i)) {
      expected |= std::uint64_t{1} << i;
      ++taken;
    }
  RC_ASSERT(core::lowest_set_bits(x, k) == expected);
}

// Fixed corner cases with expectations worked out by hand (not by the code under test).
TEST(Bitops, HandWorkedCorners) {
  EXPECT_EQ(core::find_first_set(0), -1);
  EXPECT_EQ(core::find_first_set(0x8000000000000000ull), 63);
  EXPECT_EQ(core::find_first_set32(0), -1);
  EXPECT_EQ(core::find_first_set32(0x80000000u), 31);
  EXPECT_EQ(core::find_first_set32(0b1000100u), 2);
  EXPECT_EQ(core::popcount(~0ull), 64);
  EXPECT_EQ(core::nth_set_bit(0b101100, 0), 2);
  EXPECT_EQ(core::nth_set_bit(0b101100, 2), 5);
  EXPECT_EQ(core::nth_set_bit(0b101100, 3), -1);
  EXPECT_EQ(core::find_first_zero_rotated(~0ull, 5), -1);
  EXPECT_EQ(core::find_first_zero_rotated(0b0110, 1), 3);
  EXPECT_EQ(core::find_first_set_rotated(0b0001, 1), 0);  // wraps past bit 63
  EXPECT_EQ(core::low_bits(0), 0u);
  EXPECT_EQ(core::low_bits(64), ~0ull);
  EXPECT_EQ(core::lowest_set_bits(0b1011010, 2), 0b0000010u | 0b0001000u);
  EXPECT_EQ(core::lowest_set_bits(0b1011010, 0), 0u);
  EXPECT_EQ(core::lowest_set_bits(0b1011010, 9), 0b1011010u);
}

TEST(Bitops, PowerOfTwoAtLeastIsTheSmallestOneUpToTheCap) {
  EXPECT_EQ(core::power_of_two_at_least(0, 8192), 1u);
  EXPECT_EQ(core::power_of_two_at_least(1, 8192), 1u);
  EXPECT_EQ(core::power_of_two_at_least(2, 8192), 2u);
  EXPECT_EQ(core::power_of_two_at_least(3, 8192), 4u);
  EXPECT_EQ(core::power_of_two_at_least(64, 8192), 64u);
  EXPECT_EQ(core::power_of_two_at_least(65, 8192), 128u);
  EXPECT_EQ(core::power_of_two_at_least(8191, 8192), 8192u);
  EXPECT_EQ(core::power_of_two_at_least(100000, 8192), 8192u);
  EXPECT_EQ(core::power_of_two_at_least(100000, 16384), 16384u);
}
