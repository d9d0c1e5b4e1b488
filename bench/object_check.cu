#include <cuda_runtime_api.h>

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <string>

#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "object_check.cuh"

namespace heaplab::bench {
namespace {

/// Counts i in [1, n) with sorted[i - 1] != 0 and sorted[i] - sorted[i - 1] < min_distance.
__global__ void close_pairs_kernel(std::uint64_t const* sorted,
                                   std::uint64_t n,
                                   std::uint64_t min_distance,
                                   unsigned long long* count) {
  for (std::uint64_t i = 1 + blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint64_t const a = sorted[i - 1];
    if (a != 0 && sorted[i] - a < min_distance) atomicAdd(count, 1ull);
  }
}

}  // namespace

std::uint64_t count_close_pairs(std::uint64_t const* keys,
                                std::uint64_t n,
                                std::uint64_t min_distance) {
  if (n < 2) return 0;
  cudart::device_buffer<std::uint64_t> sorted(n, "object check sorted keys");
  std::size_t temp_bytes = 0;
  HEAPLAB_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, keys, sorted.data(), n));
  cudart::device_buffer<unsigned char> temp(temp_bytes, "object check sort storage");
  HEAPLAB_CUDA_TRY(cub::DeviceRadixSort::SortKeys(temp.data(), temp_bytes, keys, sorted.data(), n));
  cudart::device_buffer<unsigned long long> count(1, "object check close pairs");
  count.set_zero_async(nullptr);
  unsigned const block = check_detail::kCheckBlock;
  close_pairs_kernel<<<cudart::grid_size(n, block, 32ull * cudart::multiprocessor_count()),
                       block>>>(sorted.data(), n, min_distance, count.data());
  HEAPLAB_CHECK_LAUNCH();
  return cudart::value_to_host(count.data());
}

std::string describe(ObjectCheck const& c) {
  if (c.violations() == 0) return "verified " + std::to_string(c.objects) + " objects";
  return std::to_string(c.violations()) + " violations in " + std::to_string(c.objects) +
         " objects (nulls " + std::to_string(c.nulls) + ", foreign " + std::to_string(c.foreign) +
         ", mismatches " + std::to_string(c.mismatches) + ", overlaps " +
         std::to_string(c.overlaps) + ")";
}

}  // namespace heaplab::bench
