// Heap workloads for the portable core: per-thread operation lists run by logical threads, under
// the controlled scheduler (ObservedAtomics) or free-running (HostAtomics), with the checks of
// issue 4:
//   - ownership log: a slot is owned by at most one thread (or the hand-over mailbox) at a time;
//     acquisition is logged after the allocation returned, release before the free starts, so a
//     correct protocol can never trip it;
//   - every successful allocation landed in a block whose header type is the requested type and
//     whose allocation bit for the slot is set, below the type's capacity;
//   - each object's payload word (written by its owner, plain memory) is intact when freed: a
//     torn hand-over or a slot given to two owners changes it, and ThreadSanitizer sees any
//     missing happens-before between owners;
//   - with observed_objects (the heap-weak workload, for the explorer's weak-memory mode) the
//     payload word is a relaxed atomic through the policy, and every new owner (an allocation,
//     a take from the mailbox) must read the last value written to it: the previous owner's
//     accesses happen before the new owner's (free's release, reservation's acquire, and across
//     a block's deletion and re-initialization the free-bitmap and header release/acquire
//     pairs, docs/core.md "Memory orders"). A stale read is a missing happens-before edge;
//   - at a mid-run barrier (all threads quiescent) the invariant catalog holds on
//     check::from_core(heap), and the allocated slots are exactly the owned slots;
//   - after the run (all objects freed): the catalog holds, every block is free (no capacity
//     lost), nobody owns anything, and (under the scheduler) the state bitmaps' operation
//     multisets satisfy Lemma 5 (lemma5.hpp);
//   - bounded waiting (claim tickets, under the scheduler): no waiter polls its run's entry more
//     than claim_wait_rounds times (claim_paths.hpp reads the trace; it also counts the ticket
//     paths taken into an optional ClaimPathCounts sink, make_heap_program);
//   - oom-justified (docs/explorer.md "Out-of-memory legitimacy"): an allocation that returned
//     null is recorded, never silently skipped; after the run, a null is a failure if some block
//     never held an object during the whole run (it was free throughout, so every allocation
//     attempt's level-0 scan of the free bitmap had to see it), and, on a prefilled heap with
//     single-object allocations, if some slot of a block holding permanent objects was never
//     taken (the block stayed in active[T0] throughout, so the last level-0 scan of active[T0]
//     had to see it).
// A prefilled workload (heap-large) starts from a heap of more than 64 blocks filled with
// permanent T0 objects outside the schedule, a few slots and blocks freed again: out-of-memory
// answers on two-level bitmaps, where an upper level can lag behind its containers.
// An allocation op may ask for k objects at once (k-slot workloads, heap_k): it runs the GPU
// warp leader's rounds (core::HeapProtocol::reserve_slots_or_oom with k = the objects still missing
// and the workload's oom_retries) until all k are served or the heap is out of memory, so
// multi-slot reservation bookkeeping and the leader's out-of-memory retries are explored on the
// CPU too.
//
// The workloads are header-only on purpose: they contain the protocol code, and mutant targets
// (the per-mutant explorer tests, heaplab_family_interleaving_mutant) compile them with their
// HEAPLAB_MUTANT_* definition.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "heaplab/check/from_core.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/core/atomics.hpp"
#include "heaplab/core/block_headers.hpp"
#include "heaplab/core/cookie.hpp"
#include "heaplab/core/detail/seed.hpp"
#include "heaplab/core/heap_config.hpp"
#include "heaplab/core/heap_protocol.hpp"
#include "heaplab/core/host_heap.hpp"
#include "heaplab/explore/controlled_run.hpp"
#include "heaplab/explore/strategy.hpp"
#include "heaplab/families/interleaving/workloads/claim_paths.hpp"
#include "heaplab/families/interleaving/workloads/lemma5.hpp"

