// Snapshot dump (contains the key facts) and diff (finds planted differences and names them).
#include <gtest/gtest.h>

#include <string>

#include "heaplab/check/diff.hpp"
#include "heaplab/check/dump.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "test_heap.hpp"

namespace check = heaplab::check;
using namespace heaplab::check::testing;

namespace {

::testing::AssertionResult contains(std::string const& text, std::string const& needle) {
  if (text.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << needle << "' not found in:\n" << text;
}

}  // namespace

// ---------------------------------------------------------------- dump

TEST(Dump, ShowsConfigBlocksCountsAndObjects) {
  auto const s           = valid_snapshot(true);
  std::string const text = check::dump(s);
  EXPECT_TRUE(contains(text, "HeapSnapshot from 'test': M=70 blocks, n=1, k1=0, payloads yes"));
  EXPECT_TRUE(contains(text, "Agent  abstract"));
  EXPECT_TRUE(contains(text, "Shark  32 B  capacity 32  base Agent"));
  EXPECT_TRUE(contains(text, "Cell   24 B  capacity 42"));
  EXPECT_TRUE(contains(text, "agents[1]->Agent"));
  EXPECT_TRUE(contains(text, "blocks (6 not free of 70"));
  // Block 0: Fish, 3 of 64, slots 0..2, a candidate.
  EXPECT_TRUE(contains(text,
                       "block     0  Fish    3/64  0x0000000000000007  ###" + std::string(61, '.') +
                           "  allocated active defrag"));
  // Block 3: a full Shark block: 32 objects then 32 padding bits.
  EXPECT_TRUE(contains(text,
                       "block     3  Shark  32/32  0xffffffffffffffff  " + std::string(32, '#') +
                           std::string(32, '-') + "  allocated\n"));
  EXPECT_TRUE(contains(text, "Fish   3 blocks, 107 objects, 2 active, 1 defrag"));
  EXPECT_TRUE(contains(text, "Shark  2 blocks, 34 objects, 1 active, 1 defrag"));
  EXPECT_TRUE(contains(text, "free blocks: 64 of 70"));
  EXPECT_TRUE(contains(text, "  block 0:\n    slot  0  id 0  cookie ok  refs [4:0]"));
  EXPECT_TRUE(contains(text, "  block 4:\n    slot  0  id 139  cookie ok  refs [65:1, null]"));
  // Free blocks are not listed one by one.
  EXPECT_FALSE(contains(text, "block    10  "));
}

TEST(Dump, ShowsBrokenStatesVisibly) {
  auto s = valid_snapshot(true);
  s.blocks[0].objects[1]->cookie ^= 1;
  s.blocks[3].alloc_bitmap &= ~(std::uint64_t{1} << 40);
  check::set_bit(s.active[kShark], 0);
  check::clear_bit(s.free_blocks, 10);
  std::string const text = check::dump(s);
  EXPECT_TRUE(contains(text, "slot  1  id 1  cookie BAD(0x"));
  EXPECT_TRUE(contains(text, std::string(32, '#') + std::string(8, '-') + "!"));
  EXPECT_TRUE(contains(text, "allocated active defrag active[Shark]"));
  EXPECT_TRUE(contains(text, "block    10  none"));
  EXPECT_TRUE(contains(text, " unallocated"));
}

TEST(Dump, SurvivesAnInvalidConfig) {
  auto s                       = valid_snapshot(false);
  s.config.types[1].size_bytes = 0;
  std::string const text       = check::dump(s);
  EXPECT_TRUE(contains(text, "config INVALID"));
}

// ---------------------------------------------------------------- diff

TEST(Diff, EqualSnapshotsHaveNoDifference) {
  auto const a = valid_snapshot(true);
  auto const d = check::diff(a, a);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.to_string(), "no differences");
}

TEST(Diff, NamesAPlantedAllocationBit) {
  auto const expected = valid_snapshot(false);
  auto actual         = expected;
  actual.blocks[2].alloc_bitmap |= std::uint64_t{1} << 45;  // 40 objects: 0x000000ffffffffff
  auto const d = check::diff(expected, actual);
  ASSERT_EQ(d.total, 1u) << d.to_string();
  auto const& x = d.differences[0];
  EXPECT_EQ(x.where, "block 2");
  EXPECT_EQ(x.field, "alloc_bitmap bits {45}");
  EXPECT_EQ(x.expected, "0x000000ffffffffff");
  EXPECT_EQ(x.actual, "0x000020ffffffffff");
  EXPECT_EQ(x.block, 2);
  EXPECT_EQ(x.to_string(),
            "block 2: alloc_bitmap bits {45}: expected 0x000000ffffffffff, actual "
            "0x000020ffffffffff");
}

TEST(Diff, NamesAStateBitmapContainer) {
  auto const expected = valid_snapshot(false);
  auto actual         = expected;
  // active[Shark] = {65}; block 66 is in level-0 container 1 whose level-1 bit is already set.
  check::set_bit(actual.active[kShark], 66);
  auto const d = check::diff(expected, actual);
  ASSERT_EQ(d.total, 1u) << d.to_string();
  EXPECT_EQ(d.differences[0].where, "active[Shark] level 0 container 1");
  EXPECT_EQ(d.differences[0].field, "bits {66}");
  EXPECT_EQ(d.differences[0].expected, "0x0000000000000002");
  EXPECT_EQ(d.differences[0].actual, "0x0000000000000006");
}

TEST(Diff, UpperLevelsAreCompared) {
  auto const expected = valid_snapshot(false);
  auto actual         = expected;
  check::set_bit(actual.allocated[kCell], 66);  // level 0 container 1 and level 1 bit 1 change
  auto const d = check::diff(expected, actual);
  ASSERT_EQ(d.total, 2u) << d.to_string();
  EXPECT_EQ(d.differences[0].where, "allocated[Cell] level 0 container 1");
  EXPECT_EQ(d.differences[1].where, "allocated[Cell] level 1 container 0");
  EXPECT_EQ(d.differences[1].field, "bits {1}");
}

