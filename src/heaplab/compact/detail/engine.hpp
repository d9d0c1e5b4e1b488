// The pass loop of a CompactGpu defragmentation call (sec. 3.1, 3.6), written once over a
// backend that runs the steps: the GPU backend (compactor.cuh) launches kernels, the CPU
// emulation (proofs_tests/compact/support) runs the same per-thread bodies sequentially, and a
// fake backend tests the loop alone. Plain C++17, host only.
//
// One pass, in this order (each step sees the completed effects of the previous one):
//   scan             R := the candidates of the call, ascending; r = |R|        (sec. 3.2)
//   copy             [records] move objects; [forwarding pointers]               (CompactGpu Alg.
//   1, 2) commit_targets   targets' allocation bitmaps gain the moved slots; active[T],
//                    defrag[T] (heap's n) and the call's candidate bits follow   (sec. 3.5)
//   rewrite          pointers to sources in the type-limited heap scan and roots (CompactGpu Alg.
//   3) release_sources  sources become free                                        (sec. 3.5)
// Targets are committed before the rewrite so that the scan finds the moved objects' own
// pointers (T may point to T), and sources are released after it because the rewrite still
// identifies them by their candidate bit (CompactGpu Alg. 3: block id < R[B'] and the bit set).
#pragma once

#include <cstdint>

#include "heaplab/compact/detail/call_plan.hpp"
#include "heaplab/compact/options.hpp"
#include "heaplab/compact/pass_plan.hpp"

namespace heaplab::compact::detail {

struct ScanResult {
  std::uint32_t candidates = 0;
  double ms                = 0;
};

/// Per pass, from the backend after the pass completed (counts and phase times).
struct PassReport {
  std::uint64_t objects_moved      = 0;
  std::uint64_t pointers_scanned   = 0;
  std::uint64_t pointers_rewritten = 0;
  std::uint64_t roots_scanned      = 0;
  std::uint64_t roots_rewritten    = 0;
  double copy_ms                   = 0;
  double rewrite_ms                = 0;
  double state_ms                  = 0;
};

struct CallReport {
  std::uint64_t defrag_bits_corrected = 0;
  double total_ms                     = 0;
};

/// Backend requirements (all calls in this order; each may be asynchronous unless it returns
/// data):
///   void begin_call(CallPlan const&)
///   ScanResult scan()                              synchronizes (r is needed on the host)
///   void copy(PassDecision const&)
///   void commit_targets(PassDecision const&)
///   void rewrite(PassDecision const&)
///   void release_sources(PassDecision const&)
///   PassReport end_pass()                          synchronizes
///   CallReport end_call()                          synchronizes; n-override recomputation
template <class Backend>
DefragStats run_defragmentation(Backend& backend,
                                CallPlan const& plan,
                                PassObserver const& on_pass) {
  DefragStats stats;
  stats.type       = plan.type;
  stats.n          = plan.n;
  stats.k1         = plan.k1;
  stats.variant    = plan.variant;
  stats.source_cap = plan.source_cap;
  backend.begin_call(plan);
  for (bool first = true;; first = false) {
    ScanResult const scan = backend.scan();
    stats.times.scan_ms += scan.ms;
    if (first) stats.candidates_before = scan.candidates;
    PassDecision const d = decide_pass(scan.candidates, plan.n, plan.k1, plan.source_cap);
    if (!d.run) {
      stats.stop             = d.stop;
      stats.candidates_after = scan.candidates;
      break;
    }
    backend.copy(d);
    backend.commit_targets(d);
    backend.rewrite(d);
    backend.release_sources(d);
    PassReport const r = backend.end_pass();

    PassStats pass;
    pass.index              = static_cast<std::uint32_t>(stats.passes.size());
    pass.candidates         = d.candidates;
    pass.sources_allowed    = d.sources_allowed;
    pass.sources            = d.sources;
    pass.objects_moved      = r.objects_moved;
    pass.pointers_scanned   = r.pointers_scanned;
    pass.pointers_rewritten = r.pointers_rewritten;
    pass.roots_scanned      = r.roots_scanned;
    pass.roots_rewritten    = r.roots_rewritten;
    pass.times.scan_ms      = scan.ms;
    pass.times.copy_ms      = r.copy_ms;
    pass.times.rewrite_ms   = r.rewrite_ms;
    pass.times.state_ms     = r.state_ms;
    stats.times.copy_ms += r.copy_ms;
    stats.times.rewrite_ms += r.rewrite_ms;
    stats.times.state_ms += r.state_ms;
    stats.objects_moved += r.objects_moved;
    stats.pointers_scanned += r.pointers_scanned;
    stats.pointers_rewritten += r.pointers_rewritten;
    stats.roots_scanned += r.roots_scanned;
    stats.roots_rewritten += r.roots_rewritten;
    stats.passes.push_back(pass);
    if (on_pass) on_pass(stats.passes.back());
  }
  CallReport const end        = backend.end_call();
  stats.defrag_bits_corrected = end.defrag_bits_corrected;
  stats.total_ms              = end.total_ms;
  stats.object_bytes_moved    = stats.objects_moved * plan.object_bytes;
  stats.forwarding_bytes =
      plan.variant == RewriteVariant::forwarding ? stats.objects_moved * sizeof(std::uint64_t) : 0;
  return stats;
}

}  // namespace heaplab::compact::detail
