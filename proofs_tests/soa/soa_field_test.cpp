// Field DSL on the host (heaplab/soa/field.hpp) over a 128-byte aligned host buffer standing in
// for heap blocks. Object pointers come from core::encode_object_pointer with hand-given
// capacities and type ids; every expected byte position is hand-computed (soa_test_types.hpp),
// never taken from the layout code under test.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

#include "soa_test_buffer.hpp"
#include "soa_test_scenario.hpp"
#include "soa_test_types.hpp"

using namespace soa_test;

namespace {

/// A 128-byte aligned, poisoned host buffer of `blocks` blocks.
class HostBlocks {
 public:
  HostBlocks(std::uint32_t block_bytes, std::uint32_t blocks)
      : bytes_(std::size_t{block_bytes} * blocks),
        data_(static_cast<unsigned char*>(std::aligned_alloc(128, bytes_)), &std::free) {
    std::memset(data_.get(), kPoison, bytes_);
  }
  [[nodiscard]] std::uint64_t base() const { return reinterpret_cast<std::uint64_t>(data_.get()); }
  [[nodiscard]] unsigned char const* data() const { return data_.get(); }
  template <class V>
  [[nodiscard]] V read(std::uint64_t offset) const {
    V v;
    std::memcpy(&v, data_.get() + offset, sizeof(V));
    return v;
  }

 private:
  std::size_t bytes_;
  std::unique_ptr<unsigned char, decltype(&std::free)> data_;
};

}  // namespace

// ---------------------------------------------------------------- the shared scenario

TEST(SoaField, ScenarioWritesExactlyTheHandComputedBytes) {
  HostBlocks buffer(list_a::kBlockBytes, scenario::kBlocks);
  for (std::uint32_t i = 0; i < scenario::kObjects; ++i) scenario::phase1(buffer.base(), i);
  for (std::uint32_t i = 0; i < scenario::kObjects; ++i) scenario::phase2(buffer.base(), i);
  ExpectedImage const want = scenario::expected_image(buffer.base());
  long const diff          = want.first_difference(buffer.data());
  EXPECT_EQ(diff, -1) << "first differing byte: block " << diff / list_a::kBlockBytes << ", offset "
                      << diff % list_a::kBlockBytes;
}

// ---------------------------------------------------------------- single objects, by hand

TEST(SoaField, StarFieldsLandAtHandComputedAddresses) {
  HostBlocks buffer(list_a::kBlockBytes, 3);
  std::uint64_t const block = buffer.base() + 2 * list_a::kBlockBytes;  // block 2
  Star* p                   = new (object_at<Star>(buffer.base(), list_a::kBlockBytes, 2, 7, 10, 3))
      Star(1.25f, -2.5f, 6.0, 42);
  std::uint64_t const slot = 7;
  auto addr                = [](auto* q) { return reinterpret_cast<std::uint64_t>(q); };
  EXPECT_EQ(addr(&p->x_), block + list_a::kStarX + 4 * slot);
  EXPECT_EQ(addr(&p->y_), block + list_a::kStarY + 4 * slot);
  EXPECT_EQ(addr(&p->mass_), block + list_a::kStarMass + 8 * slot);
  for (std::uint64_t e = 0; e < 3; ++e)
    EXPECT_EQ(addr(&p->vel_[e]), block + list_a::kStarVel + 64 * e + 4 * slot);
  EXPECT_EQ(addr(&p->next_), block + list_a::kStarNext + 8 * slot);
  EXPECT_EQ(addr(&p->planets_[0]), block + list_a::kStarPlanets + 8 * slot);
  EXPECT_EQ(addr(&p->planets_[1]), block + list_a::kStarPlanets + 128 + 8 * slot);
  EXPECT_EQ(addr(&p->kind_), block + list_a::kStarKind + 2 * slot);
  // The constructor wrote through the proxies.
  EXPECT_EQ(buffer.read<float>(2 * list_a::kBlockBytes + list_a::kStarX + 28), 1.25f);
  EXPECT_EQ(buffer.read<float>(2 * list_a::kBlockBytes + list_a::kStarY + 28), -2.5f);
  EXPECT_EQ(buffer.read<double>(2 * list_a::kBlockBytes + list_a::kStarMass + 56), 6.0);
  EXPECT_EQ(buffer.read<std::uint64_t>(2 * list_a::kBlockBytes + list_a::kStarNext + 56), 0u);
  EXPECT_EQ(buffer.read<std::uint16_t>(2 * list_a::kBlockBytes + list_a::kStarKind + 14), 42u);
}

