// The CPU reference of sugarscape (docs/apps.md "sugarscape") and the checker `--check` runs on
// the heap variant's state. Plain C++17, host only: the phases are dense.hpp's, the same code the
// static baseline runs on the GPU, so the reference steps exactly as both variants must.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dense.hpp"

namespace heaplab::apps::sugarscape {

/// The dense world (the reference's state and the baseline's layout).
struct World {
  Params params;
  std::vector<std::uint32_t> capacity, sugar;
  std::vector<std::uint8_t> kind;
  std::vector<std::uint32_t> a_sugar, age, max_age, metabolism, vision, target;
  std::vector<std::uint64_t> requests, proposals, births;

  /// The view the phases work on (pointers into this world's vectors).
  Dense dense();
};

/// Throws std::invalid_argument naming the first bad parameter.
void validate(Params const& p);

/// The seeded initial world (rules.hpp initial_agent, capacity; every cell starts full).
World initial_world(Params const& p);

/// One iteration (1-based): the nine phases of rules.hpp, each over all cells in order.
void step(World& w, std::uint32_t iteration);

struct Population {
  std::uint64_t males = 0, females = 0, sugar_in_cells = 0, sugar_in_agents = 0;
};
Population population(World const& w);

// ---- the checker ----------------------------------------------------------------------------

/// One live object of the heap variant.
struct AgentView {
  std::uint64_t handle = 0;
  std::uint32_t cell   = 0;  // the cell it says it is in
  Traits traits;             // kind from its type
};

/// The heap variant's state: per cell its sugar, its object pointer (0: none) and the kind the
/// pointer's type names; the live objects in any order.
struct StateView {
  std::vector<std::uint32_t> sugar;
  std::vector<std::uint64_t> handle;
  std::vector<std::uint8_t> kind;
  std::vector<AgentView> agents;
};

/// The first difference between `s` and the reference `w`, or nullopt: every cell's sugar, every
/// agent's kind and fields exactly; every object in the grid at its own cell and every grid pointer
/// naming a live object of that cell, none twice. Throws std::invalid_argument on sizes.
std::optional<std::string> check_state(StateView const& s, World const& w);

/// The first cell whose sugar, agent kind or agent fields differ between two states, or nullopt:
/// the final worlds of two variants compared (`--allocators`: the heap's and an allocator's). The
/// handles may differ (two heaps' objects); a grid pointer that names no object of its state
/// counts as an agent of unknown kind. Throws std::invalid_argument on sizes.
std::optional<std::string> compare_views(StateView const& a, StateView const& b, Params const& p);

/// The dense world as a StateView (handles: cell index + 1), for tests.
StateView view_of(World const& w);

}  // namespace heaplab::apps::sugarscape
