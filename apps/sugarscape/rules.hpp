// The rules of sugarscape (docs/apps.md "sugarscape"; Epstein and Axtell's agent society as
// DynaSOAr Table 1 runs it: "agents inhabit a 2D grid and can move to neighboring cells. Cells
// contain sugar which is consumed by agents. ... We simulate resource consumption, ageing and
// mating"), shared by the GPU variants and the CPU reference: the parameters, the counter-based
// random numbers, and the per-cell rules of the dense world, which is both the CPU reference and
// the static baseline (DynaSOAr sec. 6, category 3: the agents' fields merged into the cells).
// Host and device (HEAPLAB_HD); plain C++17.
//
// One iteration, nine phases; each reads only what no thread of the phase writes, and each writes
// only its own cell (or takes a minimum with an atomic, whose result does not depend on thread
// order), so running a phase's cells one after another on the CPU gives exactly what the GPU's
// threads give:
//   1 live      every cell regrows sugar (+grow, up to its capacity); every agent ages by one and
//               burns its metabolism; one older than its maximum age or without the sugar to burn
//               dies (its cell becomes empty)
//   2 decide    every agent looks along the 4 axes up to its vision for the empty cell with the
//   most
//               sugar (ties: the nearer, then the earlier in its rotated direction order) and asks
//               for it: requests[target] = min(requests[target], key(agent))
//   3 pull      every empty cell with a request takes the winner's fields (the key names the cell)
//   4 leave     every agent whose request won empties its old cell
//   5 harvest   every agent takes its cell's sugar
//   6 propose   every fertile male proposes to one fertile female among its 4 neighbours:
//               proposals[female] = min(proposals[female], key(male))
//   7 choose    every fertile female with a proposal asks for one empty neighbour cell for the
//               child: births[cell] = min(births[cell], key(female))
//   8 born      every empty cell with a birth request takes a child of the winning mother and of
//               the father that won her proposal
//   9 pay       a mother whose birth request won pays kMateCost, and so does the father
// A key is (a random 32-bit priority of the agent's cell in this phase, the cell): the minimum
// names one winner regardless of order; kNoKey (all ones) means no request.
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"

