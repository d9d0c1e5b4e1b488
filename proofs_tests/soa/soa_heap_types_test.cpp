// Heap type reflection (heaplab/soa/heap_types.hpp, host_config.hpp) against hand-worked numbers
// (soa_test_types.hpp) and against core::HeapConfig's own, independently written queries
// (capacity, pointer_slots, slot_may_point_to).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "heaplab/core/heap_config.hpp"
#include "heaplab/soa/host_config.hpp"
#include "soa_test_types.hpp"

namespace core = heaplab::core;
namespace soa  = heaplab::soa;
using namespace soa_test;

// List D: an abstract root with a pointer field, a subclass with several pointer fields between
// plain ones (pointer field indices), worked out by hand.
//   sizes: Shape 8+4 = 12, Group 12+24+4+8 = 48, Dot 12+4 = 16 (smallest)
//   capacities: Group floor(64*16/48) = 21, Dot 64
//   Group, N = 21: parent_ 168 B at 0; id_ 84 B (align 128) at 256; members_ 3 x 168 B (stride
//   256) at 384, 640, 896 (end 1064); scale_ 84 B at 1152; outer_ 168 B at 1280; end 1448 -> 1536.
//   Dot, N = 64: parent_ 512 B at 0; id_ 256 B at 512; r_ 256 B at 768; end 1024.
namespace list_d {
class Shape {
 public:
  HEAPLAB_SOA_ABSTRACT(Shape);
  HEAPLAB_SOA_FIELDS(Shape, (Shape*, parent_), (int, id_));
};
class Group : public Shape {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(
      Group, Shape, (Shape* [3], members_), (float, scale_), (Group*, outer_));
};
class Dot : public Shape {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Dot, Shape, (float, r_));
};
using ListD = soa::HeapTypes<Shape, Group, Dot>;
static_assert(ListD::size_bytes<Group> == 48 && ListD::size_bytes<Dot> == 16);
static_assert(ListD::capacity<Group> == 21 && ListD::capacity<Dot> == 64);
static_assert(ListD::field_offset<Group, 2>(21) == 384 &&
              ListD::field_offset<Group, 4>(21) == 1280);
static_assert(ListD::block_bytes == 1536);
}  // namespace list_d
using list_d::ListD;

// ---------------------------------------------------------------- compile-time facts

static_assert(ListA::num_types == 4);
static_assert(ListA::type_id<Particle> == 0 && ListA::type_id<Body> == 1 &&
              ListA::type_id<Spark> == 2 && ListA::type_id<Star> == 3);
static_assert(std::is_same_v<ListA::type<3>, Star>);
static_assert(ListA::is_abstract<Particle> && !ListA::is_abstract<Body> &&
              !ListA::is_abstract<Spark> && !ListA::is_abstract<Star>);
static_assert(ListA::base_id<Particle> == soa::kNoType && ListA::base_id<Body> == 0 &&
              ListA::base_id<Spark> == 0 && ListA::base_id<Star> == 1);
static_assert(ListA::num_fields<Particle> == 2 && ListA::num_fields<Body> == 5 &&
              ListA::num_fields<Spark> == 3 && ListA::num_fields<Star> == 7);
static_assert(ListA::size_bytes<Particle> == 8 && ListA::size_bytes<Body> == 36 &&
              ListA::size_bytes<Spark> == 9 && ListA::size_bytes<Star> == 54);
static_assert(ListA::smallest_size == 9);
static_assert(ListA::capacity<Particle> == 0 && ListA::capacity<Body> == 16 &&
              ListA::capacity<Spark> == 64 && ListA::capacity<Star> == 10);
static_assert(ListA::block_bytes == list_a::kBlockBytes);
static_assert(soa::block_bytes<ListA>() == list_a::kBlockBytes);
// Field offsets as a function of the capacity: Star's fields at N_Star, and Body's fields (a
// prefix of Star's) at both capacities.
static_assert(ListA::field_offset<Star, 4>(10) == list_a::kStarNext);
static_assert(ListA::field_offset<Star, 5>(10) == list_a::kStarPlanets);
static_assert(ListA::field_offset<Star, 6>(10) == list_a::kStarKind);
static_assert(ListA::field_offset<Body, 4>(10) == list_a::kStarNext);
static_assert(ListA::field_offset<Body, 4>(16) == list_a::kBodyNext);
static_assert(ListA::field_offset<Particle, 1>(64) == list_a::kSparkY);
static_assert(ListA::data_segment_bytes<Spark> == 576 && ListA::data_segment_bytes<Body> == 640 &&
              ListA::data_segment_bytes<Star> == 884 && ListA::data_segment_bytes<Particle> == 0);

