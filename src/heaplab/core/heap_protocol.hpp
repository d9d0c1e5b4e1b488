// The allocate / deallocate protocol of DynaSOAr (Alg. 1, 2, 8, 9; App. A.2-A.4) with CompactGpu's
// defragmentation-candidate bitmaps (CompactGpu sec. 3 "Finding Defragmentation Candidates"),
// over a trivially copyable HeapProtocol that kernels take by value.
//
// State of a heap of M blocks and types 0..K-1 (DynaSOAr sec. 3.4, CompactGpu sec. 2.2):
//   headers           per block: type id, allocation bitmap, iteration bitmap (block_headers.hpp)
//   free              bit b set iff block b is free (uninitialized or invalidated)
//   allocated[T]      blocks of type T
//   active[T]         allocated blocks of type T that are not full
//   defrag[T]         allocated blocks of type T with used / N_T <= n / (n + 1)
// All four kinds are hierarchical bitmaps of M bits with the same layout; each kind is one word
// array holding K bitmaps back to back (abstract types' bitmaps exist but stay empty).
//
// Responsibility rule (sec. 3.1, App. A.3, A.4, and its extension to defrag[T]). The state bits
// of block b are changed only by threads that derive the change from the before/after values of
// their own RMW on b's allocation bitmap (SlotUpdate), using the block's type at that RMW, which
// is fixed while they hold a bit of the block:
//   filled()          -> active[t].clear(b)                     (DynaSOAr Alg. 1 line 12)
//   unfilled()        -> active[t].set(b)                       (DynaSOAr Alg. 2 line 5)
//   defrag_crossing   -> defrag[t].set(b) / .clear(b)          (CompactGpu sec. 3)
//   emptied()         -> invalidate the block                   (DynaSOAr Alg. 2 line 7)
// initialize_block's bitmap store counts as an RMW from "invalidated" (all ones: full, not a
// candidate) to "empty" (a candidate): it sets allocated, active and defrag; a successful
// invalidation is the reverse and clears all three. Along the modification order of b's bitmap,
// fill crossings alternate (full/not full; candidate/not candidate), so per state bit the issued
// sets and clears alternate: every prefix has set-surplus in {0, 1} from a clear start, which is
// the legality of Def. 3 (App. A.5) and makes the final bit equal the final fill. docs/core.md
// "defrag[T]" spells the argument out, including invalidation and its rollback.
//
// A thread performs the state updates of one RMW before its next RMW, in the fixed order active,
// defrag (then allocated, free for a deletion); docs/core.md "Progress" lists what each retrying
// set/clear waits for.
#pragma once

#include <cstdint>
#include <type_traits>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/block_headers.hpp"
#include "heaplab/core/detail/seed.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/core/protocol_check.hpp"
#include "heaplab/core/slot_ref.hpp"

