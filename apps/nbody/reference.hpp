// The CPU side of `heaplab_apps nbody` and `collision` (docs/apps.md "nbody", "collision"): the
// seeded initial bodies, a sequential double-precision reference of both apps (index order, the
// arithmetic of physics.hpp), and the checker `--check` runs on a downloaded state. Plain C++17,
// host only; tested by nbody_test (cpu).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "physics.hpp"

namespace heaplab::apps::nbody {

/// One body as the checks see it, indexed by its id (the index it was created with; an absorber
/// keeps its id, an absorbed body's entry is not alive).
struct BodyRecord {
  Vec2 pos;
  Vec2 vel;
  double mass = 0;
  bool alive  = false;
};

using State = std::vector<BodyRecord>;

struct Physics {
  double dt           = 0.001;
  double softening    = 0.01;
  double merge_radius = 0.0;  // > 0: collision (merging); 0: plain nbody
  [[nodiscard]] bool collision() const { return merge_radius > 0; }
};

/// N bodies from `seed`: position uniform in [-1, 1]^2, velocity uniform in [-v, v]^2, mass
/// uniform in [0.5, 1.5] / N (total mass about 1), from splitmix64(seed, id, k); the same on every
/// platform. Throws std::invalid_argument for n == 0 or v < 0.
State initial_bodies(std::uint32_t n, std::uint64_t seed, double v);

/// The sequential reference: both apps step by step, forces summed in index order.
class Reference {
 public:
  Reference(State initial, Physics physics) : s_(std::move(initial)), p_(physics) {}
  /// One iteration: force, move and, for collision, pick, merge, reap. Returns the merges.
  std::uint64_t step();
  [[nodiscard]] State const& state() const { return s_; }

 private:
  State s_;
  Physics p_;
};

/// The conserved quantities, summed over the live bodies in id order.
struct Totals {
  std::uint64_t bodies = 0;
  double mass          = 0;
  Vec2 momentum;
  double momentum_scale = 0;  // sum of m |v|: what the momentum tolerance is relative to
};
Totals totals(State const& s);

/// What --check compares a state with (docs/apps.md "nbody" invariants).
struct Expected {
  Totals initial;
  bool collision       = false;
  std::uint64_t merges = 0;                        // the device merge counter (0 for nbody)
  std::optional<std::uint64_t> heap_live_objects;  // the heap's used slots (none: the baseline)
  double mass_tolerance     = 1e-9;                // relative, collision only; nbody: exact
  double momentum_tolerance = 1e-9;                // |P - P0| <= tol * max(scale0, scale)
};

/// The first violated invariant of `s` (a sentence), nullopt when all hold: body count =
/// initial - merges = heap live objects, every live body finite with mass > 0, total mass
/// exactly the initial one (nbody; masses never change and are summed in the same order) or
/// within the relative mass tolerance (collision), total momentum within its tolerance.
std::optional<std::string> check_state(State const& s, Expected const& e);

/// The first body (by id) where `actual` differs from `expected`: alive differs, or a position,
/// velocity or mass differs by more than tolerance * (1 + |expected value|). nullopt: equal
/// within the tolerance. A different size is a difference.
std::optional<std::string> compare_states(State const& expected,
                                          State const& actual,
                                          double tolerance);

}  // namespace heaplab::apps::nbody