static_assert(ListB::capacity<Tiny> == 64 && ListB::capacity<Huge> == 1);
static_assert(ListB::size_bytes<Huge> == 64);
static_assert(ListB::block_bytes == list_b::kBlockBytes);

static_assert(ListC::capacity<Node> == 52 && ListC::capacity<Leaf> == 64);
static_assert(ListC::block_bytes == list_c::kBlockBytes);
static_assert(ListC::field_offset<Node, 1>(52) == list_c::kNodeId);
static_assert(ListC::field_offset<Leaf, 1>(64) == list_c::kLeafPos);

// The table is one trivially copyable value (it is handed to kernels by value).
static_assert(std::is_trivially_copyable_v<ListA::Table>);

// ---------------------------------------------------------------- layout table

TEST(SoaHeapTypes, TableTypesMatchHandWorkedNumbers) {
  constexpr auto table = ListA::layout_table();
  EXPECT_EQ(table.block_bytes, list_a::kBlockBytes);
  struct Want {
    std::uint32_t size, capacity, base, abstract, num_fields, data;
  };
  Want const want[] = {{8, 0, soa::kNoType, 1, 2, 0},
                       {36, 16, 0, 0, 5, 640},
                       {9, 64, 0, 0, 3, 576},
                       {54, 10, 1, 0, 7, 884}};
  for (std::uint32_t t = 0; t < 4; ++t) {
    SCOPED_TRACE(t);
    EXPECT_EQ(table.types[t].size_bytes, want[t].size);
    EXPECT_EQ(table.types[t].capacity, want[t].capacity);
    EXPECT_EQ(table.types[t].base, want[t].base);
    EXPECT_EQ(table.types[t].is_abstract, want[t].abstract);
    EXPECT_EQ(table.types[t].num_fields, want[t].num_fields);
    EXPECT_EQ(table.types[t].data_bytes, want[t].data);
  }
}

TEST(SoaHeapTypes, TableFieldsOfStarAreInheritedFirstWithHandWorkedOffsets) {
  constexpr auto table = ListA::layout_table();
  using list_a::kStarKind, list_a::kStarMass, list_a::kStarNext, list_a::kStarPlanets,
      list_a::kStarVel, list_a::kStarX, list_a::kStarY;
  struct Want {
    std::uint32_t declaring, own_index, bytes, elements, pointee, pointer_field, offset, stride;
    char const* name;
  };
  std::uint32_t const none = soa::kNoType;
  Want const want[]        = {
             {0, 0, 4, 1, none, none, kStarX, 64, "x_"},
             {0, 1, 4, 1, none, none, kStarY, 64, "y_"},
             {1, 0, 8, 1, none, none, kStarMass, 128, "mass_"},
             {1, 1, 4, 3, none, none, kStarVel, list_a::kStarVelStride, "vel_"},
             {1, 2, 8, 1, 1, 0, kStarNext, 128, "next_"},
             {3, 0, 8, 2, 0, 0, kStarPlanets, list_a::kStarPlanetsStride, "planets_"},
             {3, 1, 2, 1, none, none, kStarKind, 32, "kind_"},
  };
  for (std::uint32_t j = 0; j < 7; ++j) {
    SCOPED_TRACE(j);
    soa::FieldLayout const& f = table.field(3, j);
    EXPECT_EQ(f.declaring_type, want[j].declaring);
    EXPECT_EQ(f.own_index, want[j].own_index);
    EXPECT_EQ(f.element_bytes, want[j].bytes);
    EXPECT_EQ(f.elements, want[j].elements);
    EXPECT_EQ(f.pointee, want[j].pointee);
    EXPECT_EQ(f.pointer_field, want[j].pointer_field);
    EXPECT_EQ(f.offset, want[j].offset);
    EXPECT_EQ(f.stride, want[j].stride);
    EXPECT_EQ(std::string(ListA::field_name(3, j)), want[j].name);
    EXPECT_EQ(table.unit_offset(3, j, 0), want[j].offset);
    EXPECT_EQ(table.unit_offset_at(3, j, 0, 10), want[j].offset);
  }
  EXPECT_EQ(table.unit_offset(3, 5, 1), std::uint64_t{list_a::kStarPlanets} + 128);
  // Body's view of a Star block (capacity 10) finds Star's offsets; at 16 it finds Body's.
  EXPECT_EQ(table.unit_offset_at(1, 3, 2, 10), std::uint64_t{list_a::kStarVel} + 2 * 64);
  EXPECT_EQ(table.unit_offset_at(1, 4, 0, 16), list_a::kBodyNext);
  EXPECT_EQ(table.unit_offset(1, 3, 2), std::uint64_t{list_a::kBodyVel} + 2 * 64);
  EXPECT_EQ(std::string(ListA::type_name(3)), "Star");
}

