// The allocate / deallocate protocol (DynaSOAr Alg. 1, 2, 8, 9; CompactGpu's defrag[T]) run by
// one thread, where every expected state is worked out by hand or built with the check library's
// snapshot helpers from the placements the allocator chose (placement is the allocator's free
// choice; what follows from it is not).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "heaplab/check/diff.hpp"
#include "heaplab/check/from_core.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/atomics.hpp"
#include "heaplab/core/heap_protocol.hpp"
#include "heaplab/core/host_heap.hpp"
#include "heaplab/families/interleaving/workloads/heap_workload.hpp"

namespace core  = heaplab::core;
namespace check = heaplab::check;
using heaplab::interleaving_family::workloads::make_config;
using Ref = core::HeapProtocol<core::HostAtomics>;

namespace {

std::string violations(core::HostHeap const& heap) {
  std::string out;
  for (auto const& v : check::check_all(check::from_core(heap))) out += v.to_string() + "\n";
  return out;
}

/// The snapshot the heap must have: empty, then each block of `objects` allocated for its type
/// with exactly the listed slots (check::make_block_allocated sets every state bit).
check::HeapSnapshot expected_snapshot(
    core::HeapConfig const& config,
    std::map<std::uint32_t, std::pair<std::uint32_t, std::uint64_t>> const& objects) {
  check::HeapSnapshot s = check::make_empty_snapshot(config, false);
  for (auto const& [block, type_slots] : objects)
    check::make_block_allocated(s, block, type_slots.first, type_slots.second);
  return s;
}

void expect_state(core::HostHeap const& heap,
                  std::map<std::uint32_t, std::pair<std::uint32_t, std::uint64_t>> const& objects) {
  auto const d = check::diff(expected_snapshot(heap.config(), objects), check::from_core(heap));
  EXPECT_TRUE(d.empty()) << d.to_string();
  EXPECT_EQ(violations(heap), "");
}

}  // namespace

TEST(HeapProtocol, FreshHeapIsTheEmptySnapshot) {
  core::HostHeap heap(make_config({8, 256}, 3, 1));
  check::DiffOptions opts;
  opts.compare_iteration_bitmaps = true;
  auto const d =
      check::diff(check::make_empty_snapshot(heap.config(), false), check::from_core(heap), opts);
  EXPECT_TRUE(d.empty()) << d.to_string();
  EXPECT_EQ(violations(heap), "");
}

TEST(HeapProtocol, FillFreeAndDeleteOneBlockOfCapacityTwo) {
  core::HostHeap heap(make_config({8, 256}, 1, 1));  // T1: capacity 2, one block
  Ref const ref         = heap.ref<core::HostAtomics>();
  core::SlotRef const a = ref.allocate(1, 11);
  ASSERT_FALSE(a.is_null());
  EXPECT_EQ(a.block, 0u);
  expect_state(heap, {{0, {1, std::uint64_t{1} << a.slot}}});  // active, defrag (1*2 <= 2)
  core::SlotRef const b = ref.allocate(1, 12);
  ASSERT_FALSE(b.is_null());
  EXPECT_NE(a.slot, b.slot);
  expect_state(heap, {{0, {1, 0x3}}});         // full: not active, not a candidate
  EXPECT_TRUE(ref.allocate(1, 13).is_null());  // out of memory, not a hang
  EXPECT_TRUE(ref.allocate(0, 13).is_null());  // no free block for T0 either
  ref.deallocate(1, a);                        // FIRST: active again
  expect_state(heap, {{0, {1, std::uint64_t{1} << b.slot}}});
  ref.deallocate(1, b);  // EMPTY: invalidated and deleted
  expect_state(heap, {});
  EXPECT_EQ(heap.alloc_bitmap(0), core::kFullBitmap);
  core::SlotRef const c = ref.allocate(0, 14);  // the block is reusable for another type
  ASSERT_FALSE(c.is_null());
  expect_state(heap, {{0, {0, std::uint64_t{1} << c.slot}}});
}

