// Object pointer encoding (DynaSOAr sec. 3.3, Fig. 6).
//
// An object pointer is not the address of the object: it is the 64-byte aligned address of the
// object's block with extra information in bits the address does not use.
//
//   bits  0..5   slot within the block (the block address is 64-byte aligned, so these are free)
//   bits  0..49  block address (with the slot bits cleared)
//   bits 50..55  block capacity - 1 (capacity 1..64; field addresses depend on it, sec. 3.3)
//   bits 56..63  type id (fast instance-of checks)
//
// The null pointer is 0. A heap fits the encoding when every block address is 64-byte aligned
// and below 2^50; Heap creation checks this (heap_fits_encoding) instead of assuming it.
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"

namespace heaplab::core {

inline constexpr unsigned kSlotBits         = 6;
inline constexpr unsigned kAddressBits      = 50;
inline constexpr unsigned kCapacityShift    = 50;
inline constexpr unsigned kTypeShift        = 56;
inline constexpr std::uint64_t kSlotMask    = (std::uint64_t{1} << kSlotBits) - 1;
inline constexpr std::uint64_t kAddressMask = ((std::uint64_t{1} << kAddressBits) - 1) & ~kSlotMask;
inline constexpr std::uint64_t kBlockAlign  = std::uint64_t{1} << kSlotBits;

/// Encodes (block address, slot, capacity, type). Preconditions (not checked here; see
/// heap_fits_encoding): block_address % 64 == 0, block_address < 2^50, slot < capacity <= 64,
/// type < 256.
HEAPLAB_HD_INLINE constexpr std::uint64_t encode_object_pointer(std::uint64_t block_address,
                                                                std::uint32_t slot,
                                                                std::uint32_t capacity,
                                                                std::uint32_t type) {
  return (block_address & kAddressMask) | (std::uint64_t{slot} & kSlotMask) |
         (std::uint64_t{capacity - 1u} << kCapacityShift) | (std::uint64_t{type} << kTypeShift);
}

HEAPLAB_HD_INLINE constexpr std::uint64_t pointer_block_address(std::uint64_t p) {
  return p & kAddressMask;
}
HEAPLAB_HD_INLINE constexpr std::uint32_t pointer_slot(std::uint64_t p) {
  return static_cast<std::uint32_t>(p & kSlotMask);
}
HEAPLAB_HD_INLINE constexpr std::uint32_t pointer_capacity(std::uint64_t p) {
  return static_cast<std::uint32_t>((p >> kCapacityShift) & 0x3Fu) + 1u;
}
HEAPLAB_HD_INLINE constexpr std::uint32_t pointer_type(std::uint64_t p) {
  return static_cast<std::uint32_t>(p >> kTypeShift);
}

/// True when every block of a heap at [base, base + num_blocks * block_bytes) can be encoded:
/// base and block size 64-byte aligned and the heap's end at or below 2^50.
HEAPLAB_HD_INLINE constexpr bool heap_fits_encoding(std::uint64_t base,
                                                    std::uint64_t block_bytes,
                                                    std::uint64_t num_blocks) {
  if (base % kBlockAlign != 0 || block_bytes % kBlockAlign != 0 || block_bytes == 0) return false;
  std::uint64_t const limit = std::uint64_t{1} << kAddressBits;
  if (base >= limit) return false;
  return num_blocks <= (limit - base) / block_bytes;
}

}  // namespace heaplab::core
