// RW_malloc (RW Alg. 3, sec. 4.3; rw/rw_malloc.hpp) on the CPU: the segment helpers against a
// naive bit loop, the lock-step warp (mixed sizes, runs across words, rollback after a lost claim,
// near exhaustion), the page model's runs, and the rw workload's RW_malloc threads under the
// explorer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <vector>

#include "heaplab/check/rw_invariants.hpp"
#include "heaplab/core/atomics.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/protocol_check.hpp"
#include "heaplab/explore/explore.hpp"
#include "heaplab/families/interleaving/workloads/programs.hpp"
#include "heaplab/model/page_model.hpp"
#include "heaplab/rw/rw_malloc.hpp"
#include "rw_explore_support.hpp"

namespace check     = heaplab::check;
namespace core      = heaplab::core;
namespace workloads = heaplab::interleaving_family::workloads;
namespace model     = heaplab::model;
namespace rw        = heaplab::rw;
namespace explore   = heaplab::explore;

namespace {

// ---------------------------------------------------------------- naive references

bool naive_free(std::vector<std::uint64_t> const& words, std::uint32_t bits, std::uint32_t p) {
  return ((words[p / bits] >> (p % bits)) & 1u) == 0;
}

/// The first maximal free stretch of words[0..count) at or after position `from` (bit by bit).
rw::Segment naive_segment(std::vector<std::uint64_t> const& words,
                          std::uint32_t bits,
                          std::uint32_t from) {
  auto const end  = static_cast<std::uint32_t>(words.size()) * bits;
  std::uint32_t s = from;
  while (s < end && !naive_free(words, bits, s)) ++s;
  if (s >= end) return rw::Segment{end, 0};
  std::uint32_t e = s;
  while (e < end && naive_free(words, bits, e)) ++e;
  return rw::Segment{s, e - s};
}

std::uint64_t random_word(rw::PageRng& rng, std::uint32_t bits) {
  // Mostly sparse or dense words, so that long free and used stretches both occur.
  std::uint64_t v = rng.next();
  switch (rng.below(4)) {
    case 0:
      v &= rng.next() & rng.next();
      break;
    case 1:
      v |= rng.next() | rng.next();
      break;
    case 2:
      v = rng.below(3) == 0 ? 0 : v;
      break;
    default:
      break;
  }
  return bits == 64 ? v : (v & 0xFFFFFFFFu);
}

template <class W>
void segments_match_naive_loop(std::uint64_t seed) {
  constexpr std::uint32_t bits = sizeof(W) * 8;
  rw::PageRng rng{seed};
  for (int trial = 0; trial < 3000; ++trial) {
    // One word, every starting bit.
    W const v = static_cast<W>(random_word(rng, bits));
    std::vector<std::uint64_t> const one{v};
    for (std::uint32_t from = 0; from <= bits; ++from) {
      rw::Segment const got  = rw::word_segment(v, from);
      rw::Segment const want = naive_segment(one, bits, from);
      ASSERT_EQ(got.length, want.length) << std::hex << v << std::dec << " from " << from;
      if (want.length != 0) {
        ASSERT_EQ(got.start, want.start) << std::hex << v;
      }
    }
    ASSERT_EQ(rw::low_free_bits(v),
              naive_segment(one, bits, 0).start == 0 ? naive_segment(one, bits, 0).length : 0u);
    // A lane's 1-4 consecutive words: segments connected across the words' boundaries.
    std::vector<W> chunk(1 + rng.below(4));
    std::vector<std::uint64_t> wide;
    for (W& x : chunk) wide.push_back(x = static_cast<W>(random_word(rng, bits)));
    auto const count       = static_cast<std::uint32_t>(chunk.size());
    rw::Segment const lead = naive_segment(wide, bits, 0);
    ASSERT_EQ(rw::leading_free_bits(chunk.data(), count), lead.start == 0 ? lead.length : 0u);
    for (std::uint32_t from = 0; from <= count * bits; from += 1 + rng.below(5)) {
      rw::Segment const got  = rw::chunk_segment(chunk.data(), count, from);
      rw::Segment const want = naive_segment(wide, bits, from);
      ASSERT_EQ(got.length, want.length) << "from " << from;
      if (want.length != 0) {
        ASSERT_EQ(got.start, want.start) << "from " << from;
      }
    }
  }
}

// ---------------------------------------------------------------- pools and checks

template <class W>
rw::PoolConfig config_of(std::uint32_t pages, std::uint32_t max_steps) {
  rw::PoolConfig c;
  c.num_pages = pages;
  c.word_bits = sizeof(W) * 8;
  c.max_steps = max_steps;
  return c;
}

template <class W>
check::RwPoolSnapshot snapshot_of(rw::HostPool<W> const& pool) {
  return check::rw_snapshot(pool.config().num_pages,
                            pool.used_words().data(),
                            pool.used_words().size(),
                            pool.lock_words().data(),
                            pool.lock_words().size());
}

/// A pool, its model, and warps run against both (the model checks every run by refinement).
template <class W>
struct Bench {
  rw::HostPool<W> pool;
  model::PageModel model;
  static constexpr std::uint32_t kSetup = 1000;  // the owner of pages used before the warps ran

