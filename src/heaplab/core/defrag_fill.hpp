// The defragmentation-candidate test of CompactGpu sec. 3, shared by host and device code.
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"

namespace heaplab::core {

/// A block of capacity N holding `used` objects is a defragmentation candidate iff
/// used / N <= n / (n + 1), evaluated exactly in integers (CompactGpu sec. 3).
HEAPLAB_HD_INLINE constexpr bool is_defrag_fill(std::uint32_t used,
                                                std::uint32_t capacity,
                                                std::uint32_t n) {
  return static_cast<std::uint64_t>(used) * (n + 1u) <= static_cast<std::uint64_t>(n) * capacity;
}

}  // namespace heaplab::core
