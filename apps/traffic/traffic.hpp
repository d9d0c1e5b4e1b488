// `heaplab_apps traffic` (docs/apps.md "traffic"): Nagel-Schreckenberg traffic on a street
// network as DynaSOAr runs it (Table 1: vehicles added continuously and removed at their
// destination, at most one per cell; 4 classes, 1 dynamic) on soa::Heap, with the static SOA
// baseline (category 3: vehicles merged into the cells) and the --check mode. Plain C++
// interface (main.cpp is compiled by the host compiler).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/heap_flags.hpp"

namespace heaplab::apps::traffic {

struct TrafficOptions {
  std::uint32_t width  = 128;  // intersections per row
  std::uint32_t height = 128;  // rows of intersections
  int iterations       = 500;
  std::uint64_t seed   = 1;
  double spawn_rate    = 0.1;  // a producer's chance of a new car per iteration
  double slow          = 0.2;  // Nagel-Schreckenberg's p
  bool check           = false;
  int check_every      = 10;
  bool baseline        = false;
  /// Also run the app on these allocators (common/allocators.hpp; DynaSOAr Fig. 10).
  std::vector<std::string> allocators;
  std::string csv;
  std::string profile;             // the memory profile CSV (common/profile.hpp); empty: none
  HeapFlags heap;                  // heap_blocks 0: 2 * ceil(cells / N_Car) + 64
  std::uint64_t random_shape = 0;  // --random-shape SEED (apps/shapes.hpp; main.cpp only)
};

/// Runs the app; 0, or 1 when --check found a difference. Throws std::invalid_argument for bad
/// options, std::runtime_error for a failed run, apps::NoDevice (common/no_device.hpp) without a
/// usable GPU.
int run_traffic(TrafficOptions const& options);

}  // namespace heaplab::apps::traffic
