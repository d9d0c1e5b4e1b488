// Rotation seeds (DynaSOAr sec. 4.2 "Bitmap Rotation"): every search starts at a position derived
// from a caller-provided seed, and every retry derives a fresh one, so that concurrent threads
// spread over different bits. Deterministic: the explorer replays a run from its seeds.
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mix.hpp"

namespace heaplab::core::detail {

/// splitmix64 of (seed, salt): a well-mixed 64-bit value for each (seed, retry) pair.
HEAPLAB_HD_INLINE constexpr std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t salt) {
  return splitmix64(seed + salt * kGoldenGamma);
}

/// The rotation (0..63) a search uses on hierarchy level `level`.
HEAPLAB_HD_INLINE constexpr unsigned rotation(std::uint64_t seed, unsigned level) {
  return static_cast<unsigned>((seed >> (6u * (level % 10u))) & 63u);
}

}  // namespace heaplab::core::detail
