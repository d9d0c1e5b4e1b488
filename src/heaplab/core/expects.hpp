// Precondition checks with a clear message (RMM's RMM_EXPECTS, cuco's CUCO_EXPECTS).
//
//   HEAPLAB_EXPECTS(cond, "message")   host: throws heaplab::core::precondition_error naming the
//                                      condition, the message and file:line.
//                                      device: prints the same and traps (the launch then fails
//                                      with an error the host reports instead of corrupting state).
#pragma once

#include "heaplab/core/host_device.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace heaplab::core {

// Declared in every compilation pass (nvcc's device pass too): host-only code such as
// HeapConfig::validate uses them from headers that .cu files include.

/// A violated precondition: bad input from a caller, never an internal inconsistency.
class precondition_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

[[noreturn]] inline void throw_precondition(char const* cond,
                                            std::string const& message,
                                            char const* file,
                                            int line) {
  throw precondition_error(message + " (expected " + cond + " at " + file + ":" +
                           std::to_string(line) + ")");
}

}  // namespace heaplab::core

#if HEAPLAB_DEVICE_CODE
#define HEAPLAB_EXPECTS(cond, message)                                    \
  do {                                                                    \
    if (!(cond)) {                                                        \
      printf("heaplab: precondition failed: %s (expected %s at %s:%d)\n", \
             message,                                                     \
             #cond,                                                       \
             __FILE__,                                                    \
             __LINE__);                                                   \
      __trap();                                                           \
    }                                                                     \
  } while (0)
#else
#define HEAPLAB_EXPECTS(cond, message)                                                      \
  do {                                                                                      \
    if (!(cond)) ::heaplab::core::throw_precondition(#cond, (message), __FILE__, __LINE__); \
  } while (0)
#endif
