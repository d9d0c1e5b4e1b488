// CompactGpu's claims about defragmentation (CompactGpu sec. 2.2, 3, 3.6) as executable checks
// over snapshots and pass counts. Used by the model's property tests and the GPU compaction tests.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot.hpp"
#include "heaplab/core/defrag_limits.hpp"

namespace heaplab::check {

/// Fragmentation F as CompactGpu sec. 2.2 defines it: the average free level over the allocated
/// blocks,
///     F = 1/#blocks * sum over allocated blocks b of (N_T(b) - used(b)) / N_T(b),
/// over the allocated blocks of `type`, or of every concrete type when `type` is nullopt.
/// Allocated = bit set in allocated[T]; used = allocation bits below N_T. 0 when no block is
/// allocated. Every block weighs the same, whatever its capacity.
double fragmentation(HeapSnapshot const& snapshot, std::optional<std::uint32_t> type);

/// DynaSOAr sec. 6.3's slot-weighted variant: unused slots over all slots of the allocated
/// blocks, F = sum (N_T(b) - used(b)) / sum N_T(b). Equal to fragmentation() when all counted
/// blocks have the same capacity (e.g. for a single type). 0 when no block is allocated.
double slot_weighted_fragmentation(HeapSnapshot const& snapshot, std::optional<std::uint32_t> type);

/// Post-conditions of a complete defragmentation of `type` with factor n and stop threshold k1
/// (CompactGpu sec. 3 and 3.6), on the snapshot after it:
///   defrag-post-fill:       every allocated block of `type` that is not in defrag[type] has
///                           fill > n/(n+1), i.e. !core::is_defrag_fill(used, N_T, n): a block
///                           that is not a candidate really is well filled (targets that stayed
///                           low must keep their candidate state, CompactGpu sec. 3.5);
///   defrag-post-candidates: at most max(k1, n) allocated blocks of `type` have fill <= n/(n+1)
///                           (counted from the allocation bitmaps): passes stop once at most k1
///                           remain or a pass has no source, B = floor(r/(n+1)) = 0, i.e. r <= n
///                           (CompactGpu sec. 3 footnote 4).
/// With zero candidates left this implies F <= 1/(n+1) (CompactGpu sec. 3): every allocated block
/// then has free level < 1/(n+1). Preconditions: type is a concrete type of the config, n >= 1.
std::vector<Violation> check_defrag_postconditions(HeapSnapshot const& after,
                                                   std::uint32_t type,
                                                   std::uint32_t n,
                                                   std::uint32_t k1);

/// The exact worst-case number of passes of the CompactGpu sec. 3.6 loop that starts with d
/// candidates, without a source cap (the forwarding variant): core::worst_case_passes_with_cap
/// with cap = kUnlimitedSources, the one definition (core/defrag_limits.hpp); this wrapper only
/// adds the precondition check. A pass runs while r > k1 and B = floor(r/(n+1)) >= 1; it removes
/// its B sources (targets may lose candidacy too, and no block becomes a candidate during
/// defragmentation, so at least B candidates go). The worst case removes exactly B, so the count
/// is the number of steps of r <- r - floor(r/(n+1)) from r = d until r <= k1 or r <= n.
///
/// Why this and not the paper's log_{(n+1)/n}(d/k1): the paper assumes every pass keeps at most
/// n/(n+1) of the candidates, but B is floored, so for small r a pass may remove a much smaller
/// fraction (r = 2n+1 removes only 2, not (2n+1)/(n+1)). The real-valued bound is then exceeded:
/// n = 2, k1 = 2, d = 10 takes 10 -> 7 -> 5 -> 4 -> 3 -> 2, 5 passes, while
/// log_{1.5}(10/2) = 3.97. (For n = 1 the paper's bound rounded up always holds.) The recurrence
/// is the tight bound: f(r) = r - floor(r/(n+1)) is nondecreasing, so by induction any pass
/// that removes more than B candidates cannot lead to more passes, and removing exactly B is
/// possible (no target fills up), so this many passes can occur.
std::uint32_t worst_case_passes(std::uint32_t d, std::uint32_t n, std::uint32_t k1);

/// The paper's bound as a real number: log_{(n+1)/n}(d / k1) for k1 >= 1, log_{(n+1)/n}(d) for
/// k1 == 0 (its bound to eliminate all candidates); 0 when d <= max(k1, 1). For comparison only.
double paper_pass_bound(std::uint32_t d, std::uint32_t n, std::uint32_t k1);

/// defrag-pass-bound: one violation if a defragmentation that started with d candidates ran more
/// than core::worst_case_passes_with_cap(d, n, k1, source_cap) passes; empty otherwise. Pass the
/// variant's cap (core::sources_per_pass, or the DefragResult's source_cap): a capped pass
/// removes fewer candidates, so the uncapped bound is too small for the recompute variants
/// (n = 1, Recompute-Shared: d = 6145 takes 14 passes in the worst case, the uncapped bound is
/// 13). Preconditions: n >= 1, source_cap >= 1.
std::vector<Violation> check_pass_bound(std::uint32_t passes,
                                        std::uint32_t d,
                                        std::uint32_t n,
                                        std::uint32_t k1,
                                        std::uint32_t source_cap = core::kUnlimitedSources);

/// Allocated blocks of exactly `type` whose fill is <= n/(n+1) (core::is_defrag_fill), counted
/// from the allocation bitmaps: the candidates of a defragmentation with factor n (CompactGpu
/// sec. 3.2), whatever defrag[type] says.
std::uint32_t count_candidates(HeapSnapshot const& snapshot, std::uint32_t type, std::uint32_t n);

/// One complete defragmentation call of one type, as every implementation reports it.
struct DefragCall {
  std::uint32_t type              = 0;
  std::uint32_t n                 = 1;  // the factor this call used (may differ from config's)
  std::uint32_t k1                = 0;
  std::uint32_t source_cap        = core::kUnlimitedSources;  // core::sources_per_pass
  std::uint32_t candidates_before = 0;                        // d
  std::uint32_t passes            = 0;                        // passes run
};

/// Every obligation of CompactGpu after a complete defragmentation call, on the snapshot after
/// it. The one implementation used by the model interpreter, the differential runner (GPU runner
/// and differential-model) and the GPU compaction tests (docs/invariants.md "Defragmentation
/// obligations"):
///   - call.n == config n: check_defrag_postconditions (defrag-post-fill, defrag-post-candidates);
///     otherwise (the n-override rule, docs/model.md: defrag[T] follows the config's n) only
///     defrag-post-candidates, counted with the call's n: at most max(k1, n) candidates remain;
///   - defrag-pass-bound: check_pass_bound with the call's source cap.
/// CompactGpu's F <= 1/(n+1) (sec. 3) is not a separate check: it follows from the candidate
/// count by arithmetic (a non-candidate has free level < 1/(n+1); with c candidates left among
/// B blocks, F <= (c + (B - c)/(n+1)) / B), so a separate check could never fail on its own.
std::vector<Violation> check_defrag_obligations(HeapSnapshot const& after, DefragCall const& call);

}  // namespace heaplab::check