  Bench(std::uint32_t pages, std::uint32_t max_steps)
      : pool(config_of<W>(pages, max_steps)), model(pages) {}

  void mark_used(std::uint32_t p) {
    pool.mark_used(p);
    model.get_page(kSetup, p);
  }

  /// One warp of the given requests; owner of lane l's run: `owner + l`. Returns the answers.
  std::vector<rw::GetPageResult> warp(std::vector<std::uint32_t> const& n,
                                      std::uint32_t owner,
                                      std::uint64_t seed) {
    std::vector<rw::MallocLane> lanes;
    for (std::uint32_t l = 0; l < n.size(); ++l)
      lanes.push_back(rw::MallocLane{n[l], rw::thread_rng(seed, l)});
    auto const got = rw::rw_malloc_warp(pool.template ref<core::HostAtomics>(), lanes);
    for (std::uint32_t l = 0; l < n.size(); ++l)
      if (n[l] > 0) model.get_run(owner + l, got[l].page, n[l]);  // throws on a bad run
    return got;
  }

  std::vector<check::Violation> catalog() const {
    return check::rw_check_all(snapshot_of(pool), model.owners(kSetup + 1), model.runs());
  }
};

}  // namespace

TEST(RwMallocSegments, MatchANaiveBitLoopInBothWidths) {
  segments_match_naive_loop<std::uint32_t>(1);
  segments_match_naive_loop<std::uint64_t>(2);
}

TEST(RwMallocSegments, ConnectAcrossLanesAndServeFirstFit) {
  // A 32-word region read by 3 lanes: 11, 11 and 10 words.
  rw::Region const r = rw::region_at(5, 40, 3);
  EXPECT_EQ(r.per_lane, 11u);
  EXPECT_EQ(r.count(0) + r.count(1) + r.count(2), 32u);
  EXPECT_EQ(r.count(3), 0u);
  // Group {1, 4, 9}: lane 1's segment reaching its end continues over lane 4 (full) into lane 9.
  std::uint32_t const group = (1u << 1) | (1u << 4) | (1u << 9);
  EXPECT_EQ(rw::next_partial_lane(group, 1, 1u << 4), 9u);
  EXPECT_EQ(rw::previous_lane(group, 9), 4u);
  EXPECT_EQ(rw::previous_lane(group, 1), rw::kNoLane);
  EXPECT_EQ(rw::continuation_bits(r, 32, group, 1, 9, 7), 11u * 32 + 7);
  EXPECT_EQ(rw::continuation_bits(r, 32, group, 1, rw::kNoLane, 7), 21u * 32);
  // First fit, lowest lane first: lanes 0 (5), 2 (9), 3 (2), 6 (3) on a segment of 11 pages.
  std::uint32_t const n[32] = {5, 0, 9, 2, 0, 0, 3};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> took;
  std::uint32_t const total = rw::first_fit(
      0b1001101u,
      11,
      [&](std::uint32_t l) { return n[l]; },
      [&](std::uint32_t l, std::uint32_t off) { took.emplace_back(l, off); });
  EXPECT_EQ(total, 10u);
  EXPECT_EQ(took, (std::vector<std::pair<std::uint32_t, std::uint32_t>>{{0, 0}, {3, 5}, {6, 7}}));
  EXPECT_EQ(rw::pages_for_bytes(4097, 4096), 2u);
  EXPECT_EQ(rw::pages_for_bytes(8192, 4096), 2u);
  EXPECT_EQ(rw::max_run_pages(64), 2048u);
}

