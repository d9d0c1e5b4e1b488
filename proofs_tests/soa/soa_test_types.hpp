// Heap types shared by the soa CPU and GPU tests, with their layout worked out by hand.
//
// The expected numbers below are NOT produced by the layout code under test: they follow from
// the rule in docs/allocator.md, worked through step by step in the comments.
#pragma once

#include <cstdint>
#include <type_traits>

#include "heaplab/core/host_device.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"

namespace soa_test {

namespace soa = heaplab::soa;

// ---------------------------------------------------------------- list A
// Particle (abstract) <- Body <- Star, Particle <- Spark. Mixed sizes, an array field, a pointer
// field, an array of pointers to an abstract base.

class Particle {
 public:
  HEAPLAB_SOA_ABSTRACT(Particle);
  HEAPLAB_SOA_FIELDS(Particle, (float, x_), (float, y_));

  HEAPLAB_HD Particle(float x, float y) : x_(x), y_(y) {}
  HEAPLAB_HD float x() const { return x_; }
};

class Body : public Particle {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(
      Body, Particle, (double, mass_), (soa::array<float, 3>, vel_), (Body*, next_));

  HEAPLAB_HD Body(float x, float y, double mass) : Particle(x, y), mass_(mass), next_(nullptr) {}
  HEAPLAB_HD void set_velocity(float vx, float vy, float vz) {
    vel_[0] = vx;
    vel_[1] = vy;
    vel_[2] = vz;
  }
  HEAPLAB_HD void move(float dt) {
    x_ += dt * vel_[0];
    y_ += dt * vel_[1];
  }
};

class Spark : public Particle {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Spark, Particle, (std::uint8_t, life_));

  HEAPLAB_HD Spark(float x, float y, std::uint8_t life) : Particle(x, y), life_(life) {}
};

class Star : public Body {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Star, Body, (Particle* [2], planets_), (std::uint16_t, kind_));

  HEAPLAB_HD Star(float x, float y, double mass, std::uint16_t kind)
      : Body(x, y, mass), kind_(kind) {
    planets_[0] = nullptr;
    planets_[1] = nullptr;
  }
};

using ListA = soa::HeapTypes<Particle, Body, Spark, Star>;

// Sizes (sum of field sizes, inherited included): Particle 4+4 = 8, Body 8+8+12+8 = 36,
// Spark 8+1 = 9, Star 36+16+2 = 54. Smallest non-abstract: Spark (9).
// Capacities floor(64*9/size): Body 576/36 = 16, Spark 64, Star 576/54 = 10 (10.67), Particle 0.
namespace list_a {
inline constexpr std::uint32_t kBlockBytes = 896;  // max(640, 640, 896), see below

// Spark, N = 64: x_ 256 B at 0; y_ 256 B at 256; life_ 64 B (align 64) at 512; end 576.
// Forwarding 64*8 = 512. Block: 576 -> 640.
inline constexpr std::uint32_t kSparkX = 0, kSparkY = 256, kSparkLife = 512;

// Body, N = 16: x_ 64 B (align 64) at 0; y_ at 64; mass_ 128 B (align 128) at 128;
// vel_ 3 units of 64 B (align 64, stride 64) at 256, 320, 384 (end 448);
// next_ 128 B (align 128) at 512; end 640. Forwarding 128. Block: 640.
inline constexpr std::uint32_t kBodyX = 0, kBodyY = 64, kBodyMass = 128, kBodyVel = 256,
                               kBodyVelStride = 64, kBodyNext = 512;

// Star, N = 10: x_ 40 B (align 64) at 0; y_ 40 B at 64; mass_ 80 B (align 128) at 128 (end 208);
// vel_ 3 units of 40 B (align 64, stride 64) at 256, 320, 384 (end 424);
// next_ 80 B (align 128) at 512 (end 592); planets_ 2 units of 80 B (align 128, stride 128) at
// 640, 768 (end 848); kind_ 20 B (align 32) at 864; end 884. Forwarding 80. Block: 896.
inline constexpr std::uint32_t kStarX = 0, kStarY = 64, kStarMass = 128, kStarVel = 256,
                               kStarVelStride = 64, kStarNext = 512, kStarPlanets = 640,
                               kStarPlanetsStride = 128, kStarKind = 864;
}  // namespace list_a

// ---------------------------------------------------------------- list B
// Extremes of the capacity formula: a 1-byte type (capacity 64) and a type 64x larger
// (capacity 1). Forwarding pointers dominate the block size.
class Tiny {
 public:
  HEAPLAB_SOA_FIELDS(Tiny, (bool, flag_));
};

class Huge {
 public:
  HEAPLAB_SOA_FIELDS(Huge, (char[64], bytes_));
};

using ListB = soa::HeapTypes<Tiny, Huge>;

// Tiny N = 64: flag_ 64 B at 0, end 64; forwarding 512 -> block 512.
// Huge N = 1: 64 units of 1 B, alignment bit_ceil(1) = 1, stride 1: at 0..63, end 64;
// forwarding 8 -> 128. Block = 512.
namespace list_b {
inline constexpr std::uint32_t kBlockBytes = 512;
}

