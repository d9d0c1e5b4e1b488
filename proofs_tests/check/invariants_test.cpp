// One failing-snapshot test per invariant: start from a valid snapshot (the whole catalog holds),
// break exactly one thing, expect exactly that invariant's violation at the right location, and
// no other invariant firing unless the corruption necessarily breaks two (said where it does).
#include <gtest/gtest.h>

#include <tuple>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/cookie.hpp"
#include "test_heap.hpp"

namespace check = heaplab::check;
namespace core  = heaplab::core;
using namespace heaplab::check::testing;

namespace {

std::set<std::string> names_of(std::vector<check::Violation> const& vs) {
  std::set<std::string> out;
  for (auto const& v : vs) out.insert(v.invariant);
  return out;
}

/// Every violation of check_all is of `name`, there is at least one, and the first is at
/// (block, bit, type); -1 means "not applicable" and is compared too. Returns the first violation
/// (a default one, after recording the failure, if there is none) for further checks.
check::Violation expect_only(check::HeapSnapshot const& s,
                             std::string const& name,
                             std::int64_t block,
                             std::int64_t bit,
                             std::int64_t type) {
  auto const vs = check::check_all(s);
  EXPECT_FALSE(vs.empty()) << "expected a violation of " << name;
  if (vs.empty()) return {};
  EXPECT_EQ(names_of(vs), std::set<std::string>{name}) << describe(vs);
  EXPECT_EQ(vs[0].block, block) << describe(vs);
  EXPECT_EQ(vs[0].bit, bit) << describe(vs);
  EXPECT_EQ(vs[0].type, type) << describe(vs);
  // check_one agrees with check_all.
  EXPECT_EQ(check::check_one(name, s).size(), vs.size());
  return vs[0];
}

class Invariants : public ::testing::Test {
 protected:
  check::HeapSnapshot s = valid_snapshot(true);
  void SetUp() override {
    ASSERT_TRUE(check::check_all(s).empty()) << describe(check::check_all(s));
  }
};

}  // namespace

// ---------------------------------------------------------------- valid snapshots

TEST(InvariantsValid, EmptyAndBuiltSnapshotsPassTheWholeCatalog) {
  for (bool payloads : {false, true}) {
    auto const empty = check::make_empty_snapshot(test_config(), payloads);
    EXPECT_TRUE(check::check_all(empty).empty()) << describe(check::check_all(empty));
    auto const built = valid_snapshot(payloads);
    EXPECT_TRUE(check::check_all(built).empty()) << describe(check::check_all(built));
  }
}

// ---------------------------------------------------------------- snapshot-well-formed

TEST_F(Invariants, WellFormedMissingBlockStopsEverythingElse) {
  s.blocks.pop_back();
  expect_only(s, "snapshot-well-formed", -1, -1, -1);
  // Any named check reports the shape problem instead of indexing a broken snapshot.
  EXPECT_EQ(names_of(check::check_one("pointers-valid", s)),
            std::set<std::string>{"snapshot-well-formed"});
}

TEST_F(Invariants, WellFormedLevel0OfWrongSize) {
  s.active[kFish].levels[0].pop_back();
  expect_only(s, "snapshot-well-formed", -1, -1, kFish);
}

TEST_F(Invariants, WellFormedPayloadSlotsMissing) {
  s.blocks[9].objects.clear();
  expect_only(s, "snapshot-well-formed", 9, -1, -1);
}

TEST_F(Invariants, WellFormedInvalidConfig) {
  s.config.defrag_factor = 0;
  expect_only(s, "snapshot-well-formed", -1, -1, -1);
}

// ---------------------------------------------------------------- hierarchy-consistent

TEST_F(Invariants, HierarchyUpperBitWithoutContainer) {
  // allocated[Fish] = blocks {0, 1, 2}: container C^0_1 (blocks 64..69) is empty, so b^1_1 = 0.
  s.allocated[kFish].levels[1][0] |= 0b10;
  auto const v = expect_only(s, "hierarchy-consistent", -1, 1, kFish);
  EXPECT_EQ(v.level, 1);
}

