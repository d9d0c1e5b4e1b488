// The CPU reference of traffic (docs/apps.md "traffic") and the checker `--check` runs on the
// heap variant's state. Plain C++17, host only: the phases are dense.hpp's, the code the static
// baseline runs on the GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dense.hpp"
#include "network.hpp"

namespace heaplab::apps::traffic {

/// The dense world (the reference's state and the baseline's layout) on a network.
struct World {
  Params params;
  Network const* network = nullptr;
  std::vector<std::uint8_t> present;
  std::vector<std::uint64_t> id;
  std::vector<std::uint32_t> velocity, max_velocity, trip, target, next_velocity, claim, stop,
      stop_velocity, incoming;
  std::vector<std::uint64_t> claims;

  Dense dense();
};

/// An empty world on `network` (cars come from the producers).
World initial_world(Params const& p, Network const& network);

/// One iteration (1-based): reset, decide, resolve, pull, leave, spawn, each over all cells.
void step(World& w, std::uint32_t iteration);

struct Population {
  std::uint64_t cars = 0, moving = 0;
};
Population population(World const& w);

/// One live car object of the heap variant.
struct CarView {
  std::uint64_t handle = 0;
  std::uint32_t cell   = 0;
  Vehicle vehicle;
};

/// The heap variant's state: per cell its object pointer (0: none) and whether the pointer's type
/// is Car; the live objects.
struct StateView {
  std::vector<std::uint64_t> handle;
  std::vector<std::uint8_t> is_car;
  std::vector<CarView> cars;
};

/// The first difference between `s` and the reference `w`, or nullopt: a car exactly where the
/// reference has one, with its id, velocity, speed limit and trip; every object in the grid at its
/// own cell; every grid pointer a live Car object of that cell, none twice.
std::optional<std::string> check_state(StateView const& s, World const& w);

/// The dense world as a StateView (handles: cell index + 1), for tests.
StateView view_of(World const& w);

/// The world of a StateView's cars on `network` (view_of's converse; the plans are not kept): the
/// heap variant's final state, against which the variants on other allocators are compared.
/// Throws std::invalid_argument for a car outside the network.
World world_of(StateView const& s, Params const& p, Network const& network);

}  // namespace heaplab::apps::traffic
