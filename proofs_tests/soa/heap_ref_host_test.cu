// The host-callable part of soa::HeapRef (no GPU needed, label cpu; nvcc builds only): object
// pointer encoding and decoding, the well-formedness check of debug builds, field and pointer-
// slot addresses by index (for generic code such as a schedule interpreter) against the layout
// worked out by hand in heap_test_types.hpp / proofs_tests/soa/heap_host_test.cpp.
#include "heaplab/soa/heap_ref.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <type_traits>

#include "heap_test_types.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/core/object_pointer.hpp"

using namespace heap_test;
namespace core = heaplab::core;

namespace {

constexpr std::uint64_t kBase = std::uint64_t{1} << 30;  // a 128-aligned fake block area

Ref fake_ref(std::uint32_t num_blocks) {
  core::HeapStorage storage;
  storage.num_blocks = num_blocks;
  storage.num_types  = Types::num_types;
  storage.layout     = core::BitmapLayout::for_bits(num_blocks);
  return Ref(storage, kBase, nullptr, soa::kDefaultOomRetries);
}

std::uint64_t with_type_bits(std::uint64_t p, std::uint64_t type) {
  return (p & ~(std::uint64_t{0xFF} << 56)) | (type << 56);
}

}  // namespace

static_assert(soa::heap_ref_is_trivially_copyable<Types>);
static_assert(Ref::block_bytes() == 1408);

TEST(HeapRefHost, ObjectPointersRoundTrip) {
  Ref const ref = fake_ref(10);
  for (std::uint32_t b : {0u, 1u, 9u}) {
    for (std::uint32_t t : {kLeaf, kNode, kFat}) {
      std::uint32_t const cap = Ref::layout().types[t].capacity;
      for (std::uint32_t s : {0u, 1u, cap - 1u}) {
        std::uint64_t const p = ref.object_pointer(b, s, t);
        EXPECT_EQ(core::pointer_block_address(p), kBase + b * 1408ull);
        EXPECT_EQ(core::pointer_slot(p), s);
        EXPECT_EQ(core::pointer_type(p), t);
        EXPECT_EQ(core::pointer_capacity(p), cap);
        EXPECT_EQ(ref.locate(p).block, b);
        EXPECT_EQ(ref.locate(p).slot, s);
        EXPECT_TRUE(ref.contains(p));
      }
    }
  }
}

TEST(HeapRefHost, ContainsRejectsEveryMalformedPointer) {
  Ref const ref            = fake_ref(10);
  std::uint64_t const leaf = ref.object_pointer(3, 5, kLeaf);
  EXPECT_TRUE(ref.contains(leaf));
  EXPECT_FALSE(ref.contains(0));
  EXPECT_FALSE(ref.contains(ref.object_pointer(10, 0, kLeaf)));        // past the end
  EXPECT_FALSE(ref.contains(leaf - 3 * 1408 - 1408 - 64 + 5 - 5));     // below the base
  EXPECT_FALSE(ref.contains(leaf + 64));                               // not a block boundary
  EXPECT_FALSE(ref.contains(with_type_bits(leaf, 0)));                 // abstract Tracked
  EXPECT_FALSE(ref.contains(with_type_bits(leaf, Types::num_types)));  // unknown type
  EXPECT_FALSE(ref.contains(ref.object_pointer(3, 0, kFat) | 16u));    // slot == capacity 16
  EXPECT_FALSE(ref.contains((leaf & ~(std::uint64_t{0x3F} << 50)) | (std::uint64_t{28} << 50)));
}

