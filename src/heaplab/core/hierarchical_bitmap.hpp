// Hierarchical bitmap (DynaSOAr sec. 4.1): a lock-free bitmap of N bits whose set bits are found
// with O(log_64 N) memory accesses.
//
// Layout. Level 0 holds the N bits in ceil(N / 64) 64-bit containers; level l + 1 holds one bit
// per container of level l (b^{l+1}_i summarizes C^l_i); the top level is a single container.
// All levels live in ONE contiguous uint64_t array (level 0 first), described by a BitmapLayout.
// BitmapRef = pointer + layout: trivially copyable, passed by value into kernels.
//
// Consistency (App. A.5 Def. 1): b^{l+1}_i = OR_k b^l_{64 i + k}. It holds at quiescence only;
// while operations run, upper levels lag (sec. 4.1.1). Searches tolerate the lag by failing
// (try_find_set) and the update rule below restores consistency once all operations completed.
//
// Update rule (App. A.5 Def. 2, Lemma 5). A level-l operation that sets the first bit of a
// container (set-first, SF) or clears its last bit (clear-last, CL) performs exactly one set /
// clear of the summary bit at level l + 1. The upper-level update uses the *retrying* set/clear,
// never the try versions (sec. 4.1.3): the summary bit may still be in the wrong state because
// another thread's update is pending, and a try would drop the mandatory update. Lemma 5: if the
// level-l operation multiset is legal (per bit: #set - #clear in {-1, 0, 1} and the final value is
// 0 or 1), the generated level-(l+1) multiset is legal and the levels are consistent afterwards.
// A retrying set/clear whose multiset is illegal never finishes; the explorer reports it as a
// deadlock (every live thread waits for a memory change that cannot come).
//
// Linearization points: try_set / try_clear / set / clear at the level-0 fetch_or / fetch_and
// that changed the bit; try_find_set at the level-0 load it picks the bit from (it may fail
// spuriously, see there); clear_any at its successful level-0 fetch_and; get at its load.
//
// Memory orders: the caller passes the order of the level-0 read-modify-write; that is the
// operation another thread's level-0 RMW reads from, so a release set paired with an acquire
// clear_any (the free-block bitmap, heap_protocol.hpp) orders everything before the set before
// everything after the clear. Upper levels are summaries only (searches re-validate at level 0)
// and use relaxed RMWs; searches use relaxed loads.
#pragma once

#include <cstdint>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/detail/seed.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"

#if !HEAPLAB_DEVICE_CODE
#include <vector>
#endif

namespace heaplab::core {

/// "No bit" / "no block" result of a search.
inline constexpr std::uint32_t kNotFound = 0xFFFFFFFFu;

/// Enough levels for 2^32 bits (64^6 > 2^32).
inline constexpr std::uint32_t kBitmapMaxLevels = 6;

/// Shape of a hierarchical bitmap of num_bits bits: per level the number of meaningful bits and
/// the offset of its first container in the one word array. num_bits == 0 is the empty bitmap
/// (no levels, no words).
struct BitmapLayout {
  std::uint32_t num_bits                       = 0;
  std::uint32_t num_levels                     = 0;
  std::uint32_t total_words                    = 0;
  std::uint32_t level_bits[kBitmapMaxLevels]   = {};
  std::uint32_t level_offset[kBitmapMaxLevels] = {};

  HEAPLAB_HD_INLINE static constexpr BitmapLayout for_bits(std::uint32_t num_bits) {
    BitmapLayout layout{};
    layout.num_bits = num_bits;
    if (num_bits == 0) return layout;
    std::uint32_t bits = num_bits;
    for (;;) {
      std::uint32_t const level      = layout.num_levels++;
      std::uint32_t const containers = (bits + 63u) / 64u;
      layout.level_bits[level]       = bits;
      layout.level_offset[level]     = layout.total_words;
      layout.total_words += containers;
      if (containers == 1) break;
      bits = containers;
    }
    return layout;
  }

  /// Containers of level `level`.
  HEAPLAB_HD_INLINE constexpr std::uint32_t containers(std::uint32_t level) const {
    return (level_bits[level] + 63u) / 64u;
  }
};

template <class Atomics>
class BitmapRef {
 public:
  BitmapRef() = default;
  HEAPLAB_HD_INLINE BitmapRef(std::uint64_t* words, BitmapLayout const& layout)
      : words_(words), layout_(layout) {}

