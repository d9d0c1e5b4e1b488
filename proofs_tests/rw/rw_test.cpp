// The random-walk page pool (issue 11; docs/rw.md): configuration, RW (Alg. 1) and RW-BM
// (sec. 4.1) on one thread, FREEPAGE's checks, the page model, and the rw / rw-weak workloads
// under the controlled scheduler.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include "heaplab/core/expects.hpp"
#include "heaplab/core/protocol_check.hpp"
#include "heaplab/families/interleaving/workloads/programs.hpp"
#include "heaplab/model/page_model.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "rw_explore_support.hpp"

namespace core      = heaplab::core;
namespace rw        = heaplab::rw;
namespace model     = heaplab::model;
namespace explore   = heaplab::explore;
namespace workloads = heaplab::interleaving_family::workloads;

namespace {

rw::PoolConfig config(std::uint32_t pages, std::uint32_t word_bits, std::uint32_t max_steps = 64) {
  rw::PoolConfig c;
  c.num_pages  = pages;
  c.word_bits  = word_bits;
  c.max_steps  = max_steps;
  c.page_bytes = 256;
  return c;
}

/// The message of the precondition_error that `c.validate()` throws ("" if none).
std::string validation_error(rw::PoolConfig const& c) {
  try {
    c.validate();
  } catch (core::precondition_error const& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(RwConfig, ValidationNamesEachBadField) {
  EXPECT_EQ(validation_error(config(100, 32)), "");
  EXPECT_NE(validation_error(config(0, 32)).find("T = 0"), std::string::npos);
  EXPECT_NE(validation_error(config(rw::kMaxPages + 1, 32)).find("exceeds the limit"),
            std::string::npos);
  auto c       = config(10, 64);
  c.page_bytes = 0;
  EXPECT_NE(validation_error(c).find("page size 0"), std::string::npos);
  c.page_bytes = 96;
  EXPECT_NE(validation_error(c).find("not a power of two"), std::string::npos);
  EXPECT_NE(validation_error(config(10, 16)).find("word width 16"), std::string::npos);
  EXPECT_NE(validation_error(config(10, 32, 0)).find("max_steps 0"), std::string::npos);
}

TEST(RwConfig, WordsAndLockWords) {
  EXPECT_EQ(config(1, 32).used_words(), 1u);
  EXPECT_EQ(config(32, 32).used_words(), 1u);
  EXPECT_EQ(config(33, 32).used_words(), 2u);
  EXPECT_EQ(config(65, 64).used_words(), 2u);
  EXPECT_EQ(config(33 * 32, 32).lock_words(), 2u);  // 33 used words, one lock bit each
  EXPECT_EQ(rw::initial_used_word<std::uint32_t>(0, 32), 0u);
  EXPECT_EQ(rw::initial_used_word<std::uint32_t>(1, 40), 0xFFFFFF00u);  // pages 32..39 real
  EXPECT_EQ(rw::initial_used_word<std::uint64_t>(0, 3), ~std::uint64_t{7});
  EXPECT_EQ(rw::initial_used_word<std::uint64_t>(2, 100), ~std::uint64_t{0});
}

template <class W>
void hands_out_every_page_once_then_null(bool bm, std::uint32_t pages) {
  rw::HostPool<W> pool(config(pages, sizeof(W) * 8, 4000));
  auto const ref = pool.template ref<core::HostAtomics>();
  rw::PageRng rng{42};
  std::set<std::uint32_t> got;
  for (std::uint32_t i = 0; i < pages; ++i) {
    rw::GetPageResult const r = bm ? ref.get_page_bm(rng) : ref.get_page_rw(rng);
    ASSERT_TRUE(r.ok()) << "request " << i << " of " << pages;
    EXPECT_GE(r.steps, 1u);
    EXPECT_LT(r.page, pages);
    EXPECT_TRUE(got.insert(r.page).second) << "page " << r.page << " handed out twice";
  }
  rw::GetPageResult const none = bm ? ref.get_page_bm(rng) : ref.get_page_rw(rng);
  EXPECT_FALSE(none.ok());
  EXPECT_EQ(none.page, rw::kNoPage);
  EXPECT_EQ(none.steps, 4000u) << "a null answer took exactly max_steps steps";
  ref.free_page(17 % pages);
  rw::GetPageResult const again = bm ? ref.get_page_bm(rng) : ref.get_page_rw(rng);
  EXPECT_EQ(again.page, 17 % pages) << "the only free page";
}

TEST(RwWalk, RwHandsOutEveryPageOnceThenNull) {
  hands_out_every_page_once_then_null<std::uint32_t>(false, 37);
  hands_out_every_page_once_then_null<std::uint64_t>(false, 70);
}

TEST(RwWalk, RwBmHandsOutEveryPageOnceThenNull) {
  hands_out_every_page_once_then_null<std::uint32_t>(true, 37);
  hands_out_every_page_once_then_null<std::uint64_t>(true, 130);
  hands_out_every_page_once_then_null<std::uint64_t>(true, 1);
}

TEST(RwWalk, RwBmStepsAreFewerThanRwOnAnAlmostFullPool) {
  // RW sec. 4.1.1: reading w bits per step divides TAS by up to w. 1 free page of 256.
  std::uint64_t rw_steps = 0, bm_steps = 0;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    for (bool bm : {false, true}) {
      rw::HostPool<std::uint64_t> pool(config(256, 64, 100000));
      for (std::uint32_t p = 0; p < 256; ++p)
        if (p != 99) pool.mark_used(p);
      rw::PageRng rng{seed};
      auto const ref            = pool.ref<core::HostAtomics>();
      rw::GetPageResult const r = bm ? ref.get_page_bm(rng) : ref.get_page_rw(rng);
      ASSERT_EQ(r.page, 99u);
      (bm ? bm_steps : rw_steps) += r.steps;
    }
  }
  EXPECT_LT(bm_steps * 8, rw_steps) << "RW " << rw_steps << " steps, RW-BM " << bm_steps;
}

/// Mean X_i of `n` requests on one thread, each page freed at once (so A stays constant).
template <class W>
double mean_steps(rw::HostPool<W>& pool, bool bm, std::uint32_t n) {
  auto const ref = pool.template ref<core::HostAtomics>();
  rw::PageRng rng{7};
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    rw::GetPageResult const r = bm ? ref.get_page_bm(rng) : ref.get_page_rw(rng);
    EXPECT_TRUE(r.ok());
    total += r.steps;
    ref.free_page(r.page);
  }
  return static_cast<double>(total) / n;
}

TEST(RwWalk, StepCountsAreGeometricOnOneThread) {
  // One thread, A free pages of T: each RW step succeeds with probability A / T, so
  // E(X_i) = T / A (RW sec. 3.2.2 with N = 1); an RW-BM step succeeds iff its word has a free
  // bit: 4 free pages in 4 of the 16 words gives E(X_i) = 16 / 4. 4000 requests: the sample
  // mean is within 5 % (more than 3 standard deviations).
  rw::HostPool<std::uint64_t> pool(config(1024, 64, 1u << 20));
  for (std::uint32_t p = 0; p < 1024; ++p)
    if (p % 64 != 0 || p >= 256) pool.mark_used(p);  // free: 0, 64, 128, 192
  double const bm = mean_steps(pool, true, 4000);
  EXPECT_NEAR(bm, 4.0, 0.2);
  rw::HostPool<std::uint32_t> pool32(config(1024, 32, 1u << 20));
  for (std::uint32_t p = 64; p < 1024; ++p) pool32.mark_used(p);  // A = 64
  double const walk = mean_steps(pool32, false, 4000);
  EXPECT_NEAR(walk, 16.0, 0.8);
  std::printf("mean X_i: RW-BM %.3f (expected 4), RW %.3f (expected 16)\n", bm, walk);
}

TEST(RwFree, BeyondThePoolIsAPreconditionAndADoubleFreeAProtocolViolation) {
  rw::HostPool<std::uint32_t> pool(config(40, 32));
  auto const ref = pool.ref<core::HostAtomics>();
  EXPECT_THROW(ref.free_page(40), core::precondition_error);
  EXPECT_THROW(ref.free_page(rw::kNoPage), core::precondition_error);
  EXPECT_THROW(ref.free_page(3), core::protocol_error);
  pool.mark_used(3);
  EXPECT_NO_THROW(ref.free_page(3));
  EXPECT_THROW(ref.free_page(3), core::protocol_error);
  EXPECT_EQ(pool.used_words()[0], 0u);
  EXPECT_EQ(pool.used_words()[1], 0xFFFFFF00u) << "bits >= T stay set";
}

TEST(RwWords, ClaimBitsWinsOnlyClearBitsAndReleaseBitsChecksEachBit) {
  rw::HostPool<std::uint64_t> pool(config(100, 64));
  auto const ref = pool.ref<core::HostAtomics>();
  pool.mark_used(1);
  EXPECT_EQ(ref.claim_bits(0, 0b111u), 0b101u) << "page 1 was someone else's";
  EXPECT_EQ(ref.load_word(0), 0b111u);
  EXPECT_EQ(ref.claim_bits(1, std::uint64_t{1} << 40), 0u) << "page 104 >= T: its bit is set";
  ref.release_bits(0, 0b101u);
  EXPECT_EQ(pool.used_words()[0], 0b010u);
  EXPECT_THROW(ref.release_bits(0, 0b011u), core::protocol_error) << "page 0 was free";
}

TEST(RwWords, LockMapBitPerUsedWord) {
  rw::HostPool<std::uint32_t> pool(config(32 * 40, 32));  // 40 used words, 2 lock words
  auto const ref = pool.ref<core::HostAtomics>();
  EXPECT_TRUE(ref.try_lock_word(33));
  EXPECT_FALSE(ref.try_lock_word(33)) << "already locked";
  EXPECT_TRUE(ref.try_lock_word(1));
  EXPECT_EQ(pool.lock_words()[1], 0b10u);
  EXPECT_EQ(pool.lock_words()[0], 0b10u);
  ref.unlock_word(33);
  ref.unlock_word(1);
  EXPECT_EQ(pool.lock_words()[0] | pool.lock_words()[1], 0u);
  EXPECT_THROW(ref.unlock_word(1), core::protocol_error) << "not locked";
}

TEST(PageModel, AcceptsAnyFreePageAndRejectsTheRest) {
  model::PageModel m(4);
  m.get_page(0, 2);
  m.get_page(1, 0);
  EXPECT_EQ(m.holder(2), 0u);
  EXPECT_THROW(m.get_page(1, 2), core::precondition_error);   // held by 0
  EXPECT_THROW(m.get_page(1, 4), core::precondition_error);   // >= T
  EXPECT_THROW(m.free_page(1, 2), core::precondition_error);  // not 1's
  EXPECT_THROW(m.free_page(1, 3), core::precondition_error);  // free
  m.get_page(1, model::PageModel::kNoPage);                   // 2 free: bounded-walk exhaustion
  EXPECT_EQ(m.bounded_walk_exhaustions(), 1u);
  m.hand_over(0, 5, 2);
  EXPECT_EQ(m.owners(6)[5], std::vector<std::uint32_t>{2});
  m.free_page(5, 2);
  m.get_page(0, 1);
  m.get_page(0, 2);
  m.get_page(0, 3);
  m.get_page(2, model::PageModel::kNoPage);  // none free: out of pages
  EXPECT_EQ(m.out_of_pages(), 1u);
  EXPECT_EQ(m.free_count(), 0u);
  EXPECT_EQ(m.pages_handed_out(), 5u);
}

TEST(RwExplorer, WorkloadsCoverBothWalksBothWidthsAndFewFreePages) {
  std::set<std::string> kinds;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    workloads::RwWorkload const w = workloads::random_rw_workload(seed);
    kinds.insert(core::rw_algorithm_name(w.algorithm) + std::to_string(w.config.word_bits));
    std::uint32_t const free = w.config.num_pages - static_cast<std::uint32_t>(w.pretaken.size());
    EXPECT_GE(free, 1u);
    // RW_malloc workloads: 1-3 free runs of 1-6 pages.
    EXPECT_LE(free, w.algorithm == core::RwAlgorithm::rw_malloc ? 18u : 4u);
    EXPECT_LE(w.config.used_words(), 3u);
  }
  EXPECT_EQ(
      kinds,
      (std::set<std::string>{"rw32", "rw64", "rw-bm32", "rw-bm64", "rw-malloc32", "rw-malloc64"}));
}

