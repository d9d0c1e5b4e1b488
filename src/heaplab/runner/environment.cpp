// environment.hpp. The HEAPLAB_* build facts come from src/heaplab/runner/CMakeLists.txt and
// build_info.inc (cmake/BuildInfo.cmake).
#include "heaplab/runner/environment.hpp"

#include "heaplab/core/mutants.hpp"

#include "build_info.inc"

#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
#include <cuda_runtime_api.h>

#include "heaplab/cuda/device_info.hpp"
#endif

namespace heaplab::runner {

std::string git_commit() {
  std::string commit = HEAPLAB_GIT_DESCRIBE;
  if (commit.empty()) commit = "unknown";
  std::string const tree = HEAPLAB_TREE_HASH;
  if (!tree.empty()) commit += " tree " + tree;
  return commit;
}

std::string version() { return HEAPLAB_VERSION; }

std::string build_description() {
  std::string out = std::string("build: ") + HEAPLAB_BUILD_TYPE + ", " + HEAPLAB_CXX_COMPILER +
                    ", C++17\n" + "cuda: " + HEAPLAB_CUDA_BUILD + "\n";
  std::string const planted = core::mutant::kPlanted;
#if defined(HEAPLAB_MUTANT_RUNTIME)
  out += "PLANTING BUILD: " +
         (planted.empty() ? std::string("no bug planted (HEAPLAB_PLANT is unset)")
                          : "planted bug '" + planted + "' (HEAPLAB_PLANT)") +
         " (docs/mutants.md)\n";
#else
  if (!planted.empty()) out += "MUTANT BUILD: planted bug '" + planted + "' (docs/mutants.md)\n";
#endif
  return out;
}

int visible_gpu_count() {
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

std::string gpu_name(int device) {
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
  auto const info = cudart::probe_device(device);
  return info.available ? info.name : std::string("none");
#else
  (void)device;
  return "none";
#endif
}

std::string gpu_unavailable_reason() {
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
  auto const info = cudart::probe_device();
  return info.available ? std::string() : info.reason;
#else
  return "no CUDA device (this build has no CUDA runtime: nvcc was absent at configure time)";
#endif
}

std::string gpu_description() {
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
  auto const info = cudart::probe_device();
  if (!info.available) return {};
  return info.name + " (sm_" + std::to_string(info.cc_major) + std::to_string(info.cc_minor) +
         ", " + std::to_string(info.multiprocessors) + " SMs)";
#else
  return {};
#endif
}

}  // namespace heaplab::runner
