// The object check of `heaplab_bench alloc` (docs/allocator.md "Benchmark"): after the timed
// allocation runs of an allocator, untimed, every object of the last run gets a pattern written
// into its first and last 8-byte word (4-byte word for an object of 4 bytes), the pattern is read
// back, and the pointers are sorted to find duplicates and overlaps. The same check, with the same
// kernels, for heaplab and for Gallatin; only how an object's words are reached differs
// (object_check.cuh's Access).
#pragma once

#include <cstdint>
#include <string>

namespace heaplab::bench {

/// What the check found among the `objects` pointer slots of one allocation run.
struct ObjectCheck {
  std::uint64_t objects    = 0;  // pointer slots checked (threads x per thread)
  std::uint64_t nulls      = 0;  // nullptr answers
  std::uint64_t foreign    = 0;  // non-null pointers the allocator does not own (never written)
  std::uint64_t mismatches = 0;  // objects whose first or last word did not read back
  std::uint64_t overlaps   = 0;  // sorted neighbours closer than the object size (duplicates too)

  [[nodiscard]] std::uint64_t violations() const { return nulls + foreign + mismatches + overlaps; }
};

/// Device bytes the check of n pointer slots needs besides the slots themselves: the keys, their
/// sorted copy and CUB's temporary storage (generous: 16 bytes per slot for CUB, plus 1 MiB).
constexpr std::uint64_t object_check_bytes(std::uint64_t n) { return 32 * n + (1ull << 20); }

/// "verified N objects", or "N violations in M objects (nulls a, foreign b, mismatches c,
/// overlaps d)".
std::string describe(ObjectCheck const& c);

}  // namespace heaplab::bench
