// Shared by the random-walk tests (CPU and GPU): a pool with a given number of free pages at
// random places.
#pragma once

#include <cstdint>
#include <vector>

#include "heaplab/rw/page_pool.hpp"

namespace heaplab::rw_test {

/// Marks every page of `pool` used except `free_pages` of them, drawn at random by `seed`
/// (the pool must be in its initial state). Returns which pages are free.
template <class W>
std::vector<bool> leave_random_pages_free(rw::HostPool<W>& pool,
                                          std::uint32_t free_pages,
                                          std::uint64_t seed) {
  std::uint32_t const t = pool.config().num_pages;
  std::vector<bool> free(t, false);
  rw::PageRng place{seed};
  for (std::uint32_t k = 0; k < free_pages;) {
    std::uint32_t const p = place.below(t);
    if (!free[p]) free[p] = true, ++k;
  }
  for (std::uint32_t p = 0; p < t; ++p)
    if (!free[p]) pool.mark_used(p);
  return free;
}

}  // namespace heaplab::rw_test
