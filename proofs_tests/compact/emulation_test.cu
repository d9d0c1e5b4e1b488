// CompactGpu's kernels emulated on the CPU (support/host_driver.cuh) against the model, pass by
// pass: the whole differential grid of the GPU tier for every variant, the n-override rule, the
// source caps, and tests that the harness catches broken implementations. Label cpu; nvcc
// builds it (the heap ref is a CUDA header), no GPU is needed.
#include "host_driver.cuh"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <string>

#include "case_grid.hpp"
#include "compact_test_types.hpp"
#include "differential.hpp"

using namespace compact_test;

namespace {

void run_grid(core::RewriteVariant variant) {
  std::size_t passes = 0, capped = 0, fill_passes = 0;
  for (CaseParams const& c : case_grid(variant, 320)) {
    HostDriver<Types> driver(c.num_blocks, c.defrag_factor, 0);
    compact::DefragStats stats;
    run_differential_case(driver, c, &stats);
    if (::testing::Test::HasFailure()) return;  // one failing case says enough
    passes += stats.passes.size();
    capped += cap_bound(stats) ? 1 : 0;
    if (c.order == core::CandidateOrder::by_fill) fill_passes += stats.passes.size();
  }
  EXPECT_GT(passes, 200u) << "the grid ran too few passes to say much";
  EXPECT_GT(fill_passes, 50u) << "the order by fill ran too few passes to say much";
  if (variant != core::RewriteVariant::forwarding)
    EXPECT_GT(capped, 10u) << "forced caps never bound";
}

}  // namespace

TEST(CompactEmulation, ForwardingMatchesTheModelAfterEveryPass) {
  run_grid(core::RewriteVariant::forwarding);
}
TEST(CompactEmulation, RecomputeGlobalMatchesTheModelAfterEveryPass) {
  run_grid(core::RewriteVariant::recompute_global);
}
TEST(CompactEmulation, RecomputeSharedMatchesTheModelAfterEveryPass) {
  run_grid(core::RewriteVariant::recompute_shared);
}

// ------------------------------------------------------------------ the harness can fail

namespace {

/// Runs case c with a planted fault and returns the failure messages it produced.
std::vector<std::string> failures_with(Fault fault, CaseParams const& c) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    HostDriver<Types> driver(c.num_blocks, c.defrag_factor, 0, fault);
    run_differential_case(driver, c);
  }
  std::vector<std::string> messages;
  for (int i = 0; i < results.size(); ++i)
    messages.emplace_back(results.GetTestPartResult(i).message());
  return messages;
}

bool any_contains(std::vector<std::string> const& messages, std::string const& text) {
  for (auto const& m : messages)
    if (m.find(text) != std::string::npos) return true;
  return false;
}

CaseParams node_case(core::RewriteVariant variant) {
  CaseParams c;
  c.seed          = 7;
  c.num_blocks    = 256;
  c.n             = 2;
  c.defrag_factor = 2;
  c.k1            = 0;
  c.variant       = variant;
  c.shape         = Shape::uniform;
  c.type          = kNode;  // Node points to Node: the self-holder scan matters
  return c;
}

}  // namespace

TEST(CompactEmulationHarness, TheCleanCaseUsedBelowPasses) {
  EXPECT_TRUE(failures_with(Fault::none, node_case(core::RewriteVariant::forwarding)).empty());
}

TEST(CompactEmulationHarness, CatchesStaleExternalRoots) {
  auto const f = failures_with(Fault::skip_roots, node_case(core::RewriteVariant::forwarding));
  EXPECT_TRUE(any_contains(f, "final roots differ from the model")) << f.size() << " failures";
  EXPECT_TRUE(any_contains(f, "roots expected"));
}

TEST(CompactEmulationHarness, CatchesMissingForwardingPointers) {
  auto const f = failures_with(Fault::skip_forwarding, node_case(core::RewriteVariant::forwarding));
  EXPECT_TRUE(any_contains(f, "differs from the model")) << f.size() << " failures";
}

TEST(CompactEmulationHarness, CatchesAnUnscannedSelfHolder) {
  for (auto v : {core::RewriteVariant::forwarding, core::RewriteVariant::recompute_shared}) {
    auto const f = failures_with(Fault::skip_self_holder, node_case(v));
    EXPECT_TRUE(any_contains(f, "differs from the model")) << core::to_string(v);
  }
}

TEST(CompactEmulationHarness, CatchesARewriteThatFollowsOneMoveOnly) {
  for (auto v : {core::RewriteVariant::forwarding, core::RewriteVariant::recompute_global}) {
    auto const f = failures_with(Fault::single_hop, node_case(v));
    EXPECT_TRUE(any_contains(f, "differs from the model")) << core::to_string(v);
  }
}

// The order by fill (core::CandidateOrder::by_fill) against the model's stable sort: a uniform
// heap has many blocks of equal fill, so a sort that breaks ties another way picks other sources.
TEST(CompactEmulationHarness, CatchesAnUnstableFillOrder) {
  CaseParams c = node_case(core::RewriteVariant::forwarding);
  c.order      = core::CandidateOrder::by_fill;
  EXPECT_TRUE(failures_with(Fault::none, c).empty());
  auto const f = failures_with(Fault::unstable_fill_order, c);
  EXPECT_TRUE(any_contains(f, "differs from the model")) << f.size() << " failures";
}

// ------------------------------------------------------------------ the variants' own caps

namespace {

/// A heap of Leafs only, 60% of them freed: nearly every Leaf block is a candidate, so the first
/// pass could use more sources than the variant's records allow and its own cap binds.
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

}  // namespace

TEST(CompactEmulationCaps, RecomputeSharedUsesAtMost4096OverNPlusOneSources) {
  CaseParams const c = natural_cap_case(core::RewriteVariant::recompute_shared, 7, 6144);
  ASSERT_EQ(c.effective_cap(), 512u);
  HostDriver<Types> driver(c.num_blocks, c.defrag_factor, 0);
  compact::DefragStats stats;
  run_differential_case(driver, c, &stats);
  EXPECT_TRUE(cap_bound(stats)) << "the case did not reach the cap; enlarge the heap";
}

TEST(CompactEmulationCaps, RecomputeGlobalUsesAtMost12288Sources) {
  CaseParams const c = natural_cap_case(core::RewriteVariant::recompute_global, 1, 30000);
  ASSERT_EQ(c.effective_cap(), 12288u);
  HostDriver<Types> driver(c.num_blocks, c.defrag_factor, 0);
  compact::DefragStats stats;
  run_differential_case(driver, c, &stats);
  EXPECT_TRUE(cap_bound(stats)) << "the case did not reach the cap; enlarge the heap";
}
