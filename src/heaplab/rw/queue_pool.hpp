// The queue-based page allocator, the baseline of RW sec. 3.2.1 (Eq. 1's setting: every request
// takes its turn on one shared counter, so its latency grows with its position N among the
// concurrent requests; Ouroboros-style allocators keep such queues, RW sec. 2). Written by us, not
// taken from any allocator's code. Called "queue" everywhere (CLI: --allocator queue).
// Header-only, __host__ __device__ over an atomics policy A of core/atomics.hpp, so the same code
// runs in kernels (DeviceAtomics), on std::threads (HostAtomics) and under the explorer (workloads
// queue and queue-weak, src/heaplab/families/interleaving/workloads/queue_workload.hpp).
//
// State: a ring of C >= T slots of free page ids, and three 64-bit counters:
//   head   tickets handed to GETPAGE (fetch_add: the request's place in the queue)
//   tail   tickets handed to FREEPAGE (fetch_add)
//   count  pages published and not yet claimed (two's complement: requests that found the ring
//          empty take 1 and give it back, so it can dip below zero for a moment)
// A slot holds one 64-bit word: the low 32 bits a page id (kNoPage when empty), the high 32 bits a
// sequence code. Ticket t uses slot t % C in lap L = t / C: the slot is "empty, ready for lap L"
// (code 2L) before ticket t's free writes it, "full in lap L" (code 2L + 1) until ticket t's
// request reads it, then "empty, ready for lap L + 1". The codes make the slot's successive writers
// and readers take turns even when a slow thread of an older lap still holds its ticket (without
// them a fast free of lap L + 1 could overwrite a page that lap L's reader has not read yet).
//
// GETPAGE (get_page):
//   1. old = fetch_add(count, -1, relaxed). If old <= 0 the ring is empty: fetch_add(count, +1)
//      and return kNoPage (1 step). Never a wait on an empty ring.
//   2. h = fetch_add(head, 1, relaxed): the ticket (Eq. 1's serialization point).
//   3. wait until slot h % C is full in lap h / C (acquire load; each failed look is a step), take
//      its page, mark the slot empty for the next lap (relaxed store).
// FREEPAGE (free_page):
//   1. t = fetch_add(tail, 1, relaxed).
//   2. wait until slot t % C is empty for lap t / C, then compare_exchange it to "full in lap t/C,
//      page" (release).
//   3. fetch_add(count, +1, relaxed): publish.
//
// Why no wait lasts for ever (every wait is for a thread already holding a ticket, never for a
// future request):
//  - GETPAGE step 3, ticket h: requests pass step 1 only with a unit of count, and each unit was
//    added by a free after its slot write, so the requests with tickets (head) are at most the
//    frees that finished, and h < tail: the free of ticket h exists.
//  - FREEPAGE step 2, ticket t: the slot empties for lap t / C when the reader of ticket t - C is
//    done. That reader exists: the pages being written or sitting in the ring are distinct (a
//    page is freed by its one holder and re-enters only after a reader took it), so
//    tail - head <= T <= C and t - C < head.
//  The two waits alternate down the laps of one slot to lap 0, whose slots start written or
//  empty, so each finishes once the threads before it in the slot's order do.
// Memory orders and linearization points:
// | operation          | linearization point                         | order   | pairs with |
// | get_page -> page p | the acquire load that saw slot h full       | acquire | the release CAS of
// p's FREEPAGE (the slot word carries p) | | get_page -> null   | step 1's fetch_add that read
// count <= 0     | relaxed | nothing (no page changes hands) | | free_page(p)       | step 3's
// fetch_add on count                 | relaxed | - (the page's data is ordered by the slot pair
// above) | The previous owner's writes to page p happen before the next owner's reads: the owner
// writes, then frees (program order), the free's release CAS writes the slot, the next owner's
// acquire load reads that value. The counters only decide *who* gets a ticket, never carry data:
// relaxed. A null is a snapshot of count: with frees running at the same time as requests, a
// request that found the ring empty holds one unit until it gives it back, so another request may
// see count 0 while a page was just published (a spurious null, never a wrong page; the model
// accepts a null at any time, docs/rw.md "The model"). With no frees during a wave (the
// benchmarks), a null means the ring is empty.
//
// Steps (GetPageResult::steps): 1 per request plus one per failed look at the slot in step 3
// (a request that waits for the free of its ticket). Eq. 1 (analysis::queue_tas) counts the
// *waiting in the counter's queue*, which the hardware serializes inside one atomic and no thread
// can count: kernel time is where Eq. 1 shows.
#pragma once