namespace heaplab::core {

/// DynaSOAr sec. 4.2: active-block lookups before the slow path.
inline constexpr std::uint32_t kDefaultActiveLookups = 5;

/// Rounds an allocation waits for the block its claim tickets' run is opened in before it opens
/// one itself (find_or_claim_block "Claim tickets"; 0 turns claim tickets off).
inline constexpr std::uint32_t kDefaultClaimWaitRounds = 16;

/// Entries per type of the claim-run table (the blocks opened for the latest runs of tickets):
/// enough for every run a burst has open at once (at most one per block, and far fewer than
/// 8192 on a GPU with ~8,000 resident warps), so that a waiter's entry is not overwritten by a
/// later run before it reads it; a power of two.
HEAPLAB_HD_INLINE constexpr std::uint32_t claim_run_slots_for(std::uint32_t num_blocks) {
  return power_of_two_at_least(num_blocks, 8192u);
}

/// Raw storage of a heap: plain pointers to memory the protocol accesses atomically, plus the
/// numbers the protocol needs. Trivially copyable; host and device builders fill it
/// (host_heap.hpp; the GPU heap of soa/). check::from_core reads it at quiescence.
struct HeapStorage {
  std::uint64_t* alloc_bitmaps    = nullptr;  // [num_blocks]
  std::uint64_t* iter_bitmaps     = nullptr;  // [num_blocks]
  std::uint32_t* block_types      = nullptr;  // [num_blocks]
  std::uint64_t* free_words       = nullptr;  // [layout.total_words]
  std::uint64_t* allocated_words  = nullptr;  // [num_types * layout.total_words]
  std::uint64_t* active_words     = nullptr;  // [num_types * layout.total_words]
  std::uint64_t* defrag_words     = nullptr;  // [num_types * layout.total_words]
  std::uint32_t const* capacities = nullptr;  // [num_types]; 0 for abstract types
  /// Per type, the slots requested so far by allocations that found no active block
  /// (find_or_claim_block's claim tickets); nullptr: claim tickets off.
  std::uint64_t* claim_tickets = nullptr;  // [num_types]
  /// Per type, claim_run_slots entries (run tag << 32 | block): the block opened for a run of
  /// tickets (find_or_claim_block); 0: none yet.
  std::uint64_t* claim_runs = nullptr;  // [num_types * claim_run_slots]
  /// Per type, hint_slots entries: a block of that type that a caller of the entry last reserved
  /// in and left not full, or kNotFound (reserve_slots "Block hints"); nullptr: hints off.
  std::uint32_t* block_hints = nullptr;  // [num_types * hint_slots]
  BitmapLayout layout{};                 // of a bitmap of num_blocks bits
  std::uint32_t num_blocks        = 0;
  std::uint32_t num_types         = 0;
  std::uint32_t defrag_factor     = 1;  // CompactGpu's n
  std::uint32_t active_lookups    = kDefaultActiveLookups;
  std::uint32_t claim_wait_rounds = kDefaultClaimWaitRounds;
  std::uint32_t claim_run_slots   = 1;  // claim_run_slots_for(num_blocks)
  std::uint32_t hint_slots        = 0;  // entries per type of block_hints; a power of two (0: off)
  /// DynaSOAr sec. 4.2 "Bitmap Rotation": every bitmap search (active[T] lookups, the free
  /// bitmap, the level-0 scans, the slot pick in a block) starts at a rotation derived from the
  /// caller's seed. false: the ablation of DynaSOAr Fig. 12C (*-NoShift): every search starts at
  /// bit 0, so it finds the lowest set bit (the lowest zero bit for slots). For measurements.
  /// Either way a claim-ticket holder's slot pick starts at its ticket slot (find_or_claim_block
  /// "Ticket slots"): that is part of the claim tickets, not a rotation.
  bool rotate_bitmaps = true;
};
static_assert(std::is_trivially_copyable_v<HeapStorage>);

/// The block find_or_claim_block picked for a reservation, and the seed of the reservation's slot
/// search in it (BlockHeadersRef::try_reserve starts at rotation(reserve_seed, 0)). block ==
/// kNotFound: out of memory.
struct BlockPick {
  std::uint32_t block        = kNotFound;
  std::uint64_t reserve_seed = 0;
};

/// reserve_slots' hint argument when the caller has no entry of HeapStorage::block_hints.
inline constexpr std::uint32_t kNoHint = 0xFFFFFFFFu;

/// Slots reserved in one block by one coalescing round (HeapProtocol::reserve_slots): bit s of
/// `slots` is slot s. block == kNotFound (slots 0) is the null result (out of memory).
struct SlotsRef {
  std::uint32_t block = kNotFound;
  std::uint64_t slots = 0;
  HEAPLAB_HD_INLINE constexpr bool is_null() const { return block == kNotFound; }
};

template <class Atomics>
class HeapProtocol {
  // MUTANT weak_claim_acquire: taking a free block does not acquire (docs/mutants.md; found by
  // the explorer's weak-memory mode only).
  // order: acquire [block-free, block-free-compact] (taking a free block: after the writes of
  // its last lifetime, ended by a deletion or by CompactGpu's release of a source)
  HEAPLAB_HD_INLINE static HEAPLAB_MUTANT_CONSTEXPR MemoryOrder claim_order() {
    return mutant::weak_claim_acquire ? MemoryOrder::relaxed : MemoryOrder::acquire;
  }

 public:
  HeapProtocol() = default;
  HEAPLAB_HD_INLINE explicit HeapProtocol(HeapStorage const& storage) : s_(storage) {}

  HEAPLAB_HD_INLINE HeapStorage const& storage() const { return s_; }
  HEAPLAB_HD_INLINE std::uint32_t num_blocks() const { return s_.num_blocks; }
  HEAPLAB_HD_INLINE std::uint32_t num_types() const { return s_.num_types; }
  HEAPLAB_HD_INLINE std::uint32_t capacity(std::uint32_t t) const { return s_.capacities[t]; }

  HEAPLAB_HD_INLINE BlockHeadersRef<Atomics> blocks() const {
    return BlockHeadersRef<Atomics>(
        s_.alloc_bitmaps, s_.iter_bitmaps, s_.block_types, s_.num_blocks);
  }
  HEAPLAB_HD_INLINE BitmapRef<Atomics> free_blocks() const {
    return BitmapRef<Atomics>(s_.free_words, s_.layout);
  }
  HEAPLAB_HD_INLINE BitmapRef<Atomics> allocated(std::uint32_t t) const {
    return BitmapRef<Atomics>(s_.allocated_words + std::uint64_t{t} * s_.layout.total_words,
                              s_.layout);
  }
  HEAPLAB_HD_INLINE BitmapRef<Atomics> active(std::uint32_t t) const {
    return BitmapRef<Atomics>(s_.active_words + std::uint64_t{t} * s_.layout.total_words,
                              s_.layout);
  }
  HEAPLAB_HD_INLINE BitmapRef<Atomics> defrag(std::uint32_t t) const {
    return BitmapRef<Atomics>(s_.defrag_words + std::uint64_t{t} * s_.layout.total_words,
                              s_.layout);
  }

  // ---------------------------------------------------------------- allocation, step by step
  // The steps a coalescing warp leader (soa/, issue 5) calls:
  //   p   = find_or_claim_block(T, k, seed)     p.block kNotFound: out of memory
  //   r   = blocks().try_reserve(p.block, k, p.reserve_seed)
  //                                             up to k slots; r.ok() false: pick a block again
  //   if (commit_reservation(T, p.block, r)) ... false: the block had changed type; rolled back
  // reserve_slots() below is this loop for up to k slots (the leader's round), allocate() its
  // k = 1 case.

