// HEAPLAB_DEBUG_EXPECTS(cond, "message"): a precondition check compiled in the debug preset
// only (HEAPLAB_DEBUG_CHECKS), for host+device code of soa and compact (field access, kernels).
//
//   HEAPLAB_DEBUG_CHECKS set:  HEAPLAB_EXPECTS (core/expects.hpp): device code prints
//                              "heaplab: precondition failed: message (expected cond at
//                              file:line)" and traps (the launch then fails with an error the
//                              host reports); host code throws core::precondition_error.
//   otherwise:                 nothing; cond is not evaluated.
//
// Macros only: no CUDA runtime call and no CUDA header, so headers that plain C++ builds use as
// well (soa/field.hpp) may include it.
#pragma once

#include "heaplab/core/expects.hpp"

#if defined(HEAPLAB_DEBUG_CHECKS)
#define HEAPLAB_DEBUG_EXPECTS(cond, message) HEAPLAB_EXPECTS(cond, message)
#else
#define HEAPLAB_DEBUG_EXPECTS(cond, message) \
  do {                                       \
  } while (0)
#endif