template <class W>
void mixed_sizes_on_a_fragmented_pool() {
  constexpr std::uint32_t bits = sizeof(W) * 8;
  Bench<W> b(bits * 40 - 7, 64);
  rw::PageRng place{11};
  // Free stretches of 1..3w pages between used ones of 1..w/2: free segments of every length,
  // many of them across word boundaries.
  for (std::uint32_t p = place.below(bits); p < b.pool.config().num_pages;) {
    std::uint32_t const used = 1 + place.below(bits / 2);
    for (std::uint32_t q = p; q < p + used && q < b.pool.config().num_pages; ++q) b.mark_used(q);
    p += used + 1 + place.below(3 * bits);
  }
  std::uint32_t served = 0;
  for (std::uint32_t w = 0; w < 12; ++w) {
    std::vector<std::uint32_t> n(1 + w % 8);  // groups of 1..8 lanes
    for (auto& x : n) x = place.below(5) == 0 ? 0 : 1 + place.below(2 * bits);  // 1..2w, some 0
    auto const got = b.warp(n, 32 * w, 100 + w);
    for (std::uint32_t l = 0; l < n.size(); ++l) {
      if (n[l] == 0) {
        EXPECT_EQ(got[l].steps, 0u);
      }
      served += got[l].ok() ? 1 : 0;
    }
  }
  // The model accepted every run (free, inside the pool, disjoint); the words agree with it.
  EXPECT_GT(served, 20u);
  EXPECT_TRUE(b.catalog().empty()) << b.catalog()[0].to_string();
  for (auto const& run : b.model.runs())
    for (std::uint32_t p = run.first; p < run.first + run.count; ++p)
      EXPECT_EQ(b.model.holder(p), run.owner);
}

TEST(RwMallocWarp, MixedSizesGiveDisjointContiguousRunsInsideThePool) {
  mixed_sizes_on_a_fragmented_pool<std::uint32_t>();
  mixed_sizes_on_a_fragmented_pool<std::uint64_t>();
}

template <class W>
void runs_across_words() {
  constexpr std::uint32_t bits = sizeof(W) * 8;
  // 4 words; free: [w-3, w+5) (8 pages over a boundary) and [2w-2, 4w) minus nothing: 2w+2 pages
  // over two boundaries and one whole free word.
  Bench<W> b(4 * bits, 40);
  for (std::uint32_t p = 0; p < 4 * bits; ++p) {
    bool const free = (p >= bits - 3 && p < bits + 5) || p >= 2 * bits - 2;
    if (!free) b.mark_used(p);
  }
  auto const got = b.warp({2 * bits + 2, 8}, 0, 7);
  ASSERT_TRUE(got[0].ok());
  ASSERT_TRUE(got[1].ok());
  EXPECT_EQ(got[0].page, 2 * bits - 2);
  EXPECT_EQ(got[1].page, bits - 3);
  EXPECT_TRUE(b.catalog().empty());
  EXPECT_EQ(b.model.free_count(), 0u);
  // Free them: the pool is back to the setup's pages.
  rw::free_run(b.pool.template ref<core::HostAtomics>(), got[0].page, 2 * bits + 2);
  b.model.free_run(0, got[0].page, 2 * bits + 2);
  EXPECT_TRUE(b.catalog().empty());
}

