// What a failure file records about where it was made: the build's git commit and the GPU.
#pragma once

#include <string>

namespace heaplab::runner {

/// The commit of the source tree this binary was built from: `git describe --always --dirty`
/// at build time, followed by " tree <12 hex digits>" when the checkout differed from its commit
/// (dirty, or a copy with stale git metadata): the git tree hash of the files as built
/// (cmake/BuildInfo.cmake). "unknown" outside a git checkout.
std::string git_commit();

/// heaplab's version (the CMake project version).
std::string version();

/// What this binary is: build type, C++ compiler, CUDA build (nvcc version and architectures, or
/// "GPU targets off"), and the planted bug when it is a mutant build; one "name: value" per line.
std::string build_description();

/// Number of CUDA devices visible to this process (CUDA_VISIBLE_DEVICES applies); 0 when the
/// build has no CUDA runtime or no device is usable.
int visible_gpu_count();

/// Name of device `device` ("NVIDIA H100 80GB HBM3"), or "none" when there is none.
std::string gpu_name(int device = 0);

/// Why no GPU can be used, starting with "no CUDA device" (no device, or "this build has no CUDA
/// runtime"), or "" when device 0 is usable.
std::string gpu_unavailable_reason();

/// Device 0 in one line, "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)", or "" when it is not usable.
/// The one GPU probe of the tools: `heaplab run` says by it whether the GPU tier runs.
std::string gpu_description();

}  // namespace heaplab::runner
