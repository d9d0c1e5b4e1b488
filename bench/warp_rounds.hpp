// Where a benchmark's objects lie, per warp round: the share of the rounds of `heaplab_bench
// alloc`'s free kernel that take the coalesced path (one release_slots for the warp) rather than
// the lane-by-lane one (soa/heap_ref.cuh HeapRef::free_slot, docs/allocator.md "The warp-coalesced
// free"). Plain C++: computed on the host from the pointers the allocation kernel stored.
#pragma once

#include <cstdint>
#include <vector>

#include "heaplab/core/object_pointer.hpp"

namespace heaplab::bench {

/// `pointers[t * per_thread + i]` is object i of thread t (heaplab's encoded pointers; 0 for a
/// nullptr answer). Round (w, i) is object i of the threads of warp w (threads 32 w .. 32 w + 31,
/// the last warp possibly partial); the free kernel frees it at one instruction. It is "in one
/// block" when all its non-null pointers agree without their slot bits (block address, capacity
/// and type: what free_slot's __match_all_sync compares). Returns the fraction of the rounds with
/// at least one object that are in one block; 1 if there are none.
inline double one_block_rounds(std::vector<std::uint64_t> const& pointers,
                               std::uint64_t threads,
                               int per_thread) {
  std::uint64_t rounds = 0;
  std::uint64_t one    = 0;
  auto const n         = static_cast<std::uint64_t>(per_thread);
  for (std::uint64_t first = 0; first < threads; first += 32) {
    std::uint64_t const last = first + 32 < threads ? first + 32 : threads;
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t block = 0;
      bool any = false, same = true;
      for (std::uint64_t t = first; t < last; ++t) {
        std::uint64_t const p = pointers[t * n + i];
        if (p == 0) continue;
        std::uint64_t const b = p & ~core::kSlotMask;
        if (any && b != block) same = false;
        block = b;
        any   = true;
      }
      if (!any) continue;
      ++rounds;
      one += same ? 1u : 0u;
    }
  }
  return rounds == 0 ? 1.0 : static_cast<double>(one) / static_cast<double>(rounds);
}

}  // namespace heaplab::bench
