// The rules of wa-tor (docs/apps.md "wa-tor"; Dewdney 1984 as DynaSOAr Table 1 and SoaAlloc sec. 3
// describe it), shared by the GPU variants and the CPU reference/checker: the parameters, the
// counter-based random numbers, the torus neighbourhood and the per-cell conflict resolution.
// Host and device (HEAPLAB_HD); plain C++17.
//
// One iteration is two rounds, fish then sharks, each of three do-alls (DynaSOAr's multi-phase
// wa-tor): prepare (every cell clears its requests), decide (every agent of the round picks a
// target among its 4 von Neumann neighbours and sets a request bit on it; then every requested
// cell accepts exactly one requester, chosen with the cell's own random number: the per-cell
// priority rule), move (an accepted agent moves; it may breed into the cell it left; a shark may
// eat the fish of its target and may starve). Every choice depends only on (seed, iteration,
// round, cell) and on the state at the start of the phase, never on thread order, so the three
// variants and the CPU reference compute the same populations.
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"

namespace heaplab::apps::wa_tor {

/// MUTANT wa_tor_shark_eats_without_free: a shark that eats a fish takes its cell but does not
/// destroy (heap) / free (CUDA malloc) the fish object: a leaked object whose cell no longer
/// points at it. --check catches it (docs/mutants.md "Applications").
inline constexpr bool kMutantEatWithoutFree = core::mutant::wa_tor_shark_eats_without_free;

/// MUTANT wa_tor_north_wrap_uses_width: the GPU app's agents find their north neighbour with the
/// width where the height belongs (`(y + width - 1) % height`), which is the row above only when
/// the width is a multiple of the height (a square grid among them): on other grids they look at
/// and move to the wrong cells. The CPU reference always uses the real neighbour.
/// --check catches it (docs/mutants.md "Applications").
inline constexpr bool kMutantNorthWrapUsesWidth = core::mutant::wa_tor_north_wrap_uses_width;

struct Params {
  std::uint32_t width        = 2048;
  std::uint32_t height       = 1024;
  std::uint64_t seed         = 1;
  std::uint32_t fish_spawn   = 4;   // a fish that moves breeds when its timer reached this
  std::uint32_t shark_spawn  = 10;  // the same for sharks
  std::uint32_t shark_energy = 4;   // energy of a new shark (initial and newborn)
  std::uint32_t fish_energy  = 3;   // energy a shark gains by eating a fish
  std::uint32_t max_energy   = 12;  // a shark's energy is capped here
  [[nodiscard]] HEAPLAB_HD std::uint64_t cells() const { return std::uint64_t{width} * height; }
};

enum Kind : std::uint8_t { kEmpty = 0, kFish = 1, kShark = 2 };
enum Round : std::uint32_t { kFishRound = 0, kSharkRound = 1 };
enum Salt : std::uint32_t { kInitKind = 0, kInitTimer = 1, kAgentChoice = 2, kCellChoice = 3 };
// An enumerator, not a variable: device code may use it by reference (field proxies) without
// ODR-using a host variable.
enum : std::uint32_t { kNone = 0xFFFFFFFFu };

/// splitmix64's finalizer.
HEAPLAB_HD inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The counter-based generator: one 64-bit number per (seed, iteration, round, cell, salt).
HEAPLAB_HD inline std::uint64_t random(std::uint64_t seed,
                                       std::uint32_t iteration,
                                       std::uint32_t round,
                                       std::uint32_t cell,
                                       std::uint32_t salt) {
  std::uint64_t z = mix64(seed + 0x9E3779B97F4A7C15ull);
  z               = mix64(z ^ (std::uint64_t{iteration} << 32 | (round << 8) | salt));
  return mix64(z ^ cell);
}

/// Neighbour d (0 north, 1 east, 2 south, 3 west) of cell c on the torus; with NorthUsesWidth
/// (only the GPU app's agents, in the build with the planted bug) the wrong north neighbour.
template <bool NorthUsesWidth = false>
HEAPLAB_HD inline std::uint32_t neighbour(Params const& p, std::uint32_t c, std::uint32_t d) {
  std::uint32_t const x = c % p.width;
  std::uint32_t const y = c / p.width;
  switch (d) {
    case 0:
      // MUTANT wa_tor_north_wrap_uses_width: the width in the row's wrap.
      if constexpr (NorthUsesWidth) return ((y + p.width - 1) % p.height) * p.width + x;
      return ((y + p.height - 1) % p.height) * p.width + x;
    case 1:
      return y * p.width + (x + 1) % p.width;
    case 2:
      return ((y + 1) % p.height) * p.width + x;
    default:
      return y * p.width + (x + p.width - 1) % p.width;
  }
}
HEAPLAB_HD inline std::uint32_t opposite(std::uint32_t d) { return (d + 2) & 3u; }

/// The k-th set bit (k < popcount(mask)) of a 4-bit mask.
HEAPLAB_HD inline std::uint32_t nth_set_bit(std::uint32_t mask, std::uint32_t k) {
  for (std::uint32_t d = 0; d < 4; ++d)
    if ((mask >> d) & 1u) {
      if (k == 0) return d;
      --k;
    }
  return kNone;
}
HEAPLAB_HD inline std::uint32_t popcount4(std::uint32_t m) {
  return (m & 1u) + ((m >> 1) & 1u) + ((m >> 2) & 1u) + ((m >> 3) & 1u);
}

/// An agent's choice: a direction among `candidates` (bit d: neighbour d qualifies), or kNone.
HEAPLAB_HD inline std::uint32_t agent_choice(Params const& p,
                                             std::uint32_t iteration,
                                             std::uint32_t round,
                                             std::uint32_t cell,
                                             std::uint32_t candidates) {
  std::uint32_t const n = popcount4(candidates);
  if (n == 0) return kNone;
  std::uint64_t const r = random(p.seed, iteration, round, cell, kAgentChoice);
  return nth_set_bit(candidates, static_cast<std::uint32_t>(r % n));
}

/// The per-cell priority rule: the requested cell accepts one requester (bit d of `requests`: the
/// agent in neighbour d asks), chosen with the cell's own random number; returns the accepted
/// agent's cell, or kNone.
HEAPLAB_HD inline std::uint32_t accept_request(Params const& p,
                                               std::uint32_t iteration,
                                               std::uint32_t round,
                                               std::uint32_t cell,
                                               std::uint32_t requests) {
  std::uint32_t const n = popcount4(requests);
  if (n == 0) return kNone;
  std::uint64_t const r = random(p.seed, iteration, round, cell, kCellChoice);
  return neighbour(p, cell, nth_set_bit(requests, static_cast<std::uint32_t>(r % n)));
}

/// The initial occupant of cell c: fish with probability fish_density, shark with
/// shark_density (u uniform in [0, 1) from the generator at iteration 0).
HEAPLAB_HD inline Kind initial_kind(Params const& p,
                                    double fish_density,
                                    double shark_density,
                                    std::uint32_t c) {
  double const u =
      static_cast<double>(random(p.seed, 0, 0, c, kInitKind) >> 11) * (1.0 / 9007199254740992.0);
  if (u < fish_density) return kFish;
  if (u < fish_density + shark_density) return kShark;
  return kEmpty;
}
/// The initial breeding timer (uniform in [0, spawn)), so that the first births come in waves
/// spread over `spawn` iterations.
HEAPLAB_HD inline std::uint32_t initial_timer(Params const& p, Kind k, std::uint32_t c) {
  std::uint32_t const spawn = k == kShark ? p.shark_spawn : p.fish_spawn;
  return static_cast<std::uint32_t>(random(p.seed, 0, 0, c, kInitTimer) % spawn);
}

/// The breeding timer after an iteration: +1, capped at spawn (a blocked agent keeps it there).
HEAPLAB_HD inline std::uint32_t next_timer(std::uint32_t timer, std::uint32_t spawn) {
  return timer + 1 < spawn ? timer + 1 : spawn;
}
/// Energy after eating.
HEAPLAB_HD inline std::uint32_t fed(Params const& p, std::uint32_t energy) {
  std::uint32_t const e = energy + p.fish_energy;
  return e < p.max_energy ? e : p.max_energy;
}

}  // namespace heaplab::apps::wa_tor
