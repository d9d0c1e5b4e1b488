// Writing and checking compact_test::pattern_byte in every plain field of an object (all fields
// but id_, cookie_ and heap pointers), through the heap ref's field addresses: host and device.
// A moved object must arrive with every byte of every field.
#pragma once

#include <cstdint>

#include "compact_test_types.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/object_pointer.hpp"

namespace compact_test {

inline constexpr std::uint32_t kFirstPlainField = 2;  // after Tracked's id_ and cookie_

template <class Ref>
HEAPLAB_HD void write_pattern(Ref const& ref, std::uint64_t p, std::uint64_t id) {
  auto const& table     = Ref::layout();
  std::uint32_t const t = heaplab::core::pointer_type(p);
  for (std::uint32_t j = kFirstPlainField; j < table.types[t].num_fields; ++j) {
    auto const& f = table.field(t, j);
    if (f.is_heap_pointer()) continue;
    for (std::uint32_t e = 0; e < f.elements; ++e) {
      auto* const at = static_cast<unsigned char*>(ref.field_address(p, j, e));
      for (std::uint32_t k = 0; k < f.element_bytes; ++k) at[k] = pattern_byte(id, j, e, k);
    }
  }
}

template <class Ref>
HEAPLAB_HD bool pattern_intact(Ref const& ref, std::uint64_t p) {
  auto const& table      = Ref::layout();
  std::uint32_t const t  = heaplab::core::pointer_type(p);
  std::uint64_t const id = ref.tracked_id(p);
  for (std::uint32_t j = kFirstPlainField; j < table.types[t].num_fields; ++j) {
    auto const& f = table.field(t, j);
    if (f.is_heap_pointer()) continue;
    for (std::uint32_t e = 0; e < f.elements; ++e) {
      auto const* const at = static_cast<unsigned char const*>(ref.field_address(p, j, e));
      for (std::uint32_t k = 0; k < f.element_bytes; ++k)
        if (at[k] != pattern_byte(id, j, e, k)) return false;
    }
  }
  return true;
}

}  // namespace compact_test