  HEAPLAB_HD_INLINE std::uint32_t size() const { return layout_.num_bits; }
  HEAPLAB_HD_INLINE BitmapLayout const& layout() const { return layout_; }
  HEAPLAB_HD_INLINE std::uint64_t* words() const { return words_; }
  /// Address of container `index` of level `level` (for traces and tests).
  HEAPLAB_HD_INLINE std::uint64_t* container(std::uint32_t level, std::uint32_t index) const {
    return words_ + level_offset(level) + index;
  }

  /// The bit at pos (a single load; linearizes there).
  HEAPLAB_HD bool get(std::uint32_t pos, MemoryOrder order = MemoryOrder::relaxed) const {
    return ((Atomics::load(container(0, pos / 64u), order) >> (pos % 64u)) & 1u) != 0;
  }

  /// Sets bit pos; true iff this call changed it from 0 to 1 (then, if it set the first bit of
  /// its container, the summary bit is set with the retrying set, Def. 2).
  HEAPLAB_HD bool try_set(std::uint32_t pos, MemoryOrder order) const {
    return try_set_at(0, pos, order);
  }
  /// Clears bit pos; true iff this call changed it from 1 to 0 (DynaSOAr Alg. 3).
  HEAPLAB_HD bool try_clear(std::uint32_t pos, MemoryOrder order) const {
    return try_clear_at(0, pos, order);
  }
  /// Switches bit pos from 0 to 1, retrying until this call changed it (sec. 4.1.2). Waits for a
  /// pending clear if the bit is set: legal only where the multiset of operations on the bit is
  /// legal (Def. 3).
  HEAPLAB_HD void set(std::uint32_t pos, MemoryOrder order) const { set_at(0, pos, order); }
  /// Switches bit pos from 1 to 0, retrying until this call changed it (sec. 4.1.2).
  HEAPLAB_HD void clear(std::uint32_t pos, MemoryOrder order) const { clear_at(0, pos, order); }

  /// Position of some set bit or kNotFound (DynaSOAr Alg. 4): a top-down descent, at each level
  /// taking the first set bit at or after a rotation derived from `seed` (sec. 4.2). May fail
  /// although bits are set: an upper level can lag behind its containers while other operations run
  /// (sec. 4.1.4). The result may be stale by the time the caller uses it.
  HEAPLAB_HD std::uint32_t try_find_set(std::uint64_t seed) const { return find_set(seed).pos; }

  /// try_find_set's answer, and whether it failed at the top level: the top level is one word
  /// (BitmapLayout::for_bits), so a search with another rotation would read the same word. A
  /// failure below the top is a summary bit whose container lagged or was cleared meanwhile
  /// (sec. 4.1.4), which another descent can get past.
  /// `top`, when given, is the top-level word as the caller already loaded it (relaxed, as the
  /// descent's own load; top_word()): the descent starts from it instead of loading it again, so
  /// a caller can have that load in flight beside another one (HeapProtocol::reserve_slots).
  struct Found {
    std::uint32_t pos = kNotFound;
    bool top_empty    = false;  // the top-level load read 0 (or the bitmap has no bits)
  };
  HEAPLAB_HD Found find_set(std::uint64_t seed, std::uint64_t const* top = nullptr) const {
    if (layout_.num_levels == 0) return Found{kNotFound, true};
    std::uint32_t index = 0;  // container index on the current level
    // Levels top-down, unrolled over the constant maximum so that the layout arrays are indexed
    // by constants (no local-memory copy of the layout on the GPU).
#if HEAPLAB_DEVICE_CODE
#pragma unroll
#endif
    for (std::uint32_t k = kBitmapMaxLevels; k-- > 0;) {
      if (k >= layout_.num_levels) continue;
      std::uint64_t const word =
          top != nullptr && k + 1u == layout_.num_levels
              ? *top
              : Atomics::load(words_ + layout_.level_offset[k] + index, MemoryOrder::relaxed);
      int const bit = find_first_set_rotated(word, detail::rotation(seed, k));
      if (bit < 0) return Found{kNotFound, k + 1u == layout_.num_levels};
      index = index * 64u + static_cast<std::uint32_t>(bit);
      if (index >= layout_.level_bits[k]) return Found{};  // never set; defensive
    }
    return Found{index, false};
  }

  /// The top-level word (one container: BitmapLayout::for_bits), one relaxed load; 0 for a bitmap
  /// without bits. What find_set(seed, &word) starts from.
  HEAPLAB_HD std::uint64_t top_word() const {
    if (layout_.num_levels == 0) return 0;
    return Atomics::load(container(layout_.num_levels - 1u, 0), MemoryOrder::relaxed);
  }

