// The random-walk pool's invariant catalog (check/rw_invariants.hpp): a clean state passes, and
// each invariant, fed a state broken in exactly its way, reports exactly that violation.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "heaplab/check/rw_invariants.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/rw/page_pool.hpp"

namespace check = heaplab::check;
namespace rw    = heaplab::rw;

namespace {

/// 40 pages in 32-bit words (pages 32..39 in word 1, bits 8..31 beyond the pool); owner 0 holds
/// pages 1 and 33, owner 1 holds page 5.
struct CleanState {
  check::RwPoolSnapshot snapshot;
  check::RwOwners owners{{1, 33}, {5}};
  CleanState() {
    rw::PoolConfig c;
    c.num_pages = 40;
    rw::HostPool<std::uint32_t> pool(c);
    for (std::uint32_t p : {1u, 33u, 5u}) pool.mark_used(p);
    snapshot = check::rw_snapshot(40,
                                  pool.used_words().data(),
                                  pool.used_words().size(),
                                  pool.lock_words().data(),
                                  pool.lock_words().size());
  }
};

std::set<std::string> names(std::vector<check::Violation> const& v) {
  std::set<std::string> out;
  for (auto const& x : v) out.insert(x.invariant);
  return out;
}

using Names = std::set<std::string>;

}  // namespace

TEST(RwCatalog, CleanStatePasses) {
  CleanState s;
  EXPECT_TRUE(check::rw_check_all(s.snapshot, s.owners).empty());
  s.snapshot.word_bits  = 64;  // the same pages in one 64-bit word
  s.snapshot.used_words = {s.snapshot.used_words[0] | (std::uint64_t{0x2} << 32) |
                           (~std::uint64_t{0} << 40)};
  s.snapshot.lock_words = {0};
  EXPECT_TRUE(check::rw_check_all(s.snapshot, s.owners).empty());
  EXPECT_EQ(check::rw_catalog().size(), 9u);
}

TEST(RwCatalog, PoolShape) {
  CleanState s;
  s.snapshot.used_words.push_back(~0u);
  EXPECT_EQ(names(check::rw_check_all(s.snapshot, s.owners)), Names{"rw-pool-shape"});
}

TEST(RwCatalog, NoPageBeyondPool) {
  CleanState s;
  s.snapshot.used_words[1] &= ~(1u << 12);  // bit of page 44 >= T cleared
  auto const v = check::rw_check_all(s.snapshot, s.owners);
  ASSERT_EQ(names(v), Names{"rw-no-page-beyond-pool"});
  EXPECT_EQ(v[0].bit, 44);
  CleanState t;
  t.owners[1].push_back(45);  // a holder of a page beyond the pool
  EXPECT_EQ(names(check::rw_check_all(t.snapshot, t.owners)), Names{"rw-no-page-beyond-pool"});
}

TEST(RwCatalog, PageOwnedOnce) {
  CleanState s;
  s.owners[1].push_back(33);  // owner 0 holds it too
  auto const v = check::rw_check_all(s.snapshot, s.owners);
  ASSERT_EQ(names(v), Names{"rw-page-owned-once"});
  EXPECT_EQ(v[0].bit, 33);
}

TEST(RwCatalog, OwnedPageUsed) {
  CleanState s;
  s.snapshot.used_words[0] &= ~(1u << 5);  // owner 1's page looks free
  // A held page with a clear bit is also one used page fewer than held ones.
  EXPECT_EQ(names(check::rw_check_all(s.snapshot, s.owners)),
            (Names{"rw-owned-page-used", "rw-used-count-matches-owned"}));
  EXPECT_EQ(names(check::rw_check_one("rw-owned-page-used", s.snapshot, s.owners)),
            Names{"rw-owned-page-used"});
}

TEST(RwCatalog, FreedPageFree) {
  CleanState s;
  s.owners[1].clear();  // page 5 freed by its owner, but its bit stayed set
  EXPECT_EQ(names(check::rw_check_all(s.snapshot, s.owners)),
            (Names{"rw-freed-page-free", "rw-used-count-matches-owned"}));
  EXPECT_EQ(names(check::rw_check_one("rw-freed-page-free", s.snapshot, s.owners)),
            Names{"rw-freed-page-free"});
}

