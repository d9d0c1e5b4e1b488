// The adapters behind --allocators (allocators.hpp): each name's device allocator, as the malloc
// family defines it (families/malloc/gpu), for AnyHeap (any_heap.cuh). nvcc-only header.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/cuda/error.hpp"
#include "heaplab/families/malloc/gpu/cuda_malloc_adapter.cuh"
#include "heaplab/families/malloc/gpu/rw_malloc_adapter.cuh"
#if defined(HEAPLAB_HAVE_SCATTERALLOC_ADAPTER)  // a build with mallocMC (apps/CMakeLists.txt)
#include "heaplab/families/malloc/gpu/scatteralloc_adapter.cuh"
#endif

namespace heaplab::apps {

template <class A>
struct AllocatorTag {
  using type = A;
};

/// f(AllocatorTag<Adapter>{}) for the allocator called `name` (allocators.hpp's names).
template <class F>
void with_allocator(std::string const& name, F&& f) {
  if (name == "cuda-malloc") {
    f(AllocatorTag<malloc_family::CudaMallocAdapter>{});
  } else if (name == "rw-malloc") {
    f(AllocatorTag<malloc_family::RwMallocAdapter>{});
#if defined(HEAPLAB_HAVE_SCATTERALLOC_ADAPTER)
  } else if (name == "scatteralloc") {
    f(AllocatorTag<malloc_family::scatteralloc::NoopAdapter>{});
#endif
  } else {
    throw std::invalid_argument("unknown allocator '" + name + "'");
  }
}

/// Before the first kernel of an app's translation unit runs: CUDA fixes its device malloc heap
/// when a module that uses malloc loads (cuda_malloc_adapter.cuh), and an app's heap variant and
/// its cuda-malloc variant are one module. So with cuda-malloc in `names`, the heap is made
/// `pool_bytes` now.
inline void reserve_cuda_malloc(std::vector<std::string> const& names, std::uint64_t pool_bytes) {
  for (auto const& n : names) {
    if (n != "cuda-malloc") continue;
    int device = 0;
    HEAPLAB_CUDA_TRY(cudaGetDevice(&device));
    malloc_family::set_cuda_malloc_heap_size(pool_bytes, device);
  }
}

}  // namespace heaplab::apps
