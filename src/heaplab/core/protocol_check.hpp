// Internal-consistency checks of the allocator protocol.
//
//   HEAPLAB_PROTOCOL_CHECK(cond, "message")
//
// A failed check means the protocol itself is broken (a planted mutant, a bug), never bad caller
// input (that is HEAPLAB_EXPECTS): e.g. a block whose header type is not a known type right after
// a reservation in it succeeded. The checks guard state-bitmap indexing, so they are always on:
// on the host they throw core::protocol_error (the controlled scheduler reports it with the trace
// that led there); on the device they print and trap.
#pragma once

#include "heaplab/core/host_device.hpp"

#if !HEAPLAB_DEVICE_CODE
#include <stdexcept>
#include <string>
#endif
#include <cstdio>

namespace heaplab::core {

#if !HEAPLAB_DEVICE_CODE
/// The allocator protocol reached a state its correctness argument excludes.
class protocol_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] inline void throw_protocol_error(char const* cond,
                                              char const* message,
                                              char const* file,
                                              int line) {
  // The path from "heaplab/" on: the same text wherever the tree is checked out, so that a
  // replayed failure prints identically on every machine.
  std::string where(file);
  std::size_t at = where.rfind("heaplab/core/");
  if (at == std::string::npos) at = where.rfind("heaplab/rw/");  // the page pool's checks
  if (at != std::string::npos) where.erase(0, at);
  throw protocol_error(std::string("protocol violation: ") + message + " (" + cond + " at " +
                       where + ":" + std::to_string(line) + ")");
}
#endif

}  // namespace heaplab::core

#if HEAPLAB_DEVICE_CODE
#define HEAPLAB_PROTOCOL_CHECK(cond, message)                                                     \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      printf(                                                                                     \
          "heaplab: protocol violation: %s (%s at %s:%d)\n", message, #cond, __FILE__, __LINE__); \
      __trap();                                                                                   \
    }                                                                                             \
  } while (0)
#else
#define HEAPLAB_PROTOCOL_CHECK(cond, message)                                                 \
  do {                                                                                        \
    if (!(cond)) ::heaplab::core::throw_protocol_error(#cond, (message), __FILE__, __LINE__); \
  } while (0)
#endif
