// Launch geometry (cuCollections' detail/utility/cuda.hpp style). Host only.
//
//   int const sms  = cudart::multiprocessor_count();               // current device
//   unsigned grid  = cudart::grid_size(n, 256, 32ull * sms);       // grid-stride loop over n
//   grid           = std::min(grid, cudart::resident_blocks(kernel, 256, shared_bytes, sms));
//   unsigned exact = static_cast<unsigned>(cudart::ceil_div(threads, 128));  // one thread each
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "heaplab/cuda/error.hpp"

namespace heaplab::cudart {

/// ceil(a / b) for b > 0.
constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

/// Blocks of `block_size` threads for a grid-stride loop over n items: ceil(n / block_size),
/// at most max_blocks, at least 1 (also for n == 0).
constexpr unsigned grid_size(std::uint64_t n, unsigned block_size, std::uint64_t max_blocks) {
  std::uint64_t const wanted = ceil_div(n, block_size);
  std::uint64_t const grid   = wanted < max_blocks ? wanted : max_blocks;
  return static_cast<unsigned>(grid == 0 ? 1 : grid);
}

/// The device the calling host thread uses (cudaGetDevice).
inline int current_device() {
  int device = 0;
  HEAPLAB_CUDA_TRY(cudaGetDevice(&device));
  return device;
}

/// Number of multiprocessors of `device`.
inline int multiprocessor_count(int device) {
  int count = 0;
  HEAPLAB_CUDA_TRY(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

/// Number of multiprocessors of the current device.
inline int multiprocessor_count() { return multiprocessor_count(current_device()); }

/// Blocks of `kernel` (a __global__ function pointer; block_size threads, dynamic_shared_bytes of
/// dynamic shared memory) that can be resident at once on `multiprocessors` multiprocessors: the
/// occupancy per multiprocessor (at least 1) times multiprocessors. A grid no larger than this runs
/// in one wave.
template <class Kernel>
unsigned resident_blocks(Kernel kernel,
                         unsigned block_size,
                         std::size_t dynamic_shared_bytes,
                         int multiprocessors) {
  int per_sm = 0;
  HEAPLAB_CUDA_TRY(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm,
                                                    reinterpret_cast<void const*>(kernel),
                                                    static_cast<int>(block_size),
                                                    dynamic_shared_bytes));
  return static_cast<unsigned>((per_sm < 1 ? 1 : per_sm) * multiprocessors);
}

}  // namespace heaplab::cudart
