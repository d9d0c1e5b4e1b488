// The pass loop of a CompactGpu defragmentation call (sec. 3.1, 3.6), written once over a
// pass driver that runs the steps: the GPU pass driver (compactor.cuh) launches kernels, the CPU
// emulation (proofs_tests/compact/support) runs the same per-thread bodies sequentially, and a
// fake pass driver tests the loop alone. Plain C++17, host only.
//
// One pass, in this order (each step sees the completed effects of the previous one):
//   scan             R := the candidates of the call, ascending; r = |R|        (sec. 3.2)
//   copy             move objects, then forwarding pointers or records          (Alg. 1, 2; 3.8)
//   block states     per source, by one thread: its targets' allocation bitmaps gain the
//                    moved slots, active[T], defrag[T] (heap's n) and the call's candidate
//                    bits follow; then the source becomes free and enters the call's source
//                    bitmap                                                      (sec. 3.5)
// and after the last pass, once per call:
//   rewrite          pointers into the call's sources, followed through the passes, in the
//                    type-limited heap scan and the roots                      (Alg. 3, sec. 3.4)
// Beyond the paper, which rewrites in every pass: one scan per call (docs/compaction.md "One
// rewrite per call"). The passes themselves either run on the host, one synchronization per
// pass (the observer sees every pass at quiescence), or on the device without any host round
// trip (the GPU pass driver's device-side loop: a CUDA graph whose while node runs scan, decision,
// copy, commit and release until the decision is to stop). Both decide with decide_pass.
#pragma once

#include <cstdint>
#include <vector>

#include "heaplab/compact/detail/call_plan.hpp"
#include "heaplab/compact/options.hpp"
#include "heaplab/compact/pass_plan.hpp"

namespace heaplab::compact::detail {

struct ScanResult {
  std::uint32_t candidates = 0;
  double ms                = 0;
};

/// Per pass, from the pass driver after the pass completed (host-stepped loop).
struct PassReport {
  std::uint64_t objects_moved = 0;
  double copy_ms              = 0;
  double state_ms             = 0;
};

/// What the device-side loop reports at the end of the call.
struct LoopReport {
  std::vector<PassStats> passes;  // r, B, B', objects moved per pass (no phase times)
  DefragStop stop                 = DefragStop::k1_reached;
  std::uint32_t candidates_before = 0;
  std::uint32_t candidates_after  = 0;
};

struct CallReport {
  std::uint64_t pointers_scanned      = 0;
  std::uint64_t pointers_rewritten    = 0;
  std::uint64_t roots_scanned         = 0;
  std::uint64_t roots_rewritten       = 0;
  std::uint64_t defrag_bits_corrected = 0;
  std::vector<std::uint64_t> objects_by_relocation_count;  // when the plan asks for it
  double passes_ms  = 0;
  double rewrite_ms = 0;
  double total_ms   = 0;
  LoopReport loop;  // the device-side loop only
};

/// The host-stepped passes of run_defragmentation: one synchronization per pass; on_pass runs
/// after every pass at quiescence.
template <class PassDriver>
void run_host_passes(PassDriver& driver,
                     CallPlan const& plan,
                     PassObserver const& on_pass,
                     DefragStats& stats) {
  for (bool first = true;; first = false) {
    ScanResult const scan = driver.scan();
    stats.times.scan_ms += scan.ms;
    if (first) stats.candidates_before = scan.candidates;
    PassDecision const d = decide_pass(scan.candidates, plan.n, plan.k1, plan.source_cap);
    if (!d.run) {
      stats.stop             = d.stop;
      stats.candidates_after = scan.candidates;
      return;
    }
    driver.copy(d);
    driver.update_block_states(d);
    PassReport const r = driver.end_pass();

    PassStats pass;
    pass.index           = static_cast<std::uint32_t>(stats.passes.size());
    pass.candidates      = d.candidates;
    pass.sources_allowed = d.sources_allowed;
    pass.sources         = d.sources;
    pass.objects_moved   = r.objects_moved;
    pass.times.scan_ms   = scan.ms;
    pass.times.copy_ms   = r.copy_ms;
    pass.times.state_ms  = r.state_ms;
    stats.times.copy_ms += r.copy_ms;
    stats.times.state_ms += r.state_ms;
    stats.objects_moved += r.objects_moved;
    stats.passes.push_back(pass);
    if (on_pass) on_pass(stats.passes.back());
  }
}

/// PassDriver requirements (all calls in this order; each may be asynchronous unless it returns
/// data):
///   void begin_call(CallPlan const&)
///   host-stepped passes, repeated:
///     ScanResult scan()                            synchronizes (r is needed on the host)
///     void copy(PassDecision const&)
///     void update_block_states(PassDecision const&)
///     PassReport end_pass()                        synchronizes
///   or, if PassDriver::has_device_loop and device_loop() (no observer):
///     double prepare_device_loop(CallPlan const&)  before begin_call: host setup, its ms
///     void launch_passes()                         all passes, no synchronization
///   void rewrite()                                 once
///   CallReport end_call()                          synchronizes; n-override recomputation
template <class PassDriver>
DefragStats run_defragmentation(PassDriver& driver,
                                CallPlan const& plan,
                                PassObserver const& on_pass) {
  DefragStats stats;
  stats.type       = plan.type;
  stats.n          = plan.n;
  stats.k1         = plan.k1;
  stats.variant    = plan.variant;
  stats.source_cap = plan.source_cap;
  bool on_device   = false;
  if constexpr (PassDriver::has_device_loop) {
    on_device = !on_pass && driver.device_loop();
    if (on_device) stats.setup_ms = driver.prepare_device_loop(plan);
  }
  driver.begin_call(plan);
  if (on_device) {
    if constexpr (PassDriver::has_device_loop) driver.launch_passes();
  } else {
    run_host_passes(driver, plan, on_pass, stats);
  }
  driver.rewrite();
  CallReport end = driver.end_call();
  if (on_device) {
    stats.passes            = std::move(end.loop.passes);
    stats.stop              = end.loop.stop;
    stats.candidates_before = end.loop.candidates_before;
    stats.candidates_after  = end.loop.candidates_after;
    for (PassStats const& p : stats.passes) stats.objects_moved += p.objects_moved;
  }
  stats.pass_loop                   = on_device ? PassLoop::device : PassLoop::host;
  stats.pointers_scanned            = end.pointers_scanned;
  stats.pointers_rewritten          = end.pointers_rewritten;
  stats.roots_scanned               = end.roots_scanned;
  stats.roots_rewritten             = end.roots_rewritten;
  stats.defrag_bits_corrected       = end.defrag_bits_corrected;
  stats.objects_by_relocation_count = std::move(end.objects_by_relocation_count);
  stats.times.rewrite_ms            = end.rewrite_ms;
  stats.passes_ms                   = end.passes_ms;
  stats.total_ms                    = end.total_ms;
  stats.object_bytes_moved          = stats.objects_moved * plan.object_bytes;
  stats.forwarding_bytes =
      plan.variant == RewriteVariant::forwarding ? stats.objects_moved * sizeof(std::uint64_t) : 0;
  return stats;
}

}  // namespace heaplab::compact::detail