  /// Up to active_lookups searches of active[T] with fresh rotations (sec. 4.2, DynaSOAr Alg. 1
  /// line 2). The block may be full, invalid or of another type by the time the caller reserves in
  /// it (App. A.3); try_reserve / commit_reservation handle every case.
  ///
  /// A search that found active[T]'s top-level word empty ends the lookups (issue 30): the next
  /// rotation would read the same word, so the r lookups of DynaSOAr Fig. 13 are retries only
  /// against descents that lose a race below the top (sec. 4.1.4). Where blocks fill as fast as
  /// they open (one allocation wave, linux-scalability) active[T] is mostly empty, and the four
  /// further top-level loads were a chain of dependent L2 round trips before every claim (H200,
  /// docs/results.md "issue 30"). Returning kNotFound earlier is an outcome the r lookups could
  /// always have had, so the callers' handling of it (claim tickets, a new block, out of memory)
  /// is unchanged.
  ///
  /// `top`: active[t]'s top-level word as the caller already loaded it (reserve_slots with a block
  /// hint), for the first lookup; the further lookups load it again.
  HEAPLAB_HD std::uint32_t find_active_block(std::uint32_t t,
                                             std::uint64_t seed,
                                             std::uint64_t const* top = nullptr) const {
    BitmapRef<Atomics> const act = active(t);
    for (std::uint32_t i = 0; i < s_.active_lookups; ++i) {
      auto const found =
          act.find_set(search_seed(detail::mix_seed(seed, i)), i == 0 ? top : nullptr);
      if (found.pos != kNotFound) return found.pos;
      if (found.top_empty) break;
    }
    return kNotFound;
  }

  /// Slow path (DynaSOAr Alg. 1 lines 4-7): takes a free block (acquire: after its previous
  /// lifetime's release free.set) and initializes it for type t. kNotFound iff a level-0 scan of
  /// the free bitmap observed no set bit.
  HEAPLAB_HD std::uint32_t claim_free_block(std::uint32_t t, std::uint64_t seed) const {
    std::uint32_t const b = take_free_block(seed);
    if (b != kNotFound) initialize_block(t, b);
    return b;
  }

  /// The first half of claim_free_block: clears some bit of the free bitmap (acquire: after the
  /// block's previous lifetime's release free.set) and returns it, or kNotFound.
  HEAPLAB_HD std::uint32_t take_free_block(std::uint64_t seed) const {
    if HEAPLAB_MUTANT_CONSTEXPR (mutant::free_search_first_word_only) {
      // MUTANT free_search_first_word_only: the free-block search looks at the first level-0
      // word only (blocks 0..63), so a heap of more than 64 blocks answers null while free blocks
      // remain (issue 34, class 1: out-of-memory legitimacy on large heaps).
      for (std::uint32_t b = 0; b < 64u && b < s_.num_blocks; ++b)
        if (free_blocks().try_clear(b, claim_order())) return b;
      return kNotFound;
    }
    return free_blocks().clear_any(seed, claim_order(), s_.rotate_bitmaps);
  }

  /// The seed a bitmap search starts from: `seed` itself, or 0 (bit 0 on every level: the lowest
  /// set bit) with HeapStorage::rotate_bitmaps off (DynaSOAr Fig. 12C ablation).
  HEAPLAB_HD_INLINE std::uint64_t search_seed(std::uint64_t seed) const {
    return s_.rotate_bitmaps ? seed : 0u;
  }

  /// take_free_block for the opener of run `run` of type t: first the run's own candidate block
  /// (run_candidate), with one try_clear and no search, else any free block. On an empty heap
  /// the runs of a burst take distinct blocks without a descent of the free bitmap and without
  /// colliding with each other (clear_any's openers pick the same bits and retry); when the
  /// candidate is taken the try_clear changes nothing (its fetch_and finds the bit clear).
  /// Linearizes at the successful try_clear / clear_any, acquire as take_free_block.
  HEAPLAB_HD std::uint32_t take_free_block_for_run(std::uint32_t t,
                                                   std::uint64_t run,
                                                   std::uint64_t seed) const {
    std::uint32_t const candidate = run_candidate(t, run);
    if (candidate != kNotFound && free_blocks().try_clear(candidate, claim_order()))
      return candidate;
    return take_free_block(seed);
  }

  /// The candidate block of run `run` of type t: the runs of all types numbered r = run * K + t,
  /// spread so that consecutive r fall into consecutive level-0 words of the state bitmaps (bit
  /// r / W of word r mod W, W words): concurrent openers then update different words, as
  /// clear_any's random picks do, instead of the 64 consecutive blocks of one word. kNotFound
  /// when the position is past the last block.
  HEAPLAB_HD std::uint32_t run_candidate(std::uint32_t t, std::uint64_t run) const {
    std::uint64_t const words = s_.layout.containers(0);
    std::uint64_t const r     = (run * s_.num_types + t) % (words * 64u);
    std::uint64_t const b     = (r % words) * 64u + r / words;
    return b < s_.num_blocks ? static_cast<std::uint32_t>(b) : kNotFound;
  }