TEST_F(Invariants, HierarchyUpperBitMissingForNonEmptyContainer) {
  // free has blocks 5..64 and 66..69, so C^0_0 is non-empty and b^1_0 must be 1.
  s.free_blocks.levels[1][0] &= ~std::uint64_t{1};
  auto const v = expect_only(s, "hierarchy-consistent", -1, 0, -1);
  EXPECT_EQ(v.level, 1);
}

TEST_F(Invariants, HierarchyBitPastNumBitsAtLevel0) {
  // M = 70: level 0 bits 70..127 are past num_bits. Container 1 is non-empty already (blocks 64,
  // 66..69 are free), so only the tail rule is broken. No other invariant reads bit 100.
  s.free_blocks.levels[0][1] |= std::uint64_t{1} << 36;  // bit 100
  auto const v = expect_only(s, "hierarchy-consistent", -1, 100, -1);
  EXPECT_EQ(v.level, 0);
}

TEST_F(Invariants, HierarchyBitPastMeaningfulCountAtLevel1) {
  // Level 1 of a 70-bit bitmap has 2 meaningful bits.
  s.active[kShark].levels[1][0] |= std::uint64_t{1} << 5;
  expect_only(s, "hierarchy-consistent", -1, 5, kShark);
}

TEST_F(Invariants, HierarchyMissingLevel) {
  s.defrag[kCell].levels.pop_back();
  expect_only(s, "hierarchy-consistent", -1, -1, kCell);
}

// ---------------------------------------------------------------- state implications

TEST_F(Invariants, ActiveImpliesAllocated) {
  check::set_bit(s.active[kFish], 10);  // block 10 is free
  expect_only(s, "active-implies-allocated", 10, 10, kFish);
}

TEST_F(Invariants, DefragImpliesActive) {
  check::set_bit(s.defrag[kCell], 12);  // block 12 is free: not active, not allocated
  expect_only(s, "defrag-implies-active", 12, 12, kCell);
}

TEST_F(Invariants, DefragOnFullBlockBreaksTwoInvariants) {
  // Block 1 is a full Fish block: a defrag bit there is both "defrag without active" and "defrag
  // although fill > n/(n+1)". One corruption, two invariants, necessarily.
  check::set_bit(s.defrag[kFish], 1);
  auto const vs = check::check_all(s);
  EXPECT_EQ(names_of(vs), (std::set<std::string>{"defrag-implies-active", "defrag-iff-low-fill"}))
      << describe(vs);
  for (auto const& v : vs) EXPECT_EQ(v.block, 1);
}

TEST_F(Invariants, FreeIffUnallocatedNeitherFreeNorAllocated) {
  check::clear_bit(s.free_blocks, 10);
  expect_only(s, "free-iff-unallocated", 10, 10, -1);
}

TEST_F(Invariants, FreeIffUnallocatedFreeAndAllocated) {
  // Block 1 is a full Fish block (capacity 64), so its allocation bitmap is all ones and
  // free-block-invalidated holds even though the block now claims to be free.
  check::set_bit(s.free_blocks, 1);
  expect_only(s, "free-iff-unallocated", 1, 1, kFish);
}

TEST_F(Invariants, FreeIffUnallocatedTwoTypes) {
  // Block 0 (Fish, 3 objects) also in allocated[Cell]. Seen as a Cell block it necessarily
  // breaks four more invariants: header type Fish != Cell; Cell capacity 42 but bits 42..63 are
  // clear; 3 < 42 but not active[Cell]; 3*2 <= 42 but not defrag[Cell].
  check::set_bit(s.allocated[kCell], 0);
  auto const vs = check::check_all(s);
  EXPECT_EQ(names_of(vs),
            (std::set<std::string>{"free-iff-unallocated",
                                   "type-id-matches",
                                   "capacity-padding-set",
                                   "active-iff-not-full",
                                   "defrag-iff-low-fill"}))
      << describe(vs);
  for (auto const& v : vs) EXPECT_EQ(v.block, 0) << v.to_string();
  auto const own = check::check_one("free-iff-unallocated", s);
  ASSERT_EQ(own.size(), 1u);
  EXPECT_NE(own[0].message.find("2 types"), std::string::npos) << own[0].message;
}

