// Block header protocol (DynaSOAr sec. 3.1, 3.5, 3.6, App. A.1, A.2; DynaSOAr Alg. 6-9).
//
// Every block has a type id, a 64-bit object allocation bitmap and a 64-bit object iteration
// bitmap. DEVIATION from the paper (docs/core.md "Header arrays"): the headers are not stored at
// the start of each block but in three arrays indexed by block id (alloc_bitmaps[M],
// iter_bitmaps[M], types[M]). The property the paper's lock-free reasoning needs (sec. 3.1: "the
// bitmaps are always at the same offset", App. A.2) holds just as well: block b's allocation
// bitmap is always at &alloc_bitmaps[b], whatever type the block has now or had before, so a
// stale thread's RMW on it can never hit object data. Contiguous headers make header scans
// (snapshots, parallel_do, CompactGpu candidate scans) coalesced.
//
// An allocation bitmap with capacity N < 64 keeps bits N..63 (the padding) set for the whole
// lifetime of the block (App. A.1), so "full" is always "all 64 bits set". A free (invalidated)
// block's bitmap is all ones (App. A.2), so no reservation can succeed in it.
//
// This file holds the per-block atomic steps. The steps that also touch the state bitmaps
// (initialize_block, invalidate with rollback, allocate, deallocate) are in heap_protocol.hpp.
#pragma once

#include <cstdint>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/defrag_fill.hpp"
#include "heaplab/core/detail/seed.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"

namespace heaplab::core {

inline constexpr std::uint64_t kFullBitmap = ~std::uint64_t{0};

/// Bits N..63 of a block of capacity N (DynaSOAr App. A.1); 0 for N = 64.
HEAPLAB_HD_INLINE constexpr std::uint64_t padding_bits(std::uint32_t capacity) {
  return ~low_bits(capacity);
}

/// Objects in a block: set allocation bits below the capacity ("used", CompactGpu sec. 2.2).
/// An invalidated bitmap (all ones) counts as full.
HEAPLAB_HD_INLINE std::uint32_t used_slots(std::uint64_t alloc_bitmap, std::uint32_t capacity) {
  return static_cast<std::uint32_t>(popcount(alloc_bitmap & low_bits(capacity)));
}

/// One read-modify-write of an allocation bitmap: the value it read and the value it left.
/// Every state-bitmap update of the protocol is a function of these two values (and of the
/// block's type, which is fixed while the updater holds a bit of the block), so each update is
/// linearized by the RMW it derives from.
struct SlotUpdate {
  std::uint64_t before = kFullBitmap;
  std::uint64_t after  = kFullBitmap;

  /// This RMW set the last zero bit (DynaSOAr Alg. 6 line 10, FULL): the block leaves active[T].
  HEAPLAB_HD_INLINE constexpr bool filled() const {
    return before != kFullBitmap && after == kFullBitmap;
  }
  /// This RMW cleared a bit of a full block (DynaSOAr Alg. 7 line 7, FIRST): the block re-enters
  /// active[T].
  HEAPLAB_HD_INLINE constexpr bool unfilled() const {
    return before == kFullBitmap && after != kFullBitmap;
  }
  /// This RMW freed the last object (DynaSOAr Alg. 7 line 5, EMPTY): the block is to be
  /// invalidated.
  HEAPLAB_HD_INLINE constexpr bool emptied(std::uint32_t capacity) const {
    return after == padding_bits(capacity) && before != after;
  }
  /// +1: the block became a defragmentation candidate with this RMW (set defrag[T]); -1: it
  /// stopped being one (clear defrag[T]); 0: no change. docs/core.md "defrag[T]".
  HEAPLAB_HD_INLINE int defrag_crossing(std::uint32_t capacity, std::uint32_t n) const {
    bool const was = is_defrag_fill(used_slots(before, capacity), capacity, n);
    bool const is  = is_defrag_fill(used_slots(after, capacity), capacity, n);
    return was == is ? 0 : (is ? 1 : -1);
  }
};

/// Result of a reservation attempt: `slots` are the slots this call reserved (0: it reserved
/// nothing because the block is full or invalidated, DynaSOAr Alg. 6 FAIL), `update` the RMW that
/// did it.
struct ReserveResult {
  std::uint64_t slots = 0;
  SlotUpdate update{};
  HEAPLAB_HD_INLINE constexpr bool ok() const { return slots != 0; }
};

/// DynaSOAr Alg. 7's result for a single slot.
enum class DeallocState : std::uint8_t {
  regular,  // neither of the two below
  first,    // the block was full before (FIRST): re-activate it
  empty,    // the block holds no object now (EMPTY): invalidate it
};

struct DeallocResult {
  DeallocState state = DeallocState::regular;
  SlotUpdate update{};
};

/// The three header arrays of a heap of num_blocks blocks. Trivially copyable.
template <class Atomics>
class BlockHeadersRef {
 public:
  BlockHeadersRef() = default;
  HEAPLAB_HD_INLINE BlockHeadersRef(std::uint64_t* alloc_bitmaps,
                                    std::uint64_t* iter_bitmaps,
                                    std::uint32_t* types,
                                    std::uint32_t num_blocks)
      : alloc_(alloc_bitmaps), iter_(iter_bitmaps), types_(types), num_blocks_(num_blocks) {}

