// The size-class queue: the queue baseline of RW_malloc's figures (RW sec. 5.2.2, Fig. 8-11),
// where the paper compares with Ouroboros (RW sec. 2, Fig. 2: one queue per size class, chunks
// added to a class's queue as it needs them and never given back to the pool). Written by us from
// that description (no other allocator's code); called "queue" in the fig8-11 tables, the
// size-class variant of the queue baseline of queue_pool.hpp (docs/rw.md "Baselines").
// Header-only, __host__ __device__ over an atomics policy A of core/atomics.hpp, so the same code
// runs in kernels (DeviceAtomics) and on std::threads (HostAtomics).
//
// The pool is T pages (the unit RW_malloc also uses). Class c (c = 0 .. C-1) serves requests of
// n pages with ceil(log2 n) = c from chunks of 2^c consecutive pages. State:
//   rings[c]  a queue ring (QueueRef of queue_pool.hpp, reused as is) of the free chunks of class
//             c, each named by its first page. Capacity floor(T / 2^c) (at least 1): the chunks of
//             class c are disjoint runs of 2^c pages inside the pool, so at most that many exist,
//             which is what queue_pool.hpp's argument needs (tail - head <= chunks <= capacity:
//             a free never waits for ever).
//   carved    one 64-bit bump counter: pages carved from the pool so far. It only grows. A carve
//             refused by its first look (step 2) changes nothing, so sequential carves use the
//             pool to its last page; a fetch_add that does not fit (carves racing past that
//             look) leaves the counter past its last chunk: the pool's tail (at most
//             2^(C-1) - 1 pages) is lost from then on and every later carve fails.
//
// GET (get, n pages, 1 <= n <= 2^(C-1)):
//   1. c = ceil(log2 n); take a chunk from rings[c] (QueueRef::get_page: never waits on an empty
//      ring). Got one: return it.
//   2. Otherwise carve: if load(carved) + 2^c > T, null (the pool is spent: saves the RMW);
//      else o = fetch_add(carved, 2^c); if o + 2^c <= T return [o, o + 2^c), else null.
//   Out of memory is always a null, never a wait.
// FREE (free, first page and the request's n pages): the chunk goes back on rings[ceil(log2 n)]
//   (QueueRef::free_page). Chunks stay in their class for ever, as Ouroboros's queues keep their
//   chunks: memory freed by one class never serves another.
//
// Linearization points and memory orders:
//  - get -> a chunk of ring c: the ring's acquire load that saw its slot full (queue_pool.hpp);
//    acquire, pairs with the release CAS of the chunk's last FREE, so the chunk's previous
//    owner's writes happen before the new owner's reads.
//  - get -> a carved chunk: the fetch_add on carved whose old value o had o + 2^c <= T; relaxed:
//    the chunk's pages were never handed out, no previous owner wrote them.
//  - get -> null: the carve that saw carved + 2^c > T (the load or the fetch_add); relaxed.
//  - free(first, n): the ring's fetch_add on its count (queue_pool.hpp); relaxed (the slot's
//    release CAS orders the chunk's data).
// A null is a snapshot, as the queue's: a chunk freed into rings[c] after step 1 looked is not
// seen (a spurious null, never a wrong chunk; the rw model accepts a null at any time). With no
// frees during a wave (the benchmarks) a null means ring c is empty and the pool is spent.
//
// Steps (GetPageResult::steps): the ring's steps (1, plus its failed looks) plus 1 for a carve.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/queue_pool.hpp"

