// HeapConfig: the runtime description of a heap that every layer shares (model, snapshot,
// invariant catalog, schedules, the portable core and the GPU allocator).
//
// It holds the type list (DynaSOAr sec. 2.1: types are known up front; sec. 3.2 block capacity;
// single inheritance, abstract types), the number of blocks M (sec. 3), and CompactGpu's
// defragmentation factor n and stop threshold k1 (CompactGpu sec. 3, 3.6).
//
// Host-only (std::vector/std::string). Device code receives the derived numbers it needs
// (capacities, type ids) through the allocator's trivially copyable refs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "heaplab/core/defrag_fill.hpp"
#include "heaplab/core/expects.hpp"

namespace heaplab::core {

/// Type ids are 8 bits in object pointers (DynaSOAr sec. 3.3); 0xFF means "no type".
inline constexpr std::uint32_t kMaxTypes = 255;
inline constexpr std::uint32_t kNoType   = 0xFF;
/// Object slots per block container (DynaSOAr: a block holds at most 64 objects).
inline constexpr std::uint32_t kMaxCapacity = 64;

/// A field of type "pointer to `pointee`" (or a fixed-size array of `count` such pointers).
struct PointerFieldSpec {
  std::string name;
  std::uint32_t pointee = 0;  // type index; may be an abstract type
  std::uint32_t count   = 1;  // > 1: a fixed-size array T*[count]
};

struct TypeSpec {
  std::string name;
  /// Bytes of one object: all fields, inherited ones included. Determines the capacity.
  std::uint32_t size_bytes = 0;
  /// Single inheritance: index of the base type, which must be declared earlier in the list.
  std::optional<std::uint32_t> base;
  /// Abstract types have no blocks and no state bitmaps (CompactGpu Fig. 2).
  bool is_abstract = false;
  /// Pointer fields declared by this type itself; inherited ones come from the base chain.
  std::vector<PointerFieldSpec> pointer_fields;
};

/// One pointer-sized slot of an object: element `element` of field `field` declared by
/// `declaring_type`. pointer_slots(T) lists inherited slots first, as the SOA layout does.
struct PointerSlot {
  std::uint32_t declaring_type = 0;
  std::uint32_t field          = 0;
  std::uint32_t element        = 0;
  std::uint32_t pointee        = 0;
};

class HeapConfig {
 public:
  std::vector<TypeSpec> types;
  std::uint32_t num_blocks    = 0;  // M
  std::uint32_t defrag_factor = 1;  // n: a source block merges into n targets
  std::uint32_t k1            = 0;  // defragmentation stops once at most k1 candidates remain

  [[nodiscard]] std::uint32_t num_types() const { return static_cast<std::uint32_t>(types.size()); }

  /// Throws core::precondition_error naming the first problem found.
  void validate() const {
    auto fail = [](std::string const& what) { throw precondition_error("HeapConfig: " + what); };
    if (types.empty()) fail("the type list is empty");
    if (types.size() > kMaxTypes)
      fail("at most " + std::to_string(kMaxTypes) + " types, got " + std::to_string(types.size()));
    std::set<std::string> names;
    bool any_concrete = false;
    for (std::uint32_t t = 0; t < num_types(); ++t) {
      auto const& ty        = types[t];
      std::string const who = "type " + std::to_string(t) + " ('" + ty.name + "')";
      if (ty.name.empty()) fail("type " + std::to_string(t) + " has an empty name");
      if (!names.insert(ty.name).second) fail("two types are named '" + ty.name + "'");
      if (ty.size_bytes == 0) fail(who + " has size 0");
      if (ty.base) {
        if (*ty.base >= t)
          fail(who + ": base type " + std::to_string(*ty.base) +
               " must be declared before the type that derives from it");
        if (types[*ty.base].size_bytes > ty.size_bytes)
          fail(who + " is smaller than its base '" + types[*ty.base].name + "'");
      }
      for (auto const& f : ty.pointer_fields) {
        if (f.pointee >= num_types())
          fail(who + ": pointer field '" + f.name + "' points to unknown type " +
               std::to_string(f.pointee));
        if (f.count == 0) fail(who + ": pointer field '" + f.name + "' has array count 0");
      }
      any_concrete = any_concrete || !ty.is_abstract;
    }
    if (!any_concrete) fail("every type is abstract: nothing can be allocated");
    std::uint32_t const smallest = smallest_size();
    for (std::uint32_t t = 0; t < num_types(); ++t) {
      if (types[t].is_abstract) continue;
      if (types[t].size_bytes > kMaxCapacity * smallest)
        fail("type '" + types[t].name + "' (" + std::to_string(types[t].size_bytes) +
             " B) is more than 64x the smallest type (" + std::to_string(smallest) +
             " B); DynaSOAr sec. 3.2 cannot give it a block capacity >= 1");
      if (capacity(t) < 2)
        fail("type '" + types[t].name + "' (" + std::to_string(types[t].size_bytes) +
             " B) gets block capacity 1 (it is more than 32x the smallest type, " +
             std::to_string(smallest) +
             " B); heaplab needs capacity >= 2 because with one slot a free is both FIRST and "
             "EMPTY (docs/core.md \"Other deviations from the paper\")");
    }
    if (num_blocks == 0) fail("num_blocks (M) must be at least 1");
    std::uint32_t const min_cap = min_defrag_capacity();
    if (defrag_factor < 1 || defrag_factor >= min_cap)
      fail("defragmentation factor n=" + std::to_string(defrag_factor) + " must satisfy 1 <= n < " +
           std::to_string(min_cap) +
           " (the smallest block capacity among defragmentable types; CompactGpu sec. 3)");
  }