TEST(Diff, NamesObjectFields) {
  auto const expected                  = valid_snapshot(true);
  auto actual                          = expected;
  actual.blocks[1].objects[7]->id      = 999;                           // was 10
  actual.blocks[3].objects[0]->refs[1] = heaplab::core::SlotRef{0, 1};  // was 0:0
  actual.blocks[2].objects[3].reset();                                  // was id 70
  auto const d = check::diff(expected, actual);
  ASSERT_EQ(d.total, 3u) << d.to_string();  // 2:3's allocation bit is unchanged
  EXPECT_EQ(d.differences[0].where, "block 1 slot 7");
  EXPECT_EQ(d.differences[0].field, "id");
  EXPECT_EQ(d.differences[0].expected, "10");
  EXPECT_EQ(d.differences[0].actual, "999");
  EXPECT_EQ(d.differences[0].slot, 7);
  EXPECT_EQ(d.differences[1].where, "block 2 slot 3");
  EXPECT_EQ(d.differences[1].field, "object");
  EXPECT_EQ(d.differences[1].expected, "object id 70");
  EXPECT_EQ(d.differences[1].actual, "no object");
  EXPECT_EQ(d.differences[2].where, "block 3 slot 0");
  EXPECT_EQ(d.differences[2].field, "refs[1]");
  EXPECT_EQ(d.differences[2].expected, "0:0");
  EXPECT_EQ(d.differences[2].actual, "0:1");
}

TEST(Diff, HeaderTypeIsComparedOnlyForAllocatedBlocks) {
  auto const expected   = valid_snapshot(false);
  auto actual           = expected;
  actual.blocks[6].type = kShark;  // free block: stale type, not a difference
  EXPECT_TRUE(check::diff(expected, actual).empty());
  actual.blocks[2].type = kShark;  // allocated Fish block
  auto const d          = check::diff(expected, actual);
  ASSERT_EQ(d.total, 1u) << d.to_string();
  EXPECT_EQ(d.differences[0].where, "block 2");
  EXPECT_EQ(d.differences[0].field, "type");
  EXPECT_EQ(d.differences[0].expected, "Fish");
  EXPECT_EQ(d.differences[0].actual, "Shark");
}

TEST(Diff, IterationBitmapsOnlyWhenAsked) {
  auto const expected          = valid_snapshot(false);
  auto actual                  = expected;
  actual.blocks[0].iter_bitmap = 0;  // was 0b111
  EXPECT_TRUE(check::diff(expected, actual).empty());
  check::DiffOptions options;
  options.compare_iteration_bitmaps = true;
  auto const d                      = check::diff(expected, actual, options);
  ASSERT_EQ(d.total, 1u) << d.to_string();
  EXPECT_EQ(d.differences[0].field, "iter_bitmap bits {0, 1, 2}");
}

TEST(Diff, PayloadsOnlyWhenBothHaveThemAndWanted) {
  auto const with    = valid_snapshot(true);
  auto const without = valid_snapshot(false);
  EXPECT_TRUE(check::diff(with, without).empty());
  EXPECT_TRUE(check::diff(without, with).empty());
  auto changed                     = with;
  changed.blocks[0].objects[0]->id = 77;
  check::DiffOptions options;
  options.compare_payloads = false;
  EXPECT_TRUE(check::diff(with, changed, options).empty());
  EXPECT_EQ(check::diff(with, changed).total, 1u);
}

TEST(Diff, MaxCountIsRespectedAndTotalCounted) {
  auto const expected = valid_snapshot(false);
  auto actual         = expected;
  for (std::uint32_t b = 10; b < 15; ++b) actual.blocks[b].alloc_bitmap = 0;
  check::DiffOptions options;
  options.max_differences = 3;
  auto const d            = check::diff(expected, actual, options);
  EXPECT_EQ(d.total, 5u);
  ASSERT_EQ(d.differences.size(), 3u);
  EXPECT_EQ(d.differences[0].where, "block 10");
  EXPECT_EQ(d.differences[2].where, "block 12");
  EXPECT_TRUE(contains(d.to_string(), "5 differences (first 3 shown):\n  block 10: "));
}

TEST(Diff, ConfigMismatchIsADifference) {
  auto const expected         = valid_snapshot(false);
  auto actual                 = expected;
  actual.config.defrag_factor = 2;
  auto d                      = check::diff(expected, actual);
  ASSERT_EQ(d.total, 1u) << d.to_string();
  EXPECT_EQ(d.differences[0].where, "config");
  EXPECT_EQ(d.differences[0].field, "defrag_factor");
  EXPECT_EQ(d.differences[0].expected, "1");
  EXPECT_EQ(d.differences[0].actual, "2");

  actual                                           = expected;
  actual.config.types[3].pointer_fields[0].pointee = kCell;
  d                                                = check::diff(expected, actual);
  ASSERT_EQ(d.total, 1u) << d.to_string();
  EXPECT_EQ(d.differences[0].where, "config type 3");
  EXPECT_EQ(d.differences[0].field, "pointer_fields[0].pointee");

  // Different M: blocks do not line up, so only the config is reported.
  auto other = check::make_empty_snapshot(
      [] {
        auto c       = test_config();
        c.num_blocks = 71;
        return c;
      }(),
      false);
  d = check::diff(expected, other);
  ASSERT_EQ(d.total, 1u) << d.to_string();
  EXPECT_EQ(d.differences[0].field, "num_blocks");
}
