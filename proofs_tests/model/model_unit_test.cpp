// Unit tests of the reference model: deterministic placement, block states, free, refinement of
// GPU placements (accept_allocations), parallel_do semantics, roots and the snapshot. Expected
// values are written out by hand from the papers' rules, never computed by the model.
#include <gtest/gtest.h>

#include <set>

#include "heaplab/check/defrag_obligations.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/core/cookie.hpp"
#include "heaplab/model/heap_model.hpp"
#include "model_test_support.hpp"

namespace heaplab::model {
namespace {

using testing::place_at;
using testing::range;

// Small (8 B, capacity 64), Agent (abstract), Fish : Agent (32 B, capacity 16),
// Shark : Agent (128 B, capacity 4), Cell (16 B, capacity 32) with agent -> Agent and
// neighbors -> Cell[2]. Agent declares target -> Fish.
enum : TypeId { kSmall = 0, kAgent = 1, kFish = 2, kShark = 3, kCell = 4 };

core::HeapConfig wator_config(std::uint32_t num_blocks = 8, std::uint32_t n = 1) {
  core::HeapConfig c;
  c.types.push_back({"Small", 8, std::nullopt, false, {}});
  c.types.push_back({"Agent", 32, std::nullopt, true, {{"target", kFish, 1}}});
  c.types.push_back({"Fish", 32, kAgent, false, {}});
  c.types.push_back({"Shark", 128, kAgent, false, {}});
  c.types.push_back(
      {"Cell", 16, std::nullopt, false, {{"agent", kAgent, 1}, {"neighbors", kCell, 2}}});
  c.num_blocks    = num_blocks;
  c.defrag_factor = n;
  c.k1            = 0;
  c.validate();
  return c;
}

TEST(ModelAllocate, LowestActiveBlockThenLowestFreeBlockThenLowestSlot) {
  HeapModel m(wator_config());
  ASSERT_EQ(m.config().capacity(kShark), 4u);
  // Four sharks fill block 0; the fifth initializes the lowest free block, 1.
  std::vector<Location> where;
  for (ObjectId id = 1; id <= 5; ++id) where.push_back(*m.allocate(kShark, id));
  std::vector<Location> const expected = {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}};
  EXPECT_EQ(where, expected);
  EXPECT_EQ(m.active(kShark), (std::set<std::uint32_t>{1}));  // block 0 is full
  EXPECT_EQ(m.allocated(kShark), (std::set<std::uint32_t>{0, 1}));
  // Freeing slot 1 of block 0 makes block 0 active again; it is the lowest active block.
  m.free(2);
  EXPECT_EQ(m.active(kShark), (std::set<std::uint32_t>{0, 1}));
  EXPECT_EQ(*m.allocate(kShark, 6), (Location{0, 1}));
  // A fish never goes into a shark block.
  EXPECT_EQ(*m.allocate(kFish, 7), (Location{2, 0}));
  EXPECT_EQ(m.block(2).type, std::optional<TypeId>(kFish));
}

TEST(ModelAllocate, ReturnsNothingWhenOutOfMemoryAndChangesNothing) {
  HeapModel m(wator_config(/*num_blocks=*/2));
  for (ObjectId id = 1; id <= 8; ++id) ASSERT_TRUE(m.allocate(kShark, id).has_value());
  auto const before = m.snapshot();
  EXPECT_FALSE(m.allocate(kShark, 9).has_value());
  EXPECT_FALSE(m.allocate(kFish, 10).has_value());
  EXPECT_EQ(m.num_live(), 8u);
  EXPECT_TRUE(m.free_blocks().empty());
  EXPECT_EQ(m.snapshot().blocks[1].alloc_bitmap, before.blocks[1].alloc_bitmap);
}

TEST(ModelAllocate, RejectsAbstractTypesAndLiveIds) {
  HeapModel m(wator_config());
  EXPECT_THROW(m.allocate(kAgent, 1), core::precondition_error);
  ASSERT_TRUE(m.allocate(kFish, 1));
  EXPECT_THROW(m.allocate(kFish, 1), core::precondition_error);
  EXPECT_EQ(m.next_unused_id(), 2u);
  EXPECT_EQ(*m.allocate(kFish), 2u);
}

TEST(ModelFree, BlockStatesFollowTheFillExactly) {
  // Shark capacity 4, n = 1: a candidate has fill <= 2 (used * 2 <= 4).
  HeapModel m(wator_config(8, 1));
  for (ObjectId id = 1; id <= 4; ++id) m.allocate(kShark, id);
  std::set<std::uint32_t> const none, zero = {0};
  EXPECT_EQ(m.active(kShark), none);  // full
  EXPECT_EQ(m.defrag_candidates(kShark), none);
  m.free(1);  // fill 3: active, not a candidate
  EXPECT_EQ(m.active(kShark), zero);
  EXPECT_EQ(m.defrag_candidates(kShark), none);
  m.free(2);  // fill 2 = n/(n+1) of 4: candidate
  EXPECT_EQ(m.defrag_candidates(kShark), zero);
  m.free(3);
  EXPECT_EQ(m.defrag_candidates(kShark), zero);
  m.free(4);  // empty: the block is deleted (DynaSOAr sec. 3.4)
  EXPECT_EQ(m.allocated(kShark), none);
  EXPECT_EQ(m.active(kShark), none);
  EXPECT_EQ(m.defrag_candidates(kShark), none);
  EXPECT_TRUE(m.free_blocks().count(0));
  EXPECT_FALSE(m.block(0).type.has_value());
}

TEST(ModelFree, RefusesReferencedDeadAndUnknownObjects) {
  HeapModel m(wator_config());
  m.allocate(kFish, 1);
  m.allocate(kCell, 2);
  m.set_ref(2, 0, 1);  // cell.agent -> fish 1
  try {
    m.free(1);
    FAIL() << "freed a referenced object";
  } catch (core::precondition_error const& e) {
    EXPECT_NE(std::string(e.what()).find("object 1 is still referenced by 1"), std::string::npos)
        << e.what();
  }
  m.null_references_to({1});
  EXPECT_EQ(m.object(2).refs[0], std::nullopt);
  m.free(1);
  EXPECT_THROW(m.free(1), core::precondition_error);
  EXPECT_THROW(m.free(99), core::precondition_error);
}

TEST(ModelPointers, SetRefChecksSlotRangeLivenessAndPointeeType) {
  HeapModel m(wator_config());
  m.allocate(kFish, 1);
  m.allocate(kShark, 2);
  m.allocate(kCell, 3);
  m.set_ref(3, 0, 2);  // Cell.agent (Agent*) -> Shark: Shark <: Agent
  m.set_ref(2, 0, 1);  // Shark inherits Agent.target (Fish*) -> Fish
  EXPECT_THROW(m.set_ref(2, 0, 2), core::precondition_error);   // Shark is not a Fish
  EXPECT_THROW(m.set_ref(3, 1, 1), core::precondition_error);   // neighbors[0] is Cell*
  EXPECT_THROW(m.set_ref(3, 3, 3), core::precondition_error);   // Cell has slots 0..2
  EXPECT_THROW(m.set_ref(3, 0, 42), core::precondition_error);  // not live
  EXPECT_EQ(m.incoming_refs(1), 1u);
  EXPECT_EQ(m.incoming_refs(2), 1u);
}

// ------------------------------------------------------------------ accept_allocations

class AcceptAllocations : public ::testing::Test {
 protected:
  // Block 0: Shark at slot 0 (id 1). Block 1: Fish at slot 3 (id 2). Everything else free.
  void SetUp() override {
    place_at(model, kShark, 0, {0}, 1);
    place_at(model, kFish, 1, {3}, 2);
    ASSERT_EQ(model.num_live(), 2u);
  }
  static ObservedAllocation at(ObjectId id,
                               TypeId type,
                               std::uint32_t block,
                               std::uint32_t slot,
                               std::vector<std::optional<ObjectId>> refs = {}) {
    return ObservedAllocation{id, type, block, slot, std::move(refs)};
  }
  /// Expects the batch to be rejected at `index` with `reason` in the message, and nothing applied.
  void expect_rejected(std::vector<ObservedAllocation> const& batch,
                       std::size_t index,
                       std::string const& reason) {
    auto const before = model.snapshot();
    auto const error  = model.accept_allocations(batch);
    ASSERT_TRUE(error.has_value()) << "accepted an illegal batch; expected: " << reason;
    EXPECT_EQ(error->index, index) << error->to_string();
    EXPECT_NE(error->to_string().find(reason), std::string::npos) << error->to_string();
    EXPECT_EQ(model.num_live(), 2u);
    for (std::uint32_t b = 0; b < model.num_blocks(); ++b)
      EXPECT_EQ(model.snapshot().blocks[b].alloc_bitmap, before.blocks[b].alloc_bitmap);
  }
  HeapModel model{wator_config()};
};

TEST_F(AcceptAllocations, AcceptsAnyLegalPlacementNotOnlyTheModelsOwn) {
  // The model would put a new Shark at block 0 slot 1; a GPU may choose slot 3, or a free block
  // other than the lowest one. Both are legal.
  auto const error = model.accept_allocations(
      {at(3, kShark, 0, 3), at(4, kShark, 6, 2, {2}), at(5, kCell, 7, 31, {4, std::nullopt, 5})});
  ASSERT_FALSE(error.has_value()) << error->to_string();
  EXPECT_EQ(model.object(3).where, (Location{0, 3}));
  EXPECT_EQ(model.object(4).where, (Location{6, 2}));
  EXPECT_EQ(model.object(4).refs[0], std::optional<ObjectId>(2));
  EXPECT_EQ(model.object(5).refs[2], std::optional<ObjectId>(5));  // a pointer within the batch
  EXPECT_EQ(model.allocated(kShark), (std::set<std::uint32_t>{0, 6}));
  EXPECT_EQ(model.allocated(kCell), (std::set<std::uint32_t>{7}));
  EXPECT_TRUE(check::check_all(model.snapshot()).empty());
}

TEST_F(AcceptAllocations, RejectsUnknownType) {
  expect_rejected({at(3, 17, 2, 0)}, 0, "type 17 does not exist");
}
TEST_F(AcceptAllocations, RejectsAbstractType) {
  expect_rejected({at(3, kAgent, 2, 0)}, 0, "type 'Agent' is abstract");
}
TEST_F(AcceptAllocations, RejectsAnIdThatIsLive) {
  expect_rejected({at(3, kShark, 0, 1), at(1, kShark, 0, 2)}, 1, "object 1 is already live");
}
TEST_F(AcceptAllocations, RejectsAnIdTwiceInTheBatch) {
  expect_rejected({at(3, kShark, 0, 1), at(3, kShark, 0, 2)}, 1, "object 3 appears twice");
}
TEST_F(AcceptAllocations, RejectsABlockBeyondM) {
  expect_rejected({at(3, kShark, 8, 0)}, 0, "block 8 does not exist (M = 8)");
}
TEST_F(AcceptAllocations, RejectsASlotAtOrAboveTheCapacity) {
  expect_rejected({at(3, kShark, 0, 4)}, 0, "slot 4 is at or above the capacity 4 of 'Shark'");
}
TEST_F(AcceptAllocations, RejectsABlockOfAnotherType) {
  expect_rejected({at(3, kFish, 0, 1)}, 0, "block 0 is allocated for type 'Shark', not 'Fish'");
}
TEST_F(AcceptAllocations, RejectsAnOccupiedSlot) {
  expect_rejected({at(3, kFish, 1, 3)}, 0, "slot 3 of block 1 is already occupied");
}
TEST_F(AcceptAllocations, RejectsTwoPlacementsInOneSlot) {
  expect_rejected(
      {at(3, kFish, 2, 5), at(4, kFish, 2, 5)}, 1, "slot 5 of block 2 is already occupied");
}
TEST_F(AcceptAllocations, RejectsTwoTypesInOneFreeBlock) {
  expect_rejected({at(3, kFish, 2, 0), at(4, kShark, 2, 1)},
                  1,
                  "block 2 is allocated for type 'Fish', not 'Shark'");
}
TEST_F(AcceptAllocations, RejectsAWrongNumberOfPointers) {
  expect_rejected({at(3, kCell, 2, 0, {std::nullopt})}, 0, "has 1 pointers, type 'Cell' has 3");
}
TEST_F(AcceptAllocations, RejectsAPointerToADeadObject) {
  expect_rejected(
      {at(3, kShark, 0, 1, {77})}, 0, "pointer slot 0 refers to object 77, which is not live");
}
TEST_F(AcceptAllocations, RejectsAPointerOfTheWrongType) {
  expect_rejected({at(3, kShark, 0, 1, {1})},
                  0,
                  "pointer slot 0 (to 'Fish') refers to object 1 of type 'Shark'");
}

// -------------------------------------------------------------------------- parallel_do

TEST(ModelParallelDo, VisitsTheLaunchSetInIdOrderAndNotTheObjectsItCreates) {
  HeapModel m(wator_config());
  for (ObjectId id : {5, 2, 9}) m.allocate(kFish, id);
  m.allocate(kShark, 4);
  m.allocate(kCell, 1);
  std::vector<ObjectId> visited;
  ObjectId next = 100;
  m.parallel_do(kAgent, [&](ParallelDoContext& ctx) {
    visited.push_back(ctx.self());
    // Each visited agent creates a fish (a subtype of Agent): never visited by this do-all.
    ASSERT_TRUE(ctx.allocate(kFish, next++).has_value());
  });
  EXPECT_EQ(visited, (std::vector<ObjectId>{2, 4, 5, 9}));
  EXPECT_EQ(m.live_ids_of(kFish).size(), 7u);
}

TEST(ModelParallelDo, ThisMayDeleteItselfAndObjectsOfOtherTypes) {
  HeapModel m(wator_config());
  for (ObjectId id = 1; id <= 3; ++id) m.allocate(kFish, id);
  for (ObjectId id = 10; id <= 12; ++id) m.allocate(kCell, id);
  m.parallel_do(kFish, [&](ParallelDoContext& ctx) {
    if (ctx.self() == 2) ctx.delete_self();
    ctx.delete_object(ctx.self() + 9);  // fish i deletes cell i + 9
  });
  EXPECT_EQ(m.live_ids_of(kFish), (std::vector<ObjectId>{1, 3}));
  EXPECT_TRUE(m.live_ids_of(kCell).empty());
  EXPECT_TRUE(check::check_all(m.snapshot()).empty());
}

TEST(ModelParallelDo, DeletingAnotherIteratedObjectIsAnError) {
  HeapModel m(wator_config());
  m.allocate(kFish, 1);
  m.allocate(kShark, 2);
  // parallel_do<Agent> iterates fish and sharks: a fish may not delete the shark.
  try {
    m.parallel_do(kAgent, [&](ParallelDoContext& ctx) {
      if (ctx.self() == 1) ctx.delete_object(2);
    });
    FAIL() << "deleted an iterated object of another id";
  } catch (core::precondition_error const& e) {
    EXPECT_NE(std::string(e.what()).find("only `this` may be deleted"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(m.is_live(2));
  // parallel_do<Fish> does not iterate sharks, so there a fish may delete one.
  m.parallel_do(kFish, [&](ParallelDoContext& ctx) { ctx.delete_object(2); });
  EXPECT_FALSE(m.is_live(2));
  // Nothing else is allowed while a do-all runs.
  EXPECT_THROW(m.parallel_do(kFish, [&](ParallelDoContext&) { m.free(1); }),
               core::precondition_error);
  EXPECT_THROW(m.parallel_do(kFish, [&](ParallelDoContext&) { m.defrag(kFish); }),
               core::precondition_error);
}

// ---------------------------------------------------------------------- roots, snapshot

TEST(ModelSnapshot, FreeBlocksAreInvalidatedAndAllocatedBlocksPadded) {
  HeapModel m(wator_config());
  m.allocate(kShark, 1);  // block 0 slot 0; capacity 4: bits 4..63 are padding
  m.allocate(kCell, 2);   // block 1 slot 0
  m.set_ref(2, 0, 1);
  auto const s = m.snapshot();
  EXPECT_EQ(s.producer, "model");
  EXPECT_TRUE(s.has_payloads);
  EXPECT_EQ(s.blocks[0].type, kShark);
  EXPECT_EQ(s.blocks[0].alloc_bitmap, 0xFFFFFFFFFFFFFFF1ull);
  EXPECT_EQ(s.blocks[1].alloc_bitmap, 0xFFFFFFFF00000001ull);  // Cell capacity 32
  EXPECT_EQ(s.blocks[2].type, core::kNoType);
  EXPECT_EQ(s.blocks[2].alloc_bitmap, ~0ull);
  ASSERT_TRUE(s.blocks[1].objects[0].has_value());
  auto const& cell = *s.blocks[1].objects[0];
  EXPECT_EQ(cell.id, 2u);
  EXPECT_EQ(cell.cookie, core::cookie_of(2));
  ASSERT_EQ(cell.refs.size(), 3u);
  EXPECT_EQ(cell.refs[0], std::optional<core::SlotRef>(core::SlotRef{0, 0}));
  EXPECT_EQ(cell.refs[1], std::nullopt);
  EXPECT_TRUE(s.allocated[kAgent].levels.empty());  // abstract: absent bitmaps
  EXPECT_TRUE(check::check_all(s).empty());
}

TEST(ModelSnapshot, FragmentationIsTheAverageFreeLevelOfAllocatedBlocks) {
  HeapModel m(wator_config());
  m.allocate(kShark, 1);                                       // block 0: 3/4 free
  for (ObjectId id = 2; id <= 9; ++id) m.allocate(kFish, id);  // block 1: 8/16 free
  EXPECT_DOUBLE_EQ(m.fragmentation(kShark), 0.75);
  EXPECT_DOUBLE_EQ(m.fragmentation(kFish), 0.5);
  EXPECT_DOUBLE_EQ(m.fragmentation(), (0.75 + 0.5) / 2);
  auto const s = m.snapshot();
  EXPECT_DOUBLE_EQ(check::fragmentation(s, std::nullopt), m.fragmentation());
  EXPECT_DOUBLE_EQ(check::fragmentation(s, kFish), m.fragmentation(kFish));
}

TEST(ModelRoots, RootsFollowTheirObjectsAndAreNulledWithThem) {
  HeapModel m(wator_config(8, 1));
  m.allocate(kShark, 1);  // (0, 0)
  m.allocate(kShark, 2);  // (0, 1)
  m.allocate(kShark, 3);  // (0, 2)
  m.allocate(kShark, 4);  // (0, 3)
  m.allocate(kShark, 5);  // (1, 0)
  std::size_t const r = m.add_root(5);
  m.add_root(std::nullopt);
  m.free(1);
  m.free(2);
  m.free(3);
  // Blocks 0 (one shark) and 1 (one shark) are candidates; n = 1: source 0, target 1.
  auto const result = m.defrag(kShark);
  ASSERT_EQ(result.passes.size(), 1u);
  EXPECT_EQ(result.roots_rewritten, 0u);  // shark 4 moved; the root refers to shark 5
  EXPECT_EQ(m.root_locations()[r], std::optional<Location>(Location{1, 0}));
  EXPECT_EQ(m.object(4).where, (Location{1, 1}));
  m.set_root(r, 4);
  EXPECT_EQ(m.root_locations()[r], std::optional<Location>(Location{1, 1}));
  EXPECT_THROW(m.free(4), core::precondition_error);
  m.null_references_to({4});
  EXPECT_EQ(m.roots()[r], std::nullopt);
  m.free(4);
}

TEST(ModelDefrag, TheRequestedFactorAppliesToThisCallOnlyDefragSetsFollowTheConfig) {
  // Fish capacity 16, config n = 1 (candidate: fill <= 8). Request n = 3 (fill <= 12).
  HeapModel m(wator_config(8, 1));
  place_at(m, kFish, 0, range(0, 10), 1);    // 10: candidate for n = 3 only
  place_at(m, kFish, 1, range(0, 10), 101);  // 10
  place_at(m, kFish, 2, range(0, 10), 201);  // 10
  place_at(m, kFish, 3, range(0, 2), 301);   // 2: candidate for both
  EXPECT_EQ(m.defrag_candidates(kFish), (std::set<std::uint32_t>{3}));
  // n = 3: R = {0,1,2,3}, B = 1; source 0 (10 objects) into targets 1, 2, 3 (6 + 6 + 14 free).
  auto const result = m.defrag(kFish, 3, 0);
  ASSERT_EQ(result.passes.size(), 1u);
  EXPECT_EQ(result.n, 3u);
  EXPECT_EQ(result.candidates_before, 4u);
  EXPECT_EQ(m.fill(1), 16u);
  EXPECT_EQ(m.fill(2), 14u);
  EXPECT_EQ(m.fill(3), 2u);
  EXPECT_TRUE(m.free_blocks().count(0));
  // After the call defrag[Fish] follows the config's n = 1: only block 3 (2 of 16).
  EXPECT_EQ(m.defrag_candidates(kFish), (std::set<std::uint32_t>{3}));
  EXPECT_TRUE(check::check_all(m.snapshot()).empty());
  EXPECT_THROW(m.defrag(kFish, 16, 0), core::precondition_error);  // n must be < capacity 16
  EXPECT_THROW(m.defrag(kFish, 0, 0), core::precondition_error);
  EXPECT_THROW(m.defrag(kAgent), core::precondition_error);
}

}  // namespace
}  // namespace heaplab::model