// The same Body fields at capacity 16 (a Body block) and at capacity 10 (a Star block): the
// capacity bits of the pointer, not its static type, decide the address (DynaSOAr Fig. 6).
TEST(SoaField, BaseTypedPointerUsesTheCapacityOfTheRuntimeType) {
  HostBlocks buffer(list_a::kBlockBytes, 2);
  Body* in_body_block =
      new (object_at<Body>(buffer.base(), list_a::kBlockBytes, 0, 3, 16, 1)) Body(1.0f, 2.0f, 3.0);
  Star* star = new (object_at<Star>(buffer.base(), list_a::kBlockBytes, 1, 3, 10, 3))
      Star(4.0f, 5.0f, 6.0, 7);
  Body* star_as_body         = star;
  Particle* star_as_particle = star;
  EXPECT_EQ(reinterpret_cast<std::uint64_t>(star_as_body), reinterpret_cast<std::uint64_t>(star));
  EXPECT_EQ(reinterpret_cast<std::uint64_t>(&in_body_block->next_),
            buffer.base() + list_a::kBodyNext + 8 * 3);
  EXPECT_EQ(reinterpret_cast<std::uint64_t>(&star_as_body->next_),
            buffer.base() + list_a::kBlockBytes + list_a::kStarNext + 8 * 3);
  EXPECT_EQ(static_cast<double>(star_as_body->mass_), 6.0);
  EXPECT_EQ(star_as_particle->x(), 4.0f);
  star_as_body->vel_[1] = 9.5f;
  EXPECT_EQ(star->vel_[1], 9.5f);
  EXPECT_EQ(buffer.read<float>(list_a::kBlockBytes + list_a::kStarVel + 64 + 4 * 3), 9.5f);
  // And back down: static_cast keeps the encoded value.
  Star* again = static_cast<Star*>(star_as_particle);
  EXPECT_EQ(again->kind_, 7u);
}

