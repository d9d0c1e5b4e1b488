// Heap types shared by the soa CPU and GPU tests, with their layout worked out by hand.
//
// The expected numbers below are NOT produced by the layout code under test: they follow from
// the rule in docs/allocator.md, worked through step by step in the comments.
#pragma once

#include <cstdint>

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

}  // namespace soa_test
