// The rules of traffic (docs/apps.md "traffic"): Nagel and Schreckenberg's cellular automaton of
// traffic flow [51] on a street network, as DynaSOAr Table 1 runs it ("Streets are modeled as a
// network of cells, with at most one vehicle per cell. New vehicles are continuously added to the
// simulation and existing vehicles are removed at their final destination"). Shared by the GPU
// variants and the CPU reference. Host and device (HEAPLAB_HD); plain C++17.
//
// The network (network.hpp builds it): intersections on a W x H torus, joined by one-way streets
// to their 4 neighbours; a street is a chain of 5..12 cells with a speed limit of 2..5 cells per
// iteration. The last cell of a street leads to the first cells of the 3 streets that leave its end
// intersection (no U-turn); a car's turn there is a function of its id and the street, so its path
// is fixed from the start. Some first cells of streets are producers, where cars appear.
//
// One iteration, Nagel-Schreckenberg's update in parallel form, three phases:
//   decide  every car accelerates (+1 up to its own and its cell's speed limit), brakes to the free
//           cells ahead on its path (as they were at the start of the phase), slows by one with
//           probability --slow, and picks its target cell. A car whose trip ends within its
//           velocity leaves the network. A car whose move enters another street claims that
//           street for this iteration: claims[street] = min(claims[street], key(car)).
//   move    a car that lost its claim stops at the last cell of its own street; every car moves
//           to its target (the targets of one phase are distinct: see below) and its trip shrinks.
//   spawn   every empty producer cell may get a new car (its trip length and speed drawn).
// Why targets are distinct: within a street a car's target is before the cell its leader held at
// the start of the phase, and leaders only move forward; into a street only the one winner of its
// claim enters, and cars already there held their cells at the start (so the winner stops before
// them) and move forward. A street is at least as long as the highest speed, so a move crosses at
// most one intersection. Random numbers are counter-based, keys are (random priority, cell): no
// result depends on thread order.
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"

namespace heaplab::apps::traffic {

/// MUTANT traffic_merge_without_claim: in the heap variant a car that enters another street does
/// not check its claim: two cars may enter one street in one iteration (docs/mutants.md).
inline constexpr bool kMutantMergeWithoutClaim = core::mutant::traffic_merge_without_claim;

enum : std::uint32_t { kNone = 0xFFFFFFFFu, kGone = 0xFFFFFFFEu };
enum : std::uint64_t { kNoKey = ~std::uint64_t{0} };
enum : std::uint32_t {
  kMinStreet = 5,  // cells per street
  kMaxStreet = 12,
  kMinLimit  = 2,   // a street's speed limit (cells per iteration)
  kMaxLimit  = 5,   // also the highest car speed; <= kMinStreet
  kMinTrip   = 20,  // cells a new car drives before it leaves
  kMaxTrip   = 120,
  kMaxPath   = kMaxLimit,
};
enum Salt : std::uint32_t {
  kTurn     = 0,
  kSlow     = 1,
  kClaim    = 2,
  kSpawn    = 3,
  kCarSpeed = 4,
  kCarTrip  = 5
};

struct Params {
  std::uint32_t width           = 64;  // intersections per row
  std::uint32_t height          = 64;  // rows of intersections
  std::uint64_t seed            = 1;
  std::uint32_t slow_per_mille  = 200;  // Nagel-Schreckenberg's p = 0.2
  std::uint32_t spawn_per_mille = 100;  // a producer's chance per iteration
};

HEAPLAB_HD inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
HEAPLAB_HD inline std::uint64_t random(std::uint64_t seed,
                                       std::uint64_t a,
                                       std::uint64_t b,
                                       std::uint32_t salt) {
  std::uint64_t z = mix64(seed + 0x9E3779B97F4A7C15ull);
  z               = mix64(z ^ (a * 0x100000001B3ull + salt));
  return mix64(z ^ b);
}
HEAPLAB_HD inline std::uint32_t uniform(std::uint64_t r, std::uint32_t lo, std::uint32_t hi) {
  return lo + static_cast<std::uint32_t>(r % (std::uint64_t{hi} - lo + 1));
}

/// The network's arrays (network.hpp owns them; device copies for the GPU).
struct Net {
  std::uint32_t cells = 0, streets = 0;
  std::uint32_t const* cell_street  = nullptr;  // per cell
  std::uint32_t const* cell_next    = nullptr;  // per cell: the next cell of its street, or kNone
  std::uint8_t const* cell_producer = nullptr;  // per cell: 1 for a producer
  std::uint32_t const* street_first = nullptr;  // per street
  std::uint32_t const* street_limit = nullptr;  // per street
  std::uint32_t const* street_turns = nullptr;  // per street: the 3 streets one may turn into