TEST(HeapProtocol, DefragBitFollowsTheFillThreshold) {
  // T1 of 128 B has capacity 4; n = 1: a candidate iff used <= 2 (CompactGpu sec. 3).
  core::HostHeap heap(make_config({8, 128}, 1, 1));
  Ref const ref = heap.ref<core::HostAtomics>();
  std::vector<core::SlotRef> objs;
  bool const expected_defrag[] = {true, true, false, false};  // after 1, 2, 3, 4 objects
  std::uint64_t slots          = 0;
  for (int i = 0; i < 4; ++i) {
    objs.push_back(ref.allocate(1, 100 + i));
    ASSERT_FALSE(objs.back().is_null());
    slots |= std::uint64_t{1} << objs.back().slot;
    EXPECT_EQ(ref.defrag(1).get(0), expected_defrag[i]) << "after " << i + 1 << " objects";
    expect_state(heap, {{0, {1, slots}}});
  }
  for (int i = 0; i < 3; ++i) {  // 3, 2, 1 objects left
    slots &= ~(std::uint64_t{1} << objs[i].slot);
    ref.deallocate(1, objs[i]);
    EXPECT_EQ(ref.defrag(1).get(0), i >= 1) << "after freeing " << i + 1;
    expect_state(heap, {{0, {1, slots}}});
  }
}

TEST(HeapProtocol, OutOfMemoryAfterExactlyTheTotalCapacity) {
  core::HostHeap heap(make_config({8, 200}, 4, 1));  // T1: capacity 2, 4 blocks: 8 objects
  Ref const ref = heap.ref<core::HostAtomics>();
  std::vector<core::SlotRef> objs;
  for (std::uint64_t i = 0;; ++i) {
    core::SlotRef const r = ref.allocate(1, i);
    if (r.is_null()) break;
    objs.push_back(r);
    ASSERT_LE(objs.size(), 8u);
  }
  EXPECT_EQ(objs.size(), 8u);
  EXPECT_EQ(violations(heap), "");
  for (auto const& r : objs) ref.deallocate(1, r);
  expect_state(heap, {});
}

TEST(HeapProtocol, WithoutRotationEverySearchTakesTheLowestFreeSlotAndBlock) {
  // HeapStorage::rotate_bitmaps off (DynaSOAr Fig. 12C "NoShift"): the free bitmap, active[T]
  // and the slot pick all search from bit 0. Claim tickets off (claim_wait_rounds 0) so that
  // the free block comes from the free-bitmap search alone (a run's candidate block is not a
  // search, find_or_claim_block). One type of capacity 64, 4 blocks: object i lands in block
  // i / 64, slot i % 64, whatever the seeds; freed slots are reused lowest block first.
  core::HostHeap heap(make_config({64}, 4, 1));
  core::HeapStorage storage = heap.storage();
  storage.rotate_bitmaps    = false;
  storage.claim_wait_rounds = 0;
  Ref const ref(storage);
  ASSERT_EQ(heap.config().capacity(0), 64u);
  std::vector<core::SlotRef> objs;
  for (std::uint64_t i = 0; i < 4 * 64; ++i) {
    core::SlotRef const r = ref.allocate(0, 0x9E3779B97F4A7C15ull * (i + 7));
    ASSERT_FALSE(r.is_null()) << "object " << i;
    EXPECT_EQ(r.block, i / 64) << "object " << i;
    EXPECT_EQ(r.slot, i % 64) << "object " << i;
    objs.push_back(r);
  }
  EXPECT_TRUE(ref.allocate(0, 1).is_null());
  ref.deallocate(0, objs[2 * 64 + 5]);  // block 2, slot 5
  ref.deallocate(0, objs[1 * 64 + 9]);  // block 1, slot 9
  ref.deallocate(0, objs[1 * 64 + 7]);  // block 1, slot 7
  std::vector<std::pair<std::uint32_t, std::uint32_t>> const want = {{1, 7}, {1, 9}, {2, 5}};
  for (auto const& [block, slot] : want) {
    core::SlotRef const r = ref.allocate(0, 0xDEADBEEFull * (block + 3 * slot));
    ASSERT_FALSE(r.is_null());
    EXPECT_EQ(r.block, block);
    EXPECT_EQ(r.slot, slot);
  }
  EXPECT_EQ(violations(heap), "");
}