namespace heaplab::interleaving_family::workloads {

struct ThreadOp {
  enum class Kind : std::uint8_t {
    allocate,       // arg: type id; k objects (k > 1: coalesced, reserve_slots rounds)
    free_own,       // arg: k frees my (k mod count)-th newest live object (0: the newest)
    give,           // arg: mailbox cell; hands my oldest live object over (nothing if none)
    take_and_free,  // arg: mailbox cell; frees the object found there (nothing if empty)
  };
  Kind kind         = Kind::allocate;
  std::uint32_t arg = 0;
  std::uint32_t k   = 1;  // allocate: objects requested together (1..64)
};

struct HeapWorkload {
  core::HeapConfig config;
  std::uint32_t active_lookups = core::kDefaultActiveLookups;
  std::vector<std::vector<ThreadOp>> threads;
  std::uint32_t mailbox_cells = 0;  // > every give / take_and_free arg
  std::uint64_t seed_salt     = 0;  // mixed into the allocation seeds
  bool barrier = true;  // a quiescent point after the operations: catalog + ownership check
  bool drain   = true;  // then every thread frees what it holds and sweeps the mailbox
  /// Object payload words are relaxed atomics through the policy, checked for stale reads at
  /// every change of owner (the heap-weak workload; see the file comment).
  bool observed_objects = false;
  /// k-slot allocations: out-of-memory answers retried before they are believed (the GPU
  /// leader's soa::HeapOptions::oom_retries; 0 = believe the first).
  std::uint32_t oom_retries = 0;
  /// HeapStorage::claim_wait_rounds of the run's heap (find_or_claim_block "Claim tickets"; 0
  /// turns claim tickets off).
  std::uint32_t claim_wait_rounds = core::kDefaultClaimWaitRounds;
  /// Prefill (the heap-large workload): before the threads start, every block is filled with
  /// T0 objects outside the schedule (plain atomics, whole-block reservations); then the blocks
  /// of prefill_free are emptied again (free) and prefill_partial's (block, s) frees slots
  /// 0..s-1 of the block (active, not full). The rest are permanent objects: owned by nobody,
  /// never freed by a thread, known to the checks. Needs type 0 to exist.
  bool prefill = false;
  std::vector<std::uint32_t> prefill_free;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> prefill_partial;
};

inline std::ostream& operator<<(std::ostream& os, HeapWorkload const& w) {
  os << "HeapWorkload{blocks=" << w.config.num_blocks << ", n=" << w.config.defrag_factor
     << ", lookups=" << w.active_lookups << ", salt=" << w.seed_salt << ", types=[";
  for (std::uint32_t t = 0; t < w.config.num_types(); ++t)
    os << (t ? " " : "") << w.config.types[t].name << ":" << w.config.types[t].size_bytes << "B/cap"
       << w.config.capacity(t);
  os << "], barrier=" << w.barrier << ", drain=" << w.drain;
  if (w.observed_objects) os << ", objects=observed";
  if (w.oom_retries != 0) os << ", oom_retries=" << w.oom_retries;
  if (w.claim_wait_rounds != core::kDefaultClaimWaitRounds)
    os << ", claim_wait_rounds=" << w.claim_wait_rounds;
  if (w.prefill) {
    os << ", prefilled with T0 (free again:";
    for (std::uint32_t b : w.prefill_free) os << " block " << b;
    os << "; slots freed:";
    for (auto const& [b, n] : w.prefill_partial) os << " " << n << " in block " << b;
    os << ")";
  }
  os << ", threads:";
  for (std::size_t i = 0; i < w.threads.size(); ++i) {
    os << "\n  T" << i << ":";
    for (auto const& op : w.threads[i]) {
      switch (op.kind) {
        case ThreadOp::Kind::allocate:
          os << " alloc(" << w.config.types.at(op.arg).name << ")";
          if (op.k > 1) os << "x" << op.k;
          break;
        case ThreadOp::Kind::free_own:
          os << " free(#" << op.arg << ")";
          break;
        case ThreadOp::Kind::give:
          os << " give(cell " << op.arg << ")";
          break;
        case ThreadOp::Kind::take_and_free:
          os << " take+free(cell " << op.arg << ")";
          break;
      }
    }
  }
  return os << "}";
}

/// A config of `type_sizes.size()` concrete types T0, T1, ... with the given sizes.
inline core::HeapConfig make_config(std::vector<std::uint32_t> const& type_sizes,
                                    std::uint32_t num_blocks,
                                    std::uint32_t defrag_factor) {
  core::HeapConfig c;
  for (std::size_t t = 0; t < type_sizes.size(); ++t)
    c.types.push_back(core::TypeSpec{"T" + std::to_string(t), type_sizes[t], {}, false, {}});
  c.num_blocks    = num_blocks;
  c.defrag_factor = defrag_factor;
  c.k1            = 0;
  c.validate();
  return c;
}

/// Raised inside a logical thread when a harness check fails (reported as thread_error).
class HarnessFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// State and thread bodies of one execution of a workload with atomics policy A.
template <class A>
class HeapRun {
 public:
  explicit HeapRun(HeapWorkload workload)
      : w_(std::move(workload)),
        heap_(w_.config, w_.active_lookups),
        ref_(with_claim_wait_rounds(heap_.storage(), w_.claim_wait_rounds)),
        mailbox_(w_.mailbox_cells, 0),
        owner_(std::size_t{w_.config.num_blocks} * 64),
        payload_(std::size_t{w_.config.num_blocks} * 64, 0),
        hosted_(w_.config.num_blocks),
        taken_(std::size_t{w_.config.num_blocks} * 64),
        permanent_(w_.config.num_blocks, 0) {
    for (auto& o : owner_) o.store(kNoOwner, std::memory_order_relaxed);
    for (auto& h : hosted_) h.store(0, std::memory_order_relaxed);
    for (auto& t : taken_) t.store(0, std::memory_order_relaxed);
    if (w_.prefill) prefill_heap();
    initial_ = state_bitmaps_now();
  }