  /// A block to reserve up to k slots of type t in: an active block of type t, else (claim
  /// tickets below) the block opened for the caller's run of tickets, else a freshly initialized
  /// one, else one that a level-0 scan finds in active[t] (it may have become active while the
  /// lookups ran or an upper level lagged). block kNotFound: out of memory (no free block and no
  /// active block of t was observed). The reserve seed is search_seed(seed), except for a block
  /// from the claim-ticket path (the run's block, or a waiter's lookup result), where it is the
  /// caller's ticket slot (below).
  ///
  /// Claim tickets (issue 13, cold-start bursts; not in the papers). DynaSOAr Alg. 1 opens a new
  /// block whenever the active lookups fail. When many warps allocate at once on an empty heap,
  /// every one of them fails the lookups before the first new block is published and opens its
  /// own: the heap fills with sparse blocks, and with several types the blocks go to the wrong
  /// types (a population of 75% of the heap no longer fits one launch). Here an allocation that
  /// misses takes k tickets from claim_tickets[t] (a relaxed fetch_add: the counter carries no
  /// data, only a share of the demand). Tickets cut the demand into runs of N_t slots. An
  /// allocation whose tickets include a run's start opens a block for the last such run (the
  /// one its own slots come from; take_claim_tickets) and publishes it in the run
  /// table (claim_runs, a relaxed store: the block's header is published by initialize's own
  /// release store, which the reservation acquires); the others poll the entry of the run their
  /// first ticket is in, up to claim_wait_rounds rounds (await_run), then go on as DynaSOAr
  /// does. The opener tries its run's candidate block first (run_candidate), so a burst on an
  /// empty heap opens blocks without searching the free bitmap. So a burst opens about one block
  /// per N_t requested slots, and every wait is bounded: no allocation depends on another thread's
  /// progress beyond those rounds (lock-free as before). A block from the run table is like a
  /// lookup result: possibly full, invalid or of another type by the time of the reservation, which
  /// try_reserve / commit_reservation handle (App. A.3). An opener that finds no free block
  /// publishes kNotFound, releasing its waiters.
  ///
  /// Ticket slots. The holders of a run's tickets share the run's block: ticket j of the run
  /// (j = 0 .. N_t - 1; the caller's first ticket in the run, 0 for the opener) is slot j of the
  /// block, and a holder's slot search starts there (reserve_seed = j: try_reserve takes the
  /// lowest free slots at or after j, wrapping). So the holders of one run aim at disjoint slots
  /// and do not take each other's (with random rotations, the holders that arrive together picked
  /// overlapping slots and retried). The slots are not reserved for them: an allocation whose
  /// lookup found the block may take a slot first, and the holder then takes the next free ones
  /// (or finds the block full and starts another round), as before. Only the search start
  /// changes, not the protocol (H100, docs/results.md "Ticket slots").
  /// `top` as for find_active_block.
  HEAPLAB_HD BlockPick find_or_claim_block(std::uint32_t t,
                                           std::uint32_t k,
                                           std::uint64_t seed,
                                           std::uint64_t const* top = nullptr) const {
    std::uint32_t b = find_active_block(t, seed, top);
    if (b != kNotFound) return BlockPick{b, search_seed(seed)};
    if (claim_tickets_on()) {
      ClaimTicket const ticket = take_claim_tickets(t, k);
      if (ticket.opens) {
        // The run's waiters may reserve as soon as the header is published (initialize's
        // release store): the state-bit sets that follow are the ones a reservation before them
        // waits for in its retrying clear (A.4 "Allocate After Delete-First", initialize_block).
        b = take_free_block_for_run(t, ticket.run, seed);
        if (b != kNotFound) blocks().initialize(b, t, s_.capacities[t]);
        publish_run(t, ticket.run, b);
        if (b != kNotFound) publish_block_state(t, b);
      } else {
        b = await_run(t, ticket.run, seed);
        // MUTANT claim_wait_miss_is_oom: a waiter that was not served (its wait timed out, or
        // the run's opener found no free block) answers out of memory without looking for a
        // free or active block itself (docs/mutants.md).
        if HEAPLAB_MUTANT_CONSTEXPR (mutant::claim_wait_miss_is_oom)
          return BlockPick{b, ticket.slot};
      }
      if (b != kNotFound) return BlockPick{b, ticket.slot};
    }
    b = claim_free_block(t, seed);
    if (b == kNotFound) {
      // MUTANT oom_fallback_trusts_summary: the last lookup of an active block before answering
      // out of memory descends the summary levels (try_find_set) instead of scanning level 0;
      // an upper level that lags behind its containers (sec. 4.1.4) then hides active blocks
      // with free slots: only bitmaps of two or more levels (more than 64 blocks), under
      // contention (issue 34, class 1; docs/mutants.md).
      if HEAPLAB_MUTANT_CONSTEXPR (mutant::oom_fallback_trusts_summary)
        b = active(t).try_find_set(search_seed(seed));
      else
        b = active(t).find_set_scan(search_seed(seed));
    }
    return BlockPick{b, search_seed(seed)};
  }

  /// k claim tickets of type t: whether they start a run (the caller opens its block), which run
  /// the caller opens or waits for, and the caller's ticket slot in that run's block (its first
  /// ticket's offset in the run; 0 for the opener, whose tickets in its run start the run).
  struct ClaimTicket {
    bool opens         = false;
    std::uint64_t run  = 0;
    std::uint32_t slot = 0;
  };
  HEAPLAB_HD ClaimTicket take_claim_tickets(std::uint32_t t, std::uint32_t k) const {
    std::uint64_t const n = s_.capacities[t];
    std::uint64_t const first =
        Atomics::fetch_add(s_.claim_tickets + t, std::uint64_t{k}, MemoryOrder::relaxed);
    std::uint64_t const last = first + k - 1u;
    // A run starts among the tickets: open the last such run (for k > N_t several start; the
    // caller's own slots come from the block it opens, the run of its last ticket).
    if (first % n == 0 || first / n != last / n) return ClaimTicket{true, last / n, 0};
    return ClaimTicket{false, first / n, static_cast<std::uint32_t>(first % n)};
  }

