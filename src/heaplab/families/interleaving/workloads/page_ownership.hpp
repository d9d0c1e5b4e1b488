// What the rw and queue explorer workloads (rw_workload.hpp, queue_workload.hpp; issue 11,
// docs/rw.md "Under the controlled scheduler", "Baselines") share around their page pool: the
// ownership log (model::PageModel under a lock), the mailbox cells that hand a page from one
// logical thread to another, the payload word of each page (observed_pages: written by each owner
// through the policy, relaxed; every new owner must read the last value written), the mid-run
// barrier (the last arriver runs the workload's check while the others wait) and the names of
// these words in a trace. A workload owns one PageOwnership<A> and passes in what differs: how
// it frees a page (give's fallback, take_and_free) and the check at the barrier.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/explore/controlled_run.hpp"
#include "heaplab/model/page_model.hpp"

namespace heaplab::interleaving_family::workloads {

/// A page a logical thread holds, with the value its payload word should have.
struct HeldPages {
  std::uint32_t page    = 0;
  std::uint64_t payload = 0;
  std::uint32_t count   = 0;  // 0: one page from getpage; n >= 1: a run of RW_malloc from page
};

/// Removes mine[idx] and returns it.
inline HeldPages take_held(std::vector<HeldPages>& mine, std::size_t idx) {
  HeldPages const h = mine[idx];
  mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(idx));
  return h;
}

/// Where the workloads' wording and order of reads differ (kept: the same messages, the same
/// explored atomics in the same order).
struct OwnershipStyle {
  char const* label   = "";                           // before a new owner's failure: "queue "
  char const* missing = "a missing release/acquire";  // what that failure blames
  // take_and_free: the taker reads the page word, then (observed_pages) reads it again as the
  // new owner (rw); otherwise it reads it once, as the new owner when observed (queue).
  bool take_reads_twice = false;
};

/// Raised inside a logical thread when an rw harness check fails (reported as thread_error).
class RwHarnessFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The shared words and checks of one execution, with atomics policy A.
template <class A>
class PageOwnership {
 public:
  PageOwnership(std::uint32_t num_pages,
                std::uint32_t num_threads,
                std::uint32_t mailbox_cells,
                bool observed_pages,
                OwnershipStyle style)
      : model_(num_pages),
        num_threads_(num_threads),
        observed_(observed_pages),
        style_(style),
        mailbox_(mailbox_cells, 0),
        payload_(num_pages, 0) {}

  [[nodiscard]] model::PageModel& model() { return model_; }
  [[nodiscard]] model::PageModel const& model() const { return model_; }
  /// Held while a check reads the model (with_model takes it too).
  [[nodiscard]] std::mutex& model_mutex() { return model_mutex_; }
  /// The model's owner id of the pages in the mailbox cells (after the threads' ids).
  [[nodiscard]] std::uint32_t mailbox_owner() const { return num_threads_; }

  /// f(model) under the lock (a plain host structure; no yield point inside); the model's
  /// rejections become RwHarnessFailure.
  template <class F>
  void with_model(F&& f) {
    std::lock_guard<std::mutex> lock(model_mutex_);
    try {
      f(model_);
    } catch (std::exception const& e) {
      throw RwHarnessFailure(std::string("model: ") + e.what());
    }
  }

  /// Hands the page over through a mailbox cell; if the cell is occupied, frees it instead
  /// (free(h), by thread i).
  template <class Free>
  void give(std::uint32_t i, HeldPages const& h, std::uint32_t cell, Free&& free) {
    with_model([&](model::PageModel& m) { m.hand_over(i, mailbox_owner(), h.page); });
    std::uint64_t expected = 0;  // the hand-over is logged before it is visible
    if (!A::compare_exchange(
            &mailbox_[cell], expected, std::uint64_t{h.page} + 1u, core::MemoryOrder::acq_rel)) {
      with_model([&](model::PageModel& m) { m.hand_over(mailbox_owner(), i, h.page); });
      free(h);
    }
  }

  /// Takes the page in a mailbox cell (if any), writes its payload word as its new owner and
  /// frees it (free(h), by thread i).
  template <class Free>
  void take_and_free(std::uint32_t i, std::uint32_t cell, Free&& free) {
    std::uint64_t const v =
        A::exchange(&mailbox_[cell], std::uint64_t{0}, core::MemoryOrder::acq_rel);
    if (v == 0) return;
    auto const page = static_cast<std::uint32_t>(v - 1);
    with_model([&](model::PageModel& m) { m.hand_over(mailbox_owner(), i, page); });
    HeldPages h{page, 0};
    if (style_.take_reads_twice) {
      h.payload = read_payload(page);
      if (observed_) h.payload = read_as_new_owner(page, "take");
    } else {
      h.payload = observed_ ? read_as_new_owner(page, "take") : read_payload(page);
    }
    h.payload ^= 1u;
    write_payload(page, h.payload);
    free(h);
  }

