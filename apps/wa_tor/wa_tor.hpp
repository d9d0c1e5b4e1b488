// `heaplab_apps wa-tor` (docs/apps.md "wa-tor"): fish and sharks on a torus (DynaSOAr Table 1,
// SoaAlloc sec. 3 / Fig. 5, CompactGpu Fig. 14/15) on soa::Heap, with the static SOA baseline, the
// CUDA device-malloc variant, the same app on other allocators (--allocators) and the --check
// mode. Plain C++ interface (main.cpp is compiled by the host compiler).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/heap_flags.hpp"

namespace heaplab::apps::wa_tor {

struct WaTorOptions {
  std::uint32_t width        = 2048;
  std::uint32_t height       = 1024;
  int iterations             = 500;
  std::uint64_t seed         = 1;
  double fish_density        = 0.3;
  double shark_density       = 0.05;
  std::uint32_t fish_spawn   = 4;
  std::uint32_t shark_spawn  = 10;
  std::uint32_t shark_energy = 4;
  std::uint32_t fish_energy  = 3;
  std::uint32_t max_energy   = 12;
  bool check                 = false;
  int check_every            = 10;
  bool baseline              = false;
  bool cuda_malloc           = false;
  int cuda_malloc_iterations = 0;  // 0: --iterations
  /// Also run the app on these allocators (common/allocators.hpp; DynaSOAr Fig. 10).
  std::vector<std::string> allocators;
  std::string csv;
  /// Heap size, allocator ablations and the defragmentation policy (docs/apps.md "Options every
  /// app has"); heap_blocks 0: 2 * (ceil(W*H / N_Fish) + ceil(W*H / N_Shark)) + 64.
  HeapFlags heap;
  std::uint64_t random_shape = 0;  // --random-shape SEED (apps/shapes.hpp; main.cpp only)
  std::string profile;             // the memory profile CSV (common/profile.hpp); empty: none
};

/// Runs the app; 0, or 1 when --check found a violation. Throws std::invalid_argument for bad
/// options, std::runtime_error for a failed run, apps::NoDevice (common/no_device.hpp) without a
/// usable GPU.
int run_wa_tor(WaTorOptions const& options);

}  // namespace heaplab::apps::wa_tor
