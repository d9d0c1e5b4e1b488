// Fragmentation, defragmentation post-conditions and the pass bound against hand-worked numbers.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "heaplab/check/defrag_obligations.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/expects.hpp"
#include "test_heap.hpp"

namespace check = heaplab::check;
namespace core  = heaplab::core;
using namespace heaplab::check::testing;

namespace {
std::set<std::string> names_of(std::vector<check::Violation> const& vs) {
  std::set<std::string> out;
  for (auto const& v : vs) out.insert(v.invariant);
  return out;
}
}  // namespace

// ---------------------------------------------------------------- fragmentation

TEST(Fragmentation, HandWorkedOnTheTestHeap) {
  // Allocated blocks and free levels (free slots / capacity):
  //   Fish 0: 61/64, Fish 1: 0/64, Fish 2: 24/64, Shark 3: 0/32, Cell 4: 32/42, Shark 65: 30/32.
  auto const s = valid_snapshot(false);
  // Fish: (61/64 + 0 + 24/64) / 3 = 85/192.
  EXPECT_DOUBLE_EQ(check::fragmentation(s, kFish), 85.0 / 192.0);
  // Shark: (0 + 30/32) / 2 = 15/32.
  EXPECT_DOUBLE_EQ(check::fragmentation(s, kShark), 15.0 / 32.0);
  // All: (61/64 + 24/64 + 32/42 + 30/32) / 6 = (145/64 + 16/21) / 6 = (4069/1344) / 6.
  EXPECT_DOUBLE_EQ(check::fragmentation(s, std::nullopt), 4069.0 / 8064.0);
  // Slot-weighted (DynaSOAr sec. 6.3): (61 + 24 + 32 + 30) / (3*64 + 2*32 + 42) = 147/298.
  EXPECT_DOUBLE_EQ(check::slot_weighted_fragmentation(s, std::nullopt), 147.0 / 298.0);
  // One capacity: both definitions agree. Shark: 30 / 64.
  EXPECT_DOUBLE_EQ(check::slot_weighted_fragmentation(s, kShark), 15.0 / 32.0);
  EXPECT_DOUBLE_EQ(check::slot_weighted_fragmentation(s, kFish), 85.0 / 192.0);
}

TEST(Fragmentation, EmptyHeapIsZeroAndAbstractTypesAreRejected) {
  auto const s = check::make_empty_snapshot(test_config(), false);
  EXPECT_EQ(check::fragmentation(s, std::nullopt), 0.0);
  EXPECT_EQ(check::slot_weighted_fragmentation(s, kCell), 0.0);
  EXPECT_THROW(check::fragmentation(s, kAgent), core::precondition_error);
  EXPECT_THROW(check::fragmentation(s, 9), core::precondition_error);
}

// ---------------------------------------------------------------- post-conditions

TEST(DefragPost, HoldOnTheTestHeap) {
  // n = 1: Fish candidates by fill are block 0 only (3*2 <= 64; 40*2 > 64): 1 <= max(0, 1).
  auto const s = valid_snapshot(false);
  EXPECT_TRUE(check::check_defrag_postconditions(s, kFish, 1, 0).empty());
  EXPECT_TRUE(check::check_defrag_postconditions(s, kCell, 1, 0).empty());
}

TEST(DefragPost, NonCandidateWithLowFill) {
  auto s = valid_snapshot(false);
  check::clear_bit(s.defrag[kFish], 0);  // 3/64 but no longer marked as a candidate
  auto const vs = check::check_defrag_postconditions(s, kFish, 1, 0);
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].invariant, "defrag-post-fill");
  EXPECT_EQ(vs[0].block, 0);
  EXPECT_EQ(vs[0].type, kFish);
}

