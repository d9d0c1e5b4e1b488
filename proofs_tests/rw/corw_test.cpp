// CoRW, the collaborative random walk (RW Alg. 2, sec. 4.2; docs/rw.md "CoRW (RW Alg. 2)"): the
// lane arithmetic against naive loops, the distribution on the paper's Figure 5 example, the CPU
// lock-step warp on host pools (distinct free pages, LockMap clear, catalog clean, near
// exhaustion, TAS against WAS), and CoRW warps racing with RW / RW-BM walkers under the
// controlled scheduler.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "heaplab/check/rw_invariants.hpp"
#include "heaplab/core/atomics.hpp"
#include "heaplab/families/interleaving/workloads/programs.hpp"
#include "heaplab/rw/corw.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "rw_explore_support.hpp"
#include "rw_test_support.hpp"

namespace core      = heaplab::core;
namespace rw        = heaplab::rw;
namespace corw      = heaplab::rw::corw;
namespace check     = heaplab::check;
namespace explore   = heaplab::explore;
namespace workloads = heaplab::interleaving_family::workloads;

namespace {

rw::PoolConfig config(std::uint32_t pages, std::uint32_t word_bits, std::uint32_t max_steps) {
  rw::PoolConfig c;
  c.num_pages  = pages;
  c.word_bits  = word_bits;
  c.max_steps  = max_steps;
  c.page_bytes = 256;
  return c;
}

/// The k-th set bit (k >= 1) by clearing the lowest set bit k - 1 times; -1 if none.
int naive_kth_set_bit(std::uint64_t mask, int k) {
  if (k < 1) return -1;
  for (int bit = 0; bit < 64; ++bit)
    if (((mask >> bit) & 1u) != 0 && --k == 0) return bit;
  return -1;
}

/// Lanes of `mask` in increasing order.
std::vector<std::uint32_t> lanes_of(std::uint32_t mask) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t l = 0; l < 32; ++l)
    if (((mask >> l) & 1u) != 0) out.push_back(l);
  return out;
}

}  // namespace

TEST(CorwLanes, FksMatchesANaiveLoop) {
  // Every 16-bit mask with every k, then 200 000 random 64-bit masks (sparse and dense).
  for (std::uint64_t mask = 0; mask < (1u << 16); ++mask)
    for (int k = 0; k <= 17; ++k)
      ASSERT_EQ(corw::fks(mask, k), naive_kth_set_bit(mask, k)) << mask << " k " << k;
  rw::PageRng rng{11};
  for (int i = 0; i < 200000; ++i) {
    std::uint64_t mask = rng.next();
    if (i % 3 == 1) mask &= rng.next() & rng.next();  // sparse
    if (i % 3 == 2) mask |= rng.next() | rng.next();  // dense
    for (int k : {1, 2, 5, 17, 31, 32, 33, 63, 64, 65})
      ASSERT_EQ(corw::fks(mask, k), naive_kth_set_bit(mask, k)) << mask << " k " << k;
  }
  EXPECT_EQ(corw::fks(~std::uint64_t{0}, 64), 63);
  EXPECT_EQ(corw::fks(0, 1), -1);
}

TEST(CorwLanes, FirstZeroBitMatchesANaiveLoop) {
  rw::PageRng rng{5};
  for (int i = 0; i < 100000; ++i) {
    std::uint64_t const v = rng.next() | rng.next();
    int expected32 = -1, expected64 = -1;
    for (int b = 63; b >= 0; --b) {
      if (((v >> b) & 1u) != 0) continue;
      expected64 = b;
      if (b < 32) expected32 = b;
    }
    ASSERT_EQ(corw::first_zero_bit(v), expected64);
    ASSERT_EQ(corw::first_zero_bit(static_cast<std::uint32_t>(v)), expected32);
  }
  EXPECT_EQ(corw::first_zero_bit(~std::uint32_t{0}), -1);
  EXPECT_EQ(corw::first_zero_bit(~std::uint64_t{0}), -1);
  EXPECT_EQ(corw::first_zero_bit(std::uint32_t{0x7FFFFFFF}), 31);
}