  [[nodiscard]] HeapWorkload const& workload() const { return w_; }
  [[nodiscard]] core::HostHeap const& heap() const { return heap_; }
  [[nodiscard]] std::uint64_t allocations() const { return allocations_.load(); }
  [[nodiscard]] std::uint64_t out_of_memory() const { return oom_.load(); }
  /// Owner of a slot nobody holds (the ownership log, owner_of).
  static constexpr std::uint32_t kNoOwner = 0xFFFFFFFFu;
  /// The thread that owns slot r now (its allocation was logged and not freed), or kNoOwner.
  [[nodiscard]] std::uint32_t owner_of(core::SlotRef r) const {
    return owner_[slot_index(r)].load(std::memory_order_relaxed);
  }
  /// The run's heap as the protocol sees it (claim_wait_rounds applied).
  [[nodiscard]] core::HeapStorage storage() const { return ref_.storage(); }
  /// Under the scheduler: the run's claim-ticket paths are added to `sink` by final_check.
  void count_claim_paths_into(std::shared_ptr<ClaimPathCounts> sink) {
    claim_sink_ = std::move(sink);
  }
  /// Free-running only: a thread failed; threads waiting at the barrier give up.
  void abandon() { abandoned_.store(true); }

  /// The body of logical thread i.
  void thread_body(std::uint32_t i) {
    std::vector<Owned> mine;
    auto const& ops = w_.threads[i];
    for (std::uint32_t k = 0; k < ops.size(); ++k) {
      ThreadOp const op = ops[k];
      switch (op.kind) {
        case ThreadOp::Kind::allocate: {
          std::uint64_t const seed =
              core::detail::mix_seed(w_.seed_salt, (std::uint64_t{i} << 32) | k);
          if (op.k <= 1) {
            core::SlotRef const r = ref_.allocate(op.arg, seed, i);
            if (r.is_null()) {
              note_null(i, k, op.arg, 1);
              break;
            }
            ++allocations_;
            mine.push_back(acquire_new(i, k, op.arg, r, 0));
            break;
          }
          // The GPU leader's loop (soa/heap_ref.cuh allocate_raw / reserve_for_group, without
          // the warp): reserve_slots_or_oom for the objects still missing.
          std::uint32_t served = 0;
          std::uint64_t round  = 0;
          while (served < op.k) {
            core::SlotsRef const r = ref_.reserve_slots_or_oom(
                op.arg,
                op.k - served,
                seed,
                round,
                w_.oom_retries,
                [](std::uint32_t) { A::backoff(core::Backoff::retry); },
                i);
            if (r.is_null()) {
              note_null(i, k, op.arg, op.k - served);
              break;
            }
            std::uint64_t const got = r.slots;
            if (core::popcount(got) > static_cast<int>(op.k - served))
              throw HarnessFailure("reserve_slots(T" + std::to_string(op.arg) +
                                   ", k=" + std::to_string(op.k - served) + ") returned " +
                                   std::to_string(core::popcount(got)) + " slots " + hex(got));
            for (std::uint64_t rest = got; rest != 0; rest &= rest - 1) {
              auto const slot = static_cast<std::uint32_t>(core::find_first_set(rest));
              ++allocations_;
              mine.push_back(acquire_new(i, k, op.arg, core::SlotRef{r.block, slot}, ++served));
            }
          }
          break;
        }
        case ThreadOp::Kind::free_own: {
          if (mine.empty()) break;
          std::size_t const idx = mine.size() - 1 - op.arg % mine.size();
          Owned const o         = mine[idx];
          mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(idx));
          release_and_free(i, o);
          break;
        }
        case ThreadOp::Kind::give: {
          if (mine.empty()) break;
          Owned const o = mine.front();
          mine.erase(mine.begin());
          hand_over(i, o);
          A::store(&mailbox_[op.arg], encode(o), core::MemoryOrder::release);
          break;
        }
        case ThreadOp::Kind::take_and_free:
          take_and_free(i, op.arg);
          break;
      }
    }
    if (w_.barrier) barrier(i);
    if (w_.drain) {
      while (!mine.empty()) {
        release_and_free(i, mine.back());
        mine.pop_back();
      }
      for (std::uint32_t c = 0; c < w_.mailbox_cells; ++c) take_and_free(i, c);
    }
  }