  HEAPLAB_HD_INLINE std::uint32_t num_blocks() const { return num_blocks_; }
  HEAPLAB_HD_INLINE std::uint64_t* alloc_bitmap_address(std::uint32_t b) const {
    return alloc_ + b;
  }
  HEAPLAB_HD_INLINE std::uint64_t* iter_bitmap_address(std::uint32_t b) const { return iter_ + b; }
  HEAPLAB_HD_INLINE std::uint32_t* type_address(std::uint32_t b) const { return types_ + b; }

  /// The header type. Relaxed: callers read it only while they hold a bit of the block's
  /// allocation bitmap (a reserved or invalidated slot), which fixes the type (App. A.2, A.3);
  /// the acquire RMW that got them that bit synchronizes with initialize's release store, which
  /// is ordered after the type store.
  HEAPLAB_HD std::uint32_t load_type(std::uint32_t b) const {
    return Atomics::load(types_ + b, MemoryOrder::relaxed);
  }
  HEAPLAB_HD std::uint64_t load_alloc_bitmap(std::uint32_t b, MemoryOrder order) const {
    return Atomics::load(alloc_ + b, order);
  }

  /// DynaSOAr Alg. 8: makes a free block an empty block of type t and capacity N. Precondition: the
  /// caller owns the block (it cleared its free bit), so its bitmap is all ones and no other
  /// thread writes it. The type is published before the bitmap: type and iteration bitmap are
  /// relaxed stores sequenced before the RELEASE store of the allocation bitmap; every thread
  /// that later reserves or invalidates a slot does so with an ACQUIRE RMW that reads this store
  /// or a later RMW of its release sequence, so it sees type t (replaces DynaSOAr Alg. 8's
  /// __threadfence). Linearizes at the bitmap store. The iteration bitmap is cleared so that a
  /// parallel_do running while the block is re-created enumerates none of its new objects.
  HEAPLAB_HD void initialize(std::uint32_t b, std::uint32_t t, std::uint32_t capacity) const {
    if HEAPLAB_MUTANT_CONSTEXPR (mutant::init_bitmap_before_type) {
      // MUTANT init_bitmap_before_type: slots open before the type is written (docs/mutants.md).
      Atomics::store(alloc_ + b, padding_bits(capacity), MemoryOrder::release);
      Atomics::store(types_ + b, t, MemoryOrder::relaxed);
      Atomics::store(iter_ + b, std::uint64_t{0}, MemoryOrder::relaxed);
    } else {
      // MUTANT weak_publish_release: the publishing store is relaxed (docs/mutants.md; found by
      // the explorer's weak-memory mode only).
      // order: release [block-init] (type and iteration bitmap before the allocation bitmap)
      HEAPLAB_MUTANT_CONSTEXPR MemoryOrder const publish =
          mutant::weak_publish_release ? MemoryOrder::relaxed : MemoryOrder::release;
      Atomics::store(types_ + b, t, MemoryOrder::relaxed);
      Atomics::store(iter_ + b, std::uint64_t{0}, MemoryOrder::relaxed);
      Atomics::store(alloc_ + b, padding_bits(capacity), publish);
    }
  }

  /// DynaSOAr Alg. 6, generalized to k slots for request coalescing (sec. 4.2): reserves up to k
  /// free slots, chosen as the lowest zero bits at or after a rotation of `seed`. Returns the slots
  /// reserved (possibly fewer than k: other threads took some; 0: the block is full or
  /// invalidated) and the RMW's before/after values. Loops only while its RMW lost every slot it
  /// aimed at to other threads (they made progress) and free slots remain.
  /// Linearizes at the fetch_or that reserved the slots (App. A.1.1). ACQUIRE: synchronizes
  /// with initialize's release store (the type is visible) and with the release fetch_and of the
  /// slot's previous owner (its accesses to the object happen before ours).
  HEAPLAB_HD ReserveResult try_reserve(std::uint32_t b, std::uint32_t k, std::uint64_t seed) const {
    HEAPLAB_EXPECTS(k >= 1 && k <= 64, "try_reserve: k must be in 1..64");
    unsigned const rot = detail::rotation(seed, 0);
    std::uint64_t cur  = Atomics::load(alloc_ + b, MemoryOrder::relaxed);
    for (;;) {
      std::uint64_t const zeros = ~cur;
      if (zeros == 0) return ReserveResult{0, SlotUpdate{cur, cur}};
      std::uint64_t const want = rotate_left(lowest_set_bits(rotate_right(zeros, rot), k), rot);
      // MUTANT weak_reserve_acquire: the reservation does not acquire (docs/mutants.md; found
      // by the explorer's weak-memory mode only).
      HEAPLAB_MUTANT_CONSTEXPR MemoryOrder const reserve =
          mutant::weak_reserve_acquire ? MemoryOrder::relaxed : MemoryOrder::acquire;
      std::uint64_t const before = Atomics::fetch_or(alloc_ + b, want, reserve);
      std::uint64_t const got    = want & ~before;
      // MUTANT reserve_k_update_one_slot: a k-slot reservation reports its RMW as if it had set
      // only its lowest slot, so fill crossings of the other k-1 slots are lost (docs/mutants.md).
      std::uint64_t const reported = mutant::reserve_k_update_one_slot ? got & (~got + 1u) : want;
      if (got != 0) return ReserveResult{got, SlotUpdate{before, before | reported}};
      cur = before;  // lost every aimed-at slot; retry with the fresher value
    }
  }