TEST(RwExplorer, DefaultBudgetFindsNothingInTheRealPool) {
  for (auto kind : {workloads::WorkloadKind::rw, workloads::WorkloadKind::rw_weak}) {
    explore::ExploreOptions o;  // mixed random/PCT, seeds 1.., 2000 runs
    if (workloads::is_weak_workload(kind))
      o.run.memory_model = explore::MemoryModel::release_acquire;
    heaplab::rw_test::expect_explorer_finds_nothing(workloads::workload_factory(kind), o);
  }
}

TEST(RwExplorer, BoundedExhaustiveSearchFindsNothingOnSmallWorkloads) {
  // Two threads racing for the last pages of a tiny pool, every schedule with <= 2 preemptions.
  for (std::uint64_t seed : {3u, 8u, 11u}) {
    workloads::RwWorkload w = workloads::random_rw_workload(seed);
    w.threads.resize(2);
    for (auto& ops : w.threads)
      if (ops.size() > 3) ops.resize(3);
    w.config.max_steps = 6;
    explore::ExploreOptions o;
    o.strategy                     = explore::StrategyKind::exhaustive;
    o.max_runs                     = 20000;
    auto const factory             = [w](std::uint64_t) { return workloads::make_rw_program(w); };
    explore::ExploreReport const r = explore::explore(factory, o);
    EXPECT_FALSE(r.failure.has_value()) << r.failure_report;
    std::printf("seed %llu: %llu schedules%s\n",
                static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(r.runs),
                r.exhausted ? " (bounded space exhausted)" : " (cut short)");
  }
}