#include <cstdint>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/rw/page_pool.hpp"

namespace heaplab::rw {

/// The queue's shared state: plain pointers and numbers, passed by value into kernels.
struct QueueStorage {
  std::uint64_t* slots    = nullptr;  // capacity slot words
  std::uint64_t* head     = nullptr;  // tickets of GETPAGE
  std::uint64_t* tail     = nullptr;  // tickets of FREEPAGE
  std::uint64_t* count    = nullptr;  // published, unclaimed pages (two's complement)
  std::uint32_t capacity  = 0;        // C >= T
  std::uint32_t num_pages = 0;        // T: page ids are below T
};

namespace queue_detail {

/// Slot word: "empty, ready for lap `lap`".
HEAPLAB_HD_INLINE constexpr std::uint64_t empty_slot(std::uint64_t lap) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(2 * lap)) << 32) | kNoPage;
}
/// Slot word: "full in lap `lap`, holding page p".
HEAPLAB_HD_INLINE constexpr std::uint64_t full_slot(std::uint64_t lap, std::uint32_t p) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(2 * lap + 1)) << 32) | p;
}
HEAPLAB_HD_INLINE constexpr std::uint32_t slot_code(std::uint64_t word) {
  return static_cast<std::uint32_t>(word >> 32);
}

/// FREEPAGE's slot write (the compare-exchange that makes the slot full): release, paired with
/// GETPAGE's acquire load of the slot, so the page's previous owner's accesses happen before the
/// next owner's. MUTANT rw_queue_slot_relaxed: relaxed, so the next owner does not synchronize
/// with the previous one (found only by the explorer's weak-memory mode, workload queue-weak).
HEAPLAB_HD_INLINE HEAPLAB_MUTANT_CONSTEXPR core::MemoryOrder slot_publish_order() {
  return core::mutant::rw_queue_slot_relaxed ? core::MemoryOrder::relaxed
                                             : core::MemoryOrder::release;
}

}  // namespace queue_detail

/// Slot i of a ring whose first `filled` slots hold pages page_of(0), ..., page_of(filled - 1)
/// (lap 0), the rest empty for lap 0; head = 0, tail = count = filled.
template <class PageOf>
HEAPLAB_HD_INLINE std::uint64_t initial_queue_slot(std::uint32_t i,
                                                   std::uint32_t filled,
                                                   PageOf const& page_of) {
  return i < filled ? queue_detail::full_slot(0, page_of(i)) : queue_detail::empty_slot(0);
}

template <class A>
class QueueRef {
 public:
  QueueRef() = default;
  HEAPLAB_HD_INLINE explicit QueueRef(QueueStorage s) : s_(s) {}
  [[nodiscard]] HEAPLAB_HD_INLINE QueueStorage const& storage() const { return s_; }

