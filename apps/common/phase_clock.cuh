// Per-phase times of an app's iteration without a synchronize per phase (docs/apps.md "Timing"):
// events recorded on the app's stream between its phases, read once when the iteration ends.
// A synchronize per phase would add the host's launch latency to every phase and favour the
// variant with fewer kernels; here the host enqueues a whole iteration ahead of the GPU, as an
// app that does not time itself would. nvcc only.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "heaplab/cuda/error.hpp"

namespace heaplab::apps {

class PhaseClock {
 public:
  /// A clock for iterations of at most `max_phases` phases on `stream`.
  PhaseClock(cudaStream_t stream, int max_phases) : stream_(stream), events_(max_phases + 1) {
    for (auto& e : events_) HEAPLAB_CUDA_TRY(cudaEventCreate(&e));
  }
  PhaseClock(PhaseClock const&)            = delete;
  PhaseClock& operator=(PhaseClock const&) = delete;
  ~PhaseClock() {
    for (auto e : events_)
      if (e != nullptr) (void)cudaEventDestroy(e);
  }

  /// Starts an iteration (records the first event).
  void start() {
    marks_ = 0;
    mark();
  }
  /// Ends the current phase (records an event after it).
  void mark() {
    HEAPLAB_CUDA_TRY(cudaEventRecord(events_.at(marks_), stream_));
    ++marks_;
  }
  /// Waits for the last event; the milliseconds of each phase since start(), in order.
  std::vector<float> phases_ms() {
    std::vector<float> ms;
    if (marks_ < 2) return ms;
    HEAPLAB_CUDA_TRY(cudaEventSynchronize(events_[marks_ - 1]));
    for (int i = 1; i < marks_; ++i) {
      float t = 0;
      HEAPLAB_CUDA_TRY(cudaEventElapsedTime(&t, events_[i - 1], events_[i]));
      ms.push_back(t);
    }
    return ms;
  }

 private:
  cudaStream_t stream_;
  std::vector<cudaEvent_t> events_;
  int marks_ = 0;
};

}  // namespace heaplab::apps
