// Unit tests of the bump family's model (bump_model.hpp): the sequential allocator, the order of a
// wave's threads, and the refinement rule -- the model accepts the outcome of every sequential
// order of a wave's requests, and rejects outcomes that no order gives.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <numeric>

#include "bump_model.hpp"
#include "heaplab/core/expects.hpp"
#include "property.hpp"

namespace heaplab::bump_family {
namespace {

std::vector<std::string> names_of(std::vector<check::Violation> const& v) {
  std::vector<std::string> out;
  for (auto const& x : v) out.push_back(x.invariant);
  return out;
}

BumpAlloc wave(std::uint32_t threads, std::vector<std::uint64_t> sizes, std::uint64_t align) {
  BumpAlloc a;
  a.threads = threads;
  a.sizes   = std::move(sizes);
  a.align   = align;
  return a;
}

TEST(SequentialBump, AlignsUpGrantsUntilTheEndAndThenAnswersNullWithoutMoving) {
  SequentialBump b(100);
  EXPECT_EQ(b.alloc(3, 1), 0u);
  EXPECT_EQ(b.alloc(8, 8), 8u);  // 3 aligned up to 8
  EXPECT_EQ(b.top(), 16u);
  EXPECT_EQ(b.alloc(85, 1), kNull);  // 16 + 85 > 100
  EXPECT_EQ(b.top(), 16u);
  EXPECT_EQ(b.alloc(84, 1), 16u);  // ends exactly at the arena's end
  EXPECT_EQ(b.top(), 100u);
  EXPECT_EQ(b.alloc(1, 1), kNull);
  b.free_all();
  EXPECT_EQ(b.top(), 0u);
  EXPECT_EQ(b.alloc(100, 64), 0u);
}

TEST(SequentialBump, ARequestLargerThanTheArenaOrPushedPastItByPaddingIsNull) {
  SequentialBump b(64);
  EXPECT_EQ(b.alloc(65, 1), kNull);
  EXPECT_EQ(b.alloc(1, 1), 0u);
  EXPECT_EQ(b.alloc(1, 64), kNull);  // align_up(1, 64) = 64, 64 + 1 > 64
  EXPECT_EQ(b.alloc(63, 1), 1u);
}

TEST(AlignUp, RoundsToMultiplesAndSaturatesInsteadOfWrapping) {
  EXPECT_EQ(align_up(0, 8), 0u);
  EXPECT_EQ(align_up(1, 8), 8u);
  EXPECT_EQ(align_up(16, 8), 16u);
  EXPECT_EQ(align_up(kNull - 2, 8), kNull);
  EXPECT_FALSE(fits(kNull - 2, 1, 8, 100));
  EXPECT_TRUE(fits(92, 8, 4, 100));
  EXPECT_FALSE(fits(93, 8, 4, 100));
}

TEST(WaveOrder, IsASeededPermutationOfTheThreads) {
  BumpAlloc a = wave(50, {8}, 1);
  a.seed      = 7;
  auto order  = wave_order(a);
  EXPECT_EQ(order, wave_order(a));
  std::vector<std::uint32_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::uint32_t> expected(50);
  std::iota(expected.begin(), expected.end(), 0u);
  EXPECT_EQ(sorted, expected);
  a.seed = 8;
  EXPECT_NE(order, wave_order(a));
}

TEST(BumpModel, AcceptsEverySequentialOrderOfAWave) {
  testing::check_property(100, [] {
    std::uint64_t const arena = *rc::gen::inRange<std::uint64_t>(1, 2000);
    BumpModel model(arena);
    SequentialBump bump(arena);
    auto const waves = *rc::gen::inRange(1, 6);
    for (int w = 0; w < waves; ++w) {
      if (*rc::gen::inRange(0, 5) == 0) {
        bump.free_all();
        BumpState const s = model.after_free_all(bump.top());
        RC_ASSERT(check_all(s).empty());
        model.commit(s);
        continue;
      }
      BumpAlloc a = wave(*rc::gen::inRange<std::uint32_t>(1, 40),
                         *rc::gen::container<std::vector<std::uint64_t>>(
                             static_cast<std::size_t>(*rc::gen::inRange(1, 4)),
                             rc::gen::inRange<std::uint64_t>(1, 300)),
                         std::uint64_t{1} << *rc::gen::inRange(0, 7));
      a.seed      = *rc::gen::arbitrary<std::uint64_t>();  // the order of the threads
      std::vector<std::uint64_t> answers(a.threads, kNull);
      for (auto t : wave_order(a)) answers[t] = bump.alloc(a.size_of(t), a.align);
      BumpState const s = model.after_alloc(static_cast<std::size_t>(w), a, answers, bump.top());
      auto const violations = check_all(s);
      RC_ASSERT(violations.empty());
      model.commit(s);
      RC_ASSERT(model.top() == bump.top());
    }
  });
}

TEST(BumpModel, RejectsAGapANullThatFitsAndAPointerThatDisagrees) {
  BumpModel model(100);
  BumpAlloc const a = wave(2, {10}, 1);
  // A gap: [0, 10) and [20, 30) -- no order of a bump allocator leaves 10..20 unused.
  EXPECT_EQ(names_of(check_all(model.after_alloc(0, a, {0, 20}, 30))),
            std::vector<std::string>{"bump-packed"});
  // A null although 10 bytes still fit after the wave.
  EXPECT_EQ(names_of(check_all(model.after_alloc(0, a, {0, kNull}, 10))),
            std::vector<std::string>{"bump-null-justified"});
  // The implementation's pointer is not where its grants end.
  EXPECT_EQ(names_of(check_all(model.after_alloc(0, a, {10, 0}, 30))),
            std::vector<std::string>{"bump-top-matches"});
  // The same start twice: overlapping and not packed.
  EXPECT_EQ(names_of(check_all(model.after_alloc(0, a, {0, 0}, 10))),
            (std::vector<std::string>{"bump-disjoint", "bump-packed"}));
  EXPECT_THROW((void)model.after_alloc(0, a, {0}, 10), core::precondition_error);
}

TEST(BumpModel, CommitsGrantsInOffsetOrderAndFreeAllReleasesEverything) {
  BumpModel model(100);
  BumpAlloc const a = wave(3, {10, 20}, 8);
  // Thread 1 (20 bytes) at 0, thread 2 (10) at align_up(20) = 24, thread 0 (10) at 40.
  BumpState const s = model.after_alloc(0, a, {40, 0, 24}, 50);
  ASSERT_TRUE(check_all(s).empty());
  model.commit(s);
  ASSERT_EQ(model.live().size(), 3u);
  EXPECT_EQ(model.live()[0].thread, 1u);
  EXPECT_EQ(model.live()[1].offset, 24u);
  EXPECT_EQ(model.live()[2].end(), 50u);
  EXPECT_EQ(model.top(), 50u);
  // The next wave may not reuse the padding between 34 and 40.
  EXPECT_EQ(names_of(check_all(model.after_alloc(1, wave(1, {4}, 1), {36}, 50))),
            std::vector<std::string>{"bump-packed"});
  BumpState const f = model.after_free_all(0);
  ASSERT_TRUE(check_all(f).empty());
  model.commit(f);
  EXPECT_TRUE(model.live().empty());
  EXPECT_EQ(model.top(), 0u);
}

}  // namespace
}  // namespace heaplab::bump_family
