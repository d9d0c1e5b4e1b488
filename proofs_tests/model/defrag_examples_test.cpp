// The worked examples of CompactGpu (compactgpu-ismm2019.txt) as unit tests with their exact
// expected outcome, plus small multi-pass examples computed by hand.
#include <gtest/gtest.h>

#include "heaplab/check/defrag_obligations.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/model/heap_model.hpp"
#include "model_test_support.hpp"

namespace heaplab::model {
namespace {

using testing::concat;
using testing::place_at;
using testing::range;

// ------------------------------------------------------------------------------- Figure 5
//
// Fig. 5 (n = 2): "objects from source block 5 are moved into blocks 14 and 19". The figure's
// candidate array is not in the text, so we reconstruct the smallest one consistent with the text
// and the talk's slides:
//   - Sec. 3.2: the sources are R[0..B-1] and the targets of R[s] are R[s + B] and R[s + 2B].
//     Block 5 at R[s] with targets 14 = R[s + B] and 19 = R[s + 2B].
//   - Slides ("Rewriting Pointers", the same example): "Condition 1: bid < 7 (i.e., source
//     range)", so R[B] = 7: block 5 is the last source, s = B - 1.
//   - The smallest such R has B = 2, s = 1: R = [x, 5, 7, 14, y, 19] with x < 5 and 14 < y < 19;
//     r = 6 and B = floor(6 / 3) = 2. We take x = 2 and y = 16:
//         R = [2, 5, 7, 14, 16, 19],  sources 2 -> {7, 16} and 5 -> {14, 19}.
// Blocks hold 64 objects (capacity 64); a candidate for n = 2 has fill <= 42. Block 14 has 24 free
// slots and block 5 30 objects, so the first 24 objects of block 5 go to block 14 and the other 6
// to block 19: both targets are used, as in the figure.
class Figure5 : public ::testing::Test {
 protected:
  void SetUp() override {
    place_at(m, kT, 0, range(0, 64), 1000);                             // full: not a candidate
    place_at(m, kT, 2, {3, 9, 10, 40}, 2000);                           // 4 objects
    place_at(m, kT, 5, source5_slots, 5000);                            // 30 objects
    place_at(m, kT, 7, range(0, 35), 7000);                             // 35 objects, 29 free
    place_at(m, kT, 9, range(0, 50), 9000);                             // 50 > 42: not a candidate
    place_at(m, kT, 14, concat({range(0, 20), range(44, 64)}), 14000);  // 40; free 20..43
    place_at(m, kT, 16, range(0, 30), 16000);                           // 30 objects
    place_at(m, kT, 19, concat({range(0, 10), range(20, 30)}), 19000);  // 20; free 10..19, 30..
    // Cells point at objects of block 5 and block 2 (CompactGpu sec. 3.4 rewriting).
    place_at(m, kCell, 23, {0, 1, 2}, 1);
    m.set_ref(1, 0, 5000);  // first object of block 5
    m.set_ref(2, 0, 5029);  // last object of block 5
    m.set_ref(3, 0, 2003);  // last object of block 2
    root = m.add_root(5024);
  }
  static constexpr TypeId kT    = 0;
  static constexpr TypeId kCell = 1;
  static core::HeapConfig config() {
    core::HeapConfig c;
    c.types.push_back({"T", 8, std::nullopt, false, {}});
    c.types.push_back({"Cell", 8, std::nullopt, false, {{"object", kT, 1}}});
    c.num_blocks    = 24;
    c.defrag_factor = 2;
    c.k1            = 0;
    return c;
  }
  // 30 slots of block 5, not contiguous, so that "slot order" matters.
  std::vector<std::uint32_t> const source5_slots =
      concat({{1, 2, 4, 7, 8, 11, 12, 13, 15, 18, 21, 22, 25, 28, 29},
              {30, 33, 34, 36, 39, 41, 45, 46, 50, 51, 53, 56, 59, 60, 63}});
  HeapModel m{config()};
  std::size_t root = 0;
};

TEST_F(Figure5, CandidateArraySourcesAndTargets) {
  DefragPassPlan const plan = m.plan_defrag_pass(kT, 2);
  EXPECT_EQ(plan.R, (std::vector<std::uint32_t>{2, 5, 7, 14, 16, 19}));
  EXPECT_EQ(plan.B, 2u);
  ASSERT_EQ(plan.sources.size(), 2u);
  EXPECT_EQ(plan.sources[0].source, 2u);
  EXPECT_EQ(plan.sources[0].targets, (std::vector<std::uint32_t>{7, 16}));
  EXPECT_EQ(plan.sources[1].source, 5u);
  EXPECT_EQ(plan.sources[1].targets, (std::vector<std::uint32_t>{14, 19}));
}

// heaplab's order by fill (CandidateOrder::by_fill, beyond the paper): R by fill, emptiest first
// (fills 2: 4, 19: 20, 5: 30, 16: 30, 7: 35, 14: 40; 5 before 16 by id), B = 2, so the sources
// are the two emptiest blocks, 2 and 19, and each gets the targets at stride B.
TEST_F(Figure5, ByFillTheEmptiestCandidatesAreTheSources) {
  DefragPassPlan const plan =
      m.plan_defrag_pass(kT, 2, core::kUnlimitedSources, CandidateOrder::by_fill);
  EXPECT_EQ(plan.R, (std::vector<std::uint32_t>{2, 19, 5, 16, 7, 14}));
  EXPECT_EQ(plan.B, 2u);
  ASSERT_EQ(plan.sources.size(), 2u);
  EXPECT_EQ(plan.sources[0].source, 2u);
  EXPECT_EQ(plan.sources[0].targets, (std::vector<std::uint32_t>{5, 7}));
  EXPECT_EQ(plan.sources[1].source, 19u);
  EXPECT_EQ(plan.sources[1].targets, (std::vector<std::uint32_t>{16, 14}));
  // Block 2's 4 objects go to block 5's lowest free slots (5 holds 1, 2, 4, 7, 8, ...): 0, 3, 5, 6.
  ASSERT_EQ(plan.sources[0].moves.size(), 4u);
  std::uint32_t const free5[] = {0, 3, 5, 6};
  for (std::uint32_t j = 0; j < 4; ++j)
    EXPECT_EQ(plan.sources[0].moves[j].to, (Location{5, free5[j]}));
  // Block 19's 20 objects all fit into block 16's free slots 30..49: 24 moves in all, not the
  // paper order's 34 (blocks 2 and 5).
  ASSERT_EQ(plan.sources[1].moves.size(), 20u);
  for (std::uint32_t j = 0; j < 20; ++j)
    EXPECT_EQ(plan.sources[1].moves[j].to, (Location{16, 30 + j}));
  // The paper's order is the default and is unchanged by the other.
  EXPECT_EQ(m.plan_defrag_pass(kT, 2).R, (std::vector<std::uint32_t>{2, 5, 7, 14, 16, 19}));
}

TEST_F(Figure5, ByFillACallKeepsEveryInvariant) {
  DefragOptions options;
  options.order        = CandidateOrder::by_fill;
  DefragResult const r = m.defrag(kT, options);
  ASSERT_FALSE(r.passes.empty());
  EXPECT_EQ(r.passes[0].objects_moved, 24u);
  EXPECT_TRUE(check::check_all(m.snapshot()).empty());
}

TEST_F(Figure5, ObjectsOfSourceBlock5MoveIntoBlocks14And19) {
  DefragPassPlan const plan = m.plan_defrag_pass(kT, 2);
  auto const& moves         = plan.sources[1].moves;
  ASSERT_EQ(moves.size(), 30u);
  // The j-th object of block 5 (slot order) goes to the j-th free slot of 14 then 19.
  std::vector<Location> expected;
  for (std::uint32_t s = 20; s < 44; ++s) expected.push_back({14, s});  // 24 free slots of 14
  for (std::uint32_t s = 10; s < 16; ++s) expected.push_back({19, s});  // first 6 of 19
  for (std::size_t j = 0; j < moves.size(); ++j) {
    EXPECT_EQ(moves[j].id, 5000 + j);
    EXPECT_EQ(moves[j].from, (Location{5, source5_slots[j]}));
    EXPECT_EQ(moves[j].to, expected[j]) << "object " << j << " of block 5";
  }
  // Block 2's four objects all fit into block 7's free slots 35..38.
  auto const& moves2 = plan.sources[0].moves;
  ASSERT_EQ(moves2.size(), 4u);
  for (std::uint32_t j = 0; j < 4; ++j) EXPECT_EQ(moves2[j].to, (Location{7, 35 + j}));
}

TEST_F(Figure5, TheWholeCallRewritesPointersAndUpdatesStates) {
  // Between passes (in the observer) pointers and the root still hold the locations at the call's
  // start: cells -> 5000 (5, 1), 5029 (5, 63), 2003 (2, 40); the root -> 5024 (5, 51).
  using Ref = std::optional<core::SlotRef>;
  std::vector<std::vector<Ref>> cells_seen;
  std::vector<Ref> root_seen;
  DefragResult const r = m.defrag(kT, DefragOptions{}, [&](HeapModel const& at, auto const&) {
    auto const s = at.snapshot();
    cells_seen.push_back({s.blocks[23].objects[0]->refs[0],
                          s.blocks[23].objects[1]->refs[0],
                          s.blocks[23].objects[2]->refs[0]});
    root_seen.push_back(at.root_locations()[root]);
  });
  // Pass 1 (the figure): 34 objects move (4 from block 2 into 7's slots 35..38, 30 from block 5).
  ASSERT_EQ(r.passes.size(), 2u);
  EXPECT_EQ(r.passes[0].candidates, 6u);
  EXPECT_EQ(r.passes[0].sources, 2u);
  EXPECT_EQ(r.passes[0].objects_moved, 34u);
  // Then 7 has 39, 14 is full, 16 has 30, 19 has 26: R = [7, 16, 19], B = 1. Pass 2 moves block
  // 7's 39 objects (slots 0..34: ids 7000..7034; slots 35..38: ids 2000..2003): the first 34 fill
  // 16's free slots 30..63, the other 5 (7034, 2000..2003) take 19's free slots 16, 17, 18, 19, 30.
  EXPECT_EQ(r.passes[1].candidates, 3u);
  EXPECT_EQ(r.passes[1].sources, 1u);
  EXPECT_EQ(r.passes[1].objects_moved, 39u);
  // One rewrite for the call, after pass 2: the scan sees the three cells' pointer slots; all
  // three refer to moved objects (5000, 5029 once; 2003 twice, 2 -> 7 -> 19, rewritten once), and
  // so does the root (5024). Per pass the counts would have been 3 + 1 pointers and 1 + 0 roots.
  EXPECT_EQ(r.pointers_scanned, 3u);
  EXPECT_EQ(r.pointers_rewritten, 3u);
  EXPECT_EQ(r.roots_rewritten, 1u);
  std::vector<Ref> const call_start = {
      core::SlotRef{5, 1}, core::SlotRef{5, 63}, core::SlotRef{2, 40}};
  ASSERT_EQ(cells_seen.size(), 2u);
  for (std::size_t pass = 0; pass < 2; ++pass) {
    EXPECT_EQ(cells_seen[pass], call_start) << "after pass " << pass;
    EXPECT_EQ(root_seen[pass], Ref(core::SlotRef{5, 51})) << "after pass " << pass;
  }
  // 16 is full and 19 holds 31 <= 42: one candidate left, r = 1 <= n, B = 0.
  EXPECT_EQ(r.stop, DefragStop::no_progress);
  EXPECT_EQ(m.fill(14), 64u);
  EXPECT_EQ(m.fill(16), 64u);
  EXPECT_EQ(m.fill(19), 31u);
  for (std::uint32_t b : {2u, 5u, 7u}) EXPECT_TRUE(m.free_blocks().count(b)) << "block " << b;
  EXPECT_EQ(m.defrag_candidates(kT), (std::set<std::uint32_t>{19}));
  EXPECT_EQ(m.object(7033).where, (Location{16, 63}));
  EXPECT_EQ(m.object(7034).where, (Location{19, 16}));
  EXPECT_EQ(m.object(2000).where, (Location{19, 17}));
  // Pointers and the root follow their objects (checked on the snapshot, by location).
  auto const s = m.snapshot();
  EXPECT_EQ(s.blocks[23].objects[0]->refs[0], std::optional<core::SlotRef>(core::SlotRef{14, 20}));
  EXPECT_EQ(s.blocks[23].objects[1]->refs[0], std::optional<core::SlotRef>(core::SlotRef{19, 15}));
  EXPECT_EQ(s.blocks[23].objects[2]->refs[0], std::optional<core::SlotRef>(core::SlotRef{19, 30}));
  EXPECT_EQ(m.root_locations()[root], std::optional<Location>(Location{19, 10}));  // 25th object
  EXPECT_TRUE(check::check_all(s).empty());
  EXPECT_TRUE(check::check_defrag_postconditions(s, kT, 2, 0).empty());
  EXPECT_LE(r.passes.size(), check::worst_case_passes(6, 2, 0));
}

// ------------------------------------------------------------------------------- Figure 6
//
// Fig. 6 (n = 3, blocks of 32 slots): a source with 18 objects and three targets. "All 18 objects
// fit into the first two selected target blocks, so no third block is needed. The first 12
// objects fit into the first target block. The remaining 6 objects fit into the second one."
// Capacity 32 needs a type twice the size of the smallest (DynaSOAr sec. 3.2): Small is 8 B,
// Fish 16 B. A candidate for n = 3 has fill <= 24. R = [1, 3, 4, 6], B = 1: source 1, targets
// 3, 4, 6.
TEST(Figure6, EighteenObjectsTwelveIntoTheFirstTargetSixIntoTheSecond) {
  core::HeapConfig c;
  c.types.push_back({"Small", 8, std::nullopt, false, {}});
  c.types.push_back({"Fish", 16, std::nullopt, false, {}});
  c.num_blocks    = 8;
  c.defrag_factor = 3;
  c.k1            = 0;
  c.validate();
  TypeId const kFish = 1;
  ASSERT_EQ(c.capacity(kFish), 32u);
  HeapModel m(c);
  std::vector<std::uint32_t> const source = {
      1, 2, 3, 5, 7, 8, 11, 13, 14, 16, 17, 19, 20, 22, 25, 27, 29, 31};
  ASSERT_EQ(source.size(), 18u);
  place_at(m, kFish, 1, source, 100);                                 // 18 objects
  place_at(m, kFish, 3, concat({range(0, 10), range(15, 25)}), 300);  // 20: free 10..14, 25..31
  place_at(m, kFish, 4, {0, 1, 2, 3, 4, 6, 8, 10, 12, 14}, 400);      // 10: free 5, 7, 9, ...
  place_at(m, kFish, 6, range(0, 5), 600);                            // 5
  place_at(m, kFish, 7, range(0, 30), 700);                           // 30 > 24: not a candidate

  DefragPassPlan const plan = m.plan_defrag_pass(kFish, 3);
  EXPECT_EQ(plan.R, (std::vector<std::uint32_t>{1, 3, 4, 6}));
  EXPECT_EQ(plan.B, 1u);
  ASSERT_EQ(plan.sources.size(), 1u);
  EXPECT_EQ(plan.sources[0].targets, (std::vector<std::uint32_t>{3, 4, 6}));
  std::vector<Location> const expected = {
      {3, 10},
      {3, 11},
      {3, 12},
      {3, 13},
      {3, 14},
      {3, 25},
      {3, 26},
      {3, 27},
      {3, 28},
      {3, 29},
      {3, 30},
      {3, 31},  // the first 12 fill the first target
      {4, 5},
      {4, 7},
      {4, 9},
      {4, 11},
      {4, 13},
      {4, 15},  // the other 6: the second target
  };
  auto const& moves = plan.sources[0].moves;
  ASSERT_EQ(moves.size(), 18u);
  for (std::size_t j = 0; j < 18; ++j) {
    EXPECT_EQ(moves[j].id, 100 + j);
    EXPECT_EQ(moves[j].from, (Location{1, source[j]}));
    EXPECT_EQ(moves[j].to, expected[j]) << "object " << j;
  }

  DefragResult const r = m.defrag(kFish);
  // After the pass: 3 is full (32), 4 has 16 (candidate), 6 has 5 (candidate): r = 2 <= n.
  ASSERT_EQ(r.passes.size(), 1u);
  EXPECT_EQ(r.stop, DefragStop::no_progress);
  EXPECT_EQ(m.fill(3), 32u);
  EXPECT_EQ(m.fill(4), 16u);
  EXPECT_EQ(m.fill(6), 5u);  // the third target is not needed
  EXPECT_TRUE(m.free_blocks().count(1));
  for (std::size_t j = 0; j < 18; ++j) EXPECT_EQ(m.object(100 + j).where, expected[j]);
  EXPECT_TRUE(check::check_all(m.snapshot()).empty());
}

// ------------------------------------------------------------------------- multiple passes
//
// n = 1, capacity 4 (Shark-like), eight blocks with one object each (slot 0): R = [0..7].
// Pass 1: B = 4, sources 0..3 -> targets 4..7 (R[s + 4]); each target then holds 2 of 4, still a
// candidate. Pass 2: R = [4..7], B = 2, sources 4, 5 -> targets 6, 7, which become full. r = 0.
TEST(DefragPasses, TwoPassesAndTheRelocationHistogram) {
  auto const c    = testing::single_type_config(128, 8, 1, 0);
  TypeId const kT = 1;
  ASSERT_EQ(c.capacity(kT), 4u);
  HeapModel m(c);
  for (std::uint32_t b = 0; b < 8; ++b) place_at(m, kT, b, {0}, 10 * (b + 1));
  DefragResult const r = m.defrag(kT);
  ASSERT_EQ(r.passes.size(), 2u);
  EXPECT_EQ(r.passes[0].sources, 4u);
  EXPECT_EQ(r.passes[0].objects_moved, 4u);
  EXPECT_EQ(r.passes[1].candidates, 4u);
  EXPECT_EQ(r.passes[1].sources, 2u);
  EXPECT_EQ(r.passes[1].objects_moved, 4u);
  EXPECT_EQ(r.stop, DefragStop::k1_reached);
  EXPECT_EQ(r.candidates_after, 0u);
  // Objects of blocks 0 and 1 moved twice (0 -> 4 -> 6); of 2, 3, 4, 5 once; of 6, 7 never.
  EXPECT_EQ(r.objects_by_relocation_count, (std::vector<std::uint64_t>{2, 4, 2}));
  EXPECT_EQ(r.relocations_by_ordinal, (std::vector<std::uint64_t>{6, 2}));
  EXPECT_EQ(r.relocations.at(10), 2u);
  EXPECT_EQ(r.relocations.at(50), 1u);
  EXPECT_EQ(r.relocations.count(70), 0u);
  // Pass 1: 10 -> (4, 1), 30 -> (6, 1). Pass 2: block 4 = [50, 10] -> 6's free slots 2, 3.
  EXPECT_EQ(m.object(70).where, (Location{6, 0}));
  EXPECT_EQ(m.object(30).where, (Location{6, 1}));
  EXPECT_EQ(m.object(50).where, (Location{6, 2}));
  EXPECT_EQ(m.object(10).where, (Location{6, 3}));
  EXPECT_EQ(m.object(20).where, (Location{7, 3}));
  EXPECT_DOUBLE_EQ(r.fragmentation_before, 0.75);
  EXPECT_DOUBLE_EQ(r.fragmentation_after, 0.0);
  EXPECT_EQ(r.blocks_before, 8u);
  EXPECT_EQ(r.blocks_after, 2u);
  EXPECT_LE(r.passes.size(), check::worst_case_passes(8, 1, 0));
}

TEST(DefragPasses, StopsOnceAtMostK1CandidatesRemain) {
  auto const c    = testing::single_type_config(128, 8, 1, 4);
  TypeId const kT = 1;
  HeapModel m(c);
  for (std::uint32_t b = 0; b < 8; ++b) place_at(m, kT, b, {0}, 10 * (b + 1));
  DefragResult const r = m.defrag(kT);  // k1 = 4 from the config
  ASSERT_EQ(r.passes.size(), 1u);       // after pass 1, 4 candidates remain: 4 <= k1
  EXPECT_EQ(r.stop, DefragStop::k1_reached);
  EXPECT_EQ(r.candidates_after, 4u);
  EXPECT_EQ(m.defrag_candidates(kT), (std::set<std::uint32_t>{4, 5, 6, 7}));
  // With k1 = 8 nothing happens at all.
  DefragResult const none = m.defrag(kT, std::nullopt, 8);
  EXPECT_TRUE(none.passes.empty());
}

// ----------------------------------------------------------- one pointer rewrite per call
//
// The call rewrites pointers once, after its last pass (docs/model.md "One rewrite per call"):
// between passes every pointer and root holds its object's location at the call's start.
// T (capacity 64, pointers next: T*, other: Cell*) and Cell (object: T*); n = 1, k1 = 0.
//   block 0: 100 at slot 0     block 1: 200 at slot 0     block 2: 300 at slot 0
//   block 3: 400 at slot 0     block 4: cell 1 at slot 0  block 5: cell 2 at slot 0
// Pass 1: R = [0, 1, 2, 3], B = 2: 0 -> 2 (100 to (2, 1)), 1 -> 3 (200 to (3, 1)).
// Pass 2: R = [2, 3], B = 1: 2 -> 3, slot order: 300 to (3, 2), 100 to (3, 3). Then r = 1, B = 0.
// So 100 moves twice, 200 and 300 once, 400 never.
// Pointers: 300.next -> 100, 100.next -> 200, 400.next -> 300, 200.next -> 400, 100.other ->
// cell 1; cell 1 -> 100, cell 2 -> 400. Roots: 100, 400, null.
class OneRewritePerCall : public ::testing::Test {
 protected:
  static constexpr TypeId kT    = 0;
  static constexpr TypeId kCell = 1;
  using Ref                     = std::optional<core::SlotRef>;
  static core::HeapConfig config() {
    core::HeapConfig c;
    c.types.push_back({"T", 8, std::nullopt, false, {{"next", kT, 1}, {"other", kCell, 1}}});
    c.types.push_back({"Cell", 8, std::nullopt, false, {{"object", kT, 1}}});
    c.num_blocks    = 8;
    c.defrag_factor = 1;
    c.k1            = 0;
    return c;
  }
  void SetUp() override {
    for (std::uint32_t b = 0; b < 4; ++b) place_at(m, kT, b, {0}, 100 * (b + 1));
    place_at(m, kCell, 4, {0}, 1);
    place_at(m, kCell, 5, {0}, 2);
    m.set_ref(300, 0, 100);
    m.set_ref(100, 0, 200);
    m.set_ref(400, 0, 300);
    m.set_ref(200, 0, 400);
    m.set_ref(100, 1, 1);
    m.set_ref(1, 0, 100);
    m.set_ref(2, 0, 400);
    m.add_root(100);
    m.add_root(400);
    m.add_root(std::nullopt);
  }
  /// Pointer slot k of the object at (block, slot) in snapshot s.
  static Ref ref_at(check::HeapSnapshot const& s,
                    std::uint32_t block,
                    std::uint32_t slot,
                    std::size_t k) {
    auto const& record = s.blocks.at(block).objects.at(slot);
    EXPECT_TRUE(record.has_value()) << "no object at " << block << ":" << slot;
    return record ? record->refs.at(k) : Ref{};
  }
  /// Defragments `type`, keeping the model's snapshot and roots after every pass.
  DefragResult defrag_observed(TypeId type) {
    return m.defrag(type, DefragOptions{}, [&](HeapModel const& at, DefragPassStats const&) {
      seen.push_back(at.snapshot());
      roots_seen.push_back(at.root_locations());
      where_100.push_back(at.object(100).where);
    });
  }
  HeapModel m{config()};
  std::vector<check::HeapSnapshot> seen;
  std::vector<std::vector<Ref>> roots_seen;
  std::vector<Location> where_100;
};

TEST_F(OneRewritePerCall, APointerToAnObjectMovedTwiceIsStaleBetweenPassesAndRewrittenOnce) {
  DefragResult const r = defrag_observed(kT);
  ASSERT_EQ(r.passes.size(), 2u);
  EXPECT_EQ(r.stop, DefragStop::no_progress);
  EXPECT_EQ(r.objects_by_relocation_count, (std::vector<std::uint64_t>{1, 2, 1}));
  EXPECT_EQ(r.relocations.at(100), 2u);
  // The objects do move pass by pass (100: (0, 0) -> (2, 1) -> (3, 3)) ...
  EXPECT_EQ(where_100, (std::vector<Location>{{2, 1}, {3, 3}}));
  // ... but their pointers are not rewritten until the call ends. After pass 1: block 2 holds
  // 300 (slot 0) and 100 (slot 1), block 3 holds 400 (slot 0) and 200 (slot 1).
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(ref_at(seen[0], 2, 0, 0), Ref(core::SlotRef{0, 0}));  // 300.next -> 100 at the start
  EXPECT_EQ(ref_at(seen[0], 2, 1, 0), Ref(core::SlotRef{1, 0}));  // 100.next -> 200 at the start
  EXPECT_EQ(ref_at(seen[0], 3, 0, 0), Ref(core::SlotRef{2, 0}));  // 400.next -> 300 (not moved)
  EXPECT_EQ(ref_at(seen[0], 4, 0, 0), Ref(core::SlotRef{0, 0}));  // cell 1 -> 100 at the start
  // After pass 2 (the last): block 3 holds 400, 200, 300, 100; still the call-start locations,
  // now in blocks 0, 1 and 2, which are all free.
  EXPECT_EQ(ref_at(seen[1], 3, 3, 0), Ref(core::SlotRef{1, 0}));  // 100.next
  EXPECT_EQ(ref_at(seen[1], 3, 2, 0), Ref(core::SlotRef{0, 0}));  // 300.next
  EXPECT_EQ(ref_at(seen[1], 3, 0, 0), Ref(core::SlotRef{2, 0}));  // 400.next (300 moved in pass 2)
  EXPECT_EQ(ref_at(seen[1], 4, 0, 0), Ref(core::SlotRef{0, 0}));  // cell 1
  for (std::uint32_t b : {0u, 1u, 2u}) EXPECT_EQ(seen[1].blocks[b].type, core::kNoType);
  // After the call every pointer holds the final location.
  auto const after = m.snapshot();
  EXPECT_EQ(ref_at(after, 3, 2, 0), Ref(core::SlotRef{3, 3}));  // 300.next -> 100
  EXPECT_EQ(ref_at(after, 3, 3, 0), Ref(core::SlotRef{3, 1}));  // 100.next -> 200
  EXPECT_EQ(ref_at(after, 3, 0, 0), Ref(core::SlotRef{3, 2}));  // 400.next -> 300
  EXPECT_EQ(ref_at(after, 3, 1, 0), Ref(core::SlotRef{3, 0}));  // 200.next -> 400
  EXPECT_EQ(ref_at(after, 4, 0, 0), Ref(core::SlotRef{3, 3}));  // cell 1 -> 100
  EXPECT_TRUE(check::check_all(after).empty());
  // The one scan after the last pass: the next slots of the 4 T's (other: Cell*, not scanned)
  // and the 2 cells' slots = 6. Rewritten: 300.next, 100.next, 400.next, cell 1 = 4 (100 counts
  // once although it moved twice; 200.next and cell 2 refer to 400, which never moved).
  EXPECT_EQ(r.pointers_scanned, 6u);
  EXPECT_EQ(r.pointers_rewritten, 4u);
}

TEST_F(OneRewritePerCall, PointersToOtherTypesShowTheirCurrentLocations) {
  // Defragmenting T: pointers to cells (which never move) hold the cells' locations, also in a
  // moved object's copy (100 at (2, 1) after pass 1).
  (void)defrag_observed(kT);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(ref_at(seen[0], 2, 1, 1), Ref(core::SlotRef{4, 0}));  // 100.other -> cell 1
  EXPECT_EQ(ref_at(seen[1], 3, 3, 1), Ref(core::SlotRef{4, 0}));
  // Then defragmenting Cell: R = [4, 5], B = 1, cell 1 moves to (5, 1). Between passes the
  // pointer to it is stale, but pointers to T's objects (moved by the previous call) show their
  // current locations: the previous call's view is gone.
  seen.clear();
  roots_seen.clear();
  DefragResult const r = defrag_observed(kCell);
  ASSERT_EQ(r.passes.size(), 1u);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(ref_at(seen[0], 3, 3, 1), Ref(core::SlotRef{4, 0}));  // 100.other -> cell 1: stale
  EXPECT_EQ(ref_at(seen[0], 3, 3, 0), Ref(core::SlotRef{3, 1}));  // 100.next -> 200: current
  EXPECT_EQ(ref_at(seen[0], 5, 1, 0), Ref(core::SlotRef{3, 3}));  // cell 1 -> 100: current
  EXPECT_EQ(ref_at(seen[0], 5, 0, 0), Ref(core::SlotRef{3, 0}));  // cell 2 -> 400
  EXPECT_EQ(roots_seen[0], (std::vector<Ref>{core::SlotRef{3, 3}, core::SlotRef{3, 0}, Ref{}}));
  EXPECT_EQ(ref_at(m.snapshot(), 3, 3, 1), Ref(core::SlotRef{5, 1}));
  // Only T's 4 objects have a slot that may point to a Cell (other); one refers to cell 1.
  EXPECT_EQ(r.pointers_scanned, 4u);
  EXPECT_EQ(r.pointers_rewritten, 1u);
  EXPECT_EQ(r.roots_rewritten, 0u);
}

TEST_F(OneRewritePerCall, ARootToAnObjectMovedTwiceIsStaleBetweenPassesAndRewrittenOnce) {
  DefragResult const r            = defrag_observed(kT);
  std::vector<Ref> const at_start = {core::SlotRef{0, 0}, core::SlotRef{3, 0}, Ref{}};
  ASSERT_EQ(roots_seen.size(), 2u);
  EXPECT_EQ(roots_seen[0], at_start);
  EXPECT_EQ(roots_seen[1], at_start);
  EXPECT_EQ(m.root_locations(),
            (std::vector<Ref>{core::SlotRef{3, 3}, core::SlotRef{3, 0}, Ref{}}));
  EXPECT_EQ(r.roots_rewritten, 1u);  // the root to 100 (moved twice), once; 400 never moved
}

TEST_F(OneRewritePerCall, NoPassNoRewriteScan) {
  DefragResult const r = m.defrag(kT, std::nullopt, 4);  // 4 candidates <= k1 = 4: no pass
  EXPECT_TRUE(r.passes.empty());
  EXPECT_EQ(r.pointers_scanned, 0u);  // a pass would have been followed by a scan of 6 slots
  EXPECT_EQ(r.pointers_rewritten, 0u);
  EXPECT_EQ(r.roots_rewritten, 0u);
}

}  // namespace
}  // namespace heaplab::model
