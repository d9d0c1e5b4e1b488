// Snapshot construction helpers against hand-computed bitmaps.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/cookie.hpp"
#include "heaplab/core/expects.hpp"
#include "test_heap.hpp"

namespace check = heaplab::check;
namespace core  = heaplab::core;
using namespace heaplab::check::testing;
using Counts = std::vector<std::uint32_t>;

TEST(Bitmap, LevelShapes) {
  EXPECT_EQ(check::level_bit_counts(0), Counts{});
  EXPECT_EQ(check::level_bit_counts(1), Counts{1});
  EXPECT_EQ(check::level_bit_counts(64), Counts{64});
  EXPECT_EQ(check::level_bit_counts(65), (Counts{65, 2}));
  EXPECT_EQ(check::level_bit_counts(4096), (Counts{4096, 64}));
  EXPECT_EQ(check::level_bit_counts(4097), (Counts{4097, 65, 2}));
  EXPECT_EQ(check::level_container_counts(65), (Counts{2, 1}));
  EXPECT_EQ(check::level_container_counts(4096), (Counts{64, 1}));
  EXPECT_EQ(check::level_container_counts(4097), (Counts{65, 2, 1}));
  for (std::uint32_t n : {1u, 64u, 65u, 4096u, 4097u, 300000u})
    EXPECT_EQ(check::level_bit_counts(n).size(), check::BitmapSnapshot::level_count(n)) << n;
}

TEST(Bitmap, MakeBitmapIsClearWithEveryLevel) {
  auto const bm = check::make_bitmap(4097);
  EXPECT_EQ(bm.num_bits, 4097u);
  ASSERT_EQ(bm.levels.size(), 3u);
  EXPECT_EQ(bm.levels[0], std::vector<std::uint64_t>(65, 0));
  EXPECT_EQ(bm.levels[1], std::vector<std::uint64_t>(2, 0));
  EXPECT_EQ(bm.levels[2], std::vector<std::uint64_t>(1, 0));
  auto const absent = check::make_bitmap(0);
  EXPECT_EQ(absent.num_bits, 0u);
  EXPECT_TRUE(absent.levels.empty());
}

TEST(Bitmap, SetAndClearPropagateUpTheHierarchy) {
  auto bm = check::make_bitmap(4097);
  check::set_bit(bm, 4096);  // container 64 of level 0 -> bit 64 of level 1 -> bit 1 of level 2
  EXPECT_EQ(bm.levels[0][64], 1u);
  EXPECT_EQ(bm.levels[1][1], 1u);
  EXPECT_EQ(bm.levels[2][0], 0b10u);
  check::set_bit(bm, 0);
  check::set_bit(bm, 1);
  EXPECT_EQ(bm.levels[0][0], 0b11u);
  EXPECT_EQ(bm.levels[1][0], 1u);
  EXPECT_EQ(bm.levels[2][0], 0b11u);
  check::clear_bit(bm, 0);  // container 0 still holds bit 1: summaries stay
  EXPECT_EQ(bm.levels[1][0], 1u);
  EXPECT_EQ(bm.levels[2][0], 0b11u);
  check::clear_bit(bm, 1);
  check::clear_bit(bm, 4096);
  EXPECT_EQ(bm.levels[1][0], 0u);
  EXPECT_EQ(bm.levels[1][1], 0u);
  EXPECT_EQ(bm.levels[2][0], 0u);
  EXPECT_TRUE(check::test_bit(check::make_bitmap(3), 2) == false);
}

TEST(Bitmap, RecomputeLevelsFromLevel0) {
  auto bm         = check::make_bitmap(200);  // levels: 4 containers, 1 container
  bm.levels[0][1] = 0x8000;                   // bit 79
  bm.levels[0][3] = 0x1;                      // bit 192
  bm.levels[1][0] = 0xFF;                     // garbage to be recomputed
  check::recompute_levels(bm);
  EXPECT_EQ(bm.levels[1][0], 0b1010u);
  EXPECT_EQ(check::set_bits(bm), (Counts{79, 192}));
  EXPECT_EQ(check::count_set(bm), 2u);
}

TEST(Bitmap, PreconditionsAreCheckedWithClearErrors) {
  auto bm = check::make_bitmap(10);
  EXPECT_THROW(check::set_bit(bm, 10), core::precondition_error);
  bm.levels.clear();
  EXPECT_THROW(check::set_bit(bm, 3), core::precondition_error);
}

