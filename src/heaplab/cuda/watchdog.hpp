// Watchdog: wait for GPU work with a wall-clock budget instead of blocking forever
// (docs/workflow.md "Hangs"). Host only.
//
//   heaplab::cudart::Watchdog dog;                       // budget: HEAPLAB_WATCHDOG_MS or 5 s
//   launch_step_kernels<<<grid, block, 0, stream>>>(...);
//   WaitResult const r = dog.wait(stream, "alloc wave step 12");
//   if (r.timed_out()) return hang(describe_hang("alloc wave step 12", dog.budget()));
//
// wait() records an event on the stream and polls cudaEventQuery (detail/budget_wait.hpp). It
// never throws through kernels and never synchronizes: on time-out it returns
// WaitStatus::timed_out and the kernel keeps running. A running kernel cannot be cancelled, and
// the CUDA context stays busy with it, so a caller that saw a hang must not launch more work:
// it reports the hang (the runners turn it into a FailureKind::hang failure), saves what it
// needs (heaplab stress writes the failure file and prints it), and ends the process with
// std::_Exit (heaplab stress: exit status 3). std::_Exit skips static destructors, which would
// otherwise call into the CUDA runtime and block on the stuck context; the driver reclaims the
// context when the process is gone.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <string>

#include "heaplab/cuda/detail/budget_wait.hpp"

namespace heaplab::cudart {

class Watchdog {
 public:
  explicit Watchdog(std::chrono::milliseconds budget = default_watchdog_budget())
      : budget_(budget) {}

  [[nodiscard]] std::chrono::milliseconds budget() const { return budget_; }

  /// Waits until `event` has completed (cudaEventQuery == cudaSuccess).
  [[nodiscard]] WaitResult wait(cudaEvent_t event) const {
    return wait_with_budget(
        [event]() -> PollResult {
          cudaError_t const s = cudaEventQuery(event);
          if (s == cudaSuccess) return {PollState::done, {}};
          if (s == cudaErrorNotReady) return {PollState::pending, {}};
          (void)cudaGetLastError();
          return {
              PollState::error,
              std::string("cudaEventQuery: ") + cudaGetErrorName(s) + ": " + cudaGetErrorString(s)};
        },
        budget_);
  }

  /// Waits until everything launched on `stream` so far has completed. The event it records is
  /// destroyed when the wait completes or fails; on time-out it is left alive (destroying it is
  /// harmless, but nothing may touch the stuck stream any more).
  [[nodiscard]] WaitResult wait(cudaStream_t stream) const {
    cudaEvent_t event = nullptr;
    cudaError_t s     = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    if (s == cudaSuccess) s = cudaEventRecord(event, stream);
    if (s != cudaSuccess) {
      (void)cudaGetLastError();
      if (event) cudaEventDestroy(event);
      return {WaitStatus::error,
              0,
              std::string("watchdog event: ") + cudaGetErrorName(s) + ": " + cudaGetErrorString(s)};
    }
    WaitResult const r = wait(event);
    if (!r.timed_out()) cudaEventDestroy(event);
    return r;
  }

 private:
  std::chrono::milliseconds budget_;
};

}  // namespace heaplab::cudart