TEST(SoaField, ScalarOperatorsBehaveLikeTheUnderlyingType) {
  HostBlocks buffer(list_a::kBlockBytes, 1);
  Star* p = new (object_at<Star>(buffer.base(), list_a::kBlockBytes, 0, 1, 10, 3))
      Star(10.0f, 0.0f, 1.0, 12);
  std::uint64_t const kind = list_a::kStarKind + 2;
  std::uint16_t k          = 12;  // the same operations on a plain value
  p->kind_ += 3, k += 3;
  p->kind_ -= 1, k -= 1;
  p->kind_ *= 5, k *= 5;
  p->kind_ /= 2, k /= 2;
  p->kind_ %= 30, k %= 30;
  p->kind_ <<= 4, k <<= 4;
  p->kind_ >>= 1, k >>= 1;
  p->kind_ |= 0x101, k |= 0x101;
  p->kind_ &= 0xF0F, k &= 0xF0F;
  p->kind_ ^= 0x3C, k ^= 0x3C;
  EXPECT_EQ(buffer.read<std::uint16_t>(kind), k);
  EXPECT_EQ(p->kind_++, k);
  EXPECT_EQ(buffer.read<std::uint16_t>(kind), k + 1);
  EXPECT_EQ(p->kind_--, k + 1);
  EXPECT_EQ(static_cast<std::uint16_t>(++p->kind_), k + 1);
  EXPECT_EQ(static_cast<std::uint16_t>(--p->kind_), k);
  // Chained assignment, arithmetic and comparisons through the implicit conversion.
  p->x_ = p->y_ = 2.5f;
  EXPECT_EQ(buffer.read<float>(list_a::kStarX + 4), 2.5f);
  EXPECT_EQ(buffer.read<float>(list_a::kStarY + 4), 2.5f);
  EXPECT_EQ(p->x_ * 2 + p->y_, 7.5f);
  EXPECT_TRUE(p->x_ == p->y_);
  EXPECT_TRUE(p->mass_ < 2.0);
  // Reference semantics of get() and of a reference to the proxy.
  float& ref = p->x_;
  ref        = -1.0f;
  EXPECT_EQ(buffer.read<float>(list_a::kStarX + 4), -1.0f);
  auto& proxy = p->y_;  // binds to the proxy itself: still the same element
  proxy += 1.0f;
  EXPECT_EQ(buffer.read<float>(list_a::kStarY + 4), 3.5f);
  // Only the touched elements changed: slot 0 and slot 2 keep the poison.
  EXPECT_EQ(buffer.read<std::uint32_t>(list_a::kStarX + 0), 0xA5A5A5A5u);
  EXPECT_EQ(buffer.read<std::uint32_t>(list_a::kStarX + 8), 0xA5A5A5A5u);
  // Read access through a const object.
  Star const* c = p;
  EXPECT_EQ(c->x_ + 0.0f, -1.0f);
  static_assert(std::is_same_v<decltype(&c->x_), float const*>);
  static_assert(std::is_same_v<decltype(&p->x_), float*>);
}

TEST(SoaField, StructFieldsSupportArrowAndWholeValueAssignment) {
  HostBlocks buffer(list_c::kBlockBytes, 1);
  Node* n = object_at<Node>(buffer.base(), list_c::kBlockBytes, 0, 5, 52, 0);
  new (n) Node;  // default construction leaves the elements alone
  EXPECT_EQ(buffer.read<std::uint32_t>(list_c::kNodeId + 4 * 5), 0xA5A5A5A5u);
  n->pos_ = Vec3{1.0f, 2.0f, 3.0f};
  n->pos_->y += 10.0f;
  n->id_       = 77;
  Vec3 const v = n->pos_;
  EXPECT_EQ(v.x, 1.0f);
  EXPECT_EQ(v.y, 12.0f);
  EXPECT_EQ(v.z, 3.0f);
  Vec3 raw{};
  std::memcpy(&raw, buffer.data() + list_c::kNodePos + 12 * 5, sizeof(Vec3));
  EXPECT_EQ(raw.y, 12.0f);
  EXPECT_EQ(buffer.read<int>(list_c::kNodeId + 4 * 5), 77);
}

TEST(SoaField, PointerFieldsStoreEncodedPointersAndFollowThem) {
  HostBlocks buffer(list_a::kBlockBytes, 3);
  Star* a = new (object_at<Star>(buffer.base(), list_a::kBlockBytes, 0, 0, 10, 3))
      Star(1.0f, 1.0f, 1.0, 1);
  Star* b = new (object_at<Star>(buffer.base(), list_a::kBlockBytes, 0, 9, 10, 3))
      Star(2.0f, 2.0f, 2.0, 2);
  Spark* sp =
      new (object_at<Spark>(buffer.base(), list_a::kBlockBytes, 2, 63, 64, 2)) Spark(3.0f, 3.0f, 3);
  EXPECT_TRUE(a->next_ == nullptr);
  EXPECT_FALSE(a->next_);
  a->next_ = b;  // Star* -> Body*
  EXPECT_TRUE(a->next_);
  EXPECT_TRUE(a->next_ == b);
  EXPECT_EQ(buffer.read<std::uint64_t>(list_a::kStarNext + 0), reinterpret_cast<std::uint64_t>(b));
  EXPECT_EQ(a->next_->mass_, 2.0);
  EXPECT_EQ((*a->next_).x(), 2.0f);
  a->next_->mass_ += 0.5;  // writes object b
  EXPECT_EQ(buffer.read<double>(list_a::kStarMass + 8 * 9), 2.5);
  Body** where = &a->next_;
  EXPECT_EQ(reinterpret_cast<std::uint64_t>(where), buffer.base() + list_a::kStarNext);
  // An array of pointers to the abstract base holds a Spark and a Star.
  a->planets_[0] = sp;
  a->planets_[1] = b;
  EXPECT_EQ(a->planets_[0]->x(), 3.0f);
  EXPECT_EQ(static_cast<Spark*>(a->planets_[0])->life_, 3u);
  EXPECT_EQ(buffer.read<std::uint64_t>(list_a::kStarPlanets + 128),
            reinterpret_cast<std::uint64_t>(b));
  // Copy assignment between pointer fields of different objects copies the pointer value.
  b->next_ = a->next_;
  EXPECT_EQ(buffer.read<std::uint64_t>(list_a::kStarNext + 8 * 9),
            reinterpret_cast<std::uint64_t>(b));
}