 private:
  /// Entry `hint` of type t's block hints (reduced modulo hint_slots), or nullptr (hints off, or
  /// kNoHint).
  HEAPLAB_HD std::uint32_t* hint_entry(std::uint32_t t, std::uint32_t hint) const {
    if (s_.block_hints == nullptr || s_.hint_slots == 0 || hint == kNoHint) return nullptr;
    return s_.block_hints + std::uint64_t{t} * s_.hint_slots + (hint & (s_.hint_slots - 1u));
  }
  HEAPLAB_HD bool claim_tickets_on() const {
    return s_.claim_tickets != nullptr && s_.claim_runs != nullptr && s_.claim_wait_rounds > 0;
  }
  HEAPLAB_HD std::uint64_t* run_entry(std::uint32_t t, std::uint64_t run) const {
    return s_.claim_runs + std::uint64_t{t} * s_.claim_run_slots +
           (run & (s_.claim_run_slots - 1u));
  }
  /// Tag of a run in its table entry: 1 .. 2^32 - 1, never 0, the "none yet" of an empty entry.
  HEAPLAB_HD static std::uint64_t run_tag(std::uint64_t run) { return run % 0xFFFFFFFFull + 1u; }
  HEAPLAB_HD void publish_run(std::uint32_t t, std::uint64_t run, std::uint32_t b) const {
    Atomics::store(run_entry(t, run), (run_tag(run) << 32) | b, MemoryOrder::relaxed);
  }
  /// The block published for `run`, polled once per round (Backoff::wait between rounds); in
  /// the last quarter of the claim_wait_rounds rounds also any block one lookup finds in
  /// active[t] (a straggler takes a partly filled block of another run rather than open one).
  /// Looking up from the first round was measured to cost throughput: waiters then take the
  /// blocks of other runs, whose own waiters find them full and take new tickets (H100,
  /// docs/core.md "Claim tickets"). kNotFound after the last round, or when the run's
  /// opener found no free block.
  HEAPLAB_HD std::uint32_t await_run(std::uint32_t t, std::uint64_t run, std::uint64_t seed) const {
    std::uint64_t const tag = run_tag(run);
    // MUTANT claim_wait_unbounded: no round limit; a waiter whose entry a later run overwrote
    // (or whose opener is slow) polls until an active block of t shows up, possibly forever.
    for (std::uint32_t w = 0; mutant::claim_wait_unbounded || w < s_.claim_wait_rounds; ++w) {
      std::uint64_t const e = Atomics::load(run_entry(t, run), MemoryOrder::relaxed);
      if ((e >> 32) == tag) return static_cast<std::uint32_t>(e);
      if (w >= s_.claim_wait_rounds - s_.claim_wait_rounds / 4) {
        std::uint32_t const b =
            active(t).try_find_set(search_seed(detail::mix_seed(seed, 0x100u + w)));
        if (b != kNotFound) return b;
      }
      Atomics::backoff(Backoff::wait);
    }
    return kNotFound;
  }

 public:
  /// The state updates a successful reservation r in block b is responsible for, then the type
  /// check of A.3: true if b has type t (the slots are t objects now); false if the block had
  /// been deleted and re-initialized with another type u since it was selected ("Block Replaced
  /// (Different Type)"), in which case the updates were made for u and the slots are released
  /// again (DynaSOAr Alg. 1 line 14). The type read is stable: we hold the reserved slots, so b
  /// cannot be invalidated (A.3 last paragraph).
  HEAPLAB_HD bool commit_reservation(std::uint32_t t,
                                     std::uint32_t b,
                                     ReserveResult const& r) const {
    std::uint32_t const u = blocks().load_type(b);
    HEAPLAB_PROTOCOL_CHECK(u < s_.num_types && s_.capacities[u] >= 2,
                           "a reservation succeeded in a block whose header type is not a "
                           "concrete type (initialize must publish the type before the bitmap)");
    apply_fill_updates(u, b, r.update, r.slots, /*reserved=*/true);
    if (u == t) return true;
    release_slots(u, b, r.slots);
    return false;
  }

