// Gallatin (Gallatin, PPoPP'24; github.com/saltsystemslab/gallatin) as a peer baseline of
// `heaplab_bench alloc` (docs/gpu.md "Peer baseline: Gallatin"): the same kernel shapes, sizes,
// timing and object check as heaplab's runs (alloc_bench.hpp), through Gallatin's global
// allocator (global_malloc / global_free). Built only when CMake is given HEAPLAB_GALLATIN_DIR;
// otherwise gallatin_built() is false and the runs throw.
#pragma once

#include <cstdint>
#include <string>

#include "object_check.hpp"
#include "timing.hpp"

namespace heaplab::bench {

struct GallatinAllocResult {
  Sample alloc;       // the allocation kernel
  Sample free;        // the kernel freeing every object
  ObjectCheck check;  // the object check of the last timed allocation run (nulls = failures)
};

/// Whether this binary was built with Gallatin (HEAPLAB_GALLATIN_DIR).
bool gallatin_built();

/// Which Gallatin this binary runs: the allocator type and where its headers came from.
std::string gallatin_description();

/// linux-scalability through Gallatin's global allocator with a pool of `pool_bytes`: `threads`
/// threads (kAllocBlockThreads per block) each call global_malloc(64) `per_thread` times in one
/// kernel and store the pointers; a second kernel calls global_free on every non-null one. Every
/// timed run starts from a freshly initialized Gallatin (init_global_allocator, untimed; the
/// previous one torn down, untimed), as heaplab's start from a reset heap. After the timed
/// allocation runs, untimed, the objects of the last run are checked (object_check.hpp: the
/// first and last 8-byte word written and read back; owns_allocation; the sorted addresses at
/// least 64 bytes apart). Throws std::runtime_error when not built or when the pool does not fit.
GallatinAllocResult gallatin_linux_scalability(
    int threads, int per_thread, std::uint64_t pool_bytes, int warmup, int repeats);

/// One wave: `threads` threads x global_malloc(16), then the matching free; the same check.
GallatinAllocResult gallatin_allocation_wave(std::uint64_t threads,
                                             std::uint64_t pool_bytes,
                                             int warmup,
                                             int repeats);

/// A size row (alloc_bench.hpp heap_object_size): `threads` x `per_thread` x
/// global_malloc(bytes), then the free; the same check (4-byte words for a 4-byte object).
GallatinAllocResult gallatin_object_size(std::uint32_t bytes,
                                         int threads,
                                         int per_thread,
                                         std::uint64_t pool_bytes,
                                         int warmup,
                                         int repeats);

/// The mixed row (alloc_bench.hpp heap_mixed): object i of thread t is global_malloc of
/// kMixedSizes[(t + i) % 3]; checked as 16-byte objects (the first and last word of their first
/// 16 bytes; the check does not know which size a pointer got).
GallatinAllocResult gallatin_mixed(
    int threads, int per_thread, std::uint64_t pool_bytes, int warmup, int repeats);

/// Throws std::runtime_error naming the numbers when a Gallatin pool of `pool_bytes` together
/// with `other_bytes` (CUDA's malloc heap, heaplab's largest run and Gallatin's largest besides
/// the pool, as if they lived at the same time) exceeds the device's free memory
/// (cudaMemGetInfo).
void require_gallatin_fits(std::uint64_t pool_bytes, std::uint64_t other_bytes);

/// Device bytes a Gallatin run needs besides the pool: pointer slots and the object check, plus
/// Gallatin's own metadata (generous: 1/64 of the pool plus 64 MiB).
std::uint64_t gallatin_run_bytes(std::uint64_t objects, std::uint64_t pool_bytes);

}  // namespace heaplab::bench
