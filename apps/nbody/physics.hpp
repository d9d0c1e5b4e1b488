// The arithmetic of `heaplab_apps nbody` and `collision` (docs/apps.md "nbody", "collision"),
// shared by the heap app, the static SOA baseline and the CPU reference so that all three do the
// same operations on the same operands (only the order of the force sums differs, see below).
// 2D bodies in double precision, G = 1 (DynaSOAr Table 1 "nbody"/"collision" and its Listing 1;
// the paper uses float: double here so that mass and momentum checks can be tight).
//
//   force on i from j:  F_ij = m_i m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2)   (softened)
//   move (semi-implicit Euler, DynaSOAr Listing 1 step_2_move):
//                       v += F / m * dt;   x += v * dt
//   merge of a into b (perfectly inelastic collision, DynaSOAr Table 1 "collision"):
//                       m = m_a + m_b;  v = (m_a v_a + m_b v_b) / m;  x = (m_a x_a + m_b x_b) / m
//
// pair_force computes the pair's common factor from the product m_i m_j (commutative, so the
// same bits for (i, j) and (j, i)) and the difference vector, so F_ij = -F_ji bitwise; what
// breaks momentum conservation in floating point is only the rounding of the per-body sums
// (their order: heap order in device_do, index order in the baseline and the reference) and of
// the move. Host and device (HEAPLAB_HD); no allocation, no state.
#pragma once

#include <cmath>
#include <cstdint>

#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"

namespace heaplab::apps::nbody {

/// The planted bug (docs/mutants.md "Applications"): in a build with
/// HEAPLAB_MUTANT_NAME="collision_merge_drops_mass" the absorbing body keeps its own mass instead
/// of adding the absorbed one's. The CPU reference and the checks always use the real rule.
inline constexpr bool kMutantDropsMass = core::mutant::collision_merge_drops_mass;

/// The second planted bug (docs/mutants.md "Applications"): in a build with
/// HEAPLAB_MUTANT_NAME="nbody_force_skips_tail_tile" the baseline's force loop visits the other
/// bodies in whole tiles of kForceTile only, as a tiled n-body kernel written for body counts that
/// are a multiple of its tile does: the last n % kForceTile bodies pull on nobody (they still feel
/// every other body), so the total momentum drifts unless n is a multiple of kForceTile.
inline constexpr bool kMutantSkipsTailTile = core::mutant::nbody_force_skips_tail_tile;
inline constexpr std::uint32_t kForceTile  = 32;

/// How many bodies (indices 0 .. result-1) the baseline's force loop of n bodies visits: all of
/// them, or with SkipsTailTile the planted bug.
template <bool SkipsTailTile>
HEAPLAB_HD inline std::uint32_t force_sources(std::uint32_t n) {
  // MUTANT nbody_force_skips_tail_tile: the partial last tile is dropped.
  if constexpr (SkipsTailTile) return n / kForceTile * kForceTile;
  return n;
}

struct Vec2 {
  double x = 0;
  double y = 0;
};

/// The force on a body at `self` with mass `m_self` from a body at `other` with `m_other`.
HEAPLAB_HD inline Vec2 pair_force(
    Vec2 self, double m_self, Vec2 other, double m_other, double softening2) {
  double const dx  = other.x - self.x;
  double const dy  = other.y - self.y;
  double const r2  = dx * dx + dy * dy + softening2;
  double const inv = 1.0 / (r2 * sqrt(r2));
  double const s   = (m_self * m_other) * inv;
  return {s * dx, s * dy};
}

/// One semi-implicit Euler step of one body (velocity first, then position with the new one).
HEAPLAB_HD inline void move(Vec2& pos, Vec2& vel, Vec2 force, double mass, double dt) {
  vel.x += force.x / mass * dt;
  vel.y += force.y / mass * dt;
  pos.x += vel.x * dt;
  pos.y += vel.y * dt;
}

/// Squared distance (the merge test is d^2 < r^2).
HEAPLAB_HD inline double distance2(Vec2 a, Vec2 b) {
  double const dx = b.x - a.x;
  double const dy = b.y - a.y;
  return dx * dx + dy * dy;
}

/// The merge partner rule (collision, "pick"): a candidate (d2, id) is better than the best so far
/// iff it is closer, or equally close with a lower id; only candidates with d2 < r^2 count. The
/// minimum is unique whatever order the candidates come in, so heap order (device_do), index order
/// (baseline) and the reference pick the same partner from the same positions.
HEAPLAB_HD inline bool better_partner(double d2,
                                      std::uint32_t id,
                                      double best_d2,
                                      std::uint32_t best_id) {
  return d2 < best_d2 || (d2 == best_d2 && id < best_id);
}

/// Which of two mutual partners absorbs the other: the heavier one; equal masses: the lower id.
HEAPLAB_HD inline bool absorbs(double m_self,
                               std::uint32_t id_self,
                               double m_other,
                               std::uint32_t id_other) {
  return m_self > m_other || (m_self == m_other && id_self < id_other);
}

struct Merged {
  Vec2 pos;
  Vec2 vel;
  double mass = 0;
};

/// The body that results when `self` absorbs `other`. DropsMass: the planted bug.
template <bool DropsMass>
HEAPLAB_HD inline Merged merge(
    Vec2 pos_self, Vec2 vel_self, double m_self, Vec2 pos_other, Vec2 vel_other, double m_other) {
  double const m = m_self + m_other;
  Merged r;
  r.pos.x = (m_self * pos_self.x + m_other * pos_other.x) / m;
  r.pos.y = (m_self * pos_self.y + m_other * pos_other.y) / m;
  r.vel.x = (m_self * vel_self.x + m_other * vel_other.x) / m;
  r.vel.y = (m_self * vel_self.y + m_other * vel_other.y) / m;
  r.mass  = m;
  if constexpr (DropsMass) r.mass = m_self;  // MUTANT collision_merge_drops_mass: m_other is lost
  return r;
}

}  // namespace heaplab::apps::nbody
