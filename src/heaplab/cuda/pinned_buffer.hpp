// pinned_buffer: a grow-only buffer of page-locked host memory for device-to-host copies that
// repeat (the GPU runner reads a heap snapshot back after every step). Host only.
//
//   cudart::pinned_buffer staging;                      // no memory yet
//   unsigned char* host = staging.reserve(bytes);       // cudaMallocHost when it must grow
//   cudart::copy_to_host_async(host, device, bytes, stream);
//
// Why: a fresh pageable buffer per read-back (hundreds of MB for a heap of 2^16 blocks) costs an
// mmap, a page fault per touched page and an munmap (which interrupts every other thread of the
// process for the TLB shootdown), and the driver copies pageable memory once more through its own
// staging buffer. One page-locked buffer per worker, reused, costs none of these after it has
// grown. Growth is rare (by half again at least), so its cost (cudaFreeHost + cudaMallocHost,
// which synchronize) does not matter; the contents do not survive it.
//
// Not thread-safe: one owner. The memory is freed with cudaFreeHost, which waits for the device:
// an owner whose kernels hung calls leak() instead (the process is about to end).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"

namespace heaplab::cudart {

class pinned_buffer {
 public:
  pinned_buffer() noexcept = default;
  ~pinned_buffer() {
    if (data_ != nullptr) (void)cudaFreeHost(data_);
  }
  pinned_buffer(pinned_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), capacity_(std::exchange(o.capacity_, 0)) {}
  pinned_buffer& operator=(pinned_buffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(capacity_, o.capacity_);
    return *this;
  }
  pinned_buffer(pinned_buffer const&)            = delete;
  pinned_buffer& operator=(pinned_buffer const&) = delete;

  /// At least `bytes` bytes of page-locked memory (contents unspecified). Grows to
  /// max(bytes, 1.5 x capacity) when smaller; throws cuda_error (out_of_memory) if that fails.
  [[nodiscard]] unsigned char* reserve(std::size_t bytes) {
    if (bytes <= capacity_ && data_ != nullptr) return data_;
    std::size_t const want = std::max(bytes, capacity_ + capacity_ / 2);
    if (data_ != nullptr) {
      HEAPLAB_CUDA_TRY(cudaFreeHost(data_));
      data_     = nullptr;
      capacity_ = 0;
    }
    void* p                  = nullptr;
    cudaError_t const status = cudaMallocHost(&p, want == 0 ? 1 : want);
    if (status != cudaSuccess)
      detail::throw_allocation_error(status, "cudaMallocHost", want, "pinned staging buffer");
    data_     = static_cast<unsigned char*>(p);
    capacity_ = want;
    return data_;
  }

  [[nodiscard]] unsigned char* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

  /// Gives up the memory without freeing it (after a hang: cudaFreeHost would wait forever).
  void leak() noexcept {
    data_     = nullptr;
    capacity_ = 0;
  }

 private:
  unsigned char* data_  = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace heaplab::cudart
