// The queue baseline (rw/queue_pool.hpp, RW sec. 3.2.1) under the controlled scheduler (issue 11;
// docs/rw.md "Baselines"): 2-4 logical threads run getpage / freepage / hand-over lists (the rw
// workload's ops, RwOp) on a tiny ring (capacity C = 2-6, T = 1..C pages, all in the ring at the
// start), so tickets wrap the ring several laps in one run. Checks:
//   - the model (model::PageModel) is the ownership log, as in rw_workload.hpp: a page is held
//     after get_page returned it and free before free_page starts, so a correct queue can never
//     trip it; it rejects a page handed out twice (or >= T) and a free by a thread that does not
//     hold the page. A null is legal at any time (a snapshot of count, queue_pool.hpp); it must
//     have taken exactly one step, a page at least one;
//   - at a mid-run barrier and after the drain (quiescence) the ring is consistent with the model
//     (queue_state_problems): count = tail - head = the free pages, tail - head <= C, the slots of
//     tickets head .. tail - 1 are full in their lap and hold exactly the model's free pages, every
//     other slot is empty for the lap of the next ticket that uses it;
//   - observed_pages (queue-weak, the weak-memory mode): a payload word per page written by each
//     owner through the policy (relaxed); every new owner must read the last value written (the
//     free's release compare-exchange on the slot pairs with the request's acquire load).
// Header-only: mutant test targets compile it with their HEAPLAB_MUTANT_* name.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/cookie.hpp"
#include "heaplab/explore/controlled_run.hpp"
#include "heaplab/explore/strategy.hpp"
#include "heaplab/families/interleaving/workloads/page_ownership.hpp"
#include "heaplab/families/interleaving/workloads/rw_workload.hpp"
#include "heaplab/families/interleaving/workloads/workload_kind.hpp"
#include "heaplab/model/page_model.hpp"
#include "heaplab/rw/queue_pool.hpp"

