// oom-justified (check/oom_obligations.hpp): hand-built before/after snapshots of one
// allocation-only wave, legitimately exhausted and broken.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "heaplab/check/oom_obligations.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "test_heap.hpp"

namespace check = heaplab::check;
using namespace heaplab::check::testing;

namespace {

/// A 3-block heap of the test config (M = 3: one level-0 container).
check::HeapSnapshot small_heap() {
  auto config       = test_config();
  config.num_blocks = 3;
  return check::make_empty_snapshot(config, false);
}

std::vector<std::uint64_t> nulls_of(std::uint32_t type, std::uint64_t count) {
  std::vector<std::uint64_t> n(test_config().num_types(), 0);
  n.at(type) = count;
  return n;
}

}  // namespace

TEST(OomJustified, AnExhaustedHeapJustifiesEveryNull) {
  // Before: Fish block 0 half full, blocks 1 and 2 free. The wave fills block 0, claims block 1
  // for Fish and block 2 for Shark, and fills both: nothing is left for Fish or Shark.
  auto before = small_heap();
  check::make_block_allocated(before, 0, kFish, slot_range(0, 32));
  auto after = before;
  check::make_block_allocated(after, 0, kFish, slot_range(0, 64));
  check::make_block_allocated(after, 1, kFish, slot_range(0, 64));
  check::make_block_allocated(after, 2, kShark, slot_range(0, 32));
  ASSERT_TRUE(check::check_all(after).empty());
  EXPECT_TRUE(check::check_oom_justified(before, after, nulls_of(kFish, 5)).empty());
  EXPECT_TRUE(check::check_oom_justified(before, after, nulls_of(kShark, 1)).empty());
  // No null, no obligation, even with free room.
  EXPECT_TRUE(check::check_oom_justified(before, before, nulls_of(kFish, 0)).empty());
}

TEST(OomJustified, ABlockFreeBeforeAndAfterIsAViolation) {
  auto before = small_heap();
  check::make_block_allocated(before, 0, kFish, slot_range(0, 64));
  auto after = before;  // the wave placed nothing, block 1 and 2 stayed free
  check::make_block_allocated(after, 1, kFish, slot_range(0, 64));
  auto const vs = check::check_oom_justified(before, after, nulls_of(kFish, 3));
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].invariant, "oom-justified");
  EXPECT_EQ(vs[0].block, 2);
  EXPECT_EQ(vs[0].type, kFish);
  EXPECT_NE(vs[0].message.find("3 allocations of Fish returned null although 1 block was free"),
            std::string::npos)
      << vs[0].message;
}

TEST(OomJustified, AFreeSlotOfTheRequestedTypeThatStayedFreeIsAViolation) {
  // No free block after; Fish block 0 had slots 40..63 free before and still has 50..63 free.
  auto before = small_heap();
  check::make_block_allocated(before, 0, kFish, slot_range(0, 40));
  check::make_block_allocated(before, 1, kShark, slot_range(0, 32));
  auto after = before;
  check::make_block_allocated(after, 0, kFish, slot_range(0, 50));
  check::make_block_allocated(after, 2, kCell, slot_range(0, 42));
  auto const vs = check::check_oom_justified(before, after, nulls_of(kFish, 1));
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].invariant, "oom-justified");
  EXPECT_EQ(vs[0].block, 0);
  EXPECT_EQ(vs[0].bit, 50);
  EXPECT_NE(vs[0].message.find("14 slots of blocks of Fish stayed free"), std::string::npos)
      << vs[0].message;
}

TEST(OomJustified, TheRuleIsPerRequestedType) {
  // Same heaps: a Shark null is legitimate (Shark block 1 is full, no block free) although Fish
  // block 0 has free slots: a Fish block never holds a Shark (DynaSOAr sec. 3).
  auto before = small_heap();
  check::make_block_allocated(before, 0, kFish, slot_range(0, 40));
  check::make_block_allocated(before, 1, kShark, slot_range(0, 32));
  auto after = before;
  check::make_block_allocated(after, 0, kFish, slot_range(0, 50));
  check::make_block_allocated(after, 2, kCell, slot_range(0, 42));
  EXPECT_TRUE(check::check_oom_justified(before, after, nulls_of(kShark, 4)).empty());
  // Both types failing: only the Fish nulls are reported.
  auto nulls    = nulls_of(kShark, 4);
  nulls[kFish]  = 2;
  auto const vs = check::check_oom_justified(before, after, nulls);
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].type, kFish);
}

TEST(OomJustified, SlotsThatWereNotFreeBeforeOrBlocksClaimedDuringTheWaveDoNotCount) {
  // Block 1 was free before and was claimed for Fish during the wave; it still has free slots
  // after. A claimed block is briefly invisible to other threads (between its header store and
  // its active[T] set), so a Fish null is not blamed on it. Block 0 (Fish) is full after.
  auto before = small_heap();
  check::make_block_allocated(before, 0, kFish, slot_range(0, 60));
  check::make_block_allocated(before, 2, kCell, slot_range(0, 42));
  auto after = before;
  check::make_block_allocated(after, 0, kFish, slot_range(0, 64));
  check::make_block_allocated(after, 1, kFish, slot_range(0, 3));
  EXPECT_TRUE(check::check_oom_justified(before, after, nulls_of(kFish, 1)).empty());
}
