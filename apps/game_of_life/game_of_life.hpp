// `heaplab_apps game-of-life` (docs/apps.md "game-of-life"): Conway's Game of Life in DynaSOAr's
// form (Table 1): alive cells and alive-candidates are soa::Heap objects, O(alive) work per
// generation, with a static dense-grid baseline and the --check mode. Plain C++ interface
// (main.cpp is compiled by the host compiler).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/heap_flags.hpp"

namespace heaplab::apps::game_of_life {

struct GameOfLifeOptions {
  std::uint32_t width  = 1024;
  std::uint32_t height = 1024;
  int iterations       = 100;
  std::uint64_t seed   = 1;
  std::string rule     = "life";  // any Life-like rule S/B/2 without birth on 0 neighbours
  double density       = 0.1;
  bool check           = false;
  int check_every      = 10;  // with check: compare every K generations (and after the last)
  bool baseline        = false;
  /// Also run the app on these allocators (common/allocators.hpp; DynaSOAr Fig. 10).
  std::vector<std::string> allocators;
  std::string csv;                 // per-generation CSV (empty: none)
  std::string profile;             // memory profile CSV (common/profile.hpp; empty: none)
  HeapFlags heap;                  // heap_blocks 0: 4 * ceil(W * H / capacity) + 64
  std::uint64_t random_shape = 0;  // --random-shape SEED (apps/shapes.hpp; main.cpp only)
};

/// Runs the app; returns 0, or 1 when --check found a difference or a violated invariant.
/// Throws std::invalid_argument for bad options, std::runtime_error for a failed run, and
/// apps::NoDevice (common/no_device.hpp) without a usable GPU.
int run_game_of_life(GameOfLifeOptions const& options);

}  // namespace heaplab::apps::game_of_life