  /// One coalescing round of DynaSOAr Alg. 1 for up to k objects of concrete type t in one block
  /// (DynaSOAr sec. 4.2 request coalescing; the GPU warp leader's reservation, soa/heap_ref.cuh
  /// reserve_for_group, and the CPU explorer's k-slot workloads call it; allocate() is k = 1).
  /// Rounds r = `round`, `round` + 1, ... (seed mix_seed(seed, r)) pick a block and reserve up to
  /// k slots in it (try_reserve), until a reservation commits: returns the block and the 1..k
  /// slots reserved (fewer than k when other threads took the rest); `round` is left at the
  /// committing round. Returns the null SlotsRef, `round` at the round that found no block, when
  /// find_or_claim_block finds none (out of memory). A round fails only because another thread
  /// completed an operation (lock-free, as allocate()).
  ///
  /// Block hints (issue 30; not in the papers). `hint` names an entry of HeapStorage::block_hints
  /// for type t (on the GPU one per warp slot of an SM: the warps that run there one after
  /// another; kNoHint: none). The first round of a call reserves in the entry's block, when it
  /// names one, instead of looking up active[t]: one load instead of the descent of
  /// find_active_block (up to num_levels dependent loads per lookup). A committed reservation
  /// that leaves its block not full stores the block there; one that fills the hinted block, or
  /// a hinted round that fails, stores kNotFound. The entry is a relaxed load and relaxed stores:
  /// it publishes nothing. Its block is a candidate like a lookup's result (App. A.3): possibly
  /// full, invalidated, free or of another type by the time of the reservation, which try_reserve
  /// (an invalidated or free block's bitmap is all ones: no slot) and commit_reservation's type
  /// check (rollback) handle; so hints add no safety obligation. A failed hinted round is one
  /// more round that failed because another thread completed an operation (the block filled, was
  /// deleted or retyped after the hint was stored), and it is tried once per call: lock-freedom
  /// and the rounds' bound are as before. With an entry, the call loads active[t]'s top-level word
  /// right after the entry and before either is used: the two independent loads are in flight
  /// together, so an empty or stale entry does not add a dependent load before the lookup (the
  /// first lookup starts from that word; on a hit it goes unused).
  HEAPLAB_HD SlotsRef reserve_slots(std::uint32_t t,
                                    std::uint32_t k,
                                    std::uint64_t seed,
                                    std::uint64_t& round,
                                    std::uint32_t hint = kNoHint) const {
    std::uint32_t* const entry = hint_entry(t, hint);
    std::uint32_t hinted       = kNotFound;
    std::uint64_t top          = 0;
    std::uint64_t const* first = nullptr;  // the preloaded top word, until a lookup used it
    if (entry != nullptr) {
      // order: relaxed (a hint: the reservation's acquire RMW and the type check validate it)
      hinted = Atomics::load(entry, MemoryOrder::relaxed);
      top    = active(t).top_word();
      first  = &top;
    }
    for (;; ++round) {
      std::uint64_t const s = detail::mix_seed(seed, round);
      bool const from_hint  = hinted < s_.num_blocks;
      BlockPick const p =
          from_hint ? BlockPick{hinted, search_seed(s)} : find_or_claim_block(t, k, s, first);
      if (!from_hint) first = nullptr;  // a later round's lookup loads the word afresh
      if (p.block == kNotFound) return SlotsRef{};
      ReserveResult const r = blocks().try_reserve(p.block, k, p.reserve_seed);
      // MUTANT hint_skips_type_check: a hinted round trusts the hinted block's type, as if a hint
      // could not go stale: it commits the reservation for the type the header has, so the caller
      // gets slots of a block that was deleted and re-initialized for another type since the
      // hint was stored (App. A.3 "Block Replaced (Different Type)"; docs/mutants.md).
      std::uint32_t const commit_as =
          mutant::hint_skips_type_check && from_hint && r.ok() ? blocks().load_type(p.block) : t;
      if (r.ok() && commit_reservation(commit_as, p.block, r)) {
        if (entry != nullptr) {
          bool const full = r.update.after == kFullBitmap;
          // order: relaxed (a hint)
          if (!full && p.block != hinted) Atomics::store(entry, p.block, MemoryOrder::relaxed);
          // order: relaxed (a hint)
          if (full && from_hint) Atomics::store(entry, kNotFound, MemoryOrder::relaxed);
        }
        return SlotsRef{p.block, r.slots};
      }
      if (from_hint) {
        // order: relaxed (a hint)
        Atomics::store(entry, kNotFound, MemoryOrder::relaxed);
        hinted = kNotFound;  // once per call: the next rounds look up
      }
      if HEAPLAB_MUTANT_CONSTEXPR (mutant::alloc_null_after_lost_round) {
        // MUTANT alloc_null_after_lost_round: gives up when the selected block filled up, was
        // deleted or changed type under it, instead of selecting another one (docs/mutants.md).
        return SlotsRef{};
      } else {
        Atomics::backoff(Backoff::retry);
      }
    }
  }

  /// The GPU warp leader's reservation (soa/heap_ref.cuh allocate_raw): reserve_slots rounds for
  /// up to k objects, where an out-of-memory answer is retried `oom_retries` times before it is
  /// believed. Near exhaustion a block that another thread is initializing (between its header
  /// store and its active[T] set, initialize_block) or deleting is briefly invisible, so a single
  /// "no block" observation can be spurious; the retries make that unlikely but cannot exclude it
  /// (the result stays a legal out-of-memory answer, check::check_oom_justified). Before retry m
  /// (1, 2, ...) it calls pause(m): the GPU sleeps, the CPU explorer backs off. Returns the block
  /// and 1..k slots as reserve_slots, or the null SlotsRef after 1 + oom_retries misses. The CPU
  /// explorer's k-slot workloads run this function, so it checks the GPU's loop.
  template <class Pause>
  HEAPLAB_HD SlotsRef reserve_slots_or_oom(std::uint32_t t,
                                           std::uint32_t k,
                                           std::uint64_t seed,
                                           std::uint64_t& round,
                                           std::uint32_t oom_retries,
                                           Pause&& pause,
                                           std::uint32_t hint = kNoHint) const {
    std::uint32_t misses = 0;
    for (;; ++round) {
      SlotsRef const r = reserve_slots(t, k, seed, round, hint);
      if (!r.is_null()) return r;
      // MUTANT alloc_retry_forever_on_oom (the GPU leader path too): never gives up, so a
      // group that finds the heap full spins until the watchdog reports the hang.
      bool const give_up = misses++ >= oom_retries && !mutant::alloc_retry_forever_on_oom;
      if (give_up) return SlotsRef{};
      pause(misses);
    }
  }

