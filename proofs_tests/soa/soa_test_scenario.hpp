// One field-DSL scenario over list A (soa_test_types.hpp), run on the host by
// soa_field_test.cpp and in kernels by soa_field_gpu_test.cu, plus the buffer image it must
// leave, built from the hand-worked offsets and hand-derived final values.
//
// Buffer: 4 blocks of list_a::kBlockBytes. Block 0: Stars (capacity 10, type 3), block 1: Bodies
// (capacity 16, type 1), block 2: Sparks (capacity 64, type 2), block 3: untouched.
// Object i of the scenario (0 <= i < kObjects): Stars 0..9, Bodies 10..25, Sparks 26..89.
// Phase 1 constructs and updates every object through its own fields; phase 2 links objects and
// reads other objects' fields (written in phase 1 only, so the kernels need no ordering within a
// phase).
#pragma once

#include <cstdint>
#include <new>

#include "heaplab/core/host_device.hpp"
#include "soa_test_buffer.hpp"
#include "soa_test_types.hpp"

namespace soa_test::scenario {

inline constexpr std::uint32_t kBlocks     = 4;
inline constexpr std::uint32_t kStars      = 10;  // capacity of a Star block
inline constexpr std::uint32_t kBodies     = 16;  // capacity of a Body block
inline constexpr std::uint32_t kSparks     = 64;  // capacity of a Spark block
inline constexpr std::uint32_t kObjects    = kStars + kBodies + kSparks;
inline constexpr std::uint32_t kStarBlock  = 0;
inline constexpr std::uint32_t kBodyBlock  = 1;
inline constexpr std::uint32_t kSparkBlock = 2;
inline constexpr std::uint32_t kBodyType = 1, kSparkType = 2, kStarType = 3;

HEAPLAB_HD_INLINE Star* star(std::uint64_t base, std::uint32_t s) {
  return object_at<Star>(base, list_a::kBlockBytes, kStarBlock, s, kStars, kStarType);
}
HEAPLAB_HD_INLINE Body* body(std::uint64_t base, std::uint32_t s) {
  return object_at<Body>(base, list_a::kBlockBytes, kBodyBlock, s, kBodies, kBodyType);
}
HEAPLAB_HD_INLINE Spark* spark(std::uint64_t base, std::uint32_t s) {
  return object_at<Spark>(base, list_a::kBlockBytes, kSparkBlock, s, kSparks, kSparkType);
}

HEAPLAB_HD_INLINE void phase1(std::uint64_t base, std::uint32_t i) {
  if (i < kStars) {
    std::uint32_t const s = i;
    float const fs        = static_cast<float>(s);
    Star* p =
        new (star(base, s)) Star(fs + 0.5f, -fs, 100.0 + s, static_cast<std::uint16_t>(3 * s));
    p->set_velocity(fs, 2 * fs, 3 * fs);
    p->move(0.5f);  // x = 1.5 s + 0.5, y = 0
    p->kind_ += 1;
    p->kind_ <<= 1;
    p->kind_ |= 1;
    --p->kind_;  // kind = 6 s + 2
    Body* as_body = p;
    as_body->mass_ *= 2.0;  // 200 + 2 s
    Particle* as_particle = p;
    as_particle->y_ -= 1.0f;  // -1
    p->vel_[2]++;             // 3 s + 1
  } else if (i < kStars + kBodies) {
    std::uint32_t const s = i - kStars;
    float const fs        = static_cast<float>(s);
    Body* p = new (body(base, s)) Body(10.0f + fs, 20.0f + fs, static_cast<double>(s));
    p->set_velocity(1.0f, 2.0f, 3.0f);
    p->vel_[2] += p->vel_[0];  // 4
    p->x_++;                   // 11 + s
    ++p->y_;                   // 21 + s
    p->mass_ -= 0.5;           // s - 0.5
  } else if (i < kObjects) {
    std::uint32_t const s = i - kStars - kBodies;
    float const fs        = static_cast<float>(s);
    Spark* p              = new (spark(base, s)) Spark(fs, 2.0f * fs, static_cast<std::uint8_t>(s));
    p->life_ ^= 0xFF;  // s ^ 255
    p->x_ /= 2.0f;     // s / 2
    p->y_ *= 3;        // 6 s
  }
}

HEAPLAB_HD_INLINE void phase2(std::uint64_t base, std::uint32_t i) {
  if (i < kStars) {
    std::uint32_t const s = i;
    Star* p               = star(base, s);
    p->planets_[0]        = spark(base, s);
    p->planets_[1]        = body(base, s);
    p->next_              = star(base, (s + 1) % kStars);
    // A Particle-typed view of a Body (capacity 16) and a Body-typed view of a Star (capacity 10).
    p->mass_ += p->planets_[1]->x_ + p->next_->y_;  // 200 + 2 s + (11 + s) - 1 = 210 + 3 s
  } else if (i < kStars + kBodies) {
    std::uint32_t const s = i - kStars;
    Body* p               = body(base, s);
    if (s % 2 == 1) p->next_ = body(base, s - 1);
    if (p->next_ != nullptr) {
      p->vel_[1] = p->next_->vel_[0] + static_cast<float>((*p->next_).mass_);  // 1 + (s - 1.5)
    } else {
      p->vel_[1] = -7.0f;
    }
  }
}

/// The buffer after phase1 and phase2 for every object, for a buffer at address `base`.
inline ExpectedImage expected_image(std::uint64_t base) {
  ExpectedImage img(list_a::kBlockBytes, kBlocks);
  auto ptr = [](auto* p) { return reinterpret_cast<std::uint64_t>(p); };
  for (std::uint32_t s = 0; s < kStars; ++s) {
    float const fs = static_cast<float>(s);
    img.put(kStarBlock, list_a::kStarX + 4 * s, 1.5f * fs + 0.5f);
    img.put(kStarBlock, list_a::kStarY + 4 * s, -1.0f);
    img.put(kStarBlock, list_a::kStarMass + 8 * s, 210.0 + 3 * s);
    img.put(kStarBlock, list_a::kStarVel + 0 * list_a::kStarVelStride + 4 * s, fs);
    img.put(kStarBlock, list_a::kStarVel + 1 * list_a::kStarVelStride + 4 * s, 2 * fs);
    img.put(kStarBlock, list_a::kStarVel + 2 * list_a::kStarVelStride + 4 * s, 3 * fs + 1);
    img.put(kStarBlock, list_a::kStarNext + 8 * s, ptr(star(base, (s + 1) % kStars)));
    img.put(kStarBlock, list_a::kStarPlanets + 8 * s, ptr(spark(base, s)));
    img.put(
        kStarBlock, list_a::kStarPlanets + list_a::kStarPlanetsStride + 8 * s, ptr(body(base, s)));
    img.put(kStarBlock, list_a::kStarKind + 2 * s, static_cast<std::uint16_t>(6 * s + 2));
  }
  for (std::uint32_t s = 0; s < kBodies; ++s) {
    float const fs = static_cast<float>(s);
    img.put(kBodyBlock, list_a::kBodyX + 4 * s, 11.0f + fs);
    img.put(kBodyBlock, list_a::kBodyY + 4 * s, 21.0f + fs);
    img.put(kBodyBlock, list_a::kBodyMass + 8 * s, s - 0.5);
    img.put(kBodyBlock, list_a::kBodyVel + 0 * list_a::kBodyVelStride + 4 * s, 1.0f);
    img.put(kBodyBlock,
            list_a::kBodyVel + 1 * list_a::kBodyVelStride + 4 * s,
            s % 2 == 1 ? fs - 0.5f : -7.0f);
    img.put(kBodyBlock, list_a::kBodyVel + 2 * list_a::kBodyVelStride + 4 * s, 4.0f);
    img.put(kBodyBlock,
            list_a::kBodyNext + 8 * s,
            s % 2 == 1 ? ptr(body(base, s - 1)) : std::uint64_t{0});
  }
  for (std::uint32_t s = 0; s < kSparks; ++s) {
    float const fs = static_cast<float>(s);
    img.put(kSparkBlock, list_a::kSparkX + 4 * s, fs / 2);
    img.put(kSparkBlock, list_a::kSparkY + 4 * s, 6 * fs);
    img.put(kSparkBlock, list_a::kSparkLife + s, static_cast<std::uint8_t>(s ^ 0xFFu));
  }
  return img;
}

}  // namespace soa_test::scenario