namespace heaplab::interleaving_family::workloads {

struct QueueWorkload {
  std::uint32_t num_pages = 1;  // T, all in the ring at the start (pages 0 .. T - 1)
  std::uint32_t capacity  = 2;  // C >= T
  std::vector<std::vector<RwOp>> threads;
  std::uint32_t mailbox_cells = 1;
  bool observed_pages         = false;
};

inline std::ostream& operator<<(std::ostream& os, QueueWorkload const& w) {
  os << "QueueWorkload{T=" << w.num_pages << ", C=" << w.capacity
     << ", mailbox cells=" << w.mailbox_cells << (w.observed_pages ? ", pages=observed" : "")
     << ", threads:";
  static char const* const names[] = {" get", " free(#", " give(cell ", " take+free(cell "};
  for (std::size_t i = 0; i < w.threads.size(); ++i) {
    os << "\n  T" << i << ":";
    for (auto const& op : w.threads[i]) {
      os << names[static_cast<int>(op.kind)];
      if (op.kind != RwOp::Kind::get) os << op.arg << ")";
    }
  }
  return os << "}";
}

/// The queue workload of a seed: C = 2..6, T = 1..C, 2-4 threads of 2-6 ops (half getpage, the
/// rest free one of mine, give one through a mailbox cell, take one and free it), 1-2 cells.
inline QueueWorkload random_queue_workload(std::uint64_t seed) {
  explore::SplitMix64 rng(core::splitmix64(seed ^ 0x5155'4555'4551ull));
  QueueWorkload w;
  w.capacity      = 2 + static_cast<std::uint32_t>(rng.below(5));
  w.num_pages     = 1 + static_cast<std::uint32_t>(rng.below(w.capacity));
  w.mailbox_cells = 1 + static_cast<std::uint32_t>(rng.below(2));
  w.threads.resize(2 + rng.below(3));
  add_random_ops(w.threads, w.mailbox_cells, rng);
  return w;
}

/// The queue-weak workload of a seed: the queue workload with observed page payloads.
inline QueueWorkload random_queue_weak_workload(std::uint64_t seed) {
  QueueWorkload w  = random_queue_workload(seed);
  w.observed_pages = true;
  return w;
}

/// The ring's state at quiescence: the slot words and the three counters.
struct QueueState {
  std::vector<std::uint64_t> slots;
  std::uint64_t head = 0, tail = 0, count = 0;
};

/// What is inconsistent in `s` (quiescent: no request or free in flight) given the pages the
/// model says are free (in the ring); empty if nothing. The rules are queue_pool.hpp's header.
inline std::vector<std::string> queue_state_problems(QueueState const& s,
                                                     std::set<std::uint32_t> const& free_pages) {
  namespace qd = rw::queue_detail;
  std::vector<std::string> out;
  auto const cap = static_cast<std::uint64_t>(s.slots.size());
  if (s.tail < s.head || s.tail - s.head > cap)
    return {"queue: head " + std::to_string(s.head) + " and tail " + std::to_string(s.tail) +
            " do not leave 0.." + std::to_string(cap) + " pages in the ring"};
  std::uint64_t const in_ring = s.tail - s.head;
  if (static_cast<std::int64_t>(s.count) != static_cast<std::int64_t>(in_ring))
    out.push_back("queue: count " + std::to_string(static_cast<std::int64_t>(s.count)) +
                  " but tail - head = " + std::to_string(in_ring) + " pages in the ring");
  if (in_ring != free_pages.size())
    out.push_back("queue: " + std::to_string(in_ring) + " pages in the ring but the model has " +
                  std::to_string(free_pages.size()) + " free");
  std::multiset<std::uint32_t> seen;
  for (std::uint64_t k = 0; k < cap; ++k) {
    std::uint64_t const ticket = s.head + k;  // the next ticket of slot ticket % C
    std::uint64_t const word   = s.slots[ticket % cap];
    bool const full            = k < in_ring;
    std::uint64_t const lap    = ticket / cap;
    if (qd::slot_code(word) != qd::slot_code(full ? qd::full_slot(lap, 0) : qd::empty_slot(lap)))
      out.push_back("queue: slot " + std::to_string(ticket % cap) + " should be " +
                    (full ? "full" : "empty") + " for lap " + std::to_string(lap) + " (ticket " +
                    std::to_string(ticket) + "), its code is " +
                    std::to_string(qd::slot_code(word)));
    else if (full)
      seen.insert(static_cast<std::uint32_t>(word));
  }
  if (out.empty() && !std::equal(seen.begin(), seen.end(), free_pages.begin(), free_pages.end()))
    out.push_back("queue: the ring's pages are not the model's free pages");
  return out;
}

/// One execution of a queue workload with atomics policy A.
template <class A>
class QueueRun {
 public:
  explicit QueueRun(QueueWorkload workload)
      : w_(std::move(workload)),
        queue_(w_.num_pages, w_.capacity, w_.num_pages),
        storage_(queue_.storage()),
        ref_(storage_),
        own_(w_.num_pages,
             static_cast<std::uint32_t>(w_.threads.size()),
             w_.mailbox_cells,
             w_.observed_pages,
             OwnershipStyle{"queue ", "a missing release/acquire on the slot", false}) {}

  [[nodiscard]] model::PageModel const& model() const { return own_.model(); }

  /// The body of logical thread i (the rw workload's ops; no RW_malloc).
  void thread_body(std::uint32_t i) {
    std::vector<HeldPages> mine;
    auto const free_fn = [this, i](HeldPages const& h) { free_held(i, h); };
    for (RwOp const& op : w_.threads[i]) {
      if (op.kind == RwOp::Kind::get) get(i, mine);
      if (op.kind == RwOp::Kind::free_own && !mine.empty())
        free_held(i, take_held(mine, mine.size() - 1 - op.arg % mine.size()));
      if (op.kind == RwOp::Kind::give && !mine.empty())
        own_.give(i, take_held(mine, 0), op.arg, free_fn);
      if (op.kind == RwOp::Kind::take_and_free) own_.take_and_free(i, op.arg, free_fn);
    }
    own_.barrier([this] { return state_now("the barrier"); });
    while (!mine.empty()) free_held(i, take_held(mine, mine.size() - 1));
    for (std::uint32_t c = 0; c < w_.mailbox_cells; ++c) own_.take_and_free(i, c, free_fn);
  }

