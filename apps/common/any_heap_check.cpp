#include "common/any_heap_check.hpp"

#include <algorithm>
#include <cstdio>

#include "heaplab/core/object_pointer.hpp"

namespace heaplab::apps {

namespace {

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::optional<std::string> check_any_type(AnyTypeState const& s) {
  std::string const where = "any-heap type " + s.type_name + ": ";
  if (s.overflow)
    return where + "any-no-overflow: more than " + std::to_string(s.capacity) +
           " objects were created between two compactions";
  std::size_t const n = std::min(s.count, s.capacity);
  if (s.entries.size() != n || s.record_index.size() != n)
    return where + "any-entries-counted: " + std::to_string(s.entries.size()) + " entries and " +
           std::to_string(s.record_index.size()) + " record indices for a count of " +
           std::to_string(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t const p = s.entries[i];
    if (p == 0) continue;
    if (core::pointer_type(p) != s.type_id || core::pointer_capacity(p) != 1 ||
        core::pointer_slot(p) != 0 || core::pointer_block_address(p) == 0)
      return where + "any-pointer-encoded: entry " + std::to_string(i) + " holds " + hex(p) +
             ", not an object pointer of type " + std::to_string(s.type_id) +
             " with capacity 1 and slot 0";
    if (s.record_index[i] != i)
      return where + "any-record-index: the object at entry " + std::to_string(i) + " (" + hex(p) +
             ") has record index " + std::to_string(s.record_index[i]);
  }
  return std::nullopt;
}

}  // namespace heaplab::apps