TEST(CorwLanes, EachStepServesTheLowestNeedyLanesFromDistinctProvidersInRankOrder) {
  // Every (need, has) pair on 8 lanes, plus random 32-lane pairs: the receivers are the lowest
  // min(|need|, |has|) needy lanes, the i-th of them takes the i-th provider, and the providers
  // that believe their offer was taken (offer_taken) are exactly those.
  auto const check_pair = [](std::uint32_t need, std::uint32_t has) {
    auto const needy = lanes_of(need), providers = lanes_of(has);
    std::size_t const served = std::min(needy.size(), providers.size());
    for (std::uint32_t l = 0; l < 32; ++l) {
      auto const at       = std::find(needy.begin(), needy.end(), l);
      std::size_t const i = static_cast<std::size_t>(at - needy.begin());
      int const expected  = at != needy.end() && i < served ? static_cast<int>(providers[i]) : -1;
      ASSERT_EQ(corw::provider_of(need, has, l), expected) << need << " " << has << " lane " << l;
      auto const p = std::find(providers.begin(), providers.end(), l);
      bool const taken =
          p != providers.end() && static_cast<std::size_t>(p - providers.begin()) < served;
      ASSERT_EQ(corw::offer_taken(need, has, l), taken) << need << " " << has << " lane " << l;
    }
  };
  for (std::uint32_t need = 0; need < 256; ++need)
    for (std::uint32_t has = 0; has < 256; ++has) check_pair(need, has);
  rw::PageRng rng{3};
  for (int i = 0; i < 20000; ++i)
    check_pair(static_cast<std::uint32_t>(rng.next()),
               static_cast<std::uint32_t>(rng.next() >> 32));
}

TEST(CorwDistribution, ThePapersFigure5Example) {
  // RW Figure 5: 6 threads need a page; thread 1 found P1, P2, P3, thread 2 found P4, P5,
  // thread 4 found P6; threads 0, 3, 5 found nothing. The paper's table, by hand:
  //   step 1: lanes 0, 1, 2 take the offers of threads 1, 2, 4: P1, P4, P6
  //   step 2: lanes 3, 4 take the offers of threads 1, 2: P2, P5 (thread 4 has nothing left)
  //   step 3: lane 5 takes thread 1's offer: P3
  // final assignment P1 P4 P6 P2 P5 P3 to lanes 0..5. (Its t' row prints 5 for lane 2 in step 1,
  // fks before the "- 1"; the page lane 2 receives, P6, is thread 4's.)
  // Pages: thread 1's word 0 bits 0-2 (P1-P3 = 0, 1, 2), thread 2's word 1 bits 0-1 (P4, P5 =
  // 32, 33), thread 4's word 2 bit 0 (P6 = 64).
  std::uint32_t const P1 = 0, P2 = 1, P3 = 2, P4 = 32, P5 = 33, P6 = 64;
  corw::LaneRound<std::uint32_t> lanes[rw::kWarpLanes];
  lanes[1].word = 0, lanes[1].view = ~std::uint32_t{0b111};
  lanes[2].word = 1, lanes[2].view = ~std::uint32_t{0b11};
  lanes[4].word = 2, lanes[4].view = ~std::uint32_t{0b1};
  std::uint32_t const steps = corw::distribute(lanes, 0x3Fu, 0x3Fu);
  EXPECT_EQ(steps, 3u) << "the paper's table has three distribution steps";
  std::uint32_t const pages[6] = {P1, P4, P6, P2, P5, P3};
  int const providers[6]       = {1, 2, 4, 1, 2, 1};
  for (int l = 0; l < 6; ++l) {
    EXPECT_EQ(lanes[l].page, pages[l]) << "lane " << l;
    EXPECT_EQ(lanes[l].provider, providers[l]) << "lane " << l;
  }
  EXPECT_EQ(lanes[1].taken, 0b111u);
  EXPECT_EQ(lanes[2].taken, 0b11u);
  EXPECT_EQ(lanes[4].taken, 0b1u);
  for (int l : {0, 3, 5}) EXPECT_EQ(lanes[l].taken, 0u);
  for (int l : {1, 2, 4}) EXPECT_FALSE(corw::has_offer(lanes[l])) << "lane " << l << " gave all";
}

TEST(CorwDistribution, GapsInTheGroupAndMoreNeedersThanPages) {
  // Group {0, 3, 5, 9}; lanes 0, 5, 9 need; lanes 3 and 9 found one page each (pages 40 and 66
  // of a 32-bit pool: word 1 bit 8, word 2 bit 2). By hand: lane 0 (s = 0) takes lane 3's page,
  // lane 5 (s = 1) takes lane 9's, lane 9 (s = 2) finds no third provider; then nobody has.
  corw::LaneRound<std::uint32_t> lanes[rw::kWarpLanes];
  lanes[3].word = 1, lanes[3].view = ~(std::uint32_t{1} << 8);
  lanes[9].word = 2, lanes[9].view = ~(std::uint32_t{1} << 2);
  std::uint32_t const group = (1u << 0) | (1u << 3) | (1u << 5) | (1u << 9);
  std::uint32_t const need  = (1u << 0) | (1u << 5) | (1u << 9);
  EXPECT_EQ(corw::distribute(lanes, group, need), 1u);
  EXPECT_EQ(lanes[0].page, 40u);
  EXPECT_EQ(lanes[5].page, 66u);
  EXPECT_EQ(lanes[9].provider, -1);
  EXPECT_EQ(lanes[9].page, rw::kNoPage);
}