TEST(EmptySnapshot, IsAFreshHeap) {
  auto const s = check::make_empty_snapshot(test_config(), true);
  ASSERT_EQ(s.blocks.size(), 70u);
  for (auto const& b : s.blocks) {
    EXPECT_EQ(b.type, core::kNoType);
    EXPECT_EQ(b.alloc_bitmap, ~std::uint64_t{0});  // invalidated (DynaSOAr App. A.2)
    ASSERT_EQ(b.objects.size(), 64u);
    for (auto const& o : b.objects) EXPECT_FALSE(o.has_value());
  }
  // Free bitmap: 70 bits set = container 0 all ones, container 1 the low 6 bits; level 1 = 0b11.
  ASSERT_EQ(s.free_blocks.levels.size(), 2u);
  EXPECT_EQ(s.free_blocks.levels[0][0], ~std::uint64_t{0});
  EXPECT_EQ(s.free_blocks.levels[0][1], 0x3Fu);
  EXPECT_EQ(s.free_blocks.levels[1][0], 0b11u);
  // Abstract Agent: absent bitmaps. Concrete types: 70 clear bits.
  EXPECT_EQ(s.allocated[kAgent].num_bits, 0u);
  EXPECT_TRUE(s.defrag[kAgent].levels.empty());
  for (auto t : {kFish, kShark, kCell}) {
    EXPECT_EQ(s.allocated[t].num_bits, 70u);
    EXPECT_EQ(check::count_set(s.allocated[t]), 0u);
    EXPECT_EQ(check::count_set(s.active[t]), 0u);
    EXPECT_EQ(check::count_set(s.defrag[t]), 0u);
  }
  EXPECT_TRUE(s.has_payloads);
  EXPECT_TRUE(check::make_empty_snapshot(test_config(), false).blocks[0].objects.empty());
}

TEST(EmptySnapshot, InvalidConfigIsRejected) {
  auto c       = test_config();
  c.num_blocks = 0;
  EXPECT_THROW(check::make_empty_snapshot(c, false), core::precondition_error);
}

TEST(BuildBlocks, AllocatedBlockHasQuiescentStates) {
  auto s = check::make_empty_snapshot(test_config(), true);
  // Shark (capacity 32) with objects in slots 0 and 1: bitmap 0b11 plus padding bits 32..63.
  std::uint64_t const next = check::make_block_allocated(s, 65, kShark, 0b11, 7);
  EXPECT_EQ(next, 9u);
  EXPECT_EQ(s.blocks[65].type, kShark);
  EXPECT_EQ(s.blocks[65].alloc_bitmap, 0xFFFFFFFF00000003ull);
  EXPECT_FALSE(check::test_bit(s.free_blocks, 65));
  EXPECT_TRUE(check::test_bit(s.allocated[kShark], 65));
  EXPECT_TRUE(check::test_bit(s.active[kShark], 65));  // 2 < 32
  EXPECT_TRUE(check::test_bit(s.defrag[kShark], 65));  // 2 * 2 <= 32
  EXPECT_EQ(s.allocated[kShark].levels[1][0], 0b10u);
  ASSERT_TRUE(s.blocks[65].objects[1].has_value());
  EXPECT_EQ(s.blocks[65].objects[1]->id, 8u);
  EXPECT_EQ(s.blocks[65].objects[1]->cookie, core::cookie_of(8));
  EXPECT_EQ(s.blocks[65].objects[1]->refs.size(), 2u);  // home (from Agent), target
  EXPECT_FALSE(s.blocks[65].objects[2].has_value());
  // Re-typing the block clears the other type's bits; a full Fish block is neither active nor
  // a candidate.
  check::make_block_allocated(s, 65, kFish, ~std::uint64_t{0}, 0);
  EXPECT_FALSE(check::test_bit(s.allocated[kShark], 65));
  EXPECT_FALSE(check::test_bit(s.active[kShark], 65));
  EXPECT_FALSE(check::test_bit(s.active[kFish], 65));
  EXPECT_FALSE(check::test_bit(s.defrag[kFish], 65));
  EXPECT_EQ(s.allocated[kShark].levels[1][0], 0u);
}

TEST(BuildBlocks, FreeBlockIsInvalidatedAndKeepsItsType) {
  auto s = valid_snapshot(true);
  check::make_block_free(s, 4);
  EXPECT_EQ(s.blocks[4].alloc_bitmap, ~std::uint64_t{0});
  EXPECT_EQ(s.blocks[4].type, kCell);
  EXPECT_TRUE(check::test_bit(s.free_blocks, 4));
  EXPECT_FALSE(check::test_bit(s.allocated[kCell], 4));
  EXPECT_FALSE(check::test_bit(s.active[kCell], 4));
  EXPECT_FALSE(check::test_bit(s.defrag[kCell], 4));
  EXPECT_FALSE(s.blocks[4].objects[0].has_value());
}