TEST(RwMallocWarp, RunsCrossWordBoundariesAndWholeFreeWords) {
  runs_across_words<std::uint32_t>();
  runs_across_words<std::uint64_t>();
}

TEST(RwMallocWarp, RequestsBeyondTheLimitAreRejectedAndZeroIsInactive) {
  Bench<std::uint32_t> b(64, 4);
  EXPECT_THROW(b.warp({1, rw::max_run_pages(32) + 1}, 0, 1), core::precondition_error);
  auto const got = b.warp({0, 0}, 0, 1);
  EXPECT_FALSE(got[0].ok());
  EXPECT_EQ(got[0].steps, 0u);
  // A request longer than the pool: every round fails, the model counts out of memory.
  auto const big = b.warp({65}, 0, 1);
  EXPECT_FALSE(big[0].ok());
  EXPECT_EQ(big[0].steps, 4u);
  EXPECT_EQ(b.model.out_of_pages(), 1u);
}

// ---------------------------------------------------------------- rollback

namespace {

/// Host atomics that let "another walker" claim a page just before the k-th fetch_or of the
/// warp (between the warp's region read and its claim of that word).
struct RacingAtomics : core::HostAtomics {
  static inline int countdown       = -1;  // fetch_ors until the race; -1: no race
  static inline std::uint64_t steal = 0;   // the bit the other walker claims
  static inline void* steal_word    = nullptr;
  template <class T>
  static T fetch_or(T* p, T v, core::MemoryOrder o) {
    if (countdown >= 0 && countdown-- == 0)
      core::HostAtomics::fetch_or(static_cast<T*>(steal_word), static_cast<T>(steal), o);
    return core::HostAtomics::fetch_or(p, v, o);
  }
};

}  // namespace

TEST(RwMallocWarp, ALostClaimReleasesItsLeftovers) {
  // 3 words of 32; the only free pages: [28, 36) across words 0 and 1. The warp asks for 8; the
  // other walker takes page 34 just before the warp's claim of word 1, after the warp won
  // word 0's pages 28..31 and while word 1's claim still wins 32, 33 and 35.
  rw::HostPool<std::uint32_t> pool(config_of<std::uint32_t>(96, 3));
  for (std::uint32_t p = 0; p < 96; ++p)
    if (p < 28 || p >= 36) pool.mark_used(p);
  auto const before         = pool.used_words();
  RacingAtomics::countdown  = 1;  // the second fetch_or (word 1's claim)
  RacingAtomics::steal      = 1u << 2;
  RacingAtomics::steal_word = pool.storage().used + 1;
  std::vector<rw::MallocLane> lanes{rw::MallocLane{8, rw::PageRng{3}}};
  auto const got           = rw::rw_malloc_warp(pool.ref<RacingAtomics>(), lanes);
  RacingAtomics::countdown = -1;
  EXPECT_FALSE(got[0].ok());  // no other run of 8 is free
  EXPECT_EQ(got[0].steps, 3u);
  // Only page 34 (the other walker's) is used now: the warp's leftovers 28..33, 35 are free.
  EXPECT_EQ(pool.used_words()[0], before[0]);
  EXPECT_EQ(pool.used_words()[1], before[1] | (1u << 2));
  EXPECT_EQ(pool.used_words()[2], before[2]);
  check::RwOwners owners(2);
  for (std::uint32_t p = 0; p < 96; ++p)
    if (p < 28 || p >= 36) owners[0].push_back(p);
  owners[1] = {34};
  EXPECT_TRUE(check::rw_check_all(snapshot_of(pool), owners).empty());
}