TEST(HeapProtocol, WithRotationTheSeedsSpreadTheSlotsAndBlocks) {
  // The default (rotation on, DynaSOAr sec. 4.2) on the same heap and seeds: the placement is
  // not the lowest-first order of the test above (deterministic: the seeds are fixed).
  core::HostHeap heap(make_config({64}, 4, 1));
  core::HeapStorage storage = heap.storage();
  ASSERT_TRUE(storage.rotate_bitmaps);
  storage.claim_wait_rounds = 0;
  Ref const ref(storage);
  std::uint32_t lowest_first = 0;
  for (std::uint64_t i = 0; i < 64; ++i) {
    core::SlotRef const r = ref.allocate(0, 0x9E3779B97F4A7C15ull * (i + 7));
    ASSERT_FALSE(r.is_null());
    lowest_first += (r.block == 0 && r.slot == i) ? 1u : 0u;
  }
  EXPECT_LT(lowest_first, 64u);
  EXPECT_EQ(violations(heap), "");
}

TEST(HeapProtocol, ReservationInABlockThatChangedTypeIsRolledBack) {
  // App. A.3 "Block Replaced (Different Type)": a thread selected block 0 while it had type T1,
  // the block was deleted and re-initialized as T0, then the thread reserves in it.
  core::HostHeap heap(make_config({8, 256}, 1, 1));
  Ref const ref           = heap.ref<core::HostAtomics>();
  core::SlotRef const old = ref.allocate(1, 1);
  ref.deallocate(1, old);                       // block 0 deleted
  core::SlotRef const t0 = ref.allocate(0, 2);  // re-initialized as T0
  ASSERT_EQ(t0.block, 0u);
  auto const r = ref.blocks().try_reserve(0, 1, 3);  // the stale thread's reservation
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(ref.commit_reservation(1, 0, r));  // type check fails: rolled back
  expect_state(heap, {{0, {0, std::uint64_t{1} << t0.slot}}});
}

TEST(HeapProtocol, StaleSelectionOfADeletedBlockFails) {
  // App. A.3 "Block Deallocated": the selected block was deleted; the reservation fails.
  core::HostHeap heap(make_config({8, 256}, 2, 1));
  Ref const ref         = heap.ref<core::HostAtomics>();
  core::SlotRef const a = ref.allocate(1, 1);
  ref.deallocate(1, a);
  EXPECT_FALSE(ref.blocks().try_reserve(a.block, 1, 0).ok());
  expect_state(heap, {});
}

TEST(HeapProtocol, InvalidationOfABlockWithALiveObjectRollsBack) {
  // App. A.4 "Allocate after Delete-Last": a thread that saw EMPTY invalidates while another
  // thread holds a slot again. Invalidation takes the 3 free slots, finds slot in use, rolls
  // back; the heap must be exactly as before (defrag: -1 at the invalidation, +1 at the rollback).
  core::HostHeap heap(make_config({8, 128}, 1, 1));
  Ref const ref         = heap.ref<core::HostAtomics>();
  core::SlotRef const a = ref.allocate(1, 5);
  ASSERT_FALSE(a.is_null());
  EXPECT_FALSE(ref.invalidate_block(0));
  expect_state(heap, {{0, {1, std::uint64_t{1} << a.slot}}});
  EXPECT_FALSE(ref.invalidate_block(0));  // idempotent
  ref.deallocate(1, a);
  expect_state(heap, {});
  EXPECT_FALSE(ref.invalidate_block(0));  // a deleted block: nothing invalidated
  expect_state(heap, {});
}

