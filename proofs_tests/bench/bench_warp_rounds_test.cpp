// heaplab_bench alloc's "free rounds in one block" (bench/warp_rounds.hpp), on hand-built pointer
// arrays whose answer is counted by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "heaplab/core/object_pointer.hpp"
#include "warp_rounds.hpp"

namespace core = heaplab::core;
using heaplab::bench::one_block_rounds;

namespace {
std::uint64_t ptr(std::uint64_t block, std::uint32_t slot, std::uint32_t type = 0) {
  return core::encode_object_pointer(block * 4096, slot, 64, type);
}
}  // namespace

TEST(BenchWarpRounds, CountsTheRoundsWhoseObjectsShareOneBlock) {
  // 64 threads (two warps) x 2 objects; pointers[t * 2 + i].
  std::vector<std::uint64_t> p(128);
  for (std::uint32_t t = 0; t < 64; ++t) {
    p[t * 2 + 0] = ptr(t / 32, t % 32);       // round (w, 0): warp w's block: one block
    p[t * 2 + 1] = ptr(10 + t / 16, t % 16);  // round (w, 1): two blocks per warp
  }
  EXPECT_DOUBLE_EQ(one_block_rounds(p, 64, 2), 0.5);
  // One lane of warp 1, round 0, in another block: three of four rounds are split.
  p[40 * 2 + 0] = ptr(7, 0);
  EXPECT_DOUBLE_EQ(one_block_rounds(p, 64, 2), 0.25);
  // The same block address of another type is another block (the match compares the type).
  for (std::uint32_t t = 0; t < 64; ++t) p[t * 2 + 1] = ptr(20, t % 32, t < 48 ? 0u : 1u);
  p[40 * 2 + 0] = ptr(1, 8);
  EXPECT_DOUBLE_EQ(one_block_rounds(p, 64, 2), 0.75);
}

TEST(BenchWarpRounds, NullAnswersAndAPartialLastWarpAreLeftOut) {
  // 40 threads x 1 object: warp 0 all in block 3 but two nulls; warp 1 has 8 threads.
  std::vector<std::uint64_t> p(40);
  for (std::uint32_t t = 0; t < 32; ++t) p[t] = (t == 5 || t == 9) ? 0 : ptr(3, t);
  for (std::uint32_t t = 32; t < 40; ++t) p[t] = ptr(4 + t % 2, t - 32);
  EXPECT_DOUBLE_EQ(one_block_rounds(p, 40, 1), 0.5);
  // A round of nulls only is not counted: none left -> 1.
  std::vector<std::uint64_t> nulls(32, 0);
  EXPECT_DOUBLE_EQ(one_block_rounds(nulls, 32, 1), 1.0);
}
