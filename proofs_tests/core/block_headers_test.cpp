// Block header protocol steps (DynaSOAr Alg. 6-9, App. A.1-A.2) with hand-worked bit patterns,
// and the defragmentation-candidate test against HeapConfig's specification.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "heaplab/core/block_headers.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/heap_config.hpp"

namespace core = heaplab::core;
using Headers  = core::BlockHeadersRef<core::HostAtomics>;

namespace {

struct TwoBlocks {
  std::vector<std::uint64_t> alloc{core::kFullBitmap, core::kFullBitmap};
  std::vector<std::uint64_t> iter{7, 7};
  std::vector<std::uint32_t> type{core::kNoType, core::kNoType};
  Headers h{alloc.data(), iter.data(), type.data(), 2};
};

constexpr std::uint64_t kPad4 = ~std::uint64_t{0xF};  // capacity 4: bits 4..63 are padding

}  // namespace

TEST(BlockHeaders, DefragFillMatchesHandWorkedThresholds) {
  // CompactGpu sec. 3: n = 1 merges blocks at most half full; n = 2 at most two thirds full.
  EXPECT_TRUE(core::is_defrag_fill(32, 64, 1));
  EXPECT_FALSE(core::is_defrag_fill(33, 64, 1));
  EXPECT_TRUE(core::is_defrag_fill(42, 64, 2));   // 42/64 = 0.656 <= 2/3
  EXPECT_FALSE(core::is_defrag_fill(43, 64, 2));  // 43/64 = 0.672 > 2/3
  EXPECT_TRUE(core::is_defrag_fill(0, 2, 1));
  EXPECT_FALSE(core::is_defrag_fill(2, 2, 7));  // a full block is never a candidate
}

TEST(BlockHeaders, InitializePublishesTypeEmptyBitmapAndClearsIteration) {
  TwoBlocks b;
  b.h.initialize(1, 3, 4);
  EXPECT_EQ(b.type[1], 3u);
  EXPECT_EQ(b.alloc[1], kPad4);
  EXPECT_EQ(b.iter[1], 0u);
  EXPECT_EQ(b.alloc[0], core::kFullBitmap);  // the other block is untouched
}

TEST(BlockHeaders, ReservingOneSlotUntilFull) {
  TwoBlocks b;
  b.h.initialize(0, 0, 4);
  std::uint64_t taken = 0;
  for (int i = 0; i < 4; ++i) {
    auto const r = b.h.try_reserve(0, 1, /*seed=*/0);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(core::popcount(r.slots), 1);
    EXPECT_EQ(r.slots & taken, 0u);
    EXPECT_EQ(r.update.before, kPad4 | taken);
    taken |= r.slots;
    EXPECT_EQ(r.update.after, kPad4 | taken);
    EXPECT_EQ(r.update.filled(), i == 3);  // Alg. 6 line 10: the 4th reservation fills it
  }
  EXPECT_EQ(taken, 0xFu);
  EXPECT_FALSE(b.h.try_reserve(0, 1, 0).ok());  // full: FAIL (Alg. 6 line 3)
  EXPECT_FALSE(b.h.try_reserve(1, 1, 0).ok());  // invalidated block: FAIL (App. A.2)
}

TEST(BlockHeaders, ReservingKSlotsTakesAtMostKAndAtMostWhatIsFree) {
  TwoBlocks b;
  b.h.initialize(0, 0, 4);
  auto const r1 = b.h.try_reserve(0, 3, /*seed=*/0);  // rotation 0: slots 0, 1, 2
  EXPECT_EQ(r1.slots, 0x7u);
  auto const r2 = b.h.try_reserve(0, 3, 0);  // only slot 3 is left
  EXPECT_EQ(r2.slots, 0x8u);
  EXPECT_TRUE(r2.update.filled());
  b.h.initialize(1, 0, 64);
  auto const r3 = b.h.try_reserve(1, 2, /*seed=*/62);  // rotation 62: slots 62, 63
  EXPECT_EQ(r3.slots, (std::uint64_t{3} << 62));
}

