// Object cookies (mimalloc-stress style): every test object stores cookie_of(id) next to its id.
// A cookie that no longer matches its id reveals a torn copy, a stale slot or a wrong pointer,
// whether the object was written by the GPU allocator, moved by CompactGpu or built by the model.
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"

namespace heaplab::core {

/// A bijective 64-bit mix of the id (the splitmix64 finalizer), never equal to the id itself
/// for small ids, so that a slot holding (id, id) or zeros is caught.
HEAPLAB_HD_INLINE constexpr std::uint64_t cookie_of(std::uint64_t id) {
  std::uint64_t z = id + 0x9E3779B97F4A7C15ull;
  z               = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z               = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace heaplab::core
