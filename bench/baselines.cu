#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "baselines.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"

namespace heaplab::bench {
namespace {

__global__ void malloc_kernel(void** slots,
                              int per_thread,
                              std::size_t bytes,
                              unsigned long long* failed) {
  int const tid = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = 0; i < per_thread; ++i) {
    void* p = malloc(bytes);
    if (p == nullptr) atomicAdd(failed, 1ull);
    slots[static_cast<std::size_t>(tid) * per_thread + i] = p;
  }
}

__global__ void free_kernel(void** slots, int per_thread) {
  int const tid = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = 0; i < per_thread; ++i) free(slots[static_cast<std::size_t>(tid) * per_thread + i]);
}

__global__ void copy_kernel(int4 const* __restrict__ in, int4* __restrict__ out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = in[i];
}

}  // namespace

std::size_t cuda_malloc_heap_bytes(int threads, int per_thread, std::size_t bytes) {
  return static_cast<std::size_t>(threads) * per_thread * bytes * 2 + (std::size_t{64} << 20);
}

void reserve_cuda_malloc_heap(std::size_t bytes) {
  std::size_t current = 0;
  HEAPLAB_CUDA_TRY(cudaDeviceGetLimit(&current, cudaLimitMallocHeapSize));
  if (current < bytes) HEAPLAB_CUDA_TRY(cudaDeviceSetLimit(cudaLimitMallocHeapSize, bytes));
}

MallocResult cuda_malloc_linux_scalability(
    int threads, int per_thread, std::size_t bytes, int warmup, int repeats) {
  std::size_t const total = static_cast<std::size_t>(threads) * per_thread;
  std::size_t const need  = cuda_malloc_heap_bytes(threads, per_thread, bytes);
  std::size_t current     = 0;
  HEAPLAB_CUDA_TRY(cudaDeviceGetLimit(&current, cudaLimitMallocHeapSize));
  if (current < need)
    throw std::runtime_error("CUDA's device malloc heap is " + std::to_string(current >> 20) +
                             " MiB but this run needs " + std::to_string(need >> 20) +
                             " MiB: call reserve_cuda_malloc_heap() with the largest size before "
                             "the first malloc kernel (CUDA fixes the limit at that launch)");
  cudart::device_buffer<void*> slots(total, "malloc result slots");
  cudart::device_buffer<unsigned long long> d_failed(1, "failed allocation count");
  d_failed.set_zero_async(nullptr);
  int const block = 256;
  int const grid  = static_cast<int>(cudart::ceil_div(threads, block));
  MallocResult r;
  // Alternate the two kernels so that every timed malloc starts from an empty device heap.
  std::vector<float> alloc_ms;
  std::vector<float> free_ms;
  for (int i = 0; i < warmup + repeats; ++i) {
    float const a = time_once_ms([&] {
      malloc_kernel<<<grid, block>>>(slots.data(), per_thread, bytes, d_failed.data());
      HEAPLAB_CHECK_LAUNCH();
    });
    float const f = time_once_ms([&] {
      free_kernel<<<grid, block>>>(slots.data(), per_thread);
      HEAPLAB_CHECK_LAUNCH();
    });
    if (i >= warmup) {
      alloc_ms.push_back(a);
      free_ms.push_back(f);
    }
  }
  auto summarize = [repeats](std::vector<float> v) {
    std::sort(v.begin(), v.end());
    Sample s;
    s.repeats   = repeats;
    s.median_ms = v[v.size() / 2];
    s.min_ms    = v.front();
    s.max_ms    = v.back();
    return s;
  };
  r.alloc              = summarize(alloc_ms);
  r.free               = summarize(free_ms);
  r.failed_allocations = cudart::value_to_host(d_failed.data());
  return r;
}

CopyResult copy_bandwidth(std::size_t bytes, int warmup, int repeats) {
  bytes = bytes / sizeof(int4) * sizeof(int4);
  cudart::device_buffer<unsigned char> a(bytes, "copy source");
  cudart::device_buffer<unsigned char> b(bytes, "copy destination");
  // not zeros: see METHOD notes in docs/results.md
  HEAPLAB_CUDA_TRY(cudaMemset(a.data(), 0x5A, bytes));
  CopyResult r;
  r.memcpy_d2d  = time_repeated(warmup, repeats, nullptr, [&] {
    cudart::copy_on_device_async(b.data(), a.data(), bytes, nullptr);
  });
  int const sms = cudart::multiprocessor_count();
  r.kernel_copy = time_repeated(warmup, repeats, nullptr, [&] {
    copy_kernel<<<sms * 8, 512>>>(reinterpret_cast<int4 const*>(a.data()),
                                  reinterpret_cast<int4*>(b.data()),
                                  bytes / sizeof(int4));
    HEAPLAB_CHECK_LAUNCH();
  });
  r.memcpy_gbps = 2.0 * bytes / (r.memcpy_d2d.median_ms * 1e-3) / 1e9;
  r.kernel_gbps = 2.0 * bytes / (r.kernel_copy.median_ms * 1e-3) / 1e9;
  return r;
}

}  // namespace heaplab::bench
