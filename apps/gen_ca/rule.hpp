// The generational cellular automaton's rule (CompactGpu sec. 5 "Generational CA", Fig. 13): a
// rule "S/B/C" in the survive/birth/generations notation of Mirek's Cellebration [27]. A cell is
// dead (state 0), alive (state 1) or dying (states 2 .. C-1). An alive cell with a number of alive
// neighbours in S stays alive, otherwise it starts dying (state 2; dead at once when C == 2); a
// dying cell advances one state per generation regardless of its neighbours and is dead after
// state C-1; a dead cell with a number of alive neighbours in B is born. Only alive cells count
// as neighbours (Moore neighbourhood, 8 cells). Game of Life is 23/3/2; the paper's rule is
// 0235678/3468/255 ("Burst").
//
// Rule::next is host and device (HEAPLAB_HD); parse_rule is host only.
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"

#include <stdexcept>
#include <string>

namespace heaplab::apps::gen_ca {

inline constexpr std::uint8_t kDead  = 0;
inline constexpr std::uint8_t kAlive = 1;

struct Rule {
  std::uint16_t survive     = 0;  // bit k: an alive cell with k alive neighbours survives
  std::uint16_t birth       = 0;  // bit k: a dead cell with k alive neighbours is born
  std::uint32_t generations = 2;  // C: states 0 .. C-1; 2 .. 256

  /// The next state of a cell in `state` with `alive_neighbours` (0..8) alive neighbours.
  [[nodiscard]] HEAPLAB_HD std::uint8_t next(std::uint8_t state,
                                             std::uint32_t alive_neighbours) const {
    if (state == kDead) return ((birth >> alive_neighbours) & 1u) != 0 ? kAlive : kDead;
    if (state == kAlive && ((survive >> alive_neighbours) & 1u) != 0) return kAlive;
    std::uint32_t const n = std::uint32_t{state} + 1u;  // alive -> 2, dying s -> s + 1
    return n >= generations ? kDead : static_cast<std::uint8_t>(n);
  }
};

/// The app's planted bug (docs/mutants.md "Applications", docs/apps.md "Planted bug"): in a
/// build with HEAPLAB_MUTANT_NAME="gen_ca_skip_dying" the GPU app kills a dying cell one
/// generation early (from state C-2 instead of C-1). The CPU reference always uses Rule::next, so
/// `--check` must report the first differing cell.
inline constexpr bool kMutantSkipDying = core::mutant::gen_ca_skip_dying;

/// The transition the GPU app applies: Rule::next, or with SkipDying the planted bug.
template <bool SkipDying>
HEAPLAB_HD std::uint8_t app_next(Rule const& rule, std::uint8_t state, std::uint32_t alive) {
  std::uint8_t const n = rule.next(state, alive);
  if constexpr (SkipDying) {  // MUTANT gen_ca_skip_dying: state C-2 goes straight to dead
    if (n >= 2 && std::uint32_t{n} + 1u >= rule.generations) return kDead;
  }
  return n;
}

/// The app's second planted bug (docs/mutants.md "Applications", docs/apps.md "Planted bug"): in a
/// build with HEAPLAB_MUTANT_NAME="gen_ca_wrap_assumes_pow2" the GPU app wraps a
/// neighbour's coordinates around the torus with a mask (`& (width - 1)`), which is the modulo
/// only when the side is a power of two: on any other width or height it counts the wrong cells
/// as neighbours. The CPU reference always wraps with the modulo.
inline constexpr bool kMutantWrapPowerOfTwo = core::mutant::gen_ca_wrap_assumes_pow2;

/// The GPU app's neighbour of cell `index` (row-major on a width x height torus) at offset (dx,
/// dy), each in -1..1: the wrap of the reference, or with PowerOfTwoMask the planted bug.
template <bool PowerOfTwoMask>
HEAPLAB_HD std::uint32_t app_neighbour(
    std::uint32_t width, std::uint32_t height, std::uint32_t index, int dx, int dy) {
  std::uint32_t const x = index % width;
  std::uint32_t const y = index / width;
  if constexpr (PowerOfTwoMask) {  // MUTANT gen_ca_wrap_assumes_pow2: & is not % here
    std::uint32_t const nx = (x + static_cast<std::uint32_t>(dx)) & (width - 1u);
    std::uint32_t const ny = (y + static_cast<std::uint32_t>(dy)) & (height - 1u);
    return ny * width + nx;
  }
  std::uint32_t const nx = (x + width + static_cast<std::uint32_t>(dx + 1) - 1u) % width;
  std::uint32_t const ny = (y + height + static_cast<std::uint32_t>(dy + 1) - 1u) % height;
  return ny * width + nx;
}

/// "S/B/C" with S and B sets of digits 0..8 (each at most once, either may be empty) and C an
/// integer in 2..256; or the names "life" (23/3/2) and "burst" (0235678/3468/255). Throws
/// std::invalid_argument naming the problem.
inline Rule parse_rule(std::string const& text) {
  if (text == "life") return parse_rule("23/3/2");
  if (text == "burst") return parse_rule("0235678/3468/255");
  auto fail = [&](std::string const& why) {
    throw std::invalid_argument("rule '" + text + "': " + why +
                                " (expected S/B/C, e.g. 23/3/2, or life or burst)");
  };
  auto const s1 = text.find('/');
  auto const s2 = s1 == std::string::npos ? s1 : text.find('/', s1 + 1);
  if (s2 == std::string::npos || text.find('/', s2 + 1) != std::string::npos)
    fail("needs exactly two '/'");
  auto digits = [&](std::string const& part, char const* what) {
    std::uint16_t mask = 0;
    for (char c : part) {
      if (c < '0' || c > '8') fail(std::string(what) + " has '" + c + "', not a digit 0..8");
      auto const bit = static_cast<std::uint16_t>(1u << (c - '0'));
      if ((mask & bit) != 0) fail(std::string(what) + " lists '" + c + "' twice");
      mask = static_cast<std::uint16_t>(mask | bit);
    }
    return mask;
  };
  Rule r;
  r.survive           = digits(text.substr(0, s1), "survive set");
  r.birth             = digits(text.substr(s1 + 1, s2 - s1 - 1), "birth set");
  std::string const c = text.substr(s2 + 1);
  if (c.empty() || c.size() > 3 || c.find_first_not_of("0123456789") != std::string::npos)
    fail("generations '" + c + "' is not an integer 2..256");
  unsigned long const g = std::stoul(c);
  if (g < 2 || g > 256) fail("generations " + c + " is outside 2..256");
  if ((r.birth & 1u) != 0)
    fail(
        "birth with 0 neighbours is not supported (the app only visits "
        "neighbours of alive cells)");
  r.generations = static_cast<std::uint32_t>(g);
  return r;
}

}  // namespace heaplab::apps::gen_ca