namespace {

/// One lock-step warp of 32 lanes (those of `wants`) on `pool`; the results per lane.
template <class W>
std::vector<rw::GetPageResult> warp_get(rw::HostPool<W>& pool,
                                        std::uint32_t wants,
                                        std::uint64_t seed) {
  rw::CorwLane lanes[rw::kWarpLanes];
  for (std::uint32_t l = 0; l < rw::kWarpLanes; ++l)
    lanes[l] = rw::CorwLane{rw::thread_rng(seed, l), ((wants >> l) & 1u) != 0, {}};
  rw::corw_get_pages(pool.template ref<core::HostAtomics>(), lanes, rw::kWarpLanes);
  std::vector<rw::GetPageResult> out;
  for (auto const& lane : lanes) out.push_back(lane.result);
  return out;
}

/// The rw catalog's violations on `pool` with owners: each lane's page, and `others` (pages used
/// before the warps ran) as one more owner.
template <class W>
std::vector<std::string> catalog(rw::HostPool<W> const& pool,
                                 std::vector<rw::GetPageResult> const& got,
                                 std::vector<std::uint32_t> const& others) {
  check::RwOwners owners(got.size() + 1);
  for (std::size_t l = 0; l < got.size(); ++l)
    if (got[l].ok()) owners[l].push_back(got[l].page);
  owners.back()     = others;
  auto const& used  = pool.used_words();
  auto const& locks = pool.lock_words();
  auto const s      = check::rw_snapshot(
      pool.config().num_pages, used.data(), used.size(), locks.data(), locks.size());
  std::vector<std::string> out;
  for (auto const& v : check::rw_check_all(s, owners)) out.push_back(v.to_string());
  return out;
}

template <class W>
void every_asking_lane_gets_a_distinct_free_page(std::uint32_t wants) {
  rw::HostPool<W> pool(config(4096, sizeof(W) * 8, 1000));
  std::vector<bool> const free = heaplab::rw_test::leave_random_pages_free(pool, 400, 99);
  std::vector<std::uint32_t> others;
  for (std::uint32_t p = 0; p < 4096; ++p)
    if (!free[p]) others.push_back(p);
  std::vector<rw::GetPageResult> const got = warp_get(pool, wants, 1234);
  std::set<std::uint32_t> distinct;
  for (std::uint32_t l = 0; l < rw::kWarpLanes; ++l) {
    if (((wants >> l) & 1u) == 0) {
      EXPECT_EQ(got[l].page, rw::kNoPage) << "lane " << l << " did not ask";
      EXPECT_EQ(got[l].steps, 0u);
      continue;
    }
    ASSERT_TRUE(got[l].ok()) << "lane " << l;
    EXPECT_TRUE(free[got[l].page]) << "lane " << l << " got page " << got[l].page << ", in use";
    EXPECT_TRUE(distinct.insert(got[l].page).second) << "page " << got[l].page << " twice";
    EXPECT_GE(got[l].steps, 1u);
  }
  for (W const lock : pool.lock_words()) EXPECT_EQ(lock, W{0}) << "LockMap not clear";
  EXPECT_EQ(catalog(pool, got, others), std::vector<std::string>{});
}

}  // namespace

TEST(CorwWarp, EveryAskingLaneGetsADistinctFreePageAndTheLockMapIsClearAfterwards) {
  for (std::uint32_t wants : {0xFFFFFFFFu, 0x55555555u, 0xA5A5A5A5u, 0x80000001u, 0x00000100u}) {
    every_asking_lane_gets_a_distinct_free_page<std::uint32_t>(wants);
    every_asking_lane_gets_a_distinct_free_page<std::uint64_t>(wants);
  }
}

