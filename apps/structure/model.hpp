// The physics of `heaplab_apps structure` (docs/apps.md "structure"): a fracture simulation in the
// style of DynaSOAr Table 1 "structure" and CompactGpu Fig. 12. A W x H mesh of nodes (mass
// points) joined by springs (right, down and the down-right diagonal of every grid square); the
// scenario (Scenario below) anchors nodes and loads the mesh: `pull` pulls the right column,
// `shrink` (the default) contracts every rest length over time. A spring whose strain (length -
// current rest) / current rest exceeds its own threshold breaks.
//
// Every arithmetic step is one exactly rounded IEEE float operation: on the device the _rn
// intrinsics (never contracted into an FMA), on the host plain float operators (x86-64 SSE, no
// FMA without -mfma). So the heap app, the static baseline and the CPU simulation (reference.hpp)
// compute bitwise-identical positions when they add a node's spring forces in the same order (its
// spring slots 0..5), and therefore break the same springs and remove the same nodes.
// Host and device (HEAPLAB_HD); plain C++ on the host.
#pragma once

#include <cmath>
#include <cstdint>

#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"

namespace heaplab::apps::structure {

/// Spring slots per node: 0 right, 1 left, 2 down, 3 up, 4 down-right, 5 up-left.
inline constexpr int kMaxDegree = 6;
/// BFS distance of a node no anchor reaches (yet).
inline constexpr std::uint32_t kUnreached = 0xFFFFFFFFu;

/// Node kinds.
inline constexpr std::uint8_t kFree   = 0;
inline constexpr std::uint8_t kAnchor = 1;  // fixed; the BFS starts here
inline constexpr std::uint8_t kPulled = 2;  // moves right at `load` per time unit

/// The app's planted bug (docs/mutants.md "Applications"): with
/// HEAPLAB_MUTANT_NAME="structure_keep_orphan_springs" the GPU app removes the nodes no anchor
/// reaches but forgets to destroy their springs. `--check` must report a live spring whose
/// endpoint is not a live node.
inline constexpr bool kMutantKeepOrphanSprings = core::mutant::structure_keep_orphan_springs;

/// Loading scenarios (docs/apps.md "structure"):
/// - pull: column 0 anchored, the last column pulled right at `load`; the strain concentrates at
///   the first column to tear, which comes off whole (few nodes removed).
/// - shrink: the four borders anchored, every rest length shrinks by `shrink` of its initial
///   value per iteration (thermal contraction / drying mud); the body load strains every spring
///   alike, the weakest break first, cracks join into a network and cut islands off the border,
///   which the BFS removes iteration after iteration (progressive fracture).
enum class Scenario : std::uint8_t { pull = 0, shrink = 1 };

struct Physics {
  float dt         = 0.1f;   // time step
  float stiffness  = 1.0f;   // spring constant k
  float damping    = 0.98f;  // velocity factor per step
  float load       = 0.2f;   // pull: speed of the right column (length units per time unit)
  float rest_scale = 1.0f;   // current rest length = initial rest * rest_scale (shrink)
};

/// The shrink scenario's rest_scale after `iteration` iterations: 1 - shrink * iteration, at
/// least `floor`. Host only (the variants get it through Physics, so every variant uses the same
/// float).
inline float rest_scale_at(float shrink, float floor, int iteration) {
  double const s = 1.0 - static_cast<double>(shrink) * iteration;
  return static_cast<float>(s > floor ? s : floor);
}

namespace exact {
#if defined(__CUDA_ARCH__)
HEAPLAB_HD_INLINE float add(float a, float b) { return __fadd_rn(a, b); }
HEAPLAB_HD_INLINE float sub(float a, float b) { return __fsub_rn(a, b); }
HEAPLAB_HD_INLINE float mul(float a, float b) { return __fmul_rn(a, b); }
HEAPLAB_HD_INLINE float div(float a, float b) { return __fdiv_rn(a, b); }
HEAPLAB_HD_INLINE float sqrt(float a) { return __fsqrt_rn(a); }
#else
HEAPLAB_HD_INLINE float add(float a, float b) { return a + b; }
HEAPLAB_HD_INLINE float sub(float a, float b) { return a - b; }
HEAPLAB_HD_INLINE float mul(float a, float b) { return a * b; }
HEAPLAB_HD_INLINE float div(float a, float b) { return a / b; }
HEAPLAB_HD_INLINE float sqrt(float a) { return std::sqrt(a); }
#endif
}  // namespace exact

/// Length of the segment (ax, ay) - (bx, by).
HEAPLAB_HD_INLINE float length(float ax, float ay, float bx, float by) {
  float const dx = exact::sub(bx, ax);
  float const dy = exact::sub(by, ay);
  return exact::sqrt(exact::add(exact::mul(dx, dx), exact::mul(dy, dy)));
}

/// Strain of a spring of rest length `rest` between the two points.
HEAPLAB_HD_INLINE float strain(float ax, float ay, float bx, float by, float rest) {
  return exact::div(exact::sub(length(ax, ay, bx, by), rest), rest);
}

/// The breaking rule: strain above the spring's threshold.
HEAPLAB_HD_INLINE bool breaks(float strain_value, float threshold) {
  return strain_value > threshold;
}

/// The current rest length of a spring of initial rest length `rest` (exactly `rest` when
/// rest_scale is 1, so the pull scenario's arithmetic is unchanged).
HEAPLAB_HD_INLINE float current_rest(Physics const& p, float rest) {
  return exact::mul(rest, p.rest_scale);
}

/// Whether the spring (a, b) of initial rest length `rest` breaks now.
HEAPLAB_HD_INLINE bool spring_breaks(
    Physics const& p, float ax, float ay, float bx, float by, float rest, float threshold) {
  return breaks(strain(ax, ay, bx, by, current_rest(p, rest)), threshold);
}

/// Adds the force of a spring (a, b) of initial rest length `rest` on its endpoint a:
/// k (len - current rest) / len * (b - a).
HEAPLAB_HD_INLINE void add_spring_force(
    Physics const& p, float ax, float ay, float bx, float by, float rest, float& fx, float& fy) {
  float const dx  = exact::sub(bx, ax);
  float const dy  = exact::sub(by, ay);
  float const len = exact::sqrt(exact::add(exact::mul(dx, dx), exact::mul(dy, dy)));
  if (!(len > 0.0f)) return;
  float const s = exact::div(exact::mul(p.stiffness, exact::sub(len, current_rest(p, rest))), len);
  fx            = exact::add(fx, exact::mul(s, dx));
  fy            = exact::add(fy, exact::mul(s, dy));
}

/// One step of a node under force (fx, fy): semi-implicit Euler with damping for a free node, a
/// fixed anchor, a pulled node moving right at `load`.
HEAPLAB_HD_INLINE void integrate(Physics const& p,
                                 std::uint8_t kind,
                                 float mass,
                                 float fx,
                                 float fy,
                                 float& x,
                                 float& y,
                                 float& vx,
                                 float& vy) {
  if (kind == kAnchor) return;
  if (kind == kPulled) {
    x = exact::add(x, exact::mul(p.load, p.dt));
    return;
  }
  vx = exact::mul(exact::add(vx, exact::mul(exact::div(fx, mass), p.dt)), p.damping);
  vy = exact::mul(exact::add(vy, exact::mul(exact::div(fy, mass), p.dt)), p.damping);
  x  = exact::add(x, exact::mul(vx, p.dt));
  y  = exact::add(y, exact::mul(vy, p.dt));
}

}  // namespace heaplab::apps::structure