TEST(SoaField, ObjectAssignmentCopiesEveryField) {
  HostBlocks buffer(list_a::kBlockBytes, 1);
  Star* a = new (object_at<Star>(buffer.base(), list_a::kBlockBytes, 0, 2, 10, 3))
      Star(1.0f, 2.0f, 3.0, 4);
  a->set_velocity(5.0f, 6.0f, 7.0f);
  a->planets_[1] = a;
  Star* b        = object_at<Star>(buffer.base(), list_a::kBlockBytes, 0, 8, 10, 3);
  *b             = *a;
  EXPECT_EQ(buffer.read<float>(list_a::kStarX + 4 * 8), 1.0f);
  EXPECT_EQ(buffer.read<float>(list_a::kStarY + 4 * 8), 2.0f);
  EXPECT_EQ(buffer.read<double>(list_a::kStarMass + 8 * 8), 3.0);
  EXPECT_EQ(buffer.read<float>(list_a::kStarVel + 128 + 4 * 8), 7.0f);
  EXPECT_EQ(buffer.read<std::uint64_t>(list_a::kStarNext + 8 * 8), 0u);
  EXPECT_EQ(buffer.read<std::uint64_t>(list_a::kStarPlanets + 128 + 8 * 8),
            reinterpret_cast<std::uint64_t>(a));
  EXPECT_EQ(buffer.read<std::uint16_t>(list_a::kStarKind + 2 * 8), 4u);
}

TEST(SoaField, FullBlockFillsContiguousSoaArrays) {
  HostBlocks buffer(list_a::kBlockBytes, 1);
  for (std::uint32_t s = 0; s < 10; ++s) {
    new (object_at<Star>(buffer.base(), list_a::kBlockBytes, 0, s, 10, 3))
        Star(static_cast<float>(s), 0.0f, 0.0, static_cast<std::uint16_t>(100 + s));
  }
  float xs[10];
  std::uint16_t kinds[10];
  std::memcpy(xs, buffer.data() + list_a::kStarX, sizeof(xs));
  std::memcpy(kinds, buffer.data() + list_a::kStarKind, sizeof(kinds));
  for (std::uint32_t s = 0; s < 10; ++s) {
    EXPECT_EQ(xs[s], static_cast<float>(s));
    EXPECT_EQ(kinds[s], 100 + s);
  }
  // Padding after the 40-byte x_ array (bytes 40..63) is untouched.
  for (std::uint32_t b = 40; b < 64; ++b) EXPECT_EQ(buffer.data()[b], kPoison) << b;
}

