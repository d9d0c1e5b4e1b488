// Object payloads for HeapSnapshots: reads, from a host copy of a heap's block area, the id,
// cookie and pointer targets of every live object of types that follow the Tracked convention
// (tracked.hpp). Host only, plain C++ (compiles with g++: the CPU tests run it on host memory
// laid out exactly like the device heap). Heap::snapshot_with_payloads() calls it.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/check/snapshot.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/tracked.hpp"

namespace heaplab::soa {

/// Type id of the tracked root of `Types` (Tracked, or a root of its own, tracked.hpp), or kNoType
/// when the list has none.
template <class Types>
constexpr std::uint32_t tracked_type_id() {
  return tracked_root_of<Types>(kNoType);
}

/// Names of the concrete types of `Types` that do not derive from its tracked root: the types whose
/// objects have no id and cookie to snapshot. Empty iff payload snapshots are supported.
template <class Types>
std::vector<std::string> untracked_types() {
  constexpr auto table         = Types::layout_table();
  constexpr std::uint32_t root = tracked_type_id<Types>();
  std::vector<std::string> out;
  for (std::uint32_t t = 0; t < Types::num_types; ++t) {
    if (table.types[t].is_abstract != 0) continue;
    if (root == kNoType || !table.is_subtype(t, root)) out.emplace_back(Types::type_name(t));
  }
  return out;
}

/// Throws core::precondition_error naming the types without the Tracked convention, if any.
template <class Types>
void expect_payload_support() {
  std::vector<std::string> const missing = untracked_types<Types>();
  if (missing.empty()) return;
  std::string names;
  for (std::string const& n : missing) names += (names.empty() ? "" : ", ") + n;
  HEAPLAB_EXPECTS(missing.empty(),
                  "snapshot_with_payloads: type(s) " + names +
                      " do not derive from heaplab::soa::Tracked (or the list's own tracked root), "
                      "so their objects carry no id and cookie to snapshot (docs/allocator.md "
                      "\"Snapshots\"); use snapshot() or derive them from Tracked");
}

/// Where an encoded object pointer points (block, slot); nullopt for the null pointer.
/// A pointer that is not a block address of the heap at `block_base` decodes to block
/// 0xFFFFFFFF, which the catalog's pointers-valid invariant reports as "outside the heap".
inline std::optional<core::SlotRef> decode_object_pointer(std::uint64_t p,
                                                          std::uint64_t block_base,
                                                          std::uint32_t block_bytes,
                                                          std::uint32_t num_blocks) {
  if (p == 0) return std::nullopt;
  std::uint64_t const address = core::pointer_block_address(p);
  core::SlotRef ref{core::kNotFound, core::pointer_slot(p)};
  if (address >= block_base && (address - block_base) % block_bytes == 0 &&
      (address - block_base) / block_bytes < num_blocks) {
    ref.block = static_cast<std::uint32_t>((address - block_base) / block_bytes);
  }
  return ref;
}

/// Adds payloads to a snapshot made without them (check::from_core): for every block allocated
/// for exactly one concrete type (per the snapshot's state bitmaps), one record per allocation
/// bit below the capacity, read from `host_blocks`, a host copy of the block area whose first
/// byte is at device address `block_base`. Records hold the Tracked id and cookie and one ref per
/// pointer slot, in HeapConfig::pointer_slots order (inherited fields first, array elements in
/// order). Blocks that are free or allocated for several types get empty slots (the catalog
/// reports them). Precondition: every concrete type derives from Tracked
/// (expect_payload_support).
///
/// `block_at(b)` is the host address of block b's bytes; it is called only for the blocks read
/// (allocated for exactly one concrete type), in ascending order, so a read-back may copy just
/// those blocks, packed (Heap::snapshot_with_payloads).
template <class Types, class BlockAt>
void add_payloads_from(check::HeapSnapshot& snapshot, std::uint64_t block_base, BlockAt block_at) {
  expect_payload_support<Types>();
  constexpr auto table           = Types::layout_table();
  constexpr std::uint32_t bytes  = Types::block_bytes;
  constexpr TrackedFields fields = tracked_fields_of<Types>();
  std::uint32_t const num_blocks = static_cast<std::uint32_t>(snapshot.blocks.size());
  unsigned char const* host      = nullptr;  // block b's bytes, while b is read
  auto read_u64                  = [&](std::uint64_t offset) {
    std::uint64_t v = 0;
    std::memcpy(&v, host + offset, sizeof v);
    return v;
  };
  snapshot.has_payloads = true;
  for (std::uint32_t b = 0; b < num_blocks; ++b) {
    check::BlockSnapshot& block = snapshot.blocks[b];
    block.objects.assign(core::kMaxCapacity, std::nullopt);
    std::optional<std::uint32_t> const type = check::allocated_type(snapshot, b);
    if (!type || *type >= Types::num_types || table.types[*type].is_abstract != 0) continue;
    host                    = block_at(b);
    std::uint32_t const t   = *type;
    std::uint32_t const cap = table.types[t].capacity;
    std::uint64_t live      = block.alloc_bitmap & core::low_bits(cap);
    block.objects.reserve(static_cast<std::size_t>(core::popcount(live)));
    while (live != 0) {
      std::uint32_t const slot = static_cast<std::uint32_t>(core::find_first_set(live));
      live &= live - 1u;
      check::ObjectRecord record;
      record.id     = read_u64(table.unit_offset(t, fields.id, 0) + slot * 8ull);
      record.cookie = read_u64(table.unit_offset(t, fields.cookie, 0) + slot * 8ull);
      for (std::uint32_t j = 0; j < table.types[t].num_fields; ++j) {
        FieldLayout const& f = table.field(t, j);
        if (!f.is_heap_pointer()) continue;
        for (std::uint32_t e = 0; e < f.elements; ++e) {
          std::uint64_t const p = read_u64(table.unit_offset(t, j, e) + slot * 8ull);
          record.refs.push_back(decode_object_pointer(p, block_base, bytes, num_blocks));
        }
      }
      block.objects.set(slot, std::move(record));
    }
  }
}

/// add_payloads_from with `host_blocks`, a host copy of the whole block area (block b at
/// host_blocks + b x Types::block_bytes).
template <class Types>
void add_payloads(check::HeapSnapshot& snapshot,
                  std::uint64_t block_base,
                  unsigned char const* host_blocks) {
  add_payloads_from<Types>(snapshot, block_base, [host_blocks](std::uint32_t b) {
    return host_blocks + std::uint64_t{b} * Types::block_bytes;
  });
}

}  // namespace heaplab::soa
