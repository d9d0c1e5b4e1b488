// heaplab_bench enumerate: DynaSOAr Fig. 14B (sec. 6.5). A fixed problem (--objects objects of a
// 16-byte type, 64 per block, placed by an allocation kernel) in heaps of 1x (the problem's
// blocks: just fits), 4x, ..., 64x its blocks (--factors). Per heap: the time of the hierarchical
// enumeration of allocated[T] (DynaSOAr Alg. 5, soa::SetBitIndices::enumerate) in both
// strategies (tiled: one kernel; chunked: top-down), of the flat one (a scan of all of level 0,
// enumerate_flat) and of a parallel_do whose method increments one field; M and the bitmap's
// levels. Fig. 14B's claim: the hierarchical ones and parallel_do stay flat as M grows, the flat
// scan grows with M. All three enumerations must give the same R (and parallel_do must have
// incremented every object once per run): otherwise the exit status is 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heaplab::bench {

struct EnumerateBenchOptions {
  std::uint64_t objects = std::uint64_t{1} << 20;
  std::vector<std::uint32_t> factors{1, 4, 8, 16, 32, 64};
  int warmup  = 2;
  int repeats = 21;
  std::string csv;
};

/// Throws std::invalid_argument for options that cannot run (a heap of 2^32 blocks or more, no
/// factor); needs no GPU.
void validate_enumerate_bench(EnumerateBenchOptions const& options);

/// Prints the table (and writes the CSV); returns the exit status: 0, or 1 if an output check
/// failed.
int run_enumerate_bench(EnumerateBenchOptions const& options);

}  // namespace heaplab::bench
