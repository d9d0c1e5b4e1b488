// The invariant catalog (docs/invariants.md). Each invariant is one function below with a doc
// comment citing the paper section it comes from, registered by one line in catalog().
//
// All of them hold at quiescence: between kernels, when no allocate/free/defragmentation is in
// flight. DynaSOAr sec. 3.4 and 4.1.1: block bitmaps and upper bitmap levels are only eventually
// consistent while operations run and are guaranteed consistent once all of them completed.
//
// Conventions: "used" of a block is the number of set allocation bits below its capacity
// (snapshot_utils used_slots). "allocated block of T" means allocated[T] has its bit set. Every
// checker reads the snapshot through the never-throwing queries (test_bit, allocated_type), so
// that a broken snapshot yields violations, never an exception; the shape is established first by
// snapshot-well-formed, and check_all / check_one stop there if the shape is broken.
#include "heaplab/check/invariants.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/cookie.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/hex.hpp"

namespace heaplab::check {

namespace {

using Out = std::vector<Violation>;

std::string hex(std::uint64_t v) { return core::hex64(v); }

/// A violation's location, built by chaining: At().block(b).bit(s).type(t). Unset fields are -1.
struct At {
  std::int64_t block_ = -1, bit_ = -1, type_ = -1, level_ = -1, object_id_ = -1;
  At& block(std::int64_t v) { return block_ = v, *this; }
  At& bit(std::int64_t v) { return bit_ = v, *this; }
  At& type(std::int64_t v) { return type_ = v, *this; }
  At& level(std::int64_t v) { return level_ = v, *this; }
  At& object_id(std::int64_t v) { return object_id_ = v, *this; }
};

void report(Out& out, std::string_view invariant, std::string message, At at = {}) {
  Violation v;
  v.invariant = std::string(invariant);
  v.message   = std::move(message);
  v.block     = at.block_;
  v.bit       = at.bit_;
  v.type      = at.type_;
  v.level     = at.level_;
  v.object_id = at.object_id_;
  out.push_back(std::move(v));
}

core::HeapConfig const& cfg(HeapSnapshot const& s) { return s.config; }
std::uint32_t num_blocks(HeapSnapshot const& s) {
  return static_cast<std::uint32_t>(s.blocks.size());
}
bool concrete(HeapSnapshot const& s, std::uint32_t t) { return !cfg(s).types[t].is_abstract; }
std::string tname(HeapSnapshot const& s, std::uint32_t t) { return type_name(cfg(s), t); }

/// "allocated[Fish]" etc.
std::string bitmap_name(HeapSnapshot const& s, char const* state, std::uint32_t t) {
  return std::string(state) + "[" + tname(s, t) + "]";
}

/// Calls f(name, bitmap, type or -1) for the free bitmap and every concrete type's state bitmaps.
template <typename F>
void for_each_state_bitmap(HeapSnapshot const& s, F&& f) {
  f(std::string("free"), s.free_blocks, std::int64_t{-1});
  for (std::uint32_t t = 0; t < cfg(s).num_types(); ++t) {
    if (!concrete(s, t)) continue;
    f(bitmap_name(s, "allocated", t), s.allocated[t], std::int64_t{t});
    f(bitmap_name(s, "active", t), s.active[t], std::int64_t{t});
    f(bitmap_name(s, "defrag", t), s.defrag[t], std::int64_t{t});
  }
}

/// Calls f(block, type) for every block b and concrete type T with allocated[T][b].
template <typename F>
void for_each_allocated(HeapSnapshot const& s, F&& f) {
  for (std::uint32_t t = 0; t < cfg(s).num_types(); ++t) {
    if (!concrete(s, t)) continue;
    for (std::uint32_t b = 0; b < num_blocks(s); ++b)
      if (test_bit(s.allocated[t], b)) f(b, t);
  }
}

std::string block_fill(HeapSnapshot const& s, std::uint32_t b, std::uint32_t t) {
  std::uint32_t const cap = cfg(s).capacity(t);
  return std::to_string(used_slots(s.blocks[b].alloc_bitmap, cap)) + "/" + std::to_string(cap);
}

std::string ref_string(core::SlotRef r) {
  return std::to_string(r.block) + ":" + std::to_string(r.slot);
}

// ================================================================ structural

constexpr std::string_view kWellFormed = "snapshot-well-formed";

/// snapshot-well-formed: the snapshot has the shape HeapSnapshot documents (check/snapshot.hpp),
/// so that every other invariant can index it: the config validates, there are M blocks,
/// allocated/active/defrag have one entry per type, the free bitmap and every concrete type's
/// state bitmaps have M bits and a level 0 of ceil(M/64) containers, and each block has 64 object
/// slots when the snapshot has payloads and none otherwise. (Upper levels: hierarchy-consistent.)
void check_well_formed(HeapSnapshot const& s, Out& out) {
  try {
    cfg(s).validate();
  } catch (core::precondition_error const& e) {
    report(out, kWellFormed, std::string("the config is invalid: ") + e.what());
    return;
  }
  std::uint32_t const m = cfg(s).num_blocks;
  if (s.blocks.size() != m)
    report(out,
           kWellFormed,
           "the snapshot has " + std::to_string(s.blocks.size()) +
               " blocks, the config M=" + std::to_string(m));
  std::uint32_t const nt = cfg(s).num_types();
  for (auto const& [name, vec] :
       {std::pair<char const*, std::vector<BitmapSnapshot> const*>{"allocated", &s.allocated},
        {"active", &s.active},
        {"defrag", &s.defrag}}) {
    if (vec->size() != nt)
      report(out,
             kWellFormed,
             std::string(name) + " has " + std::to_string(vec->size()) +
                 " bitmaps, the config has " + std::to_string(nt) + " types");
  }
  if (!out.empty()) return;
  auto const check_level0 = [&](std::string const& name, BitmapSnapshot const& bm, std::int64_t t) {
    if (bm.num_bits != m || bm.levels.empty() || bm.levels[0].size() != (m + 63) / 64)
      report(out,
             kWellFormed,
             name + " must have " + std::to_string(m) + " bits with a level 0 of " +
                 std::to_string((m + 63) / 64) + " containers; it has " +
                 std::to_string(bm.num_bits) + " bits and " + std::to_string(bm.levels.size()) +
                 " levels" +
                 (bm.levels.empty()
                      ? std::string()
                      : " (level 0: " + std::to_string(bm.levels[0].size()) + " containers)"),
             At().type(t));
  };
  for_each_state_bitmap(s, check_level0);
  for (std::uint32_t b = 0; b < s.blocks.size(); ++b) {
    std::size_t const n = s.blocks[b].objects.size();
    if (s.has_payloads ? n != core::kMaxCapacity : n != 0)
      report(out,
             kWellFormed,
             "block " + std::to_string(b) + " has " + std::to_string(n) +
                 " object slots; a snapshot " + (s.has_payloads ? "with" : "without") +
                 " payloads must have " + (s.has_payloads ? "64" : "none"),
             At().block(b));
  }
}

// ================================================================ state bitmaps

/// hierarchy-consistent (DynaSOAr sec. 4.1.1, App. A.5 Def. 1): for the free bitmap and every
/// concrete type's allocated/active/defrag bitmap, every level l has the right number of
/// containers, every bit b^{l+1}_i equals the OR of container C^l_i (b^{l+1}_i =
/// OR_{k<64} b^l_{64i+k}), and the bits of each level past its meaningful bit count are zero.
void check_hierarchy_consistent(HeapSnapshot const& s, Out& out) {
  constexpr std::string_view kName = "hierarchy-consistent";
  for_each_state_bitmap(s, [&](std::string const& name, BitmapSnapshot const& bm, std::int64_t t) {
    auto const bits       = level_bit_counts(bm.num_bits);
    auto const containers = level_container_counts(bm.num_bits);
    if (bm.levels.size() != containers.size()) {
      report(out,
             kName,
             name + " has " + std::to_string(bm.levels.size()) + " levels; a bitmap of " +
                 std::to_string(bm.num_bits) + " bits has " + std::to_string(containers.size()),
             At().type(t));
      return;
    }
    for (std::size_t l = 0; l < containers.size(); ++l) {
      if (bm.levels[l].size() != containers[l]) {
        report(out,
               kName,
               name + " level " + std::to_string(l) + " has " +
                   std::to_string(bm.levels[l].size()) + " containers, expected " +
                   std::to_string(containers[l]),
               At().type(t).level(static_cast<std::int64_t>(l)));
        return;
      }
    }
    for (std::size_t l = 0; l < containers.size(); ++l) {
      // Bits past the meaningful count: the tail of the last container.
      std::uint32_t const used_in_last = bits[l] - (containers[l] - 1) * 64;
      std::uint64_t const tail         = bm.levels[l].back() & ~core::low_bits(used_in_last);
      if (tail != 0) {
        std::int64_t const bit = std::int64_t{containers[l] - 1} * 64 + core::find_first_set(tail);
        report(out,
               kName,
               name + " level " + std::to_string(l) + " has bit " + std::to_string(bit) +
                   " set past its " + std::to_string(bits[l]) + " meaningful bits",
               At().bit(bit).type(t).level(static_cast<std::int64_t>(l)));
      }
      if (l + 1 == containers.size()) break;
      for (std::uint32_t i = 0; i < containers[l]; ++i) {
        bool const expected = bm.levels[l][i] != 0;
        bool const actual   = ((bm.levels[l + 1][i / 64] >> (i % 64)) & 1u) != 0;
        if (expected != actual)
          report(out,
                 kName,
                 name + " level " + std::to_string(l + 1) + " bit " + std::to_string(i) + " is " +
                     (actual ? "1" : "0") + " but container C^" + std::to_string(l) + "_" +
                     std::to_string(i) + " = " + hex(bm.levels[l][i]) + " is " +
                     (expected ? "non-empty" : "empty"),
                 At().bit(i).type(t).level(static_cast<std::int64_t>(l + 1)));
      }
    }
  });
}

/// active-implies-allocated (DynaSOAr sec. 3.4: "If a bit is 1 [in active[T]], then the same bit
/// in the block allocation bitmap must also be 1"; CompactGpu sec. 2.2 active[T] => allocated[T]).
void check_active_implies_allocated(HeapSnapshot const& s, Out& out) {
  for (std::uint32_t t = 0; t < cfg(s).num_types(); ++t) {
    if (!concrete(s, t)) continue;
    for (std::uint32_t b : set_bits(s.active[t]))
      if (!test_bit(s.allocated[t], b))
        report(out,
               "active-implies-allocated",
               "block " + std::to_string(b) + " is in " + bitmap_name(s, "active", t) +
                   " but not in " + bitmap_name(s, "allocated", t),
               At().block(b).bit(b).type(t).level(0));
  }
}

/// defrag-implies-active (CompactGpu sec. 2.2: defrag[T] => allocated[T] and active[T]; the
/// allocated part follows through active-implies-allocated).
void check_defrag_implies_active(HeapSnapshot const& s, Out& out) {
  for (std::uint32_t t = 0; t < cfg(s).num_types(); ++t) {
    if (!concrete(s, t)) continue;
    for (std::uint32_t b : set_bits(s.defrag[t]))
      if (!test_bit(s.active[t], b))
        report(out,
               "defrag-implies-active",
               "block " + std::to_string(b) + " is in " + bitmap_name(s, "defrag", t) +
                   " but not in " + bitmap_name(s, "active", t),
               At().block(b).bit(b).type(t).level(0));
  }
}

/// free-iff-unallocated (DynaSOAr sec. 3.4 "Bit i is 1 iff block i is free"; sec. 3: a block is
/// initialized for one type until it is deallocated; CompactGpu sec. 2.2 "one global free state"):
/// a block is in the free bitmap iff it is allocated for no type, and it is allocated for at
/// most one type.
void check_free_iff_unallocated(HeapSnapshot const& s, Out& out) {
  constexpr std::string_view kName = "free-iff-unallocated";
  for (std::uint32_t b = 0; b < num_blocks(s); ++b) {
    auto const types = allocated_types(s, b);
    bool const free  = test_bit(s.free_blocks, b);
    if (types.size() > 1) {
      std::string list;
      for (auto t : types) list += (list.empty() ? "" : ", ") + tname(s, t);
      report(out,
             kName,
             "block " + std::to_string(b) + " is allocated for " + std::to_string(types.size()) +
                 " types (" + list + "); at most one",
             At().block(b).bit(b).type(types[1]));
    }
    if (free && !types.empty())
      report(out,
             kName,
             "block " + std::to_string(b) + " is in the free bitmap and in " +
                 bitmap_name(s, "allocated", types[0]),
             At().block(b).bit(b).type(types[0]));
    if (!free && types.empty())
      report(out,
             kName,
             "block " + std::to_string(b) + " is neither free nor allocated for any type",
             At().block(b).bit(b));
  }
}

/// active-iff-not-full (DynaSOAr sec. 3 Fig. 5 and sec. 3.4: active[T] indexes "allocated,
/// non-full blocks"; CompactGpu sec. 2.2): an allocated block of T is in active[T] iff used < N_T.
void check_active_iff_not_full(HeapSnapshot const& s, Out& out) {
  for_each_allocated(s, [&](std::uint32_t b, std::uint32_t t) {
    std::uint32_t const cap  = cfg(s).capacity(t);
    std::uint32_t const used = used_slots(s.blocks[b].alloc_bitmap, cap);
    bool const active        = test_bit(s.active[t], b);
    if (active != (used < cap))
      report(out,
             "active-iff-not-full",
             "block " + std::to_string(b) + " of " + tname(s, t) + " holds " + block_fill(s, b, t) +
                 " objects but is " + (active ? "" : "not ") + "in " + bitmap_name(s, "active", t),
             At().block(b).bit(b).type(t).level(0));
  });
}

/// defrag-iff-low-fill (CompactGpu sec. 3 "Blocks that are no more than n/(n+1) full are
/// defragmentation candidates"; "Finding Defragmentation Candidates"): an allocated block of a
/// defragmentable type T is in defrag[T] iff core::is_defrag_fill(used, N_T, n), with n the
/// config's defragmentation factor (compile-time in CompactGpu; the bitmaps follow it).
void check_defrag_iff_low_fill(HeapSnapshot const& s, Out& out) {
  std::uint32_t const n = cfg(s).defrag_factor;
  for_each_allocated(s, [&](std::uint32_t b, std::uint32_t t) {
    if (!cfg(s).is_defragmentable(t)) return;
    std::uint32_t const cap  = cfg(s).capacity(t);
    std::uint32_t const used = used_slots(s.blocks[b].alloc_bitmap, cap);
    bool const candidate     = core::is_defrag_fill(used, cap, n);
    bool const in_bitmap     = test_bit(s.defrag[t], b);
    if (candidate != in_bitmap)
      report(out,
             "defrag-iff-low-fill",
             "block " + std::to_string(b) + " of " + tname(s, t) + " holds " + block_fill(s, b, t) +
                 " objects (" + (candidate ? "<=" : ">") + " n/(n+1) with n=" + std::to_string(n) +
                 ") but is " + (in_bitmap ? "" : "not ") + "in " + bitmap_name(s, "defrag", t),
             At().block(b).bit(b).type(t).level(0));
  });
}

// ================================================================ blocks

/// allocated-not-empty (DynaSOAr sec. 3.6 and App. A.4: the thread that frees the last object of
/// a block deletes the block; at quiescence no allocated block is empty).
void check_allocated_not_empty(HeapSnapshot const& s, Out& out) {
  for_each_allocated(s, [&](std::uint32_t b, std::uint32_t t) {
    if (used_slots(s.blocks[b].alloc_bitmap, cfg(s).capacity(t)) == 0)
      report(out,
             "allocated-not-empty",
             "block " + std::to_string(b) + " is allocated for " + tname(s, t) +
                 " but holds no object",
             At().block(b).type(t));
  });
}

/// capacity-padding-set (DynaSOAr App. A.1: "If a block's capacity is smaller than 64, then the
/// last 64 - N bits are set to 1 during block initialization to prevent threads from reserving
/// these slots"): in an allocated block of T, allocation bits N_T..63 are all set.
void check_capacity_padding_set(HeapSnapshot const& s, Out& out) {
  for_each_allocated(s, [&](std::uint32_t b, std::uint32_t t) {
    std::uint32_t const cap     = cfg(s).capacity(t);
    std::uint64_t const missing = padding_mask(cap) & ~s.blocks[b].alloc_bitmap;
    if (missing != 0)
      report(out,
             "capacity-padding-set",
             "block " + std::to_string(b) + " of " + tname(s, t) + " (capacity " +
                 std::to_string(cap) + ") has allocation bit " +
                 std::to_string(core::find_first_set(missing)) +
                 " clear; bits at or above the capacity must be set (" +
                 hex(s.blocks[b].alloc_bitmap) + ")",
             At().block(b).bit(core::find_first_set(missing)).type(t));
  });
}

/// type-id-matches (DynaSOAr sec. 3.1 "The type identifier is a unique ID for the type T of a
/// block", DynaSOAr Alg. 8 sets it before the block accepts reservations): an allocated block of T
/// has header type T; every header type is kNoType or a type id of the config.
void check_type_id_matches(HeapSnapshot const& s, Out& out) {
  constexpr std::string_view kName = "type-id-matches";
  for (std::uint32_t b = 0; b < num_blocks(s); ++b) {
    std::uint32_t const type = s.blocks[b].type;
    if (type != core::kNoType && type >= cfg(s).num_types())
      report(out,
             kName,
             "block " + std::to_string(b) + " has header type " + std::to_string(type) +
                 ", which is neither a type of the config (" + std::to_string(cfg(s).num_types()) +
                 " types) nor kNoType",
             At().block(b).type(type));
  }
  for_each_allocated(s, [&](std::uint32_t b, std::uint32_t t) {
    if (s.blocks[b].type != t)
      report(out,
             kName,
             "block " + std::to_string(b) + " is in " + bitmap_name(s, "allocated", t) +
                 " but its header type is " + tname(s, s.blocks[b].type),
             At().block(b).type(t));
  });
}

/// free-block-invalidated (DynaSOAr sec. 3.5 case 1, sec. 3.6 and App. A.2: a deleted block's
/// allocation bitmap is all ones, "bits remain invalidated until a new block is initialized in the
/// same location", so that no reservation can succeed in a free block).
void check_free_block_invalidated(HeapSnapshot const& s, Out& out) {
  for (std::uint32_t b : set_bits(s.free_blocks)) {
    if (b >= num_blocks(s)) break;
    std::uint64_t const bitmap = s.blocks[b].alloc_bitmap;
    if (bitmap != ~std::uint64_t{0})
      report(out,
             "free-block-invalidated",
             "free block " + std::to_string(b) + " has allocation bitmap " + hex(bitmap) +
                 "; a free block must be invalidated (all ones)",
             At().block(b).bit(core::find_first_set(~bitmap)));
  }
}

/// no-abstract-blocks (CompactGpu sec. 2.2 and Fig. 2: abstract classes have no allocated,
/// active or defrag states; objects of an abstract type cannot exist): abstract types have absent
/// state bitmaps and no block header names an abstract type.
void check_no_abstract_blocks(HeapSnapshot const& s, Out& out) {
  constexpr std::string_view kName = "no-abstract-blocks";
  for (std::uint32_t t = 0; t < cfg(s).num_types(); ++t) {
    if (concrete(s, t)) continue;
    for (auto const& [state, vec] :
         {std::pair<char const*, std::vector<BitmapSnapshot> const*>{"allocated", &s.allocated},
          {"active", &s.active},
          {"defrag", &s.defrag}}) {
      BitmapSnapshot const& bm = (*vec)[t];
      if (bm.num_bits != 0 || !bm.levels.empty())
        report(out,
               kName,
               bitmap_name(s, state, t) + " must be absent (abstract type) but has " +
                   std::to_string(bm.num_bits) + " bits" +
                   (count_set(bm) ? " (" + std::to_string(count_set(bm)) + " set)" : ""),
               At().type(t));
    }
  }
  for (std::uint32_t b = 0; b < num_blocks(s); ++b) {
    std::uint32_t const type = s.blocks[b].type;
    if (type < cfg(s).num_types() && !concrete(s, type))
      report(out,
             kName,
             "block " + std::to_string(b) + " has the abstract header type " + tname(s, type),
             At().block(b).type(type));
  }
}

// ================================================================ payloads

/// payload-matches-bitmap (DynaSOAr sec. 3.1: the allocation bitmap "tracks allocated slots"):
/// an allocated block of T holds a record exactly at the slots below N_T whose allocation bit is
/// set; a block allocated for no type holds no record. Blocks allocated for several types are
/// skipped (free-iff-unallocated reports them).
void check_payload_matches_bitmap(HeapSnapshot const& s, Out& out) {
  constexpr std::string_view kName = "payload-matches-bitmap";
  for (std::uint32_t b = 0; b < num_blocks(s); ++b) {
    auto const& block = s.blocks[b];
    auto const types  = allocated_types(s, b);
    if (types.size() > 1) continue;
    std::uint32_t const cap = types.empty() ? 0 : cfg(s).capacity(types[0]);
    // Only the slots where the bitmap and the records disagree are visited: below 64 the two
    // masks' difference, above (a malformed block of more than 64 slots) every record.
    std::size_t const n    = block.objects.size();
    std::uint64_t const in = core::low_bits(static_cast<unsigned>(std::min<std::size_t>(n, 64)));
    std::uint64_t const live_mask = block.alloc_bitmap & core::low_bits(std::min(cap, 64u)) & in;
    std::uint64_t mismatched      = (live_mask ^ block.objects.record_mask()) & in;
    std::vector<std::uint32_t> visit;
    while (mismatched != 0) {
      visit.push_back(static_cast<std::uint32_t>(core::find_first_set(mismatched)));
      mismatched &= mismatched - 1u;
    }
    for (auto const& e : block.objects.entries())
      if (e.slot >= 64 && e.slot < n && e.record) visit.push_back(e.slot);
    for (std::uint32_t const slot : visit) {
      bool const live       = slot < cap && slot < 64 && ((block.alloc_bitmap >> slot) & 1u) != 0;
      auto const& record    = block.objects[slot];
      std::int64_t const id = record ? static_cast<std::int64_t>(record->id) : -1;
      std::int64_t const ty = types.empty() ? -1 : std::int64_t{types[0]};
      if (live && !record)
        report(out,
               kName,
               "block " + std::to_string(b) + " slot " + std::to_string(slot) +
                   " is allocated in the bitmap but has no object record",
               At().block(b).bit(slot).type(ty));
      if (!live && record)
        report(out,
               kName,
               "block " + std::to_string(b) + " slot " + std::to_string(slot) + " holds object " +
                   std::to_string(record->id) + " but " +
                   (types.empty() ? std::string("the block is allocated for no type")
                    : slot >= cap ? "the slot is at or above the capacity " + std::to_string(cap)
                                  : std::string("its allocation bit is clear")),
               At().block(b).bit(slot).type(ty).object_id(id));
    }
  }
}

/// object-ids-unique (heaplab test-object contract, mimalloc-stress style: every live object has
/// a distinct id, so the live-object graph is comparable by id; CompactGpu sec. 3: defragmentation
/// moves objects, it never duplicates them). Reports every occurrence after the first.
void check_object_ids_unique(HeapSnapshot const& s, Out& out) {
  // Every record as (id, position in block-then-slot order), sorted: equal ids end up adjacent,
  // the first seen first (a sort of one flat vector is several times faster than a hash map of
  // every live object, which this check built after every step).
  struct Seen {
    std::uint64_t id       = 0;
    std::uint64_t position = 0;
    core::SlotRef at;
  };
  std::vector<Seen> seen;
  for (std::uint32_t b = 0; b < num_blocks(s); ++b)
    for (auto const& [slot, record] : s.blocks[b].objects.entries())
      if (record) seen.push_back({record->id, seen.size(), core::SlotRef{b, slot}});
  std::sort(seen.begin(), seen.end(), [](Seen const& x, Seen const& y) {
    return x.id != y.id ? x.id < y.id : x.position < y.position;
  });
  std::vector<std::pair<Seen, core::SlotRef>> repeats;  // (a later record, where its id was first)
  for (std::size_t i = 1, first = 0; i < seen.size(); ++i) {
    if (seen[i].id != seen[first].id) {
      first = i;
      continue;
    }
    repeats.emplace_back(seen[i], seen[first].at);
  }
  // Reported in block-then-slot order of the later record, as the scan meets them.
  std::sort(repeats.begin(), repeats.end(), [](auto const& x, auto const& y) {
    return x.first.position < y.first.position;
  });
  for (auto const& [later, first_at] : repeats)
    report(out,
           "object-ids-unique",
           "object id " + std::to_string(later.id) + " at " + ref_string(later.at) +
               " is also at " + ref_string(first_at),
           At().block(later.at.block)
               .bit(later.at.slot)
               .object_id(static_cast<std::int64_t>(later.id)));
}

/// cookie-matches-id (heaplab test-object contract, core/cookie.hpp: every object stores
/// cookie_of(id); a mismatch reveals a torn copy or a stale slot, e.g. a CompactGpu sec. 3.2 copy
/// that missed a field).
void check_cookie_matches_id(HeapSnapshot const& s, Out& out) {
  for (std::uint32_t b = 0; b < num_blocks(s); ++b) {
    for (auto const& [slot, record] : s.blocks[b].objects.entries()) {
      if (!record) continue;
      auto const& r = *record;
      if (r.cookie != core::cookie_of(r.id))
        report(out,
               "cookie-matches-id",
               "object " + std::to_string(r.id) + " at " + ref_string({b, slot}) + " has cookie " +
                   hex(r.cookie) + ", expected cookie_of(id) = " + hex(core::cookie_of(r.id)),
               At().block(b).bit(slot).object_id(static_cast<std::int64_t>(r.id)));
    }
  }
}

/// pointers-valid (CompactGpu sec. 3.4: after rewriting, no pointer refers to a source location;
/// every pointer field of type "pointer to S" refers to a live object of S or a subclass,
/// including fields that are arrays of pointers): each object of an allocated block of T has one
/// reference per config.pointer_slots(T), and every non-null reference targets a slot below the
/// capacity of a block allocated for a type U with U <: the slot's pointee, whose allocation bit
/// is set. Objects in, and references into, blocks allocated for several types are skipped
/// (free-iff-unallocated reports those blocks); objects in unallocated blocks are skipped too
/// (payload-matches-bitmap reports them).
void check_pointers_valid(HeapSnapshot const& s, Out& out) {
  constexpr std::string_view kName = "pointers-valid";
  for (std::uint32_t b = 0; b < num_blocks(s); ++b) {
    auto const type = allocated_type(s, b);
    if (!type) continue;
    auto const slots = cfg(s).pointer_slots(*type);
    for (auto const& [slot, record] : s.blocks[b].objects.entries()) {
      if (!record) continue;
      auto const& r  = *record;
      auto const oid = static_cast<std::int64_t>(r.id);
      // Messages are built only when reported (this loop visits every pointer of the heap).
      auto const here = [&] {
        return "object " + std::to_string(r.id) + " at " + ref_string({b, slot});
      };
      if (r.refs.size() != slots.size()) {
        report(out,
               kName,
               here() + " of " + tname(s, *type) + " has " + std::to_string(r.refs.size()) +
                   " references; the type has " + std::to_string(slots.size()) + " pointer slots",
               At().block(b).bit(slot).type(*type).object_id(oid));
        continue;
      }
      for (std::size_t i = 0; i < slots.size(); ++i) {
        if (!r.refs[i]) continue;
        core::SlotRef const target = *r.refs[i];
        auto const& ps             = slots[i];
        auto const bad             = [&](std::string const& why) {
          std::string const& field = cfg(s).types[ps.declaring_type].pointer_fields[ps.field].name;
          report(out,
                 kName,
                 here() + " field " + field + "[" + std::to_string(ps.element) + "] -> " +
                     ref_string(target) + ": " + why,
                 At().block(b).bit(slot).type(*type).object_id(oid));
        };
        if (target.block >= num_blocks(s) || target.slot >= core::kMaxCapacity) {
          bad("the target is outside the heap");
          continue;
        }
        std::optional<std::uint32_t> const target_type = allocated_type(s, target.block);
        if (!target_type) {
          // Several types: free-iff-unallocated reports the block.
          if (allocated_types(s, target.block).empty())
            bad("the target block is not allocated (dangling pointer)");
          continue;
        }
        std::uint32_t const cap = cfg(s).capacity(*target_type);
        if (target.slot >= cap ||
            ((s.blocks[target.block].alloc_bitmap >> target.slot) & 1u) == 0) {
          bad("no live object there (dangling pointer)");
          continue;
        }
        if (!cfg(s).is_subtype(*target_type, ps.pointee))
          bad("the target is a " + tname(s, *target_type) + ", not a " + tname(s, ps.pointee) +
              " or a subtype");
      }
    }
  }
}

}  // namespace

std::string Violation::to_string() const {
  std::ostringstream os;
  os << "[" << invariant << "] " << message;
  std::string loc;
  auto add = [&](char const* label, std::int64_t v) {
    if (v < 0) return;
    loc += (loc.empty() ? "" : ", ") + std::string(label) + " " + std::to_string(v);
  };
  add("block", block);
  add("bit", bit);
  add("type", type);
  add("level", level);
  add("object", object_id);
  if (!loc.empty()) os << " (" << loc << ")";
  return os.str();
}

// The catalog: one line per invariant. Names are stable (failure files and --only refer to them).
std::vector<Invariant> const& catalog() {
  static std::vector<Invariant> const invariants = {
      // clang-format off
      {kWellFormed, "heaplab HeapSnapshot contract (check/snapshot.hpp)", "the snapshot has the documented shape: valid config, M blocks, one state bitmap per type with M bits, 64 object slots per block iff payloads", false, check_well_formed},
      {"hierarchy-consistent", "DynaSOAr sec. 4.1.1, App. A.5 Def. 1", "every level has the right size, b^{l+1}_i = OR of container C^l_i, bits past the meaningful count are 0", false, check_hierarchy_consistent},
      {"active-implies-allocated", "DynaSOAr sec. 3.4; CompactGpu sec. 2.2", "active[T] => allocated[T]", false, check_active_implies_allocated},
      {"defrag-implies-active", "CompactGpu sec. 2.2", "defrag[T] => active[T] (and so allocated[T])", false, check_defrag_implies_active},
      {"free-iff-unallocated", "DynaSOAr sec. 3, 3.4; CompactGpu sec. 2.2", "a block is free iff it is allocated for no type, and it is allocated for at most one type", false, check_free_iff_unallocated},
      {"active-iff-not-full", "DynaSOAr sec. 3 Fig. 5, sec. 3.4", "an allocated block of T is active[T] iff used < N_T", false, check_active_iff_not_full},
      {"defrag-iff-low-fill", "CompactGpu sec. 3", "an allocated block of T is defrag[T] iff used/N_T <= n/(n+1)", false, check_defrag_iff_low_fill},
      {"allocated-not-empty", "DynaSOAr sec. 3.6, App. A.4", "at quiescence no allocated block is empty", false, check_allocated_not_empty},
      {"capacity-padding-set", "DynaSOAr App. A.1", "in an allocated block of T, allocation bits N_T..63 are set", false, check_capacity_padding_set},
      {"type-id-matches", "DynaSOAr sec. 3.1, Alg. 8", "an allocated[T] block has header type T; header types are kNoType or known ids", false, check_type_id_matches},
      {"free-block-invalidated", "DynaSOAr sec. 3.6, App. A.2", "a free block's allocation bitmap is all ones (invalidated)", false, check_free_block_invalidated},
      {"no-abstract-blocks", "CompactGpu sec. 2.2, Fig. 2", "abstract types have no state bitmaps and no block has an abstract header type", false, check_no_abstract_blocks},
      {"payload-matches-bitmap", "DynaSOAr sec. 3.1", "a record exists exactly at the allocated slots below the capacity of allocated blocks", true, check_payload_matches_bitmap},
      {"object-ids-unique", "heaplab object contract; CompactGpu sec. 3", "no two live objects share an id", true, check_object_ids_unique},
      {"cookie-matches-id", "heaplab object contract (core/cookie.hpp)", "every object's cookie is cookie_of(id)", true, check_cookie_matches_id},
      {"pointers-valid", "CompactGpu sec. 3.4", "every non-null pointer targets a live object whose type <: the field's pointee; one ref per pointer slot", true, check_pointers_valid},
      // clang-format on
  };
  return invariants;
}

namespace {

/// snapshot-well-formed first: the others index the snapshot and are meaningless on a broken
/// shape, so a broken shape yields only its own violations.
bool well_formed(HeapSnapshot const& snapshot, Out& out) {
  check_well_formed(snapshot, out);
  return out.empty();
}

}  // namespace

std::vector<Violation> check_all(HeapSnapshot const& snapshot) {
  Out out;
  if (!well_formed(snapshot, out)) return out;
  for (auto const& inv : catalog()) {
    if (inv.name == kWellFormed) continue;
    if (inv.needs_payloads && !snapshot.has_payloads) continue;
    inv.check(snapshot, out);
  }
  return out;
}

std::vector<Violation> check_one(std::string_view name, HeapSnapshot const& snapshot) {
  Invariant const* found = nullptr;
  for (auto const& inv : catalog())
    if (inv.name == name) found = &inv;
  if (found == nullptr) {
    std::string known;
    for (auto const& inv : catalog()) known += (known.empty() ? "" : ", ") + std::string(inv.name);
    throw core::precondition_error("unknown invariant '" + std::string(name) +
                                   "'; the catalog has: " + known);
  }
  Out out;
  if (!well_formed(snapshot, out)) return out;
  if (found->name == kWellFormed) return out;
  if (found->needs_payloads && !snapshot.has_payloads) return out;
  found->check(snapshot, out);
  return out;
}

}  // namespace heaplab::check
