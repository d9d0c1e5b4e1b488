// Numbers of CompactGpu defragmentation that the GPU compactor (src/heaplab/compact) and the
// reference model (models/heaplab/model) must agree on exactly, so that every pass can be
// compared for equality (docs/compaction.md "Variants and their caps").
//
// Sec. 3.8 of CompactGpu replaces forwarding pointers by "defragmentation records" kept in
// 48 KB of shared memory. A record describes one source block and its n targets, so the records
// that fit bound the number of source blocks of one pass. Both sides apply the same rule:
//
//   B  = floor(r / (n + 1))                 sources the candidates allow (sec. 3.2)
//   B' = min(B, cap)                        sources this pass uses
//   sources R[0 .. B'-1], targets of R[s] are R[s + i * B'], i = 1..n
//
// with cap = sources_per_pass(variant, n) below (or a smaller cap forced by a test).
// Plain C++17, host and device; includes nothing of ours but host_device.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "heaplab/core/host_device.hpp"

namespace heaplab::core {

/// Shared memory one thread block may use without opting in (48 KiB on every GPU since Fermi;
/// CompactGpu sec. 3.8 "Current NVIDIA GPUs have 48 KB of shared memory"): the default record
/// budget, which gives the recompute variants the paper's caps.
inline constexpr std::uint32_t kDefragRecordBudgetBytes = 48u * 1024u;

/// The most shared memory one thread block of a Hopper GPU may opt in to (227 KiB; sm_90):
/// a record budget a caller may choose (DefragOptions::record_budget_bytes).
inline constexpr std::uint32_t kHopperRecordBudgetBytes = 227u * 1024u;

/// "No cap": the forwarding-pointer variant stores its forwarding pointers in the source blocks
/// themselves and can use every source the candidates allow.
inline constexpr std::uint32_t kUnlimitedSources = 0xFFFFFFFFu;

/// How pointers to moved objects find the new location (CompactGpu sec. 3.3, 3.8).
enum class RewriteVariant : std::uint8_t {
  forwarding,        // forwarding pointers in the source blocks (sec. 3.3, DynaSOAr Alg. 2, 3)
  recompute_global,  // the paper: source block ids in shared memory, the records global
  recompute_shared,  // the paper: whole records in shared memory
  // heaplab's GPU keeps every record in global memory, indexed by block id (one rewrite per
  // call, docs/compaction.md); the variants keep the paper's caps on sources per pass.
};

HEAPLAB_HD_INLINE constexpr char const* to_string(RewriteVariant v) {
  switch (v) {
    case RewriteVariant::forwarding:
      return "forwarding";
    case RewriteVariant::recompute_global:
      return "recompute-global";
    case RewriteVariant::recompute_shared:
      return "recompute-shared";
  }
  return "?";
}

/// The order of a pass's candidate array R, on the GPU and in the model alike.
/// block_id: CompactGpu sec. 3.2, "R" is the stream compaction of defrag[T], ascending block ids;
/// the paper's order and the default. by_fill: heaplab's, beyond the paper: R sorted by fill
/// (live objects), emptiest first, ties by block id (a stable sort of the block-id order), so the
/// sources R[0..B'-1] are the emptiest candidates and their targets R[s + i B'] the fuller ones.
/// Fewer objects move per source and the targets fill up sooner, so a call needs fewer passes
/// (Table 1 on the model: 20 -> 4; docs/compaction.md "Candidate order"). Any order keeps sec. 3's
/// guarantee that a source's objects fit into its n targets: every block of R is at most
/// n / (n + 1) full.
enum class CandidateOrder : std::uint8_t { block_id, by_fill };

HEAPLAB_HD_INLINE constexpr char const* to_string(CandidateOrder o) {
  return o == CandidateOrder::block_id ? "block-id" : "fill";
}

/// The order named `s` (to_string's names: "block-id", "fill"); nullopt for any other name.
/// Host only.
inline std::optional<CandidateOrder> candidate_order_from_string(std::string const& s) {
  if (s == "block-id") return CandidateOrder::block_id;
  if (s == "fill") return CandidateOrder::by_fill;
  return std::nullopt;
}

/// Why a defragmentation call stopped (CompactGpu sec. 3.6); the model and the GPU report the same.
enum class DefragStop : std::uint8_t {
  k1_reached,   // at most k1 candidates remain
  no_progress,  // B = floor(r / (n + 1)) = 0: fewer than n + 1 candidates (sec. 3 footnote 4)
};

HEAPLAB_HD_INLINE constexpr char const* to_string(DefragStop s) {
  return s == DefragStop::k1_reached ? "k1-reached" : "no-progress";
}

/// Recompute-Global: only the 4-byte source block id of each record lives in shared memory:
/// budget / 4 B sources per pass, whatever n is (48 KiB: 12288, the paper's number).
HEAPLAB_HD_INLINE constexpr std::uint32_t recompute_global_sources_per_pass(
    std::uint32_t budget = kDefragRecordBudgetBytes) {
  return budget / 4u;
}

/// Recompute-Shared: a whole record in shared memory, n + 1 block ids (4 B each) and n + 1
/// allocation bitmaps (8 B each), i.e. 12 (n + 1) bytes: budget / (12 (n + 1)) sources per pass
/// (48 KiB: 2048 for n = 1, the paper's number). Precondition: n >= 1.
HEAPLAB_HD_INLINE constexpr std::uint32_t recompute_shared_sources_per_pass(
    std::uint32_t n, std::uint32_t budget = kDefragRecordBudgetBytes) {
  return budget / (12u * (n + 1u));
}

/// The cap on sources per pass of a variant with factor n and a record budget in bytes
/// (kUnlimitedSources for forwarding).
HEAPLAB_HD_INLINE constexpr std::uint32_t sources_per_pass(
    RewriteVariant v, std::uint32_t n, std::uint32_t budget = kDefragRecordBudgetBytes) {
  switch (v) {
    case RewriteVariant::forwarding:
      return kUnlimitedSources;
    case RewriteVariant::recompute_global:
      return recompute_global_sources_per_pass(budget);
    case RewriteVariant::recompute_shared:
      return recompute_shared_sources_per_pass(n, budget);
  }
  return kUnlimitedSources;
}

/// What one defragmentation call is asked to do (CompactGpu sec. 3). The GPU compactor
/// (compact::Compactor::defragment) and the reference model (model::HeapModel::defrag) take the
/// same options and derive the same cap on sources per pass (effective_source_cap below), so a
/// differential run hands both the one request. Host only.
struct DefragOptions {
  /// Defragmentation factor of this call; default: the heap's (HeapConfig::defrag_factor).
  /// Another n computes this call's candidates from the block fills with that n; the heap's
  /// defrag[T] bitmaps keep following the heap's n (docs/model.md "The n-override rule").
  /// 1 <= n < N_T.
  std::optional<std::uint32_t> n;
  /// Stop once at most k1 candidates remain; default: the heap's (HeapConfig::k1).
  std::optional<std::uint32_t> k1;
  /// Forwarding pointers (sec. 3.3) or a recompute variant (sec. 3.8): the same heap results;
  /// the recompute variants use at most sources_per_pass(variant, n) sources per pass.
  RewriteVariant variant = RewriteVariant::forwarding;
  /// The order of every pass's R (CandidateOrder; the paper's by default).
  CandidateOrder order = CandidateOrder::block_id;
  /// At most this many sources per pass, on top of the variant's cap (tests use it to exercise
  /// the capped pass geometry with small heaps). >= 1 when given.
  std::optional<std::uint32_t> source_cap;
  /// The shared-memory budget in bytes the recompute variants' caps come from (sec. 3.8):
  /// kDefragRecordBudgetBytes (48 KiB, the paper's caps) by default; kHopperRecordBudgetBytes
  /// raises them to what a Hopper thread block may opt in to. It must leave a cap of at least
  /// one source.
  std::uint32_t record_budget_bytes = kDefragRecordBudgetBytes;
  /// Warp-order perturbation of the call's kernels (core/perturb.hpp; test-only, beyond the
  /// paper): 0 is off; otherwise each pass's kernels delay warps by a hash of this seed. The
  /// model ignores it (it changes no result).
  std::uint64_t perturb_seed = 0;
  /// The GPU compactor also reports how many times the call moved each object (CompactGpu
  /// Fig. 10; compact::DefragStats::objects_by_relocation_count), at the cost of a copy of the
  /// allocation bitmaps and a pass over T's objects. The model always reports it.
  bool count_relocations = false;
};

/// B' = min(B, cap): the sources one pass uses.
HEAPLAB_HD_INLINE constexpr std::uint32_t capped_sources(std::uint32_t sources_allowed,
                                                         std::uint32_t cap) {
  return sources_allowed < cap ? sources_allowed : cap;
}

/// The cap on sources per pass of a call with `options` and effective factor n (the options' n
/// or the heap's): the variant's (sources_per_pass with options.record_budget_bytes), lowered
/// to options.source_cap if given. 0 when the budget leaves no source (the callers reject it).
/// n = 0 (invalid; the callers reject it) gives kUnlimitedSources.
inline std::uint32_t effective_source_cap(DefragOptions const& options, std::uint32_t n) {
  std::uint32_t const cap = n == 0
                                ? kUnlimitedSources
                                : sources_per_pass(options.variant, n, options.record_budget_bytes);
  return options.source_cap ? capped_sources(cap, *options.source_cap) : cap;
}

/// THE pass bound of heaplab: the one definition that the model interpreter, the differential
/// runner (GPU runner and differential-model) and the GPU compaction tests all check against,
/// through check::check_pass_bound / check::check_defrag_obligations (issue 15 item 7: three
/// copies had diverged, and the uncapped one reported false `defrag-pass-bound` failures for the
/// recompute variants).
///
/// The exact worst-case number of passes from d candidates when every pass uses at most `cap`
/// sources (cap = kUnlimitedSources: the forwarding variant, CompactGpu sec. 3.3; otherwise the
/// cap of a recompute variant, sec. 3.8, sources_per_pass above). A pass runs while r > k1 and
/// B = floor(r / (n + 1)) >= 1 and removes at least its B' = min(B, cap) sources (no block
/// becomes a candidate during defragmentation: targets only gain objects, sources become free),
/// so the count is the number of steps of r <- r - min(floor(r / (n + 1)), cap) until r <= k1 or
/// r <= n. The step function is nondecreasing in r, so removing more than B' never leads to
/// more passes; removing exactly B' happens when no target leaves the candidates, so the bound
/// is attained. It exceeds the paper's log_{(n+1)/n}(d/k1) (CompactGpu sec. 3.6) because B is
/// floored and capped (docs/invariants.md "Pass bound"). Preconditions: n >= 1, cap >= 1.
HEAPLAB_HD_INLINE constexpr std::uint32_t worst_case_passes_with_cap(
    std::uint32_t d, std::uint32_t n, std::uint32_t k1, std::uint32_t cap = kUnlimitedSources) {
  std::uint32_t passes = 0;
  for (std::uint64_t r = d; r > k1 && r / (n + std::uint64_t{1}) >= 1; ++passes) {
    std::uint64_t const b = r / (n + std::uint64_t{1});
    r -= b < cap ? b : cap;
  }
  return passes;
}

}  // namespace heaplab::core
