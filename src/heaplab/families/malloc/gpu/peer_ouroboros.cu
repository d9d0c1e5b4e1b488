// The ouroboros subjects (peers.hpp): Ouroboros (github.com/GPUPeople/Ouroboros, fetched by
// tools/fetch-ouroboros into .peers/ouroboros) as two GpuSubject adapters. Built only with
// HEAPLAB_OUROBOROS_DIR (gpu/CMakeLists.txt); the only translation unit that includes Ouroboros.
//
// The allocators. Ouroboros' standard (not virtualized) instances with the repository's
// Parameters.h: OuroPQ ("page": a queue of free pages per page size) and OuroCQ ("chunk": a queue
// of chunks that have free pages per page size), 8 KiB chunks (plus 128 B of metadata each),
// pages of 16 B << q for the 10 queues q. Each Pool is a fresh Ouroboros host object whose
// initialize(instantiation_size) cudaMallocs one block for the allocator, its queues (about
// 330 MiB whatever the pool: 10 page queues of 8 Mi entries) and the chunks; the Pool sizes it so
// that the chunks hold the pool, rounded up to whole chunks, plus one chunk (Ouroboros never hands
// out its last chunk: allocateChunk's bound is strict).
//
// Requests above 8 KiB get null without a call: Ouroboros passes them to CUDA's device malloc
// (its empty Ouroboros<>), which is not this subject. Ouroboros has no out-of-memory path: when
// its chunks run out, allocateChunk's failure is ignored and a page of a chunk past the end is
// handed out (PageQueue/ChunkQueue::allocPage). The subject does not mask that: such a grant is
// outside pool() (malloc-inside-pool) or overwrites Ouroboros' queues (a crash or a hang).
//
// Two process-wide effects of Ouroboros, kept away from the other subjects:
//  - Ouroboros::initialize sets cudaLimitMallocHeapSize to 500 MiB once per process (its static
//    cuda_initialized); the Pool sets that flag first, so it never touches CUDA's heap limit
//    (which cuda-malloc owns). Ouroboros::free calls CUDA's free for a pointer outside its
//    memory, so this module uses device malloc and loading it fixes CUDA's heap at its current
//    limit: run malloc-cuda in a process of its own (as its one-pool-size rule asks anyway).
//  - initialize prints its configuration on stdout (Parameters.h's printDebug is on); the Pool
//    sends stdout to /dev/null while it runs.
//
// CUDA 13. Ouroboros' Statistics.h has an inline writeGPUInfo (never called here) that reads
// cudaDeviceProp::clockRate, which CUDA 13 removed ("class cudaDeviceProp has no member
// clockRate"). Without touching Ouroboros' files, this file maps that one member name to
// multiProcessorCount while Ouroboros' headers are read (after CUDA's own headers, so that no CUDA
// structure is renamed), and Statistics.h's use of std::cout gets <iostream> first (as Ouroboros'
// own src/main.cu includes it).
//
// Linearization points and memory orders: Ouroboros' own (its queues' atomics and semaphores);
// the adapter only calls malloc / free and relies on kernel boundaries (adapter.cuh "Ordering").
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

// Ouroboros' headers depend on this order (its src/main.cu's), which clang-format must keep.
// clang-format off
#if CUDART_VERSION >= 13000
#define clockRate multiProcessorCount  // CUDA 13 (see the top of this file)
#endif
#include "device/Ouroboros_impl.cuh"
#include "device/MemoryInitialization.cuh"
#include "InstanceDefinitions.cuh"
#undef clockRate
// clang-format on

#include "heaplab/cuda/error.hpp"
#include "heaplab/families/malloc/gpu/adapter.cuh"
#include "heaplab/families/malloc/gpu/peers.hpp"

namespace heaplab::malloc_family {

namespace {

/// stdout to /dev/null for this object's life (flushed first, restored after).
class QuietStdout {
 public:
  QuietStdout() {
    std::fflush(stdout);
    saved_         = dup(STDOUT_FILENO);
    int const sink = open("/dev/null", O_WRONLY);
    if (saved_ >= 0 && sink >= 0) (void)dup2(sink, STDOUT_FILENO);
    if (sink >= 0) (void)close(sink);
  }
  ~QuietStdout() {
    std::fflush(stdout);
    if (saved_ < 0) return;
    (void)dup2(saved_, STDOUT_FILENO);
    (void)close(saved_);
  }
  QuietStdout(QuietStdout const&)            = delete;
  QuietStdout& operator=(QuietStdout const&) = delete;

 private:
  int saved_ = -1;
};

/// Ouroboros instance O (OuroPQ or OuroCQ) as an adapter; Tag::kName is SubjectInfo's name (a tag
/// type, not a string parameter: nvcc's host stubs cannot spell a pointer template argument).
template <class O, class Tag>
struct OuroborosAdapter {
  using ChunkBase                             = typename O::ChunkBase;
  static constexpr std::uint64_t kLargestPage = O::ConcreteOuroboros::LargestPageSize_;