namespace heaplab::rw {

/// The most size classes (chunks up to 2^15 pages; RW_malloc serves at most 2048).
inline constexpr std::uint32_t kMaxSizeClasses = 16;

/// The class of a request of n >= 1 pages: ceil(log2 n).
HEAPLAB_HD_INLINE constexpr std::uint32_t size_class_of(std::uint32_t n) {
  std::uint32_t c = 0;
  while ((std::uint64_t{1} << c) < n) ++c;
  return c;
}

/// Pages of a chunk of class c: 2^c.
HEAPLAB_HD_INLINE constexpr std::uint32_t class_chunk_pages(std::uint32_t c) { return 1u << c; }

/// Ring capacity of class c in a pool of T pages: floor(T / 2^c), at least 1 (the most chunks of
/// class c that can exist).
HEAPLAB_HD_INLINE constexpr std::uint32_t class_ring_capacity(std::uint32_t t, std::uint32_t c) {
  std::uint32_t const chunks = t >> c;
  return chunks == 0 ? 1u : chunks;
}

/// The classes C needed for requests of up to max_pages pages: ceil(log2 max_pages) + 1.
HEAPLAB_HD_INLINE constexpr std::uint32_t size_classes_for(std::uint32_t max_pages) {
  return size_class_of(max_pages) + 1;
}

/// The size-class queue's shared state: plain pointers and numbers, passed by value into kernels.
struct SizeClassStorage {
  QueueStorage rings[kMaxSizeClasses]{};  // ring c: free chunks of class c (their first pages)
  std::uint64_t* carved     = nullptr;    // pages carved from the pool so far (may pass T)
  std::uint32_t num_pages   = 0;          // T
  std::uint32_t num_classes = 0;          // C: requests of 1 .. 2^(C-1) pages
};

template <class A>
class SizeClassQueueRef {
 public:
  SizeClassQueueRef() = default;
  HEAPLAB_HD_INLINE explicit SizeClassQueueRef(SizeClassStorage const& s) : s_(s) {}
  [[nodiscard]] HEAPLAB_HD_INLINE SizeClassStorage const& storage() const { return s_; }
  /// The largest request: 2^(C-1) pages.
  [[nodiscard]] HEAPLAB_HD_INLINE std::uint32_t max_request_pages() const {
    return class_chunk_pages(s_.num_classes - 1);
  }

  /// GET of n pages (1 <= n <= max_request_pages(): precondition_error / trap): the first page of
  /// a chunk of 2^ceil(log2 n) pages, or kNoPage (the steps in the header comment).
  HEAPLAB_HD_INLINE GetPageResult get(std::uint32_t n) const {
    HEAPLAB_EXPECTS(n >= 1 && n <= max_request_pages(),
                    "size-class queue get: n pages outside 1 .. 2^(C-1)");
    std::uint32_t c = size_class_of(n);
    // MUTANT rw_size_class_floor_log2: the class is floor(log2 n), so a request of a size that is
    // not a power of two gets a chunk half as large as it needs and overruns the next chunk.
    if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::rw_size_class_floor_log2)
      if ((n & (n - 1)) != 0) --c;
    GetPageResult r = QueueRef<A>(s_.rings[c]).get_page();
    if (r.ok()) return r;
    ++r.steps;
    r.page = carve(class_chunk_pages(c));
    return r;
  }

  /// FREE of the chunk a GET of n pages returned at `first` (the caller holds it).
  HEAPLAB_HD_INLINE void free(std::uint32_t first, std::uint32_t n) const {
    HEAPLAB_EXPECTS(n >= 1 && n <= max_request_pages(),
                    "size-class queue free: n pages outside 1 .. 2^(C-1)");
    std::uint32_t const c = size_class_of(n);
    HEAPLAB_EXPECTS(std::uint64_t{first} + class_chunk_pages(c) <= s_.num_pages,
                    "size-class queue free: the chunk reaches beyond the pool");
    QueueRef<A>(s_.rings[c]).free_page(first);
  }

 private:
  /// A chunk of `size` pages from `old` fits in the pool of T pages.
  HEAPLAB_HD_INLINE static bool fits(std::uint64_t old, std::uint32_t size, std::uint64_t t) {
    // MUTANT rw_size_class_carve_past_pool: a carve fits when it merely starts inside the pool,
    // so the last chunk can reach beyond page T - 1.
    if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::rw_size_class_carve_past_pool) return old < t;
    return old + size <= t;
  }

  /// A fresh chunk of `size` pages from the bump counter, or kNoPage when it does not fit.
  HEAPLAB_HD_INLINE std::uint32_t carve(std::uint32_t size) const {
    std::uint64_t const t = s_.num_pages;
    // A counter already past the pool stays past it: answer null without the RMW.
    if (!fits(A::load(s_.carved, core::MemoryOrder::relaxed), size, t)) return kNoPage;
    std::uint64_t const old =
        A::fetch_add(s_.carved, std::uint64_t{size}, core::MemoryOrder::relaxed);
    return fits(old, size, t) ? static_cast<std::uint32_t>(old) : kNoPage;
  }

  SizeClassStorage s_{};
};

