// The invariants of AnyHeap's per-type arrays (any_heap.cuh; docs/apps.md "Other allocators"),
// checked on the host from what AnyHeap::verify() downloads. Plain C++17 (CPU-tested in
// common_test.cpp with broken states).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heaplab::apps {

/// One concrete type's arrays as the device holds them.
struct AnyTypeState {
  std::string type_name;
  std::uint32_t type_id  = 0;
  std::uint32_t capacity = 0;
  std::uint32_t count    = 0;      // the control word: entries appended since the last compaction
  bool overflow          = false;  // a make found the array full
  std::vector<std::uint64_t> entries;       // objects[0 .. min(count, capacity))
  std::vector<std::uint32_t> record_index;  // per entry: its object's record index (0 for 0)
};

/// The first violated invariant, or nullopt:
///   any-no-overflow      no make found the array full;
///   any-entries-counted  entries.size() == record_index.size() == min(count, capacity);
///   any-pointer-encoded  every nonzero entry is an encoded object pointer of this type with
///                        capacity 1 and slot 0 (core/object_pointer.hpp);
///   any-record-index     the record of the object at entry i names i (destroy clears entry i;
///                        an object at two entries fails it too: its one record names one).
std::optional<std::string> check_any_type(AnyTypeState const& s);

}  // namespace heaplab::apps
