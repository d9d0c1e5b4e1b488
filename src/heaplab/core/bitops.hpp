// Bit operations on 64-bit containers, identical on host and device.
//
// DynaSOAr sec. 4.3 builds its allocator on ffs ("find first set"), popc ("population count") and
// the selection of the i-th set bit; sec. 4.2 rotates bitmaps by a per-warp seed before searching
// so that threads spread over different bits. Every function here is total: out-of-range
// questions (no set bit, no zero bit, n >= popc) answer -1 instead of invoking undefined behaviour.
//
// On the device they map to the hardware intrinsics (__ffsll, __popcll, funnel shifts); on the
// host to the GCC builtins. proofs_tests/core/bitops_test.cpp checks each against a naive loop and
// proofs_tests/core/bitops_gpu_test.cu checks the device versions against the host versions.
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"

namespace heaplab::core {

inline constexpr int kContainerBits = 64;

/// Index (0..63) of the lowest set bit of x, or -1 if x == 0.
HEAPLAB_HD_INLINE int find_first_set(std::uint64_t x) {
#if HEAPLAB_DEVICE_CODE
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return x == 0 ? -1 : __builtin_ctzll(x);
#endif
}

/// find_first_set of a 32-bit word (on the GPU half the instructions of the 64-bit sequence).
HEAPLAB_HD_INLINE int find_first_set32(std::uint32_t x) {
#if HEAPLAB_DEVICE_CODE
  return __ffs(static_cast<int>(x)) - 1;
#else
  return x == 0 ? -1 : __builtin_ctz(x);
#endif
}

/// Number of set bits in x.
HEAPLAB_HD_INLINE int popcount(std::uint64_t x) {
#if HEAPLAB_DEVICE_CODE
  return __popcll(x);
#else
  return __builtin_popcountll(x);
#endif
}

/// Rotate left by r (any r; taken modulo 64).
HEAPLAB_HD_INLINE std::uint64_t rotate_left(std::uint64_t x, unsigned r) {
  r &= 63u;
  return r == 0 ? x : (x << r) | (x >> (64u - r));
}

/// Rotate right by r (any r; taken modulo 64).
HEAPLAB_HD_INLINE std::uint64_t rotate_right(std::uint64_t x, unsigned r) {
  r &= 63u;
  return r == 0 ? x : (x >> r) | (x << (64u - r));
}

/// Index of the n-th set bit of x, counting from the least significant bit with n = 0 for the
/// lowest; -1 if x has at most n set bits (also for n < 0).
///
/// A binary search over halves, quarters, ... using popcount: six steps, no loop over bits.
/// (DynaSOAr sec. 4.3 clears the lowest n bits one by one; this has the same result in constant
/// time, which matters when a coalescing leader hands out up to 32 slots.)
HEAPLAB_HD_INLINE int nth_set_bit(std::uint64_t x, int n) {
  if (n < 0 || n >= popcount(x)) return -1;
  int base      = 0;
  unsigned rank = static_cast<unsigned>(n);
  for (int width = 32; width >= 1; width /= 2) {
    std::uint64_t const low_mask = (std::uint64_t{1} << width) - 1u;
    unsigned const low           = static_cast<unsigned>(popcount(x & low_mask));
    if (rank >= low) {
      rank -= low;
      x >>= width;
      base += width;
    }
  }
  return base;
}

/// The first set bit at or after position `start`, wrapping around past bit 63 to bit 0;
/// -1 if x == 0. This is DynaSOAr's rotation-shifted ffs (sec. 4.2): searching from a seed
/// spreads concurrent searchers over different bits.
HEAPLAB_HD_INLINE int find_first_set_rotated(std::uint64_t x, unsigned start) {
  start &= 63u;
  int const i = find_first_set(rotate_right(x, start));
  return i < 0 ? -1 : static_cast<int>((static_cast<unsigned>(i) + start) & 63u);
}

/// The first zero bit at or after position `start`, wrapping around; -1 if x has no zero bit.
/// Used to pick a free object slot (a zero in an allocation bitmap) from a rotation seed.
HEAPLAB_HD_INLINE int find_first_zero_rotated(std::uint64_t x, unsigned start) {
  return find_first_set_rotated(~x, start);
}

/// The lowest k set bits of x (all of x if it has at most k set bits). A coalescing warp leader
/// uses it to pick k free slots at once (DynaSOAr sec. 4.2 "Allocation Request Coalescing").
HEAPLAB_HD_INLINE std::uint64_t lowest_set_bits(std::uint64_t x, unsigned k) {
  int const cut = nth_set_bit(x, static_cast<int>(k));
  return cut < 0 ? x : x & ((std::uint64_t{1} << cut) - 1u);
}

/// A mask with the lowest k bits set (k in 0..64).
HEAPLAB_HD_INLINE constexpr std::uint64_t low_bits(unsigned k) {
  return k >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << k) - 1u;
}

/// The smallest power of two >= min(n, cap), for a power of two cap; 1 for n <= 1. The size of
/// a per-type table indexed modulo its length (claim_run_slots_for, soa::hint_slots_for).
HEAPLAB_HD_INLINE constexpr std::uint32_t power_of_two_at_least(std::uint32_t n,
                                                                std::uint32_t cap) {
  std::uint32_t p = 1;
  while (p < n && p < cap) p *= 2u;
  return p;
}

}  // namespace heaplab::core
