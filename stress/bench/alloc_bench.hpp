// heaplab's GPU object allocator (src/heaplab/soa) in the allocation benchmarks of DynaSOAr
// sec. 6.4 and the issue: linux-scalability (threads x n objects of 64 bytes, then free all) and
// one wave of many threads x 1 object of 16 bytes. The CUDA device-malloc baselines are in
// baselines.hpp; `heaplab_bench alloc` runs both in the same process.
#pragma once

#include <cstdint>

#include "timing.hpp"

namespace heaplab::bench {

struct HeapAllocResult {
  Sample alloc;                   // the allocation kernel
  Sample free;                    // the kernel freeing every object
  std::uint64_t failed      = 0;  // nullptr answers (Heap::oom_count) in the last timed run
  std::uint32_t blocks      = 0;  // heap size M
  std::uint32_t block_bytes = 0;
  std::uint32_t capacity    = 0;  // objects per block
};

/// linux-scalability with heaplab's heap: `threads` threads each make `per_thread` objects of a
/// 64-byte type (HeapTypes<one type of uint64_t[8]>, default-initialized: no field writes) in
/// one kernel and store the pointers; a second kernel destroys them. Each timed run starts from
/// an empty heap (Heap::reset, untimed). The heap holds every object with room to spare.
HeapAllocResult heap_linux_scalability(int threads, int per_thread, int warmup, int repeats);

/// One wave: `threads` threads x 1 object of a 16-byte type, then the matching free.
HeapAllocResult heap_allocation_wave(std::uint64_t threads, int warmup, int repeats);

}  // namespace heaplab::bench
