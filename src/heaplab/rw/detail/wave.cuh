// The allocation wave as a kernel, shared by DevicePool, DeviceQueue and DeviceDirectOutput so
// that every allocator is measured by the same kernel (docs/rw.md "Benchmarks"): thread i with
// pages[i] != 0 calls its page source once with thread_rng(seed, i); thread i with pages[i] == 0
// does not call it. Host side: upload pages[], time the kernel alone with CUDA events, download
// the per-thread results.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/step_executor.hpp"

namespace heaplab::rw::detail {

/// Milliseconds between two events recorded around whatever ran between start() and stop().
class EventTimer {
 public:
  EventTimer() {
    HEAPLAB_CUDA_TRY(cudaEventCreate(&start_));
    HEAPLAB_CUDA_TRY(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    (void)cudaEventDestroy(start_);
    (void)cudaEventDestroy(stop_);
  }
  EventTimer(EventTimer const&)            = delete;
  EventTimer& operator=(EventTimer const&) = delete;
  void start() { HEAPLAB_CUDA_TRY(cudaEventRecord(start_)); }
  /// Records the stop event, waits for it and returns the elapsed milliseconds.
  float stop() {
    HEAPLAB_CUDA_TRY(cudaEventRecord(stop_));
    HEAPLAB_CUDA_TRY(cudaEventSynchronize(stop_));
    float ms = 0;
    HEAPLAB_CUDA_TRY(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{};
  cudaEvent_t stop_{};
};

template <class Source>
__global__ void getpage_wave_kernel(Source source,
                                    std::uint32_t const* pages,
                                    std::uint32_t n,
                                    std::uint64_t seed,
                                    std::uint32_t* first,
                                    std::uint32_t* steps) {
  std::uint64_t const i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  auto const thread        = static_cast<std::uint32_t>(i);
  std::uint32_t const want = pages[thread];
  GetPageResult r;
  if (want != 0) {  // an inactive thread does not call GETPAGE (divergence within the warp)
    PageRng rng = thread_rng(seed, thread);
    r           = source(rng, want);
  }
  first[thread] = r.page;
  steps[thread] = r.steps;
}

/// One allocation wave of `source`: returns every thread's first page and step count; *kernel_ms
/// receives the kernel's time alone (the copies are outside the timed region).
template <class Source>
AllocResult run_getpage_wave(Source const& source,
                             std::vector<std::uint32_t> const& pages,
                             std::uint32_t block_threads,
                             std::uint64_t seed,
                             float* kernel_ms) {
  auto const n = static_cast<std::uint32_t>(pages.size());
  AllocResult result;
  *kernel_ms = 0;
  if (n == 0) return result;
  cudart::device_buffer<std::uint32_t> want(n, "wave pages"), first(n, "wave first pages"),
      steps(n, "wave step counts");
  cudart::copy_to_device_async(want.data(), pages.data(), n, nullptr);
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  EventTimer timer;
  timer.start();
  getpage_wave_kernel<<<static_cast<unsigned>(cudart::ceil_div(n, block_threads)), block_threads>>>(
      source, want.data(), n, seed, first.data(), steps.data());
  HEAPLAB_CHECK_LAUNCH();
  *kernel_ms   = timer.stop();
  result.first = cudart::to_host(first.data(), n);
  result.steps = cudart::to_host(steps.data(), n);
  return result;
}

/// One free wave: first[] and count[] uploaded, then launch(first, count, n) with the kernel
/// alone timed (the copies are outside the timed region). Returns its milliseconds, 0 for an
/// empty wave (nothing launched).
template <class Launch>
float run_free_wave(FreePageWave const& wave, Launch const& launch) {
  auto const n = static_cast<std::uint32_t>(wave.first.size());
  if (n == 0) return 0;
  cudart::device_buffer<std::uint32_t> first(n, "free wave first"), count(n, "free wave count");
  cudart::copy_to_device_async(first.data(), wave.first.data(), n, nullptr);
  cudart::copy_to_device_async(count.data(), wave.count.data(), n, nullptr);
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  EventTimer timer;
  timer.start();
  launch(first.data(), count.data(), n);
  return timer.stop();
}

}  // namespace heaplab::rw::detail
