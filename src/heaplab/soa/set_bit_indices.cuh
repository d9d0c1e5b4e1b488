// Enumerating a bitmap's set bits into a sorted array of positions, on the GPU (stream
// compaction, DynaSOAr sec. 3.7 Fig. 8). parallel_do builds its block array R from allocated[T]
// with it; CompactGpu builds its candidate array from defrag[T] the same way.
//
//   soa::SetBitIndices indices(max_bits);                 // owns CUB's temporary storage
//   indices.enumerate(level0_words, num_bits, d_out, d_count, stream);
//   // d_out[0 .. *d_count) = positions of the set bits below num_bits, ascending
//
// Built on cub::DeviceSelect::If over the positions 0..num_bits-1 with the predicate "bit set",
// which keeps the order (R sorted), unlike the paper's hierarchical variant (sec. 4.1.5). The
// bitmap must be quiescent for the duration (no kernel modifying it runs concurrently).
// Host API, nvcc only.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include <thrust/iterator/counting_iterator.h>
#include <cub/device/device_select.cuh>

#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"

namespace heaplab::soa {

namespace detail {

/// Selects position i iff bit i of the level-0 words is set.
struct BitIsSet {
  std::uint64_t const* words;
  __host__ __device__ bool operator()(std::uint32_t i) const {
    return ((words[i / 64u] >> (i % 64u)) & 1u) != 0;
  }
};

}  // namespace detail

class SetBitIndices {
 public:
  /// Prepares temporary storage for bitmaps of up to max_bits bits (it grows if a larger
  /// bitmap is passed later).
  explicit SetBitIndices(std::uint32_t max_bits = 0) { reserve(max_bits); }

  /// Writes the positions of the set bits among the first num_bits bits of `level0` (a device
  /// array of ceil(num_bits / 64) words) to d_out in ascending order and their number to
  /// *d_count (both device memory; d_out has room for num_bits entries). Asynchronous on
  /// `stream`; the temporary storage is reused, so calls on different streams must not overlap.
  void enumerate(std::uint64_t const* level0,
                 std::uint32_t num_bits,
                 std::uint32_t* d_out,
                 std::uint32_t* d_count,
                 cudaStream_t stream = 0) {
    if (num_bits == 0) {
      HEAPLAB_CUDA_TRY(cudaMemsetAsync(d_count, 0, sizeof(std::uint32_t), stream));
      return;
    }
    reserve(num_bits);
    std::size_t bytes = temp_bytes_;
    HEAPLAB_CUDA_TRY(cub::DeviceSelect::If(temp_.data(),
                                           bytes,
                                           thrust::counting_iterator<std::uint32_t>(0),
                                           d_out,
                                           d_count,
                                           static_cast<std::int64_t>(num_bits),
                                           detail::BitIsSet{level0},
                                           stream));
    HEAPLAB_CHECK_LAUNCH();
  }

  [[nodiscard]] std::size_t temp_storage_bytes() const { return temp_bytes_; }

 private:
  void reserve(std::uint32_t num_bits) {
    if (num_bits == 0) return;
    std::size_t need = 0;
    HEAPLAB_CUDA_TRY(cub::DeviceSelect::If(nullptr,
                                           need,
                                           thrust::counting_iterator<std::uint32_t>(0),
                                           static_cast<std::uint32_t*>(nullptr),
                                           static_cast<std::uint32_t*>(nullptr),
                                           static_cast<std::int64_t>(num_bits),
                                           detail::BitIsSet{nullptr},
                                           cudaStream_t{0}));
    if (need <= temp_bytes_ && temp_) return;
    temp_       = cudart::device_buffer<unsigned char>(need, "CUB temporary storage");
    temp_bytes_ = need;
  }

  cudart::device_buffer<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
};

}  // namespace heaplab::soa
