// The cuda-malloc subject (gpu_subjects.hpp): CUDA's device malloc/free as a GpuSubject over
// CudaMallocAdapter (cuda_malloc_adapter.cuh), and set_cuda_malloc_heap_size.
//
// This file holds the only kernels of its library that call device malloc/free: the
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
#include "heaplab/families/malloc/gpu/cuda_malloc_adapter.cuh"
#include "heaplab/families/malloc/gpu/gpu_subjects.hpp"

namespace heaplab::malloc_family {

namespace {

/// "cudaLimitMallocHeapSize is B bytes" for the messages below.
std::string heap_text(std::size_t bytes) {
  return "cudaLimitMallocHeapSize is " + std::to_string(bytes) + " bytes";
}

}  // namespace

void set_cuda_malloc_heap_size(std::uint64_t pool_bytes, int device) {
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

std::unique_ptr<Subject> make_cuda_malloc_subject(GpuSubjectOptions const& options) {
  return std::make_unique<gpu::GpuSubject<CudaMallocAdapter>>(options);
}

}  // namespace heaplab::malloc_family