TEST(HeapRefHost, FieldAndPointerSlotAddressesFollowTheLayout) {
  Ref const ref = fake_ref(4);
  // Node (N = 29): id_ 0, cookie_ 256, next_ 512, kids_ 768 / 1024, weight_ 1280.
  std::uint64_t const node = ref.object_pointer(2, 7, kNode);
  std::uint64_t const blk  = kBase + 2 * 1408ull;
  auto addr                = [](void const* p) { return reinterpret_cast<std::uint64_t>(p); };
  EXPECT_EQ(addr(ref.field_address(node, 0)), blk + 0 + 7 * 8);
  EXPECT_EQ(addr(ref.field_address(node, 1)), blk + 256 + 7 * 8);
  EXPECT_EQ(addr(ref.field_address(node, 3, 1)), blk + 1024 + 7 * 8);
  EXPECT_EQ(addr(ref.field_address(node, 4)), blk + 1280 + 7 * 4);
  EXPECT_EQ(Ref::num_pointer_slots(kNode), 3u);
  // Node's pointer slots by field: next_ (field 2) is slot 0, kids_ (field 3) slots 1 and 2.
  constexpr auto table = Types::layout_table();
  EXPECT_EQ(table.pointer_slots_before(kNode, 2), 0u);
  EXPECT_EQ(table.pointer_slots_before(kNode, 3), 1u);
  EXPECT_EQ(table.pointer_slots_before(kNode, 4), 3u);
  EXPECT_EQ(addr(ref.pointer_slot_address(node, 0)), blk + 512 + 56);
  EXPECT_EQ(addr(ref.pointer_slot_address(node, 1)), blk + 768 + 56);
  EXPECT_EQ(addr(ref.pointer_slot_address(node, 2)), blk + 1024 + 56);
  EXPECT_EQ(ref.pointer_slot_address(node, 3), nullptr);
  // Fat (N = 16): id_ 0, cookie_ 128, next_ 256, kids_ 384 / 512, weight_ 640, extra_ 768...
  std::uint64_t const fat = ref.object_pointer(1, 3, kFat);
  std::uint64_t const fb  = kBase + 1408;
  EXPECT_EQ(Ref::num_pointer_slots(kFat), 3u);
  EXPECT_EQ(addr(ref.pointer_slot_address(fat, 0)), fb + 256 + 24);
  EXPECT_EQ(addr(ref.pointer_slot_address(fat, 2)), fb + 512 + 24);
  EXPECT_EQ(addr(ref.field_address(fat, 5, 3)), fb + 768 + 3 * 128 + 24);  // extra_[3]
  // Leaf (N = 64): id_ 0, cookie_ 512, value_ 1024; no pointer slots.
  std::uint64_t const leaf = ref.object_pointer(0, 63, kLeaf);
  EXPECT_EQ(Ref::num_pointer_slots(kLeaf), 0u);
  EXPECT_EQ(ref.pointer_slot_address(leaf, 0), nullptr);
  EXPECT_EQ(addr(ref.field_address(leaf, 2)), kBase + 1024 + 63 * 4);
}

TEST(HeapRefHost, InitializeTrackedWritesIdCookieAndNullPointers) {
  // A real (host) block area so that the writes land somewhere: 2 blocks, filled with 0xAB.
  alignas(128) static unsigned char area[2 * 1408];
  std::fill(std::begin(area), std::end(area), 0xAB);
  core::HeapStorage storage;
  storage.num_blocks = 2;
  storage.num_types  = Types::num_types;
  storage.layout     = core::BitmapLayout::for_bits(2);
  Ref const ref(storage, reinterpret_cast<std::uint64_t>(area), nullptr, soa::kDefaultOomRetries);
  std::uint64_t const node = ref.object_pointer(1, 4, kNode);
  ref.initialize_tracked(node, 77);
  auto u64_at = [&](std::size_t offset) {
    std::uint64_t v = 0;
    std::memcpy(&v, area + 1408 + offset, 8);
    return v;
  };
  EXPECT_EQ(u64_at(0 + 4 * 8), 77u);                             // id_
  EXPECT_EQ(u64_at(256 + 4 * 8), heaplab::core::cookie_of(77));  // cookie_
  EXPECT_EQ(u64_at(512 + 4 * 8), 0u);                            // next_
  EXPECT_EQ(u64_at(768 + 4 * 8), 0u);                            // kids_[0]
  EXPECT_EQ(u64_at(1024 + 4 * 8), 0u);                           // kids_[1]
  EXPECT_EQ(u64_at(512 + 3 * 8), 0xABABABABABABABABull);         // the neighbour is untouched
  EXPECT_EQ(ref.tracked_id(node), 77u);
  EXPECT_TRUE(Ref::is_tracked_type(kNode));
  EXPECT_TRUE(Ref::is_tracked_type(kFat));
  EXPECT_TRUE(Ref::is_tracked_type(0));                  // Tracked itself
  EXPECT_FALSE(Ref::is_tracked_type(Types::num_types));  // no such type
}