  struct State {
    O* ouroboros = nullptr;  // device: the allocator at the start of its memory block
  };

  __device__ static void* malloc(State const& s, std::uint64_t bytes) {
    if (bytes == 0 || bytes > kLargestPage) return nullptr;  // CUDA's malloc in Ouroboros
    return s.ouroboros->malloc(static_cast<std::size_t>(bytes));
  }
  __device__ static void free(State const& s, void* p) { s.ouroboros->free(p); }

  static SubjectInfo info() {
    SubjectInfo i;
    i.name       = Tag::kName;
    i.alignment  = 16;  // pages of 16 B << q after 128 B of chunk metadata, chunks 8320 B apart
    i.null_floor = 0;   // pages by size class, chunks per queue: nulls are measured only
    i.exact_gaps = false;
    i.recovery   = 0.5;  // freed pages go back to their queue, empty chunks to the chunk queue
    // No out-of-memory path (the top of this file): asked for more than its chunks hold, it
    // hands out memory past them. Schedules keep to an eighth of the pool: the smallest page is
    // 16 B (a 4 B request takes four times its bytes) and each page size holds whole chunks.
    i.max_demand = 0.125;
    return i;
  }

  /// Dropping the Pool frees Ouroboros' memory block with every grant.
  static constexpr bool kFreeLiveOnReset = false;

  class Pool {
   public:
    Pool(std::uint64_t pool_bytes, int /*device: current already*/);
    ~Pool();
    Pool(Pool const&)            = delete;
    Pool& operator=(Pool const&) = delete;

    [[nodiscard]] State state(std::uint64_t /*seed*/) const {
      return State{host_->getDeviceMemoryManager()};
    }
    [[nodiscard]] AddressRange range() const {
      auto const begin =
          static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(host_->memory.d_data));
      return AddressRange{begin,
                          begin + std::uint64_t{host_->memory.maxChunks} * ChunkBase::size()};
    }

   private:
    std::unique_ptr<O> host_;  // Ouroboros' host object; its Memory owns the device block
  };
};

template <class O, class Tag>
OuroborosAdapter<O, Tag>::Pool::Pool(std::uint64_t pool_bytes, int) : host_(std::make_unique<O>()) {
  std::uint64_t const chunk  = ChunkBase::size();
  std::uint64_t const chunks = std::max<std::uint64_t>(1, (pool_bytes + chunk - 1) / chunk) + 1;
  // initialize's maxChunks is (instantiation - required) / chunk, required being the allocator
  // and its queues rounded up to a chunk (MemoryInitialization.cuh): ask for exactly `chunks`.
  std::uint64_t const required =
      Ouro::alignment<std::size_t>(O::size_() + host_->totalMemoryManagerSize(), ChunkBase::size());
  std::uint64_t const instantiation = required + chunks * chunk;
  std::size_t free_bytes = 0, total_bytes = 0;
  HEAPLAB_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::uint64_t const need = instantiation + instantiation / 8 + (16ull << 20);  // + the locator
  if (free_bytes < need)
    throw std::runtime_error(std::string(Tag::kName) + ": a pool of " + std::to_string(pool_bytes) +
                             " bytes needs about " + std::to_string(need) +
                             " bytes of device memory (Ouroboros' queues included); " +
                             std::to_string(free_bytes) + " are free");
  O::cuda_initialized = true;  // keep Ouroboros off cudaLimitMallocHeapSize (see the top)
  {
    QuietStdout const quiet;
    host_->initialize(static_cast<std::size_t>(instantiation));
  }
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  if (host_->memory.maxChunks != chunks)
    throw std::logic_error(std::string(Tag::kName) + ": Ouroboros made " +
                           std::to_string(host_->memory.maxChunks) + " chunks, not " +
                           std::to_string(chunks));
}

template <class O, class Tag>
OuroborosAdapter<O, Tag>::Pool::~Pool() {
  // Ouroboros' Memory destructor exits the process on a CUDA error (HANDLE_ERROR): after a sticky
  // error (the context is lost) the block is left to the process's end.
  if (cudaDeviceSynchronize() != cudaSuccess) (void)host_.release();
}

struct PageTag {
  static constexpr char const* kName = "ouroboros-page";
};
struct ChunkTag {
  static constexpr char const* kName = "ouroboros-chunk";
};

}  // namespace

std::unique_ptr<Subject> make_ouroboros_page_subject(GpuSubjectOptions const& options) {
  return std::make_unique<gpu::GpuSubject<OuroborosAdapter<OuroPQ, PageTag>>>(options);
}

std::unique_ptr<Subject> make_ouroboros_chunk_subject(GpuSubjectOptions const& options) {
  return std::make_unique<gpu::GpuSubject<OuroborosAdapter<OuroCQ, ChunkTag>>>(options);
}

}  // namespace heaplab::malloc_family