  std::uint64_t read_payload(std::uint32_t p) {
    if (!observed_) return payload_[p];
    return A::load(&payload_[p], core::MemoryOrder::relaxed);
  }
  void write_payload(std::uint32_t p, std::uint64_t v) {
    if (!observed_)
      payload_[p] = v;
    else
      A::store(&payload_[p], v, core::MemoryOrder::relaxed);
  }
  /// Every page of h still has h's payload: no one else wrote it while h was held.
  void check_payload(HeldPages const& h) {
    for (std::uint32_t p = h.page; p < h.page + std::max(h.count, 1u); ++p)
      if (read_payload(p) != h.payload)
        throw RwHarnessFailure("payload of page " + std::to_string(p) +
                               " was overwritten while held (a page handed to two owners)");
  }
  /// observed_pages: the new owner must read the last value written to the page's word.
  std::uint64_t read_as_new_owner(std::uint32_t p, char const* how) {
    std::uint64_t const seen = read_payload(p);
    std::uint64_t const last = core::HostAtomics::load(&payload_[p], core::MemoryOrder::relaxed);
    if (seen != last)
      throw RwHarnessFailure(std::string(style_.label) + how + " of page " + std::to_string(p) +
                             ": the new owner reads the page word as " + std::to_string(seen) +
                             " but the last write stored " + std::to_string(last) +
                             ": the previous owner's accesses do not happen before the new "
                             "owner's (" +
                             style_.missing + ")");
    return seen;
  }

  /// All threads meet; the last to arrive runs check() (the problems found, one a line) while
  /// the others wait (quiescent).
  template <class Check>
  void barrier(Check&& check) {
    std::uint32_t const arrived =
        A::fetch_add(&arrivals_, std::uint32_t{1}, core::MemoryOrder::acq_rel) + 1u;
    if (arrived == num_threads_) {
      std::vector<std::string> const found = check();
      if (!found.empty()) {
        std::string all;
        for (auto const& f : found) all += (all.empty() ? "" : "\n") + f;
        throw RwHarnessFailure(all);
      }
      A::store(&open_, std::uint32_t{1}, core::MemoryOrder::release);
      return;
    }
    while (A::load(&open_, core::MemoryOrder::acquire) == 0)
      A::backoff(core::Backoff::until_memory_changes);
  }

  /// The name of a mailbox, payload or barrier word; empty for any other address.
  [[nodiscard]] std::string describe(void const* a) const {
    auto const p = reinterpret_cast<std::uintptr_t>(a);
    auto const m = reinterpret_cast<std::uintptr_t>(mailbox_.data());
    if (p >= m && p < m + mailbox_.size() * 8)
      return "mailbox[" + std::to_string((p - m) / 8) + "]";
    auto const o = reinterpret_cast<std::uintptr_t>(payload_.data());
    if (p >= o && p < o + payload_.size() * 8) return "page[" + std::to_string((p - o) / 8) + "]";
    if (a == &arrivals_) return "barrier.arrivals";
    if (a == &open_) return "barrier.open";
    return {};
  }

 private:
  model::PageModel model_;
  std::mutex model_mutex_;
  std::uint32_t num_threads_;
  bool observed_;
  OwnershipStyle style_;
  std::vector<std::uint64_t> mailbox_;
  std::vector<std::uint64_t> payload_;
  std::uint32_t arrivals_ = 0;
  std::uint32_t open_     = 0;
};

/// A program for the controlled scheduler from one execution `run` of a workload of
/// `num_threads` logical threads (Run: thread_body(i), final_check(), describe(a)).
template <class Run>
explore::Program program_of(std::shared_ptr<Run> run, std::size_t num_threads) {
  explore::Program p;
  for (std::uint32_t i = 0; i < num_threads; ++i)
    p.threads.push_back([run, i] { run->thread_body(i); });
  p.check            = [run](std::vector<explore::Event> const&) { return run->final_check(); };
  p.describe_address = [run](void const* a) { return run->describe(a); };
  return p;
}

}  // namespace heaplab::interleaving_family::workloads