  /// GETPAGE from the ring (the steps in the header comment).
  HEAPLAB_HD_INLINE GetPageResult get_page() const {
    GetPageResult r;
    r.steps                 = 1;
    std::uint64_t const old = A::fetch_add(s_.count, ~std::uint64_t{0}, core::MemoryOrder::relaxed);
    if (static_cast<std::int64_t>(old) <= 0) {
      // MUTANT rw_queue_empty_keeps_decrement: the empty answer keeps the unit it took, so count
      // stays one too low: a page freed later is never handed out (the ring looks empty).
      if HEAPLAB_MUTANT_CONSTEXPR (!core::mutant::rw_queue_empty_keeps_decrement)
        A::fetch_add(s_.count, std::uint64_t{1}, core::MemoryOrder::relaxed);
      return r;
    }
    std::uint64_t const h     = A::fetch_add(s_.head, std::uint64_t{1}, core::MemoryOrder::relaxed);
    std::uint64_t* const cell = s_.slots + h % s_.capacity;
    std::uint64_t const lap   = h / s_.capacity;
    std::uint32_t const full  = queue_detail::slot_code(queue_detail::full_slot(lap, 0));
    std::uint64_t word        = A::load(cell, core::MemoryOrder::acquire);
    while (queue_detail::slot_code(word) != full) {  // the free of ticket h is still writing
      ++r.steps;
      A::backoff(core::Backoff::until_memory_changes);
      word = A::load(cell, core::MemoryOrder::acquire);
    }
    A::store(cell, queue_detail::empty_slot(lap + 1), core::MemoryOrder::relaxed);
    r.page = static_cast<std::uint32_t>(word);
    return r;
  }

  /// FREEPAGE into the ring. p < T (precondition_error / trap); the caller holds p.
  HEAPLAB_HD_INLINE void free_page(std::uint32_t p) const {
    HEAPLAB_EXPECTS(p < s_.num_pages, "queue free_page: page id beyond the pool (p >= T)");
    std::uint64_t const t     = A::fetch_add(s_.tail, std::uint64_t{1}, core::MemoryOrder::relaxed);
    std::uint64_t* const cell = s_.slots + t % s_.capacity;
    std::uint64_t const lap   = t / s_.capacity;
    std::uint64_t expected    = queue_detail::empty_slot(lap);
    // Waits for the reader of ticket t - C (the slot's previous lap) to empty the slot.
    while (!A::compare_exchange(
        cell, expected, queue_detail::full_slot(lap, p), queue_detail::slot_publish_order())) {
      expected = queue_detail::empty_slot(lap);
      A::backoff(core::Backoff::until_memory_changes);
    }
    A::fetch_add(s_.count, std::uint64_t{1}, core::MemoryOrder::relaxed);
  }

 private:
  QueueStorage s_{};
};

/// Owning host storage of a queue (CPU tests): capacity `capacity` >= T, the first `filled` slots
/// holding pages 0, ..., filled - 1.
class HostQueue {
 public:
  HostQueue(std::uint32_t num_pages, std::uint32_t capacity, std::uint32_t filled)
      : num_pages_(num_pages), slots_(capacity) {
    HEAPLAB_EXPECTS(num_pages > 0, "HostQueue: the pool needs at least one page (T = 0)");
    HEAPLAB_EXPECTS(capacity >= num_pages, "HostQueue: the ring needs capacity >= T");
    HEAPLAB_EXPECTS(filled <= num_pages, "HostQueue: more pages in the ring than the pool has");
    for (std::uint32_t i = 0; i < capacity; ++i)
      slots_[i] = initial_queue_slot(i, filled, [](std::uint32_t k) { return k; });
    counters_[kTail] = counters_[kCount] = filled;
  }
  HostQueue(HostQueue const&)            = delete;
  HostQueue& operator=(HostQueue const&) = delete;

  [[nodiscard]] QueueStorage storage() {
    return QueueStorage{slots_.data(),
                        &counters_[kHead],
                        &counters_[kTail],
                        &counters_[kCount],
                        static_cast<std::uint32_t>(slots_.size()),
                        num_pages_};
  }
  template <class A>
  [[nodiscard]] QueueRef<A> ref() {
    return QueueRef<A>(storage());
  }
  /// count at quiescence: the pages in the ring.
  [[nodiscard]] std::int64_t available() const {
    return static_cast<std::int64_t>(counters_[kCount]);
  }

 private:
  // The counters 64 words (512 B) apart: each on its own cache line.
  static constexpr std::size_t kHead = 0, kTail = 64, kCount = 128;
  std::uint32_t num_pages_;
  std::vector<std::uint64_t> slots_;
  std::uint64_t counters_[kCount + 1]{};
};

}  // namespace heaplab::rw
