// environment.hpp. HEAPLAB_GIT_COMMIT comes from src/heaplab/runner/CMakeLists.txt.
#include "heaplab/runner/environment.hpp"

#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
#include <cuda_runtime_api.h>

#include "heaplab/cuda/device_info.hpp"
#endif

namespace heaplab::runner {

std::string git_commit() {
#if defined(HEAPLAB_GIT_COMMIT)
  std::string const commit = HEAPLAB_GIT_COMMIT;
  return commit.empty() ? "unknown" : commit;
#else
  return "unknown";
#endif
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
  if (device < 0 || device >= visible_gpu_count()) return "none";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "none";
  }
  return prop.name;
#else
  (void)device;
  return "none";
#endif
}

std::string gpu_unavailable_reason() {
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
  auto const info = cuda::probe_device();
  return info.available ? std::string() : info.reason;
#else
  return "this build has no CUDA runtime (nvcc was absent at configure time)";
#endif
}

}  // namespace heaplab::runner
