// rw::DevicePool and the GPU baselines (docs/rw.md "The GPU pool", "Baselines"), on a GPU
// (SKIPPED without one):
//  - allocation waves with RW, RW-BM, CoRW and RW_malloc (runs of 1-8 pages) on 32- and 64-bit
//    words, all threads active, every other thread inactive and random subsets: inactive threads
//    get nothing, active ones distinct free pages; the copied-back words pass check::rw_check_all
//    against the owners built from the results; a free wave brings the pool back;
//  - the device preset leaves exactly A pages free (popcount of the copied-back words), the
//    pages perm(0..A-1) of the host's PagePermutation;
//  - bad input is a precondition_error on the host;
//  - the queue hands out distinct pages (the preset's), an empty ring answers null, freed pages
//    come back; DO counts up to its capacity.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/check/rw_invariants.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/rw/device_baselines.hpp"
#include "heaplab/rw/device_pool.hpp"
#include "heaplab/rw/preset.hpp"

namespace check = heaplab::check;
namespace core  = heaplab::core;
namespace rw    = heaplab::rw;

namespace {

rw::PoolConfig config(std::uint32_t t, std::uint32_t word_bits) {
  rw::PoolConfig c;
  c.num_pages  = t;
  c.page_bytes = 256;
  c.word_bits  = word_bits;
  c.max_steps  = 1u << 20;
  return c;
}

check::RwPoolSnapshot snapshot(rw::DevicePool const& pool) {
  rw::PoolWords const w = pool.words();
  check::RwPoolSnapshot s;
  s.num_pages  = pool.config().num_pages;
  s.word_bits  = pool.config().word_bits;
  s.used_words = w.used;
  s.lock_words = w.locks;
  return s;
}

/// Pages below T whose used bit is clear.
std::uint64_t free_pages(rw::DevicePool const& pool) {
  rw::PoolWords const w = pool.words();
  std::uint32_t const t = pool.config().num_pages, bits = pool.config().word_bits;
  std::uint64_t used = 0;
  for (std::uint64_t word : w.used) used += core::popcount(word);
  std::uint64_t const padding = std::uint64_t{w.used.size()} * bits - t;  // bits >= T, set
  return std::uint64_t{t} - (used - padding);
}

std::string violations(std::vector<check::Violation> const& v) {
  std::string out;
  for (auto const& x : v) out += x.to_string() + "\n";
  return out;
}

/// Activity patterns of a wave of n threads; an active thread asks for one page, or for RW_malloc
/// a run of 1-8 pages.
std::vector<std::uint32_t> pattern(char const* name,
                                   std::uint32_t n,
                                   std::uint64_t seed,
                                   core::RwAlgorithm a) {
  std::vector<std::uint32_t> pages(n, 1);
  std::string const p = name;
  rw::PageRng rng{seed};
  for (std::uint32_t i = 0; i < n; ++i) {
    if (p == "every-other") pages[i] = i % 2;
    if (p == "random") pages[i] = rng.below(3) == 0 ? 1 : 0;  // about a third of each warp
    if (p == "one-lane") pages[i] = i % 32 == 5 ? 1 : 0;
    if (a == core::RwAlgorithm::rw_malloc && pages[i] != 0) pages[i] = 1 + (i * 7) % 8;
  }
  return pages;
}

struct WaveCase {
  core::RwAlgorithm algorithm;
  std::uint32_t word_bits;
};

class DevicePoolWaves : public ::testing::TestWithParam<WaveCase> {};

TEST_P(DevicePoolWaves, DistinctFreePagesThatPassTheCatalogAndFreeBack) {
  HEAPLAB_REQUIRE_GPU();
  WaveCase const wc     = GetParam();
  std::uint32_t const t = 10007;  // not a multiple of the word: padding bits in the last word
  rw::DevicePool pool(config(t, wc.word_bits));
  std::vector<std::uint32_t> taken;  // held by "the pool" owner (setup)
  for (std::uint32_t p = 0; p < 3000; p += 3) taken.push_back(p);
  pool.mark_used(taken);
  std::uint64_t seed = 11;
  // RW_malloc's runs average 4.5 pages: fewer threads (about 4000 pages), so that the pool (9007
  // free: runs of 2 among the first 3000 pages, then 7007 in one stretch) has runs for all.
  std::uint32_t const threads = wc.algorithm == core::RwAlgorithm::rw_malloc ? 900 : 3000;
  for (char const* name : {"all", "every-other", "random", "one-lane"}) {
    for (std::uint32_t block : {256u, 64u}) {
      SCOPED_TRACE(std::string(core::rw_algorithm_name(wc.algorithm)) + " w=" +
                   std::to_string(wc.word_bits) + " " + name + " block " + std::to_string(block));
      rw::GetPageWave wave;
      wave.algorithm          = wc.algorithm;
      wave.pages              = pattern(name, threads, seed, wc.algorithm);
      wave.block_threads      = block;
      wave.seed               = seed++;
      rw::AllocResult const r = pool.allocate(wave);
      ASSERT_EQ(r.first.size(), wave.pages.size());
      check::RwOwners owners{taken};
      std::set<std::uint32_t> got;
      rw::FreePageWave back;  // every thread frees what it got: a page, or its run with free_run
      for (std::size_t i = 0; i < wave.pages.size(); ++i) {
        if (wave.pages[i] == 0) {
          EXPECT_EQ(r.first[i], rw::kNoPage) << "inactive thread " << i << " got a page";
          EXPECT_EQ(r.steps[i], 0u) << "inactive thread " << i << " walked";
          continue;
        }
        std::uint32_t const n = wave.pages[i];
        ASSERT_LE(std::uint64_t{r.first[i]} + n, t)
            << "thread " << i << " got no run of " << n << " in " << r.steps[i] << " steps";
        EXPECT_GE(r.steps[i], 1u);
        std::vector<std::uint32_t> run;
        for (std::uint32_t p = r.first[i]; p < r.first[i] + n; ++p) {
          EXPECT_EQ(std::count(taken.begin(), taken.end(), p), 0)
              << "thread " << i << " got page " << p << ", which was in use";
          EXPECT_TRUE(got.insert(p).second) << "page " << p << " went to two";
          run.push_back(p);
        }
        owners.push_back(run);
        back.first.push_back(r.first[i]);
        back.count.push_back(n);
      }
      auto const v = check::rw_check_all(snapshot(pool), owners);
      EXPECT_TRUE(v.empty()) << violations(v);
      pool.free(back);
      auto const after = check::rw_check_all(snapshot(pool), check::RwOwners{taken});
      EXPECT_TRUE(after.empty()) << violations(after);
      EXPECT_EQ(free_pages(pool), t - taken.size());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms,
                         DevicePoolWaves,
                         ::testing::Values(WaveCase{core::RwAlgorithm::rw, 32},
                                           WaveCase{core::RwAlgorithm::rw, 64},
                                           WaveCase{core::RwAlgorithm::rw_bm, 32},
                                           WaveCase{core::RwAlgorithm::rw_bm, 64},
                                           WaveCase{core::RwAlgorithm::corw, 32},
                                           WaveCase{core::RwAlgorithm::corw, 64},
                                           WaveCase{core::RwAlgorithm::rw_malloc, 32},
                                           WaveCase{core::RwAlgorithm::rw_malloc, 64}),
                         [](auto const& info) {
                           std::string name = core::rw_algorithm_name(info.param.algorithm);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name + std::to_string(info.param.word_bits);
                         });

TEST(DevicePool, AFullPoolAnswersNullAfterMaxSteps) {
  HEAPLAB_REQUIRE_GPU();
  rw::PoolConfig c = config(100, 32);
  c.max_steps      = 50;
  rw::DevicePool pool(c);
  pool.preset_free(0, 1);
  for (core::RwAlgorithm a : {core::RwAlgorithm::rw, core::RwAlgorithm::rw_bm}) {
    rw::GetPageWave wave;
    wave.algorithm = a;
    wave.pages.assign(64, 1);
    rw::AllocResult const r = pool.allocate(wave);
    for (std::size_t i = 0; i < r.first.size(); ++i) {
      EXPECT_EQ(r.first[i], rw::kNoPage);
      EXPECT_EQ(r.steps[i], 50u);
    }
  }
}

TEST(DevicePool, PresetLeavesExactlyTheFreePagesOfThePermutation) {
  HEAPLAB_REQUIRE_GPU();
  for (std::uint32_t bits : {32u, 64u}) {
    for (std::uint32_t t : {1u, 97u, 4096u, 100003u, 1u << 22}) {
      rw::DevicePool pool(config(t, bits));
      for (std::uint32_t a : {0u, 1u, t / 200, t / 2, t}) {
        std::uint64_t const seed = 3 + a;
        pool.preset_free(a, seed);
        EXPECT_EQ(free_pages(pool), a) << "T = " << t << ", w = " << bits;
        if (t > 200000) continue;
        // Exactly the pages perm(0..a-1), by the host's permutation.
        rw::PoolWords const w = pool.words();
        rw::PagePermutation const perm(t, seed);
        std::vector<bool> want_free(t, false);
        for (std::uint32_t i = 0; i < a; ++i) want_free[perm(i)] = true;
        for (std::uint32_t p = 0; p < t; ++p) {
          bool const is_free = ((w.used[p / bits] >> (p % bits)) & 1u) == 0;
          ASSERT_EQ(is_free, want_free[p]) << "page " << p << ", T = " << t << ", A = " << a;
        }
        for (std::uint64_t lock : w.locks) EXPECT_EQ(lock, 0u);
      }
      pool.reset();
      EXPECT_EQ(free_pages(pool), t);
    }
  }
}

TEST(DevicePool, PresetOfTheBenchmarkSize) {
  HEAPLAB_REQUIRE_GPU();
  std::uint32_t const t = 1u << 25;  // 8 GiB of 256-byte pages
  rw::DevicePool pool(config(t, 32));
  for (double percent : {50.0, 0.5}) {
    auto const a = static_cast<std::uint32_t>(t * percent / 100);
    pool.preset_free(a, 42);
    EXPECT_EQ(free_pages(pool), a) << percent << " %";
  }
}

TEST(DevicePool, BadInputIsAPreconditionErrorOnTheHost) {
  HEAPLAB_REQUIRE_GPU();
  EXPECT_THROW(rw::DevicePool(config(0, 32)), core::precondition_error);
  EXPECT_THROW(rw::DevicePool(config(100, 16)), core::precondition_error);
  rw::DevicePool pool(config(100, 32));
  rw::GetPageWave two;
  two.algorithm = core::RwAlgorithm::rw_bm;
  two.pages     = {1, 2};
  EXPECT_THROW(pool.allocate(two), core::precondition_error);
  rw::FreePageWave not_used;
  not_used.first = {7};
  not_used.count = {1};
  EXPECT_THROW(pool.free(not_used), core::precondition_error);
  EXPECT_THROW(pool.mark_used({100}), core::precondition_error);
  pool.mark_used({5});
  EXPECT_THROW(pool.mark_used({5}), core::precondition_error);
  EXPECT_THROW(pool.preset_free(101, 1), core::precondition_error);
  EXPECT_THROW((void)pool.storage64(), core::precondition_error);
  // The pool is still usable: nothing was launched.
  EXPECT_EQ(free_pages(pool), 99u);
}

TEST(DeviceQueue, HandsOutThePresetPagesOnceThenNullAndTakesFreesBack) {
  HEAPLAB_REQUIRE_GPU();
  std::uint32_t const t = 5000, a = 600;  // fewer than the 682 active threads below
  rw::DeviceQueue q(t);
  q.preset_free(a, 9);
  EXPECT_EQ(q.available(), a);
  std::vector<std::uint32_t> pages(1024, 1);
  for (std::uint32_t i = 0; i < 1024; i += 3) pages[i] = 0;  // some inactive lanes
  auto const active = static_cast<std::uint32_t>(std::count(pages.begin(), pages.end(), 1u));
  ASSERT_GT(active, a) << "the wave must ask for more pages than the ring holds";
  rw::AllocResult const r = q.allocate(pages);
  rw::PagePermutation const perm(t, 9);
  std::set<std::uint32_t> preset;
  for (std::uint32_t i = 0; i < a; ++i) preset.insert(perm(i));
  std::set<std::uint32_t> got;
  std::uint32_t nulls = 0;
  for (std::size_t i = 0; i < pages.size(); ++i) {
    if (pages[i] == 0) {
      EXPECT_EQ(r.first[i], rw::kNoPage);
      continue;
    }
    if (r.first[i] == rw::kNoPage) {
      ++nulls;
      EXPECT_EQ(r.steps[i], 1u);
      continue;
    }
    EXPECT_TRUE(preset.count(r.first[i])) << "page " << r.first[i] << " was not in the ring";
    EXPECT_TRUE(got.insert(r.first[i]).second) << "page " << r.first[i] << " went to two";
  }
  EXPECT_EQ(got.size(), a) << "every page of the ring handed out";
  EXPECT_EQ(nulls, active - a) << "the others found the ring empty";
  EXPECT_EQ(q.available(), 0);
  // Free them all and take them again.
  q.free(std::vector<std::uint32_t>(got.begin(), got.end()));
  EXPECT_EQ(q.available(), a);
  rw::AllocResult const again = q.allocate(std::vector<std::uint32_t>(a, 1));
  EXPECT_EQ(std::set<std::uint32_t>(again.first.begin(), again.first.end()), got);
  rw::AllocResult const empty = q.allocate(std::vector<std::uint32_t>(64, 1));
  for (std::uint32_t p : empty.first) EXPECT_EQ(p, rw::kNoPage) << "an empty ring answers null";
}

TEST(DeviceDirectOutput, CountsUpToTheCapacity) {
  HEAPLAB_REQUIRE_GPU();
  rw::DeviceDirectOutput out(1000);
  rw::AllocResult const r = out.allocate(std::vector<std::uint32_t>(1500, 1));
  std::vector<bool> seen(1000, false);
  std::uint32_t nulls = 0;
  for (std::uint32_t p : r.first) {
    if (p == rw::kNoPage) {
      ++nulls;
      continue;
    }
    ASSERT_LT(p, 1000u);
    EXPECT_FALSE(seen[p]);
    seen[p] = true;
  }
  EXPECT_EQ(nulls, 500u);
  EXPECT_EQ(out.counter(), 1500u);
  out.reset();
  EXPECT_EQ(out.counter(), 0u);
}

}  // namespace
