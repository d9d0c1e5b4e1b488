// SOA block layout math (DynaSOAr sec. 3.1-3.3; CompactGpu sec. 3.3 Listing 1).
//
// Plain arithmetic over field shapes and a block capacity, shared by the field proxies (which
// compute an address from the capacity bits of an object pointer), by the reflection tables of
// heaplab/soa/heap_types.hpp and by host code. Compiles with plain g++ and as device code.
//
// The rule (docs/allocator.md, "Block layout"):
//   * A block's data segment starts at the block address; block headers (allocation and
//     iteration bitmaps, type id) live in separate arrays owned by the core, not in the block.
//   * A field of element type E and element count K (K = 1 for a scalar, K for E[K]) occupies K
//     SOA arrays of N_T elements each ("units"); S = N_T * sizeof(E) bytes per unit.
//   * Fields are placed in declaration order, inherited fields first. A field's first unit starts
//     at the previous field's end rounded up to soa_array_alignment(S) = min(128, bit_ceil(S));
//     unit e starts at first + e * align_up(S, soa_array_alignment(S)).
//     => units of >= 128 B start on a 128-byte line; smaller units never cross a 128-byte line,
//        and every unit is aligned for E (sizeof(E) >= alignof(E), alignof(E) <= 128).
//   * The data segment of T is the end of its last unit; the block size is the maximum over all
//     non-abstract types of max(data segment, N_T * 8 forwarding-pointer bytes), rounded up to 128.
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"

namespace heaplab::soa {

/// Bytes of a GPU cache line / coalescing unit (DynaSOAr sec. 2.3).
inline constexpr std::uint32_t kCacheLineBytes = 128;
/// Bytes of one CompactGpu forwarding pointer (an encoded object pointer).
inline constexpr std::uint32_t kForwardingPointerBytes = 8;

/// The shape of one field: `elements` SOA arrays (units) of `element_bytes` each per object.
struct FieldShape {
  std::uint32_t element_bytes = 0;  // sizeof(E), > 0
  std::uint32_t elements      = 1;  // 1 for a scalar field, K for a field E[K]
};

/// x rounded up to a multiple of `alignment` (a power of two).
HEAPLAB_HD_INLINE constexpr std::uint64_t align_up(std::uint64_t x, std::uint64_t alignment) {
  return (x + alignment - 1) & ~(alignment - 1);
}

/// Start alignment of one SOA array of `array_bytes` (> 0) bytes: min(128, bit_ceil(bytes)).
HEAPLAB_HD_INLINE constexpr std::uint64_t soa_array_alignment(std::uint64_t array_bytes) {
  if (array_bytes >= kCacheLineBytes) return kCacheLineBytes;
  std::uint64_t x = array_bytes - 1;  // bit_ceil for 1 <= array_bytes < 128
  x |= x >> 1;
  x |= x >> 2;
  x |= x >> 4;
  return x + 1;
}

/// Bytes of one unit of `shape` in a block of capacity `capacity`.
HEAPLAB_HD_INLINE constexpr std::uint64_t soa_array_bytes(std::uint32_t capacity,
                                                          FieldShape shape) {
  return std::uint64_t{capacity} * shape.element_bytes;
}

/// Distance between consecutive units of one array field (E[K]).
HEAPLAB_HD_INLINE constexpr std::uint64_t soa_unit_stride(std::uint32_t capacity,
                                                          FieldShape shape) {
  std::uint64_t const bytes = soa_array_bytes(capacity, shape);
  return align_up(bytes, soa_array_alignment(bytes));
}

/// Offset of a field's first unit, given the end offset of the fields placed before it.
HEAPLAB_HD_INLINE constexpr std::uint64_t soa_field_begin(std::uint64_t previous_end,
                                                          std::uint32_t capacity,
                                                          FieldShape shape) {
  return align_up(previous_end, soa_array_alignment(soa_array_bytes(capacity, shape)));
}

/// Offset one past a field's last unit, given the offset of its first unit.
HEAPLAB_HD_INLINE constexpr std::uint64_t soa_field_end(std::uint64_t begin,
                                                        std::uint32_t capacity,
                                                        FieldShape shape) {
  return begin + std::uint64_t{shape.elements - 1} * soa_unit_stride(capacity, shape) +
         soa_array_bytes(capacity, shape);
}

/// Offset of the first unit of field `index` among `count` fields laid out for `capacity`
/// (index == count gives the end of the data segment). Runtime form of what the field proxies
/// compute at compile time; both use soa_field_begin/soa_field_end.
HEAPLAB_HD_INLINE constexpr std::uint64_t soa_field_offset(FieldShape const* shapes,
                                                           std::uint32_t index,
                                                           std::uint32_t capacity) {
  std::uint64_t end = 0;
  for (std::uint32_t f = 0; f < index; ++f)
    end = soa_field_end(soa_field_begin(end, capacity, shapes[f]), capacity, shapes[f]);
  return end;
}

/// Bytes of the data segment of `count` fields at `capacity`: the end of the last unit.
HEAPLAB_HD_INLINE constexpr std::uint64_t soa_data_segment_bytes(FieldShape const* shapes,
                                                                 std::uint32_t count,
                                                                 std::uint32_t capacity) {
  return soa_field_offset(shapes, count, capacity);
}

/// Bytes a block of capacity `capacity` needs for CompactGpu's forwarding pointers, which
/// overwrite the data segment of a source block after its objects were copied (CompactGpu
/// sec. 3.3, Listing 1: a union of the data segment and `forwarding_ptr[capacity]`).
HEAPLAB_HD_INLINE constexpr std::uint64_t forwarding_bytes(std::uint32_t capacity) {
  return std::uint64_t{capacity} * kForwardingPointerBytes;
}

/// Bytes a block must have to hold a type with this data segment and capacity, rounded up to a
/// cache line so that every block (and so every 128-aligned unit) starts on a line.
HEAPLAB_HD_INLINE constexpr std::uint64_t block_bytes_for(std::uint64_t data_segment_bytes,
                                                          std::uint32_t capacity) {
  std::uint64_t const need = data_segment_bytes > forwarding_bytes(capacity)
                                 ? data_segment_bytes
                                 : forwarding_bytes(capacity);
  return align_up(need, kCacheLineBytes);
}

}  // namespace heaplab::soa