  /// The checks after every thread finished. `events`: the run's trace (nullptr when
  /// free-running; the Lemma 5 check needs it).
  std::vector<std::string> final_check(std::vector<explore::Event> const* events) {
    std::vector<std::string> out;
    {
      std::lock_guard<std::mutex> lock(failures_mutex_);
      out = failures_;
    }
    for (auto const& v : check::check_all(check::from_core(heap_)))
      out.push_back("catalog at the end: " + v.to_string());
    if (w_.drain) {
      for (std::uint32_t b = 0; b < w_.config.num_blocks; ++b) {
        bool const is_free = test_word_bit(heap_.bitmap_words(core::StateBitmap::free_blocks), b);
        if (std::uint64_t const kept = permanent_[b]; kept != 0) {
          // A block with permanent objects keeps exactly them.
          std::uint64_t const held = heap_.alloc_bitmap(b) & core::low_bits(w_.config.capacity(0));
          if (is_free || heap_.block_type(b) != 0 || held != kept)
            out.push_back("capacity lost: after every thread's object was freed, block " +
                          std::to_string(b) + " holds " + hex(held) + " (type " +
                          std::to_string(heap_.block_type(b)) + (is_free ? ", free" : "") +
                          ") instead of its permanent objects " + hex(kept));
        } else if (heap_.alloc_bitmap(b) != core::kFullBitmap || !is_free) {
          out.push_back("capacity lost: after every object was freed, block " + std::to_string(b) +
                        " is not free (allocation bitmap " + hex(heap_.alloc_bitmap(b)) +
                        ", type " + std::to_string(heap_.block_type(b)) + ")");
        }
      }
      for (std::size_t s = 0; s < owner_.size(); ++s)
        if (owner_[s].load() != kNoOwner)
          out.push_back("ownership log: slot " + slot_name(s) + " is still owned after the drain");
    }
    if (oom_.load() > 0) {
      // oom-justified. Sound under every interleaving: a block leaves the free set only when an
      // allocation claims it (clear_any), and the claimer's reservation, or another one of the
      // same type, is the block's first reservation after the claim and commits (nothing else
      // can select the block before it is initialized for that type; A.3 rollbacks need an
      // earlier reservation of another type). So a block that never held a logged object was
      // free throughout the run, its free bit set at level 0, and claim_free_block's level-0
      // scan (hierarchical_bitmap.hpp clear_any) must have seen it in every null's attempt.
      std::lock_guard<std::mutex> lock(failures_mutex_);
      for (std::uint32_t b = 0; b < w_.config.num_blocks; ++b)
        if (hosted_[b].load() == 0) {
          out.push_back("oom-justified: " + std::to_string(oom_.load()) +
                        " allocation(s) returned null (first: " + first_null_ +
                        ") although block " + std::to_string(b) +
                        " never held an object during the run, so it was free throughout "
                        "(DynaSOAr Alg. 1: an allocation fails only when no block is free)");
          break;
        }
      if (std::string const slot = untaken_active_slot(); !slot.empty())
        out.push_back("oom-justified: " + std::to_string(oom_.load()) +
                      " allocation(s) returned null (first: " + first_null_ + ") although " + slot +
                      " was free throughout the run in a block that never emptied, so the block "
                      "stayed in active[T0] and the last level-0 scan of active[T0] had to see it "
                      "(DynaSOAr Alg. 1: an allocation fails only when no active block of its "
                      "type has a free slot)");
    }
    if (events != nullptr) {
      auto const lemma = check_lemma5(*events, bitmaps_under_check());
      out.insert(out.end(), lemma.begin(), lemma.end());
      // Bounded waiting (every waiter polls at most claim_wait_rounds times) and the paths taken.
      ClaimPathCounts const paths = classify_claim_paths(*events, ref_.storage(), out);
      if (claim_sink_) *claim_sink_ += paths;
    }
    return out;
  }

