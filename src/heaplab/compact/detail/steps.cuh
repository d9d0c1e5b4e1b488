// The per-thread bodies of CompactGpu's kernels (docs/compaction.md). Each function is what one
// GPU thread does for one index of its kernel; the kernels (kernels.cuh) call them in grid-stride
// loops and the CPU emulation (proofs_tests/compact/support) calls them for every index in turn,
// so the algorithm the CPU tests check against the model is the one the GPU runs.
//
// Data races: the steps of one kernel write disjoint locations (an object slot, a forwarding
// pointer slot, one block's bitmap word), except the state bitmaps, which they change with the
// core's atomic bitmap operations (DynaSOAr sec. 4.1, Lemma 5: every bit is changed at most once
// per kernel, so the hierarchy is consistent when the kernel ends). A kernel never reads what
// another thread of the same kernel writes; that is why forwarding pointers need their own
// kernel (CompactGpu sec. 3.3 footnote 6): a forwarding pointer overwrites the first bytes of the
// source's data segment, which other threads of the move kernel may still be copying.
//
// nvcc only (the heap ref is a CUDA header); host and device.
#pragma once

#include <cstdint>
#include <cstring>

#include "heaplab/compact/detail/reflection.hpp"
#include "heaplab/compact/pass_plan.hpp"
#include "heaplab/core/atomics.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/block_headers.hpp"
#include "heaplab/core/defrag_fill.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/soa/heap_types.hpp"

namespace heaplab::compact::detail {

using core::MemoryOrder;

/// Counters of one pass, in device memory (zeroed before the pass).
struct PassCounters {
  unsigned long long objects_moved         = 0;
  unsigned long long pointers_scanned      = 0;
  unsigned long long pointers_rewritten    = 0;
  unsigned long long roots_scanned         = 0;
  unsigned long long roots_rewritten       = 0;
  unsigned long long defrag_bits_corrected = 0;
};

HEAPLAB_HD_INLINE void add_to_counter(unsigned long long* counter, unsigned long long value) {
#if HEAPLAB_DEVICE_CODE
  if (value != 0) atomicAdd(counter, value);
#else
  *counter += value;  // the CPU emulation runs one step at a time
#endif
}

/// Plain (non-atomic) 8-byte load and store of object data; memcpy on the host (no aliasing).
HEAPLAB_HD_INLINE std::uint64_t load_word(unsigned char const* at) {
#if HEAPLAB_DEVICE_CODE
  return *reinterpret_cast<std::uint64_t const*>(at);
#else
  std::uint64_t v = 0;
  std::memcpy(&v, at, sizeof v);
  return v;
#endif
}
HEAPLAB_HD_INLINE void store_word(unsigned char* at, std::uint64_t v) {
#if HEAPLAB_DEVICE_CODE
  *reinterpret_cast<std::uint64_t*>(at) = v;
#else
  std::memcpy(at, &v, sizeof v);
#endif
}

/// Copies one SOA element of `bytes` bytes with the widest access its size allows (16, 8, 4, 2
/// or 1 bytes). Every element is aligned to the largest power of two dividing its size, up to
/// 128 (soa/layout.hpp alignment rule: a unit starts at a multiple of min(128, bit_ceil(N *
/// size))).
HEAPLAB_HD_INLINE void copy_element(unsigned char* to,
                                    unsigned char const* from,
                                    std::uint32_t bytes) {
#if HEAPLAB_DEVICE_CODE
  if (bytes % 16u == 0) {
    for (std::uint32_t k = 0; k < bytes / 16u; ++k)
      reinterpret_cast<ulonglong2*>(to)[k] = reinterpret_cast<ulonglong2 const*>(from)[k];
  } else if (bytes % 8u == 0) {
    for (std::uint32_t k = 0; k < bytes / 8u; ++k)
      reinterpret_cast<std::uint64_t*>(to)[k] = reinterpret_cast<std::uint64_t const*>(from)[k];
  } else if (bytes % 4u == 0) {
    for (std::uint32_t k = 0; k < bytes / 4u; ++k)
      reinterpret_cast<std::uint32_t*>(to)[k] = reinterpret_cast<std::uint32_t const*>(from)[k];
  } else if (bytes % 2u == 0) {
    for (std::uint32_t k = 0; k < bytes / 2u; ++k)
      reinterpret_cast<std::uint16_t*>(to)[k] = reinterpret_cast<std::uint16_t const*>(from)[k];
  } else {
    for (std::uint32_t k = 0; k < bytes; ++k) to[k] = from[k];
  }
#else
  std::memcpy(to, from, bytes);
#endif
}

/// Everything the steps of one pass read, passed to kernels by value. `Ref` is soa::HeapRef.
template <class Ref>
struct PassView {
  Ref heap{};
  std::uint32_t type     = 0;  // T
  std::uint32_t capacity = 0;  // N_T
  std::uint32_t n        = 1;  // the call's factor
  std::uint32_t heap_n   = 1;  // the heap's factor: defrag[T] follows it
  std::uint32_t sources  = 0;  // B'
  /// R: this pass's candidates, ascending (device memory, r entries).
  std::uint32_t const* R = nullptr;
  /// Level 0 of the bitmap R was enumerated from: defrag[T] when n is the heap's, else
  /// `call_candidates`.
  std::uint64_t const* candidates = nullptr;
  /// The call's own candidate bitmap (level 0 only) when n differs from the heap's; nullptr
  /// otherwise. Kept in step with the fills like defrag[T], with the call's n.
  std::uint64_t* call_candidates = nullptr;
  /// Recompute variants: the allocation bitmaps of R[0 .. (n + 1) B') before the pass, i.e. the
  /// bitmaps of the records (sec. 3.8 Fig. 7; the block ids of record s are R[s + i B']).
  std::uint64_t* record_bitmaps = nullptr;
  PassCounters* counters        = nullptr;
  /// This pass's warp-order perturbation seed (core/perturb.hpp); 0: off.
  std::uint64_t perturb_seed = 0;

