// HeapSnapshot: the one meeting point of heaplab (docs/architecture.md).
//
// A plain host struct holding a heap's metadata at quiescence (between kernels): per block the
// type id and the allocation and iteration bitmaps, every state bitmap with all of its hierarchy
// levels, the configuration, and optionally the payload (id, cookie, pointer targets) of every
// live object. The GPU heap, the portable core run on CPU threads and the sequential model all
// produce one; every invariant and every diff works on snapshots.
//
// Pointer targets are stored as (block, slot), not as addresses, so that snapshots of different
// producers (GPU addresses, model indices) compare directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/core/heap_config.hpp"
#include "heaplab/core/slot_ref.hpp"

namespace heaplab::check {

/// The payload of one live object.
struct ObjectRecord {
  std::uint64_t id     = 0;
  std::uint64_t cookie = 0;  // core::cookie_of(id) when intact
  /// One entry per config.pointer_slots(type), in that order; nullopt is a null pointer.
  std::vector<std::optional<core::SlotRef>> refs;
};

struct BlockSnapshot {
  std::uint32_t type         = core::kNoType;  // raw header type id (stale for free blocks)
  std::uint64_t alloc_bitmap = 0;              // object allocation bitmap (DynaSOAr sec. 3.1)
  std::uint64_t iter_bitmap  = 0;              // object iteration bitmap (sec. 3.1)
  /// Empty when the snapshot has no payloads; otherwise 64 entries indexed by slot, holding a
  /// record exactly for the slots that hold a live object.
  std::vector<std::optional<ObjectRecord>> objects;
};

/// A hierarchical bitmap with every level (DynaSOAr sec. 4.1.1). levels[0] holds
/// ceil(num_bits / 64) containers; levels[l + 1] has one bit per container of levels[l]; the
/// last level is a single container. A bitmap of at most 64 bits has one level. An absent bitmap
/// (abstract types have no state bitmaps) has num_bits == 0 and no levels.
struct BitmapSnapshot {
  std::uint32_t num_bits = 0;
  std::vector<std::vector<std::uint64_t>> levels;

  [[nodiscard]] bool get(std::uint32_t bit) const {
    return ((levels.at(0).at(bit / 64) >> (bit % 64)) & 1u) != 0;
  }
  /// Number of levels a bitmap of n bits has (1 for n <= 64).
  static std::uint32_t level_count(std::uint32_t n) {
    std::uint32_t levels = 1;
    for (std::uint64_t bits = n; bits > 64; bits = (bits + 63) / 64) ++levels;
    return levels;
  }
};

struct HeapSnapshot {
  core::HeapConfig config;
  std::vector<BlockSnapshot> blocks;  // config.num_blocks entries
  BitmapSnapshot free_blocks;         // bit b set iff block b is free
  /// Indexed by type id (config.num_types() entries each); absent for abstract types.
  std::vector<BitmapSnapshot> allocated;
  std::vector<BitmapSnapshot> active;
  std::vector<BitmapSnapshot> defrag;
  bool has_payloads = false;
  std::string producer;  // "model", "gpu", "cpu-core", "test" ...: shown in dumps and diffs
};

}  // namespace heaplab::check
