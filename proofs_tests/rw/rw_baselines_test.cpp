// The host-side parts of the GPU random-walk work (docs/rw.md "The GPU pool", "Baselines"), on
// the CPU: the preset permutation (preset.hpp), the queue baseline's portable core on
// std::threads (queue_pool.hpp, HostAtomics), DO (direct_output.hpp) and the waves' host checks
// (wave_checks.hpp). Expected values are counted by hand or by naive loops here.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/rw/analysis.hpp"
#include "heaplab/rw/device_pool.hpp"
#include "heaplab/rw/direct_output.hpp"
#include "heaplab/rw/preset.hpp"
#include "heaplab/rw/queue_pool.hpp"
#include "heaplab/rw/wave_checks.hpp"

namespace core = heaplab::core;
namespace rw   = heaplab::rw;

namespace {

// ---------------------------------------------------------------- the preset permutation

TEST(RwPreset, PermutationIsABijectionOfThePages) {
  for (std::uint32_t t : {1u, 2u, 3u, 5u, 31u, 32u, 33u, 100u, 1000u, 4097u, 65537u, 100003u}) {
    for (std::uint64_t seed : {0ull, 1ull, 7ull}) {
      rw::PagePermutation const perm(t, seed);
      std::vector<bool> hit(t, false);
      for (std::uint32_t i = 0; i < t; ++i) {
        std::uint32_t const p = perm(i);
        ASSERT_LT(p, t) << "T = " << t << ", seed " << seed << ", i = " << i;
        ASSERT_FALSE(hit[p]) << "T = " << t << ", seed " << seed << ": page " << p
                             << " comes out twice (i = " << i << ")";
        hit[p] = true;
      }
    }
  }
}

TEST(RwPreset, DifferentSeedsPickDifferentPages) {
  std::uint32_t const t = 1u << 16, a = 100;
  std::set<std::uint32_t> first, second;
  for (std::uint32_t i = 0; i < a; ++i) {
    first.insert(rw::PagePermutation(t, 1)(i));
    second.insert(rw::PagePermutation(t, 2)(i));
  }
  std::vector<std::uint32_t> common;
  std::set_intersection(
      first.begin(), first.end(), second.begin(), second.end(), std::back_inserter(common));
  // Independent uniform choices share a * a / t = 0.15 pages on average.
  EXPECT_LE(common.size(), 5u);
}

/// The number of 32-page words holding at least one of the free pages perm(0..a-1).
std::uint32_t words_with_a_free_page(std::uint32_t t, std::uint32_t a, std::uint64_t seed) {
  rw::PagePermutation const perm(t, seed);
  std::vector<bool> word(t / 32, false);
  for (std::uint32_t i = 0; i < a; ++i) word[perm(i) / 32] = true;
  return static_cast<std::uint32_t>(std::count(word.begin(), word.end(), true));
}

TEST(RwPreset, FreePagesSpreadOverWordsLikeAUniformChoice) {
  // RW-BM's step count depends on how many words hold a free page (Eq. 4 assumes a uniform
  // choice of the A free pages). For a uniform choice, a word of 32 pages holds none with
  // probability prod_{j<32} (T - A - j) / (T - j).
  std::uint32_t const t = 1u << 16, a = 655;  // 1 % free
  double empty = 1;
  for (int j = 0; j < 32; ++j) empty *= static_cast<double>(t - a - j) / (t - j);
  double const expected = (t / 32) * (1 - empty);  // 563.5
  double mean           = 0;
  int const seeds       = 20;
  for (int s = 0; s < seeds; ++s) mean += words_with_a_free_page(t, a, 1000 + s) / double(seeds);
  // One seed's count has a standard deviation of about 20 words; the mean of 20 about 4.5.
  EXPECT_NEAR(mean, expected, 0.03 * expected);
}

// ---------------------------------------------------------------- the queue baseline

using HostQueueRef = rw::QueueRef<core::HostAtomics>;

TEST(RwQueue, HandsOutEveryPageOnceThenNull) {
  rw::HostQueue q(8, 8, 8);
  HostQueueRef const ref = q.ref<core::HostAtomics>();
  std::set<std::uint32_t> got;
  for (int k = 0; k < 8; ++k) {
    rw::GetPageResult const r = ref.get_page();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.steps, 1u);
    got.insert(r.page);
  }
  EXPECT_EQ(got, (std::set<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  rw::GetPageResult const empty = ref.get_page();
  EXPECT_FALSE(empty.ok()) << "an empty ring must answer null, not page " << empty.page;
  EXPECT_EQ(empty.steps, 1u);
  EXPECT_EQ(q.available(), 0);
}

TEST(RwQueue, EmptyRingReturnsNullAndAPageFreedLaterIsHandedOut) {
  rw::HostQueue q(4, 4, 0);
  HostQueueRef const ref = q.ref<core::HostAtomics>();
  EXPECT_FALSE(ref.get_page().ok());
  EXPECT_FALSE(ref.get_page().ok());
  EXPECT_EQ(q.available(), 0) << "a null answer must give back the unit it took";
  ref.free_page(3);
  rw::GetPageResult const r = ref.get_page();
  EXPECT_TRUE(r.ok()) << "page 3 was freed, the ring is not empty";
  EXPECT_EQ(r.page, 3u);
}

TEST(RwQueue, FreedPagesComeBackInFifoOrderOverManyLaps) {
  rw::HostQueue q(3, 3, 3);  // every page in the ring: 0, 1, 2
  HostQueueRef const ref = q.ref<core::HostAtomics>();
  std::vector<std::uint32_t> order;
  for (int round = 0; round < 100; ++round) {  // 100 laps of a ring of 3
    rw::GetPageResult const r = ref.get_page();
    ASSERT_TRUE(r.ok()) << "round " << round;
    order.push_back(r.page);
    ref.free_page(r.page);
  }
  for (std::size_t k = 0; k < order.size(); ++k) EXPECT_EQ(order[k], k % 3) << "request " << k;
  EXPECT_EQ(q.available(), 3);
}

TEST(RwQueue, FreeBeyondThePoolIsAPreconditionError) {
  rw::HostQueue q(4, 4, 0);
  EXPECT_THROW(q.ref<core::HostAtomics>().free_page(4), core::precondition_error);
  EXPECT_THROW(rw::HostQueue(4, 3, 0), core::precondition_error);  // capacity < T
  EXPECT_THROW(rw::HostQueue(0, 4, 0), core::precondition_error);
}

TEST(RwQueue, ThreadsTakingPagesAtOnceGetDistinctPages) {
  std::uint32_t const t = 4096, threads = 8, each = t / threads;
  rw::HostQueue q(t, t, t);
  HostQueueRef const ref = q.ref<core::HostAtomics>();
  std::vector<std::vector<std::uint32_t>> got(threads);
  std::vector<std::thread> pool;
  for (std::uint32_t k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      for (std::uint32_t j = 0; j < each; ++j) got[k].push_back(ref.get_page().page);
    });
  for (auto& th : pool) th.join();
  std::vector<bool> seen(t, false);
  for (auto const& pages : got)
    for (std::uint32_t p : pages) {
      ASSERT_LT(p, t) << "a request got null although the ring held a page for it";
      EXPECT_FALSE(seen[p]) << "page " << p << " went to two requests";
      seen[p] = true;
    }
  EXPECT_FALSE(ref.get_page().ok());
}

/// `threads` threads, each `rounds` times: take a page, own it (owner word 0 -> me), give it
/// back (owner -> 0), free it. Returns the nulls; fails the test on a page held twice.
std::uint64_t churn(rw::HostQueue& q,
                    std::uint32_t t,
                    std::uint32_t threads,
                    std::uint32_t rounds) {
  HostQueueRef const ref = q.ref<core::HostAtomics>();
  std::vector<std::atomic<std::uint32_t>> owner(t);
  std::atomic<std::uint64_t> nulls{0}, twice{0};
  std::vector<std::thread> pool;
  for (std::uint32_t k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      for (std::uint32_t j = 0; j < rounds; ++j) {
        rw::GetPageResult const r = ref.get_page();
        if (!r.ok()) {
          ++nulls;
          continue;
        }
        if (owner[r.page].exchange(k + 1) != 0) ++twice;
        owner[r.page].store(0);
        ref.free_page(r.page);
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(twice.load(), 0u) << "a page was handed out while another thread held it";
  return nulls.load();
}

TEST(RwQueue, ContendedTakeAndFreeOnASmallRingLosesNoPage) {
  // 8 pages, 8 threads: the ring wraps every 8 tickets, so slow and fast threads of different
  // laps meet on one slot (the sequence codes' job).
  std::uint32_t const t = 8;
  rw::HostQueue q(t, t, t);
  std::uint64_t const nulls = churn(q, t, 8, 20000);
  EXPECT_LT(nulls, 8u * 20000u);
  EXPECT_EQ(q.available(), t) << "every page back in the ring at quiescence";
  HostQueueRef const ref = q.ref<core::HostAtomics>();
  std::set<std::uint32_t> drained;
  for (std::uint32_t k = 0; k < t; ++k) drained.insert(ref.get_page().page);
  EXPECT_EQ(drained.size(), t);
  EXPECT_EQ(*drained.rbegin(), t - 1);
  EXPECT_FALSE(ref.get_page().ok());
}

TEST(RwQueue, Eq1WasIsTheMeanLastPlaceOfAWarpByEnumeration) {
  // Every set of k distinct places among 1..N, equally likely: the mean of its largest place.
  for (unsigned n : {5u, 8u, 12u}) {
    for (unsigned k : {1u, 2u, 3u, 5u}) {
      double sum = 0, sets = 0;
      for (unsigned mask = 0; mask < (1u << n); ++mask) {
        if (static_cast<unsigned>(__builtin_popcount(mask)) != k) continue;
        sum += 32 - __builtin_clz(mask);  // the highest place taken, 1-based
        sets += 1;
      }
      EXPECT_NEAR(heaplab::rw::analysis::queue_was(n, k), sum / sets, 1e-12) << n << " " << k;
    }
  }
  EXPECT_NEAR(heaplab::rw::analysis::queue_was(33 * 1000 - 1), 32 * 1000, 1e-9);  // 32 N / 33
}

// ---------------------------------------------------------------- DO

TEST(RwDirectOutput, CountsUpToTheCapacityThenNull) {
  std::uint64_t next = 0;
  rw::DirectOutputRef<core::HostAtomics> const ref(rw::DirectOutputStorage{&next, 3});
  for (std::uint32_t k = 0; k < 3; ++k) {
    rw::GetPageResult const r = ref.get_page();
    EXPECT_EQ(r.page, k);
    EXPECT_EQ(r.steps, 1u);
  }
  EXPECT_FALSE(ref.get_page().ok());
  EXPECT_EQ(next, 4u);
}

TEST(RwDirectOutput, ThreadsGetEachPageOnce) {
  std::uint64_t next          = 0;
  std::uint32_t const cap     = 5000;
  std::uint32_t const threads = 8, each = 1000;
  rw::DirectOutputRef<core::HostAtomics> const ref(rw::DirectOutputStorage{&next, cap});
  std::vector<std::vector<std::uint32_t>> got(threads);
  std::vector<std::thread> pool;
  for (std::uint32_t k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      for (std::uint32_t j = 0; j < each; ++j) got[k].push_back(ref.get_page().page);
    });
  for (auto& th : pool) th.join();
  std::vector<bool> seen(cap, false);
  std::uint32_t nulls = 0;
  for (auto const& pages : got)
    for (std::uint32_t p : pages) {
      if (p == rw::kNoPage) {
        ++nulls;
        continue;
      }
      ASSERT_LT(p, cap);
      EXPECT_FALSE(seen[p]);
      seen[p] = true;
    }
  EXPECT_EQ(nulls, threads * each - cap);
}

// ---------------------------------------------------------------- wave checks (host)

rw::PoolConfig config(std::uint32_t t, std::uint32_t w) {
  rw::PoolConfig c;
  c.num_pages = t;
  c.word_bits = w;
  return c;
}

TEST(RwWaveChecks, OnePageAlgorithmsTakeZeroOrOnePage) {
  rw::GetPageWave wave;
  wave.pages = {1, 0, 1};
  for (core::RwAlgorithm a :
       {core::RwAlgorithm::rw, core::RwAlgorithm::rw_bm, core::RwAlgorithm::corw}) {
    wave.algorithm = a;
    EXPECT_NO_THROW(rw::validate_alloc_wave(config(64, 32), wave));
  }
  wave.pages = {1, 2, 1};
  for (core::RwAlgorithm a :
       {core::RwAlgorithm::rw, core::RwAlgorithm::rw_bm, core::RwAlgorithm::corw}) {
    wave.algorithm = a;
    EXPECT_THROW(rw::validate_alloc_wave(config(64, 32), wave), core::precondition_error);
  }
  wave.algorithm = core::RwAlgorithm::rw_malloc;  // runs of pages
  EXPECT_NO_THROW(rw::validate_alloc_wave(config(64, 32), wave));
  wave.pages = {65};
  EXPECT_THROW(rw::validate_alloc_wave(config(64, 32), wave), core::precondition_error);
  wave.pages = {1024};  // max_run_pages(32): the 32 words one warp reads
  EXPECT_NO_THROW(rw::validate_alloc_wave(config(4096, 32), wave));
  wave.pages = {1025};
  EXPECT_THROW(rw::validate_alloc_wave(config(4096, 32), wave), core::precondition_error);
  wave.pages = {2048};
  EXPECT_NO_THROW(rw::validate_alloc_wave(config(4096, 64), wave));
}

TEST(RwWaveChecks, BlockSizeIsWholeWarps) {
  rw::GetPageWave wave;
  wave.pages = {1};
  for (std::uint32_t b : {0u, 16u, 48u, 2048u}) {
    wave.block_threads = b;
    EXPECT_THROW(rw::validate_alloc_wave(config(64, 32), wave), core::precondition_error) << b;
  }
  for (std::uint32_t b : {32u, 256u, 1024u}) {
    wave.block_threads = b;
    EXPECT_NO_THROW(rw::validate_alloc_wave(config(64, 32), wave)) << b;
  }
}

TEST(RwWaveChecks, AFreeOfAPageNotInUseIsCaughtOnTheHost) {
  rw::PoolConfig const c = config(70, 32);  // 3 words; bits 70..95 of the last are padding
  std::vector<std::uint64_t> used{0b1010, 0, 0xFFFFFFFF};  // pages 1, 3, 64..69 (+ padding) used
  rw::FreePageWave ok;
  ok.first = {1, 3, 64};
  ok.count = {1, 1, 6};
  EXPECT_NO_THROW(rw::check_free_wave_pages(c, ok, used));
  rw::FreePageWave not_used;
  not_used.first = {2};
  not_used.count = {1};
  try {
    rw::check_free_wave_pages(c, not_used, used);
    ADD_FAILURE() << "a free of page 2, which is free, passed";
  } catch (core::precondition_error const& e) {
    EXPECT_NE(std::string(e.what()).find("page 2, which is not in use"), std::string::npos)
        << e.what();
  }
  rw::FreePageWave twice;
  twice.first = {1, 1};
  twice.count = {1, 1};
  EXPECT_THROW(rw::check_free_wave_pages(c, twice, used), core::precondition_error);
  rw::FreePageWave beyond;
  beyond.first = {68};
  beyond.count = {3};  // 68, 69, 70: 70 is beyond T
  EXPECT_THROW(rw::check_free_wave_pages(c, beyond, used), core::precondition_error);
  rw::FreePageWave ragged;
  ragged.first = {1, 3};
  ragged.count = {1};
  EXPECT_THROW(rw::validate_free_wave(c, ragged), core::precondition_error);
}

}  // namespace