TEST(DefragPost, TooManyCandidatesLeft) {
  auto s = valid_snapshot(false);
  check::make_block_allocated(s, 7, kFish, 1);
  check::make_block_allocated(s, 8, kFish, 1);
  // Candidates 0, 7, 8: 3 > max(k1 = 0, n = 1) = 1; also > max(2, 1); not > max(3, 1).
  auto vs = check::check_defrag_postconditions(s, kFish, 1, 0);
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].invariant, "defrag-post-candidates");
  EXPECT_EQ(check::check_defrag_postconditions(s, kFish, 1, 2).size(), 1u);
  EXPECT_TRUE(check::check_defrag_postconditions(s, kFish, 1, 3).empty());
  // n = 3 allows 3 leftovers; but with n = 3 block 2 (40*4 <= 3*64) is a low-fill block whose
  // defrag bit (maintained with the config's n = 1) is clear: 4 candidates and one unmarked.
  vs = check::check_defrag_postconditions(s, kFish, 3, 0);
  EXPECT_EQ(names_of(vs), (std::set<std::string>{"defrag-post-fill", "defrag-post-candidates"}));
}

// ---------------------------------------------------------------- pass bound

TEST(PassBound, HandWorkedCases) {
  // n = 1, d = 8, k1 = 0: 8 -> 4 -> 2 -> 1, then B = floor(1/2) = 0: 3 passes.
  EXPECT_EQ(check::worst_case_passes(8, 1, 0), 3u);
  // n = 1, d = 1000: 1000, 500, 250, 125, 63, 32, 16, 8, 4, 2, 1: 10 passes.
  EXPECT_EQ(check::worst_case_passes(1000, 1, 0), 10u);
  // n = 1, d = 5, k1 = 2: 5 -> 3 -> 2 <= k1: 2 passes.
  EXPECT_EQ(check::worst_case_passes(5, 1, 2), 2u);
  // n = 2, d = 10, k1 = 2: 10 -> 7 -> 5 -> 4 -> 3 -> 2: 5 passes.
  EXPECT_EQ(check::worst_case_passes(10, 2, 2), 5u);
  // n = 3, d = 7, k1 = 1: 7 -> 6 -> 5 -> 4 -> 3, then B = floor(3/4) = 0: 4 passes.
  EXPECT_EQ(check::worst_case_passes(7, 3, 1), 4u);
  // n = 31, d = 64, k1 = 0: 64 -> 62 (B = 2), then B = 1 from 62 down to 31: 1 + 31 passes.
  EXPECT_EQ(check::worst_case_passes(64, 31, 0), 32u);
  // Nothing to do.
  EXPECT_EQ(check::worst_case_passes(0, 1, 0), 0u);
  EXPECT_EQ(check::worst_case_passes(1, 1, 0), 0u);  // B = 0
  EXPECT_EQ(check::worst_case_passes(4, 1, 4), 0u);  // r <= k1
  EXPECT_EQ(check::worst_case_passes(3, 3, 0), 0u);  // r <= n
  EXPECT_THROW(check::worst_case_passes(3, 0, 0), core::precondition_error);
}

TEST(PassBound, PaperBoundComparison) {
  EXPECT_DOUBLE_EQ(check::paper_pass_bound(8, 1, 0), 3.0);  // log_2 8
  EXPECT_DOUBLE_EQ(check::paper_pass_bound(8, 1, 2), 2.0);  // log_2 (8/2)
  EXPECT_EQ(check::paper_pass_bound(2, 1, 2), 0.0);
  // The floor in B = floor(r/(n+1)) breaks the paper's real-valued bound: n = 2, k1 = 2, d = 10
  // takes 5 passes in the worst case but log_1.5(5) = 3.97.
  EXPECT_LT(check::paper_pass_bound(10, 2, 2), 4.0);
  EXPECT_GT(check::worst_case_passes(10, 2, 2), check::paper_pass_bound(10, 2, 2));
}

TEST(PassBound, CheckPassBound) {
  EXPECT_TRUE(check::check_pass_bound(5, 10, 2, 2).empty());
  EXPECT_TRUE(check::check_pass_bound(0, 10, 2, 2).empty());
  auto const vs = check::check_pass_bound(6, 10, 2, 2);
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].invariant, "defrag-pass-bound");
}