  /// Size of the smallest non-abstract type: a block of it holds 64 objects (DynaSOAr sec. 3.2).
  [[nodiscard]] std::uint32_t smallest_size() const {
    std::uint32_t s = 0;
    for (auto const& ty : types)
      if (!ty.is_abstract && (s == 0 || ty.size_bytes < s)) s = ty.size_bytes;
    return s;
  }

  /// N_T = floor(64 * size(T_smallest) / size(T)) (DynaSOAr sec. 3.2). 0 for abstract types.
  [[nodiscard]] std::uint32_t capacity(std::uint32_t t) const {
    if (types.at(t).is_abstract) return 0;
    return std::min(kMaxCapacity, kMaxCapacity * smallest_size() / types[t].size_bytes);
  }

  /// Smallest capacity among defragmentable types.
  [[nodiscard]] std::uint32_t min_defrag_capacity() const {
    std::uint32_t m = kMaxCapacity;
    for (std::uint32_t t = 0; t < num_types(); ++t)
      if (is_defragmentable(t)) m = std::min(m, capacity(t));
    return m;
  }

  /// Every concrete (non-abstract) type can be defragmented.
  [[nodiscard]] bool is_defragmentable(std::uint32_t t) const { return !types.at(t).is_abstract; }

  /// t <: s: t is s or derives from s.
  [[nodiscard]] bool is_subtype(std::uint32_t t, std::uint32_t s) const {
    for (std::optional<std::uint32_t> cur = t; cur; cur = types.at(*cur).base)
      if (*cur == s) return true;
    return false;
  }

  /// Every pointer slot of an object of type t: inherited fields first (base chain from the root),
  /// array fields expanded element by element.
  [[nodiscard]] std::vector<PointerSlot> pointer_slots(std::uint32_t t) const {
    std::vector<std::uint32_t> chain;
    for (std::optional<std::uint32_t> cur = t; cur; cur = types.at(*cur).base)
      chain.push_back(*cur);
    std::vector<PointerSlot> out;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      auto const& fields = types[*it].pointer_fields;
      for (std::uint32_t f = 0; f < fields.size(); ++f)
        for (std::uint32_t e = 0; e < fields[f].count; ++e)
          out.push_back({*it, f, e, fields[f].pointee});
    }
    return out;
  }

  /// Whether a pointer slot whose declared pointee is `pointee` may refer to an object of type t,
  /// i.e. t <: pointee. CompactGpu sec. 3.4 rewrites exactly these slots when t is defragmented.
  [[nodiscard]] bool slot_may_point_to(PointerSlot const& slot, std::uint32_t t) const {
    return is_subtype(t, slot.pointee);
  }

  /// Non-abstract types U whose objects have at least one pointer slot that may refer to an object
  /// of type t (CompactGpu sec. 3.4 "Limiting Heap Scans").
  [[nodiscard]] std::vector<std::uint32_t> types_pointing_to(std::uint32_t t) const {
    std::vector<std::uint32_t> out;
    for (std::uint32_t u = 0; u < num_types(); ++u) {
      if (types[u].is_abstract) continue;
      for (auto const& slot : pointer_slots(u)) {
        if (slot_may_point_to(slot, t)) {
          out.push_back(u);
          break;
        }
      }
    }
    return out;
  }

  [[nodiscard]] std::optional<std::uint32_t> type_by_name(std::string const& name) const {
    for (std::uint32_t t = 0; t < num_types(); ++t)
      if (types[t].name == name) return t;
    return std::nullopt;
  }
};

}  // namespace heaplab::core
