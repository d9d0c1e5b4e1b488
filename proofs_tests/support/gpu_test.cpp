#include "gpu_test.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
#include "heaplab/cuda/device_info.hpp"
#endif

namespace heaplab::testing {

namespace {
GpuInfo probe() {
  GpuInfo info;
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
  auto const d         = heaplab::cudart::probe_device();
  info.available       = d.available;
  info.reason          = d.reason;
  info.name            = d.name;
  info.cc_major        = d.cc_major;
  info.cc_minor        = d.cc_minor;
  info.multiprocessors = d.multiprocessors;
#else
  info.reason =
      "no CUDA device (this build has no CUDA runtime: nvcc was absent at configure time)";
#endif
  return info;
}
}  // namespace

GpuInfo const& gpu_info() {
  static GpuInfo const info = [] {
    GpuInfo i = probe();
    if (i.available) {
      std::printf("[heaplab] GPU: %s (sm_%d%d, %d SMs)\n",
                  i.name.c_str(),
                  i.cc_major,
                  i.cc_minor,
                  i.multiprocessors);
    } else {
      std::printf("[heaplab] GPU tests skipped: %s\n", i.reason.c_str());
    }
    std::fflush(stdout);
    return i;
  }();
  return info;
}

bool gpu_required() {
  char const* v = std::getenv("HEAPLAB_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace heaplab::testing