namespace heaplab::apps::sugarscape {

/// MUTANT sugarscape_father_does_not_pay: in the heap variant, a birth takes the child's
/// endowment from the mother only; the father keeps his sugar. The reference's fathers pay, so
/// --check reports the first father's sugar (docs/mutants.md "Applications").
inline constexpr bool kMutantFatherDoesNotPay = core::mutant::sugarscape_father_does_not_pay;

enum Kind : std::uint8_t { kEmpty = 0, kMale = 1, kFemale = 2 };
enum Salt : std::uint32_t {
  kInitAgent       = 0,
  kInitSex         = 1,
  kInitSugar       = 2,
  kInitMetabolism  = 3,
  kInitVision      = 4,
  kInitAge         = 5,
  kInitMaxAge      = 6,
  kCapacity        = 7,
  kMovePriority    = 8,
  kMoveRotation    = 9,
  kProposeOrder    = 10,
  kProposePriority = 11,
  kChildCell       = 12,
  kBirthPriority   = 13,
  kChild           = 14,
};
// Enumerators, not variables: device code may use them by reference without ODR-using a host
// variable.
enum : std::uint32_t { kNone = 0xFFFFFFFFu };
enum : std::uint64_t { kNoKey = ~std::uint64_t{0} };

/// The model's constants (Epstein and Axtell's ranges, simplified).
enum : std::uint32_t {
  kMaxCapacity     = 4,  // a cell's capacity is uniform in 0..4
  kGrow            = 1,  // sugar regrown per iteration
  kMinEndowment    = 5,  // initial sugar of an agent: 5..25
  kMaxEndowment    = 25,
  kMaxMetabolism   = 4,   // 1..4 per iteration
  kMaxVision       = 6,   // 1..6 cells along an axis
  kMinMaxAge       = 60,  // maximum age 60..100
  kMaxMaxAge       = 100,
  kFertileFrom     = 12,  // fertile from this age ...
  kFemaleFertileTo = 50,  // ... to these
  kMaleFertileTo   = 60,
  kMateCost        = 10,  // each parent gives this much; a fertile agent holds at least this
};

struct Params {
  std::uint32_t width  = 1024;
  std::uint32_t height = 1024;
  std::uint64_t seed   = 1;
  double density       = 0.2;  // fraction of cells with an agent at the start
  [[nodiscard]] HEAPLAB_HD std::uint64_t cells() const { return std::uint64_t{width} * height; }
};

/// splitmix64's finalizer.
HEAPLAB_HD inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/// One 64-bit number per (seed, iteration, cell, salt).
HEAPLAB_HD inline std::uint64_t random(std::uint64_t seed,
                                       std::uint32_t iteration,
                                       std::uint32_t cell,
                                       std::uint32_t salt) {
  std::uint64_t z = mix64(seed + 0x9E3779B97F4A7C15ull);
  z               = mix64(z ^ (std::uint64_t{iteration} << 32 | salt));
  return mix64(z ^ cell);
}
HEAPLAB_HD inline std::uint32_t uniform(std::uint64_t r, std::uint32_t lo, std::uint32_t hi) {
  return lo + static_cast<std::uint32_t>(r % (std::uint64_t{hi} - lo + 1));
}
/// The key of the agent in `cell` for a minimum in phase `salt`.
HEAPLAB_HD inline std::uint64_t key(Params const& p,
                                    std::uint32_t iteration,
                                    std::uint32_t cell,
                                    std::uint32_t salt) {
  return (random(p.seed, iteration, cell, salt) & 0xFFFFFFFF00000000ull) | cell;
}
HEAPLAB_HD inline std::uint32_t key_cell(std::uint64_t key) {
  return static_cast<std::uint32_t>(key & 0xFFFFFFFFu);
}

/// The cell `distance` steps from c along direction d (0 north, 1 east, 2 south, 3 west).
HEAPLAB_HD inline std::uint32_t toward(Params const& p,
                                       std::uint32_t c,
                                       std::uint32_t d,
                                       std::uint32_t distance) {
  std::uint32_t const x  = c % p.width;
  std::uint32_t const y  = c / p.width;
  std::uint32_t const dx = distance % p.width;
  std::uint32_t const dy = distance % p.height;
  switch (d) {
    case 0:
      return ((y + p.height - dy) % p.height) * p.width + x;
    case 1:
      return y * p.width + (x + dx) % p.width;
    case 2:
      return ((y + dy) % p.height) * p.width + x;
    default:
      return y * p.width + (x + p.width - dx) % p.width;
  }
}

/// One agent's fields (the dense world's per-cell arrays, the heap's object fields).
struct Traits {
  std::uint8_t kind        = kEmpty;
  std::uint32_t sugar      = 0;
  std::uint32_t age        = 0;
  std::uint32_t max_age    = 0;
  std::uint32_t metabolism = 0;
  std::uint32_t vision     = 0;
};

/// The agent that starts in cell c (kind kEmpty: none).
HEAPLAB_HD inline Traits initial_agent(Params const& p, std::uint32_t c) {
  Traits t;
  double const u =
      static_cast<double>(random(p.seed, 0, c, kInitAgent) >> 11) * (1.0 / 9007199254740992.0);
  if (!(u < p.density)) return t;
  t.kind       = (random(p.seed, 0, c, kInitSex) & 1u) != 0 ? kFemale : kMale;
  t.sugar      = uniform(random(p.seed, 0, c, kInitSugar), kMinEndowment, kMaxEndowment);
  t.metabolism = uniform(random(p.seed, 0, c, kInitMetabolism), 1, kMaxMetabolism);
  t.vision     = uniform(random(p.seed, 0, c, kInitVision), 1, kMaxVision);
  t.max_age    = uniform(random(p.seed, 0, c, kInitMaxAge), kMinMaxAge, kMaxMaxAge);
  t.age        = uniform(random(p.seed, 0, c, kInitAge), 0, t.max_age / 2);
  return t;
}
HEAPLAB_HD inline std::uint32_t capacity(Params const& p, std::uint32_t c) {
  return uniform(random(p.seed, 0, c, kCapacity), 0, kMaxCapacity);
}

/// Phase 1 for an agent: after ageing and burning its metabolism, does it live? (t is updated.)
HEAPLAB_HD inline bool live_agent(Traits& t) {
  t.age += 1;
  if (t.age > t.max_age || t.sugar < t.metabolism) return false;
  t.sugar -= t.metabolism;
  return true;
}
HEAPLAB_HD inline std::uint32_t regrown(std::uint32_t sugar, std::uint32_t capacity) {
  return sugar + kGrow < capacity ? sugar + kGrow : capacity;
}

/// Phase 2: the agent in c with `vision` chooses a target (kNone: stays). empty(j) and sugar(j)
/// read the state at the start of the phase.
template <class Empty, class Sugar>
HEAPLAB_HD std::uint32_t choose_move(Params const& p,
                                     std::uint32_t iteration,
                                     std::uint32_t c,
                                     std::uint32_t vision,
                                     Empty empty,
                                     Sugar sugar) {
  std::uint32_t const first =
      static_cast<std::uint32_t>(random(p.seed, iteration, c, kMoveRotation) & 3u);
  std::uint32_t best = kNone, best_sugar = 0, best_distance = 0;
  for (std::uint32_t k = 0; k < 4; ++k) {
    std::uint32_t const d = (first + k) & 3u;
    for (std::uint32_t dist = 1; dist <= vision; ++dist) {
      std::uint32_t const j = toward(p, c, d, dist);
      if (j == c || !empty(j)) continue;
      std::uint32_t const s = sugar(j);
      if (s > best_sugar || (s == best_sugar && s > 0 && dist < best_distance)) {
        best = j, best_sugar = s, best_distance = dist;
      }
    }
  }
  return best;  // kNone when no empty cell in sight holds sugar
}

HEAPLAB_HD inline bool fertile(Traits const& t) {
  std::uint32_t const to = t.kind == kFemale ? kFemaleFertileTo : kMaleFertileTo;
  return t.kind != kEmpty && t.age >= kFertileFrom && t.age <= to && t.sugar >= kMateCost;
}

/// Phase 6: the fertile female among c's 4 neighbours that the male in c proposes to, or kNone.
/// traits(j) reads neighbour j at the start of the phase.
template <class TraitsAt>
HEAPLAB_HD std::uint32_t choose_partner(Params const& p,
                                        std::uint32_t iteration,
                                        std::uint32_t c,
                                        TraitsAt traits) {
  std::uint32_t const first =
      static_cast<std::uint32_t>(random(p.seed, iteration, c, kProposeOrder) & 3u);
  for (std::uint32_t k = 0; k < 4; ++k) {
    std::uint32_t const j = toward(p, c, (first + k) & 3u, 1);
    if (j == c) continue;
    Traits const t = traits(j);
    if (t.kind == kFemale && fertile(t)) return j;
  }
  return kNone;
}

/// Phase 7: the empty neighbour of the mother in c where the child would be born, or kNone.
template <class Empty>
HEAPLAB_HD std::uint32_t choose_child_cell(Params const& p,
                                           std::uint32_t iteration,
                                           std::uint32_t c,
                                           Empty empty) {
  std::uint32_t const first =
      static_cast<std::uint32_t>(random(p.seed, iteration, c, kChildCell) & 3u);
  for (std::uint32_t k = 0; k < 4; ++k) {
    std::uint32_t const j = toward(p, c, (first + k) & 3u, 1);
    if (j != c && empty(j)) return j;
  }
  return kNone;
}

/// Phase 8: the child born in cell e of `mother` and `father`.
HEAPLAB_HD inline Traits child(Params const& p,
                               std::uint32_t iteration,
                               std::uint32_t e,
                               Traits const& mother,
                               Traits const& father) {
  std::uint64_t const r = random(p.seed, iteration, e, kChild);
  Traits t;
  t.kind       = (r & 1u) != 0 ? kFemale : kMale;
  t.metabolism = (r & 2u) != 0 ? mother.metabolism : father.metabolism;
  t.vision     = (r & 4u) != 0 ? mother.vision : father.vision;
  t.max_age    = uniform(r >> 8, kMinMaxAge, kMaxMaxAge);
  t.age        = 0;
  t.sugar      = 2 * kMateCost;
  return t;
}

}  // namespace heaplab::apps::sugarscape
