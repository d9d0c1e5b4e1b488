// Which claim-ticket paths of find_or_claim_block (core/heap_protocol.hpp "Claim tickets") a
// controlled run took, read off its trace, and the bounded-waiting check (a waiter polls its run's
// entry at most claim_wait_rounds times). Used by the heap workloads (heap_workload.hpp); the burst
// workloads (workload_gen.hpp random_burst_workload) are built to reach every path, and
// explorer_test asserts that they do (a counter that stays 0 fails the test).
//
// The trace is read per thread, following the code: a fetch_add on claim_tickets[t] is a
// take_claim_tickets (its old value and operand give the tickets, so whether the thread opens a
// run and which, exactly as take_claim_tickets computes it). An opener's next store to the run
// table is its publish_run: a block, or kNotFound (it found no free block). A waiter's next
// events are await_run's rounds: one load of its run's entry per round (served when the entry
// carries its run's tag: a block, or the opener's kNotFound), in the last quarter of the rounds
// followed by one try_find_set descent of active[t] (served when every level's word was non-zero:
// the descent found a block); after the last round it timed out. An entry load that shows another
// run's tag is counted too: the entry was overwritten by a later run that shares it (run-table
// reuse) or still holds an earlier one. Host only.
#pragma once

// 1: a waiter that polls more than claim_wait_rounds times is a violation (bounded waiting).
// A test target may define it 0 to see what the unbounded wait does without this check (the
// mutant claim_wait_unbounded then runs into the explorer's step budget: a livelock).
#ifndef HEAPLAB_HARNESS_CHECK_BOUNDED_WAITING
#define HEAPLAB_HARNESS_CHECK_BOUNDED_WAITING 1
#endif

#include <cstdint>
#include <string>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/heap_protocol.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/explore/trace.hpp"

namespace heaplab::interleaving_family::workloads {

/// Claim-ticket paths taken, summed over runs.
struct ClaimPathCounts {
  std::uint64_t runs                 = 0;  // runs counted
  std::uint64_t takes                = 0;  // take_claim_tickets calls
  std::uint64_t opener_block         = 0;  // an opener published a block
  std::uint64_t opener_none          = 0;  // an opener found no free block, published kNotFound
  std::uint64_t waiter_served        = 0;  // a waiter read its run's block from the entry
  std::uint64_t waiter_served_none   = 0;  // a waiter read its opener's kNotFound
  std::uint64_t waiter_lookup        = 0;  // a waiter took a block its active[t] lookup found
  std::uint64_t waiter_timed_out     = 0;  // a waiter gave up after claim_wait_rounds rounds
  std::uint64_t entry_held_other_run = 0;  // a waiter's entry load showed another run's tag

