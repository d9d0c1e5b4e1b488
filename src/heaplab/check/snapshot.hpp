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

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
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

/// The payload slots of one block: logically a sequence of size() slots (64 in a snapshot with
/// payloads, none without), each an optional ObjectRecord, read and written like a
/// std::vector<std::optional<ObjectRecord>>. Stored sparsely: only slots that were written hold
/// an entry, so an empty slot costs nothing (a heap of 2^16 blocks has 2^22 slots, most of them
/// empty; a dense vector made every snapshot, check and diff walk all of them).
///
/// Reading a slot never changes the container. The non-const operator[] and at() create an
/// (empty) entry for a slot that has none, which, like a std::vector's insertion, invalidates
/// references to other slots; references stay valid while only slots that already hold a record
/// are accessed. Fast paths iterate entries(): the written slots in ascending order (an entry may
/// hold nullopt, e.g. after `objects[s].reset()`).
class SlotRecords {
 public:
  using value_type = std::optional<ObjectRecord>;
  struct Entry {
    std::uint32_t slot = 0;
    value_type record;
  };

  SlotRecords() = default;
  SlotRecords(std::size_t n, std::nullopt_t) : size_(n) {}

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  void clear() {
    size_ = 0;
    entries_.clear();
  }
  /// size() := n; slots at or above n are dropped, new slots are empty.
  void resize(std::size_t n);
  /// Room for n records without reallocating (a producer that knows a block's count).
  void reserve(std::size_t n) { entries_.reserve(n); }
  /// n empty slots.
  void assign(std::size_t n, std::nullopt_t) {
    entries_.clear();
    size_ = n;
  }

  /// Slot s (nullopt for a slot without a record; s < size() is the caller's precondition).
  [[nodiscard]] value_type const& operator[](std::size_t s) const;
  /// Slot s, creating an empty entry for it if it has none.
  value_type& operator[](std::size_t s);
  /// As operator[], throwing std::out_of_range for s >= size().
  [[nodiscard]] value_type const& at(std::size_t s) const;
  value_type& at(std::size_t s);
  /// Slot `slot` := record (slot < size()). Appending in ascending slot order is O(1).
  void set(std::uint32_t slot, ObjectRecord record);

  /// The written slots, ascending by slot; the fast way to visit the records.
  [[nodiscard]] std::vector<Entry> const& entries() const { return entries_; }
  /// Bit s set iff slot s < 64 holds a record.
  [[nodiscard]] std::uint64_t record_mask() const;

  /// Iteration over all size() slots, as over a vector (the non-const one creates an entry per
  /// slot it visits: meant for tests that edit snapshots).
  template <class Owner, class Ref>
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type        = SlotRecords::value_type;
    using difference_type   = std::ptrdiff_t;
    using reference         = Ref;
    using pointer           = std::remove_reference_t<Ref>*;
    Iterator(Owner* owner, std::size_t at) : owner_(owner), at_(at) {}
    Ref operator*() const { return (*owner_)[at_]; }
    pointer operator->() const { return &(*owner_)[at_]; }
    Iterator& operator++() {
      ++at_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator old = *this;
      ++at_;
      return old;
    }
    friend bool operator==(Iterator const& a, Iterator const& b) { return a.at_ == b.at_; }
    friend bool operator!=(Iterator const& a, Iterator const& b) { return a.at_ != b.at_; }

   private:
    Owner* owner_;
    std::size_t at_;
  };
  using const_iterator = Iterator<SlotRecords const, value_type const&>;
  using iterator       = Iterator<SlotRecords, value_type&>;
  [[nodiscard]] const_iterator begin() const { return {this, 0}; }
  [[nodiscard]] const_iterator end() const { return {this, size_}; }
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }

  /// Same size and the same record in every slot (an entry holding nullopt equals no entry).
  friend bool operator==(SlotRecords const& a, SlotRecords const& b);
  friend bool operator!=(SlotRecords const& a, SlotRecords const& b) { return !(a == b); }

 private:
  [[nodiscard]] std::vector<Entry>::const_iterator find(std::size_t s) const;
  std::size_t size_ = 0;
  std::vector<Entry> entries_;  // ascending, unique slots, all below size_
};