TEST(CorwWarp, NearExhaustionHandsOutExactlyTheFreePagesThenNull) {
  // 5 free pages of 96 (32-bit words), 8 lanes ask: exactly the 5 free pages are handed out, the
  // other 3 lanes give up after max_steps rounds; the pool is then full and the LockMap clear.
  rw::HostPool<std::uint32_t> pool(config(96, 32, 50));
  std::set<std::uint32_t> const free = {3, 31, 40, 64, 95};
  std::vector<std::uint32_t> others;
  for (std::uint32_t p = 0; p < 96; ++p)
    if (free.count(p) == 0) pool.mark_used(p), others.push_back(p);
  std::vector<rw::GetPageResult> const got = warp_get(pool, 0xFFu, 77);
  std::set<std::uint32_t> handed;
  int nulls = 0;
  for (std::uint32_t l = 0; l < 8; ++l) {
    if (got[l].ok()) {
      EXPECT_TRUE(handed.insert(got[l].page).second);
    } else {
      ++nulls;
      EXPECT_EQ(got[l].steps, 50u) << "a null answer took max_steps rounds";
    }
  }
  EXPECT_EQ(handed, free);
  EXPECT_EQ(nulls, 3);
  for (std::uint32_t w : pool.used_words()) EXPECT_EQ(w, ~std::uint32_t{0});
  for (std::uint32_t lock : pool.lock_words()) EXPECT_EQ(lock, 0u);
  EXPECT_EQ(catalog(pool, got, others), std::vector<std::string>{});
}

namespace {

struct TasWas {
  double tas = 0;  // mean steps per lane
  double was = 0;  // mean over warps of the warp's largest step count
};

/// `warps` warps of 32 requests each on a pool of T pages with A free (32-bit words); every
/// warp's pages are freed after it, so each warp sees A free pages. CoRW: one lock-step warp;
/// RW-BM: 32 get_page_bm one after another.
TasWas measure(bool corw_warp, std::uint32_t t, std::uint32_t a, std::uint32_t warps) {
  rw::HostPool<std::uint32_t> pool(config(t, 32, 1u << 20));
  heaplab::rw_test::leave_random_pages_free(pool, a, 2024);
  auto const ref = pool.ref<core::HostAtomics>();
  TasWas m;
  for (std::uint32_t k = 0; k < warps; ++k) {
    std::vector<rw::GetPageResult> got;
    if (corw_warp) {
      got = warp_get(pool, 0xFFFFFFFFu, 500 + k);
    } else {
      for (std::uint32_t l = 0; l < 32; ++l) {
        rw::PageRng rng = rw::thread_rng(500 + k, l);
        got.push_back(ref.get_page_bm(rng));
      }
    }
    std::uint32_t warp_max = 0;
    for (auto const& r : got) {
      EXPECT_TRUE(r.ok());
      m.tas += r.steps;
      warp_max = std::max(warp_max, r.steps);
      ref.free_page(r.page);
    }
    m.was += warp_max;
  }
  m.tas /= 32.0 * warps;
  m.was /= warps;
  return m;
}

}  // namespace

TEST(CorwWarp, TasIsCloseToWasAndWasFarBelowRwBms) {
  // RW sec. 4.2: sharing pages within the warp shortens its longest walk. T = 2^15 pages (1024
  // words of 32 bits), 200 warps. At A/T = 50 % one round serves the whole warp (TAS = WAS = 1
  // up to rare misses). At A/T = 1 % a word has a free page with probability 1 - 0.99^32 = 0.275,
  // so RW-BM lanes walk ~3.6 steps and the slowest of 32 ~12, while a CoRW round finds ~10
  // pages for the whole warp (32 words x 32 bits x 1 %): WAS ~4 rounds.
  std::uint32_t const t = 1u << 15;
  TasWas const half     = measure(true, t, t / 2, 200);
  TasWas const corw1    = measure(true, t, t / 100, 200);
  TasWas const bm1      = measure(false, t, t / 100, 200);
  std::printf("A/T 50 %%: CoRW TAS %.3f WAS %.3f\n", half.tas, half.was);
  std::printf(
      "A/T  1 %%: CoRW TAS %.3f WAS %.3f (TAS/WAS %.2f); RW-BM TAS %.3f WAS %.3f "
      "(TAS/WAS %.2f)\n",
      corw1.tas,
      corw1.was,
      corw1.tas / corw1.was,
      bm1.tas,
      bm1.was,
      bm1.tas / bm1.was);
  EXPECT_GE(half.tas / half.was, 0.8);
  EXPECT_LE(half.was, 1.1);
  EXPECT_LT(corw1.was * 2, bm1.was) << "CoRW's warp maximum is not far below RW-BM's";
  EXPECT_GT(corw1.tas / corw1.was, bm1.tas / bm1.was) << "CoRW's TAS is not closer to its WAS";
}

// ---------------------------------------------------------------- under the controlled scheduler