  ClaimPathCounts& operator+=(ClaimPathCounts const& o) {
    runs += o.runs;
    takes += o.takes;
    opener_block += o.opener_block;
    opener_none += o.opener_none;
    waiter_served += o.waiter_served;
    waiter_served_none += o.waiter_served_none;
    waiter_lookup += o.waiter_lookup;
    waiter_timed_out += o.waiter_timed_out;
    entry_held_other_run += o.entry_held_other_run;
    return *this;
  }
  [[nodiscard]] std::string to_string() const {
    return "runs " + std::to_string(runs) + ", ticket takes " + std::to_string(takes) +
           ", openers: block " + std::to_string(opener_block) + " / none " +
           std::to_string(opener_none) + ", waiters: served " + std::to_string(waiter_served) +
           " / served none " + std::to_string(waiter_served_none) + " / lookup " +
           std::to_string(waiter_lookup) + " / timed out " + std::to_string(waiter_timed_out) +
           ", entry loads showing another run " + std::to_string(entry_held_other_run);
  }
};

namespace claim_paths_detail {

using Trace = std::vector<explore::Event const*>;  // one thread's events, in order

inline std::uintptr_t addr(void const* p) { return reinterpret_cast<std::uintptr_t>(p); }
inline bool in(void const* p, std::uint64_t const* base, std::uint64_t n) {
  return addr(p) >= addr(base) && addr(p) < addr(base + n);
}

/// A ticket take (a fetch_add on claim_tickets[T]) as take_claim_tickets computes it, from the
/// RMW's old value (the first ticket) and operand (k).
struct Take {
  std::uint32_t type         = 0;
  std::uint64_t run          = 0;
  std::uint64_t tag          = 0;  // HeapProtocol::run_tag
  bool opens                 = false;
  std::uint64_t const* entry = nullptr;  // the run's entry of the claim-run table
  std::string who;                       // "T1 (run 0 of type 0)"
};

inline Take take_of(explore::Event const& take, core::HeapStorage const& s, std::uint32_t th) {
  Take k;
  k.type = static_cast<std::uint32_t>((addr(take.address) - addr(s.claim_tickets)) / 8u);
  std::uint64_t const n = s.capacities[k.type], first = take.old_value,
                      last = first + take.operand - 1u;
  k.opens                  = first % n == 0 || first / n != last / n;
  k.run                    = k.opens ? last / n : first / n;
  k.tag                    = k.run % 0xFFFFFFFFull + 1u;
  k.entry =
      s.claim_runs + std::uint64_t{k.type} * s.claim_run_slots + (k.run & (s.claim_run_slots - 1u));
  k.who = "T" + std::to_string(th) + " (run " + std::to_string(k.run) + " of type " +
          std::to_string(k.type) + ")";
  return k;
}

/// An opener's next store to its entry (from mine[j] on) is its publish: a block or kNotFound.
inline void read_opener(Trace const& mine,
                        std::size_t j,
                        Take const& k,
                        ClaimPathCounts& c,
                        std::vector<std::string>& violations) {
  while (j < mine.size() && !(mine[j]->op == core::AtomicOp::store && mine[j]->address == k.entry))
    ++j;
  if (j == mine.size()) {
    violations.push_back("claim paths: opener " + k.who + " never published its run");
    return;
  }
  if ((mine[j]->new_value & 0xFFFFFFFFull) == core::kNotFound)
    ++c.opener_none;
  else
    ++c.opener_block;
}

/// One try_find_set descent of active[T] from mine[j] on (one load per level, top-down; it found
/// a block iff no word was 0): whether it found one. Advances j past its loads.
inline bool lookup_found(Trace const& mine,
                         std::size_t& j,
                         std::uint64_t const* active,
                         core::HeapStorage const& s) {
  std::uint32_t loads = 0;
  bool found          = true;
  while (loads < s.layout.num_levels && j < mine.size() && mine[j]->op == core::AtomicOp::load &&
         in(mine[j]->address, active, s.layout.total_words)) {
    found = found && mine[j]->new_value != 0;
    ++loads;
    ++j;
    if (!found) break;
  }
  return found && loads == s.layout.num_levels;
}

/// A waiter's await_run rounds from mine[j] on: an entry load per round, then in the last
/// quarter one lookup; counts how it ended, and a violation for more than claim_wait_rounds
/// polls (bounded waiting) or a trace that does not follow await_run.
inline void read_waiter(Trace const& mine,
                        std::size_t j,
                        Take const& k,
                        core::HeapStorage const& s,
                        ClaimPathCounts& c,
                        std::vector<std::string>& violations) {
  std::uint64_t const rounds    = s.claim_wait_rounds;
  std::uint64_t const lookup_at = rounds - rounds / 4;  // first round with a lookup
  std::uint64_t const* active   = s.active_words + std::uint64_t{k.type} * s.layout.total_words;
  for (std::uint64_t polls = 0;;) {
    if (j == mine.size() || mine[j]->op != core::AtomicOp::load || mine[j]->address != k.entry) {
      if (polls >= rounds)
        ++c.waiter_timed_out;
      else
        violations.push_back("claim paths: waiter " + k.who + " left await_run after " +
                             std::to_string(polls) + " of " + std::to_string(rounds) +
                             " rounds without a result (the trace reader is out of date)");
      return;
    }
    std::uint64_t const e = mine[j++]->new_value;
    ++polls;
    if (HEAPLAB_HARNESS_CHECK_BOUNDED_WAITING && polls > rounds) {
      violations.push_back("bounded waiting: waiter " + k.who + " polled its run's entry " +
                           std::to_string(polls) + " times (claim_wait_rounds " +
                           std::to_string(rounds) + ")");
      return;
    }
    if ((e >> 32) == k.tag) {
      if ((e & 0xFFFFFFFFull) == core::kNotFound)
        ++c.waiter_served_none;
      else
        ++c.waiter_served;
      return;
    }
    if ((e >> 32) != 0) ++c.entry_held_other_run;
    if (polls - 1 >= lookup_at && lookup_found(mine, j, active, s)) {
      ++c.waiter_lookup;
      return;
    }
  }
}

}  // namespace claim_paths_detail

/// The claim-ticket paths of one run's trace; appends a violation to `violations` for a waiter
/// that polled more than claim_wait_rounds times (bounded waiting) or a trace that does not
/// follow find_or_claim_block (the reader is out of date).
inline ClaimPathCounts classify_claim_paths(std::vector<explore::Event> const& events,
                                            core::HeapStorage const& s,
                                            std::vector<std::string>& violations) {
  namespace d = claim_paths_detail;
  ClaimPathCounts c;
  c.runs = 1;
  if (s.claim_tickets == nullptr || s.claim_runs == nullptr) return c;
  std::uint32_t max_thread = 0;
  for (auto const& e : events) max_thread = e.thread + 1 > max_thread ? e.thread + 1 : max_thread;
  for (std::uint32_t th = 0; th < max_thread; ++th) {
    d::Trace mine;
    for (auto const& e : events)
      if (e.thread == th) mine.push_back(&e);
    for (std::size_t i = 0; i < mine.size(); ++i) {
      explore::Event const& take = *mine[i];
      if (take.op != core::AtomicOp::fetch_add ||
          !d::in(take.address, s.claim_tickets, s.num_types))
        continue;
      ++c.takes;
      d::Take const k = d::take_of(take, s, th);
      if (k.opens)
        d::read_opener(mine, i + 1, k, c, violations);
      else
        d::read_waiter(mine, i + 1, k, s, c, violations);
    }
  }
  return c;
}

}  // namespace heaplab::interleaving_family::workloads
