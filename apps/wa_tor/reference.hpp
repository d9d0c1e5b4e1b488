// The CPU reference of wa-tor (docs/apps.md "wa-tor") and the checker `--check` runs on every
// variant's state. Plain C++17, host only: the rules come from rules.hpp, the same code the GPU
// variants run, so the reference steps exactly as they do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rules.hpp"

namespace heaplab::apps::wa_tor {

/// Births and deaths of one iteration (the GPU variants count them with device atomics).
struct Counters {
  std::uint64_t fish_births   = 0;
  std::uint64_t fish_eaten    = 0;
  std::uint64_t shark_births  = 0;
  std::uint64_t shark_starved = 0;
  bool operator==(Counters const& o) const {
    return fish_births == o.fish_births && fish_eaten == o.fish_eaten &&
           shark_births == o.shark_births && shark_starved == o.shark_starved;
  }
};

struct Population {
  std::uint64_t fish   = 0;
  std::uint64_t sharks = 0;
  bool operator==(Population const& o) const { return fish == o.fish && sharks == o.sharks; }
  bool operator!=(Population const& o) const { return !(*this == o); }
};

/// The dense world of the reference (and the layout of the static SOA baseline): one agent slot
/// per cell.
struct World {
  Params params;
  std::vector<std::uint8_t> kind;     // Kind per cell
  std::vector<std::uint32_t> timer;   // breeding timer of the cell's agent
  std::vector<std::uint32_t> energy;  // shark energy (0 for fish and empty cells)
};

/// The seeded initial world (rules.hpp initial_kind / initial_timer). Throws std::invalid_argument
/// for bad parameters (validate()).
World initial_world(Params const& p, double fish_density, double shark_density);

/// Throws std::invalid_argument naming the first bad parameter.
void validate(Params const& p, double fish_density, double shark_density);

/// One iteration (1-based), exactly as the GPU variants: fish round, then shark round.
Counters step(World& w, std::uint32_t iteration);

Population population(World const& w);

// ---- the checker ----------------------------------------------------------------------------

/// One cell as a variant sees it: the handle of its agent (0: none; heap: the encoded object
/// pointer, CUDA malloc: the address, baseline: cell index + 1) and the kind it says.
struct CellView {
  std::uint64_t agent = 0;
  std::uint8_t kind   = kEmpty;
};

/// One agent as enumerating the variant's objects finds it (heap: parallel_do over Fish and Shark;
/// CUDA malloc and baseline: the objects reachable from the cells).
struct AgentView {
  std::uint64_t handle = 0;
  std::uint8_t kind    = kEmpty;
  std::uint32_t cell   = 0;  // the cell the object says it is in
  std::uint32_t timer  = 0;
  std::uint32_t energy = 0;
};

struct StateView {
  std::vector<CellView> cells;    // W * H
  std::vector<AgentView> agents;  // any order
  /// Objects the allocator holds for agents (heap: used slots of Fish + Shark; CUDA malloc:
  /// mallocs - frees); nullopt when the variant has no allocator (baseline).
  std::optional<std::uint64_t> live_objects;
};

struct Violation {
  std::uint32_t cell = kNone;  // the first offending cell (kNone: not about one cell)
  std::string what;
  [[nodiscard]] std::string to_string(Params const& p) const;
};

/// The invariants of `--check` after `iteration` (docs/apps.md "wa-tor", Invariants 1-4):
/// every agent in exactly one cell and every cell's pointer naming an agent that says it is in
/// that cell, with the kind the cell says; no two cells name one agent; cell and object counts
/// equal (and equal to live_objects); timers and energies in range; the population follows
/// previous + births - deaths. Returns the population the cells hold, or the first violation.
struct CheckResult {
  Population population;
  std::optional<Violation> violation;
};
CheckResult check_state(Params const& p,
                        StateView const& s,
                        Population const& previous,
                        Counters const& counters);

/// The dense world as a StateView (handles: cell index + 1).
StateView view_of(World const& w);

}  // namespace heaplab::apps::wa_tor