namespace {
/// Counts the loads the core issues on this thread (ObservedAtomics without a scheduler).
class LoadCounter final : public core::AtomicObserver {
 public:
  int loads = 0;
  void before_atomic(core::AtomicAccess const& a) override {
    if (a.op == core::AtomicOp::load) ++loads;
  }
  void after_atomic(core::AtomicAccess const&, std::uint64_t, std::uint64_t) override {}
  void on_backoff(core::Backoff) override {}
};
}  // namespace

TEST(HeapProtocol, ActiveLookupsEndWhenTheTopLevelIsEmpty) {
  // r = 5 lookups (DynaSOAr Alg. 1 line 2), 200 blocks: active[T] has two levels. On an empty
  // active[T] the first lookup reads the top word and the others would read it again: one load.
  // Below the top (a summary bit whose container is empty, sec. 4.1.4) every lookup descends:
  // 5 x 2 loads. (Issue 30; heap_protocol.hpp find_active_block.)
  core::HostHeap heap(make_config({8, 256}, 200, 1), 5);
  auto const ref = heap.ref<core::ObservedAtomics>();
  LoadCounter counter;
  {
    core::ScopedAtomicObserver const scope(&counter);
    EXPECT_EQ(ref.find_active_block(0, 99), core::kNotFound);
  }
  EXPECT_EQ(counter.loads, 1);
  std::uint64_t* const top = ref.active(0).container(1, 0);
  *top                     = 1;  // the summary of level-0 word 0 (blocks 0..63), word 0 empty
  counter.loads            = 0;
  {
    core::ScopedAtomicObserver const scope(&counter);
    EXPECT_EQ(ref.find_active_block(0, 99), core::kNotFound);
  }
  EXPECT_EQ(counter.loads, 10);
  *top = 0;
}

namespace {
/// The addresses of the loads the core issues on this thread, in order.
class LoadLog final : public core::AtomicObserver {
 public:
  std::vector<void const*> loads;
  void before_atomic(core::AtomicAccess const& a) override {
    if (a.op == core::AtomicOp::load) loads.push_back(a.address);
  }
  void after_atomic(core::AtomicAccess const&, std::uint64_t, std::uint64_t) override {}
  void on_backoff(core::Backoff) override {}
  [[nodiscard]] int count(void const* address) const {
    return static_cast<int>(std::count(loads.begin(), loads.end(), address));
  }
  [[nodiscard]] int count_in(void const* begin, void const* end) const {
    return static_cast<int>(std::count_if(loads.begin(), loads.end(), [&](void const* p) {
      return std::less_equal<>()(begin, p) && std::less<>()(p, end);
    }));
  }
};

/// Entry `slot` of type t's block hints of a HostHeap (HeapProtocol::reserve_slots "Block hints").
std::uint32_t& hint_of(core::HostHeap& heap, std::uint32_t t, std::uint32_t slot) {
  core::HeapStorage const s = heap.storage();
  return s.block_hints[std::uint64_t{t} * s.hint_slots + slot];
}
}  // namespace