TEST(SoaField, CapacityOneArrayFieldHasOneByteUnits) {
  HostBlocks buffer(list_b::kBlockBytes, 2);
  Huge* h = object_at<Huge>(buffer.base(), list_b::kBlockBytes, 1, 0, 1, 1);
  new (h) Huge;
  static_assert(decltype(h->bytes_)::size() == 64);
  for (std::size_t e = 0; e < 64; ++e) h->bytes_[e] = static_cast<char>(e);
  for (std::size_t e = 0; e < 64; ++e)
    EXPECT_EQ(buffer.data()[list_b::kBlockBytes + e], static_cast<unsigned char>(e));
  EXPECT_EQ(buffer.data()[list_b::kBlockBytes + 64], kPoison);
  Tiny* t = object_at<Tiny>(buffer.base(), list_b::kBlockBytes, 0, 63, 64, 0);
  new (t) Tiny;
  t->flag_ = true;
  EXPECT_EQ(buffer.data()[63], 1);
  EXPECT_EQ(buffer.data()[62], kPoison);
}

// The proxy recovers its object pointer as `this - field index`: the proxy of field J of an
// object sits exactly J bytes past the encoded pointer value.
TEST(SoaField, ProxiesSitAtTheirFieldIndexPastTheObjectPointer) {
  static_assert(sizeof(Particle) == 2 && sizeof(Body) == 5 && sizeof(Spark) == 3 &&
                sizeof(Star) == 7);
  Star* p                 = object_at<Star>(0x100000, list_a::kBlockBytes, 0, 4, 10, 3);
  std::uint64_t const obj = reinterpret_cast<std::uint64_t>(p);
  auto proxy              = [](auto const& field) {
    return reinterpret_cast<std::uint64_t>(std::addressof(field));
  };
  EXPECT_EQ(proxy(p->x_), obj + 0);
  EXPECT_EQ(proxy(p->y_), obj + 1);
  EXPECT_EQ(proxy(p->mass_), obj + 2);
  EXPECT_EQ(proxy(p->vel_), obj + 3);
  EXPECT_EQ(proxy(p->next_), obj + 4);
  EXPECT_EQ(proxy(p->planets_), obj + 5);
  EXPECT_EQ(proxy(p->kind_), obj + 6);
}

// All 64 fields of one declaration (list E): each proxy reaches its own SOA array, field j of
// slot s at 32 j + s in a block of capacity 25, and the proxy sits j bytes past the pointer.
TEST(SoaField, SixtyFourFieldsOfOneDeclarationReachTheirOwnArrays) {
  constexpr std::uint32_t block_bytes = 64 * list_e::kWideFieldStride;
  HostBlocks buffer(block_bytes, 1);
  std::uint32_t const slot = 24;
  Wide* w = object_at<Wide>(buffer.base(), block_bytes, 0, slot, list_e::kWideCapacity, 1);
  new (w) Wide;
  w->a0_ = 100;
  w->b3_ = 111;
  w->h7_ = 163;
  EXPECT_EQ(buffer.data()[0 * list_e::kWideFieldStride + slot], 100);
  EXPECT_EQ(buffer.data()[11 * list_e::kWideFieldStride + slot], 111);
  EXPECT_EQ(buffer.data()[63 * list_e::kWideFieldStride + slot], 163);
  EXPECT_EQ(buffer.data()[63 * list_e::kWideFieldStride + slot - 1], kPoison);
  std::uint64_t const obj = reinterpret_cast<std::uint64_t>(w);
  EXPECT_EQ(reinterpret_cast<std::uint64_t>(std::addressof(w->b3_)), obj + 11);
  EXPECT_EQ(reinterpret_cast<std::uint64_t>(std::addressof(w->h7_)), obj + 63);
  EXPECT_EQ(static_cast<int>(w->b3_), 111);
}