  /// Symbolic names for the trace: the heap's, the mailbox cells and the barrier words.
  [[nodiscard]] std::string describe(void const* a) const {
    std::string name = heap_.describe_address(a);
    if (!name.empty()) return name;
    auto const p = reinterpret_cast<std::uintptr_t>(a);
    auto const m = reinterpret_cast<std::uintptr_t>(mailbox_.data());
    if (!mailbox_.empty() && p >= m && p < m + mailbox_.size() * sizeof(std::uint64_t))
      return "mailbox[" + std::to_string((p - m) / sizeof(std::uint64_t)) + "]";
    auto const o = reinterpret_cast<std::uintptr_t>(payload_.data());
    if (!payload_.empty() && p >= o && p < o + payload_.size() * sizeof(std::uint64_t))
      return "object" + slot_name((p - o) / sizeof(std::uint64_t));
    core::HeapStorage const s = ref_.storage();
    auto const t0             = reinterpret_cast<std::uintptr_t>(s.claim_tickets);
    if (s.claim_tickets != nullptr && p >= t0 && p < t0 + s.num_types * sizeof(std::uint64_t))
      return "claim_tickets[" + w_.config.types[(p - t0) / sizeof(std::uint64_t)].name + "]";
    auto const r0 = reinterpret_cast<std::uintptr_t>(s.claim_runs);
    if (s.claim_runs != nullptr && p >= r0 &&
        p < r0 + std::uint64_t{s.num_types} * s.claim_run_slots * sizeof(std::uint64_t)) {
      std::uint64_t const i = (p - r0) / sizeof(std::uint64_t);
      return "claim_runs[" + w_.config.types[i / s.claim_run_slots].name + "][" +
             std::to_string(i % s.claim_run_slots) + "]";
    }
    if (a == &barrier_arrivals_) return "barrier.arrivals";
    if (a == &barrier_open_) return "barrier.open";
    return {};
  }

 private:
  static constexpr std::uint32_t kMailbox = 0xFFFFFFFEu;

  struct Owned {
    core::SlotRef ref;
    std::uint32_t type    = 0;
    std::uint64_t payload = 0;
  };

  static core::HeapStorage with_claim_wait_rounds(core::HeapStorage s, std::uint32_t rounds) {
    s.claim_wait_rounds = rounds;
    return s;
  }

  static std::string hex(std::uint64_t v) {
    std::ostringstream os;
    os << "0x" << std::hex << v;
    return os.str();
  }
  static std::string slot_name(std::size_t s) {
    return "(block " + std::to_string(s / 64) + ", slot " + std::to_string(s % 64) + ")";
  }
  static std::string who(std::uint32_t owner) {
    return owner == kNoOwner   ? "nobody"
           : owner == kMailbox ? "the mailbox"
                               : "T" + std::to_string(owner);
  }
  static bool test_word_bit(std::vector<std::uint64_t> const& words, std::uint32_t bit) {
    return ((words[bit / 64] >> (bit % 64)) & 1u) != 0;
  }
  std::size_t slot_index(core::SlotRef r) const { return std::size_t{r.block} * 64 + r.slot; }