  /// Position of some set bit or kNotFound, by a scan of level 0 starting at a container derived
  /// from `seed`. Unlike try_find_set it does not trust the upper levels: kNotFound means every
  /// container was observed empty (each at its own load). The fallback before declaring a
  /// bitmap empty (out-of-memory, heap_protocol.hpp).
  HEAPLAB_HD std::uint32_t find_set_scan(std::uint64_t seed) const {
    if (layout_.num_levels == 0) return kNotFound;
    std::uint32_t const n     = layout_.containers(0);
    std::uint32_t const start = static_cast<std::uint32_t>(seed % n);
    for (std::uint32_t i = 0; i < n; ++i) {
      std::uint32_t const c = (start + i) % n;
      // MUTANT oom_scan_no_wrap: the scan runs from its start container to the last one and
      // stops there, so containers before the start are never looked at: with more than one
      // level-0 container (more than 64 blocks) an out-of-memory answer can leave free bits
      // behind (issue 34, class 1; docs/mutants.md).
      if HEAPLAB_MUTANT_CONSTEXPR (mutant::oom_scan_no_wrap)
        if (c < start) return kNotFound;
      std::uint64_t const word = Atomics::load(container(0, c), MemoryOrder::relaxed);
      int const bit            = find_first_set_rotated(word, detail::rotation(seed, 0));
      if (bit >= 0) return c * 64u + static_cast<std::uint32_t>(bit);
    }
    return kNotFound;
  }

  /// Atomically finds and clears some set bit and returns its position (the paper's clear(),
  /// sec. 4.1.2), or kNotFound once a level-0 scan observed no set bit. Each round searches with
  /// a fresh seed; a round fails only because another thread cleared the bit first (it made
  /// progress), so the loop is lock-free. Linearizes at the successful try_clear. rotate false
  /// (DynaSOAr Fig. 12C ablation, HeapStorage::rotate_bitmaps): every round searches from bit 0,
  /// i.e. takes the lowest set bit it observes.
  HEAPLAB_HD std::uint32_t clear_any(std::uint64_t seed,
                                     MemoryOrder order,
                                     bool rotate = true) const {
    for (std::uint64_t round = 0;; ++round) {
      std::uint64_t const s = rotate ? detail::mix_seed(seed, round) : 0u;
      std::uint32_t pos     = try_find_set(s);
      if (pos == kNotFound) pos = find_set_scan(s);
      if (pos == kNotFound) return kNotFound;
      if (try_clear(pos, order)) return pos;
    }
  }

#if !HEAPLAB_DEVICE_CODE
  /// Positions of all set bits, ascending (DynaSOAr Alg. 5, sequentially). Host only, quiescent:
  /// levels are consistent, so only containers whose summary bit is set are read.
  std::vector<std::uint32_t> indices() const {
    std::vector<std::uint32_t> selected;
    if (layout_.num_levels == 0) return selected;
    selected.push_back(0);  // the single top container
    for (std::uint32_t l = layout_.num_levels; l-- > 0;) {
      std::vector<std::uint32_t> next;
      for (std::uint32_t c : selected) {
        std::uint64_t word = Atomics::load(container(l, c), MemoryOrder::relaxed);
        while (word != 0) {
          int const bit = find_first_set(word);
          word &= word - 1u;
          next.push_back(c * 64u + static_cast<std::uint32_t>(bit));
        }
      }
      selected = std::move(next);
    }
    return selected;
  }
#endif

 private:
  HEAPLAB_HD bool has_upper(std::uint32_t level) const { return level + 1u < layout_.num_levels; }

  /// layout_.level_offset[level] by a select over constant indices: a dynamic index into the
  /// layout array would make the GPU copy the layout to local memory in every kernel that
  /// allocates (DynaSOAr's hierarchy has at most kBitmapMaxLevels levels).
  HEAPLAB_HD_INLINE std::uint32_t level_offset(std::uint32_t level) const {
    std::uint32_t offset = 0;  // level 0 starts the array
#if HEAPLAB_DEVICE_CODE
#pragma unroll
#endif
    for (std::uint32_t k = 1; k < kBitmapMaxLevels; ++k)
      if (level == k) offset = layout_.level_offset[k];
    return offset;
  }