  HEAPLAB_HD_INLINE std::uint32_t source(std::uint32_t s) const { return R[s]; }
  HEAPLAB_HD_INLINE std::uint32_t target(std::uint32_t s, std::uint32_t i) const {
    return R[pass_block_index(s, i, sources)];
  }
  /// R[B']: every source has a smaller block id (R is sorted), every target a larger one.
  HEAPLAB_HD_INLINE std::uint32_t source_bound() const { return R[sources]; }
  HEAPLAB_HD_INLINE unsigned char* block(std::uint32_t b) const {
    return reinterpret_cast<unsigned char*>(
        static_cast<std::uintptr_t>(heap.block_base() + std::uint64_t{b} * Ref::block_bytes()));
  }
  HEAPLAB_HD_INLINE std::uint64_t alloc_bitmap(std::uint32_t b) const {
    return heap.core().blocks().load_alloc_bitmap(b, MemoryOrder::relaxed);
  }
  HEAPLAB_HD_INLINE bool is_candidate(std::uint32_t b) const {
    std::uint64_t const word =
        core::DeviceAtomics::load(candidates + b / 64u, MemoryOrder::relaxed);
    return ((word >> (b % 64u)) & 1u) != 0;
  }
  /// CompactGpu Alg. 3 line 2: block b is a source of this pass. `bound` = source_bound().
  HEAPLAB_HD_INLINE bool is_source(std::uint32_t b, std::uint32_t bound) const {
    return b < bound && is_candidate(b);
  }
};

/// The block id of p if p is a non-null pointer to a T object in a block below `bound`
/// (the part of CompactGpu Alg. 3 line 2 that needs no memory access); false otherwise.
template <class Ref>
HEAPLAB_HD_INLINE bool block_below_bound(PassView<Ref> const& v,
                                         std::uint64_t p,
                                         std::uint32_t bound,
                                         std::uint32_t& block) {
  if (p == 0 || core::pointer_type(p) != v.type) return false;
  std::uint64_t const address = core::pointer_block_address(p);
  std::uint64_t const base    = v.heap.block_base();
  if (address < base) return false;
  std::uint64_t const b = (address - base) / Ref::block_bytes();
  // MUTANT rewrite_filter_off_by_one: pointers into R[B] (the first target) pass the filter too.
  std::uint64_t const end =
      core::mutant::rewrite_filter_off_by_one ? std::uint64_t{bound} + 1u : std::uint64_t{bound};
  if (b >= end) return false;
  block = static_cast<std::uint32_t>(b);
  return true;
}

/// CompactGpu Alg. 1 for the thread that handles live object `loc` of source s: its slot in the
/// source and its destination (target block id and slot), from the current allocation bitmaps (the
/// pass has not changed any yet). False if the source has at most `loc` live objects.
template <class Ref>
HEAPLAB_HD_INLINE bool relocation_of(PassView<Ref> const& v,
                                     std::uint32_t s,
                                     std::uint32_t loc,
                                     std::uint32_t& source_slot,
                                     std::uint32_t& target_block,
                                     std::uint32_t& target_slot) {
  std::uint64_t const live = v.alloc_bitmap(v.source(s)) & core::low_bits(v.capacity);
  if (loc >= static_cast<std::uint32_t>(core::popcount(live))) return false;
  Destination const d =
      destination_of(loc, v.n, [&](std::uint32_t i) { return v.alloc_bitmap(v.target(s, i)); });
  HEAPLAB_EXPECTS(d.target != 0,
                  "CompactGpu move: a source's objects do not fit into its targets (a block of R "
                  "is not a defragmentation candidate for this n)");
  source_slot  = static_cast<std::uint32_t>(core::nth_set_bit(live, static_cast<int>(loc)));
  target_block = v.target(s, d.target);
  target_slot  = d.slot;
  return true;
}

/// Copies every field of the T object at (from_block, from_slot) to (to_block, to_slot): field
/// by field in the outer loop, so that the threads of a warp (neighbouring objects of one
/// source) copy one SOA array at a time, coalesced (sec. 3.2). Inherited fields included.
template <class Table>
HEAPLAB_HD_INLINE void copy_object(Table const& table,
                                   std::uint32_t type,
                                   unsigned char const* from_block,
                                   std::uint32_t from_slot,
                                   unsigned char* to_block,
                                   std::uint32_t to_slot) {
  std::uint32_t const fields = table.types[type].num_fields;
  for (std::uint32_t j = 0; j < fields; ++j) {
    soa::FieldLayout const& f = table.field(type, j);
    for (std::uint32_t e = 0; e < f.elements; ++e) {
      std::uint64_t const unit = std::uint64_t{f.offset} + std::uint64_t{e} * f.stride;
      if constexpr (core::mutant::copy_widens_narrow_fields) {
        // MUTANT copy_widens_narrow_fields: every element is copied as 8 bytes (a width
        // mix-up), so a field narrower than 8 bytes also overwrites the next slots' elements
        // and, from the last slots of its array, the start of the next field's array
        // (docs/mutants.md).
        if (f.element_bytes < 8u) {
          unsigned char* to = to_block + unit + std::uint64_t{to_slot} * f.element_bytes;
          unsigned char const* from =
              from_block + unit + std::uint64_t{from_slot} * f.element_bytes;
          for (std::uint32_t k = 0; k < 8u; ++k) to[k] = from[k];
          continue;
        }
      }
      copy_element(to_block + unit + std::uint64_t{to_slot} * f.element_bytes,
                   from_block + unit + std::uint64_t{from_slot} * f.element_bytes,
                   f.element_bytes);
    }
  }
}

// ------------------------------------------------------------------------------------ scan

/// Level-0 word w of the call's candidate bitmap for factor n (used when n differs from the
/// heap's): bit b set iff b is in allocated[T] and used(b) / N_T <= n / (n + 1).
template <class Ref>
HEAPLAB_HD_INLINE std::uint64_t call_candidate_word(Ref const& heap,
                                                    std::uint32_t type,
                                                    std::uint32_t n,
                                                    std::uint32_t w) {
  std::uint32_t const cap = heap.core().capacity(type);
  std::uint64_t allocated =
      core::DeviceAtomics::load(heap.core().allocated(type).container(0, w), MemoryOrder::relaxed);
  std::uint64_t candidates = 0;
  while (allocated != 0) {
    int const bit = core::find_first_set(allocated);
    allocated &= allocated - 1u;
    std::uint32_t const b = w * 64u + static_cast<std::uint32_t>(bit);
    std::uint64_t const used =
        core::used_slots(heap.core().blocks().load_alloc_bitmap(b, MemoryOrder::relaxed), cap);
    if (core::is_defrag_fill(static_cast<std::uint32_t>(used), cap, n))
      candidates |= std::uint64_t{1} << bit;
  }
  return candidates;
}

// ------------------------------------------------------------------------------------ copy

/// Recompute variants, index j < (n + 1) B': the record bitmaps (sec. 3.8 Fig. 7) are the
/// allocation bitmaps of R[0 .. (n + 1) B') before anything moves.
template <class Ref>
HEAPLAB_HD_INLINE void snapshot_record_bitmap(PassView<Ref> const& v, std::uint32_t j) {
  v.record_bitmaps[j] = v.alloc_bitmap(v.R[j]);
}

/// CompactGpu Alg. 1 (move_objects), thread index i < 64 B': thread i copies live object i % 64 of
/// source i / 64 to its destination.
template <class Ref, class Table>
HEAPLAB_HD_INLINE void move_object(PassView<Ref> const& v, Table const& table, std::uint64_t i) {
  auto const s            = static_cast<std::uint32_t>(i / kThreadsPerSource);
  auto const loc          = static_cast<std::uint32_t>(i % kThreadsPerSource);
  std::uint32_t from_slot = 0, to_block = 0, to_slot = 0;
  if (!relocation_of(v, s, loc, from_slot, to_block, to_slot)) return;
  copy_object(table, v.type, v.block(v.source(s)), from_slot, v.block(to_block), to_slot);
}

/// CompactGpu Alg. 2 (place_forwarding_ptrs), same indices as move_object: stores the new location
/// of the object into forwarding_ptr[slot] of the source block, i.e. the 8 bytes at offset 8 * slot
/// of its data segment (Listing 1: the block is a union of the data segment and N_T forwarding
/// pointers; block sizes reserve N_T * 8 bytes, soa/heap_types.hpp block_bytes).
template <class Ref>
HEAPLAB_HD_INLINE void place_forwarding_pointer(PassView<Ref> const& v, std::uint64_t i) {
  auto const s            = static_cast<std::uint32_t>(i / kThreadsPerSource);
  auto const loc          = static_cast<std::uint32_t>(i % kThreadsPerSource);
  std::uint32_t from_slot = 0, to_block = 0, to_slot = 0;
  if (!relocation_of(v, s, loc, from_slot, to_block, to_slot)) return;
  store_word(v.block(v.source(s)) + std::uint64_t{from_slot} * sizeof(std::uint64_t),
             v.heap.object_pointer(to_block, to_slot, v.type));
}

// ---------------------------------------------------------------------------- block states

/// Sec. 3.5 for the targets of source s (one thread per source; no two sources share a target):
/// target i receives the next min(left, free slots) objects in its lowest free slots (what
/// destination_of assigned), so its allocation bitmap gains those bits; it leaves active[T] if
/// it became full, defrag[T] if its fill passed heap_n / (heap_n + 1), and the call's candidate
/// bitmap if its fill passed n / (n + 1). A block only gains objects here, so no bit is set.
/// Returns the number of objects source s moved. Runs after the move (and forwarding) kernel,
/// before the rewrite.
template <class Ref>
HEAPLAB_HD_INLINE std::uint32_t commit_targets(PassView<Ref> const& v, std::uint32_t s) {
  auto const& state       = v.heap.core();
  std::uint32_t const cap = v.capacity;
  std::uint32_t const moved =
      static_cast<std::uint32_t>(core::popcount(v.alloc_bitmap(v.source(s)) & core::low_bits(cap)));
  std::uint32_t left = moved;
  for (std::uint32_t i = 1; i <= v.n && left > 0; ++i) {
    std::uint32_t const b      = v.target(s, i);
    std::uint64_t const before = v.alloc_bitmap(b);
    std::uint32_t const free   = static_cast<std::uint32_t>(core::popcount(~before));
    std::uint32_t const take   = left < free ? left : free;
    if (take == 0) continue;
    std::uint64_t const after       = before | received_slots(before, take);
    std::uint32_t const used_before = core::used_slots(before, cap);
    std::uint32_t const used_after  = used_before + take;
    core::DeviceAtomics::store(state.blocks().alloc_bitmap_address(b), after, MemoryOrder::relaxed);
    // MUTANT full_target_stays_active: a target that the pass filled stays in active[T].
    if (after == core::kFullBitmap && !core::mutant::full_target_stays_active) {
      bool const cleared = state.active(v.type).try_clear(b, MemoryOrder::relaxed);
      HEAPLAB_EXPECTS(cleared, "CompactGpu: a target that filled up was not in active[T]");
    }
    if (core::is_defrag_fill(used_before, cap, v.heap_n) &&
        !core::is_defrag_fill(used_after, cap, v.heap_n)) {
      bool const cleared = state.defrag(v.type).try_clear(b, MemoryOrder::relaxed);
      HEAPLAB_EXPECTS(cleared, "CompactGpu: a target with low fill was not in defrag[T]");
    }
    if (v.call_candidates != nullptr && !core::is_defrag_fill(used_after, cap, v.n))
      core::DeviceAtomics::fetch_and(
          v.call_candidates + b / 64u, ~(std::uint64_t{1} << (b % 64u)), MemoryOrder::relaxed);
    left -= take;
  }
  HEAPLAB_EXPECTS(left == 0, "CompactGpu: a source's objects do not fit into its targets");
  return moved;
}

/// Sec. 3.5 for source s (one thread per source), after the rewrite: the block becomes free,
/// as a deletion by the allocator leaves it (core::HeapRef::invalidate_block): allocation bitmap
/// invalidated (all ones, DynaSOAr App. A.2), out of active[T], defrag[T] and allocated[T], into
/// free with a release set (the next claimer's acquire clear_any orders our writes before its
/// use of the block). The header type stays, as after a deletion.
template <class Ref>
HEAPLAB_HD_INLINE void release_source(PassView<Ref> const& v, std::uint32_t s) {
  auto const& state     = v.heap.core();
  std::uint32_t const b = v.source(s);
  core::DeviceAtomics::store(
      state.blocks().alloc_bitmap_address(b), core::kFullBitmap, MemoryOrder::relaxed);
  bool const was_active = state.active(v.type).try_clear(b, MemoryOrder::relaxed);
  HEAPLAB_EXPECTS(was_active, "CompactGpu: a source block was not in active[T]");
  if (state.defrag(v.type).get(b, MemoryOrder::relaxed))
    (void)state.defrag(v.type).try_clear(b, MemoryOrder::relaxed);
  bool const was_allocated = state.allocated(v.type).try_clear(b, MemoryOrder::relaxed);
  HEAPLAB_EXPECTS(was_allocated, "CompactGpu: a source block was not in allocated[T]");
  if (v.call_candidates != nullptr)
    core::DeviceAtomics::fetch_and(
        v.call_candidates + b / 64u, ~(std::uint64_t{1} << (b % 64u)), MemoryOrder::relaxed);
  bool const freed = state.free_blocks().try_set(b, MemoryOrder::release);
  HEAPLAB_EXPECTS(freed, "CompactGpu: a source block was already free");
}

/// The n-override rule at the end of a call (docs/model.md): block b's defrag[T] bit follows
/// its fill with the heap's factor. Returns 1 if the bit had to change (the passes keep it in
/// step, so a 1 reveals a bug), else 0.
template <class Ref>
HEAPLAB_HD_INLINE std::uint32_t resync_defrag_bit(Ref const& heap,
                                                  std::uint32_t type,
                                                  std::uint32_t heap_n,
                                                  std::uint32_t b) {
  auto const& state = heap.core();
  if (!state.allocated(type).get(b, MemoryOrder::relaxed)) return 0;
  std::uint32_t const cap = state.capacity(type);
  bool const want         = core::is_defrag_fill(
      core::used_slots(state.blocks().load_alloc_bitmap(b, MemoryOrder::relaxed), cap),
      cap,
      heap_n);
  bool const have = state.defrag(type).get(b, MemoryOrder::relaxed);
  if (want == have) return 0;
  if (want)
    (void)state.defrag(type).try_set(b, MemoryOrder::relaxed);
  else
    (void)state.defrag(type).try_clear(b, MemoryOrder::relaxed);
  return 1;
}

// --------------------------------------------------------------------------------- rewrite

/// CompactGpu Alg. 3 with forwarding pointers: p's new value, or p if it does not point to a
/// source. Reads memory only for a pointer whose block is a source: the candidate bit (likely
/// cached) and then the forwarding pointer.
template <class Ref>
struct ForwardingLookup {
  PassView<Ref> view;
  std::uint32_t bound = 0;  // R[B']

