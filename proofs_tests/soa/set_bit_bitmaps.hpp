// Random hierarchical bitmaps for the set-bit enumeration tests (set_bit_plan_test.cpp on the
// CPU, set_bit_indices_gpu_test.cu on the GPU): consistent levels (App. A.5 Def. 1) built from a
// level-0 pattern, the expected positions from a naive loop over level 0, and optionally garbage
// past every level's last meaningful bit (which the enumerations must ignore). Plain C++17.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "heaplab/core/bitops.hpp"
#include "heaplab/core/enum_names.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"

namespace heaplab::testing {

enum class BitPattern { empty, full, last, first_and_last, sparse, dense, runs };

inline char const* pattern_name(BitPattern p) {
  static constexpr core::EnumName<BitPattern> kNames[] = {
      {BitPattern::empty, "empty"},
      {BitPattern::full, "full"},
      {BitPattern::last, "last bit only"},
      {BitPattern::first_and_last, "first and last bit"},
      {BitPattern::sparse, "sparse"},
      {BitPattern::dense, "dense"},
      {BitPattern::runs, "runs"}};
  return core::name_of(kNames, p);
}

inline std::vector<BitPattern> all_patterns() {
  return {BitPattern::empty,
          BitPattern::full,
          BitPattern::last,
          BitPattern::first_and_last,
          BitPattern::sparse,
          BitPattern::dense,
          BitPattern::runs};
}

struct BitmapCase {
  std::string name;
  core::BitmapLayout layout;
  std::vector<std::uint64_t> words;  // all levels, level 0 first (layout.total_words)
  std::vector<std::uint32_t> truth;  // the set level-0 positions below num_bits, ascending
};

namespace detail {

inline void set_level0(std::vector<std::uint64_t>& words, std::uint32_t pos) {
  words[pos / 64u] |= std::uint64_t{1} << (pos % 64u);
}

/// Level 0 of `n` bits in `pattern`.
inline void fill_level0(std::vector<std::uint64_t>& words,
                        std::uint32_t n,
                        BitPattern pattern,
                        std::mt19937_64& rng) {
  std::uniform_int_distribution<std::uint32_t> any(0, n - 1u);
  switch (pattern) {
    case BitPattern::empty:
      break;
    case BitPattern::full:
      for (std::uint32_t i = 0; i < n; ++i) set_level0(words, i);
      break;
    case BitPattern::last:
      set_level0(words, n - 1u);
      break;
    case BitPattern::first_and_last:
      set_level0(words, 0);
      set_level0(words, n - 1u);
      break;
    case BitPattern::sparse:
      for (std::uint32_t k = 0; k < 1u + n / 1000u; ++k) set_level0(words, any(rng));
      break;
    case BitPattern::dense: {
      std::bernoulli_distribution set(0.5);
      for (std::uint32_t i = 0; i < n; ++i)
        if (set(rng)) set_level0(words, i);
      break;
    }
    case BitPattern::runs:  // a few runs of consecutive bits, as allocated blocks cluster
      for (std::uint32_t k = 0; k < 8; ++k) {
        std::uint32_t const start = any(rng);
        std::uint32_t const len   = 1u + any(rng) % 300u;
        for (std::uint32_t i = start; i < n && i - start < len; ++i) set_level0(words, i);
      }
      break;
  }
}

}  // namespace detail

/// A bitmap of n >= 1 bits whose level 0 follows `pattern`; the upper levels summarize it.
inline BitmapCase make_bitmap(std::uint32_t n, BitPattern pattern, std::mt19937_64& rng) {
  BitmapCase c;
  c.name   = "n = " + std::to_string(n) + ", " + pattern_name(pattern);
  c.layout = core::BitmapLayout::for_bits(n);
  c.words.assign(c.layout.total_words, 0);
  detail::fill_level0(c.words, n, pattern, rng);
  for (std::uint32_t l = 1; l < c.layout.num_levels; ++l)
    for (std::uint32_t i = 0; i < c.layout.level_bits[l]; ++i)
      if (c.words[c.layout.level_offset[l - 1u] + i] != 0)
        c.words[c.layout.level_offset[l] + i / 64u] |= std::uint64_t{1} << (i % 64u);
  for (std::uint32_t i = 0; i < n; ++i)
    if ((c.words[i / 64u] >> (i % 64u)) & 1u) c.truth.push_back(i);
  return c;
}

/// The same words with every bit past each level's level_bits set in its last container (not
/// part of the bitmap: an enumeration must neither report nor descend into them).
inline std::vector<std::uint64_t> with_garbage(BitmapCase const& c) {
  std::vector<std::uint64_t> w = c.words;
  for (std::uint32_t l = 0; l < c.layout.num_levels; ++l) {
    std::uint32_t const bits = c.layout.level_bits[l];
    if (bits % 64u != 0) w[c.layout.level_offset[l] + bits / 64u] |= ~core::low_bits(bits % 64u);
  }
  return w;
}

/// Sizes around the container and level boundaries: 1 to 4 levels (64, 4096, 262144 bits).
inline std::vector<std::uint32_t> boundary_sizes() {
  return {
      1u, 63u, 64u, 65u, 1000u, 4095u, 4096u, 4097u, 100000u, 262143u, 262144u, 262145u, 1u << 20};
}

}  // namespace heaplab::testing
