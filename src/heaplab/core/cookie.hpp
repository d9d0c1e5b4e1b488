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

}  // namespace heaplab::core
