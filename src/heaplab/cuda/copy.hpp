// Copies between host and device memory, counted in elements. Host only. A count of 0 copies
// nothing (and calls nothing).
//
//   cudart::copy_to_device_async(d_ids, host.data(), host.size(), stream);
//   std::vector<std::uint32_t> got = cudart::to_host(d_out, n, stream);   // waits for `stream`
//   auto const failed = cudart::value_to_host(d_failed);                  // legacy default stream
//   cudart::copy_to_host_async(pinned, d_counters, 1, stream);            // no wait
//
// The waiting forms order the copy on `stream` and then synchronize that stream; with the
// default `stream` (the legacy default stream) they behave like a plain cudaMemcpy.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <type_traits>
#include <vector>

#include "heaplab/cuda/error.hpp"

namespace heaplab::cudart {

/// `count` elements device -> host, ordered on `stream`; does not wait.
template <class T>
void copy_to_host_async(T* host, T const* device, std::size_t count, cudaStream_t stream) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (count == 0) return;
  HEAPLAB_CUDA_TRY(
      cudaMemcpyAsync(host, device, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
}

/// `count` elements device -> host, ordered on `stream`, then waits for `stream`.
template <class T>
void copy_to_host(T* host, T const* device, std::size_t count, cudaStream_t stream = nullptr) {
  if (count == 0) return;
  copy_to_host_async(host, device, count, stream);
  HEAPLAB_CUDA_TRY(cudaStreamSynchronize(stream));
}

/// The first `count` elements of a device array, as a host vector (copy_to_host).
template <class T>
[[nodiscard]] std::vector<T> to_host(T const* device,
                                     std::size_t count,
                                     cudaStream_t stream = nullptr) {
  std::vector<T> host(count);
  copy_to_host(host.data(), device, count, stream);
  return host;
}

/// One element of device memory, read back (copy_to_host).
template <class T>
[[nodiscard]] T value_to_host(T const* device, cudaStream_t stream = nullptr) {
  T value{};
  copy_to_host(&value, device, 1, stream);
  return value;
}

/// `count` elements host -> device, ordered on `stream`; does not wait (pageable host memory
/// may be released on return: the runtime stages it before returning).
template <class T>
void copy_to_device_async(T* device, T const* host, std::size_t count, cudaStream_t stream) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (count == 0) return;
  HEAPLAB_CUDA_TRY(
      cudaMemcpyAsync(device, host, count * sizeof(T), cudaMemcpyHostToDevice, stream));
}

/// `count` elements device -> device, ordered on `stream`.
template <class T>
void copy_on_device_async(T* to, T const* from, std::size_t count, cudaStream_t stream) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (count == 0) return;
  HEAPLAB_CUDA_TRY(cudaMemcpyAsync(to, from, count * sizeof(T), cudaMemcpyDeviceToDevice, stream));
}

}  // namespace heaplab::cudart
