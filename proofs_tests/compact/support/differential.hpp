// The exact per-pass differential of a CompactGpu implementation against the reference model
// (docs/compaction.md "What is checked"), for any heap driver: the GPU heap (gpu_driver.cuh) or
// the CPU emulation of the same kernels (host_driver.cuh).
//
// Driver interface (all synchronous):
//   core::HeapConfig const& config() const
//   void allocate(std::vector<NewObject> const&)        every allocation must succeed
//   check::HeapSnapshot snapshot()                      with payloads
//   void link(std::vector<Link> const&)
//   void destroy(std::vector<std::uint64_t> const& ids)
//   void add_root_array(RootArray const&)
//   std::vector<std::optional<core::SlotRef>> root_locations()   all arrays, in order
//   compact::DefragStats defragment(type, compact::DefragOptions const&, compact::PassObserver
//   const&) std::uint64_t pattern_mismatches()                  objects whose plain fields are not
//                                                       compact_test::pattern_byte(id, ...)
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "heaplab/check/defrag_obligations.hpp"
#include "heaplab/check/diff.hpp"
#include "heaplab/check/dump.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/compact/options.hpp"
#include "heaplab/core/defrag_fill.hpp"
#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/model/heap_model.hpp"
#include "population.hpp"

namespace compact_test {

namespace compact = heaplab::compact;
namespace model   = heaplab::model;

using RootLocations = std::vector<std::optional<core::SlotRef>>;

inline std::string violations_text(std::vector<check::Violation> const& v) {
  std::string text;
  for (std::size_t i = 0; i < v.size() && i < 10; ++i) text += "  " + v[i].to_string() + "\n";
  if (v.size() > 10) text += "  ... " + std::to_string(v.size() - 10) + " more\n";
  return text;
}

inline std::string roots_text(RootLocations const& r) {
  std::string s;
  for (std::size_t i = 0; i < r.size(); ++i)
    s += (i ? " " : "") + (r[i] ? std::to_string(r[i]->block) + ":" + std::to_string(r[i]->slot)
                                : std::string("null"));
  return s;
}

/// HEAPLAB_COMPACT_VERBOSE=1: one line per case (passes, objects moved, pointers rewritten).
inline bool verbose() {
  char const* v = std::getenv("HEAPLAB_COMPACT_VERBOSE");
  return v != nullptr && *v != '\0' && *v != '0';
}

/// Allocated blocks of T with fill <= n/(n+1), counted from the allocation bitmaps.
inline std::uint32_t low_fill_blocks(check::HeapSnapshot const& s,
                                     std::uint32_t type,
                                     std::uint32_t n) {
  return check::count_candidates(s, type, n);
}

/// Builds the random heap of `c` on `heap` and returns the roots' locations.
template <class Driver>
RootLocations populate(Driver& heap, CaseParams const& c, std::mt19937_64& rng) {
  heap.allocate(make_population(heap.config(), rng, c.load, c.only_type));
  Mutation const m = plan_mutation(heap.snapshot(), c.shape, rng);
  heap.link(m.links);
  heap.destroy(m.frees);
  for (RootArray const& r : m.roots) heap.add_root_array(r);
  return heap.root_locations();
}

/// Runs case c on `heap` (freshly created with c.num_blocks blocks and factor c.defrag_factor) and
/// checks: the snapshot after EVERY pass equals the model's after the same pass (bitmaps of
/// every level, states, placements, ids, cookies, pointer values) and so do the roots; pointers
/// and roots are rewritten once per call, after the last pass, so between passes both sides must
/// hold the call-start locations (docs/model.md "One rewrite per call"); the same per-pass
/// numbers (r, B, B', objects moved); the same per-call pointer counts (pointers scanned and
/// rewritten, roots rewritten), stop reason and candidates before/after; then, independently of
/// the model, the id graph is
/// unchanged, every plain field still holds its pattern, the catalog holds, the defragmentation
/// post-conditions and the F bound hold, and the pass count is within the exact worst case.
/// How the implementation is observed: after every pass (an observer: the passes are stepped on
/// the host), or only at the end (no observer: the GPU runs its device-side pass loop; the
/// per-pass numbers are then compared from the call's statistics).
enum class Observe { every_pass, end_only };

template <class Driver>
void run_differential_case(Driver& heap,
                           CaseParams const& c,
                           compact::DefragStats* stats_out = nullptr,
                           Observe observe                 = Observe::every_pass) {
  SCOPED_TRACE(std::string(heap.name()) + " case " + c.describe() +
               " (replay: HEAPLAB_COMPACT_SEED or the seed above)");
  std::mt19937_64 rng(c.seed);
  RootLocations const roots_before = populate(heap, c, rng);
  check::HeapSnapshot const before = heap.snapshot();
  {
    auto const v = check::check_all(before);
    ASSERT_TRUE(v.empty()) << "catalog violated after population:\n" << violations_text(v);
  }
  IdGraph const graph_before = id_graph(before, roots_before);

  // The model's prediction, pass by pass.
  model::HeapModel predicted = model::HeapModel::from_snapshot(before, roots_before);
  std::vector<check::HeapSnapshot> model_passes;
  std::vector<RootLocations> model_roots;
  // One request for both sides (core::DefragOptions).
  compact::DefragOptions options;
  options.n                          = c.n;
  options.k1                         = c.k1;
  options.variant                    = c.variant;
  options.order                      = c.order;
  options.source_cap                 = c.forced_cap;
  options.count_relocations          = true;  // Fig. 10 from the implementation (the model always)
  model::DefragResult const expected = predicted.defrag(
      c.type, options, [&](model::HeapModel const& m, model::DefragPassStats const&) {
        if (model_passes.size() >= c.compared_passes) return;
        model_passes.push_back(m.snapshot());
        model_roots.push_back(m.root_locations());
      });
  EXPECT_EQ(expected.source_cap, c.effective_cap());

  // The implementation, compared after every pass.
  std::size_t pass   = 0;
  bool diverged      = false;
  auto const on_pass = [&](compact::PassStats const& p) {
    std::size_t const i = pass++;
    if (diverged || i >= c.compared_passes) return;
    if (i >= model_passes.size()) {
      ADD_FAILURE() << "pass " << i << " ran, but the model stopped after "
                    << expected.passes.size();
      diverged = true;
      return;
    }
    check::SnapshotDiff const d     = check::diff(model_passes[i], heap.snapshot());
    RootLocations const roots       = heap.root_locations();
    model::DefragPassStats const& e = expected.passes[i];
    bool const same_numbers         = p.candidates == e.candidates &&
                              p.sources_allowed == e.sources_allowed && p.sources == e.sources &&
                              p.objects_moved == e.objects_moved;
    if (!d.empty() || roots != model_roots[i] || !same_numbers) {
      diverged = true;
      ADD_FAILURE() << "pass " << i << " differs from the model:\n"
                    << d.to_string() << "roots expected: " << roots_text(model_roots[i])
                    << "\nroots actual:   " << roots_text(roots)
                    << "\nnumbers (expected/actual): r " << e.candidates << "/" << p.candidates
                    << ", B " << e.sources_allowed << "/" << p.sources_allowed << ", B' "
                    << e.sources << "/" << p.sources << ", moved " << e.objects_moved << "/"
                    << p.objects_moved;
    }
  };
  compact::DefragStats const stats = heap.defragment(
      c.type, options, observe == Observe::every_pass ? compact::PassObserver(on_pass) : nullptr);
  if (stats_out != nullptr) *stats_out = stats;
  if (observe == Observe::end_only)
    for (std::size_t i = 0; i < stats.passes.size() && i < expected.passes.size(); ++i) {
      compact::PassStats const& p     = stats.passes[i];
      model::DefragPassStats const& e = expected.passes[i];
      EXPECT_TRUE(p.candidates == e.candidates && p.sources_allowed == e.sources_allowed &&
                  p.sources == e.sources && p.objects_moved == e.objects_moved)
          << "pass " << i << " differs from the model: r " << e.candidates << "/" << p.candidates
          << ", B " << e.sources_allowed << "/" << p.sources_allowed << ", B' " << e.sources << "/"
          << p.sources << ", moved " << e.objects_moved << "/" << p.objects_moved;
    }
  if (verbose()) {
    std::printf(
        "[compact] %s: %s: r %u -> %u, %zu passes (%s), %llu moved, %llu pointers and "
        "%llu roots rewritten\n",
        heap.name(),
        c.describe().c_str(),
        stats.candidates_before,
        stats.candidates_after,
        stats.passes.size(),
        heaplab::core::to_string(stats.stop),
        static_cast<unsigned long long>(stats.objects_moved),
        static_cast<unsigned long long>(stats.pointers_rewritten),
        static_cast<unsigned long long>(stats.roots_rewritten));
  }
  ASSERT_FALSE(diverged);
  EXPECT_EQ(stats.passes.size(), expected.passes.size());
  EXPECT_EQ(static_cast<int>(stats.stop), static_cast<int>(expected.stop));
  EXPECT_EQ(stats.candidates_before, expected.candidates_before);
  EXPECT_EQ(stats.candidates_after, expected.candidates_after);
  // The call's one pointer rewrite (after the last pass): the type-limited scan, and the slots
  // and roots whose object moved at least once in the call.
  EXPECT_EQ(stats.pointers_scanned, expected.pointers_scanned);
  EXPECT_EQ(stats.pointers_rewritten, expected.pointers_rewritten);
  EXPECT_EQ(stats.roots_rewritten, expected.roots_rewritten);
  // CompactGpu Fig. 10: how many times each object moved, counted by following its chain.
  EXPECT_EQ(stats.objects_by_relocation_count, expected.objects_by_relocation_count);
  EXPECT_EQ(stats.defrag_bits_corrected, 0u) << "a pass left defrag[T] out of step with the fills";
  EXPECT_EQ(stats.source_cap, c.effective_cap());

  check::HeapSnapshot const after = heap.snapshot();
  RootLocations const roots_after = heap.root_locations();
  check::SnapshotDiff const d     = check::diff(predicted.snapshot(), after);
  EXPECT_TRUE(d.empty()) << "final state differs from the model:\n" << d.to_string();
  EXPECT_EQ(roots_after, predicted.root_locations())
      << "final roots differ from the model:\nroots expected: "
      << roots_text(predicted.root_locations()) << "\nroots actual:   " << roots_text(roots_after);

  // Independent of the model.
  EXPECT_TRUE(id_graph(after, roots_after) == graph_before)
      << "the id graph (ids, types, cookies, pointer targets by id, roots) changed";
  EXPECT_EQ(heap.pattern_mismatches(), 0u) << "objects whose plain fields were not moved intact";
  {
    auto const v = check::check_all(after);
    EXPECT_TRUE(v.empty()) << "catalog violated after defragmentation:\n" << violations_text(v);
  }
  // CompactGpu's obligations (post-fill, post-candidates with the n-override rule, the pass
  // bound with the variant's cap): the one implementation the model and the runners use too.
  auto const passes = static_cast<std::uint32_t>(stats.passes.size());
  {
    check::DefragCall call;
    call.type              = c.type;
    call.n                 = c.n;
    call.k1                = c.k1;
    call.source_cap        = c.effective_cap();
    call.candidates_before = stats.candidates_before;
    call.passes            = passes;
    auto const v           = check::check_defrag_obligations(after, call);
    EXPECT_TRUE(v.empty()) << violations_text(v);
  }
  // F bound (sec. 3): a block that is not a candidate has free level < 1/(n+1), so F(T) is at
  // most (left + (blocks - left) / (n + 1)) / blocks, and < 1/(n+1) when no candidate is left.
  std::uint32_t const left   = low_fill_blocks(after, c.type, c.n);
  std::uint32_t const blocks = check::count_set(after.allocated.at(c.type));
  if (blocks > 0) {
    double const bound = (left + (blocks - left) / (c.n + 1.0)) / blocks;
    EXPECT_LE(check::fragmentation(after, c.type), bound + 1e-12);
  }
  // Every pass with a cap below B used exactly the cap.
  for (compact::PassStats const& p : stats.passes)
    EXPECT_EQ(p.sources, std::min(p.sources_allowed, c.effective_cap()));
}

/// Whether a pass of the call was limited by the cap (B' < B): the cap was exercised.
inline bool cap_bound(compact::DefragStats const& s) {
  for (compact::PassStats const& p : s.passes)
    if (p.sources < p.sources_allowed) return true;
  return false;
}

}  // namespace compact_test