/// ObjectRecord equality: id, cookie and every reference.
inline bool operator==(ObjectRecord const& a, ObjectRecord const& b);
inline bool operator!=(ObjectRecord const& a, ObjectRecord const& b) { return !(a == b); }

// ------------------------------------------------------------------ SlotRecords, inline
inline std::vector<SlotRecords::Entry>::const_iterator SlotRecords::find(std::size_t s) const {
  auto it =
      std::lower_bound(entries_.begin(), entries_.end(), s, [](Entry const& e, std::size_t x) {
        return e.slot < x;
      });
  return it != entries_.end() && it->slot == s ? it : entries_.end();
}

inline void SlotRecords::resize(std::size_t n) {
  while (!entries_.empty() && entries_.back().slot >= n) entries_.pop_back();
  size_ = n;
}

inline SlotRecords::value_type const& SlotRecords::operator[](std::size_t s) const {
  static value_type const none;
  auto const it = find(s);
  return it == entries_.end() ? none : it->record;
}

inline SlotRecords::value_type& SlotRecords::operator[](std::size_t s) {
  if (entries_.empty() || entries_.back().slot < s) {
    entries_.push_back({static_cast<std::uint32_t>(s), std::nullopt});
    return entries_.back().record;
  }
  auto it =
      std::lower_bound(entries_.begin(), entries_.end(), s, [](Entry const& e, std::size_t x) {
        return e.slot < x;
      });
  if (it == entries_.end() || it->slot != s)
    it = entries_.insert(it, Entry{static_cast<std::uint32_t>(s), std::nullopt});
  return it->record;
}

inline SlotRecords::value_type const& SlotRecords::at(std::size_t s) const {
  if (s >= size_)
    throw std::out_of_range("slot " + std::to_string(s) + " of a block with " +
                            std::to_string(size_) + " slots");
  return (*this)[s];
}

inline SlotRecords::value_type& SlotRecords::at(std::size_t s) {
  if (s >= size_)
    throw std::out_of_range("slot " + std::to_string(s) + " of a block with " +
                            std::to_string(size_) + " slots");
  return (*this)[s];
}

inline void SlotRecords::set(std::uint32_t slot, ObjectRecord record) {
  (*this)[slot] = std::move(record);
}

inline std::uint64_t SlotRecords::record_mask() const {
  std::uint64_t mask = 0;
  for (auto const& e : entries_)
    if (e.record && e.slot < 64) mask |= std::uint64_t{1} << e.slot;
  return mask;
}

inline bool operator==(ObjectRecord const& a, ObjectRecord const& b) {
  return a.id == b.id && a.cookie == b.cookie && a.refs == b.refs;
}

inline bool operator==(SlotRecords const& a, SlotRecords const& b) {
  if (a.size_ != b.size_) return false;
  // Merge the two entry lists: a slot is equal when both hold the same record or neither holds
  // one (an entry holding nullopt equals no entry).
  auto ia = a.entries_.begin(), ib = b.entries_.begin();
  auto const ea = a.entries_.end(), eb = b.entries_.end();
  while (ia != ea || ib != eb) {
    if (ib == eb || (ia != ea && ia->slot < ib->slot)) {
      if ((ia++)->record) return false;
    } else if (ia == ea || ib->slot < ia->slot) {
      if ((ib++)->record) return false;
    } else {
      if ((ia++)->record != (ib++)->record) return false;
    }
  }
  return true;
}

struct BlockSnapshot {
  std::uint32_t type         = core::kNoType;  // raw header type id (stale for free blocks)
  std::uint64_t alloc_bitmap = 0;              // object allocation bitmap (DynaSOAr sec. 3.1)
  std::uint64_t iter_bitmap  = 0;              // object iteration bitmap (sec. 3.1)
  /// Empty when the snapshot has no payloads; otherwise 64 slots, holding a record exactly for
  /// the slots that hold a live object.
  SlotRecords objects;
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