  /// DynaSOAr Alg. 1 with A.3's rollback and a clean out-of-memory result: one object of concrete
  /// type t. Returns the null SlotRef when find_or_claim_block finds no block. Lock-free: a round
  /// fails only because the selected block filled up, was deleted or changed type, i.e. another
  /// thread completed an operation. Linearizes at the fetch_or of the reservation it keeps
  /// (App. A.1.1); a null result at the level-0 scans that observed no free block and no active
  /// block of t.
  HEAPLAB_HD SlotRef allocate(std::uint32_t t,
                              std::uint64_t seed,
                              std::uint32_t hint = kNoHint) const {
    HEAPLAB_EXPECTS(t < s_.num_types && s_.capacities[t] >= 2,
                    "allocate: type id out of range or not a concrete type");
    for (std::uint64_t round = 0;; ++round) {
      SlotsRef const r = reserve_slots(t, 1, seed, round, hint);
      if (!r.is_null())
        return SlotRef{r.block, static_cast<std::uint32_t>(find_first_set(r.slots))};
      if HEAPLAB_MUTANT_CONSTEXPR (mutant::alloc_retry_forever_on_oom) {
        // MUTANT alloc_retry_forever_on_oom: DynaSOAr Alg. 1 as printed ("infinite loop if OOM").
        Atomics::backoff(Backoff::retry);
      } else {
        return SlotRef{};
      }
    }
  }

  /// DynaSOAr Alg. 2: frees the object of concrete type t at `ref`. Precondition: the caller owns
  /// it. Linearizes at the slot's fetch_and (App. A.1.2); the state updates and a possible deletion
  /// follow (A.4).
  HEAPLAB_HD void deallocate(std::uint32_t t, SlotRef ref) const {
    release_slots(t, ref.block, std::uint64_t{1} << ref.slot);
  }

  /// DynaSOAr Alg. 2 for a set of slots of one block of type t (all owned by the caller), with one
  /// fetch_and; the coalesced form of deallocate and the rollback of commit_reservation.
  HEAPLAB_HD void release_slots(std::uint32_t t, std::uint32_t b, std::uint64_t slots) const {
#if HEAPLAB_DEBUG_CHECKS || !HEAPLAB_DEVICE_CODE
    HEAPLAB_EXPECTS(blocks().load_type(b) == t,
                    "deallocate: the object's type is not the type of its block");
#endif
    SlotUpdate const u = blocks().release_slots(b, slots);
    apply_fill_updates(t, b, u, slots, /*reserved=*/false);
    if (u.emptied(s_.capacities[t])) invalidate_block(b);  // DynaSOAr Alg. 2 line 7
  }

  // ---------------------------------------------------------------- block lifetime

  /// DynaSOAr Alg. 8 plus Alg. 1 lines 5-7 and CompactGpu's new-candidate rule. Precondition: the
  /// caller cleared b's free bit. The header store publishes the block (block_headers.hpp
  /// initialize); then b enters allocated[t], active[t] and defrag[t] (an empty block is not full
  /// and is a candidate). A thread that reserves in b before these sets land and fills or empties
  /// it waits in its clear() until they do (A.4 "Allocate After Delete-First" pattern).
  HEAPLAB_HD void initialize_block(std::uint32_t t, std::uint32_t b) const {
    blocks().initialize(b, t, s_.capacities[t]);
    publish_block_state(t, b);
  }

  /// The state-bit half of initialize_block, after the header store.
  HEAPLAB_HD void publish_block_state(std::uint32_t t, std::uint32_t b) const {
    allocated(t).set(b, MemoryOrder::relaxed);
    active(t).set(b, MemoryOrder::relaxed);
    defrag(t).set(b, MemoryOrder::relaxed);
  }