TEST(CorwExplorer, RwWorkloadsMixCoRWWarpsWithWalkers) {
  // A third of the rw workloads that are not RW_malloc ones (2/9 of all: ~133 of 600) have CoRW
  // warps; most of those also have RW / RW-BM threads
  // (which ignore the LockMap, so CoRW claims can be lost); the lane sets have gaps.
  int with_corw = 0, mixed = 0, gaps = 0;
  for (std::uint64_t seed = 1; seed <= 600; ++seed) {
    workloads::RwWorkload const w = workloads::random_rw_workload(seed);
    if (w.corw_lanes.empty()) continue;
    ++with_corw;
    bool walker = false;
    for (std::size_t i = 0; i < w.threads.size(); ++i) {
      if (w.algorithm_of(i) != core::RwAlgorithm::corw) {
        walker = true;
        continue;
      }
      std::uint32_t const lanes = w.corw_lanes[i];
      EXPECT_GE(core::popcount(lanes), 2);
      EXPECT_LT(lanes, 16u);
      if ((lanes & (lanes + 1)) != 0) ++gaps;  // not 0b0..01..1
    }
    mixed += walker ? 1 : 0;
  }
  EXPECT_GT(with_corw, 100);
  EXPECT_LT(with_corw, 170);
  EXPECT_GT(mixed, with_corw / 3);
  EXPECT_GT(gaps, 20);
  std::printf(
      "of 600 rw workloads: %d with CoRW warps, %d of them mixed with walkers\n", with_corw, mixed);
}

TEST(CorwExplorer, DefaultBudgetOnCoRWWorkloadsFindsNothing) {
  // Every workload with CoRW warps (random_rw_workload(seed, corw_always)), sequentially
  // consistent and in the weak-memory mode (stale reads of P: the lock is only a hint).
  for (bool weak : {false, true}) {
    explore::ExploreOptions o;  // mixed random/PCT, seeds 1.., 2000 runs
    if (weak) o.run.memory_model = explore::MemoryModel::release_acquire;
    auto const factory = [weak](std::uint64_t seed) {
      workloads::RwWorkload w = workloads::random_rw_workload(seed, true);
      w.observed_pages        = weak;
      return workloads::make_rw_program(w);
    };
    heaplab::rw_test::expect_explorer_finds_nothing(factory, o);
  }
}

namespace {

/// A two-thread workload on `pages` pages of 32-bit words, all pre-taken but `free`.
workloads::RwWorkload small_workload(std::uint32_t pages,
                                     std::set<std::uint32_t> const& free,
                                     std::vector<std::vector<workloads::RwOp>> threads,
                                     std::vector<std::uint32_t> corw_lanes) {
  workloads::RwWorkload w;
  w.config    = config(pages, 32, 3);
  w.algorithm = core::RwAlgorithm::rw_bm;
  w.seed_salt = 17;
  for (std::uint32_t p = 0; p < pages; ++p)
    if (free.count(p) == 0) w.pretaken.push_back(p);
  w.threads    = std::move(threads);
  w.corw_lanes = std::move(corw_lanes);
  return w;
}

}  // namespace

TEST(CorwExplorer, BoundedExhaustiveSearchFindsNothingOnSmallWorkloads) {
  // Every schedule with <= 3 preemptions of: a CoRW warp of 2 lanes (0 and 2) and an RW-BM
  // walker racing for 2 free pages of one word; the same with a free and a second getpage after;
  // two CoRW warps (lanes 0-1, lanes 1-2) on 3 free pages of 2 words (one finds the other's lock).
  using Op                            = workloads::RwOp;
  Op const get                        = Op{Op::Kind::get, 0};
  Op const free                       = Op{Op::Kind::free_own, 0};
  workloads::RwWorkload const cases[] = {
      small_workload(32, {5, 20}, {{get}, {get}}, {0b101, 0}),
      small_workload(32, {5, 20}, {{get, free}, {get, get}}, {0b011, 0}),
      small_workload(64, {5, 20, 40}, {{get}, {get}}, {0b011, 0b110}),
  };
  for (auto const& w : cases) {
    explore::ExploreOptions o;
    o.strategy                     = explore::StrategyKind::exhaustive;
    o.max_runs                     = 200000;
    o.preemption_bound             = 3;
    auto const factory             = [w](std::uint64_t) { return workloads::make_rw_program(w); };
    explore::ExploreReport const r = explore::explore(factory, o);
    EXPECT_FALSE(r.failure.has_value()) << r.failure_report;
    EXPECT_TRUE(r.exhausted) << r.runs << " schedules, cut short";
    std::printf("%llu schedules%s, %.2f s\n",
                static_cast<unsigned long long>(r.runs),
                r.exhausted ? " (bounded space exhausted)" : " (cut short)",
                r.seconds);
  }
}
