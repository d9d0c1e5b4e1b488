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
/// candidates, sources_allowed, sources and objects_moved.
struct PassStats {
  std::uint32_t index           = 0;
  std::uint32_t candidates      = 0;  // r
  std::uint32_t sources_allowed = 0;  // B = floor(r / (n + 1))
  std::uint32_t sources         = 0;  // B' = min(B, cap)
  std::uint64_t objects_moved   = 0;
  /// scan, copy and state (host-stepped loop only; the device-side loop reports no phase
  /// times per pass). Pointers are rewritten once per call (DefragStats).
  PhaseTimes times;
};

/// Where the passes of a call are stepped: on the device (a CUDA graph with a while node: no
/// host round trip between passes; the default when no PassObserver is given) or on the host
/// (one synchronization per pass, phase times per pass; always with an observer).
enum class PassLoop { device, host };

inline char const* to_string(PassLoop l) { return l == PassLoop::device ? "device" : "host"; }

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
  std::uint64_t forwarding_bytes = 0;
  /// The call's one rewrite (sec. 3.4, once per call): live pointer slots of the SOA arrays that
  /// may point to T, those that pointed into a source of the call (rewritten to the object's
  /// final location), and likewise the entries of the root arrays that may point to T. The
  /// model's DefragResult has the same counts.
  std::uint64_t pointers_scanned   = 0;
  std::uint64_t pointers_rewritten = 0;
  std::uint64_t roots_scanned      = 0;
  std::uint64_t roots_rewritten    = 0;
  /// CompactGpu Fig. 10, when DefragOptions::count_relocations: [c] = objects of T live at the
  /// call's start that the call moved c times (the last bin also counts larger c). Empty
  /// otherwise. The model's DefragResult::objects_by_relocation_count has the same meaning.
  std::vector<std::uint64_t> objects_by_relocation_count;
  PassLoop pass_loop = PassLoop::host;
  /// Blocks whose defrag[T] bit the final n-override recomputation had to change. Always 0
  /// unless a pass left a target's defrag[T] bit out of step with its fill (a bug).
  std::uint64_t defrag_bits_corrected = 0;
  /// scan, copy, state: summed over the passes of a host-stepped loop (0 with the device-side
  /// loop); rewrite: the call's one rewrite.
  PhaseTimes times;
  double passes_ms = 0;  // all passes (host-stepped: host gaps between passes included)
  double total_ms  = 0;  // first event of the call to its last
  /// Host time spent before the call's first event preparing the device-side loop (capturing
  /// and instantiating its CUDA graph; 0 when the compactor already held one for this call's
  /// type, n, k1, cap, variant and seed). Not part of total_ms.
  double setup_ms = 0;
};

/// Called after every pass, at quiescence (the heap may be snapshotted inside).
using PassObserver = std::function<void(PassStats const&)>;

}  // namespace heaplab::compact