// The names the field macros record, in declaration order: the last part of each entry, also
// when the type before it contains commas (list E).
TEST(SoaHeapTypes, FieldNamesFollowTheDeclarationOrder) {
  char const* const commas[] = {"tri_", "plain_", "seven_", "tris_"};
  for (std::uint32_t j = 0; j < 4; ++j) EXPECT_EQ(std::string(ListE::field_name(0, j)), commas[j]);
  for (std::uint32_t j = 0; j < 64; ++j) {
    std::string const want{static_cast<char>('a' + j / 8), static_cast<char>('0' + j % 8), '_'};
    EXPECT_EQ(std::string(ListE::field_name(1, j)), want) << j;
  }
  EXPECT_EQ(std::string(ListE::type_name(1)), "Wide");
}

// CompactGpu sec. 3.4: the SOA arrays that may hold a pointer to each type, worked out by hand.
TEST(SoaHeapTypes, IncomingPointerArraysMatchHandWorkedList) {
  constexpr auto table = ListA::layout_table();
  using Ref            = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;
  auto incoming        = [&](std::uint32_t t) {
    std::vector<Ref> out;
    for (std::uint32_t i = table.incoming_begin[t]; i < table.incoming_begin[t + 1]; ++i)
      out.emplace_back(table.incoming[i].type,
                       table.incoming[i].field,
                       table.incoming[i].element,
                       table.incoming[i].offset);
    return out;
  };
  // Particle is abstract: never a defragmentation target.
  EXPECT_EQ(incoming(0), std::vector<Ref>{});
  // A Body may be referenced by Body::next_, Star's inherited next_ and Star::planets_[0..1]
  // (declared Particle*).
  EXPECT_EQ(incoming(1),
            (std::vector<Ref>{{1, 4, 0, 512}, {3, 4, 0, 512}, {3, 5, 0, 640}, {3, 5, 1, 768}}));
  // A Spark is no Body: only planets_.
  EXPECT_EQ(incoming(2), (std::vector<Ref>{{3, 5, 0, 640}, {3, 5, 1, 768}}));
  // A Star is a Body and a Particle: the same four as Body.
  EXPECT_EQ(incoming(3),
            (std::vector<Ref>{{1, 4, 0, 512}, {3, 4, 0, 512}, {3, 5, 0, 640}, {3, 5, 1, 768}}));
  EXPECT_EQ(ListA::total_incoming, 10u);
}

// ---------------------------------------------------------------- HeapConfig