TEST(BuildBlocks, PreconditionsAreCheckedWithClearErrors) {
  auto s = check::make_empty_snapshot(test_config(), false);
  EXPECT_THROW(check::make_block_allocated(s, 70, kFish, 1), core::precondition_error);
  EXPECT_THROW(check::make_block_allocated(s, 0, kAgent, 1), core::precondition_error);
  EXPECT_THROW(check::make_block_allocated(s, 0, 9, 1), core::precondition_error);
  // Shark capacity 32: slot 32 cannot hold an object.
  EXPECT_THROW(check::make_block_allocated(s, 0, kShark, std::uint64_t{1} << 32),
               core::precondition_error);
  EXPECT_THROW(check::make_block_free(s, 70), core::precondition_error);
}

TEST(BlockQueries, UsedSlotsAndAllocatedTypes) {
  EXPECT_EQ(check::used_slots(0xFFFFFFFF00000003ull, 32), 2u);
  EXPECT_EQ(check::used_slots(~std::uint64_t{0}, 64), 64u);
  EXPECT_EQ(check::padding_mask(64), 0u);
  EXPECT_EQ(check::padding_mask(42), ~std::uint64_t{0} << 42);
  auto s = valid_snapshot(false);
  EXPECT_EQ(check::allocated_type(s, 4), kCell);
  EXPECT_FALSE(check::allocated_type(s, 6).has_value());
  check::set_bit(s.allocated[kFish], 4);
  EXPECT_EQ(check::allocated_types(s, 4), (Counts{kFish, kCell}));
  EXPECT_FALSE(check::allocated_type(s, 4).has_value());
  EXPECT_EQ(check::type_name(s.config, kShark), "Shark");
  EXPECT_EQ(check::type_name(s.config, core::kNoType), "none");
  EXPECT_EQ(check::type_name(s.config, 77), "#77");
}

// ---------------------------------------------------------------- SlotRecords (sparse slots)

namespace {
check::ObjectRecord record_of(std::uint64_t id) {
  check::ObjectRecord r;
  r.id     = id;
  r.cookie = core::cookie_of(id);
  return r;
}
}  // namespace

TEST(SlotRecords, ReadsLikeAVectorOfOptionalsAndStoresOnlyWrittenSlots) {
  check::SlotRecords slots(64, std::nullopt);
  EXPECT_EQ(slots.size(), 64u);
  EXPECT_TRUE(slots.entries().empty());
  for (std::size_t s = 0; s < 64; ++s) EXPECT_FALSE(std::as_const(slots)[s].has_value()) << s;
  EXPECT_TRUE(slots.entries().empty()) << "reading a const SlotRecords writes nothing";
  slots.set(40, record_of(7));
  slots.set(3, record_of(5));  // out of order: inserted before 40
  slots[9] = record_of(6);     // through the vector-like operator[]
  ASSERT_EQ(slots.entries().size(), 3u);
  EXPECT_EQ(slots.entries()[0].slot, 3u);
  EXPECT_EQ(slots.entries()[1].slot, 9u);
  EXPECT_EQ(slots.entries()[2].slot, 40u);
  EXPECT_EQ(slots.record_mask(), (1ull << 3) | (1ull << 9) | (1ull << 40));
  EXPECT_EQ(std::as_const(slots)[40]->id, 7u);
  EXPECT_FALSE(std::as_const(slots)[41].has_value());
  std::size_t seen = 0, with_record = 0;
  for (auto const& r : std::as_const(slots)) {
    ++seen;
    with_record += r ? 1 : 0;
  }
  EXPECT_EQ(seen, 64u);
  EXPECT_EQ(with_record, 3u);
  slots[9].reset();  // an entry holding nullopt is an empty slot
  EXPECT_EQ(slots.record_mask(), (1ull << 3) | (1ull << 40));
  EXPECT_THROW((void)std::as_const(slots).at(64), std::out_of_range);
  slots.resize(10);  // drops slot 40
  EXPECT_EQ(slots.size(), 10u);
  EXPECT_EQ(slots.record_mask(), 1ull << 3);
  slots.assign(64, std::nullopt);
  EXPECT_TRUE(slots.entries().empty());
}

TEST(SlotRecords, EqualityComparesEverySlotAndTheSize) {
  check::SlotRecords a(64, std::nullopt), b(64, std::nullopt);
  EXPECT_TRUE(a == b);
  a.set(5, record_of(1));
  EXPECT_FALSE(a == b);
  b.set(5, record_of(1));
  EXPECT_TRUE(a == b);
  b[6];  // an empty entry: still equal
  EXPECT_TRUE(a == b);
  b[5]->cookie ^= 1;
  EXPECT_FALSE(a == b);
  b[5]->cookie ^= 1;
  b[5]->refs.push_back(core::SlotRef{1, 2});
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(check::SlotRecords(64, std::nullopt) == check::SlotRecords());
}
