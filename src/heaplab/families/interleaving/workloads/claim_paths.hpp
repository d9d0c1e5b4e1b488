// Which claim-ticket paths of find_or_claim_block (core/heap_ref.hpp "Claim tickets") a controlled
// run took, read off its trace, and the bounded-waiting check (a waiter polls its run's entry at
// most claim_wait_rounds times). Used by the heap workloads (heap_workload.hpp); the burst
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
#include "heaplab/core/heap_ref.hpp"
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

/// The claim-ticket paths of one run's trace; appends a violation to `violations` for a waiter
/// that polled more than claim_wait_rounds times (bounded waiting) or a trace that does not
/// follow find_or_claim_block (the reader is out of date).
inline ClaimPathCounts classify_claim_paths(std::vector<explore::Event> const& events,
                                            core::HeapStorage const& s,
                                            std::vector<std::string>& violations) {
  ClaimPathCounts c;
  c.runs = 1;
  if (s.claim_tickets == nullptr || s.claim_runs == nullptr) return c;
  auto const addr = [](void const* p) { return reinterpret_cast<std::uintptr_t>(p); };
  auto const in   = [&](void const* p, std::uint64_t const* base, std::uint64_t n) {
    return addr(p) >= addr(base) && addr(p) < addr(base + n);
  };
  std::uint32_t const max_thread = [&] {
    std::uint32_t m = 0;
    for (auto const& e : events) m = e.thread + 1 > m ? e.thread + 1 : m;
    return m;
  }();
  std::uint64_t const rounds    = s.claim_wait_rounds;
  std::uint64_t const lookup_at = rounds - rounds / 4;  // first round with a lookup
  for (std::uint32_t th = 0; th < max_thread; ++th) {
    std::vector<explore::Event const*> mine;
    for (auto const& e : events)
      if (e.thread == th) mine.push_back(&e);
    for (std::size_t i = 0; i < mine.size(); ++i) {
      explore::Event const& take = *mine[i];
      if (take.op != core::AtomicOp::fetch_add || !in(take.address, s.claim_tickets, s.num_types))
        continue;
      ++c.takes;
      auto const t = static_cast<std::uint32_t>((addr(take.address) - addr(s.claim_tickets)) / 8u);
      // take_claim_tickets, recomputed from the RMW's old value (first ticket) and operand (k).
      std::uint64_t const n = s.capacities[t], first = take.old_value,
                          last = first + take.operand - 1u;
      bool const opens         = first % n == 0 || first / n != last / n;
      std::uint64_t const run  = opens ? last / n : first / n;
      std::uint64_t const tag  = run % 0xFFFFFFFFull + 1u;  // HeapRef::run_tag
      std::uint64_t const* entry =
          s.claim_runs + std::uint64_t{t} * s.claim_run_slots + (run & (s.claim_run_slots - 1u));
      std::string const who = "T" + std::to_string(th) + " (run " + std::to_string(run) +
                              " of type " + std::to_string(t) + ")";
      std::size_t j = i + 1;
      if (opens) {
        while (j < mine.size() &&
               !(mine[j]->op == core::AtomicOp::store && mine[j]->address == entry))
          ++j;
        if (j == mine.size()) {
          violations.push_back("claim paths: opener " + who + " never published its run");
          continue;
        }
        if ((mine[j]->new_value & 0xFFFFFFFFull) == core::kNotFound)
          ++c.opener_none;
        else
          ++c.opener_block;
        continue;
      }
      // A waiter: await_run's rounds.
      std::uint64_t const* act = s.active_words + std::uint64_t{t} * s.layout.total_words;
      std::uint64_t polls      = 0;
      for (;;) {
        if (j == mine.size() || mine[j]->op != core::AtomicOp::load || mine[j]->address != entry) {
          if (polls >= rounds) {
            ++c.waiter_timed_out;
          } else {
            violations.push_back("claim paths: waiter " + who + " left await_run after " +
                                 std::to_string(polls) + " of " + std::to_string(rounds) +
                                 " rounds without a result (the trace reader is out of date)");
          }
          break;
        }
        std::uint64_t const e = mine[j++]->new_value;
        ++polls;
        if (HEAPLAB_HARNESS_CHECK_BOUNDED_WAITING && polls > rounds) {
          violations.push_back("bounded waiting: waiter " + who + " polled its run's entry " +
                               std::to_string(polls) + " times (claim_wait_rounds " +
                               std::to_string(rounds) + ")");
          break;
        }
        if ((e >> 32) == tag) {
          if ((e & 0xFFFFFFFFull) == core::kNotFound)
            ++c.waiter_served_none;
          else
            ++c.waiter_served;
          break;
        }
        if ((e >> 32) != 0) ++c.entry_held_other_run;
        if (polls - 1 >= lookup_at) {
          // try_find_set: one load per level, top-down; it found a block iff no word was 0.
          std::uint32_t loads = 0;
          bool found          = true;
          while (loads < s.layout.num_levels && j < mine.size() &&
                 mine[j]->op == core::AtomicOp::load &&
                 in(mine[j]->address, act, s.layout.total_words)) {
            found = found && mine[j]->new_value != 0;
            ++loads;
            ++j;
            if (!found) break;
          }
          if (found && loads == s.layout.num_levels) {
            ++c.waiter_lookup;
            break;
          }
        }
      }
    }
  }
  return c;
}

}  // namespace heaplab::interleaving_family::workloads