TEST_F(Invariants, ActiveIffNotFullMissingActive) {
  check::clear_bit(s.active[kFish], 2);  // 40/64: not full, and not a candidate (80 > 64)
  expect_only(s, "active-iff-not-full", 2, 2, kFish);
}

TEST_F(Invariants, ActiveIffNotFullActiveButFull) {
  check::set_bit(s.active[kShark], 3);  // 32/32
  expect_only(s, "active-iff-not-full", 3, 3, kShark);
}

TEST_F(Invariants, DefragIffLowFillMissingCandidate) {
  check::clear_bit(s.defrag[kFish], 0);  // 3/64
  expect_only(s, "defrag-iff-low-fill", 0, 0, kFish);
}

TEST_F(Invariants, DefragIffLowFillCandidateTooFull) {
  check::set_bit(s.defrag[kFish], 2);  // 40/64 > 1/2, still active
  expect_only(s, "defrag-iff-low-fill", 2, 2, kFish);
}

TEST_F(Invariants, DefragIffLowFillBoundaryIsInclusive) {
  // Cell capacity 42, n = 1: 21/42 is exactly 1/2, a candidate; 22/42 is not.
  check::make_block_allocated(s, 7, kCell, slot_range(0, 21), 1000);
  check::make_block_allocated(s, 8, kCell, slot_range(0, 22), 2000);
  ASSERT_TRUE(check::check_all(s).empty()) << describe(check::check_all(s));
  EXPECT_TRUE(check::test_bit(s.defrag[kCell], 7));
  EXPECT_FALSE(check::test_bit(s.defrag[kCell], 8));
  check::clear_bit(s.defrag[kCell], 7);
  expect_only(s, "defrag-iff-low-fill", 7, 7, kCell);
}

// ---------------------------------------------------------------- blocks

TEST_F(Invariants, AllocatedNotEmpty) {
  check::make_block_allocated(s, 8, kFish, 0);  // allocated, active, defrag, no object
  expect_only(s, "allocated-not-empty", 8, -1, kFish);
}

TEST_F(Invariants, CapacityPaddingSet) {
  s.blocks[3].alloc_bitmap &= ~(std::uint64_t{1} << 40);  // Shark capacity 32: bit 40 is padding
  expect_only(s, "capacity-padding-set", 3, 40, kShark);
}

TEST_F(Invariants, TypeIdMatchesWrongHeader) {
  s.blocks[2].type = kShark;
  expect_only(s, "type-id-matches", 2, -1, kFish);
}

TEST_F(Invariants, TypeIdMatchesUnknownHeaderOnFreeBlock) {
  s.blocks[10].type = 200;
  expect_only(s, "type-id-matches", 10, -1, 200);
}

TEST_F(Invariants, TypeIdIgnoresStaleTypeOfFreeBlock) {
  s.blocks[11].type = kShark;  // a free block keeps whatever type it had
  EXPECT_TRUE(check::check_all(s).empty()) << describe(check::check_all(s));
}

TEST_F(Invariants, FreeBlockInvalidated) {
  s.blocks[10].alloc_bitmap &= ~(std::uint64_t{1} << 5);
  expect_only(s, "free-block-invalidated", 10, 5, -1);
}

TEST_F(Invariants, NoAbstractBlocksPresentBitmap) {
  s.allocated[kAgent] = check::make_bitmap(70);
  expect_only(s, "no-abstract-blocks", -1, -1, kAgent);
}

TEST_F(Invariants, NoAbstractBlocksAbstractHeader) {
  s.blocks[6].type = kAgent;  // free block with a header type that can never be allocated
  expect_only(s, "no-abstract-blocks", 6, -1, kAgent);
}

// ---------------------------------------------------------------- payloads

