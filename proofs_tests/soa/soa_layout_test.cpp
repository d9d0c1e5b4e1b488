// SOA block layout math (heaplab/soa/layout.hpp): hand-worked numbers and, on random field
// lists, the properties the rule promises (docs/allocator.md "Block layout"), each checked with a
// naive predicate written independently of the code under test.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <vector>

#include "heaplab/soa/layout.hpp"

namespace soa = heaplab::soa;
using soa::FieldShape;

namespace {

// Smallest power of two >= x, one doubling at a time.
std::uint64_t naive_bit_ceil(std::uint64_t x) {
  std::uint64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

// Whether [begin, begin + bytes) crosses a 128-byte line boundary.
bool crosses_line(std::uint64_t begin, std::uint64_t bytes) {
  return begin / 128 != (begin + bytes - 1) / 128;
}

struct Unit {
  std::uint64_t begin;
  std::uint64_t bytes;
};

// Every unit of every field, as the layout places it.
std::vector<Unit> units_of(std::vector<FieldShape> const& shapes, std::uint32_t capacity) {
  std::vector<Unit> out;
  for (std::uint32_t f = 0; f < shapes.size(); ++f) {
    std::uint64_t const first = soa::soa_field_offset(shapes.data(), f, capacity);
    std::uint64_t const begin = soa::soa_field_begin(first, capacity, shapes[f]);
    for (std::uint32_t e = 0; e < shapes[f].elements; ++e)
      out.push_back({begin + e * soa::soa_unit_stride(capacity, shapes[f]),
                     std::uint64_t{capacity} * shapes[f].element_bytes});
  }
  return out;
}

}  // namespace

TEST(SoaLayout, ArrayAlignmentIsMin128AndBitCeil) {
  EXPECT_EQ(soa::soa_array_alignment(1), 1u);
  EXPECT_EQ(soa::soa_array_alignment(2), 2u);
  EXPECT_EQ(soa::soa_array_alignment(3), 4u);
  EXPECT_EQ(soa::soa_array_alignment(20), 32u);
  EXPECT_EQ(soa::soa_array_alignment(40), 64u);
  EXPECT_EQ(soa::soa_array_alignment(64), 64u);
  EXPECT_EQ(soa::soa_array_alignment(65), 128u);
  EXPECT_EQ(soa::soa_array_alignment(127), 128u);
  EXPECT_EQ(soa::soa_array_alignment(128), 128u);
  EXPECT_EQ(soa::soa_array_alignment(129), 128u);
  EXPECT_EQ(soa::soa_array_alignment(4096), 128u);
  for (std::uint64_t b = 1; b < 1000; ++b)
    EXPECT_EQ(soa::soa_array_alignment(b), b >= 128 ? 128u : naive_bit_ceil(b)) << b;
}

TEST(SoaLayout, HandWorkedFieldLists) {
  // float, float, double, float[3], pointer at N = 10 (Star of list A without its own fields):
  // 40 B at 0; 40 B at 64; 80 B at 128; 3 x 40 B at 256 stride 64; 80 B at 512; end 592.
  std::vector<FieldShape> const star{{4, 1}, {4, 1}, {8, 1}, {4, 3}, {8, 1}};
  EXPECT_EQ(soa::soa_field_offset(star.data(), 0, 10), 0u);  // end of no fields
  EXPECT_EQ(soa::soa_field_begin(soa::soa_field_offset(star.data(), 1, 10), 10, star[1]), 64u);
  EXPECT_EQ(soa::soa_field_begin(soa::soa_field_offset(star.data(), 2, 10), 10, star[2]), 128u);
  EXPECT_EQ(soa::soa_field_begin(soa::soa_field_offset(star.data(), 3, 10), 10, star[3]), 256u);
  EXPECT_EQ(soa::soa_unit_stride(10, star[3]), 64u);
  EXPECT_EQ(soa::soa_field_begin(soa::soa_field_offset(star.data(), 4, 10), 10, star[4]), 512u);
  EXPECT_EQ(soa::soa_data_segment_bytes(star.data(), 5, 10), 592u);

  // The same fields at N = 64: 256, 256, 512, 3 x 256, 512 B, all back to back.
  EXPECT_EQ(soa::soa_data_segment_bytes(star.data(), 5, 64), 256u + 256 + 512 + 768 + 512);

  // A 1-byte field before a 12-byte one at N = 64: 64 B at 0, then 768 B at 128.
  std::vector<FieldShape> const leaf{{1, 1}, {12, 1}};
  EXPECT_EQ(soa::soa_field_begin(soa::soa_field_offset(leaf.data(), 1, 64), 64, leaf[1]), 128u);
  EXPECT_EQ(soa::soa_data_segment_bytes(leaf.data(), 2, 64), 896u);

  // 64 one-byte units at N = 1: stride 1, no padding at all.
  std::vector<FieldShape> const huge{{1, 64}};
  EXPECT_EQ(soa::soa_unit_stride(1, huge[0]), 1u);
  EXPECT_EQ(soa::soa_data_segment_bytes(huge.data(), 1, 1), 64u);

  // 48 floats per unit (192 B): units start on lines, stride 256.
  std::vector<FieldShape> const wide{{4, 2}};
  EXPECT_EQ(soa::soa_unit_stride(48, wide[0]), 256u);
  EXPECT_EQ(soa::soa_data_segment_bytes(wide.data(), 1, 48), 256u + 192);
}

TEST(SoaLayout, BlockBytesCoverDataAndForwardingPointers) {
  EXPECT_EQ(soa::forwarding_bytes(64), 512u);
  EXPECT_EQ(soa::block_bytes_for(64, 64), 512u);   // forwarding pointers dominate
  EXPECT_EQ(soa::block_bytes_for(600, 64), 640u);  // data dominates, rounded up to 128
  EXPECT_EQ(soa::block_bytes_for(640, 16), 640u);  // already a multiple of 128
  EXPECT_EQ(soa::block_bytes_for(1, 1), 128u);     // never below one line
  EXPECT_EQ(soa::block_bytes_for(884, 10), 896u);
}

// On random field lists and capacities: units are aligned as promised, never overlap, stay in
// the data segment, lie in declaration order, and a prefix of fields is laid out identically
// whatever follows it (what inheritance relies on).
RC_GTEST_PROP(SoaLayout, RandomFieldListsKeepTheLayoutPromises, ()) {
  auto const count    = *rc::gen::inRange<std::uint32_t>(1, 12);
  auto const capacity = *rc::gen::inRange<std::uint32_t>(1, 65);
  std::vector<FieldShape> shapes;
  for (std::uint32_t f = 0; f < count; ++f) {
    auto const size = *rc::gen::element(1u, 2u, 3u, 4u, 8u, 12u, 16u, 24u, 40u, 64u);
    auto const k    = *rc::gen::element(1u, 1u, 1u, 2u, 3u, 7u);
    shapes.push_back({size, k});
  }
  auto const units          = units_of(shapes, capacity);
  std::uint64_t const total = soa::soa_data_segment_bytes(shapes.data(), count, capacity);
  for (std::size_t i = 0; i < units.size(); ++i) {
    Unit const u = units[i];
    if (u.bytes >= 128) {
      RC_ASSERT(u.begin % 128 == 0);
    } else {
      RC_ASSERT(!crosses_line(u.begin, u.bytes));
      RC_ASSERT(u.begin % naive_bit_ceil(u.bytes) == 0);
    }
    RC_ASSERT(u.begin + u.bytes <= total);
    if (i > 0) RC_ASSERT(units[i - 1].begin + units[i - 1].bytes <= u.begin);  // ordered, disjoint
  }
  RC_ASSERT(units.back().begin + units.back().bytes == total);
  // Every element is aligned for its size class (the element sizes here are their own alignment
  // or multiples of 4).
  for (std::uint32_t f = 0, u = 0; f < count; ++f) {
    for (std::uint32_t e = 0; e < shapes[f].elements; ++e, ++u) {
      std::uint64_t const align = shapes[f].element_bytes % 8 == 0 ? 8 : 4;
      if (shapes[f].element_bytes >= 4) RC_ASSERT(units[u].begin % align == 0);
    }
  }
  // Prefix stability: dropping trailing fields does not move the remaining ones.
  auto const keep = *rc::gen::inRange<std::uint32_t>(1, count + 1);
  std::vector<FieldShape> const prefix(shapes.begin(), shapes.begin() + keep);
  auto const prefix_units = units_of(prefix, capacity);
  for (std::size_t i = 0; i < prefix_units.size(); ++i)
    RC_ASSERT(prefix_units[i].begin == units[i].begin);
}
