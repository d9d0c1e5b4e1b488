// The n-body example of docs/allocator.md ("The field DSL"), compiled as written there, with the
// layout numbers the document states (its "Block layout" table, worked out by hand).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "heaplab/core/object_pointer.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"

namespace doc_example {

// ---- begin: copied verbatim from docs/allocator.md
// clang-format off
namespace soa = heaplab::soa;

inline constexpr float kGravity = 4.0e-6f;

class Body {
 public:
  HEAPLAB_SOA_FIELDS(Body,
                     (float[2], pos_),        // fixed-size array: two SOA arrays
                     (float[2], vel_),
                     (float[2], force_),
                     (float, mass_),
                     (Body*, merge_target_),  // pointer to a heap type
                     (bool, was_merged_));

  HEAPLAB_HD Body(float x, float y, float mass)
      : mass_(mass), merge_target_(nullptr), was_merged_(false) {
    pos_[0] = x;
    pos_[1] = y;
    vel_[0] = vel_[1] = 0.0f;
  }

  HEAPLAB_HD void apply_force(Body* other) {  // `this` is an encoded object pointer
    if (other == this) return;
    float const dx   = pos_[0] - other->pos_[0];
    float const dy   = pos_[1] - other->pos_[1];
    float const dist = std::sqrt(dx * dx + dy * dy) + 0.01f;
    float const f    = kGravity * mass_ * other->mass_ / (dist * dist);
    other->force_[0] += f * dx / dist;
    other->force_[1] += f * dy / dist;
  }

  HEAPLAB_HD void move(float dt) {
    for (int d = 0; d < 2; ++d) {
      vel_[d] += force_[d] * dt / mass_;
      pos_[d] += dt * vel_[d];
    }
  }
};

class Star : public Body {  // single inheritance: Body's six fields come first
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Star, Body, (float, luminosity_), (Body*[4], planets_));

  HEAPLAB_HD Star(float x, float y, float mass, float luminosity)
      : Body(x, y, mass), luminosity_(luminosity) {
    for (int i = 0; i < 4; ++i) planets_[i] = nullptr;
  }
};

using Types = soa::HeapTypes<Body, Star>;  // type ids: Body 0, Star 1
// clang-format on
// ---- end

// The numbers docs/allocator.md states.
static_assert(Types::type_id<Body> == 0 && Types::type_id<Star> == 1);
static_assert(Types::size_bytes<Body> == 37 && Types::size_bytes<Star> == 73);
static_assert(Types::capacity<Body> == 64 && Types::capacity<Star> == 32);
static_assert(Types::block_bytes == 2432);
static_assert(Types::data_segment_bytes<Body> == 2368 && Types::data_segment_bytes<Star> == 2432);
static_assert(Types::field_offset<Body, 1>(64) == 512 && Types::field_offset<Body, 4>(64) == 1792 &&
              Types::field_offset<Body, 5>(64) == 2304);
static_assert(Types::field_offset<Star, 4>(32) == 896 && Types::field_offset<Star, 5>(32) == 1152 &&
              Types::field_offset<Star, 6>(32) == 1280 && Types::field_offset<Star, 7>(32) == 1408);

}  // namespace doc_example

TEST(SoaDocExample, NBodyStepRunsOnHostBlocks) {
  using namespace doc_example;
  std::unique_ptr<unsigned char, decltype(&std::free)> blocks(
      static_cast<unsigned char*>(std::aligned_alloc(128, 2 * 2432)), &std::free);
  std::memset(blocks.get(), 0, 2 * 2432);
  auto const base = reinterpret_cast<std::uint64_t>(blocks.get());
  auto* a         = reinterpret_cast<Body*>(heaplab::core::encode_object_pointer(base, 0, 64, 0));
  auto* s = reinterpret_cast<Star*>(heaplab::core::encode_object_pointer(base + 2432, 5, 32, 1));
  new (a) Body(0.0f, 0.0f, 1.0f);
  new (s) Star(3.0f, 4.0f, 2.0f, 7.0f);
  a->force_[0] = a->force_[1] = 0.0f;
  s->force_[0] = s->force_[1] = 0.0f;
  s->apply_force(a);  // adds f * (pos_s - pos_a) / dist to a's force
  a->move(1.0f);
  // Hand computation: dx = 3, dy = 4, dist = 5.01, f = 4e-6 * 2 * 1 / 5.01^2.
  float const dist = 5.01f;
  float const f    = 4.0e-6f * 2.0f * 1.0f / (dist * dist);
  float stored_vel_x;
  std::memcpy(&stored_vel_x, blocks.get() + 512, sizeof(float));  // vel_[0] of slot 0 at 512
  EXPECT_NEAR(stored_vel_x, f * 3.0f / dist, 1e-12);
  float stored_pos_y;
  std::memcpy(&stored_pos_y, blocks.get() + 256, sizeof(float));  // pos_[1] of slot 0 at 256
  EXPECT_NEAR(stored_pos_y, f * 4.0f / dist, 1e-12);
  float stored_luminosity;
  std::memcpy(&stored_luminosity, blocks.get() + 2432 + 1280 + 5 * 4, sizeof(float));
  EXPECT_EQ(stored_luminosity, 7.0f);
}
