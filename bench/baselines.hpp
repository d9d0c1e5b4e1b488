// Baselines measured in the same run as heaplab's kernels (ratios, not absolute numbers, are the
// targets): CUDA's device-side malloc/free, and device-to-device copy bandwidth.
#pragma once

#include <cstddef>
#include <cstdint>

#include "timing.hpp"

namespace heaplab::bench {

struct MallocResult {
  Sample alloc;
  Sample free;
  std::uint64_t failed_allocations = 0;  // malloc returned nullptr (counted on the device)
};

/// Device-heap bytes that cuda_malloc_linux_scalability(threads, per_thread, bytes) needs: room for
/// every object plus CUDA's per-allocation overhead (generous: 2x + 64 MiB).
std::size_t cuda_malloc_heap_bytes(int threads, int per_thread, std::size_t bytes);

/// Raises CUDA's device malloc heap (cudaLimitMallocHeapSize) to at least `bytes`. CUDA accepts a
/// new limit only before the first kernel that calls malloc runs, so a benchmark calls this once
/// with the largest size it will need, before any malloc kernel.
void reserve_cuda_malloc_heap(std::size_t bytes);

/// linux-scalability with CUDA's device malloc (DynaSOAr sec. 6.4): `threads` threads each
/// allocate `per_thread` objects of `bytes` bytes in one kernel; a second kernel frees them.
/// Throws if the device heap (reserve_cuda_malloc_heap) is too small for the run.
MallocResult cuda_malloc_linux_scalability(
    int threads, int per_thread, std::size_t bytes, int warmup, int repeats);

struct CopyResult {
  Sample memcpy_d2d;       // cudaMemcpyAsync device-to-device
  Sample kernel_copy;      // grid-stride copy kernel with 16-byte accesses
  double memcpy_gbps = 0;  // bytes read + bytes written per second, in GB/s (1e9)
  double kernel_gbps = 0;
};

/// Device-to-device copy bandwidth over a buffer of `bytes` (counting read + write).
CopyResult copy_bandwidth(std::size_t bytes, int warmup, int repeats);

}  // namespace heaplab::bench
