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
  DefragResult const r = m.defrag(kT);
  // Pass 1 (the figure): 34 objects move (4 from block 2 into 7's slots 35..38, 30 from block 5);
  // the three cells and the root refer to moved objects.
  ASSERT_EQ(r.passes.size(), 2u);
  EXPECT_EQ(r.passes[0].candidates, 6u);
  EXPECT_EQ(r.passes[0].sources, 2u);
  EXPECT_EQ(r.passes[0].objects_moved, 34u);
  EXPECT_EQ(r.passes[0].pointers_rewritten, 3u);
  EXPECT_EQ(r.passes[0].roots_rewritten, 1u);
  // Then 7 has 39, 14 is full, 16 has 30, 19 has 26: R = [7, 16, 19], B = 1. Pass 2 moves block
  // 7's 39 objects (slots 0..34: ids 7000..7034; slots 35..38: ids 2000..2003): the first 34 fill
  // 16's free slots 30..63, the other 5 (7034, 2000..2003) take 19's free slots 16, 17, 18, 19, 30.
  EXPECT_EQ(r.passes[1].candidates, 3u);
  EXPECT_EQ(r.passes[1].sources, 1u);
  EXPECT_EQ(r.passes[1].objects_moved, 39u);
  EXPECT_EQ(r.passes[1].pointers_rewritten, 1u);  // the cell that points to 2003
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

}  // namespace
}  // namespace heaplab::model