TEST(SoaHeapTypes, HeapConfigDescribesListA) {
  core::HeapConfig const cfg = soa::heap_config<ListA>(/*num_blocks=*/100, /*n=*/3, /*k1=*/2);
  ASSERT_EQ(cfg.num_types(), 4u);
  EXPECT_EQ(cfg.num_blocks, 100u);
  EXPECT_EQ(cfg.defrag_factor, 3u);
  EXPECT_EQ(cfg.k1, 2u);
  EXPECT_EQ(cfg.types[0].name, "Particle");
  EXPECT_EQ(cfg.types[1].name, "Body");
  EXPECT_EQ(cfg.types[2].name, "Spark");
  EXPECT_EQ(cfg.types[3].name, "Star");
  EXPECT_EQ(cfg.types[0].size_bytes, 8u);
  EXPECT_EQ(cfg.types[1].size_bytes, 36u);
  EXPECT_EQ(cfg.types[2].size_bytes, 9u);
  EXPECT_EQ(cfg.types[3].size_bytes, 54u);
  EXPECT_FALSE(cfg.types[0].base.has_value());
  EXPECT_EQ(cfg.types[1].base, std::optional<std::uint32_t>(0));
  EXPECT_EQ(cfg.types[2].base, std::optional<std::uint32_t>(0));
  EXPECT_EQ(cfg.types[3].base, std::optional<std::uint32_t>(1));
  EXPECT_TRUE(cfg.types[0].is_abstract);
  EXPECT_FALSE(cfg.types[3].is_abstract);
  EXPECT_TRUE(cfg.types[0].pointer_fields.empty());
  ASSERT_EQ(cfg.types[1].pointer_fields.size(), 1u);
  EXPECT_EQ(cfg.types[1].pointer_fields[0].name, "next_");
  EXPECT_EQ(cfg.types[1].pointer_fields[0].pointee, 1u);
  EXPECT_EQ(cfg.types[1].pointer_fields[0].count, 1u);
  EXPECT_TRUE(cfg.types[2].pointer_fields.empty());
  ASSERT_EQ(cfg.types[3].pointer_fields.size(), 1u);
  EXPECT_EQ(cfg.types[3].pointer_fields[0].name, "planets_");
  EXPECT_EQ(cfg.types[3].pointer_fields[0].pointee, 0u);
  EXPECT_EQ(cfg.types[3].pointer_fields[0].count, 2u);
  // core's capacity formula agrees with ours.
  EXPECT_EQ(cfg.capacity(0), 0u);
  EXPECT_EQ(cfg.capacity(1), 16u);
  EXPECT_EQ(cfg.capacity(2), 64u);
  EXPECT_EQ(cfg.capacity(3), 10u);
}

// HeapConfig::pointer_slots (core's, independent) lists exactly our heap-pointer units, in the
// order of our layout table, for every type of every list.
template <class Types>
void expect_pointer_slots_match(core::HeapConfig const& cfg) {
  constexpr auto table = Types::layout_table();
  for (std::uint32_t t = 0; t < Types::num_types; ++t) {
    SCOPED_TRACE(t);
    std::vector<core::PointerSlot> ours;
    for (std::uint32_t j = 0; j < table.types[t].num_fields; ++j) {
      soa::FieldLayout const& f = table.field(t, j);
      if (!f.is_heap_pointer()) continue;
      for (std::uint32_t e = 0; e < f.elements; ++e)
        ours.push_back({f.declaring_type, f.pointer_field, e, f.pointee});
    }
    auto const theirs = cfg.pointer_slots(t);
    ASSERT_EQ(ours.size(), theirs.size());
    for (std::size_t i = 0; i < ours.size(); ++i) {
      EXPECT_EQ(ours[i].declaring_type, theirs[i].declaring_type) << i;
      EXPECT_EQ(ours[i].field, theirs[i].field) << i;
      EXPECT_EQ(ours[i].element, theirs[i].element) << i;
      EXPECT_EQ(ours[i].pointee, theirs[i].pointee) << i;
    }
    // The incoming table agrees with core's slot_may_point_to over all non-abstract holders.
    std::size_t expected_incoming = 0;
    if (!cfg.types[t].is_abstract) {
      for (std::uint32_t u = 0; u < Types::num_types; ++u) {
        if (cfg.types[u].is_abstract) continue;
        for (auto const& slot : cfg.pointer_slots(u))
          expected_incoming += cfg.slot_may_point_to(slot, t) ? 1 : 0;
      }
    }
    EXPECT_EQ(table.incoming_begin[t + 1] - table.incoming_begin[t], expected_incoming);
  }
}

TEST(SoaHeapTypes, PointerSlotOrderMatchesHeapConfig) {
  expect_pointer_slots_match<ListA>(soa::heap_config<ListA>(10, 1, 0));
  expect_pointer_slots_match<ListC>(soa::heap_config<ListC>(10, 1, 0));
  expect_pointer_slots_match<ListD>(soa::heap_config<ListD>(10, 1, 0));
}

