// Shared helper for GPU tests: they report SKIPPED with the reason where no GPU is present and
// never pass silently. On a GPU box, tools/gpu-tier sets HEAPLAB_REQUIRE_GPU=1, which turns a
// missing GPU into a failure instead of a skip.
//
//   TEST(BitopsGpu, MatchesHost) {
//     HEAPLAB_REQUIRE_GPU();
//     ...
//   }
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "heaplab/cuda/detail/budget_wait.hpp"

namespace heaplab::testing {

struct GpuInfo {
  bool available = false;
  std::string reason;  // why not available ("no CUDA device: ..."), empty when available
  std::string name;    // e.g. "NVIDIA H100 80GB HBM3"
  int cc_major        = 0;
  int cc_minor        = 0;
  int multiprocessors = 0;
};

/// Probes the CUDA runtime once (device 0) and prints one line naming the GPU or the reason.
GpuInfo const& gpu_info();

/// True when HEAPLAB_REQUIRE_GPU=1 is set in the environment.
bool gpu_required();

/// True when a CUDA tool (compute-sanitizer, a profiler) is injected: kernels run 10-100x slower.
inline bool under_cuda_tool() { return cudart::under_cuda_tool(); }

}  // namespace heaplab::testing

#define HEAPLAB_REQUIRE_GPU()                                          \
  do {                                                                 \
    auto const& heaplab_gpu_ = ::heaplab::testing::gpu_info();         \
    if (!heaplab_gpu_.available) {                                     \
      if (::heaplab::testing::gpu_required()) {                        \
        FAIL() << "HEAPLAB_REQUIRE_GPU=1 but " << heaplab_gpu_.reason; \
      }                                                                \
      GTEST_SKIP() << heaplab_gpu_.reason;                             \
    }                                                                  \
  } while (0)
