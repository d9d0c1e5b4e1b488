// Barnes-Hut in 2D (docs/apps.md "barnes-hut"; DynaSOAr Table 1, after Burtscher and Pingali [16]):
// the quad tree's geometry, the pairwise force, the opening criterion and the integration, shared
// by the GPU app and the CPU checker. Host and device (HEAPLAB_HD); plain C++17.
#pragma once

#include <cmath>
#include <cstdint>

#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"

namespace heaplab::apps::barnes_hut {

/// MUTANT barnes_hut_quadrant_swaps_axes: the GPU app sends a body to the child of the quadrant
/// with x and y exchanged (docs/mutants.md "Applications"); its leaf then does not contain it.
inline constexpr bool kMutantQuadrantSwapsAxes = core::mutant::barnes_hut_quadrant_swaps_axes;

enum : std::uint32_t {
  kLeafCapacity = 8,   // a leaf with more bodies splits (unless at kMaxDepth)
  kMaxDepth     = 24,  // the root is depth 0
  kStack        = 4 * kMaxDepth + 4,
};

struct Params {
  std::uint32_t bodies = 16384;
  std::uint64_t seed   = 1;
  float dt             = 0.0005f;
  float theta          = 0.5f;   // a node is used as one mass when its size / distance < theta
  float softening      = 0.01f;  // r^2 + eps^2
  float gravity        = 1.0f;
};

/// The root's box: [-1, 1)^2. Bodies are reflected at its walls.
inline constexpr float kHalf = 1.0f;

/// Quadrant of (x, y) in a node centred at (cx, cy): bit 0 east (x >= cx), bit 1 north (y >= cy).
template <bool SwapAxes = false>
HEAPLAB_HD inline std::uint32_t quadrant(float cx, float cy, float x, float y) {
  if constexpr (SwapAxes) {  // MUTANT barnes_hut_quadrant_swaps_axes
    return (y >= cy ? 1u : 0u) | (x >= cx ? 2u : 0u);
  }
  return (x >= cx ? 1u : 0u) | (y >= cy ? 2u : 0u);
}
/// Centre of child q of a node centred at (cx, cy) with half size h.
HEAPLAB_HD inline float child_cx(float cx, float h, std::uint32_t q) {
  return cx + ((q & 1u) ? 0.5f : -0.5f) * h;
}
HEAPLAB_HD inline float child_cy(float cy, float h, std::uint32_t q) {
  return cy + ((q & 2u) ? 0.5f : -0.5f) * h;
}

/// The force on a body at (x, y) from mass m at (ox, oy), added to (fx, fy); per unit of the
/// body's own mass times gravity (the caller multiplies).
template <class T>
HEAPLAB_HD inline void add_pull(T x, T y, T ox, T oy, T m, T softening, T& fx, T& fy) {
  T const dx = ox - x, dy = oy - y;
  T const r2  = dx * dx + dy * dy + softening * softening;
  T const inv = T(1) / (r2 * std::sqrt(r2));
  fx += m * dx * inv;
  fy += m * dy * inv;
}

/// The opening criterion: a node of half size h whose centre of mass is at distance^2 d2 is
/// used as one mass when (2h)^2 < theta^2 * d2.
template <class T>
HEAPLAB_HD inline bool far_enough(T h, T d2, T theta) {
  return 4 * h * h < theta * theta * d2;
}

/// One step of a body: velocity from the force (already times its mass and gravity), position
/// from the velocity, reflected at the root box's walls.
HEAPLAB_HD inline void integrate(
    float& x, float& y, float& vx, float& vy, float fx, float fy, float mass, float dt) {
  vx += fx / mass * dt;
  vy += fy / mass * dt;
  x += vx * dt;
  y += vy * dt;
  float const wall = kHalf * 0.999f;
  if (x >= wall) x = 2 * wall - x, vx = -vx;
  if (x < -wall) x = -2 * wall - x, vx = -vx;
  if (y >= wall) y = 2 * wall - y, vy = -vy;
  if (y < -wall) y = -2 * wall - y, vy = -vy;
  // A body that moved more than a box in one step stays inside anyway.
  x = x < -wall ? -wall : (x >= wall ? wall * 0.999f : x);
  y = y < -wall ? -wall : (y >= wall ? wall * 0.999f : y);
}

}  // namespace heaplab::apps::barnes_hut
