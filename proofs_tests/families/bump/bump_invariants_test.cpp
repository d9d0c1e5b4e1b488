// Every invariant of the bump catalog (bump_invariants.hpp) fed a broken state reports its own
// violation (so each check can fail), stays silent on a legal state, and the catalog is what the
// family lists.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "bump_family.hpp"
#include "bump_invariants.hpp"

namespace heaplab::bump_family {
namespace {

/// A legal state: arena 100, live [0, 10); a wave (align 8) granted [16, 24) and [24, 40) and
/// answered null to a request of 70 bytes; the pointer is at 40.
struct Fixture {
  std::vector<Range> live = {{0, 10, 0, 0}};
  BumpState state;
  Fixture() {
    state.arena        = 100;
    state.align        = 8;
    state.top_before   = 10;
    state.live         = &live;
    state.granted      = {{24, 16, 1, 1}, {16, 8, 0, 1}};
    state.nulls        = {{2, 70}};
    state.reported_top = 40;
  }
};

std::vector<std::string> names(std::vector<check::Violation> const& v) {
  std::vector<std::string> out;
  for (auto const& x : v) out.push_back(x.invariant);
  return out;
}

using Names = std::vector<std::string>;

TEST(BumpInvariants, ALegalStateHasNoViolations) {
  Fixture f;
  EXPECT_TRUE(check_all(f.state).empty()) << check_all(f.state).front().to_string();
  EXPECT_EQ(f.state.top_after(), 40u);
  BumpState empty_wave;
  empty_wave.arena = 10, empty_wave.top_before = 7, empty_wave.reported_top = 7;
  EXPECT_TRUE(check_all(empty_wave).empty());
}

TEST(BumpInvariants, InsideArenaReportsAGrantThatEndsBeyondTheArena) {
  Fixture f;
  f.state.granted[0].size = 77;  // [24, 101)
  f.state.reported_top    = 101;
  auto const v            = inside_arena(f.state);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].invariant, "bump-inside-arena");
  EXPECT_NE(v[0].message.find("[24, 101) of thread 1 (step 1) ends beyond the arena of 100"),
            std::string::npos)
      << v[0].message;
  EXPECT_EQ(names(check_all(f.state)), Names{"bump-inside-arena"});
  f.state.granted[0].offset = kNull - 3;  // an offset near 2^64 must not wrap around
  EXPECT_EQ(inside_arena(f.state).size(), 1u);
}

TEST(BumpInvariants, AlignedReportsAMisalignedOffset) {
  Fixture f;
  f.state.align = 16;  // 24 is not a multiple of 16 (and the packing changes)
  auto const v  = aligned(f.state);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].invariant, "bump-aligned");
  EXPECT_EQ(names(check_all(f.state)).front(), "bump-aligned");
}

TEST(BumpInvariants, DisjointReportsOverlapsAmongGrantsAndWithLiveRanges) {
  Fixture f;
  f.state.granted.push_back({20, 2, 3, 1});  // inside [16, 24)
  auto v = disjoint(f.state);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].invariant, "bump-disjoint");
  Fixture g;
  g.state.granted = {{0, 500, 0, 1}, {8, 1, 1, 1}, {300, 1, 2, 1}};  // both inside the first
  EXPECT_EQ(disjoint(g.state).size(), 4u);  // two among the grants, two with the live [0, 10)
  Fixture h;
  h.state.granted.push_back({8, 8, 4, 1});  // overlaps the live [0, 10)
  v = disjoint(h.state);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].message.find("overlaps the live range [0, 10)"), std::string::npos)
      << v[0].message;
}

TEST(BumpInvariants, PackedReportsAGapOrAGrantBelowThePointer) {
  Fixture f;
  f.state.granted[0].offset = 32;  // a gap [24, 32)
  f.state.reported_top      = 48;
  auto const v              = packed(f.state);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].invariant, "bump-packed");
  EXPECT_EQ(names(check_all(f.state)), Names{"bump-packed"});
  Fixture g;
  g.state.top_before = 24;  // [16, 24) lies below the pointer at the wave's start
  EXPECT_EQ(names(packed(g.state)), Names{"bump-packed"});
}

TEST(BumpInvariants, NullJustifiedReportsANullThatStillFits) {
  Fixture f;
  f.state.nulls[0].size = 60;  // 40 + 60 <= 100
  auto const v          = null_justified(f.state);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].invariant, "bump-null-justified");
  EXPECT_NE(v[0].message.find("thread 2 got null for 60 bytes"), std::string::npos);
  f.state.nulls[0].size = 61;
  EXPECT_TRUE(null_justified(f.state).empty());
}

TEST(BumpInvariants, TopMatchesReportsAPointerThatIsNotTheEndOfTheHighestGrant) {
  Fixture f;
  f.state.reported_top = 24;  // a lost update: the pointer moved back
  auto const v         = top_matches(f.state);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].invariant, "bump-top-matches");
  EXPECT_EQ(names(check_all(f.state)), Names{"bump-top-matches"});
}

TEST(BumpInvariants, FreeAllResetsReportsAPointerOrRangesLeftAfterFreeAll) {
  BumpState s;
  s.step         = BumpState::Step::free_all;
  s.arena        = 100;
  s.top_before   = 40;
  s.reported_top = 0;
  EXPECT_TRUE(check_all(s).empty());
  s.reported_top = 40;
  auto v         = free_all_resets(s);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].invariant, "bump-free-all-resets");
  EXPECT_EQ(names(check_all(s)), Names{"bump-free-all-resets"});
  std::vector<Range> const kept = {{0, 10, 0, 0}};
  s.reported_top                = 0;
  s.live                        = &kept;
  v                             = free_all_resets(s);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].message.find("1 ranges still live"), std::string::npos);
}

TEST(BumpInvariants, EachInvariantReportsAtMostTheCap) {
  Fixture f;
  f.state.align = 64;
  for (std::uint32_t t = 0; t < 100; ++t) f.state.granted.push_back({1 + t, 1, t, 1});
  EXPECT_EQ(aligned(f.state).size(), kMaxViolations);
}

TEST(BumpInvariants, TheFamilyListsTheCatalogByName) {
  auto const listed = family().invariants();
  ASSERT_EQ(listed.size(), bump_catalog().size());
  std::set<std::string> unique;
  for (std::size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(listed[i].name, bump_catalog()[i].name);
    EXPECT_EQ(listed[i].name.rfind("bump-", 0), 0u);
    EXPECT_FALSE(listed[i].statement.empty());
    unique.insert(listed[i].name);
  }
  EXPECT_EQ(unique.size(), listed.size());
  EXPECT_EQ(unique,
            (std::set<std::string>{"bump-inside-arena",
                                   "bump-aligned",
                                   "bump-disjoint",
                                   "bump-packed",
                                   "bump-null-justified",
                                   "bump-top-matches",
                                   "bump-free-all-resets"}));
}

}  // namespace
}  // namespace heaplab::bump_family