TEST(PassBound, TheSourceCapOfTheRecomputeVariantsRaisesTheBound) {
  // One definition (core::worst_case_passes_with_cap); check::worst_case_passes is its uncapped
  // case. Recompute-Shared, n = 1: 2048 sources per pass (CompactGpu sec. 3.8).
  std::uint32_t const cap = core::sources_per_pass(core::RewriteVariant::recompute_shared, 1);
  ASSERT_EQ(cap, 2048u);
  for (std::uint32_t d : {0u, 1u, 100u, 4097u, 6144u, 6145u, 100000u})
    EXPECT_EQ(check::worst_case_passes(d, 1, 0), core::worst_case_passes_with_cap(d, 1, 0));
  // Up to d = 6144 the cap never binds in the worst case; from 6145 on it costs a pass:
  // 6145 -> 4097 -> 2049 -> ... (14) instead of 6145 -> 3073 -> ... (13).
  EXPECT_EQ(core::worst_case_passes_with_cap(6144, 1, 0, cap), 13u);
  EXPECT_EQ(core::worst_case_passes_with_cap(6145, 1, 0), 13u);
  EXPECT_EQ(core::worst_case_passes_with_cap(6145, 1, 0, cap), 14u);
  // check_pass_bound takes the cap: 14 passes are legal only with it.
  EXPECT_FALSE(check::check_pass_bound(14, 6145, 1, 0).empty());
  EXPECT_TRUE(check::check_pass_bound(14, 6145, 1, 0, cap).empty());
  auto const vs = check::check_pass_bound(15, 6145, 1, 0, cap);
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].invariant, "defrag-pass-bound");
  EXPECT_NE(vs[0].message.find("2048 sources per pass"), std::string::npos) << vs[0].message;
}

TEST(DefragObligations, OneCallChecksPostConditionsWithTheOverrideRuleAndTheCappedBound) {
  auto const s = valid_snapshot(false);  // config n = 1
  check::DefragCall call;
  call.type = kFish;
  call.n    = 1;
  EXPECT_TRUE(check::check_defrag_obligations(s, call).empty());
  // n = 3 (an override): candidates by fill are Fish 0 (3/64) and 2 (40/64 <= 3/4): 2 <= 3.
  call.n = 3;
  EXPECT_EQ(check::count_candidates(s, kFish, 3), 2u);
  EXPECT_TRUE(check::check_defrag_obligations(s, call).empty())
      << "defrag[T] follows the config's n: post-fill is not checked with another n";
  // The same with n = 1 but k1 = 0 and a too low limit: n = 1 allows one (max(k1, n) = 1).
  call.n = 1;
  EXPECT_EQ(check::count_candidates(s, kFish, 1), 1u);
  // Pass bound with the cap.
  call.candidates_before = 6145;
  call.passes            = 14;
  EXPECT_EQ(names_of(check::check_defrag_obligations(s, call)),
            (std::set<std::string>{"defrag-pass-bound"}));
  call.source_cap = 2048;
  EXPECT_TRUE(check::check_defrag_obligations(s, call).empty());
}

// The recurrence claims to be the exact worst case. Check it against an exhaustive adversary
// that, in each pass, removes the B sources plus any number e of extra candidates (targets that
// lose candidacy: at most n per source, and at most all remaining), maximising the pass count.
namespace {
std::uint32_t adversary_passes(std::uint32_t d, std::uint32_t n, std::uint32_t k1) {
  std::vector<std::uint32_t> best(d + 1, 0);
  for (std::uint32_t r = 0; r <= d; ++r) {
    std::uint32_t const b = r / (n + 1);
    if (r <= k1 || b == 0) continue;
    std::uint32_t most = 0;
    for (std::uint32_t e = 0; e <= std::min(n * b, r - b); ++e)
      most = std::max(most, best[r - b - e]);
    best[r] = 1 + most;
  }
  return best[d];
}
}  // namespace

RC_GTEST_PROP(PassBound, RecurrenceIsTheExhaustiveWorstCase, ()) {
  auto const d  = *rc::gen::inRange<std::uint32_t>(0, 400);
  auto const n  = *rc::gen::inRange<std::uint32_t>(1, 8);
  auto const k1 = *rc::gen::inRange<std::uint32_t>(0, 12);
  RC_ASSERT(check::worst_case_passes(d, n, k1) == adversary_passes(d, n, k1));
}
