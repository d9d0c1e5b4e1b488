// Object cookies (mimalloc-stress style): every test object stores cookie_of(id) next to its id.
// A cookie that no longer matches its id reveals a torn copy, a stale slot or a wrong pointer,
// whether the object was written by the GPU allocator, moved by CompactGpu or built by the model.
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mix.hpp"

namespace heaplab::core {

/// A bijective 64-bit mix of the id (splitmix64), never equal to the id itself for small ids,
/// so that a slot holding (id, id) or zeros is caught.
HEAPLAB_HD_INLINE constexpr std::uint64_t cookie_of(std::uint64_t id) { return splitmix64(id); }

/// Byte k (counted over the field's elements in order) of data field `field` of the object with
/// id `id`: the GPU runner writes every field that is neither the id, the cookie nor a heap
/// pointer with these bytes and checks them after every step (docs/gpu-runner.md "Field
/// bytes"), so that a torn, shifted or misplaced copy of any field, of any width, shows.
HEAPLAB_HD_INLINE constexpr std::uint8_t field_byte(std::uint64_t id,
                                                    std::uint32_t field,
                                                    std::uint32_t k) {
  return static_cast<std::uint8_t>(
      splitmix64(id ^ (std::uint64_t{field} << 56) ^ (std::uint64_t{k / 8u} << 40)) >>
      (8u * (k % 8u)));
}

}  // namespace heaplab::core
