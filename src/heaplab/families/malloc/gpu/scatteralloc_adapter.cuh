// ScatterAlloc through mallocMC (github.com/alpaka-group/mallocMC, fetched with the alpaka headers
// it bundles by tools/fetch-mallocmc into .peers/mallocmc) as an adapter of the malloc family
// (adapter.cuh): the scatteralloc subjects of peer_mallocmc.cu (peers.hpp) and heaplab_apps'
// `--allocators scatteralloc` (apps/common/allocators.cuh) use it. Only for targets that link
// heaplab_malloc_scatteralloc_headers (gpu/CMakeLists.txt, built with HEAPLAB_MALLOCMC_DIR: the
// peer's include folders as SYSTEM, alpaka's CUDA backend macro, nvcc's --extended-lambda and
// Boost's headers). mallocMC and alpaka are header-only templates: any number of translation
// units may include this.
//
// The allocators: mallocMC's Scatter creation policy (4 KiB pages, 16-page regions, waste factor
// 2, freed pages keep their chunk size, default hashing) with a 2 MiB access block (below),
// OOMPolicies::ReturnNull, ReservePoolPolicies::AlpakaBuf (the pool cudaMalloc'ed by alpaka) and
// AlignmentPolicies::Shrink<> (16-byte alignment; the pool's start aligned to it), and one of two
// distribution policies, both mallocMC's own:
//   "scatteralloc"          DistributionPolicies::Noop: every request on its own, as mallocMC's
//                           own examples and tests compose it;
//   "scatteralloc-xmalloc"  DistributionPolicies::XMallocSIMD<>: a warp's small requests combined
//                           into one chunk, as mallocMC's Usage.md composes it.
// Each Pool is a fresh mallocMC::Allocator over pool_bytes; pool() is mallocMC's heap location
// (the pool after Shrink: the pages and their metadata).
//
// Why the access block is not Scatter's default (this commit's mallocMC, .peers/mallocmc/src/
// include/mallocMC/creationPolicies/Scatter.hpp): its default accessblocksize is 2 GiB
// (DefaultScatterConfig), and initDeviceFunction splits the pages into numblocks = the pages'
// bytes / accessblocksize blocks, then divides by numblocks with no guard. Any pool under 2 GiB
// (every heaplab pool: kMaxPool is 1 GiB) gives numblocks = 0: a heap of no pages, and malloc
// divides by zero again (allocChunked) and follows hashed page numbers far past the pool. That was
// the illegal address of this adapter's first version (H100, 2026-11-28), in the first 64 B wave.
// mallocMC's own examples and tests had the same fault with 1 GiB heaps (its pull request 247
// shrank their access block). 2 MiB is the access block of mallocMC's later tests; a pool needs at
// least one whole block of pages behind it, so min_pool is that (kMinPool below) and the Pool
// refuses a smaller one.
//
// What XMallocSIMD assumes (XMallocSIMD.hpp collect / distribute): it combines a warp's requests
// under 128 B through two per-warp __shared__ slots, with no warp barrier between a lane's writes
// and the other lanes' reads, i.e. warp-synchronous execution, which sm_70 and later do not
// promise. GpuSubject's kernels call malloc from divergent lanes (sizes of 0 skip; a fill thread
// asks again after its first null while its warp goes on). The "-xmalloc" subject runs it as it
// is, so that the catalog judges it (a pointer outside its chunk, or two lanes given one chunk,
// would show as malloc-disjoint or malloc-cookies-intact); "scatteralloc" is the configuration
// that does not depend on it.
//
// Device side. mallocMC's malloc/free take an alpaka accelerator object; GpuSubject's kernels are
// plain CUDA kernels, so the adapter makes alpaka's CUDA accelerator (AccGpuCudaRt) in the calling
// thread with a thread element extent of ones, as alpaka's kernel entry does
// (TaskKernelGpuUniformCudaHipRt.hpp): for the CUDA backend it only names the built-in indices,
// atomics and fences. The work division keeps a REFERENCE to that extent
// (WorkDivUniformCudaHipBuiltIn.hpp), so the extent is a local that outlives the accelerator.
// Nothing on the malloc / free path uses dynamic shared memory or alpaka's launch (XMallocSIMD's
// slots are static __shared__), so adapter.cuh's plain launches do. State holds
// getAllocatorHandle().devAllocator: the device copy of the DeviceAllocator, set up by Scatter's
// init kernel on the Pool's own blocking queue and waited for before the Pool exists.
//
// A limit of the peer seen in its code, not masked: Scatter's page-based path (requests above
// 4 KiB) searches from page _numpages in its second pass (allocPageBasedSingle), one past the last
// page, whose page table entry is the region counters.
//
// Linearization points and memory orders: ScatterAlloc's own (page fill counters and bitmaps,
// atomics of the CUDA backend); the adapter only calls malloc / free and relies on kernel
// boundaries (adapter.cuh "Ordering").
#pragma once

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