TEST(BlockHeaders, DeallocateReportsRegularFirstAndEmpty) {
  TwoBlocks b;
  b.h.initialize(0, 0, 4);
  b.alloc[0]       = kPad4 | 0xF;  // full
  auto const first = b.h.deallocate(0, 2, 4);
  EXPECT_EQ(first.state, core::DeallocState::first);  // Alg. 7 line 7
  EXPECT_EQ(first.update.before, core::kFullBitmap);
  EXPECT_EQ(first.update.after, kPad4 | 0xB);
  EXPECT_EQ(b.h.deallocate(0, 0, 4).state, core::DeallocState::regular);
  EXPECT_EQ(b.h.deallocate(0, 1, 4).state, core::DeallocState::regular);
  auto const empty = b.h.deallocate(0, 3, 4);
  EXPECT_EQ(empty.state, core::DeallocState::empty);  // Alg. 7 line 5
  EXPECT_EQ(b.alloc[0], kPad4);
}

TEST(BlockHeaders, DoubleFreeIsRejected) {
  TwoBlocks b;
  b.h.initialize(0, 0, 4);
  EXPECT_THROW(b.h.deallocate(0, 1, 4), core::precondition_error);
}

TEST(BlockHeaders, InvalidationAndRollbackTouchExactlyTheInvalidatedBits) {
  TwoBlocks b;
  b.h.initialize(0, 0, 4);
  b.alloc[0]     = kPad4 | 0x2;                   // slot 1 in use
  auto const inv = b.h.invalidate_free_slots(0);  // Alg. 9 line 2
  EXPECT_EQ(inv.before, kPad4 | 0x2);             // zero bits 0, 2, 3: invalidated by us
  EXPECT_EQ(b.alloc[0], core::kFullBitmap);
  b.alloc[0] &= ~std::uint64_t{0x2};  // meanwhile the owner of slot 1 frees it
  auto const rb = b.h.rollback_invalidation(0, inv.before);  // Alg. 9 line 8
  EXPECT_EQ(rb.before, ~std::uint64_t{0x2});                 // not all ones: someone freed
  EXPECT_EQ(rb.after, kPad4);                                // empty again: retry (line 11)
  EXPECT_EQ(b.alloc[0], kPad4);
  auto const again = b.h.invalidate_free_slots(0);
  EXPECT_EQ(again.before, kPad4);  // every slot invalidated: the block can be deleted
  EXPECT_EQ(b.h.invalidate_free_slots(0).before, core::kFullBitmap);  // nothing left to invalidate
}

TEST(BlockHeaders, SlotUpdatePredicates) {
  core::SlotUpdate const fill{kPad4 | 0x7, core::kFullBitmap};
  EXPECT_TRUE(fill.filled());
  EXPECT_FALSE(fill.unfilled());
  core::SlotUpdate const first{core::kFullBitmap, kPad4 | 0x7};
  EXPECT_TRUE(first.unfilled());
  EXPECT_FALSE(first.emptied(4));
  core::SlotUpdate const last{kPad4 | 0x1, kPad4};
  EXPECT_TRUE(last.emptied(4));
  // Capacity 4, n = 1: a candidate iff used <= 2 (used * 2 <= 4).
  EXPECT_EQ((core::SlotUpdate{kPad4 | 0x3, kPad4 | 0x7}).defrag_crossing(4, 1), -1);  // 2 -> 3
  EXPECT_EQ((core::SlotUpdate{kPad4 | 0x7, kPad4 | 0x3}).defrag_crossing(4, 1), +1);  // 3 -> 2
  EXPECT_EQ((core::SlotUpdate{kPad4, kPad4 | 0x1}).defrag_crossing(4, 1), 0);         // 0 -> 1
  EXPECT_EQ((core::SlotUpdate{kPad4, core::kFullBitmap}).defrag_crossing(4, 1),
            -1);  // invalidation
  EXPECT_EQ((core::SlotUpdate{core::kFullBitmap, kPad4}).defrag_crossing(4, 1), +1);  // initialize
}
