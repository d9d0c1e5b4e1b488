// Out-of-memory legitimacy (issue 15 item 2): a null allocation result must be justified by the
// heap (docs/invariants.md "Out-of-memory legitimacy").
//
// DynaSOAr Alg. 1 (sec. 3.5) fails an allocation of T only on its slow path: no active block of T
// (active[T].try_find_set) and no free block (free.clear). heaplab's allocator
// (core/heap_protocol.hpp find_or_claim_block; the GPU leader path soa/heap_ref.cuh
// reserve_for_group) returns null only after level-0 scans of free and active[T] observed no set
// bit. So a null is a bug whenever some block was free, or some slot of an active T block was free,
// during the *whole* attempt. Over an allocation-only wave that is decidable from the snapshots
// before and after the wave (the rule below); under concurrency with frees it is not, which is why
// the rule is stated for waves.
#pragma once

#include <cstdint>
#include <vector>

#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot.hpp"

namespace heaplab::check {

/// The obligation's name in violations and failure reports.
inline constexpr char const* kOomJustified = "oom-justified";

/// oom-justified, for one allocation-only wave (an alloc wave, or a parallel_do whose only action
/// is allocate_child; no frees, deletes or defragmentation in between), given the quiescent
/// snapshots `before` and `after` the wave and the number of allocations of each type that
/// returned null (`nulls[t]`, indexed by type id; missing entries count as 0).
///
/// If nulls[T] > 0, then in `after`
///   (a) no block may be free that was also free in `before`, and
///   (b) no block allocated for T in both `before` and `after` may have a slot s < N_T that is
///       free in both.
/// Soundness (no false positives for a correct allocator under any interleaving): in an
/// allocation-only wave, allocation bits are only set (the one release in the allocation path,
/// the rollback of DynaSOAr App. A.3, needs a block that changed type, i.e. a deletion) and blocks
/// leave the free set only by being claimed, never return. So a block free before and after was
/// free throughout, its free bit set at level 0 (and at every upper level: a summary bit is
/// cleared only when its container becomes empty, sec. 4.1.1). A slot free before and after in a
/// block of T before and after was free throughout, so the block was never full and stayed in
/// active[T] (only the RMW that fills a block clears its active bit, DynaSOAr Alg. 1 line 12).
/// Every null follows a level-0 scan of free and of active[T] that saw no set bit, contradicting
/// either. What the rule deliberately does not blame: blocks claimed during the wave (a block being
/// initialized is briefly invisible, soa/heap_ref.cuh reserve_for_group; its slots were not
/// free T slots before), slots that concurrent allocations took, and free slots in blocks of
/// other types (capacities differ; a U block never holds a T object, sec. 3). DynaSOAr's bounded
/// active-block lookups (sec. 4.2, r = 5) may miss a set bit, but they only choose between the
/// fast and the slow path: a null needs the slow path to fail too.
/// One violation per type with unjustified nulls (the first witness block and slot; counts in
/// the message). Preconditions: both snapshots are well-formed with the same config.
std::vector<Violation> check_oom_justified(HeapSnapshot const& before,
                                           HeapSnapshot const& after,
                                           std::vector<std::uint64_t> const& nulls);

}  // namespace heaplab::check
