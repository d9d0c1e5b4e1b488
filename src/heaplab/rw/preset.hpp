// Presetting a pool to "exactly A of T pages free, at random positions" without a host loop over
// T pages (docs/rw.md "The GPU pool"): the free pages are perm(0), ..., perm(A - 1) for a seeded
// pseudo-random permutation `perm` of [0, T). Every page id is distinct because perm is a
// bijection, so the pool has exactly A free pages; a device kernel computes each one
// independently (thread i: perm(i)), so a preset costs O(T / w + A) work on the GPU for T up to
// 2^30.
//
// The permutation is a 4-round Feistel network on the k-bit numbers, 2^k the smallest even power
// of two >= T (so 2^k < 4 T), with cycle walking: apply the network until the value is below T.
// Cycle walking ends because the network is a bijection of [0, 2^k): the orbit of i < T is a
// cycle through i, so it meets a value below T again. Restricted this way, it is a bijection of
// [0, T) (Black and Rogaway, "Ciphers with arbitrary finite domains", CT-RSA 2002). Host and
// device, plain C++17.
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mix.hpp"
#include "heaplab/core/mutants.hpp"

namespace heaplab::rw {

class PagePermutation {
 public:
  static constexpr int kRounds = 4;

  PagePermutation() = default;
  /// A permutation of [0, n) chosen by `seed`; n >= 1.
  HEAPLAB_HD_INLINE PagePermutation(std::uint32_t n, std::uint64_t seed) : n_(n) {
    std::uint32_t bits = 2;
    while (bits < 32 && (std::uint64_t{1} << bits) < n) ++bits;
    if (bits % 2 != 0) ++bits;  // two halves of equal width
    half_bits_ = bits / 2;
    mask_      = static_cast<std::uint32_t>((std::uint64_t{1} << half_bits_) - 1);
    for (int r = 0; r < kRounds; ++r)
      keys_[r] = core::splitmix64(seed + static_cast<std::uint64_t>(r) * core::kGoldenGamma);
  }

  [[nodiscard]] HEAPLAB_HD_INLINE std::uint32_t size() const { return n_; }

  /// perm(i) for i < n: distinct for distinct i, below n.
  [[nodiscard]] HEAPLAB_HD_INLINE std::uint32_t operator()(std::uint32_t i) const {
    std::uint64_t x = network(i);
    // MUTANT rw_preset_modulo: folds a value >= n into range with `% n` instead of walking the
    // cycle on, so two inputs can land on the same page: the preset frees fewer than A pages.
    if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::rw_preset_modulo)
      return static_cast<std::uint32_t>(x % n_);
    while (x >= n_) x = network(x);
    return static_cast<std::uint32_t>(x);
  }

 private:
  /// One pass of the Feistel network over [0, 2^(2 half_bits)).
  [[nodiscard]] HEAPLAB_HD_INLINE std::uint64_t network(std::uint64_t x) const {
    std::uint64_t left  = x >> half_bits_;
    std::uint64_t right = x & mask_;
    for (int r = 0; r < kRounds; ++r) {
      std::uint64_t const f     = core::splitmix64(right ^ keys_[r]) & mask_;
      std::uint64_t const mixed = left ^ f;  // (L, R) -> (R, L ^ F(R)): invertible
      left                      = right;
      right                     = mixed;
    }
    return (left << half_bits_) | right;
  }

  std::uint32_t n_         = 1;
  std::uint32_t half_bits_ = 1;
  std::uint32_t mask_      = 1;
  std::uint64_t keys_[kRounds]{};
};

}  // namespace heaplab::rw
