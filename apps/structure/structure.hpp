// `heaplab_apps structure` (docs/apps.md "structure"): the fracture simulation of DynaSOAr Table 1
// / CompactGpu Fig. 12 on soa::Heap, with the static SOA baseline and the --check mode. Plain C++
// interface (main.cpp is compiled by the host compiler).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/heap_flags.hpp"

namespace heaplab::apps::structure {

struct StructureOptions {
  std::uint32_t width  = 200;  // nodes per row
  std::uint32_t height = 125;  // rows
  int iterations       = 1000;
  std::uint64_t seed   = 1;         // spring thresholds
  float threshold      = 0.05f;     // mean breaking strain
  float jitter         = 0.5f;      // thresholds spread uniformly over threshold * (1 +- jitter)
  std::string scenario = "shrink";  // pull | shrink (model.hpp Scenario)
  float load           = 0.2f;      // pull: speed of the last column
  float shrink         = 0.0005f;   // shrink: rest lengths lose this fraction per iteration
  float shrink_floor   = 0.3f;      // shrink: down to this fraction
  bool check           = false;
  int check_every      = 10;
  bool baseline        = false;
  /// Also run the app on these allocators (common/allocators.hpp; DynaSOAr Fig. 10).
  std::vector<std::string> allocators;
  std::string csv;
  std::string profile;             // memory profile CSV (common/profile.hpp; empty: none)
  HeapFlags heap;                  // heap_blocks 0: 2 * (blocks of the mesh) + 64
  std::uint64_t random_shape = 0;  // --random-shape SEED (apps/shapes.hpp; main.cpp only)
};

/// Runs the app; returns 0, or 1 when --check found a violated invariant. Throws
/// std::invalid_argument for bad options, std::runtime_error for a failed run, and apps::NoDevice
/// (common/no_device.hpp) without a usable GPU.
int run_structure(StructureOptions const& options);

}  // namespace heaplab::apps::structure
