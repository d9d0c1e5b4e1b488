// The payload convention of heaplab's GPU heap: heap types that derive from a *tracked root*
// carry an object id and its cookie (core/cookie.hpp) in two 8-byte fields, which is what
// Heap::snapshot_with_payloads() reads (docs/allocator.md "Snapshots"). `Tracked` is the usual
// root: its id and cookie are the first two fields of every type derived from it. A type list
// may instead use its own root class with other fields before the id, e.g. a 1-byte tag, so
// that objects do not all start with the same 8-byte field; such a root declares where its id and
// cookie are (`heaplab_tracked_fields`, indices among its fields, see TrackedFields below).
//
//   class Node : public heaplab::soa::Tracked {
//    public:
//     HEAPLAB_SOA_DERIVED_FIELDS(Node, heaplab::soa::Tracked, (Node*, next_), (float, w_));
//     HEAPLAB_HD Node(std::uint64_t id, float w) : Tracked(id), next_(nullptr), w_(w) {}
//   };
//   using Types = heaplab::soa::HeapTypes<heaplab::soa::Tracked, Node>;   // Tracked first
//
// Tracked is abstract (no blocks of its own) and must be listed in HeapTypes<...> before the
// types that derive from it, like every base type. Plain C++ (host and device, g++ too).
#pragma once

#include <cstdint>
#include <type_traits>

#include "heaplab/core/cookie.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/soa/field.hpp"

namespace heaplab::soa {

/// Where a tracked root keeps the object id and its cookie: indices among its own fields (both
/// fields are std::uint64_t). A root class declares
///   static constexpr TrackedFields heaplab_tracked_fields{id, cookie};
/// its subclasses inherit the declaration, and since inherited fields come first (DynaSOAr sec.
/// 3.2), the same indices hold in every subclass.
struct TrackedFields {
  std::uint32_t id     = 0;
  std::uint32_t cookie = 1;
};

class Tracked {
 public:
  HEAPLAB_SOA_ABSTRACT(Tracked);
  HEAPLAB_SOA_FIELDS(Tracked, (std::uint64_t, id_), (std::uint64_t, cookie_));
  static constexpr TrackedFields heaplab_tracked_fields{0, 1};

  /// Stores the id and its cookie (core::cookie_of).
  HEAPLAB_HD explicit Tracked(std::uint64_t id) : id_(id), cookie_(core::cookie_of(id)) {}

  HEAPLAB_HD std::uint64_t id() const { return id_; }
  HEAPLAB_HD std::uint64_t cookie() const { return cookie_; }
  /// Whether the cookie still matches the id (a torn copy or a wrong pointer breaks it).
  HEAPLAB_HD bool intact() const { return cookie_ == core::cookie_of(id_); }
  /// Re-labels the object (id and cookie together).
  HEAPLAB_HD void set_id(std::uint64_t id) {
    id_     = id;
    cookie_ = core::cookie_of(id);
  }
};

namespace detail {
template <class T, class = void>
struct declares_tracked_fields : std::false_type {};
template <class T>
struct declares_tracked_fields<T, std::void_t<decltype(T::heaplab_tracked_fields)>>
    : std::true_type {};
}  // namespace detail

/// The type id of the tracked root of `Types`: the first listed type that declares
/// heaplab_tracked_fields (bases are listed before their subclasses, so it is the root), or
/// `none` (kNoType) when no type does.
template <class Types, std::uint32_t I = 0>
HEAPLAB_HD constexpr std::uint32_t tracked_root_of(std::uint32_t none) {
  if constexpr (I == Types::num_types) {
    return none;
  } else if constexpr (detail::declares_tracked_fields<typename Types::template type<I>>::value) {
    return I;
  } else {
    return tracked_root_of<Types, I + 1>(none);
  }
}

/// The id and cookie field indices of the tracked root of `Types` (Tracked's {0, 1} when the list
/// has no root; callers check tracked_root_of first).
template <class Types>
HEAPLAB_HD constexpr TrackedFields tracked_fields_of() {
  constexpr std::uint32_t root = tracked_root_of<Types>(Types::num_types);
  if constexpr (root == Types::num_types) {
    return TrackedFields{};
  } else {
    return Types::template type<root>::heaplab_tracked_fields;
  }
}

}  // namespace heaplab::soa