  /// The cell after c on the path of car `id`.
  [[nodiscard]] HEAPLAB_HD std::uint32_t next(Params const& p,
                                              std::uint32_t c,
                                              std::uint64_t id) const {
    if (cell_next[c] != kNone) return cell_next[c];
    std::uint32_t const s = cell_street[c];
    std::uint32_t const k = static_cast<std::uint32_t>(random(p.seed, id, s, kTurn) % 3u);
    return street_first[street_turns[3 * s + k]];
  }
};

/// One car's fields (the heap's object fields; the dense world's per-cell arrays).
struct Vehicle {
  bool present               = false;
  std::uint64_t id           = 0;  // iteration * cells + producer cell of its birth
  std::uint32_t velocity     = 0;
  std::uint32_t max_velocity = 0;
  std::uint32_t trip         = 0;  // cells still to drive
};

/// decide's result for one car.
struct Plan {
  std::uint32_t velocity      = 0;      // if its claim holds (or it claims nothing)
  std::uint32_t target        = kNone;  // its cell after the move, or kGone
  std::uint32_t claim         = kNone;  // the street its move enters, or kNone
  std::uint32_t stop_velocity = 0;      // if it loses the claim: to the end of its street
  std::uint32_t stop          = kNone;
};

HEAPLAB_HD inline std::uint64_t key(Params const& p, std::uint32_t it, std::uint32_t cell) {
  return (random(p.seed, it, cell, kClaim) & 0xFFFFFFFF00000000ull) | cell;
}

/// Phase decide for the car in cell c; occupied(j) reads the state at the start of the phase.
template <class Occupied>
HEAPLAB_HD Plan plan_move(Params const& p,
                          Net const& net,
                          std::uint32_t it,
                          std::uint32_t c,
                          Vehicle const& car,
                          Occupied occupied) {
  std::uint32_t path[kMaxPath + 1];
  path[0]             = c;
  std::uint32_t limit = car.velocity + 1;
  if (limit > car.max_velocity) limit = car.max_velocity;
  std::uint32_t const street_limit = net.street_limit[net.cell_street[c]];
  if (limit > street_limit) limit = street_limit;
  std::uint32_t free = 0;  // free cells ahead, up to limit
  while (free < limit) {
    std::uint32_t const j = net.next(p, path[free], car.id);
    if (occupied(j)) break;
    path[++free] = j;
  }
  std::uint32_t v = free;
  if (v > 0 && random(p.seed, it, car.id, kSlow) % 1000u < p.slow_per_mille) v -= 1;
  Plan plan;
  plan.velocity = v;
  if (car.trip <= v) {  // reaches its destination and leaves the network
    plan.target = kGone;
    return plan;
  }
  plan.target = path[v];
  // A move enters another street where it leaves a street's last cell (a street may lead into
  // itself on a 1-wide torus: that entry is claimed too).
  for (std::uint32_t k = 1; k <= v; ++k)
    if (net.cell_next[path[k - 1]] == kNone) {
      plan.claim         = net.cell_street[path[k]];
      plan.stop_velocity = k - 1;
      plan.stop          = path[k - 1];
      break;
    }
  return plan;
}

/// Phase move: where the car in c ends (kGone: it left) and its velocity after the move.
HEAPLAB_HD inline Plan resolve(Plan const& plan,
                               std::uint64_t claim_winner,
                               std::uint64_t own_key,
                               bool ignore_claims = false) {
  Plan r = plan;
  if (plan.target != kGone && plan.claim != kNone && claim_winner != own_key && !ignore_claims) {
    r.target   = plan.stop;
    r.velocity = plan.stop_velocity;
  }
  return r;
}

/// Phase spawn: the car producer cell c gets in iteration `it`, if any (present false: none).
HEAPLAB_HD inline Vehicle spawned(Params const& p,
                                  std::uint32_t cells,
                                  std::uint32_t it,
                                  std::uint32_t c) {
  Vehicle car;
  if (random(p.seed, it, c, kSpawn) % 1000u >= p.spawn_per_mille) return car;
  car.present      = true;
  car.id           = std::uint64_t{it} * cells + c;
  car.velocity     = 0;
  car.max_velocity = uniform(random(p.seed, it, c, kCarSpeed), 3, kMaxLimit);
  car.trip         = uniform(random(p.seed, it, c, kCarTrip), kMinTrip, kMaxTrip);
  return car;
}

}  // namespace heaplab::apps::traffic
