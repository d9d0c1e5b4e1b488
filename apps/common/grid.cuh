// The launch geometry every app's own kernels use (grid-stride loops). nvcc only.
#pragma once

#include <cstdint>

#include "heaplab/cuda/device_info.hpp"
#include "heaplab/cuda/grid.hpp"

namespace heaplab::apps {

/// Threads per block of the apps' own kernels.
inline constexpr unsigned kThreads = 256;

/// Blocks for a grid-stride loop over n items: enough to fill the GPU (32 blocks of kThreads per
/// multiprocessor), fewer for small n.
inline unsigned blocks_for(std::uint64_t n) {
  static int const sms = cudart::multiprocessor_count();
  return cudart::grid_size(n, kThreads, 32ull * static_cast<unsigned>(sms));
}

__device__ inline std::uint64_t thread_index() {
  return blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
}
__device__ inline std::uint64_t thread_stride() { return std::uint64_t{gridDim.x} * blockDim.x; }

}  // namespace heaplab::apps
