// The cuda-malloc subject (gpu_subjects.hpp): CUDA's device malloc/free as a GpuSubject adapter.
//
// This file holds the only kernels that call device malloc/free, apart from everything else: the
// heap of cudaLimitMallocHeapSize is allocated when a module that uses malloc is loaded into the
// context (with CUDA's lazy module loading, at the first launch of one of its kernels), and from
// then on its size is fixed. Were these kernels in one translation unit (one module) with
// rw-malloc's, the first rw-malloc wave could load the module and fix the heap at its default
// size (8 MiB) before cuda-malloc's reset asked for its pool's size.
//
// Linearization points and memory orders: CUDA's own (undocumented); the subject relies on
// kernel boundaries only (adapter.cuh "Ordering"): a grant's bytes are written by the thread that
// got it, after malloc returned, and read or freed in later kernels.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "heaplab/cuda/error.hpp"
#include "heaplab/families/malloc/gpu/adapter.cuh"
#include "heaplab/families/malloc/gpu/gpu_subjects.hpp"

namespace heaplab::malloc_family {

namespace {

/// "cudaLimitMallocHeapSize is B bytes" for the messages below.
std::string heap_text(std::size_t bytes) {
  return "cudaLimitMallocHeapSize is " + std::to_string(bytes) + " bytes";
}

/// The heap limit of the current device, which must be at least pool_bytes. Throws a
/// std::runtime_error saying why when it cannot be set (see make_cuda_malloc_subject).
void set_heap_size(std::uint64_t pool_bytes, int device) {
  // One process-wide lock: two subjects of one device must not race between reading and setting
  // the limit. `granted`: per device, the last size set and what the driver made of it (it may
  // round a request up), so that a later reset to the same size is recognized.
  static std::mutex lock;
  static std::map<int, std::pair<std::uint64_t, std::size_t>> granted;
  std::lock_guard<std::mutex> const guard(lock);
  std::size_t current = 0;
  HEAPLAB_CUDA_TRY(cudaDeviceGetLimit(&current, cudaLimitMallocHeapSize));
  auto const known = granted.find(device);
  if (current == pool_bytes ||
      (known != granted.end() && known->second == std::make_pair(pool_bytes, current)))
    return;
  cudaError_t const set = cudaDeviceSetLimit(cudaLimitMallocHeapSize, pool_bytes);
  if (set != cudaSuccess) (void)cudaGetLastError();
  std::size_t after = 0;
  HEAPLAB_CUDA_TRY(cudaDeviceGetLimit(&after, cudaLimitMallocHeapSize));
  if (set == cudaSuccess && after >= pool_bytes) {
    granted[device] = {pool_bytes, after};
    return;
  }
  throw std::runtime_error(
      "cuda-malloc: cannot make CUDA's device malloc heap " + std::to_string(pool_bytes) +
      " bytes on device " + std::to_string(device) + ": " + heap_text(after) +
      " and can no longer change (cudaDeviceSetLimit: " +
      (set == cudaSuccess ? std::string("no error, but the limit stayed")
                          : std::string(cudaGetErrorName(set)) + ": " + cudaGetErrorString(set)) +
      "). CUDA fixes the heap's size per process at the first kernel that uses device malloc, so "
      "a process must use ONE pool size for cuda-malloc (the first one it ran with); run other "
      "pool sizes in other processes");
}

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
    Pool(std::uint64_t pool_bytes, int device) { set_heap_size(pool_bytes, device); }
    [[nodiscard]] State state(std::uint64_t /*seed*/) const { return State{}; }
    [[nodiscard]] AddressRange range() const { return {}; }  // CUDA does not say
  };
};

}  // namespace

std::unique_ptr<Subject> make_cuda_malloc_subject(GpuSubjectOptions const& options) {
  return std::make_unique<gpu::GpuSubject<CudaMallocAdapter>>(options);
}

}  // namespace heaplab::malloc_family
