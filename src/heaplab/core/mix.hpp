// splitmix64: the one 64-bit mixing function of heaplab (cookies, rotation seeds, the controlled
// scheduler's random numbers, warp-order perturbation, benchmark selections).
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"

namespace heaplab::core {

inline constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;

/// The splitmix64 output for state x (Steele, Lea, Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014): x + gamma through the finalizer. A bijection of 64-bit values.
HEAPLAB_HD_INLINE constexpr std::uint64_t splitmix64(std::uint64_t x) {
  std::uint64_t z = x + kGoldenGamma;
  z               = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z               = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace heaplab::core
