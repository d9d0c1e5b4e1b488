// device_buffer<T>: an owning, move-only, typed buffer of device memory (RMM's device_buffer and
// device_uvector, cut down). Host only. Elements are not initialized (T must be trivially
// copyable); the buffer always holds room for at least one element, so data() is never null
// for an allocated buffer, also when size() == 0.
//
//   cudart::device_buffer<std::uint32_t> ids(n);                        // cudaMalloc / cudaFree
//   auto tmp = cudart::device_buffer<std::uint64_t>::stream_ordered(n, stream);
//                                           // cudaMallocAsync / cudaFreeAsync on `stream`
//   tmp.set_zero_async(stream);
//   kernel<<<g, b, 0, stream>>>(ids.data(), tmp.data());
//
// An allocation that fails throws out_of_memory (cudaErrorMemoryAllocation) or cuda_error,
// naming the bytes requested, what they were for, and the device's free memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "heaplab/cuda/error.hpp"

namespace heaplab::cudart {

namespace detail {

/// throw_cuda_error for a failed allocation of `bytes` bytes for `what`.
[[noreturn]] inline void throw_allocation_error(cudaError_t status,
                                                char const* call,
                                                std::size_t bytes,
                                                char const* what) {
  (void)cudaGetLastError();
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) (void)cudaGetLastError();
  throw_cuda_error(status,
                   std::string(call) + " of " + std::to_string(bytes) + " bytes for the " + what +
                       " failed: " + cudaGetErrorName(status) +
                       " (device memory free: " + std::to_string(free_bytes) + " of " +
                       std::to_string(total_bytes) + " bytes)");
}

}  // namespace detail

template <class T>
class device_buffer {
  static_assert(std::is_trivially_copyable_v<T>,
                "device_buffer<T>: T must be trivially copyable (elements are raw device bytes)");

 public:
  using value_type = T;

  /// No memory.
  device_buffer() noexcept = default;

  /// `count` elements from cudaMalloc, freed with cudaFree. `what` names the buffer in the
  /// error message of a failed allocation.
  explicit device_buffer(std::size_t count, char const* what = "device buffer") : size_(count) {
    void* p                  = nullptr;
    cudaError_t const status = cudaMalloc(&p, allocated_bytes());
    if (status != cudaSuccess)
      detail::throw_allocation_error(status, "cudaMalloc", allocated_bytes(), what);
    data_ = static_cast<T*>(p);
  }

  /// `count` elements from the stream-ordered allocator (cudaMallocAsync on `stream`), freed
  /// with cudaFreeAsync on the same stream: neither synchronizes.
  static device_buffer stream_ordered(std::size_t count,
                                      cudaStream_t stream,
                                      char const* what = "device buffer") {
    device_buffer b;
    b.size_                  = count;
    b.stream_ordered_        = true;
    b.stream_                = stream;
    void* p                  = nullptr;
    cudaError_t const status = cudaMallocAsync(&p, b.allocated_bytes(), stream);
    if (status != cudaSuccess)
      detail::throw_allocation_error(status, "cudaMallocAsync", b.allocated_bytes(), what);
    b.data_ = static_cast<T*>(p);
    return b;
  }

  device_buffer(device_buffer&& other) noexcept { swap(other); }
  device_buffer& operator=(device_buffer&& other) noexcept {
    device_buffer(std::move(other)).swap(*this);
    return *this;
  }
  device_buffer(device_buffer const&)            = delete;
  device_buffer& operator=(device_buffer const&) = delete;
  ~device_buffer() {
    if (data_ == nullptr) return;
    if (stream_ordered_) {
      (void)cudaFreeAsync(data_, stream_);
    } else {
      (void)cudaFree(data_);
    }
  }

  [[nodiscard]] T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  /// True when the buffer owns memory.
  explicit operator bool() const noexcept { return data_ != nullptr; }

  /// Gives up the memory without freeing it (after a hang: cudaFree would wait for the kernel).
  T* release() noexcept {
    size_ = 0;
    return std::exchange(data_, nullptr);
  }

  /// Sets every allocated byte to zero, ordered on `stream` (cudaMemsetAsync).
  void set_zero_async(cudaStream_t stream) {
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(data_, 0, allocated_bytes(), stream));
  }

  void swap(device_buffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(stream_ordered_, other.stream_ordered_);
    std::swap(stream_, other.stream_);
  }

 private:
  [[nodiscard]] std::size_t allocated_bytes() const noexcept {
    return (size_ == 0 ? 1 : size_) * sizeof(T);
  }

  T* data_             = nullptr;
  std::size_t size_    = 0;
  bool stream_ordered_ = false;
  cudaStream_t stream_ = nullptr;
};

}  // namespace heaplab::cudart
