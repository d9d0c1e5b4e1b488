// Warp-order perturbation (beyond the papers; test-only): seeded delays that make rare
// inter-warp orders common on a GPU. The controlled scheduler (explore/) yields at every atomic on
// the CPU; a GPU has no such hook, and its warps of one kernel tend to progress in step, so an
// order that needs warp 1 to finish a phase before warp 0 starts it (a missing grid-wide barrier
// between two phases, e.g. a fused kernel) almost never happens by itself. With a non-zero seed,
// kernels call soa::detail::perturb_warp at their perturbation points: one warp in four sleeps
// for 0.25 to 8 us there, chosen by a hash of (seed, warp, point), so a failure's seed names the
// same delays again (the hardware interleaving itself is never replayed exactly).
//
// Seed 0 is off: no delay, one uniform branch per point. docs/gpu-runner.md "Warp-order
// perturbation".
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mix.hpp"

namespace heaplab::core {

/// The kernel phases that have a perturbation point; part of the hash, so that each point
/// draws its own delays.
enum class PerturbPoint : std::uint32_t {
  allocate    = 1,  // before a warp's allocations (GPU runner: alloc waves, parallel_do)
  free        = 2,  // before a warp's frees
  parallel_do = 3,  // before a warp's parallel_do actions
  move        = 4,  // CompactGpu Alg. 1: before a warp copies its objects
  forwarding  = 5,  // CompactGpu Alg. 2: before a warp stores its forwarding pointers
  rewrite     = 6,  // CompactGpu Alg. 3: before a warp rewrites a batch of pointers
  commit      = 7,  // CompactGpu sec. 3.5: before a warp commits target block states
  release     = 8,  // CompactGpu sec. 3.5: before a warp releases source blocks
};

/// Longest delay, in nanoseconds (well below any watchdog budget, above the time one warp takes
/// to copy an object and store its forwarding pointer).
inline constexpr std::uint32_t kPerturbMaxDelayNs = 8192;

/// The delay of warp `warp` at `point` under `seed`: 0 for seed 0 and for three warps in four,
/// else 256 .. kPerturbMaxDelayNs - 1 ns.
HEAPLAB_HD_INLINE constexpr std::uint32_t perturb_delay_ns(std::uint64_t seed,
                                                           std::uint64_t warp,
                                                           PerturbPoint point) {
  if (seed == 0) return 0;
  std::uint64_t const h =
      splitmix64(seed ^ splitmix64(warp * 0x100000001B3ull + static_cast<std::uint32_t>(point)));
  if ((h & 3u) != 0) return 0;
  return 256u + static_cast<std::uint32_t>((h >> 2) % (kPerturbMaxDelayNs - 256u));
}

/// A different seed for each part of a run (step, pass) drawn from one seed; 0 stays 0 (off).
HEAPLAB_HD_INLINE constexpr std::uint64_t perturb_seed_for(std::uint64_t seed, std::uint64_t part) {
  if (seed == 0) return 0;
  std::uint64_t const s = splitmix64(seed + kGoldenGamma * (part + 1));
  return s == 0 ? 1 : s;
}

}  // namespace heaplab::core