/// The memory layout of a size-class queue, one for host and device storage: the rings' slots
/// back to back (ring c: class_ring_capacity(T, c) slots), and the counters each on its own 512
/// bytes (kSizeClassCounterSpacing words; as HostQueue's): ring c's head, tail, count at 3c,
/// 3c + 1, 3c + 2, then the bump counter.
inline constexpr std::size_t kSizeClassCounterSpacing = 64;
inline std::size_t size_class_slot_words(std::uint32_t num_pages, std::uint32_t num_classes) {
  std::size_t slots = 0;
  for (std::uint32_t c = 0; c < num_classes; ++c) slots += class_ring_capacity(num_pages, c);
  return slots;
}
inline std::size_t size_class_counter_words(std::uint32_t num_classes) {
  return kSizeClassCounterSpacing * (3 * std::size_t{num_classes} + 1);
}
/// The word index of ring c's count, and of the bump counter (after the rings of C classes).
inline std::size_t size_class_count_word(std::uint32_t c) {
  return kSizeClassCounterSpacing * (3 * std::size_t{c} + 2);
}
inline std::size_t size_class_carved_word(std::uint32_t num_classes) {
  return kSizeClassCounterSpacing * 3 * std::size_t{num_classes};
}
inline SizeClassStorage size_class_storage(std::uint64_t* slots,
                                           std::uint64_t* counters,
                                           std::uint32_t num_pages,
                                           std::uint32_t num_classes) {
  auto const counter = [&](std::size_t k) { return counters + kSizeClassCounterSpacing * k; };
  SizeClassStorage s;
  std::size_t slot = 0;
  for (std::uint32_t c = 0; c < num_classes; ++c) {
    std::uint32_t const capacity = class_ring_capacity(num_pages, c);
    s.rings[c]                   = QueueStorage{
        slots + slot, counter(3 * c), counter(3 * c + 1), counter(3 * c + 2), capacity, num_pages};
    slot += capacity;
  }
  s.carved      = counters + size_class_carved_word(num_classes);
  s.num_pages   = num_pages;
  s.num_classes = num_classes;
  return s;
}

/// Owning host storage of a size-class queue (CPU tests): T pages, C classes, every ring empty,
/// nothing carved.
class HostSizeClassQueue {
 public:
  HostSizeClassQueue(std::uint32_t num_pages, std::uint32_t num_classes)
      : num_pages_(num_pages), num_classes_(num_classes) {
    HEAPLAB_EXPECTS(num_pages > 0, "HostSizeClassQueue: the pool needs at least one page");
    HEAPLAB_EXPECTS(num_classes >= 1 && num_classes <= kMaxSizeClasses,
                    "HostSizeClassQueue: C outside 1 .. kMaxSizeClasses");
    slots_.assign(size_class_slot_words(num_pages, num_classes), queue_detail::empty_slot(0));
    counters_.assign(size_class_counter_words(num_classes), 0);
  }
  HostSizeClassQueue(HostSizeClassQueue const&)            = delete;
  HostSizeClassQueue& operator=(HostSizeClassQueue const&) = delete;

  [[nodiscard]] SizeClassStorage storage() {
    return size_class_storage(slots_.data(), counters_.data(), num_pages_, num_classes_);
  }
  template <class A>
  [[nodiscard]] SizeClassQueueRef<A> ref() {
    return SizeClassQueueRef<A>(storage());
  }
  /// At quiescence: the chunks in ring c.
  [[nodiscard]] std::int64_t available(std::uint32_t c) const {
    return static_cast<std::int64_t>(counters_[size_class_count_word(c)]);
  }
  /// At quiescence: the bump counter (pages carved, plus failed carves).
  [[nodiscard]] std::uint64_t carved() const {
    return counters_[size_class_carved_word(num_classes_)];
  }

 private:
  std::uint32_t num_pages_;
  std::uint32_t num_classes_;
  std::vector<std::uint64_t> slots_;
  std::vector<std::uint64_t> counters_;
};

}  // namespace heaplab::rw