TEST_F(Invariants, PayloadMissingRecord) {
  s.blocks[2].objects[5].reset();
  expect_only(s, "payload-matches-bitmap", 2, 5, kFish);
}

TEST_F(Invariants, PayloadRecordInFreeSlot) {
  s.blocks[2].objects[50] = check::make_object_record(s.config, kFish, 1000);
  auto const v            = expect_only(s, "payload-matches-bitmap", 2, 50, kFish);
  EXPECT_EQ(v.object_id, 1000);
}

TEST_F(Invariants, PayloadRecordInPadding) {
  s.blocks[3].objects[40] = check::make_object_record(s.config, kShark, 1000);
  expect_only(s, "payload-matches-bitmap", 3, 40, kShark);
}

TEST_F(Invariants, PayloadRecordInFreeBlock) {
  s.blocks[10].objects[0] = check::make_object_record(s.config, kFish, 1000);
  expect_only(s, "payload-matches-bitmap", 10, 0, -1);
}

TEST_F(Invariants, ObjectIdsUnique) {
  // Object at 2:0 (id 67) takes id 0, which 0:0 has; its cookie is made to match.
  s.blocks[2].objects[0]->id     = 0;
  s.blocks[2].objects[0]->cookie = core::cookie_of(0);
  auto const v                   = expect_only(s, "object-ids-unique", 2, 0, -1);
  EXPECT_EQ(v.object_id, 0);
}

TEST_F(Invariants, EveryRepeatOfAnIdIsReportedInScanOrderAgainstItsFirstPlace) {
  // Id 0 (first at 0:0) also at 1:7 and 2:0; id 3 + 5 = 8 (first at 1:5) also at 0:1.
  for (auto [b, slot, id] : {std::tuple{2u, 0u, 0ull}, {1u, 7u, 0ull}, {0u, 1u, 8ull}}) {
    s.blocks[b].objects[slot]->id     = id;
    s.blocks[b].objects[slot]->cookie = core::cookie_of(id);
  }
  std::vector<check::Violation> got;
  for (auto const& v : check::check_all(s))
    if (v.invariant == "object-ids-unique") got.push_back(v);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].message, "object id 8 at 1:5 is also at 0:1");
  EXPECT_EQ(got[1].message, "object id 0 at 1:7 is also at 0:0");
  EXPECT_EQ(got[2].message, "object id 0 at 2:0 is also at 0:0");
  EXPECT_EQ(got[2].block, 2);
  EXPECT_EQ(got[2].object_id, 0);
}

TEST_F(Invariants, CookieMatchesId) {
  s.blocks[1].objects[7]->cookie ^= 1;  // object 3 + 7 = 10
  auto const v = expect_only(s, "cookie-matches-id", 1, 7, -1);
  EXPECT_EQ(v.object_id, 10);
}

TEST_F(Invariants, PointersDangling) {
  s.blocks[0].objects[0]->refs[0] = core::SlotRef{4, 20};  // Cell slot 20 is free
  auto const v                    = expect_only(s, "pointers-valid", 0, 0, kFish);
  EXPECT_EQ(v.object_id, 0);
}

TEST_F(Invariants, PointersIntoPadding) {
  s.blocks[65].objects[0]->refs[1] = core::SlotRef{3, 40};  // Shark capacity 32
  expect_only(s, "pointers-valid", 65, 0, kShark);
}

TEST_F(Invariants, PointersIntoFreeBlock) {
  s.blocks[65].objects[0]->refs[1] = core::SlotRef{10, 0};
  expect_only(s, "pointers-valid", 65, 0, kShark);
}

TEST_F(Invariants, PointersOutsideHeap) {
  s.blocks[4].objects[0]->refs[1] = core::SlotRef{500, 0};
  expect_only(s, "pointers-valid", 4, 0, kCell);
}

TEST_F(Invariants, PointersWrongTargetType) {
  // Shark.target points to Agent; a Cell is not an Agent.
  s.blocks[65].objects[0]->refs[1] = core::SlotRef{4, 0};
  auto const v                     = expect_only(s, "pointers-valid", 65, 0, kShark);
  EXPECT_NE(v.message.find("Cell"), std::string::npos);
}

