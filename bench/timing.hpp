// Timing for GPU benchmarks (docs/results.md conventions): CUDA events around the region, warm-up
// runs outside the numbers, the median of repeated runs, and side-by-side baselines measured in
// the same process so that reported ratios compare like with like.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "heaplab/cuda/error.hpp"

namespace heaplab::bench {

/// Milliseconds between two events recorded around `region` on the default stream.
inline float time_once_ms(std::function<void()> const& region) {
  cudaEvent_t start{};
  cudaEvent_t stop{};
  HEAPLAB_CUDA_TRY(cudaEventCreate(&start));
  HEAPLAB_CUDA_TRY(cudaEventCreate(&stop));
  HEAPLAB_CUDA_TRY(cudaEventRecord(start));
  region();
  HEAPLAB_CUDA_TRY(cudaEventRecord(stop));
  HEAPLAB_CUDA_TRY(cudaEventSynchronize(stop));
  float ms = 0;
  HEAPLAB_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
  HEAPLAB_CUDA_TRY(cudaEventDestroy(start));
  HEAPLAB_CUDA_TRY(cudaEventDestroy(stop));
  return ms;
}

struct Sample {
  float median_ms = 0;
  float min_ms    = 0;
  float max_ms    = 0;
  int repeats     = 0;
};

/// Runs `setup` (untimed) then `region` (timed) `warmup + repeats` times; reports the median,
/// min and max of the timed repeats.
inline Sample time_repeated(int warmup,
                            int repeats,
                            std::function<void()> const& setup,
                            std::function<void()> const& region) {
  std::vector<float> t;
  for (int i = 0; i < warmup + repeats; ++i) {
    if (setup) setup();
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
    float const ms = time_once_ms(region);
    if (i >= warmup) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  Sample s;
  s.repeats   = repeats;
  s.median_ms = t[t.size() / 2];
  s.min_ms    = t.front();
  s.max_ms    = t.back();
  return s;
}

}  // namespace heaplab::bench
