// Building and querying HeapSnapshots: hierarchical bitmap helpers, the snapshot of a freshly
// created heap, and block-level edits that keep every state bitmap consistent. Tests, the model
// and the GPU snapshot code use these so that "a consistent snapshot" is spelled once.
//
// Every function that takes a block, bit or type index checks it and throws
// core::precondition_error with a message naming the bad value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/check/snapshot.hpp"
#include "heaplab/core/heap_config.hpp"

namespace heaplab::check {

// ---------------------------------------------------------------- hierarchical bitmaps
// DynaSOAr sec. 4.1.1: level 0 holds the bits in ceil(N / 64) containers; level l + 1 has one bit
// per container of level l; the top level is a single container.

/// Meaningful bits per level of a bitmap of `num_bits` bits: counts[0] = num_bits,
/// counts[l + 1] = ceil(counts[l] / 64), ending at the first level that fits one container.
/// Empty for num_bits == 0 (an absent bitmap). counts.size() == BitmapSnapshot::level_count(n).
std::vector<std::uint32_t> level_bit_counts(std::uint32_t num_bits);

/// Containers per level: ceil(counts[l] / 64) for each level of level_bit_counts(num_bits).
std::vector<std::uint32_t> level_container_counts(std::uint32_t num_bits);

/// A bitmap of `num_bits` bits, every bit clear, every level present with its exact number of
/// containers. num_bits == 0 gives the absent bitmap (no levels) that abstract types have.
BitmapSnapshot make_bitmap(std::uint32_t num_bits);

/// Sets or clears level-0 bit `bit` and updates the one bit per upper level above it so that
/// each container on the path is consistent with its summary bit (DynaSOAr App. A.5 Def. 1).
/// A bitmap consistent before stays consistent; inconsistencies elsewhere (planted by a test)
/// are left alone. Preconditions: bit < num_bits and the bitmap has the shape of num_bits.
void assign_bit(BitmapSnapshot& bitmap, std::uint32_t bit, bool value);
inline void set_bit(BitmapSnapshot& bitmap, std::uint32_t bit) { assign_bit(bitmap, bit, true); }
inline void clear_bit(BitmapSnapshot& bitmap, std::uint32_t bit) { assign_bit(bitmap, bit, false); }

/// Gives the bitmap the level shape of num_bits (levels above 0 resized; level 0 resized only if
/// its size is wrong, keeping its bits) and recomputes every level above 0 from level 0:
/// b^{l+1}_i = OR of container C^l_i. Bits of level 0 past num_bits are not touched (the
/// catalog reports them), so recompute_levels never hides a level-0 error.
void recompute_levels(BitmapSnapshot& bitmap);

/// Level-0 bits below num_bits that are set, ascending.
std::vector<std::uint32_t> set_bits(BitmapSnapshot const& bitmap);

/// Number of level-0 bits below num_bits that are set.
std::uint32_t count_set(BitmapSnapshot const& bitmap);

/// Whether `bitmap` is present (not absent) and bit `bit` of level 0 is set; false for an absent
/// bitmap or a bit past num_bits. Never throws: for checkers reading possibly broken snapshots.
bool test_bit(BitmapSnapshot const& bitmap, std::uint32_t bit);

// ---------------------------------------------------------------- block queries

/// Bits N_T..63 of an allocation bitmap: set in every allocated block of capacity N_T so that
/// no thread can reserve them (DynaSOAr App. A.1). 0 for capacity 64.
std::uint64_t padding_mask(std::uint32_t capacity);

/// Objects in a block: popcount of the allocation bitmap below the capacity ("used" of
/// CompactGpu sec. 2.2). Padding bits are not objects.
std::uint32_t used_slots(std::uint64_t alloc_bitmap, std::uint32_t capacity);

/// Concrete types T whose allocated[T] has bit `block` set. At quiescence at most one
/// (free-iff-unallocated). Abstract types are never listed (their bitmaps must be absent).
std::vector<std::uint32_t> allocated_types(HeapSnapshot const& snapshot, std::uint32_t block);

/// The unique concrete type T with allocated[T][block]; nullopt when there is none or several.
std::optional<std::uint32_t> allocated_type(HeapSnapshot const& snapshot, std::uint32_t block);

/// A type's name, or "#<id>" / "none" for an id the config does not know / kNoType.
std::string type_name(core::HeapConfig const& config, std::uint32_t type);

// ---------------------------------------------------------------- snapshot construction

/// The state of a freshly created heap (DynaSOAr sec. 3.4 "Initially, every bit is 1" for the
/// free bitmap and 0 for allocated/active): every block free, its allocation bitmap fully set
/// (invalidated: a free block must not accept reservations, App. A.2), iteration bitmap 0, type
/// kNoType; free bitmap all set; allocated/active/defrag of every concrete type all clear;
/// abstract types get absent bitmaps (CompactGpu Fig. 2). With payloads every block has 64 empty
/// object slots. Throws core::precondition_error if the config does not validate.
HeapSnapshot make_empty_snapshot(core::HeapConfig const& config, bool with_payloads);

/// A record for a fresh object of type `type`: the id, cookie_of(id), and one null reference per
/// config.pointer_slots(type).
ObjectRecord make_object_record(core::HeapConfig const& config,
                                std::uint32_t type,
                                std::uint64_t id);

/// Makes `block` an allocated block of concrete type `type` whose objects occupy exactly the slots
/// in `slots` (bits at or above N_T must be clear), with every state bit as it is at quiescence:
/// header type = type, allocation bitmap = slots | padding, free clear, allocated[type] set,
/// active[type] iff not full, defrag[type] iff core::is_defrag_fill(used, N_T, config n), and every
/// other type's allocated/active/defrag bit for the block clear. The iteration bitmap is set to
/// the allocation bitmap (as after the copy before a parallel_do, DynaSOAr sec. 3.1).
/// With payloads, the block's records are replaced by fresh records (make_object_record) for the
/// set slots in ascending slot order with ids first_id, first_id + 1, ...; returns the next unused
/// id (first_id + popcount(slots)); without payloads returns first_id.
/// slots == 0 is allowed and builds the empty allocated block that allocated-not-empty reports.
std::uint64_t make_block_allocated(HeapSnapshot& snapshot,
                                   std::uint32_t block,
                                   std::uint32_t type,
                                   std::uint64_t slots,
                                   std::uint64_t first_id = 0);

/// Makes `block` free as after a successful invalidation and deletion (DynaSOAr Alg. 2 lines 7-11,
/// App. A.2): allocation bitmap all ones, free set, every allocated/active/defrag bit clear,
/// header type left as it was (stale), records removed.
void make_block_free(HeapSnapshot& snapshot, std::uint32_t block);

}  // namespace heaplab::check
