// The small block of device-side counters and flags every GPU heap owns (inside its metadata
// region, storage_plan.hpp): the out-of-memory counter, the types frozen by a kept enumeration
// (Heap::Enumeration) with the first change of one, and the debug-check error reports.
// Plain C++ (the layout is shared with host code that copies it back). Not public API: the host
// reads it through Heap::oom_count() and Heap::check_device_errors().
#pragma once

#include <cstdint>

namespace heaplab::soa::detail {

/// What a debug check (HEAPLAB_DEBUG_CHECKS) found. Bit i of DeviceControl::error_kinds is set
/// when an error of kind i was reported.
enum class HeapErrorKind : std::uint32_t {
  none            = 0,
  double_free     = 1,  // the slot is not allocated (or its block is free / of another type)
  foreign_pointer = 2,  // not an object pointer of this heap (address, type id, capacity, slot)
};

/// One report: the kind, the reporting thread and the pointer.
struct ErrorReport {
  std::uint32_t kind          = 0;
  std::uint32_t block_idx[3]  = {0, 0, 0};  // blockIdx of the reporting thread
  std::uint32_t thread_idx[3] = {0, 0, 0};  // threadIdx of the reporting thread
  std::uint32_t heap_block    = 0;          // decoded block index (meaningful for double_free)
  std::uint64_t pointer       = 0;          // the encoded object pointer passed in
};

struct DeviceControl {
  /// Allocation requests answered with nullptr (atomicAdd by the coalescing leader).
  unsigned long long oom_count = 0;
  /// frozen_types[t] != 0 while type t has a live Heap::Enumeration. Written only by the host's
  /// stream-ordered memsets between kernels, so kernels read it with plain loads.
  unsigned char frozen_types[256] = {};
  /// Reports made; error_kinds ORs 1 << kind.
  unsigned int error_count = 0;
  unsigned int error_kinds = 0;
  /// The report of the thread that raised error_count from 0; valid once first_ready == 1.
  ErrorReport first{};
  unsigned int first_ready = 0;
  /// The first creation or destruction of an object whose type was frozen (always checked, not
  /// only in the debug preset): 0 = none, else frozen_change_code(type, created). Set once by a
  /// compare-and-swap from 0: one atomic on a cold branch, so the allocation and free paths keep
  /// their registers (a printf there raised wa-tor's move kernel from 70 to 122 registers).
  unsigned int frozen_change = 0;
};

/// DeviceControl::frozen_change's encoding: type + 1 in the low 16 bits, bit 16 set for a
/// creation (clear: a destruction).
constexpr unsigned frozen_change_code(std::uint32_t type, bool created) {
  return (type + 1u) | (created ? 0x10000u : 0u);
}
/// The type and the kind of a nonzero frozen_change_code.
constexpr std::uint32_t frozen_change_type(unsigned code) { return (code & 0xffffu) - 1u; }
constexpr bool frozen_change_created(unsigned code) { return (code & 0x10000u) != 0; }

}  // namespace heaplab::soa::detail
