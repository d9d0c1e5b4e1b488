// CompactGpu on the GPU heap (label gpu; SKIPPED without a GPU): the exact per-pass differential
// against the model for the three pointer-rewriting variants over the whole case grid
// (n in {1, 2, 3, 5, 7}, k1 in {0, 1, 16}, three heap shapes, forced small caps for the recompute
// variants), the variants' own caps, the one-shot entry point with external roots, candidate
// counts, policies and request validation. Under a CUDA tool (compute-sanitizer sets
// CUDA_INJECTION64_PATH) the grid runs every seventh case on smaller heaps and the two large
// heaps are skipped.
#include "gpu_driver.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>

#include "case_grid.hpp"
#include "compact_test_types.hpp"
#include "differential.hpp"
#include "gpu_test.hpp"
#include "heaplab/compact/compactor.cuh"
#include "heaplab/compact/policy.hpp"

using namespace compact_test;

namespace {

using heaplab::testing::under_cuda_tool;

void run_grid(core::RewriteVariant variant, Observe observe = Observe::every_pass) {
  std::size_t index = 0, passes = 0, capped = 0, fill_passes = 0;
  // Under a CUDA tool: every 7th case (all n, k1 and shapes still occur) on smaller heaps.
  bool const reduced = under_cuda_tool();
  for (CaseParams const& c : case_grid(variant, reduced ? 160 : 384)) {
    if (reduced && index++ % 7 != 0) continue;
    GpuDriver<Types> driver(c.num_blocks, c.defrag_factor, 0);
    compact::DefragStats stats;
    run_differential_case(driver, c, &stats, observe);
    if (::testing::Test::HasFailure()) return;  // one failing case says enough
    EXPECT_EQ(
        stats.pass_loop,
        observe == Observe::every_pass ? compact::PassLoop::host : driver.compactor().pass_loop());
    passes += stats.passes.size();
    capped += cap_bound(stats) ? 1 : 0;
    if (c.order == core::CandidateOrder::by_fill) fill_passes += stats.passes.size();
  }
  if (!under_cuda_tool()) {
    EXPECT_GT(passes, 200u) << "the grid ran too few passes to say much";
    EXPECT_GT(fill_passes, 50u) << "the order by fill ran too few passes to say much";
    if (variant != core::RewriteVariant::forwarding) EXPECT_GT(capped, 10u);
  }
}

CaseParams natural_cap_case(core::RewriteVariant variant, std::uint32_t n, std::uint32_t blocks) {
  CaseParams c;
  c.seed            = mix(base_seed(), 99 + n);
  c.num_blocks      = blocks;
  c.n               = n;
  c.defrag_factor   = n;
  c.variant         = variant;
  c.shape           = Shape::uniform;
  c.type            = kLeaf;
  c.only_type       = kLeaf;
  c.load            = 0.85;
  c.compared_passes = 3;
  return c;
}

/// A populated GPU heap for the API tests (sparse: 92% of the objects freed, so every type has
/// many candidates; heap n = 2).
struct Populated {
  explicit Populated(std::uint64_t seed, std::uint32_t blocks = 320) : driver(blocks, 2, 0) {
    CaseParams c;
    c.seed          = seed;
    c.shape         = Shape::sparse;
    c.defrag_factor = 2;
    std::mt19937_64 rng(seed);
    roots = populate(driver, c, rng);
  }
  GpuDriver<Types> driver;
  RootLocations roots;
};

}  // namespace

TEST(CompactGpu, ForwardingMatchesTheModelAfterEveryPass) {
  HEAPLAB_REQUIRE_GPU();
  run_grid(core::RewriteVariant::forwarding);
}

TEST(CompactGpu, RecomputeGlobalMatchesTheModelAfterEveryPass) {
  HEAPLAB_REQUIRE_GPU();
  run_grid(core::RewriteVariant::recompute_global);
}

TEST(CompactGpu, RecomputeSharedMatchesTheModelAfterEveryPass) {
  HEAPLAB_REQUIRE_GPU();
  run_grid(core::RewriteVariant::recompute_shared);
}

