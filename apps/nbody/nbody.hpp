// `heaplab_apps nbody` and `heaplab_apps collision` (docs/apps.md "nbody", "collision"): the
// n-body simulation of DynaSOAr Table 1 and its variant with merging bodies (DynaSOAr "collision",
// CompactGpu Fig. 11) on soa::Heap, with the static SOA baseline and the --check mode. Plain C++
// interface (main.cpp is compiled by the host compiler).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/heap_flags.hpp"

namespace heaplab::apps::nbody {

struct NbodyOptions {
  bool collision       = false;  // set by the subcommand: collision merges bodies
  std::uint32_t bodies = 4096;
  int iterations       = 100;
  std::uint64_t seed   = 1;
  double dt            = 0.001;
  double softening     = 0.01;
  double merge_radius  = 0.0025;  // collision only
  double initial_speed = 0.1;     // velocities uniform in [-v, v]^2
  bool check           = false;
  int check_every      = 10;  // with check: every K iterations (and after 0 and the last)
  int reference_steps  = 20;  // with check and bodies <= kReferenceMaxBodies: CPU reference steps
  double reference_tolerance = 1e-6;  // per value, relative to 1 + |reference value|
  double momentum_tolerance  = 1e-9;  // |P - P0| <= tol * sum m|v|
  double mass_tolerance      = 1e-9;  // collision: relative
  bool baseline              = false;
  /// Also run the app on these allocators (common/allocators.hpp; DynaSOAr Fig. 10).
  std::vector<std::string> allocators;
  std::string csv;                 // per-iteration CSV (empty: none)
  std::string profile;             // memory profile CSV (common/profile.hpp; empty: none)
  HeapFlags heap;                  // heap_blocks 0: 2 * ceil(bodies / N_Body) + 64
  std::uint64_t random_shape = 0;  // --random-shape SEED (apps/shapes.hpp; main.cpp only)
};

/// The CPU reference runs only up to this many bodies (it costs bodies^2 per iteration).
inline constexpr std::uint32_t kReferenceMaxBodies = 4096;

/// Runs nbody (options.collision false) or collision; returns 0, 1 when --check found a violated
/// invariant. Throws std::invalid_argument for bad options, std::runtime_error for a failed run,
/// and apps::NoDevice (common/no_device.hpp) without a usable GPU.
int run_nbody(NbodyOptions const& options);

}  // namespace heaplab::apps::nbody
