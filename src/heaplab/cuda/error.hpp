// CUDA runtime error handling (RMM/cuco style).
//
//   HEAPLAB_CUDA_TRY(call)      on failure clears the runtime's last (non-sticky) error and throws
//                               heaplab::cudart::out_of_memory for cudaErrorMemoryAllocation, else
//                               heaplab::cudart::cuda_error ("file:line: call failed: name: text").
//   HEAPLAB_CHECK_LAUNCH()      checks cudaGetLastError after a launch; in the debug preset
//                               (HEAPLAB_DEBUG_CHECKS) it also synchronizes, so that a kernel's
//                               fault is reported at the launch that caused it.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace heaplab::cudart {

/// A CUDA runtime call failed; code() is its status.
class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t code, std::string const& what) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

/// A device allocation failed (cudaErrorMemoryAllocation). A cuda_error, so callers that catch
/// cuda_error (or std::exception) see it as before.
class out_of_memory : public cuda_error {
 public:
  using cuda_error::cuda_error;
};

/// Throws out_of_memory for cudaErrorMemoryAllocation, else cuda_error, with message `what`.
/// First clears the runtime's last error (cudaGetLastError), as RMM does: a non-sticky error
/// (e.g. a failed allocation) must not be reported again by the next HEAPLAB_CHECK_LAUNCH.
[[noreturn]] inline void throw_cuda_error(cudaError_t code, std::string const& what) {
  (void)cudaGetLastError();
  if (code == cudaErrorMemoryAllocation) throw out_of_memory(code, what);
  throw cuda_error(code, what);
}

/// throw_cuda_error with the message of HEAPLAB_CUDA_TRY: "file:line: call failed: name: text".
[[noreturn]] inline void throw_cuda_error(cudaError_t code,
                                          char const* call,
                                          char const* file,
                                          int line) {
  throw_cuda_error(code,
                   std::string(file) + ":" + std::to_string(line) + ": " + call +
                       " failed: " + cudaGetErrorName(code) + ": " + cudaGetErrorString(code));
}

}  // namespace heaplab::cudart

#define HEAPLAB_CUDA_TRY(call)                                                         \
  do {                                                                                 \
    cudaError_t const heaplab_status_ = (call);                                        \
    if (heaplab_status_ != cudaSuccess) {                                              \
      ::heaplab::cudart::throw_cuda_error(heaplab_status_, #call, __FILE__, __LINE__); \
    }                                                                                  \
  } while (0)

#if defined(HEAPLAB_DEBUG_CHECKS)
#define HEAPLAB_CHECK_LAUNCH()                 \
  do {                                         \
    HEAPLAB_CUDA_TRY(cudaGetLastError());      \
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize()); \
  } while (0)
#else
#define HEAPLAB_CHECK_LAUNCH() HEAPLAB_CUDA_TRY(cudaGetLastError())
#endif
