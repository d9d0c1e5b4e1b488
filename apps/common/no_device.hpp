// What every app of `heaplab_apps` does without a usable CUDA device: throws NoDevice (from
// require_device), and main.cpp prints "heaplab_apps: SKIPPED: <reason>" and exits
// kNoDeviceExit: "not checked" (4), the status of every heaplab program that ran nothing
// (tools/program/program.hpp), which the planted-bug tests report as SKIPPED.
#pragma once

#include <stdexcept>

namespace heaplab::apps {

inline constexpr int kNoDeviceExit = 4;

struct NoDevice : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace heaplab::apps
