// The content every live allocation of the malloc family holds (docs/malloc.md "Cookies"): byte o
// of allocation `id` written at epoch e is byte o % 8 (little-endian) of cookie_word(id, e, o / 8).
// Writing it word by word (8-byte aligned) or byte by byte gives the same bytes, so host and device
// writers agree. A write past an allocation's end, an allocation that overlaps another or memory
// the allocator reuses while it is live show up as a byte that is not its cookie.
//
// Epochs: an allocation is written at epoch 0 by the thread that got it; a touch step writes every
// live allocation again at the touch's epoch (1, 2, ...).
#pragma once

#include <cstdint>

#include "heaplab/core/cookie.hpp"
#include "heaplab/core/host_device.hpp"

namespace heaplab::malloc_family {

/// Word `word` (bytes 8 word .. 8 word + 7) of allocation `id`'s content at epoch `epoch`.
HEAPLAB_HD_INLINE constexpr std::uint64_t cookie_word(std::uint64_t id,
                                                      std::uint32_t epoch,
                                                      std::uint64_t word) {
  return core::cookie_of(core::cookie_of(id ^ (std::uint64_t{epoch} << 40)) ^ word);
}

/// Byte `offset` of allocation `id`'s content at epoch `epoch`.
HEAPLAB_HD_INLINE constexpr std::uint8_t cookie_byte(std::uint64_t id,
                                                     std::uint32_t epoch,
                                                     std::uint64_t offset) {
  return static_cast<std::uint8_t>(cookie_word(id, epoch, offset / 8) >> (8 * (offset % 8)));
}

/// Writes the content of allocation `id` at `epoch` over [p, p + size).
HEAPLAB_HD_INLINE void write_cookie(std::uint8_t* p,
                                    std::uint64_t size,
                                    std::uint64_t id,
                                    std::uint32_t epoch) {
  std::uint64_t o = 0;
  if ((reinterpret_cast<std::uintptr_t>(p) & 7u) == 0)
    for (; o + 8 <= size; o += 8)
      *reinterpret_cast<std::uint64_t*>(p + o) = cookie_word(id, epoch, o / 8);
  for (; o < size; ++o) p[o] = cookie_byte(id, epoch, o);
}

/// The first offset in [0, size) whose byte is not the cookie's, or `size` when all are.
HEAPLAB_HD_INLINE std::uint64_t first_bad_byte(std::uint8_t const* p,
                                               std::uint64_t size,
                                               std::uint64_t id,
                                               std::uint32_t epoch) {
  std::uint64_t o = 0;
  if ((reinterpret_cast<std::uintptr_t>(p) & 7u) == 0)
    for (; o + 8 <= size; o += 8)
      if (*reinterpret_cast<std::uint64_t const*>(p + o) != cookie_word(id, epoch, o / 8)) break;
  for (; o < size; ++o)
    if (p[o] != cookie_byte(id, epoch, o)) return o;
  return size;
}

}  // namespace heaplab::malloc_family
