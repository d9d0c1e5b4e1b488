// A readable text dump of a HeapSnapshot, for failure reports and `heaplab` output.
#pragma once

#include <string>

#include "heaplab/check/snapshot.hpp"

namespace heaplab::check {

/// The snapshot as text: producer and config summary (M, n, k1, types with size, capacity, base,
/// abstract, pointer slots); one line per non-free block (index, header type, used/capacity,
/// allocation bitmap in hex and as a slot map, state flags); counts per type; the free-block
/// count; with payloads, one line per object (slot, id, cookie ok/BAD, refs as block:slot).
///
/// Slot map: 64 characters, slot 0 first. '#' live object, '.' free slot (both below the
/// capacity), '-' padding bit set (bits >= N_T, as it must be), '!' padding bit clear (broken).
/// Flags name the header type's states (allocated, active, defrag); a state of another type is
/// shown with its type, e.g. "allocated[Shark]". A non-free block allocated for no type is shown
/// too, flagged "unallocated".
std::string dump(HeapSnapshot const& snapshot);

/// The slot map of one allocation bitmap (see dump); capacity 1..64.
std::string slot_map(std::uint64_t alloc_bitmap, std::uint32_t capacity);

}  // namespace heaplab::check
