// The gallatin subject (peers.hpp): Gallatin (github.com/saltsystemslab/gallatin, fetched by
// tools/fetch-gallatin into .peers/gallatin) as a GpuSubject adapter. Built only with
// HEAPLAB_GALLATIN_DIR (gpu/CMakeLists.txt); the only translation unit of heaplab_malloc_gpu that
// includes Gallatin (its headers define non-inline host functions, so one per program; the bench's
// gallatin_bench.cu is in another program).
//
// The allocator. Gallatin's standard configuration (the one its global_allocator.cuh uses):
// Gallatin<16 MiB segments, 16 B smallest slice, 4 KiB biggest slice>. This adapter does not use
// global_allocator.cuh's process-wide allocator (a __device__ pointer): each Pool makes its own
// with Gallatin::generate_on_device and the kernels get the device pointer in the State, so every
// reset is a fresh Gallatin and two subjects never share one. Gallatin's table hands out memory
// by 16 MiB segments (max_bytes / 16 MiB of them): the Pool asks for the pool rounded up to whole
// segments, at least one, so a small pool has 16 MiB behind it (the catalog's utilization then
// reads above 1; nulls are measured only).
//
// Linearization points and memory orders: Gallatin's own (vEB-tree and block atomics); the adapter
// only calls Gallatin::malloc / Gallatin::free and relies on kernel boundaries (adapter.cuh
// "Ordering").
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <gallatin/allocators/gallatin.cuh>

#include "heaplab/cuda/error.hpp"
#include "heaplab/families/malloc/gpu/adapter.cuh"
#include "heaplab/families/malloc/gpu/peers.hpp"

namespace heaplab::malloc_family {

namespace {

constexpr std::uint64_t kSegmentBytes = 16ull << 20;
using Gallatin      = gallatin::allocators::Gallatin<kSegmentBytes, 16ull, 4096ull>;
using GallatinTable = std::remove_pointer_t<decltype(Gallatin::table)>;

/// Gallatin's vEB trees take a seed; a fixed one (as heaplab_bench's Gallatin column uses).
constexpr std::uint64_t kGallatinSeed = 0x5EED;

/// Gallatin's own device memory besides the segments (vEB trees, memory table, block storage;
/// generous, as bench/gallatin_bench.cu estimates it: 1/64 of the pool plus 64 MiB).
constexpr std::uint64_t overhead_bytes(std::uint64_t heap_bytes) {
  return heap_bytes / 64 + (64ull << 20);
}

struct GallatinAdapter {
  struct State {
    Gallatin* gallatin = nullptr;  // device
  };

  __device__ static void* malloc(State const& s, std::uint64_t bytes) {
    return s.gallatin->malloc(bytes);
  }
  __device__ static void free(State const& s, void* p) { s.gallatin->free(p); }

  static SubjectInfo info() {
    SubjectInfo i;
    i.name       = "gallatin";
    i.alignment  = 16;  // the smallest slice; slices are power-of-two sizes >= 16 in segments
    i.null_floor = 0;   // size classes and segment granularity: nulls are measured only
    i.exact_gaps = false;
    i.recovery   = 0.5;  // freed slices, blocks and segments go back to Gallatin's trees
    // Its set-up pins blocks in each of its 9 trees (128 blocks of 16 B slices halving down to 4
    // for the largest, gallatin.cuh's init) and takes a fresh segment whenever it hands out a
    // segment's last block: 16 segments at least, more when its set-up threads race for a tree's
    // lock. With 4 segments it failed ("Failed to initialize block 0 from tree 3", then exit);
    // with 16 it ran but left no free segment. 64 segments (1 GiB) leave 48 for the run.
    i.min_pool = 1ull << 30;
    // Its out-of-memory path does not end in practice: a fill of 64 KiB requests (142 threads)
    // from an empty 1 GiB pool ran past a 60 s watchdog 10 times of 10 and past 300 s once (H200,
    // 2026-11-28; docs/results.md). Requests over 32 KiB take whole blocks, whose trees take whole
    // segments; when the segments run out each request retries block and segment requests
    // hundreds of times each, behind a per-tree lock. So schedules stay far from its pool's end,
    // as for a subject without an out-of-memory path (docs/malloc.md "Out of memory").
    i.max_demand = 0.25;
    return i;
  }

  /// Dropping the Pool frees Gallatin with every grant.
  static constexpr bool kFreeLiveOnReset = false;

  /// One Gallatin over the pool rounded up to whole 16 MiB segments.
  class Pool {
   public:
    Pool(std::uint64_t pool_bytes, int /*device: current already*/)
        : heap_bytes_(std::max<std::uint64_t>(1, (pool_bytes + kSegmentBytes - 1) / kSegmentBytes) *
                      kSegmentBytes) {
      check_free_memory();
      gallatin_ = Gallatin::generate_on_device(heap_bytes_, kGallatinSeed, /*print_info=*/false);
      cudaError_t const e = cudaGetLastError();  // Gallatin checks none of its cudaMalloc calls
      if (e != cudaSuccess || gallatin_ == nullptr)
        throw std::runtime_error(std::string("gallatin: generate_on_device failed: ") +
                                 cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
      read_range();
    }
    ~Pool() {
      // Gallatin's free_on_device exits the process on a CUDA error (its GPUErrorCheck): after a
      // sticky error (the context is lost) the Pool's memory is left to the process's end.
      if (gallatin_ == nullptr || cudaDeviceSynchronize() != cudaSuccess) return;
      Gallatin::free_on_device(gallatin_);
    }
    Pool(Pool const&)            = delete;
    Pool& operator=(Pool const&) = delete;

    [[nodiscard]] State state(std::uint64_t /*seed*/) const { return State{gallatin_}; }
    [[nodiscard]] AddressRange range() const { return range_; }

   private:
    void check_free_memory() const {
      std::size_t free_bytes = 0, total_bytes = 0;
      HEAPLAB_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
      std::uint64_t const need = heap_bytes_ + overhead_bytes(heap_bytes_);
      if (free_bytes < need)
        throw std::runtime_error("gallatin: a heap of " + std::to_string(heap_bytes_) +
                                 " bytes needs about " + std::to_string(need) +
                                 " bytes of device memory; " + std::to_string(free_bytes) +
                                 " are free");
    }

    /// The segments' range: Gallatin's table (device) holds the memory's start and the count.
    void read_range() {
      Gallatin host;
      HEAPLAB_CUDA_TRY(cudaMemcpy(&host, gallatin_, sizeof host, cudaMemcpyDeviceToHost));
      GallatinTable table;
      HEAPLAB_CUDA_TRY(cudaMemcpy(&table, host.table, sizeof table, cudaMemcpyDeviceToHost));
      auto const begin = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(table.memory));
      range_           = AddressRange{begin, begin + table.num_segments * kSegmentBytes};
    }

    std::uint64_t heap_bytes_ = 0;
    Gallatin* gallatin_       = nullptr;
    AddressRange range_;
  };
};

}  // namespace

std::unique_ptr<Subject> make_gallatin_subject(GpuSubjectOptions const& options) {
  return std::make_unique<gpu::GpuSubject<GallatinAdapter>>(options);
}

SubjectInfo gallatin_subject_info() { return GallatinAdapter::info(); }

}  // namespace heaplab::malloc_family
