// What every app of `heaplab_apps` does without a usable CUDA device: throws NoDevice (from
// require_device), and main.cpp prints "heaplab_apps: SKIPPED: <reason>" and exits
// kNoDeviceExit, which the planted-bug tests report as SKIPPED.
#pragma once

#include <stdexcept>

namespace heaplab::apps {

inline constexpr int kNoDeviceExit = 77;

struct NoDevice : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace heaplab::apps
