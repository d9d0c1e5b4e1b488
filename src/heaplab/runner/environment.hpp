// What a failure file records about where it was made: the build's git commit and the GPU.
#pragma once

#include <string>

namespace heaplab::runner {

/// `git describe --always --dirty` of the source tree when CMake configured this build
/// (HEAPLAB_GIT_COMMIT), or "unknown" (no git, not a checkout). Reconfigure to refresh it.
std::string git_commit();

/// Number of CUDA devices visible to this process (CUDA_VISIBLE_DEVICES applies); 0 when the
/// build has no CUDA runtime or no device is usable.
int visible_gpu_count();

/// Name of device `device` ("NVIDIA H100 80GB HBM3"), or "none" when there is none.
std::string gpu_name(int device = 0);

/// Why no GPU can be used ("no CUDA device (...)", "this build has no CUDA runtime (...)"), or
/// "" when device 0 is usable.
std::string gpu_unavailable_reason();

}  // namespace heaplab::runner
