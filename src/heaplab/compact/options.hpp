// What a CompactGpu defragmentation call takes and what it reports (docs/compaction.md).
// Host only, plain C++17.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "heaplab/compact/pass_plan.hpp"
#include "heaplab/core/defrag_limits.hpp"

namespace heaplab::compact {

/// Forwarding pointers (sec. 3.3) or one of the recompute alternatives (sec. 3.8). All three
/// produce the same heap; they differ in how a pointer finds the new location, and the
/// recompute variants use at most core::sources_per_pass(variant, n) sources per pass.
using core::RewriteVariant;

/// What one call is asked to do: the one definition the model takes too (core/defrag_limits.hpp).
using core::DefragOptions;

/// A registered array of object pointers kept outside the heap (beyond the paper: CompactGpu
/// leaves such pointers stale). `pointers` is device memory holding `count` encoded object
/// pointers (0 = null) whose declared pointee is `pointee` (a type id of the heap): when T is
/// defragmented and T <: pointee, entries pointing to moved T objects are rewritten.
struct ExternalRoots {
  std::uint64_t* pointers = nullptr;
  std::uint64_t count     = 0;
  std::uint32_t pointee   = 0;
};

/// Milliseconds per phase (CUDA events on the GPU). scan: candidate enumeration (and building
/// the call's candidate bitmap when n differs from the heap's); copy: move kernel, forwarding
/// kernel or record snapshot; rewrite: heap scan and roots; state: target and source block
/// states (sec. 3.5).
struct PhaseTimes {
  double scan_ms    = 0;
  double copy_ms    = 0;
  double rewrite_ms = 0;
  double state_ms   = 0;
  PhaseTimes& operator+=(PhaseTimes const& o) {
    scan_ms += o.scan_ms;
    copy_ms += o.copy_ms;
    rewrite_ms += o.rewrite_ms;
    state_ms += o.state_ms;
    return *this;
  }
  [[nodiscard]] double sum_ms() const { return scan_ms + copy_ms + rewrite_ms + state_ms; }
};

/// One pass. The counts are exact; the model's DefragPassStats has the same meaning for
/// candidates, sources_allowed, sources, objects_moved, pointers_scanned, pointers_rewritten and
/// roots_rewritten.
struct PassStats {
  std::uint32_t index           = 0;
  std::uint32_t candidates      = 0;  // r
  std::uint32_t sources_allowed = 0;  // B = floor(r / (n + 1))
  std::uint32_t sources         = 0;  // B' = min(B, cap)
  std::uint64_t objects_moved   = 0;
  /// Live pointer slots of the SOA arrays that may point to T (sec. 3.4), outside the sources.
  std::uint64_t pointers_scanned   = 0;
  std::uint64_t pointers_rewritten = 0;
  std::uint64_t roots_scanned      = 0;  // entries of the root arrays that may point to T
  std::uint64_t roots_rewritten    = 0;
  PhaseTimes times;
};

struct DefragStats {
  std::uint32_t type       = 0;
  std::uint32_t n          = 1;
  std::uint32_t k1         = 0;
  RewriteVariant variant   = RewriteVariant::forwarding;
  std::uint32_t source_cap = core::kUnlimitedSources;  // effective cap on sources per pass
  std::vector<PassStats> passes;
  DefragStop stop                 = DefragStop::k1_reached;
  std::uint32_t candidates_before = 0;  // r of the first scan (with this call's n)
  std::uint32_t candidates_after  = 0;  // r of the last scan
  std::uint64_t objects_moved     = 0;  // relocations, summed over passes
  /// Object bytes copied: objects_moved * size(T) (the sum of T's field sizes, DynaSOAr sec. 3.2).
  /// A copy reads and writes each of them once.
  std::uint64_t object_bytes_moved = 0;
  /// Forwarding pointers written (8 bytes per moved object; forwarding variant only).
  std::uint64_t forwarding_bytes   = 0;
  std::uint64_t pointers_scanned   = 0;
  std::uint64_t pointers_rewritten = 0;
  std::uint64_t roots_scanned      = 0;
  std::uint64_t roots_rewritten    = 0;
  /// Blocks whose defrag[T] bit the final n-override recomputation had to change. Always 0
  /// unless a pass left a target's defrag[T] bit out of step with its fill (a bug).
  std::uint64_t defrag_bits_corrected = 0;
  PhaseTimes times;     // summed over passes, plus the final scan
  double total_ms = 0;  // first event to last, host gaps between passes included
};

/// Called after every pass, at quiescence (the heap may be snapshotted inside).
using PassObserver = std::function<void(PassStats const&)>;

}  // namespace heaplab::compact
