// Random workloads from one 64-bit seed (explorer CLI, mutant tests) and the mailbox
// bookkeeping shared with the RapidCheck generators (workload_rc.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "heaplab/explore/strategy.hpp"
#include "heaplab/families/interleaving/workloads/heap_workload.hpp"
#include "heaplab/families/interleaving/workloads/workload_kind.hpp"

namespace heaplab::interleaving_family::workloads {

/// Sizes of the types after T0 (8 B, capacity 64): capacities 32, 16, 8, 7, 5, 4, 2, 2.
inline std::vector<std::uint32_t> const& larger_type_sizes() {
  static std::vector<std::uint32_t> const sizes{16, 32, 64, 73, 100, 128, 200, 256};
  return sizes;
}

/// Gives every give op its own mailbox cell (0, 1, ... in thread-major order) and maps each
/// take's arg onto an existing cell, so that no object is ever overwritten in the mailbox.
inline void assign_mailbox_cells(HeapWorkload& w) {
  std::uint32_t gives = 0;
  for (auto& ops : w.threads)
    for (auto& op : ops)
      if (op.kind == ThreadOp::Kind::give) op.arg = gives++;
  w.mailbox_cells = std::max<std::uint32_t>(gives, 1);
  for (auto& ops : w.threads)
    for (auto& op : ops)
      if (op.kind == ThreadOp::Kind::take_and_free) op.arg %= w.mailbox_cells;
}

struct WorkloadLimits {
  std::uint32_t max_types   = 3;  // 1..3
  std::uint32_t max_blocks  = 4;  // 1..4
  std::uint32_t min_threads = 2;
  std::uint32_t max_threads = 6;
  std::uint32_t max_ops     = 8;  // per thread, 1..max_ops
  /// Objects per allocation op, 1..max_k (k > 1: a coalesced k-slot request, reserve_slots).
  /// Drawn from a second generator, so max_k = 1 gives exactly the workloads of before.
  std::uint32_t max_k = 1;
};

/// The limits of the heap_k workloads: k-slot requests of 1..8 objects (issue 15 item 5).
inline WorkloadLimits k_slot_limits() {
  WorkloadLimits lim;
  lim.max_k = 8;
  return lim;
}

/// A workload drawn from `seed` alone, biased towards the contention patterns of DynaSOAr
/// App. A (few threads and blocks, objects freed right after allocation so that blocks empty,
/// get invalidated and are re-initialized, possibly for another type): 1-3 types (T0 of capacity
/// 64, others 2..32), 1-4 blocks (1 in 40%), 2-6 threads (2 in 40%), 1-5 chunks per thread, each
/// chunk one of alloc, alloc + free the newest, free, give, take; 1-5 active lookups.
inline HeapWorkload random_heap_workload(std::uint64_t seed, WorkloadLimits const& lim = {}) {
  explore::SplitMix64 rng(seed ^ 0x5eed5eed5eed5eedull);
  auto pick_skewed = [&rng](std::uint32_t lo, std::uint32_t hi) {  // lo with 40%, else uniform
    if (hi <= lo || rng.below(10) < 4) return lo;
    return lo + static_cast<std::uint32_t>(rng.below(hi - lo + 1));
  };
  std::uint32_t const num_types = 1 + static_cast<std::uint32_t>(rng.below(lim.max_types));
  std::vector<std::uint32_t> sizes{8};
  for (std::uint32_t t = 1; t < num_types; ++t)
    sizes.push_back(larger_type_sizes()[rng.below(larger_type_sizes().size())]);
  std::uint32_t const blocks = pick_skewed(1, lim.max_blocks);
  std::uint32_t min_cap      = 64;
  for (std::uint32_t s : sizes) min_cap = std::min(min_cap, 512u / s);
  std::uint32_t const n = 1 + static_cast<std::uint32_t>(rng.below(std::min(min_cap - 1, 3u)));
  HeapWorkload w;
  w.config         = make_config(sizes, blocks, n);
  w.active_lookups = 1 + static_cast<std::uint32_t>(rng.below(5));
  w.seed_salt      = seed;
  w.threads.resize(pick_skewed(lim.min_threads, lim.max_threads));
  for (auto& ops : w.threads) {
    std::uint32_t const chunks = 1 + static_cast<std::uint32_t>(rng.below(lim.max_ops / 2 + 1));
    for (std::uint32_t k = 0; k < chunks && ops.size() < lim.max_ops; ++k) {
      std::uint64_t const roll = rng.below(100);
      std::uint32_t const type = static_cast<std::uint32_t>(rng.below(num_types));
      if (roll < 35) {
        ops.push_back(ThreadOp{ThreadOp::Kind::allocate, type});
      } else if (roll < 70) {
        ops.push_back(ThreadOp{ThreadOp::Kind::allocate, type});
        ops.push_back(ThreadOp{ThreadOp::Kind::free_own, 0});
      } else if (roll < 80) {
        ops.push_back(ThreadOp{ThreadOp::Kind::free_own, static_cast<std::uint32_t>(rng.below(4))});
      } else if (roll < 90) {
        ops.push_back(ThreadOp{ThreadOp::Kind::give, 0});
      } else {
        ops.push_back(
            ThreadOp{ThreadOp::Kind::take_and_free, static_cast<std::uint32_t>(rng.below(64))});
      }
    }
  }
  if (lim.max_k > 1) {
    explore::SplitMix64 krng(seed ^ 0x6b5107a11c0c0a1eull);
    for (auto& ops : w.threads)
      for (auto& op : ops)
        if (op.kind == ThreadOp::Kind::allocate)
          op.k = 1 + static_cast<std::uint32_t>(krng.below(lim.max_k));
    w.oom_retries = static_cast<std::uint32_t>(krng.below(3));  // the GPU default is 2
  }
  assign_mailbox_cells(w);
  return w;
}

/// A cold-start burst for claim tickets (core/heap_protocol.hpp find_or_claim_block "Claim
/// tickets"; the ticket paths it reaches are counted by claim_paths.hpp): an empty heap of 2-8
/// blocks (so claim_run_slots is 2, 4 or 8 and run-table entries are reused), 1-2 types (T0 of
/// capacity 64, T1 of capacity 2..32), 2-4 threads with 1-2 k-slot requests each, k around N/2 or N
/// of the type (N/2, N/2 + 1, N - 1, N): the demand ranges from a fraction of the heap to several
/// times its capacity (exhaustion: openers find no free block and publish kNotFound). A request of
/// at most 8 objects is freed again right after it in 30% of the cases (blocks empty and are opened
/// again by later runs). claim_wait_rounds 1, 2, 4 or 16 (few rounds: waiters time out; 4 and
/// 16: the last quarter's lookups); the GPU leader's oom_retries 0-2; the drain after the barrier
/// in a quarter of the workloads (frees are not what this workload is about, and cost steps).
inline HeapWorkload random_burst_workload(std::uint64_t seed) {
  explore::SplitMix64 rng(seed ^ 0xb0257c1a17ull);
  std::uint32_t const num_types = 1 + static_cast<std::uint32_t>(rng.below(2));
  std::vector<std::uint32_t> sizes{8};
  if (num_types == 2) sizes.push_back(larger_type_sizes()[rng.below(larger_type_sizes().size())]);
  std::uint32_t const blocks = 2 + static_cast<std::uint32_t>(rng.below(7));
  std::uint32_t min_cap      = 64;
  for (std::uint32_t sz : sizes) min_cap = std::min(min_cap, 512u / sz);
  std::uint32_t const n = 1 + static_cast<std::uint32_t>(rng.below(std::min(min_cap - 1, 3u)));
  HeapWorkload w;
  w.config            = make_config(sizes, blocks, n);
  w.active_lookups    = 1 + static_cast<std::uint32_t>(rng.below(2));
  w.seed_salt         = seed;
  w.claim_wait_rounds = std::vector<std::uint32_t>{1, 2, 4, 16}[rng.below(4)];
  w.oom_retries       = static_cast<std::uint32_t>(rng.below(3));
  w.drain             = rng.below(4) == 0;
  w.threads.resize(2 + rng.below(3));
  for (auto& ops : w.threads) {
    std::uint32_t const requests = 1 + static_cast<std::uint32_t>(rng.below(2));
    for (std::uint32_t r = 0; r < requests; ++r) {
      auto const type                = static_cast<std::uint32_t>(rng.below(num_types));
      std::uint32_t const c          = w.config.capacity(type);
      std::uint32_t const choices[4] = {c / 2, c / 2 + 1, c - 1, c};
      std::uint32_t const k = std::max<std::uint32_t>(1, std::min(choices[rng.below(4)], c));
      ops.push_back(ThreadOp{ThreadOp::Kind::allocate, type, k});
      if (k <= 8 && rng.below(10) < 3)
        for (std::uint32_t f = 0; f < k; ++f) ops.push_back(ThreadOp{ThreadOp::Kind::free_own, 0});
    }
  }
  assign_mailbox_cells(w);
  return w;
}

/// Block turnover across types on one block, for the exhaustive search: D allocates a T1 and
/// frees it (the block empties: D invalidates it); B allocates a T1 in the same block, frees it
/// and allocates a T0, which re-initializes the block for another type. A delayed invalidator
/// (App. A.4 "Block Replaced after Delete-Last") and a stale type read (Alg. 8) both fit in two
/// preemptions. T1 has capacity 2.
inline HeapWorkload turnover_workload() {
  HeapWorkload w;
  w.config         = make_config({8, 256}, 1, 1);
  w.active_lookups = 1;
  w.seed_salt      = 7;
  w.barrier        = false;
  using K          = ThreadOp::Kind;
  w.threads        = {{{K::allocate, 1}, {K::free_own, 0}},
                      {{K::allocate, 1}, {K::free_own, 0}, {K::allocate, 0}}};
  assign_mailbox_cells(w);
  return w;
}

/// Out-of-memory answers on large heaps (issue 34, class 1): a heap of 65..192 blocks (a
/// two-level bitmap of 2 or 3 level-0 containers), one type (T0, capacity 64), prefilled
/// (HeapWorkload::prefill): full except 2..4 blocks with 1 or 2 free slots each, the first ones
/// in different level-0 containers, and (in 40%) one block free again; 2-3 threads with 1-3
/// single-object allocations each, half of them freed right away (the slots change hands, blocks
/// fill and empty their last free slots, so summary bits are set and cleared while others
/// search); 1-2 active lookups. Demand is around the free slots, so nulls are common and both
/// oom-justified rules (a free block, an untaken slot of a block that never emptied) decide them.
inline HeapWorkload random_large_heap_workload(std::uint64_t seed) {
  explore::SplitMix64 rng(seed ^ 0x1a26e4ea9b1c0dedull);
  auto const blocks              = 65 + static_cast<std::uint32_t>(rng.below(128));
  auto const n                   = 1 + static_cast<std::uint32_t>(rng.below(3));
  std::uint32_t const containers = (blocks + 63) / 64;
  HeapWorkload w;
  w.config         = make_config({8}, blocks, n);
  w.active_lookups = 1 + static_cast<std::uint32_t>(rng.below(2));
  w.seed_salt      = seed;
  w.prefill        = true;
  std::vector<bool> used(blocks, false);
  if (rng.below(10) < 4) {
    auto const b = static_cast<std::uint32_t>(rng.below(blocks));
    w.prefill_free.push_back(b);
    used[b] = true;
  }
  std::uint32_t const partial = 2 + static_cast<std::uint32_t>(rng.below(3));
  for (std::uint32_t p = 0; p < partial; ++p) {
    std::uint32_t const c     = p % containers;
    std::uint32_t const first = c * 64;
    std::uint32_t const span  = std::min(64u, blocks - first);
    auto const b              = first + static_cast<std::uint32_t>(rng.below(span));
    if (used[b]) continue;
    used[b] = true;
    w.prefill_partial.emplace_back(b, 1 + static_cast<std::uint32_t>(rng.below(2)));
  }
  w.threads.resize(2 + rng.below(2));
  for (auto& ops : w.threads) {
    std::uint32_t const chunks = 1 + static_cast<std::uint32_t>(rng.below(3));
    for (std::uint32_t k = 0; k < chunks; ++k) {
      ops.push_back(ThreadOp{ThreadOp::Kind::allocate, 0});
      if (rng.below(2) == 0) ops.push_back(ThreadOp{ThreadOp::Kind::free_own, 0});
    }
  }
  assign_mailbox_cells(w);
  return w;
}

/// The heap-weak workload of a seed: the heap workload, with observed object words.
inline HeapWorkload random_heap_weak_workload(std::uint64_t seed) {
  HeapWorkload w     = random_heap_workload(seed);
  w.observed_objects = true;
  return w;
}

/// The program of a heap kind (heap, heap-k, burst, heap-large, heap-weak, turnover) for a workload
/// seed (turnover has one program). Heap programs add the claim-ticket paths of every run to
/// `claim_paths` if given (claim_paths.hpp). programs.hpp dispatches every kind; a mutant test
/// of a heap kind includes only this header.
inline explore::Program heap_kind_program(
    WorkloadKind kind,
    std::uint64_t workload_seed,
    std::shared_ptr<ClaimPathCounts> const& claim_paths = {}) {
  switch (kind) {
    case WorkloadKind::heap:
      return make_heap_program(random_heap_workload(workload_seed), claim_paths);
    case WorkloadKind::heap_k:
      return make_heap_program(random_heap_workload(workload_seed, k_slot_limits()), claim_paths);
    case WorkloadKind::burst:
      return make_heap_program(random_burst_workload(workload_seed), claim_paths);
    case WorkloadKind::heap_large:
      return make_heap_program(random_large_heap_workload(workload_seed), claim_paths);
    case WorkloadKind::heap_weak:
      return make_heap_program(random_heap_weak_workload(workload_seed), claim_paths);
    case WorkloadKind::turnover:
      return make_heap_program(turnover_workload());
    default:
      throw std::logic_error(std::string("heap_kind_program: ") + to_string(kind) +
                             " is not a heap kind");
  }
}

}  // namespace heaplab::interleaving_family::workloads