  /// DynaSOAr Alg. 7 for one slot: frees `slot`; the state tells the caller what it is responsible
  /// for. Precondition (App. A.1.2): the slot is allocated (checked: a double free throws /traps).
  /// Capacity >= 2, so a single free is never FIRST and EMPTY at once.
  HEAPLAB_HD DeallocResult deallocate(std::uint32_t b,
                                      std::uint32_t slot,
                                      std::uint32_t capacity) const {
    SlotUpdate const u       = release_slots(b, std::uint64_t{1} << slot);
    DeallocState const state = u.emptied(capacity) ? DeallocState::empty
                               : u.unfilled()      ? DeallocState::first
                                                   : DeallocState::regular;
    return DeallocResult{state, u};
  }

  /// Frees every slot in `slots` with one fetch_and (a coalesced reservation's rollback, A.1.2).
  /// Precondition: all of them are allocated. Linearizes at the fetch_and. RELEASE: the owner's
  /// accesses to the objects happen before the next owner's (its reserve is an acquire RMW) and
  /// before the block's reuse (invalidation is an acquire RMW).
  HEAPLAB_HD SlotUpdate release_slots(std::uint32_t b, std::uint64_t slots) const {
    // MUTANT free_relaxed: no release (docs/mutants.md; found by ThreadSanitizer and by the
    // explorer's weak-memory mode).
    HEAPLAB_MUTANT_CONSTEXPR MemoryOrder const free_order =
        mutant::free_relaxed ? MemoryOrder::relaxed : MemoryOrder::release;
    std::uint64_t const before = Atomics::fetch_and(alloc_ + b, ~slots, free_order);
    HEAPLAB_EXPECTS((before & slots) == slots,
                    "deallocate: a slot was not allocated (double free or foreign pointer)");
    return SlotUpdate{before, before & ~slots};
  }

  /// DynaSOAr Alg. 9 line 2: sets every bit. The zero bits of `before` are the slots this call
  /// invalidated; before == padding means it invalidated the whole (empty) block, before == all
  /// ones that it invalidated nothing. ACQUIRE: the invalidator reads the type next, and the
  /// previous owners' release frees happen before the block's reuse via this RMW.
  HEAPLAB_HD SlotUpdate invalidate_free_slots(std::uint32_t b) const {
    // MUTANT weak_invalidate_acquire: the invalidation does not acquire (docs/mutants.md; found
    // by the explorer's weak-memory mode only).
    HEAPLAB_MUTANT_CONSTEXPR MemoryOrder const invalidate =
        mutant::weak_invalidate_acquire ? MemoryOrder::relaxed : MemoryOrder::acquire;
    std::uint64_t const before = Atomics::fetch_or(alloc_ + b, kFullBitmap, invalidate);
    return SlotUpdate{before, kFullBitmap};
  }

  /// DynaSOAr Alg. 9 line 8: clears exactly the bits the invalidation with result
  /// `invalidation.before` set (its zero bits). RELEASE: the invalidator's type read happens before
  /// a later re-initialization's type store (which happens after a later successful invalidation,
  /// an acquire RMW reading this value or a later one).
  HEAPLAB_HD SlotUpdate rollback_invalidation(std::uint32_t b,
                                              std::uint64_t invalidated_before) const {
    std::uint64_t const before =
        Atomics::fetch_and(alloc_ + b, invalidated_before, MemoryOrder::release);
    return SlotUpdate{before, before & invalidated_before};
  }

 private:
  std::uint64_t* alloc_     = nullptr;
  std::uint64_t* iter_      = nullptr;
  std::uint32_t* types_     = nullptr;
  std::uint32_t num_blocks_ = 0;
};

}  // namespace heaplab::core
