// The payload convention of heaplab's GPU heap: heap types that derive from `Tracked` carry an
// object id and its cookie (core/cookie.hpp) as their first two fields, which is what
// Heap::snapshot_with_payloads() reads (docs/allocator.md "Snapshots").
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

#include "heaplab/core/cookie.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/soa/field.hpp"

namespace heaplab::soa {

class Tracked {
 public:
  HEAPLAB_SOA_ABSTRACT(Tracked);
  HEAPLAB_SOA_FIELDS(Tracked, (std::uint64_t, id_), (std::uint64_t, cookie_));

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

/// Field indices of the convention, for code that reads objects through the layout table.
inline constexpr std::uint32_t kTrackedIdField     = 0;
inline constexpr std::uint32_t kTrackedCookieField = 1;

}  // namespace heaplab::soa