TEST(RwCatalog, UsedCountMatchesOwned) {
  // A count mismatch the page-by-page checks see too; checked on its own.
  CleanState s;
  s.snapshot.used_words[0] |= 1u << 9;
  auto const v = check::rw_check_one("rw-used-count-matches-owned", s.snapshot, s.owners);
  ASSERT_EQ(names(v), Names{"rw-used-count-matches-owned"});
  EXPECT_NE(v[0].message.find("4 pages are marked used but 3"), std::string::npos) << v[0].message;
}

TEST(RwCatalog, LockMapClearAtQuiescence) {
  CleanState s;
  s.snapshot.lock_words[0] = 0x2;  // used word 1 locked
  auto const v             = check::rw_check_all(s.snapshot, s.owners);
  ASSERT_EQ(names(v), Names{"rw-lock-map-clear-at-quiescence"});
  EXPECT_EQ(v[0].bit, 1);
}

TEST(RwCatalog, UnknownNameIsAPrecondition) {
  CleanState s;
  EXPECT_THROW(check::rw_check_one("rw-nonsense", s.snapshot, s.owners),
               heaplab::core::precondition_error);
}

// ---------------------------------------------------------------- runs (RW_malloc, RW Alg. 3)

namespace {

/// CleanState plus runs: owner 0 holds the run 30..33 (across words 0 and 1), owner 1 the run
/// 36..39 (ending at T = 40).
struct CleanRunState : CleanState {
  check::RwHeldRuns runs{{0, 30, 4}, {1, 36, 4}};
  CleanRunState() {
    owners[0] = {1, 33, 30, 31, 32};
    owners[1] = {5, 36, 37, 38, 39};
    snapshot.used_words[0] |= (1u << 30) | (1u << 31);
    snapshot.used_words[1] |= 0x1u | 0xF0u;  // pages 32, 36..39
  }
};

}  // namespace

TEST(RwCatalog, RunsCleanStatePasses) {
  CleanRunState s;
  EXPECT_TRUE(check::rw_check_all(s.snapshot, s.owners, s.runs).empty());
  EXPECT_TRUE(check::rw_check_all(s.snapshot, s.owners).empty());  // the old overload
}

TEST(RwCatalog, RunInsidePool) {
  CleanRunState s;
  s.runs.push_back({1, 40, 2});  // starts at T
  auto const v = check::rw_check_all(s.snapshot, s.owners, s.runs);
  ASSERT_EQ(names(v), Names{"rw-run-inside-pool"});
  EXPECT_EQ(v[0].bit, 40);
  CleanRunState t;
  t.runs.push_back({0, 3, 0});  // empty
  EXPECT_EQ(names(check::rw_check_all(t.snapshot, t.owners, t.runs)), Names{"rw-run-inside-pool"});
  CleanRunState u;
  u.runs[1].count = 5;  // 36..40: one page beyond T
  EXPECT_EQ(names(check::rw_check_one("rw-run-inside-pool", u.snapshot, u.owners, u.runs)),
            Names{"rw-run-inside-pool"});
}

TEST(RwCatalog, RunPagesOwnedByRun) {
  CleanRunState s;
  s.runs[0].owner = 1;  // owner 0 holds the pages, the run names owner 1
  auto const v    = check::rw_check_all(s.snapshot, s.owners, s.runs);
  ASSERT_EQ(names(v), Names{"rw-run-pages-owned-by-run"});
  EXPECT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].bit, 30);
  CleanRunState t;
  t.runs.push_back({0, 32, 2});  // pages 32, 33 in two runs (both held by owner 0)
  auto const w = check::rw_check_all(t.snapshot, t.owners, t.runs);
  ASSERT_EQ(names(w), Names{"rw-run-pages-owned-by-run"});
  EXPECT_NE(w[0].message.find("also belongs to the run from 30"), std::string::npos)
      << w[0].message;
  CleanRunState u;
  u.snapshot.used_words[1] &= ~(1u << 6);  // page 38 of owner 1's run is not marked used
  auto const x = check::rw_check_one("rw-run-pages-owned-by-run", u.snapshot, u.owners, u.runs);
  ASSERT_EQ(names(x), Names{"rw-run-pages-owned-by-run"});
  EXPECT_EQ(x[0].bit, 38);
}