  /// DynaSOAr Alg. 9 (iterative instead of recursive, footnote 10) followed on success by DynaSOAr
  /// Alg. 2 lines 8-11. Called by the thread whose free emptied b. Returns true if it deleted the
  /// block.
  ///
  /// The invalidating fetch_or sets every bit; its zero bits are the slots it invalidated.
  ///  - none (all ones before): another thread reserved a slot (block full) or already deleted
  ///    the block: nothing to do (A.4 "Block Deleted after Delete-Last").
  ///  - all slots (padding before): the block was empty and now accepts no reservation: it is
  ///    removed from active[t], defrag[t] (the fill crossing of this RMW) and allocated[t], and
  ///    published in free with a RELEASE set that the next claimer's acquire clear_any reads.
  ///  - some: a concurrent reservation won a slot. The RMW filled the block: its defrag crossing
  ///    is applied now; its deactivation is DEFERRED (A.2 "Details"): the rollback fetch_and
  ///    clears exactly our bits; if another thread freed a slot in between (before_rollback not
  ///    all ones), it saw FIRST and set active[t], so the deferred clear is owed and done now.
  ///    The rollback's own defrag crossing follows. If the rollback left the block empty, every
  ///    free in between saw our bits and none saw EMPTY: retry.
  /// The type t is read after the first RMW that invalidated a bit and is fixed until the
  /// rollback or the deletion (other threads do not change invalidated bits, A.2).
  /// Linearizes at the fetch_or that invalidated every slot (deleted), or at the fetch_or that
  /// invalidated none / the rollback that left the block non-empty (not deleted).
  HEAPLAB_HD bool invalidate_block(std::uint32_t b) const {
    BlockHeadersRef<Atomics> const hdr = blocks();
    for (;;) {
      SlotUpdate const inv = hdr.invalidate_free_slots(b);
      if (inv.before == kFullBitmap) return false;
      std::uint32_t const t = hdr.load_type(b);
      HEAPLAB_PROTOCOL_CHECK(t < s_.num_types && s_.capacities[t] >= 2,
                             "an invalidation hit a block whose header type is not a concrete "
                             "type");
      std::uint32_t const cap = s_.capacities[t];
      std::uint64_t const pad = padding_bits(cap);
      HEAPLAB_PROTOCOL_CHECK((inv.before & pad) == pad,
                             "an initialized block lost a padding bit of its allocation bitmap");
      if (inv.before == pad) {  // every slot invalidated by this RMW: delete the block
        active(t).clear(b, MemoryOrder::relaxed);  // DynaSOAr Alg. 2 line 9
        // MUTANT delete_keeps_defrag_bit: a deleted (free) block stays in defrag[t].
        if HEAPLAB_MUTANT_CONSTEXPR (!mutant::delete_keeps_defrag_bit)
          apply_defrag_crossing(t, b, inv);
        allocated(t).clear(b, MemoryOrder::relaxed);  // DynaSOAr Alg. 2 line 10
        // MUTANT weak_delete_release: publishing the deleted block does not release
        // (docs/mutants.md; found by the explorer's weak-memory mode only).
        // order: release [block-free] (the block's last lifetime before the next claimer's)
        HEAPLAB_MUTANT_CONSTEXPR MemoryOrder const publish =
            mutant::weak_delete_release ? MemoryOrder::relaxed : MemoryOrder::release;
        free_blocks().set(b, publish);  // DynaSOAr Alg. 2 line 11
        return true;
      }
      apply_defrag_crossing(t, b, inv);
      // MUTANT invalidate_no_rollback: the invalidated slots stay set forever (docs/mutants.md).
      if HEAPLAB_MUTANT_CONSTEXPR (mutant::invalidate_no_rollback) {
        return false;
      } else {
        SlotUpdate const rb = hdr.rollback_invalidation(b, inv.before);
        // MUTANT rollback_no_deferred_deactivate: the deferred deactivation is dropped.
        bool const deactivate =
            rb.before != kFullBitmap && !mutant::rollback_no_deferred_deactivate;
        if (deactivate) active(t).clear(b, MemoryOrder::relaxed);  // DynaSOAr Alg. 9 line 10
        apply_defrag_crossing(t, b, rb);
        if (rb.after != pad) return false;  // DynaSOAr Alg. 9 line 11: not empty again
      }
    }
  }

 private:
  /// The active / defrag updates one RMW u on b's bitmap is responsible for (order: active,
  /// then defrag). `slots` are the bits the RMW reserved or released (used by a mutant only).
  HEAPLAB_HD void apply_fill_updates(
      std::uint32_t t, std::uint32_t b, SlotUpdate u, std::uint64_t slots, bool reserved) const {
    if (u.filled()) active(t).clear(b, MemoryOrder::relaxed);  // DynaSOAr Alg. 1 line 12
    // MUTANT dealloc_no_reactivate: DynaSOAr Alg. 2 line 5 is missing (docs/mutants.md).
    bool const reactivate = u.unfilled() && !mutant::dealloc_no_reactivate;
    if (reactivate) active(t).set(b, MemoryOrder::relaxed);  // DynaSOAr Alg. 2 line 5
    (void)slots;                                             // used by a mutant only
    (void)reserved;
    if HEAPLAB_MUTANT_CONSTEXPR (mutant::defrag_crossing_from_reload) {
      // MUTANT defrag_crossing_from_reload: the crossing is judged from a fresh load instead of
      // the RMW's own before/after values, so concurrent RMWs are double-counted or missed.
      std::uint64_t const now = blocks().load_alloc_bitmap(b, MemoryOrder::relaxed);
      u                       = SlotUpdate{reserved ? (now & ~slots) : (now | slots), now};
    }
    apply_defrag_crossing(t, b, u);
  }

  HEAPLAB_HD void apply_defrag_crossing(std::uint32_t t,
                                        std::uint32_t b,
                                        SlotUpdate const& u) const {
    int const crossing = u.defrag_crossing(s_.capacities[t], s_.defrag_factor);
    if (crossing > 0) defrag(t).set(b, MemoryOrder::relaxed);
    if (crossing < 0) defrag(t).clear(b, MemoryOrder::relaxed);
  }

  HeapStorage s_{};
};

}  // namespace heaplab::core
