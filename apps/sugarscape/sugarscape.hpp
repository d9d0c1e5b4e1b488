// `heaplab_apps sugarscape` (docs/apps.md "sugarscape"): Epstein and Axtell's sugarscape as
// DynaSOAr runs it (Table 1: resource consumption, ageing and mating; 4 classes, 2 dynamic) on
// soa::Heap, with the static SOA baseline (category 3: agents merged into the cells), the same app
// on other allocators (--allocators) and the --check mode. Plain C++ interface (main.cpp is
// compiled by the host compiler).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/heap_flags.hpp"

namespace heaplab::apps::sugarscape {

struct SugarscapeOptions {
  std::uint32_t width  = 1024;
  std::uint32_t height = 1024;
  int iterations       = 200;
  std::uint64_t seed   = 1;
  double density       = 0.2;  // fraction of cells with an agent at the start
  bool check           = false;
  int check_every      = 10;
  bool baseline        = false;
  /// Also run the app on these allocators (common/allocators.hpp; DynaSOAr Fig. 10).
  std::vector<std::string> allocators;
  std::string csv;
  std::string profile;  // the memory profile CSV (common/profile.hpp); empty: none
  /// heap_blocks 0: 2 * (ceil(W*H / N_Male) + ceil(W*H / N_Female)) + 64.
  HeapFlags heap;
  std::uint64_t random_shape = 0;  // --random-shape SEED (apps/shapes.hpp; main.cpp only)
};

/// Runs the app; 0, or 1 when --check found a difference or an allocator's final world differs
/// from the heap variant's (--allocators). Throws std::invalid_argument for bad
/// options, std::runtime_error for a failed run, apps::NoDevice (common/no_device.hpp) without a
/// usable GPU.
int run_sugarscape(SugarscapeOptions const& options);

}  // namespace heaplab::apps::sugarscape