TEST(HeapProtocol, ABlockHintIsStoredAndSkipsTheLookupOfActive) {
  // 200 blocks: active[T0] has two levels. T0 has 32 slots per block (8-byte objects next to a
  // 256-byte type). Every call with hint 1 first loads the entry and active[T0]'s top-level word
  // (both before either is used); the first call finds the entry empty, looks up from that word
  // without loading it again, opens a block and stores it in entry 1; the next ones reserve there
  // and read no other word of active[T0].
  core::HostHeap heap(make_config({8, 256}, 200, 1));
  auto const ref                = heap.ref<core::ObservedAtomics>();
  std::uint32_t const cap       = heap.config().capacity(0);
  core::HeapStorage const s     = heap.storage();
  std::uint64_t const* const a0 = s.active_words;
  void const* const top         = ref.active(0).container(1, 0);
  void const* const entry       = &hint_of(heap, 0, 1);
  EXPECT_EQ(hint_of(heap, 0, 1), core::kNotFound);  // a fresh heap has no hints
  LoadLog log;
  core::SlotRef first;
  {
    core::ScopedAtomicObserver const scope(&log);
    first = ref.allocate(0, 5, 1);
  }
  ASSERT_FALSE(first.is_null());
  ASSERT_GE(log.loads.size(), 2u);
  EXPECT_EQ(log.loads[0], entry);
  EXPECT_EQ(log.loads[1], top);
  EXPECT_EQ(log.count(top), 1) << "the lookup loaded the top-level word again";
  EXPECT_EQ(hint_of(heap, 0, 1), first.block);
  EXPECT_EQ(hint_of(heap, 0, 0), core::kNotFound);  // other entries untouched
  std::uint64_t slots = std::uint64_t{1} << first.slot;
  for (std::uint32_t i = 1; i + 1 < cap; ++i) {
    core::SlotRef r;
    log.loads.clear();
    {
      core::ScopedAtomicObserver const scope(&log);
      r = ref.allocate(0, 100 + i, 1);
    }
    ASSERT_FALSE(r.is_null());
    EXPECT_EQ(r.block, first.block) << "allocation " << i;
    slots |= std::uint64_t{1} << r.slot;
    ASSERT_GE(log.loads.size(), 2u);
    EXPECT_EQ(log.loads[0], entry);
    EXPECT_EQ(log.loads[1], top);
    EXPECT_EQ(log.count_in(a0, a0 + s.layout.total_words), 1)
        << "a hinted round read active[T0] beyond its top-level word, allocation " << i;
  }
  EXPECT_EQ(hint_of(heap, 0, 1), first.block);
  // The reservation that fills the block takes the hint back.
  core::SlotRef const last = ref.allocate(0, 7, 1);
  ASSERT_FALSE(last.is_null());
  EXPECT_EQ(last.block, first.block);
  slots |= std::uint64_t{1} << last.slot;
  EXPECT_EQ(hint_of(heap, 0, 1), core::kNotFound);
  expect_state(heap, {{first.block, {0, slots}}});
}

TEST(HeapProtocol, AStaleBlockHintIsACandidateThatTheReservationRejects) {
  // A hint may name any block by the time it is used (App. A.3): one of another type (the
  // reservation is rolled back by the type check), a free one (its bitmap is all ones), a full
  // one, or no block at all. Each time the allocation takes a T0 block, the state stays exact and
  // the entry is cleared.
  core::HostHeap heap(make_config({8, 256}, 8, 1));
  Ref const ref           = heap.ref<core::HostAtomics>();
  core::SlotRef const big = ref.allocate(1, 3);  // a T1 block (capacity 2)
  ASSERT_FALSE(big.is_null());
  std::uint32_t const free_block = big.block == 7u ? 6u : 7u;
  std::map<std::uint32_t, std::pair<std::uint32_t, std::uint64_t>> objects{
      {big.block, {1, std::uint64_t{1} << big.slot}}};
  for (std::uint32_t stale : {big.block, free_block, 12345u}) {
    hint_of(heap, 0, 2)   = stale;
    core::SlotRef const r = ref.allocate(0, 40 + stale, 2);
    ASSERT_FALSE(r.is_null()) << "hint " << stale;
    EXPECT_NE(r.block, big.block) << "hint " << stale;
    EXPECT_EQ(heap.block_type(r.block), 0u) << "hint " << stale;
    objects[r.block].first = 0;
    objects[r.block].second |= std::uint64_t{1} << r.slot;
    EXPECT_EQ(hint_of(heap, 0, 2), r.block) << "hint " << stale;  // the block it reserved in
    expect_state(heap, objects);
  }
  // A full block of T1 named as a T0 hint: nothing reserved there, entry cleared on the way.
  core::SlotRef const big2 = ref.allocate(1, 4);
  ASSERT_EQ(big2.block, big.block);  // fills it
  objects[big.block].second |= std::uint64_t{1} << big2.slot;
  hint_of(heap, 0, 3)   = big.block;
  core::SlotRef const r = ref.allocate(0, 77, 3);
  ASSERT_FALSE(r.is_null());
  EXPECT_EQ(heap.block_type(r.block), 0u);
  objects[r.block].second |= std::uint64_t{1} << r.slot;
  expect_state(heap, objects);
  // Without a hint argument the entries are neither read nor written.
  hint_of(heap, 0, 0)   = big.block;
  core::SlotRef const n = ref.allocate(0, 78);
  ASSERT_FALSE(n.is_null());
  EXPECT_EQ(hint_of(heap, 0, 0), big.block);
}