namespace heaplab::malloc_family::scatteralloc {

using Dim = alpaka::DimInt<1>;
using Idx = std::size_t;
using Acc = alpaka::AccGpuCudaRt<Dim, Idx>;

/// Scatter's defaults but a 2 MiB access block (see the top of this file).
struct ScatterHeapConfig : mallocMC::CreationPolicies::ScatterConf::DefaultScatterConfig {
  static constexpr auto accessblocksize = 2u * 1024u * 1024u;
};
using Creation = mallocMC::CreationPolicies::Scatter<ScatterHeapConfig>;

/// The smallest pool with one whole access block of pages: Scatter.hpp initDeviceFunction makes
/// pool / (regionsize x (pagesize + a 12-byte page table entry) + a 4-byte region counter) whole
/// regions, then numblocks = their pages' bytes / accessblocksize, which must not be 0. Plus
/// Shrink's most (dataAlignment + the misalignment) when alpaka's pointer were not 16-aligned.
constexpr std::uint64_t kPageBytes   = Creation::_pagesize;
constexpr std::uint64_t kRegionPages = Creation::_regionsize;
constexpr std::uint64_t kRegionBytes =
    kRegionPages * (kPageBytes + 3 * sizeof(std::uint32_t)) + sizeof(std::uint32_t);
constexpr std::uint64_t kMinPool =
    Creation::_accessblocksize / (kRegionPages * kPageBytes) * kRegionBytes + 2 * 16;
static_assert(Creation::_accessblocksize % (kRegionPages * kPageBytes) == 0,
              "an access block is whole regions");

/// The "scatteralloc" and "scatteralloc-xmalloc" subjects (see the top of this file): Tag::kName is
/// SubjectInfo's name (a tag type: nvcc's host stubs cannot spell a pointer template argument).
template <class Distribution, class Tag>
struct ScatterAllocAdapter {
  using ScatterAllocator = mallocMC::Allocator<Acc,
                                               Creation,
                                               Distribution,
                                               mallocMC::OOMPolicies::ReturnNull,
                                               mallocMC::ReservePoolPolicies::AlpakaBuf<Acc>,
                                               mallocMC::AlignmentPolicies::Shrink<>>;
  using DevAllocator     = typename ScatterAllocator::DevAllocator;

  struct State {
    DevAllocator* allocator = nullptr;  // device
  };

  __device__ static void* malloc(State const& s, std::uint64_t bytes) {
    alpaka::Vec<Dim, Idx> const elems = alpaka::Vec<Dim, Idx>::ones();  // outlives acc
    Acc const acc(elems);
    return s.allocator->malloc(acc, static_cast<std::size_t>(bytes));
  }
  __device__ static void free(State const& s, void* p) {
    alpaka::Vec<Dim, Idx> const elems = alpaka::Vec<Dim, Idx>::ones();  // outlives acc
    Acc const acc(elems);
    s.allocator->free(acc, p);
  }

  static SubjectInfo info() {
    SubjectInfo i;
    i.name       = Tag::kName;
    i.alignment  = 16;  // AlignmentPolicies::Shrink<>'s dataAlignment
    i.null_floor = 0;   // pages, regions and hashing: nulls are measured only
    i.exact_gaps = false;
    i.recovery   = 0.5;       // freed chunks and pages are reused (a page keeps its chunk size)
    i.min_pool   = kMinPool;  // one whole 2 MiB access block of pages (see the top of this file)
    return i;
  }

  /// Dropping the Pool (the mallocMC::Allocator) frees its pool with every grant.
  static constexpr bool kFreeLiveOnReset = false;

  class Pool {
   public:
    Pool(std::uint64_t pool_bytes, int device)
        : dev_(alpaka::getDevByIdx(alpaka::Platform<Acc>{}, static_cast<std::size_t>(device))),
          queue_(dev_) {
      if (pool_bytes < kMinPool)
        throw std::invalid_argument("scatteralloc: a pool of " + std::to_string(pool_bytes) +
                                    " B has no whole access block of pages (at least " +
                                    std::to_string(kMinPool) + " B)");
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

struct NoopTag {
  static constexpr char const* kName = "scatteralloc";
};
struct XMallocTag {
  static constexpr char const* kName = "scatteralloc-xmalloc";
};

/// The two distributions as the subjects and the apps name them.
using NoopAdapter = ScatterAllocAdapter<mallocMC::DistributionPolicies::Noop, NoopTag>;
using XMallocAdapter =
    ScatterAllocAdapter<mallocMC::DistributionPolicies::XMallocSIMD<>, XMallocTag>;

}  // namespace heaplab::malloc_family::scatteralloc