// The device-side pass loop (a CUDA graph; no observer): the same grid, the same final state,
// pointers, roots, per-pass numbers and relocation counts as the model.
// (tools/gpu-tier --sanitize sets HEAPLAB_PASS_LOOP=host: there the same grid runs with the
// host-stepped loop and no observer; docs/compaction.md says why.)
TEST(CompactGpu, TheDeviceLoopMatchesTheModelAtTheEnd) {
  HEAPLAB_REQUIRE_GPU();
  for (auto v : {core::RewriteVariant::forwarding,
                 core::RewriteVariant::recompute_global,
                 core::RewriteVariant::recompute_shared}) {
    SCOPED_TRACE(core::to_string(v));
    run_grid(v, Observe::end_only);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(CompactGpuCaps, RecomputeSharedUsesAtMost4096OverNPlusOneSources) {
  HEAPLAB_REQUIRE_GPU();
  if (under_cuda_tool()) GTEST_SKIP() << "6144-block heap, 38 passes: too slow under a CUDA tool";
  CaseParams const c = natural_cap_case(core::RewriteVariant::recompute_shared, 7, 6144);
  ASSERT_EQ(c.effective_cap(), 512u);
  GpuDriver<Types> driver(c.num_blocks, c.defrag_factor, 0);
  compact::DefragStats stats;
  run_differential_case(driver, c, &stats);
  EXPECT_TRUE(cap_bound(stats)) << "the case did not reach the cap; enlarge the heap";
}

TEST(CompactGpuCaps, RecomputeGlobalUsesAtMost12288Sources) {
  HEAPLAB_REQUIRE_GPU();
  if (under_cuda_tool()) GTEST_SKIP() << "30000-block heap: too slow under a CUDA tool";
  CaseParams const c = natural_cap_case(core::RewriteVariant::recompute_global, 1, 30000);
  ASSERT_EQ(c.effective_cap(), 12288u);
  GpuDriver<Types> driver(c.num_blocks, c.defrag_factor, 0);
  compact::DefragStats stats;
  run_differential_case(driver, c, &stats);
  EXPECT_TRUE(cap_bound(stats)) << "the case did not reach the cap; enlarge the heap";
}

TEST(CompactGpuApi, RejectsBadRequestsWithAClearError) {
  HEAPLAB_REQUIRE_GPU();
  auto heap = soa::Heap<Types>::with_blocks(64);
  compact::Compactor<Types> c(heap);
  auto const rejects = [&](std::uint32_t type, compact::DefragOptions const& o, char const* text) {
    try {
      (void)c.defragment(type, o);
      ADD_FAILURE() << "accepted: " << text;
    } catch (core::precondition_error const& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  rejects(Types::num_types, {}, "is not a type of the heap");
  rejects(kTracked, {}, "is abstract");
  compact::DefragOptions zero;
  zero.n = 0;
  rejects(kLeaf, zero, "must satisfy 1 <= n < 64");
  compact::DefragOptions too_big;
  too_big.n = Types::capacity<Fat>;
  rejects(kFat, too_big, "must satisfy 1 <= n < 14");
  compact::DefragOptions cap0;
  cap0.source_cap = 0;
  rejects(kLeaf, cap0, "source cap must be at least 1");
  EXPECT_THROW(c.add_roots({nullptr, 4, kLeaf}), core::precondition_error);
  std::uint64_t* dummy = nullptr;
  ASSERT_EQ(cudaMalloc(&dummy, 8), cudaSuccess);
  EXPECT_THROW(c.add_roots({dummy, 1, Types::num_types}), core::precondition_error);
  cudaFree(dummy);
}

TEST(CompactGpuApi, AnEmptyTypeRunsNoPass) {
  HEAPLAB_REQUIRE_GPU();
  auto heap                    = soa::Heap<Types>::with_blocks(64);
  compact::DefragStats const s = compact::defragment(heap, kNode);
  EXPECT_TRUE(s.passes.empty());
  EXPECT_EQ(s.candidates_before, 0u);
  EXPECT_EQ(s.stop, compact::DefragStop::k1_reached);
  auto const v = check::check_all(heap.snapshot());
  EXPECT_TRUE(v.empty()) << violations_text(v);
}

TEST(CompactGpuApi, CountCandidatesMatchesTheSnapshotForAnyN) {
  HEAPLAB_REQUIRE_GPU();
  Populated p(11);
  check::HeapSnapshot const s = p.driver.snapshot();
  for (std::uint32_t t : kConcreteTypes) {
    EXPECT_EQ(p.driver.compactor().count_candidates(t), check::count_set(s.defrag.at(t)));
    for (std::uint32_t n : {1u, 3u, 7u})
      EXPECT_EQ(p.driver.compactor().count_candidates(t, n), low_fill_blocks(s, t, n)) << "n=" << n;
  }
}

TEST(CompactGpuApi, TheOneShotEntryPointRewritesRegisteredRoots) {
  HEAPLAB_REQUIRE_GPU();
  // Root arrays of the population are registered with the driver's compactor; the one-shot
  // function gets them as an argument instead.
  Populated p(12);
  check::HeapSnapshot const before = p.driver.snapshot();
  std::vector<std::uint64_t> host;
  for (auto const& r : p.roots)
    host.push_back(
        r ? p.driver.heap().ref().object_pointer(r->block, r->slot, before.blocks[r->block].type)
          : 0);
  DeviceArray<std::uint64_t> roots(host);
  IdGraph const graph_before = id_graph(before, p.roots);
  compact::DefragOptions o;
  o.n = 1;
  compact::DefragStats const s =
      compact::defragment(p.driver.heap(), kNode, o, {{roots.get(), host.size(), kTracked}});
  EXPECT_FALSE(s.passes.empty());
  RootLocations after_roots;
  for (std::uint64_t q : roots.download()) {
    if (q == 0) {
      after_roots.push_back(std::nullopt);
    } else {
      core::SlotRef const at = p.driver.heap().ref().locate(q);
      after_roots.push_back(at);
    }
  }
  // The driver's own root arrays were not passed, so compare the graph without them.
  IdGraph after = id_graph(p.driver.snapshot(), after_roots);
  EXPECT_TRUE(after.objects == graph_before.objects);
  EXPECT_EQ(after.roots, graph_before.roots);
  EXPECT_GT(s.roots_rewritten, 0u);
}

TEST(CompactGpuApi, EveryMIterationsDefragmentsOnIterationsMultipleOfM) {
  HEAPLAB_REQUIRE_GPU();
  Populated p(13);
  compact::AutoDefrag<Types> every3(p.driver.compactor(), kLeaf, compact::DefragPolicy::every(3));
  std::vector<std::uint64_t> ran;
  for (std::uint64_t i = 1; i <= 7; ++i)
    if (every3.end_of_iteration()) ran.push_back(i);
  EXPECT_EQ(ran, (std::vector<std::uint64_t>{3, 6}));
  EXPECT_EQ(every3.clock().iterations(), 7u);
}

TEST(CompactGpuApi, AfterMassiveDeallocationComparesTheScaledThreshold) {
  HEAPLAB_REQUIRE_GPU();
  Populated p(14);
  std::uint32_t const c = p.driver.compactor().count_candidates(kLeaf);
  ASSERT_GT(c, 4u);
  // n = 2: threshold ceil(k2 * 2 / 3). k2 = c gives <= c (triggers); 2c + 3 gives > c.
  compact::AutoDefrag<Types> high(
      p.driver.compactor(), kLeaf, compact::DefragPolicy::after_massive_deallocation(2 * c + 3));
  EXPECT_FALSE(high.end_of_iteration().has_value());
  compact::AutoDefrag<Types> low(
      p.driver.compactor(), kLeaf, compact::DefragPolicy::after_massive_deallocation(c));
  std::optional<compact::DefragStats> const s = low.end_of_iteration();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->candidates_before, c);
  EXPECT_LE(p.driver.compactor().count_candidates(kLeaf), 2u);  // k1 = 0: at most n remain
}

TEST(CompactGpuApi, StatisticsAddUp) {
  HEAPLAB_REQUIRE_GPU();
  for (auto v : {core::RewriteVariant::forwarding, core::RewriteVariant::recompute_shared}) {
    for (auto loop : {compact::PassLoop::device, compact::PassLoop::host}) {
      if (loop == compact::PassLoop::device && std::getenv("HEAPLAB_PASS_LOOP") != nullptr)
        continue;  // HEAPLAB_PASS_LOOP=host (the sanitizer runs; see above)
      SCOPED_TRACE(std::string(core::to_string(v)) + ", " + compact::to_string(loop) + " loop");
      Populated p(15);
      p.driver.compactor().set_pass_loop(loop);
      compact::DefragOptions o;
      o.variant                    = v;
      compact::DefragStats const s = p.driver.defragment(kLeaf, o, {});
      ASSERT_FALSE(s.passes.empty());
      EXPECT_EQ(s.pass_loop, loop);
      std::uint64_t moved = 0;
      compact::PhaseTimes sum;
      for (auto const& pass : s.passes) {
        moved += pass.objects_moved;
        sum += pass.times;
        EXPECT_GT(pass.objects_moved, 0u);
        EXPECT_GE(pass.times.copy_ms, 0.0);
        EXPECT_GE(pass.times.state_ms, 0.0);
        if (loop == compact::PassLoop::device) EXPECT_EQ(pass.times.sum_ms(), 0.0);
      }
      EXPECT_EQ(moved, s.objects_moved);
      EXPECT_EQ(s.object_bytes_moved, s.objects_moved * Types::size_bytes<Leaf>);
      EXPECT_EQ(s.forwarding_bytes,
                v == core::RewriteVariant::forwarding ? s.objects_moved * 8 : 0u);
      EXPECT_GT(s.pointers_rewritten, 0u);
      EXPECT_GT(s.times.rewrite_ms, 0.0);
      double const rounding = 1e-3;  // event times are floats
      EXPECT_GE(s.total_ms + rounding, s.passes_ms + s.times.rewrite_ms);
      EXPECT_GE(s.passes_ms + rounding, sum.copy_ms + sum.state_ms);
      EXPECT_EQ(p.driver.pattern_mismatches(), 0u);
    }
  }
}