  static std::uint64_t encode(Owned const& o) {
    return (std::uint64_t{o.type} << 40) | (std::uint64_t{o.ref.block} << 8) | (o.ref.slot + 1u);
  }
  static core::SlotRef decode_ref(std::uint64_t v) {
    return core::SlotRef{static_cast<std::uint32_t>((v >> 8) & 0xFFFFFFFFu),
                         static_cast<std::uint32_t>(v & 0xFFu) - 1u};
  }
  static std::uint32_t decode_type(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 40); }

  /// Ownership transfer in the log: from `expected` to `next`, failing loudly otherwise.
  /// Relaxed on purpose: the log must not create happens-before edges of its own, or it would
  /// hide a missing release/acquire of the protocol from ThreadSanitizer. (With a correct
  /// protocol the previous owner's release free happens before our acquire reservation, so
  /// coherence makes this exchange read the previous owner's entry.)
  void transfer(core::SlotRef r, std::uint32_t expected, std::uint32_t next, char const* what) {
    std::uint32_t const prev = owner_[slot_index(r)].exchange(next, std::memory_order_relaxed);
    if (prev != expected)
      throw HarnessFailure(std::string("ownership log: ") + what + ": slot " +
                           slot_name(slot_index(r)) + " was owned by " + who(prev) + ", expected " +
                           who(expected) + " (a slot handed to two owners)");
  }

  /// Records a null allocation result: `count` objects of type t that op k of thread i did not
  /// get (checked by oom-justified in final_check).
  void note_null(std::uint32_t i, std::uint32_t k, std::uint32_t t, std::uint32_t count) {
    if (oom_.fetch_add(count) == 0) {
      std::lock_guard<std::mutex> lock(failures_mutex_);
      first_null_ = "T" + std::to_string(i) + " op " + std::to_string(k) + ": alloc(T" +
                    std::to_string(t) + ")";
    }
  }

  /// Fills the heap with permanent T0 objects and frees the workload's prefill_free blocks and
  /// prefill_partial slots again (HeapWorkload::prefill), outside the schedule: plain atomics on
  /// the run's storage, before any logical thread exists.
  void prefill_heap() {
    core::HeapProtocol<core::HostAtomics> const setup(heap_.storage());
    std::uint32_t const cap = w_.config.capacity(0);
    for (std::uint64_t call = 0;; ++call) {  // whole blocks until none is free
      std::uint64_t round = 0;
      if (setup.reserve_slots(0, cap, core::detail::mix_seed(w_.seed_salt, call), round).is_null())
        break;
    }
    for (std::uint32_t b : w_.prefill_free) setup.release_slots(0, b, core::low_bits(cap));
    for (auto const& [b, n] : w_.prefill_partial) setup.release_slots(0, b, core::low_bits(n));
    for (std::uint32_t b = 0; b < w_.config.num_blocks; ++b) {
      if (test_word_bit(heap_.bitmap_words(core::StateBitmap::free_blocks), b)) continue;
      permanent_[b] = heap_.alloc_bitmap(b) & core::low_bits(cap);
      hosted_[b].store(permanent_[b] != 0 ? 1 : 0, std::memory_order_relaxed);
    }
  }

  /// oom-justified's second rule, for prefilled heaps whose allocations all ask for one T0
  /// object (a k-slot request may reserve slots it releases again): the first slot s < N_T0 of a
  /// block with permanent objects that no allocation took during the run, or "". Such a block
  /// never emptied (its permanent objects stay), so it kept type T0 and was never invalidated;
  /// its slot s was free throughout, so the block was never full and its active[T0] bit stayed
  /// set at level 0 (only the reservation that fills a block clears it).
  [[nodiscard]] std::string untaken_active_slot() const {
    if (!w_.prefill || w_.config.num_types() != 1) return {};
    for (auto const& ops : w_.threads)
      for (auto const& op : ops)
        if (op.kind == ThreadOp::Kind::allocate && op.k > 1) return {};
    std::uint32_t const cap = w_.config.capacity(0);
    for (std::uint32_t b = 0; b < w_.config.num_blocks; ++b) {
      if (permanent_[b] == 0) continue;
      for (std::uint32_t s = 0; s < cap; ++s) {
        std::size_t const i = std::size_t{b} * 64 + s;
        if (((permanent_[b] >> s) & 1u) == 0 && taken_[i].load(std::memory_order_relaxed) == 0)
          return "slot " + slot_name(i);
      }
    }
    return {};
  }

  /// `j`: the object's index within its op (0 for single allocations), for a distinct payload.
  Owned acquire_new(
      std::uint32_t i, std::uint32_t k, std::uint32_t t, core::SlotRef r, std::uint32_t j) {
    if (r.block >= w_.config.num_blocks || r.slot >= w_.config.capacity(t))
      throw HarnessFailure("allocate(T" + std::to_string(t) + ") returned block " +
                           std::to_string(r.block) + " slot " + std::to_string(r.slot) +
                           ", outside the heap or the type's capacity");
    // Not observed (no yield point): plain reads of what this thread's allocation established.
    std::uint32_t const type =
        core::HostAtomics::load(heap_storage_types() + r.block, core::MemoryOrder::relaxed);
    std::uint64_t const alloc =
        core::HostAtomics::load(heap_storage_alloc() + r.block, core::MemoryOrder::relaxed);
    if (type != t)
      throw HarnessFailure("allocate(T" + std::to_string(t) + ") returned a slot in block " +
                           std::to_string(r.block) + " whose header type is " +
                           std::to_string(type));
    if (((alloc >> r.slot) & 1u) == 0)
      throw HarnessFailure("allocate returned slot " + slot_name(slot_index(r)) +
                           " but its allocation bit is clear (" + hex(alloc) + ")");
    transfer(r, kNoOwner, i, "allocation");
    if (w_.observed_objects) (void)read_as_new_owner(r, "allocation");
    hosted_[r.block].store(1, std::memory_order_relaxed);
    taken_[slot_index(r)].store(1, std::memory_order_relaxed);
    Owned o{r, t, core::cookie_of((std::uint64_t{i} << 32) | (std::uint64_t{j} << 16) | k)};
    write_payload(r, o.payload);
    return o;
  }

  std::uint64_t read_payload(core::SlotRef r) {
    if (!w_.observed_objects) return payload_[slot_index(r)];
    return A::load(&payload_[slot_index(r)], core::MemoryOrder::relaxed);
  }
  void write_payload(core::SlotRef r, std::uint64_t v) {
    if (!w_.observed_objects)
      payload_[slot_index(r)] = v;
    else
      A::store(&payload_[slot_index(r)], v, core::MemoryOrder::relaxed);
  }

  /// observed_objects: the new owner of r reads the object word; it must see the last value
  /// written to it (memory holds that value: HostAtomics reads it without a yield point).
  std::uint64_t read_as_new_owner(core::SlotRef r, char const* how) {
    std::uint64_t const seen = read_payload(r);
    std::uint64_t const last =
        core::HostAtomics::load(&payload_[slot_index(r)], core::MemoryOrder::relaxed);
    if (seen != last)
      throw HarnessFailure(std::string(how) + " of slot " + slot_name(slot_index(r)) +
                           ": the new owner reads the object word as " + hex(seen) +
                           " but the last write to it stored " + hex(last) +
                           ": the previous owner's accesses do not happen before the new "
                           "owner's (a missing release/acquire)");
    return seen;
  }

  void check_payload(Owned const& o) {
    if (read_payload(o.ref) != o.payload)
      throw HarnessFailure("payload of slot " + slot_name(slot_index(o.ref)) +
                           " was overwritten while owned");
  }

  void release_and_free(std::uint32_t i, Owned const& o) {
    check_payload(o);
    transfer(o.ref, i, kNoOwner, "free");  // before the free: the slot may be reused at once
    ref_.deallocate(o.type, o.ref);
  }

  void hand_over(std::uint32_t i, Owned const& o) {
    check_payload(o);
    transfer(o.ref, i, kMailbox, "give");
  }

  void take_and_free(std::uint32_t i, std::uint32_t cell) {
    std::uint64_t const v =
        A::exchange(&mailbox_[cell], std::uint64_t{0}, core::MemoryOrder::acq_rel);
    if (v == 0) return;
    Owned o;
    o.ref  = decode_ref(v);
    o.type = decode_type(v);
    transfer(o.ref, kMailbox, i, "take");
    o.payload = w_.observed_objects ? read_as_new_owner(o.ref, "take") : read_payload(o.ref);
    o.payload ^= 1u;
    write_payload(o.ref, o.payload);  // the taker writes the object too
    release_and_free(i, o);
  }

  /// All threads meet; the last to arrive checks the heap while the others wait (quiescent).
  void barrier(std::uint32_t i) {
    (void)i;
    std::uint32_t const n = static_cast<std::uint32_t>(w_.threads.size());
    std::uint32_t const arrived =
        A::fetch_add(&barrier_arrivals_, std::uint32_t{1}, core::MemoryOrder::acq_rel) + 1u;
    if (arrived == n) {
      quiescent_check();
      A::store(&barrier_open_, std::uint32_t{1}, core::MemoryOrder::release);
      return;
    }
    while (A::load(&barrier_open_, core::MemoryOrder::acquire) == 0) {
      if (abandoned_.load()) throw HarnessFailure("barrier abandoned: another thread failed");
      A::backoff(core::Backoff::until_memory_changes);
    }
  }

  void quiescent_check() {
    std::vector<std::string> found;
    for (auto const& v : check::check_all(check::from_core(heap_)))
      found.push_back("catalog at the barrier: " + v.to_string());
    for (std::uint32_t b = 0; b < w_.config.num_blocks; ++b) {
      bool const is_free    = test_word_bit(heap_.bitmap_words(core::StateBitmap::free_blocks), b);
      std::uint32_t const t = heap_.block_type(b);
      std::uint32_t const cap = (!is_free && t < w_.config.num_types()) ? w_.config.capacity(t) : 0;
      for (std::uint32_t s = 0; s < 64; ++s) {
        bool const owned =
            owner_[std::size_t{b} * 64 + s].load() != kNoOwner || ((permanent_[b] >> s) & 1u) != 0;
        bool const allocated = s < cap && ((heap_.alloc_bitmap(b) >> s) & 1u) != 0;
        if (owned != allocated)
          found.push_back("at the barrier, slot " + slot_name(std::size_t{b} * 64 + s) + " is " +
                          (allocated ? "allocated" : "not allocated") + " but owned by " +
                          (((permanent_[b] >> s) & 1u) != 0
                               ? std::string("the prefill")
                               : who(owner_[std::size_t{b} * 64 + s].load())));
      }
    }
    if (!found.empty()) {
      std::string all;
      for (auto const& f : found) all += (all.empty() ? "" : "\n") + f;
      throw HarnessFailure(all);
    }
  }

  std::uint32_t* heap_storage_types() { return heap_.storage().block_types; }
  std::uint64_t* heap_storage_alloc() { return heap_.storage().alloc_bitmaps; }

  /// Every state bitmap: free, allocated/active/defrag of each concrete type.
  std::vector<BitmapUnderCheck> state_bitmaps_now() {
    std::vector<BitmapUnderCheck> out;
    core::HeapStorage const s = heap_.storage();
    std::uint32_t const words = s.layout.total_words;
    auto add                  = [&](std::string name, std::uint64_t const* p) {
      out.push_back(
          BitmapUnderCheck{std::move(name), p, s.layout, std::vector<std::uint64_t>(p, p + words)});
    };
    add("free", s.free_words);
    for (std::uint32_t t = 0; t < s.num_types; ++t) {
      std::string const tn = w_.config.types[t].name;
      add("allocated[" + tn + "]", s.allocated_words + std::size_t{t} * words);
      add("active[" + tn + "]", s.active_words + std::size_t{t} * words);
      add("defrag[" + tn + "]", s.defrag_words + std::size_t{t} * words);
    }
    return out;
  }
  std::vector<BitmapUnderCheck> bitmaps_under_check() const { return initial_; }

  HeapWorkload w_;
  core::HostHeap heap_;
  core::HeapProtocol<A> ref_;
  std::vector<std::uint64_t> mailbox_;
  std::vector<std::atomic<std::uint32_t>> owner_;
  std::vector<std::uint64_t> payload_;
  std::vector<std::atomic<std::uint8_t>> hosted_;  // block b ever held a logged object
  std::vector<std::atomic<std::uint8_t>> taken_;   // slot ever allocated during the run
  std::vector<std::uint64_t> permanent_;           // per block: its prefill objects' slots
  std::string first_null_;                         // under failures_mutex_
  std::uint32_t barrier_arrivals_ = 0;
  std::uint32_t barrier_open_     = 0;
  std::vector<BitmapUnderCheck> initial_;
  std::mutex failures_mutex_;
  std::vector<std::string> failures_;
  std::atomic<std::uint64_t> allocations_{0};
  std::atomic<std::uint64_t> oom_{0};
  std::atomic<bool> abandoned_{false};
  std::shared_ptr<ClaimPathCounts> claim_sink_;
};

/// A program for the controlled scheduler: one execution of `workload` (ObservedAtomics). With a
/// `claim_paths` sink, the run's claim-ticket paths are added to it when the run passes its check.
inline explore::Program make_heap_program(HeapWorkload const& workload,
                                          std::shared_ptr<ClaimPathCounts> claim_paths = {}) {
  auto run = std::make_shared<HeapRun<core::ObservedAtomics>>(workload);
  run->count_claim_paths_into(std::move(claim_paths));
  explore::Program p;
  for (std::uint32_t i = 0; i < workload.threads.size(); ++i)
    p.threads.push_back([run, i] { run->thread_body(i); });
  p.check = [run](std::vector<explore::Event> const& events) { return run->final_check(&events); };
  p.describe_address = [run](void const* a) { return run->describe(a); };
  return p;
}

}  // namespace heaplab::interleaving_family::workloads
