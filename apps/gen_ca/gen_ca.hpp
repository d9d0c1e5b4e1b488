// `heaplab_apps gen-ca` (docs/apps.md "gen-ca"): the generational cellular automaton of
// CompactGpu Fig. 13 on soa::Heap, with the static SOA baseline and the --check mode. Plain C++
// interface (main.cpp is compiled by the host compiler).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/heap_flags.hpp"

namespace heaplab::apps::gen_ca {

struct GenCaOptions {
  std::uint32_t width  = 256;
  std::uint32_t height = 256;
  int iterations       = 100;
  std::uint64_t seed   = 1;
  std::string rule     = "burst";
  double density       = 0.3;
  bool check           = false;
  int check_every      = 10;  // with check: compare every K generations (and after the last)
  bool baseline        = false;
  std::string csv;                 // per-generation CSV (empty: none)
  std::string profile;             // memory profile CSV (common/profile.hpp; empty: none)
  HeapFlags heap;                  // heap_blocks 0: 4 * ceil(W * H / 64) + 64
  std::uint64_t random_shape = 0;  // --random-shape SEED (apps/shapes.hpp; main.cpp only)
};

/// Runs the app; returns 0, or 1 when --check found a difference or a violated invariant.
/// Throws std::invalid_argument for bad options, std::runtime_error for a failed run, and
/// apps::NoDevice (common/no_device.hpp) without a usable GPU.
int run_gen_ca(GenCaOptions const& options);

}  // namespace heaplab::apps::gen_ca