TEST_F(Invariants, PointersSubtypeTargetIsFine) {
  // Shark.target (Agent) may point to a Fish or a Shark; Cell.agents (Agent) likewise.
  s.blocks[65].objects[0]->refs[1] = core::SlotRef{1, 63};
  s.blocks[4].objects[0]->refs[1]  = core::SlotRef{2, 39};
  EXPECT_TRUE(check::check_all(s).empty()) << describe(check::check_all(s));
}

TEST_F(Invariants, PointersWrongRefCount) {
  s.blocks[0].objects[1]->refs.push_back(std::nullopt);  // Fish has 1 pointer slot (home)
  expect_only(s, "pointers-valid", 0, 1, kFish);
}

// ---------------------------------------------------------------- catalog API

TEST(Catalog, HasTheRequiredInvariantsWithUniqueKebabNamesAndCitations) {
  std::set<std::string> names;
  for (auto const& inv : check::catalog()) {
    std::string const name(inv.name);
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
    EXPECT_TRUE(std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || c == '-';
    })) << name;
    EXPECT_FALSE(inv.citation.empty()) << name;
    EXPECT_FALSE(inv.statement.empty()) << name;
    EXPECT_NE(inv.check, nullptr) << name;
  }
  for (char const* required : {"hierarchy-consistent",
                               "active-implies-allocated",
                               "defrag-implies-active",
                               "free-iff-unallocated",
                               "active-iff-not-full",
                               "defrag-iff-low-fill",
                               "allocated-not-empty",
                               "capacity-padding-set",
                               "type-id-matches",
                               "free-block-invalidated",
                               "no-abstract-blocks",
                               "payload-matches-bitmap",
                               "object-ids-unique",
                               "cookie-matches-id",
                               "pointers-valid"})
    EXPECT_EQ(names.count(required), 1u) << required;
}

TEST(Catalog, PayloadInvariantsAreMarkedAndSkippedWithoutPayloads) {
  std::set<std::string> payload;
  for (auto const& inv : check::catalog())
    if (inv.needs_payloads) payload.insert(std::string(inv.name));
  EXPECT_EQ(
      payload,
      (std::set<std::string>{
          "payload-matches-bitmap", "object-ids-unique", "cookie-matches-id", "pointers-valid"}));
  auto s = valid_snapshot(false);
  EXPECT_TRUE(check::check_one("pointers-valid", s).empty());
}

TEST(Catalog, CheckOneRejectsUnknownNames) {
  auto const s = valid_snapshot(false);
  try {
    check::check_one("no-such-invariant", s);
    FAIL() << "expected precondition_error";
  } catch (core::precondition_error const& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-invariant"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("hierarchy-consistent"), std::string::npos);
  }
}

TEST(Catalog, ViolationToStringNamesInvariantAndLocation) {
  check::Violation v;
  v.invariant = "cookie-matches-id";
  v.message   = "bad cookie";
  v.block     = 4;
  v.bit       = 7;
  v.object_id = 12;
  EXPECT_EQ(v.to_string(), "[cookie-matches-id] bad cookie (block 4, bit 7, object 12)");
}

TEST(Catalog, DocsListEveryInvariant) {
  // The build records its source tree; a build folder copied to a GPU box without the sources
  // skips (with the reason) instead of failing.
  std::string const root = HEAPLAB_SOURCE_DIR;
  if (!std::ifstream(root + "/CMakeLists.txt")) GTEST_SKIP() << "source tree not at " << root;
  std::ifstream in(root + "/docs/invariants.md");
  ASSERT_TRUE(in) << "docs/invariants.md is missing";
  std::stringstream text;
  text << in.rdbuf();
  for (auto const& inv : check::catalog())
    EXPECT_NE(text.str().find("`" + std::string(inv.name) + "`"), std::string::npos)
        << "docs/invariants.md does not list `" << inv.name << "`";
}