  HEAPLAB_HD_INLINE std::uint64_t operator()(std::uint64_t p) const {
    std::uint32_t b = 0;
    if (!block_below_bound(view, p, bound, b) || !view.is_candidate(b)) return p;
    return load_word(view.block(b) + std::uint64_t{core::pointer_slot(p)} * sizeof(std::uint64_t));
  }
};

/// Sec. 3.8: the new location recomputed from the record of p's block instead of read from a
/// forwarding pointer. `source_ids` = R[0 .. B') (sorted; shared memory on the GPU): the record
/// index s of a source is found by binary search, which replaces the candidate-bit test.
/// `ids` = R[0 .. (n + 1) B') and `bitmaps` = the record bitmaps (global memory for
/// Recompute-Global, shared memory for Recompute-Shared). The rank j of the object among the
/// source's live objects and CompactGpu Alg. 1 over the targets' record bitmaps give the
/// destination.
template <class Ref>
struct RecomputeLookup {
  PassView<Ref> view;
  std::uint32_t bound             = 0;
  std::uint32_t const* source_ids = nullptr;
  std::uint32_t const* ids        = nullptr;
  std::uint64_t const* bitmaps    = nullptr;

  HEAPLAB_HD_INLINE std::uint64_t operator()(std::uint64_t p) const {
    std::uint32_t b = 0;
    if (!block_below_bound(view, p, bound, b)) return p;
    std::uint32_t lo = 0, hi = view.sources;  // first index with source_ids[index] >= b
    while (lo < hi) {
      std::uint32_t const mid = (lo + hi) / 2u;
      if (source_ids[mid] < b)
        lo = mid + 1u;
      else
        hi = mid;
    }
    if (lo == view.sources || source_ids[lo] != b) return p;
    std::uint32_t const s      = lo;
    std::uint64_t const source = bitmaps[s];
    std::uint32_t const slot   = core::pointer_slot(p);
    if (((source >> slot) & 1u) == 0) return p;  // not a live object: nothing moved from there
    auto const j        = static_cast<std::uint32_t>(core::popcount(source & core::low_bits(slot)));
    Destination const d = destination_of(
        j, view.n, [&](std::uint32_t i) { return bitmaps[pass_block_index(s, i, view.sources)]; });
    HEAPLAB_EXPECTS(d.target != 0, "CompactGpu rewrite: a record's objects do not fit");
    return view.heap.object_pointer(
        ids[pass_block_index(s, d.target, view.sources)], d.slot, view.type);
  }
};

/// What one rewrite step examined: 1 if it read a live pointer slot, 1 if it changed it.
struct RewriteCount {
  std::uint32_t scanned   = 0;
  std::uint32_t rewritten = 0;
};

/// A pointer slot to examine and the value read from it; at == nullptr: nothing to examine.
struct LoadedPointer {
  unsigned char* at   = nullptr;
  std::uint64_t value = 0;
};

/// Sec. 3.4 for holder type U = h.holder, index i < (holder blocks) * h.count * 64: pointer
/// slot i % 64 of SOA array (i / 64) % h.count of holder block (i / 64) / h.count. Consecutive
/// threads read consecutive slots of one SOA array (coalesced). Skips free slots and, when U is
/// T, the sources themselves (their objects moved; the moved copies in the targets are scanned,
/// which rewrites the pointers of moved objects too). The first of the three phases of a
/// rewrite (load, lookup, store), split so that a thread can have several loads in flight.
template <class Ref, class Table>
HEAPLAB_HD_INLINE LoadedPointer load_holder_slot(PassView<Ref> const& v,
                                                 Table const& table,
                                                 HolderArrays const& h,
                                                 std::uint32_t const* holder_blocks,
                                                 std::uint32_t bound,
                                                 std::uint64_t i) {
  auto const slot          = static_cast<std::uint32_t>(i % kThreadsPerSource);
  std::uint64_t const pair = i / kThreadsPerSource;
  auto const array         = static_cast<std::uint32_t>(pair % h.count);
  if (slot >= h.capacity) return {};
  std::uint32_t const b = holder_blocks[pair / h.count];
  if (h.holder == v.type && v.is_source(b, bound)) return {};
  if (((v.alloc_bitmap(b) >> slot) & 1u) == 0) return {};
  unsigned char* const at = v.block(b) + table.incoming[h.first + array].offset +
                            std::uint64_t{slot} * sizeof(std::uint64_t);
  return LoadedPointer{at, load_word(at)};
}

/// The last phase: stores the new value if it differs.
HEAPLAB_HD_INLINE RewriteCount store_rewritten(LoadedPointer const& p, std::uint64_t new_value) {
  if (p.at == nullptr) return {};
  if (new_value == p.value) return {1, 0};
  store_word(p.at, new_value);
  return {1, 1};
}

/// The three phases for one index (what the CPU emulation runs per index).
template <class Ref, class Table, class Lookup>
HEAPLAB_HD_INLINE RewriteCount rewrite_holder_slot(PassView<Ref> const& v,
                                                   Table const& table,
                                                   HolderArrays const& h,
                                                   std::uint32_t const* holder_blocks,
                                                   std::uint32_t bound,
                                                   Lookup const& lookup,
                                                   std::uint64_t i) {
  LoadedPointer const p = load_holder_slot(v, table, h, holder_blocks, bound, i);
  return store_rewritten(p, p.at == nullptr ? 0 : lookup(p.value));
}

/// External roots (beyond the paper): entry i of a root array whose declared pointee is a
/// supertype of T.
template <class Lookup>
HEAPLAB_HD_INLINE RewriteCount rewrite_root(std::uint64_t* roots,
                                            Lookup const& lookup,
                                            std::uint64_t i) {
  std::uint64_t const p = roots[i];
  std::uint64_t const q = lookup(p);
  if (q == p) return {1, 0};
  roots[i] = q;
  return {1, 1};
}

}  // namespace heaplab::compact::detail