  /// After every thread finished: every page back in the ring, the ring consistent.
  std::vector<std::string> final_check() {
    std::vector<std::string> out = state_now("the end");
    if (own_.model().free_count() != w_.num_pages)
      out.push_back("after the drain " + std::to_string(own_.model().free_count()) + " of " +
                    std::to_string(w_.num_pages) + " pages are free");
    return out;
  }

  [[nodiscard]] std::string describe(void const* a) const {
    rw::QueueStorage const& s = storage_;
    auto const p              = reinterpret_cast<std::uintptr_t>(a);
    auto const slots          = reinterpret_cast<std::uintptr_t>(s.slots);
    if (p >= slots && p < slots + s.capacity * 8u)
      return "slot[" + std::to_string((p - slots) / 8) + "]";
    if (a == s.head) return "head";
    if (a == s.tail) return "tail";
    if (a == s.count) return "count";
    return own_.describe(a);
  }

 private:
  void get(std::uint32_t i, std::vector<HeldPages>& mine) {
    rw::GetPageResult const r = ref_.get_page();
    if (r.steps == 0 || (!r.ok() && r.steps != 1))
      throw RwHarnessFailure("queue getpage took " + std::to_string(r.steps) + " steps (page " +
                             (r.ok() ? std::to_string(r.page) : std::string("null")) +
                             "; a null takes exactly 1)");
    std::uint64_t id = 0;
    own_.with_model([&](model::PageModel& m) {
      m.get_page(i, r.page);
      id = ++requests_;
    });
    if (!r.ok()) return;
    HeldPages h{r.page, core::cookie_of((std::uint64_t{i} << 32) | id)};
    if (w_.observed_pages) (void)own_.read_as_new_owner(r.page, "getpage");
    own_.write_payload(r.page, h.payload);
    mine.push_back(h);
  }

  void free_held(std::uint32_t i, HeldPages const& h) {
    own_.check_payload(h);
    own_.with_model([&](model::PageModel& m) { m.free_page(i, h.page); });  // before the free
    ref_.free_page(h.page);                                                 // (reuse may follow)
  }

  std::vector<std::string> state_now(char const* where) {
    rw::QueueStorage const& s = storage_;
    QueueState q;
    q.slots.assign(s.slots, s.slots + s.capacity);
    q.head  = *s.head;
    q.tail  = *s.tail;
    q.count = *s.count;
    std::lock_guard<std::mutex> lock(own_.model_mutex());
    std::set<std::uint32_t> free_pages;
    for (std::uint32_t p = 0; p < w_.num_pages; ++p)
      if (own_.model().is_free(p)) free_pages.insert(p);
    std::vector<std::string> out;
    for (auto const& v : queue_state_problems(q, free_pages))
      out.push_back(std::string(where) + ": " + v);
    return out;
  }

  QueueWorkload w_;
  rw::HostQueue queue_;
  rw::QueueStorage storage_;
  rw::QueueRef<A> ref_;
  PageOwnership<A> own_;
  std::uint64_t requests_ = 0;
};

/// A program for the controlled scheduler: one execution of `workload` (ObservedAtomics).
inline explore::Program make_queue_program(QueueWorkload const& workload) {
  return program_of(std::make_shared<QueueRun<core::ObservedAtomics>>(workload),
                    workload.threads.size());
}

/// The program of a queue kind (queue, queue-weak) for a workload seed (programs.hpp dispatches
/// every kind; a mutant test of this kind includes only this header).
inline explore::Program queue_kind_program(WorkloadKind kind, std::uint64_t workload_seed) {
  if (kind == WorkloadKind::queue) return make_queue_program(random_queue_workload(workload_seed));
  if (kind == WorkloadKind::queue_weak)
    return make_queue_program(random_queue_weak_workload(workload_seed));
  throw std::logic_error(std::string("queue_kind_program: not its kind: ") + to_string(kind));
}

}  // namespace heaplab::interleaving_family::workloads
