// CompactGpu's defragmentation policies in an app's loop (sec. 3.7; docs/apps.md "Options every
// app has"): a DefragLoop holds the Compactor and one AutoDefrag per dynamic type the app names;
// the app calls end_of_iteration() after each iteration, at quiescence (stop-the-world, sec. 3),
// and registers the device arrays that hold pointers into the heap (its roots) with
// compactor().add_roots. nvcc only.
#pragma once

#include "heaplab/compact/compactor.cuh"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/heap_flags.hpp"
#include "common/profile.hpp"

namespace heaplab::apps {

/// The soa::HeapOptions the flags ask for (the app's defaults for everything else).
inline soa::HeapOptions heap_options(HeapFlags const& flags) {
  soa::HeapOptions o;
  o.defrag_factor = flags.defrag_n;
  o.k1            = flags.defrag_k1;
  if (flags.active_lookups != 0) o.active_lookups = flags.active_lookups;
  o.coalesce_frees    = flags.coalesce_frees;
  o.coalesce_requests = flags.coalesce_requests;
  o.rotate_bitmaps    = flags.rotate_bitmaps;
  o.block_hints       = flags.block_hints;
  if (flags.claim_wait_rounds) o.claim_wait_rounds = *flags.claim_wait_rounds;
  return o;
}

template <class Types>
class DefragLoop {
 public:
  /// Defragments the concrete types `types` (runtime type ids of Types) with the flags' policy;
  /// without a policy end_of_iteration() does nothing. The heap must outlive the loop.
  DefragLoop(soa::Heap<Types>& heap, HeapFlags const& flags, std::vector<std::uint32_t> types)
      : compactor_(heap) {
    auto const policy = defrag_policy(flags);
    if (!policy) return;
    compact::DefragOptions options;
    options.variant = rewrite_variant(flags.rewrite);
    options.order   = defrag_order(flags.defrag_order);
    for (auto const t : types) autos_.emplace_back(compactor_, t, *policy, options);
  }

  [[nodiscard]] bool enabled() const { return !autos_.empty(); }
  [[nodiscard]] compact::Compactor<Types>& compactor() { return compactor_; }

  /// Ends one iteration: each type whose policy is due is defragmented (types in the order
  /// given). Adds the calls' time and moves to `cost`; returns whether any call ran.
  bool end_of_iteration(IterationCost& cost) {
    bool ran = false;
    for (auto& a : autos_)
      if (auto const stats = a.end_of_iteration()) {
        ran = true;
        add(cost, *stats);
        add(total_, *stats);
      }
    return ran;
  }

  /// One line: "C calls, P passes, M objects moved, T ms (rewrite R ms)".
  [[nodiscard]] std::string summary() const {
    char line[200];
    std::snprintf(line,
                  sizeof line,
                  "%u calls, %u passes, %llu objects moved, %.3f ms (rewrite %.3f ms)",
                  total_.defrag_calls,
                  total_.defrag_passes,
                  static_cast<unsigned long long>(total_.objects_moved),
                  total_.defrag_ms,
                  total_.rewrite_ms);
    return line;
  }

  /// The sums over every iteration so far (app_ms unused).
  [[nodiscard]] IterationCost const& total() const { return total_; }

 private:
  static void add(IterationCost& c, compact::DefragStats const& s) {
    c.defrag_ms += s.total_ms;
    c.defrag_calls += 1;
    c.defrag_passes += static_cast<std::uint32_t>(s.passes.size());
    c.objects_moved += s.objects_moved;
    c.rewrite_ms += s.times.rewrite_ms;
  }

  compact::Compactor<Types> compactor_;
  std::vector<compact::AutoDefrag<Types>> autos_;
  IterationCost total_;
};

}  // namespace heaplab::apps