// Debug preset only (HEAPLAB_DEBUG_CHECKS): field access through a null object pointer, through a
// pointer whose slot is not below its capacity, and array indices out of range are reported.
TEST(SoaField, DebugChecksRejectBadPointersAndIndices) {
#if !defined(HEAPLAB_DEBUG_CHECKS)
  GTEST_SKIP()
      << "field access checks are compiled in only with HEAPLAB_DEBUG_CHECKS (debug preset)";
#else
  HostBlocks buffer(list_a::kBlockBytes, 1);
  Star* p = new (object_at<Star>(buffer.base(), list_a::kBlockBytes, 0, 9, 10, 3))
      Star(1.0f, 2.0f, 3.0, 4);
  EXPECT_THROW(p->vel_[3] = 1.0f, heaplab::core::precondition_error);
  EXPECT_NO_THROW(p->vel_[2] = 1.0f);
  Star* beyond = object_at<Star>(buffer.base(), list_a::kBlockBytes, 0, 10, 10, 3);
  EXPECT_THROW(beyond->kind_ = 1, heaplab::core::precondition_error);
  Body* null = p->next_;
  ASSERT_EQ(null, nullptr);
  EXPECT_THROW(static_cast<void>(static_cast<double>(null->mass_)),
               heaplab::core::precondition_error);
  // Nothing was written by the rejected accesses: the element after slot 9 of vel_[2] is padding.
  EXPECT_EQ(buffer.read<std::uint32_t>(list_a::kStarKind + 2 * 10), 0xA5A5A5A5u);
#endif
}

// ---------------------------------------------------------------- the offset table

// The proxies read a field's offsets from a table built at compile time for capacities 1..64
// (field.hpp field_offsets). Its rows must be the layout rule's at every capacity: checked by hand
// at two capacities and against the runtime layout (layout.hpp soa_field_offset, the form
// CompactGpu and the snapshot code use) at all 64.
TEST(SoaField, OffsetTableRowsAreTheLayoutRuleAtEveryCapacity) {
  using fields = soa::detail::chain<Star>::all;  // x, y, mass, vel[3], next, planets[2], kind
  soa::detail::field_offsets const* const tables[] = {&soa::detail::kFieldOffsets<fields, 0>,
                                                      &soa::detail::kFieldOffsets<fields, 1>,
                                                      &soa::detail::kFieldOffsets<fields, 2>,
                                                      &soa::detail::kFieldOffsets<fields, 3>,
                                                      &soa::detail::kFieldOffsets<fields, 4>,
                                                      &soa::detail::kFieldOffsets<fields, 5>,
                                                      &soa::detail::kFieldOffsets<fields, 6>};
  // Capacity 64: x, y 256 B each, mass 512 B, vel three 256-byte units.
  EXPECT_EQ(tables[2]->begin[63], 512u);
  EXPECT_EQ(tables[3]->begin[63], 1024u);
  EXPECT_EQ(tables[3]->stride[63], 256u);
  // Capacity 3: x at 0 (12 B), y at 16 (12 B, 16-aligned), mass at 32 (24 B), vel at 64 with
  // 16-byte units (12 B each, 16-aligned; they end at 108), next at 128 (24 B, 32-aligned).
  EXPECT_EQ(tables[1]->begin[2], 16u);
  EXPECT_EQ(tables[2]->begin[2], 32u);
  EXPECT_EQ(tables[3]->begin[2], 64u);
  EXPECT_EQ(tables[3]->stride[2], 16u);
  EXPECT_EQ(tables[4]->begin[2], 128u);

  soa::FieldShape const shapes[] = {{4, 1}, {4, 1}, {8, 1}, {4, 3}, {8, 1}, {8, 2}, {2, 1}};
  for (std::uint32_t j = 0; j < 7; ++j) {
    for (std::uint32_t capacity = 1; capacity <= 64; ++capacity) {
      std::uint64_t const begin =
          soa::soa_field_begin(soa::soa_field_offset(shapes, j, capacity), capacity, shapes[j]);
      EXPECT_EQ(tables[j]->begin[capacity - 1], begin)
          << "field " << j << ", capacity " << capacity;
      EXPECT_EQ(tables[j]->stride[capacity - 1], soa::soa_unit_stride(capacity, shapes[j]))
          << "field " << j << ", capacity " << capacity;
    }
  }
}
