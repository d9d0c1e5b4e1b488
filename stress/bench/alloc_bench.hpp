// heaplab's GPU object allocator (src/heaplab/soa) in the allocation benchmarks of DynaSOAr
// sec. 6.4 and the issue: linux-scalability (threads x n objects of 64 bytes, then free all) and
// one wave of many threads x 1 object of 16 bytes. The CUDA device-malloc baselines are in
// baselines.hpp, the Gallatin peer baseline gallatin_bench.hpp; `heaplab_bench alloc` runs them
// in the same process.
#pragma once

#include <cstdint>

#include "object_check.hpp"
#include "timing.hpp"

namespace heaplab::bench {

/// Threads per block of every allocation and free kernel of `heaplab_bench alloc` (heaplab's and
/// Gallatin's: the same kernel shape, one thread per `threads`, ceil(threads / 256) blocks).
inline constexpr unsigned kAllocBlockThreads = 256;

struct HeapAllocResult {
  Sample alloc;                   // the allocation kernel
  Sample free;                    // the kernel freeing every object
  std::uint64_t failed      = 0;  // nullptr answers (Heap::oom_count) in the last timed run
  std::uint32_t blocks      = 0;  // heap size M
  std::uint32_t block_bytes = 0;
  std::uint32_t capacity    = 0;  // objects per block
  ObjectCheck check;              // the object check of the last timed allocation run
};

/// linux-scalability with heaplab's heap: `threads` threads each make `per_thread` objects of a
/// 64-byte type (HeapTypes<one type of uint64_t[8]>, default-initialized: no field writes) in
/// one kernel and store the pointers; a second kernel destroys them. Each timed run starts from
/// an empty heap (Heap::reset, untimed). The heap holds every object with room to spare. After
/// the timed allocation runs, untimed, the objects of the last run are checked
/// (object_check.hpp: words_[0] and words_[7] written and read back through the field DSL,
/// encoded pointers distinct by block and slot). `claim_wait_rounds`, `coalesce_frees`:
/// soa::HeapOptions' (0: claim tickets off; false: one fetch_and per freed object).
HeapAllocResult heap_linux_scalability(int threads,
                                       int per_thread,
                                       int warmup,
                                       int repeats,
                                       std::uint32_t claim_wait_rounds,
                                       bool coalesce_frees);

/// One wave: `threads` threads x 1 object of a 16-byte type, then the matching free; the same
/// check (words_[0] and words_[1]).
HeapAllocResult heap_allocation_wave(std::uint64_t threads,
                                     int warmup,
                                     int repeats,
                                     std::uint32_t claim_wait_rounds,
                                     bool coalesce_frees);

/// Device bytes heap_linux_scalability / heap_allocation_wave take at most: heap, pointer slots
/// and the object check.
std::uint64_t heap_linux_scalability_bytes(int threads, int per_thread);
std::uint64_t heap_allocation_wave_bytes(std::uint64_t threads);

}  // namespace heaplab::bench
