// CudaMallocAdapter: CUDA's device malloc/free as an adapter of adapter.cuh's interface. Used by
// the cuda-malloc subject (cuda_malloc_subject.cu) and by the applications' any-allocator heap
// (apps/common/any_heap.cuh).
//
// A translation unit that instantiates a kernel calling CudaMallocAdapter::malloc is a module that
// uses device malloc: CUDA allocates the heap of cudaLimitMallocHeapSize when such a module loads
// (with lazy module loading, at the first launch of one of its kernels) and fixes its size from
// then on. So a program sets the size (set_cuda_malloc_heap_size, or a Pool) before the first
// kernel of such a module runs, and uses ONE size per process.
//
// Linearization points and memory orders: CUDA's own (undocumented); users rely on kernel
// boundaries (adapter.cuh "Ordering").
#pragma once

#include <cstddef>
#include <cstdint>

#include "heaplab/families/malloc/subject.hpp"

namespace heaplab::malloc_family {

/// Makes the device malloc heap of `device` (the current one) at least pool_bytes. Throws a
/// std::runtime_error saying why when it cannot be set: CUDA fixes the heap's size per process at
/// the first kernel of a module that uses device malloc (cuda_malloc_subject.cu).
void set_cuda_malloc_heap_size(std::uint64_t pool_bytes, int device);

/// CUDA's device malloc: malloc and free of the CUDA device runtime (16-byte aligned grants).
struct CudaMallocAdapter {
  struct State {};  // the heap is the context's: nothing to pass

  __device__ static void* malloc(State const&, std::uint64_t bytes) {
    return ::malloc(static_cast<std::size_t>(bytes));
  }
  __device__ static void free(State const&, void* p) { ::free(p); }

  static SubjectInfo info() {
    SubjectInfo i;
    i.name       = "cuda-malloc";
    i.alignment  = 16;
    i.null_floor = 0;  // the heap's headers and size classes are CUDA's: nulls are measured only
    i.exact_gaps = false;
    i.recovery   = 0.5;
    // A fill wave near a full heap ran past 5 s on an H200 shared by six test processes, and past
    // it in gpu_runner_conformance_test alone (2026-11-28): CUDA's malloc takes milliseconds per
    // request there. A hang still ends the case, only later.
    i.watchdog_ms = 30000;
    return i;
  }

  /// The heap outlives every Pool (it is the context's): a run's live allocations must be freed
  /// before the next run, or they leak the heap for the rest of the process.
  static constexpr bool kFreeLiveOnReset = true;

  class Pool {
   public:
    Pool(std::uint64_t pool_bytes, int device) { set_cuda_malloc_heap_size(pool_bytes, device); }
    [[nodiscard]] State state(std::uint64_t /*seed*/) const { return State{}; }
    [[nodiscard]] AddressRange range() const { return {}; }  // CUDA does not say
  };
};

}  // namespace heaplab::malloc_family
