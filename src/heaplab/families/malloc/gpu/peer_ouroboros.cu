// The ouroboros subjects (peers.hpp): Ouroboros (github.com/GPUPeople/Ouroboros, fetched by
// tools/fetch-ouroboros into .peers/ouroboros) as two GpuSubject adapters. Built only with
// HEAPLAB_OUROBOROS_DIR (gpu/CMakeLists.txt); Ouroboros' headers, the CUDA 13 workaround and the
// instance set-up come from ouroboros_instance.cuh.
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
// Process-wide effects of Ouroboros: see ouroboros_instance.cuh (CUDA's heap limit and stdout are
// left alone). Ouroboros::free calls CUDA's free for a pointer outside its memory, so this module
// uses device malloc and loading it fixes CUDA's heap at its current limit: run malloc-cuda in a
// process of its own (as its one-pool-size rule asks anyway).
//
// Linearization points and memory orders: Ouroboros' own (its queues' atomics and semaphores);
// the adapter only calls malloc / free and relies on kernel boundaries (adapter.cuh "Ordering").
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "heaplab/cuda/error.hpp"
#include "heaplab/families/malloc/gpu/adapter.cuh"
#include "heaplab/families/malloc/gpu/ouroboros_instance.cuh"
#include "heaplab/families/malloc/gpu/peers.hpp"

namespace heaplab::malloc_family {

namespace {

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
OuroborosAdapter<O, Tag>::Pool::Pool(std::uint64_t pool_bytes, int)
    : host_(ouroboros::make_instance<O>(ouroboros::chunks_for(pool_bytes) + 1, Tag::kName)) {}

template <class O, class Tag>
OuroborosAdapter<O, Tag>::Pool::~Pool() {
  ouroboros::drop_instance(host_);
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