// ---------------------------------------------------------------- list C
// A 12-byte struct field and a 1-byte field followed by a large one (padding to the next line).
struct Vec3 {
  float x, y, z;
};

class Node {
 public:
  HEAPLAB_SOA_FIELDS(Node, (Vec3, pos_), (int, id_));
};

class Leaf {
 public:
  HEAPLAB_SOA_FIELDS(Leaf, (char, tag_), (Vec3, pos_));
};

using ListC = soa::HeapTypes<Node, Leaf>;

// Sizes: Node 16, Leaf 13 (smallest). Capacities: Node floor(64*13/16) = 52, Leaf 64.
// Node N = 52: pos_ 624 B (align 128) at 0 (end 624); id_ 208 B (align 128) at 640; end 848 ->
// block 896. Leaf N = 64: tag_ 64 B at 0; pos_ 768 B (align 128) at 128; end 896 -> 896.
namespace list_c {
inline constexpr std::uint32_t kBlockBytes = 896;
inline constexpr std::uint32_t kNodePos = 0, kNodeId = 640, kLeafTag = 0, kLeafPos = 128;
}  // namespace list_c

// ---------------------------------------------------------------- list E
// The declaration limits of the field DSL (heaplab/soa/detail/preprocessor.hpp): field types
// with commas, up to the 8 comma-separated parts an entry may have, and the 64 fields one
// declaration may have. Compiled by g++ (soa CPU tests) and nvcc (soa_field_gpu_test).
template <class A, class B, class C>
struct Tri {
  A a;
  B b;
  C c;
};
template <class... Ts>
struct Bytes {
  char b[sizeof...(Ts)];
};

class Commas {
 public:
  HEAPLAB_SOA_FIELDS(Commas,
                     (Tri<char, short, int>, tri_),  // 4 parts
                     (int, plain_),
                     (Bytes<char, char, char, char, char, char, char>, seven_),  // 8 parts
                     (soa::array<Tri<char, char, char>, 2>, tris_));             // 5 parts
};

#define SOA_TEST_E8(p)                                                                        \
  (std::uint8_t, p##0_), (std::uint8_t, p##1_), (std::uint8_t, p##2_), (std::uint8_t, p##3_), \
      (std::uint8_t, p##4_), (std::uint8_t, p##5_), (std::uint8_t, p##6_), (std::uint8_t, p##7_)
class Wide {
 public:
  HEAPLAB_SOA_FIELDS(Wide,
                     SOA_TEST_E8(a),
                     SOA_TEST_E8(b),
                     SOA_TEST_E8(c),
                     SOA_TEST_E8(d),
                     SOA_TEST_E8(e),
                     SOA_TEST_E8(f),
                     SOA_TEST_E8(g),
                     SOA_TEST_E8(h));
};
#undef SOA_TEST_E8

using ListE = soa::HeapTypes<Commas, Wide>;

// What the macros declared: the type list (types with commas intact), one proxy per entry with
// its index among the class's own fields, one byte each.
static_assert(std::is_same_v<soa::detail::access::own_fields<Commas>,
                             soa::detail::type_list<Tri<char, short, int>,
                                                    int,
                                                    Bytes<char, char, char, char, char, char, char>,
                                                    Tri<char, char, char>[2]>>);
static_assert(std::is_same_v<decltype(Commas::tri_), soa::Field<Commas, 0, Tri<char, short, int>>>);
static_assert(std::is_same_v<decltype(Commas::plain_), soa::Field<Commas, 1, int>>);
static_assert(
    std::is_same_v<decltype(Commas::seven_),
                   soa::Field<Commas, 2, Bytes<char, char, char, char, char, char, char>>>);
static_assert(
    std::is_same_v<decltype(Commas::tris_), soa::Field<Commas, 3, Tri<char, char, char>[2]>>);
static_assert(sizeof(Commas) == 4 && sizeof(Wide) == 64);
static_assert(ListE::num_fields<Commas> == 4 && ListE::num_fields<Wide> == 64);
static_assert(std::is_same_v<decltype(Wide::a0_), soa::Field<Wide, 0, std::uint8_t>>);
static_assert(std::is_same_v<decltype(Wide::b0_), soa::Field<Wide, 8, std::uint8_t>>);
static_assert(std::is_same_v<decltype(Wide::h7_), soa::Field<Wide, 63, std::uint8_t>>);

// Sizes: Commas 8 + 4 + 7 + 6 = 25, Wide 64. Capacities: Commas 64, Wide floor(64*25/64) = 25.
// Wide, N = 25: field j (25 B, align 32) at 32 j; h7_ (j = 63) at 2016.
namespace list_e {
inline constexpr std::uint32_t kWideCapacity = 25, kWideFieldStride = 32;
}  // namespace list_e
static_assert(ListE::capacity<Commas> == 64 && ListE::capacity<Wide> == list_e::kWideCapacity);
static_assert(ListE::field_offset<Wide, 63>(list_e::kWideCapacity) ==
              63 * list_e::kWideFieldStride);

}  // namespace soa_test
