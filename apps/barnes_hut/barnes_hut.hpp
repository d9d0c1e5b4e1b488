// `heaplab_apps barnes-hut` (docs/apps.md "barnes-hut"): DynaSOAr Table 1's Barnes-Hut: bodies in
// a 2D quad tree whose nodes are allocated and deleted every iteration by parallel top-down and
// bottom-up traversals, on soa::Heap, with the --check mode (tree invariants, forces against the
// CPU). No static baseline (category 4, DynaSOAr sec. 6). Plain C++ interface.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/heap_flags.hpp"

namespace heaplab::apps::barnes_hut {

struct BarnesHutOptions {
  std::uint32_t bodies        = 16384;
  int iterations              = 100;
  std::uint64_t seed          = 1;
  float theta                 = 0.5f;
  float dt                    = 0.0005f;
  bool check                  = false;
  int check_every             = 10;
  std::uint32_t direct_sample = 512;   // bodies whose force --check sums directly
  double max_direct_error     = 0.05;  // the mean relative error allowed against the direct sum
  /// Also run the app on these allocators (common/allocators.hpp; DynaSOAr Fig. 10).
  std::vector<std::string> allocators;
  std::string csv;      // the heap variant's rows
  std::string profile;  // the heap variant's
  HeapFlags heap;       // heap_blocks 0: 2 * ceil(N / N_Body) + 4 * ceil(N / N_Node) + 64
  std::uint64_t random_shape = 0;
};

/// Runs the app; 0, or 1 when --check found a violation. Throws std::invalid_argument for bad
/// options, std::runtime_error for a failed run, apps::NoDevice without a usable GPU.
int run_barnes_hut(BarnesHutOptions const& options);

}  // namespace heaplab::apps::barnes_hut