TEST(HeapProtocol, BadRequestsAreRejectedWithClearErrors) {
  core::HostHeap heap(make_config({8, 256}, 1, 1));
  Ref const ref = heap.ref<core::HostAtomics>();
  EXPECT_THROW(ref.allocate(2, 0), core::precondition_error);  // no type 2
  core::SlotRef const a = ref.allocate(1, 0);
  EXPECT_THROW(ref.deallocate(0, a), core::precondition_error);  // wrong type
  ref.deallocate(1, a);
  // Capacity 1 (a type 64x the smallest) leaves no legal defragmentation factor.
  EXPECT_THROW(core::HostHeap(make_config({8, 512}, 1, 1)), core::precondition_error);
}

TEST(HeapProtocol, AddressesHaveSymbolicNames) {
  core::HostHeap heap(make_config({8, 256}, 70, 1));  // 70 blocks: two levels
  core::HeapStorage const s = heap.storage();
  EXPECT_EQ(heap.describe_address(s.alloc_bitmaps + 1), "alloc_bitmap[block 1]");
  EXPECT_EQ(heap.describe_address(s.block_types + 69), "type[block 69]");
  EXPECT_EQ(heap.describe_address(s.iter_bitmaps), "iter_bitmap[block 0]");
  EXPECT_EQ(heap.describe_address(s.free_words + 1), "free.L0[1]");
  EXPECT_EQ(heap.describe_address(s.free_words + 2), "free.L1[0]");
  EXPECT_EQ(heap.describe_address(s.active_words + s.layout.total_words), "active[T1].L0[0]");
  EXPECT_EQ(heap.describe_address(s.defrag_words + 2), "defrag[T0].L1[0]");
  int unrelated = 0;
  EXPECT_EQ(heap.describe_address(&unrelated), "");
}

TEST(FromCore, SeesCorruptedStateSoTheCatalogCanReportIt) {
  core::HostHeap heap(make_config({8, 256}, 2, 1));
  core::HeapStorage const s = heap.storage();
  s.alloc_bitmaps[1]        = 0;  // a free block that accepts reservations
  bool invalidated_reported = false;
  for (auto const& v : check::check_all(check::from_core(heap)))
    invalidated_reported =
        invalidated_reported || (v.invariant == "free-block-invalidated" && v.block == 1);
  EXPECT_TRUE(invalidated_reported);
  s.alloc_bitmaps[1] = core::kFullBitmap;
  s.active_words[0] |= 1;  // active[T0] without allocated[T0]
  bool found = false;
  for (auto const& v : check::check_all(check::from_core(heap)))
    found = found || v.invariant == "active-implies-allocated";
  EXPECT_TRUE(found);
}

TEST(FromCore, StorageOverloadAgreesWithHostHeapOverload) {
  core::HostHeap heap(make_config({8, 100, 256}, 3, 1));
  Ref const ref = heap.ref<core::HostAtomics>();
  ref.allocate(1, 1);
  ref.allocate(2, 2);
  auto const d =
      check::diff(check::from_core(heap), check::from_core(heap.config(), heap.storage()));
  EXPECT_TRUE(d.empty()) << d.to_string();
  core::HeapConfig other = heap.config();
  other.num_blocks       = 4;
  EXPECT_THROW(check::from_core(other, heap.storage()), core::precondition_error);
}
