// SlotRef: where an object lives, (block, slot). The one name for that pair in every layer: the
// core protocol's results, the GPU allocator's locate(), snapshots' pointer targets, the model.
#pragma once

#include <cstdint>

#include "heaplab/core/hierarchical_bitmap.hpp"  // kNotFound
#include "heaplab/core/host_device.hpp"

namespace heaplab::core {

/// An object's location: block id and slot. block == kNotFound is the null result of an
/// allocation (out of memory). The GPU layer turns it into an object pointer
/// (object_pointer.hpp); snapshots store pointer targets as SlotRefs so that snapshots of
/// different producers (GPU addresses, model indices) compare directly.
struct SlotRef {
  std::uint32_t block = kNotFound;
  std::uint32_t slot  = 0;
  HEAPLAB_HD_INLINE constexpr bool is_null() const { return block == kNotFound; }
  friend HEAPLAB_HD_INLINE constexpr bool operator==(SlotRef const& a, SlotRef const& b) {
    return a.block == b.block && a.slot == b.slot;
  }
  friend HEAPLAB_HD_INLINE constexpr bool operator!=(SlotRef const& a, SlotRef const& b) {
    return !(a == b);
  }
  friend HEAPLAB_HD_INLINE constexpr bool operator<(SlotRef const& a, SlotRef const& b) {
    return a.block != b.block ? a.block < b.block : a.slot < b.slot;
  }
};

}  // namespace heaplab::core