TEST(RwMallocWarp, ALostClaimInTheFirstWordReleasesWhatItWonThere) {
  // One word: free [4, 12); the other walker takes page 9 before the warp's only claim; the warp
  // wins 4..8, 10, 11 of its mask and must give all of them back.
  rw::HostPool<std::uint64_t> pool(config_of<std::uint64_t>(64, 2));
  for (std::uint32_t p = 0; p < 64; ++p)
    if (p < 4 || p >= 12) pool.mark_used(p);
  std::uint64_t const before = pool.used_words()[0];
  RacingAtomics::countdown   = 0;
  RacingAtomics::steal       = std::uint64_t{1} << 9;
  RacingAtomics::steal_word  = pool.storage().used;
  std::vector<rw::MallocLane> lanes{rw::MallocLane{8, rw::PageRng{5}}, rw::MallocLane{}};
  auto const got           = rw::rw_malloc_warp(pool.ref<RacingAtomics>(), lanes);
  RacingAtomics::countdown = -1;
  EXPECT_FALSE(got[0].ok());
  EXPECT_EQ(pool.used_words()[0], before | (std::uint64_t{1} << 9));
}

// ---------------------------------------------------------------- near exhaustion

template <class W>
void fill_until_no_run_is_left(std::uint32_t n) {
  // 70 words: regions (32 words) start anywhere in the first 39, so warps overlap and gaps form.
  constexpr std::uint32_t bits = sizeof(W) * 8;
  std::uint32_t const pages    = 70 * bits;
  Bench<W> b(pages, 200);
  std::uint32_t warps = 0;
  while (b.model.largest_free_run() >= n && warps < 20000) {
    std::vector<std::uint32_t> lanes(8, n);
    b.warp(lanes, 0, 1000 + warps);
    ++warps;
  }
  ASSERT_LT(b.model.largest_free_run(), n) << "still a run of " << n << " free";
  double const held = static_cast<double>(pages - b.model.free_count()) / pages;
  std::printf("w = %u, n = %u: %u warps, utilization %.4f, out of memory %llu, exhaustions %llu\n",
              bits,
              n,
              warps,
              held,
              static_cast<unsigned long long>(b.model.out_of_pages()),
              static_cast<unsigned long long>(b.model.bounded_walk_exhaustions()));
  EXPECT_GE(held, 0.95);
  // One more warp: nothing can be served; the model calls it out of memory, not exhaustion.
  auto const exhaustions = b.model.bounded_walk_exhaustions();
  auto const oom         = b.model.out_of_pages();
  auto const last        = b.warp(std::vector<std::uint32_t>(8, n), 0, 1);
  for (auto const& r : last) EXPECT_FALSE(r.ok());
  EXPECT_EQ(b.model.out_of_pages(), oom + 8);
  EXPECT_EQ(b.model.bounded_walk_exhaustions(), exhaustions);
  EXPECT_TRUE(b.catalog().empty());
}

TEST(RwMallocWarp, FillingASmallPoolUsesAtLeast95PercentOfIt) {
  for (std::uint32_t n : {1u, 3u, 8u}) {
    fill_until_no_run_is_left<std::uint32_t>(n);
    fill_until_no_run_is_left<std::uint64_t>(n);
  }
}

// ---------------------------------------------------------------- the model's runs