TEST(SoaHeapTypes, ListDPointerFieldsAndIncomingArrays) {
  core::HeapConfig const cfg = soa::heap_config<ListD>(10, 1, 0);
  ASSERT_EQ(cfg.types[0].pointer_fields.size(), 1u);
  EXPECT_EQ(cfg.types[0].pointer_fields[0].name, "parent_");
  ASSERT_EQ(cfg.types[1].pointer_fields.size(), 2u);
  EXPECT_EQ(cfg.types[1].pointer_fields[0].name, "members_");
  EXPECT_EQ(cfg.types[1].pointer_fields[0].pointee, 0u);
  EXPECT_EQ(cfg.types[1].pointer_fields[0].count, 3u);
  EXPECT_EQ(cfg.types[1].pointer_fields[1].name, "outer_");
  EXPECT_EQ(cfg.types[1].pointer_fields[1].pointee, 1u);
  EXPECT_EQ(cfg.types[1].pointer_fields[1].count, 1u);
  EXPECT_TRUE(cfg.types[2].pointer_fields.empty());
  constexpr auto table = ListD::layout_table();
  EXPECT_EQ(table.field(1, 4).pointer_field, 1u);  // outer_: Group's second pointer field
  EXPECT_EQ(table.field(1, 2).pointer_field, 0u);
  EXPECT_EQ(table.field(1, 0).pointer_field, 0u);  // parent_: Shape's first
  using Ref     = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;
  auto incoming = [&](std::uint32_t t) {
    std::vector<Ref> out;
    for (std::uint32_t i = table.incoming_begin[t]; i < table.incoming_begin[t + 1]; ++i)
      out.emplace_back(table.incoming[i].type,
                       table.incoming[i].field,
                       table.incoming[i].element,
                       table.incoming[i].offset);
    return out;
  };
  // Shape is abstract: its own parent_ array never exists in a block; only subclasses' do.
  EXPECT_EQ(incoming(0), std::vector<Ref>{});
  EXPECT_EQ(incoming(1),
            (std::vector<Ref>{{1, 0, 0, 0},
                              {1, 2, 0, 384},
                              {1, 2, 1, 640},
                              {1, 2, 2, 896},
                              {1, 4, 0, 1280},
                              {2, 0, 0, 0}}));
  EXPECT_EQ(incoming(2),
            (std::vector<Ref>{
                {1, 0, 0, 0}, {1, 2, 0, 384}, {1, 2, 1, 640}, {1, 2, 2, 896}, {2, 0, 0, 0}}));
}

TEST(SoaHeapTypes, HeapConfigRejectsBadRuntimeParameters) {
  // n must be below the smallest capacity (Star: 10); HeapConfig::validate says so.
  EXPECT_THROW(soa::heap_config<ListA>(10, 10, 0), core::precondition_error);
  EXPECT_NO_THROW(soa::heap_config<ListA>(10, 9, 0));
  EXPECT_THROW(soa::heap_config<ListA>(0, 1, 0), core::precondition_error);
  // List B has a capacity-1 type (64x the smallest): DynaSOAr sec. 3.2 and HeapTypes accept it,
  // but HeapConfig::validate rejects it with the reason (the core needs capacity >= 2).
  try {
    soa::heap_config<ListB>(10, 1, 0);
    FAIL() << "a capacity-1 type must be rejected";
  } catch (core::precondition_error const& e) {
    EXPECT_NE(std::string(e.what()).find("capacity 1"), std::string::npos) << e.what();
  }
}

TEST(SoaHeapTypes, BlocksForBudget) {
  EXPECT_EQ(soa::blocks_for_budget<ListA>(896), 1u);
  EXPECT_EQ(soa::blocks_for_budget<ListA>(896 * 1000 + 895), 1000u);
  EXPECT_EQ(soa::blocks_for_budget<ListB>(std::uint64_t{1} << 30), (1u << 30) / 512);
  try {
    soa::blocks_for_budget<ListA>(895);
    FAIL() << "a budget below one block must throw";
  } catch (core::precondition_error const& e) {
    EXPECT_NE(std::string(e.what()).find("smaller than one block"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("896"), std::string::npos) << e.what();
  }
  EXPECT_THROW(soa::blocks_for_budget<ListA>(0), core::precondition_error);
  EXPECT_THROW(soa::blocks_for_budget<ListB>(std::uint64_t{512} << 32), core::precondition_error);
  EXPECT_EQ(soa::blocks_for_budget<ListB>((std::uint64_t{512} << 32) - 512), 0xFFFFFFFFu);
}