  // try_set_at / try_clear_at: the level-`level` RMW, then the mandatory summary updates of
  // Def. 2 up the hierarchy, iteratively (DynaSOAr sec. 4.1.2 states them recursively; a loop
  // keeps the GPU code free of a call stack). Level l + 1 is updated with the retrying set /
  // clear (retry_rmw) and propagates further iff that successful RMW was itself a set-first /
  // clear-last.

  /// One RMW that must change bit `pos` of `level`: retried while the bit is already in the
  /// target state (another thread's update on it is pending, sec. 4.1.3). Returns the value the
  /// successful RMW read. With the mutant hierarchy_try_propagate a single attempt is made;
  /// `changed` says whether it changed the bit.
  template <bool Set>
  HEAPLAB_HD std::uint64_t retry_rmw(std::uint32_t level,
                                     std::uint32_t pos,
                                     MemoryOrder order,
                                     bool& changed) const {
    std::uint64_t const mask = std::uint64_t{1} << (pos % 64u);
    std::uint64_t* const at  = container(level, pos / 64u);
    for (;;) {
      std::uint64_t const prev =
          Set ? Atomics::fetch_or(at, mask, order) : Atomics::fetch_and(at, ~mask, order);
      changed = Set ? (prev & mask) == 0 : (prev & mask) != 0;
      // MUTANT hierarchy_try_propagate: the mandatory update may be dropped (sec. 4.1.3).
      if (changed || mutant::hierarchy_try_propagate) return prev;
      Atomics::backoff(Backoff::until_memory_changes);
    }
  }

  /// The summary updates owed after a set-first (Set) / clear-last at (level, pos): level + 1,
  /// then further up while each update is itself a set-first / clear-last.
  template <bool Set>
  HEAPLAB_HD void propagate_up(std::uint32_t level, std::uint32_t pos) const {
    while (has_upper(level)) {
      // MUTANT hierarchy_deep_set_stops / hierarchy_deep_clear_stops: set-first / clear-last
      // propagates from level 0 to level 1 only; a level-1 update leaves level 2 stale. Only
      // bitmaps of 3+ levels (M > 4096) are affected (docs/mutants.md).
      HEAPLAB_MUTANT_CONSTEXPR bool const deep_stops =
          Set ? mutant::hierarchy_deep_set_stops : mutant::hierarchy_deep_clear_stops;
      if (deep_stops && level >= 1u) return;
      ++level;
      pos /= 64u;
      bool changed             = false;
      std::uint64_t const prev = retry_rmw<Set>(level, pos, MemoryOrder::relaxed, changed);
      std::uint64_t const mask = std::uint64_t{1} << (pos % 64u);
      bool const owes          = Set ? prev == 0 : prev == mask;
      if (!changed || !owes) return;
    }
  }

  HEAPLAB_HD bool try_set_at(std::uint32_t level, std::uint32_t pos, MemoryOrder order) const {
    std::uint64_t const mask = std::uint64_t{1} << (pos % 64u);
    std::uint64_t const prev = Atomics::fetch_or(container(level, pos / 64u), mask, order);
    bool const changed       = (prev & mask) == 0;
    // MUTANT hierarchy_skip_set_first: the summary bit is never set (docs/mutants.md).
    bool const set_first = changed && prev == 0 && !mutant::hierarchy_skip_set_first;
    if (set_first) propagate_up<true>(level, pos);  // set-first SF^l (Def. 2)
    return changed;
  }

  HEAPLAB_HD bool try_clear_at(std::uint32_t level, std::uint32_t pos, MemoryOrder order) const {
    std::uint64_t const mask = std::uint64_t{1} << (pos % 64u);
    std::uint64_t const prev = Atomics::fetch_and(container(level, pos / 64u), ~mask, order);
    bool const changed       = (prev & mask) != 0;
    if (changed && prev == mask) propagate_up<false>(level, pos);  // clear-last CL^l (Def. 2)
    return changed;
  }

  // A failed try_set / try_clear did not modify memory and will fail identically until another
  // thread changes the bit: Backoff::until_memory_changes.
  HEAPLAB_HD void set_at(std::uint32_t level, std::uint32_t pos, MemoryOrder order) const {
    while (!try_set_at(level, pos, order)) Atomics::backoff(Backoff::until_memory_changes);
  }
  HEAPLAB_HD void clear_at(std::uint32_t level, std::uint32_t pos, MemoryOrder order) const {
    while (!try_clear_at(level, pos, order)) Atomics::backoff(Backoff::until_memory_changes);
  }

  std::uint64_t* words_ = nullptr;
  BitmapLayout layout_{};
};

}  // namespace heaplab::core
