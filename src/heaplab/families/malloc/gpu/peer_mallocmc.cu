// The scatteralloc subject (peers.hpp): ScatterAlloc through mallocMC
// (github.com/alpaka-group/mallocMC, fetched with the alpaka headers it bundles by
// tools/fetch-mallocmc into .peers/mallocmc) as a GpuSubject adapter. Built only with
// HEAPLAB_MALLOCMC_DIR (gpu/CMakeLists.txt, which also gives this file alpaka's CUDA backend
// macro and nvcc's --extended-lambda, and needs Boost's headers); the only translation unit that
// includes mallocMC or alpaka.
//
// The allocator: mallocMC's ScatterAlloc as its Usage.md composes it, every policy with its default
// configuration: CreationPolicies::Scatter<> (4 KiB pages, 16-page regions, waste factor 2, freed
// pages keep their chunk size), DistributionPolicies::XMallocSIMD<> (a warp's requests combined
// into one), OOMPolicies::ReturnNull, ReservePoolPolicies::AlpakaBuf (the pool cudaMalloc'ed by
// alpaka) and AlignmentPolicies::Shrink<> (16-byte alignment; the pool's start aligned to it). Each
// Pool is a fresh mallocMC::Allocator over pool_bytes; pool() is mallocMC's heap location (the
// pool after Shrink: the pages and their metadata).
//
// Device side. mallocMC's malloc/free take an alpaka accelerator object; GpuSubject's kernels are
// plain CUDA kernels, so the adapter makes alpaka's CUDA accelerator (AccGpuCudaRt) in the calling
// thread, as alpaka's own kernel entry does: for the CUDA backend it only names the built-in
// thread and block indices, atomics and warp functions.
//
// Linearization points and memory orders: ScatterAlloc's own (page fill counters and bitmaps,
// atomics of the CUDA backend); the adapter only calls malloc / free and relies on kernel
// boundaries (adapter.cuh "Ordering").
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include <alpaka/alpaka.hpp>
#include <mallocMC/mallocMC.hpp>

#include "heaplab/cuda/error.hpp"
#include "heaplab/families/malloc/gpu/adapter.cuh"
#include "heaplab/families/malloc/gpu/peers.hpp"

namespace heaplab::malloc_family {

namespace {

using Dim = alpaka::DimInt<1>;
using Idx = std::size_t;
using Acc = alpaka::AccGpuCudaRt<Dim, Idx>;

using ScatterAllocator = mallocMC::Allocator<Acc,
                                             mallocMC::CreationPolicies::Scatter<>,
                                             mallocMC::DistributionPolicies::XMallocSIMD<>,
                                             mallocMC::OOMPolicies::ReturnNull,
                                             mallocMC::ReservePoolPolicies::AlpakaBuf<Acc>,
                                             mallocMC::AlignmentPolicies::Shrink<>>;
using DevAllocator     = ScatterAllocator::DevAllocator;

struct ScatterAllocAdapter {
  struct State {
    DevAllocator* allocator = nullptr;  // device
  };

  __device__ static void* malloc(State const& s, std::uint64_t bytes) {
    Acc const acc(alpaka::Vec<Dim, Idx>::ones());
    return s.allocator->malloc(acc, static_cast<std::size_t>(bytes));
  }
  __device__ static void free(State const& s, void* p) {
    Acc const acc(alpaka::Vec<Dim, Idx>::ones());
    s.allocator->free(acc, p);
  }

  static SubjectInfo info() {
    SubjectInfo i;
    i.name       = "scatteralloc";
    i.alignment  = 16;  // AlignmentPolicies::Shrink<>'s dataAlignment
    i.null_floor = 0;   // pages, regions and hashing: nulls are measured only
    i.exact_gaps = false;
    i.recovery   = 0.5;  // freed chunks and pages are reused (a page keeps its chunk size)
    return i;
  }

  /// Dropping the Pool (the mallocMC::Allocator) frees its pool with every grant.
  static constexpr bool kFreeLiveOnReset = false;

  class Pool {
   public:
    Pool(std::uint64_t pool_bytes, int device)
        : dev_(alpaka::getDevByIdx(alpaka::Platform<Acc>{}, static_cast<std::size_t>(device))),
          queue_(dev_) {
      allocator_ =
          std::make_unique<ScatterAllocator>(dev_, queue_, static_cast<std::size_t>(pool_bytes));
      alpaka::wait(queue_);
      HEAPLAB_CUDA_TRY(cudaGetLastError());
      mallocMC::HeapInfo const heap = allocator_->getHeapLocations().at(0);
      auto const begin = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(heap.p));
      range_           = AddressRange{begin, begin + heap.size};
    }

    [[nodiscard]] State state(std::uint64_t /*seed*/) const {
      return State{allocator_->getAllocatorHandle().devAllocator};
    }
    [[nodiscard]] AddressRange range() const { return range_; }

   private:
    alpaka::Dev<Acc> dev_;
    alpaka::Queue<Acc, alpaka::Blocking> queue_;
    std::unique_ptr<ScatterAllocator> allocator_;
    AddressRange range_;
  };
};

}  // namespace

std::unique_ptr<Subject> make_scatteralloc_subject(GpuSubjectOptions const& options) {
  return std::make_unique<gpu::GpuSubject<ScatterAllocAdapter>>(options);
}

}  // namespace heaplab::malloc_family