TEST(RwMallocModel, RunsAreCheckedByRefinementAndFreedWhole) {
  model::PageModel m(20);
  m.get_page(9, 3);
  EXPECT_EQ(m.largest_free_run(), 16u);                         // 4..19
  m.get_run(1, 5, 4);                                           // 5..8
  EXPECT_EQ(m.largest_free_run(), 11u);                         // 9..19
  EXPECT_THROW(m.get_run(2, 2, 3), core::precondition_error);   // over held page 3
  EXPECT_THROW(m.get_run(2, 8, 2), core::precondition_error);   // over the run's page 8
  EXPECT_THROW(m.get_run(2, 18, 3), core::precondition_error);  // beyond T
  EXPECT_THROW(m.free_run(1, 5, 3), core::precondition_error);  // not exactly the run
  EXPECT_THROW(m.free_run(2, 5, 4), core::precondition_error);  // not its owner
  EXPECT_THROW(m.free_page(1, 6), core::precondition_error);    // one page of a run
  EXPECT_THROW(m.hand_over(1, 2, 6), core::precondition_error);
  ASSERT_EQ(m.runs(1).size(), 1u);
  EXPECT_EQ(m.runs(1)[0].first, 5u);
  EXPECT_EQ(m.runs(2).size(), 0u);
  EXPECT_EQ(m.owners(2)[1], (std::vector<std::uint32_t>{5, 6, 7, 8}));
  m.get_run(2, rw::kNoPage, 11);  // a run of 11 was free: exhaustion
  m.get_run(2, rw::kNoPage, 12);  // none of 12: out of memory
  EXPECT_EQ(m.bounded_walk_exhaustions(), 1u);
  EXPECT_EQ(m.out_of_pages(), 1u);
  m.free_run(1, 5, 4);
  EXPECT_TRUE(m.runs().empty());
  EXPECT_EQ(m.largest_free_run(), 16u);
  EXPECT_EQ(m.free_count(), 19u);
}

// ---------------------------------------------------------------- the explorer

TEST(RwMallocExplorer, DefaultBudgetFindsNothingWithWarpsAndWalkers) {
  // The rw workload's RW_malloc seeds only (a third of them), and the weak-memory mode.
  for (auto kind : {workloads::WorkloadKind::rw, workloads::WorkloadKind::rw_weak}) {
    auto const all = workloads::workload_factory(kind);
    std::vector<std::uint64_t> seeds;
    for (std::uint64_t s = 1; seeds.size() < 1000; ++s)
      if (workloads::random_rw_workload(s).algorithm == core::RwAlgorithm::rw_malloc)
        seeds.push_back(s);
    explore::ExploreOptions o;
    o.max_runs = seeds.size();
    if (workloads::is_weak_workload(kind))
      o.run.memory_model = explore::MemoryModel::release_acquire;
    auto const factory = [&](std::uint64_t run) { return all(seeds[(run - 1) % seeds.size()]); };
    heaplab::rw_test::expect_explorer_finds_nothing(factory, o, "RW_malloc runs");
  }
}

TEST(RwMallocExplorer, BoundedExhaustiveSearchFindsNothingOnASmallWorkload) {
  // A warp of 2 lanes (3 and 2 pages) against a walker, on two words whose free pages straddle
  // the boundary: every schedule with <= 2 preemptions.
  workloads::RwWorkload w;
  w.algorithm        = core::RwAlgorithm::rw_malloc;
  w.config.word_bits = 32;
  w.config.num_pages = 40;
  w.config.max_steps = 2;
  for (std::uint32_t p = 0; p < 40; ++p)
    if (p < 29 || p > 34) w.pretaken.push_back(p);
  workloads::RwOp malloc_op;
  malloc_op.kind  = workloads::RwOp::Kind::malloc;
  malloc_op.lanes = {3, 2, 0, 0};
  workloads::RwOp get, free_op;
  free_op.kind = workloads::RwOp::Kind::free_own;
  w.threads    = {{malloc_op, free_op}, {get, get}};
  explore::ExploreOptions o;
  o.strategy                     = explore::StrategyKind::exhaustive;
  o.max_runs                     = 20000;
  auto const factory             = [w](std::uint64_t) { return workloads::make_rw_program(w); };
  explore::ExploreReport const r = explore::explore(factory, o);
  EXPECT_FALSE(r.failure.has_value()) << r.failure_report;
  std::printf("%llu schedules%s\n",
              static_cast<unsigned long long>(r.runs),
              r.exhausted ? " (bounded space exhausted)" : " (cut short)");
}
