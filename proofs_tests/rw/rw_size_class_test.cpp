// The size-class queue (size_class_queue.hpp, docs/rw.md "Baselines"), RW_malloc's figures'
// baseline, on the CPU: its portable core over HostAtomics, sequentially and on std::threads, and
// the benchmarks' output check rw::RunLedger (wave_checks.hpp) fed broken runs. Expected chunks
// are computed here by naive loops (a power of two >= n), never by the code under test.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/size_class_queue.hpp"
#include "heaplab/rw/wave_checks.hpp"

namespace core = heaplab::core;
namespace rw   = heaplab::rw;

namespace {

using Ref = rw::SizeClassQueueRef<core::HostAtomics>;

/// The chunk a request of n pages must get: the smallest power of two >= n (a naive loop).
std::uint32_t chunk_for(std::uint32_t n) {
  std::uint32_t chunk = 1;
  while (chunk < n) chunk *= 2;
  return chunk;
}

/// Pages held by some chunk: owner[p] = request + 1, 0 = nobody. Fails the test on an overlap or a
/// chunk beyond the pool.
struct Owners {
  std::vector<std::uint32_t> owner;
  explicit Owners(std::uint32_t t) : owner(t, 0) {}
  void take(std::uint32_t first, std::uint32_t n, std::uint32_t who) {
    std::uint32_t const chunk = chunk_for(n);
    ASSERT_LE(std::uint64_t{first} + chunk, owner.size())
        << "request " << who << " of " << n << " pages: chunk at " << first << " beyond the pool";
    for (std::uint32_t p = first; p < first + chunk; ++p) {
      ASSERT_EQ(owner[p], 0u) << "request " << who << " of " << n << " pages at " << first
                              << ": page " << p << " already held by request " << owner[p] - 1;
      owner[p] = who + 1;
    }
  }
};

TEST(RwSizeClassQueue, ClassesAreCeilLog2) {
  std::uint32_t const n[]    = {1, 2, 3, 4, 5, 7, 8, 9, 511, 512, 513, 2048};
  std::uint32_t const want[] = {0, 1, 2, 2, 3, 3, 3, 4, 9, 9, 10, 11};
  for (std::size_t k = 0; k < std::size(n); ++k)
    EXPECT_EQ(rw::size_class_of(n[k]), want[k]) << n[k];
  EXPECT_EQ(rw::size_classes_for(512), 10u);  // chunks of 1 .. 512 pages
  EXPECT_EQ(rw::class_ring_capacity(1000, 0), 1000u);
  EXPECT_EQ(rw::class_ring_capacity(1000, 3), 125u);
  EXPECT_EQ(rw::class_ring_capacity(5, 4), 1u);  // no chunk of 16 fits: one slot, never used
}

TEST(RwSizeClassQueue, SequentialRequestsGetDisjointChunksInsideThePool) {
  std::uint32_t const t = 1000;
  rw::HostSizeClassQueue q(t, 6);  // requests of 1 .. 32 pages
  Ref const ref = q.ref<core::HostAtomics>();
  Owners owners(t);
  std::uint64_t chunk_pages = 0;
  std::uint32_t who         = 0;
  for (;; ++who) {
    std::uint32_t const n     = 1 + (who * 7) % 32;  // 1, 8, 15, 22, 29, 4, ...: every class
    rw::GetPageResult const r = ref.get(n);
    if (!r.ok()) break;
    owners.take(r.page, n, who);
    if (HasFatalFailure()) return;
    chunk_pages += chunk_for(n);
  }
  EXPECT_GT(who, 10u);
  EXPECT_EQ(q.carved(), chunk_pages) << "sequential carves are back to back";
  EXPECT_GT(chunk_pages + 32, t) << "the first null came with less than a chunk left";
}

TEST(RwSizeClassQueue, ExhaustionAnswersNullAndLosesNothingSequentially) {
  rw::HostSizeClassQueue q(10, 3);  // T = 10, chunks of 1, 2, 4 pages
  Ref const ref = q.ref<core::HostAtomics>();
  EXPECT_EQ(ref.get(4).page, 0u);
  EXPECT_EQ(ref.get(3).page, 4u);  // a chunk of 4: pages 4..7
  rw::GetPageResult const big = ref.get(4);
  EXPECT_FALSE(big.ok()) << "pages 8..11 do not fit in T = 10, got " << big.page;
  EXPECT_EQ(big.steps, 2u) << "one look at the ring, one carve";
  EXPECT_EQ(q.carved(), 8u) << "a refused carve leaves the counter alone";
  EXPECT_EQ(ref.get(2).page, 8u);
  EXPECT_FALSE(ref.get(1).ok());
  EXPECT_FALSE(ref.get(2).ok());
  EXPECT_EQ(q.carved(), 10u);
  EXPECT_THROW((void)ref.get(5), core::precondition_error);  // beyond 2^(C-1) pages
  EXPECT_THROW((void)ref.get(0), core::precondition_error);
  EXPECT_THROW(ref.free(8, 4), core::precondition_error);  // a chunk of 4 at 8 ends beyond T
}

TEST(RwSizeClassQueue, FreedChunksStayInTheirClass) {
  rw::HostSizeClassQueue q(8, 4);  // T = 8, chunks of 1, 2, 4, 8
  Ref const ref = q.ref<core::HostAtomics>();
  EXPECT_EQ(ref.get(3).page, 0u);  // chunk 0..3
  EXPECT_EQ(ref.get(2).page, 4u);  // chunk 4..5 (chunks are carved back to back, not aligned)
  EXPECT_EQ(ref.get(1).page, 6u);
  EXPECT_EQ(ref.get(1).page, 7u);  // the pool is spent
  EXPECT_FALSE(ref.get(1).ok());
  ref.free(0, 3);
  EXPECT_EQ(q.available(2), 1);
  EXPECT_FALSE(ref.get(1).ok()) << "a chunk of class 2 never serves class 0";
  EXPECT_FALSE(ref.get(2).ok()) << "a chunk of class 2 never serves class 1";
  rw::GetPageResult const again = ref.get(4);
  EXPECT_EQ(again.page, 0u) << "the freed chunk serves its class again";
  EXPECT_EQ(again.steps, 1u) << "from the ring, no carve";
  ref.free(7, 1);
  ref.free(4, 2);
  EXPECT_EQ(ref.get(1).page, 7u);
  EXPECT_EQ(ref.get(2).page, 4u);
  EXPECT_EQ(q.available(0) + q.available(1) + q.available(2), 0);
}

/// `threads` std::threads each take chunks of seeded sizes until a null; then every chunk is
/// checked for overlap. Returns the pages held.
std::uint64_t take_until_null(rw::HostSizeClassQueue& q,
                              std::uint32_t t,
                              std::uint32_t threads,
                              std::uint32_t max_pages) {
  Ref const ref = q.ref<core::HostAtomics>();
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> got(threads);
  std::vector<std::thread> pool;
  for (std::uint32_t k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      rw::PageRng rng{k + 1};
      for (;;) {
        std::uint32_t const n     = 1 + rng.below(max_pages);
        rw::GetPageResult const r = ref.get(n);
        if (!r.ok()) return;
        got[k].emplace_back(r.page, n);
      }
    });
  for (auto& th : pool) th.join();
  Owners owners(t);
  std::uint64_t held = 0;
  std::uint32_t who  = 0;
  for (auto const& mine : got)
    for (auto const& [first, n] : mine) {
      owners.take(first, n, who++);
      if (::testing::Test::HasFatalFailure()) return held;
      held += chunk_for(n);
    }
  return held;
}

TEST(RwSizeClassQueue, ThreadsCarvingAtOnceGetDisjointChunks) {
  std::uint32_t const t = 1u << 16;
  rw::HostSizeClassQueue q(t, 7);  // up to 64 pages
  std::uint64_t const held = take_until_null(q, t, 8, 64);
  // Every thread stopped at a null, so a carve failed: the successful carves cover [0, end) with
  // end > T - 64 (the failing carve started at end or later and did not fit).
  EXPECT_GT(held, t - 64);
  EXPECT_GE(q.carved(), held);
}

TEST(RwSizeClassQueue, ThreadsTakingAndFreeingNeverShareAPage) {
  std::uint32_t const t = 256, threads = 8, rounds = 20000;
  rw::HostSizeClassQueue q(t, 5);  // up to 16 pages: the pool is carved within a few rounds
  Ref const ref = q.ref<core::HostAtomics>();
  std::vector<std::atomic<std::uint32_t>> owner(t);
  std::atomic<std::uint64_t> twice{0}, served{0};
  std::vector<std::thread> pool;
  for (std::uint32_t k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      rw::PageRng rng{100 + k};
      for (std::uint32_t j = 0; j < rounds; ++j) {
        std::uint32_t const n     = 1 + rng.below(16);
        rw::GetPageResult const r = ref.get(n);
        if (!r.ok()) continue;
        ++served;
        std::uint32_t const chunk = chunk_for(n);
        for (std::uint32_t p = r.page; p < r.page + chunk && p < t; ++p)
          if (owner[p].exchange(k + 1) != 0) ++twice;
        for (std::uint32_t p = r.page; p < r.page + chunk && p < t; ++p) owner[p].store(0);
        ref.free(r.page, n);
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(twice.load(), 0u) << "a page was handed out while another thread held it";
  EXPECT_GT(served.load(), rounds) << "freed chunks must be handed out again";
  // At quiescence every chunk ever carved is back in its ring: the pages in the rings are the
  // pages carved (or, if a racing carve overshot T, all but a tail of < 16 pages).
  std::uint64_t in_rings = 0;
  for (std::uint32_t c = 0; c < 5; ++c) in_rings += std::uint64_t(q.available(c)) << c;
  if (q.carved() <= t) {
    EXPECT_EQ(in_rings, q.carved());
  } else {
    EXPECT_GT(in_rings, t - 16);
    EXPECT_LE(in_rings, t);
  }
}

// ---------------------------------------------------------------- RunLedger (the bench check)

TEST(RwRunLedger, DisjointRunsInsideThePoolPass) {
  rw::RunLedger ledger(200);
  EXPECT_EQ(ledger.take(0, 1), "");
  EXPECT_EQ(ledger.take(1, 63), "");    // up to the end of word 0
  EXPECT_EQ(ledger.take(64, 130), "");  // words 1..3
  EXPECT_EQ(ledger.take(199, 1), "");   // the last page
  EXPECT_EQ(ledger.held_pages(), 195u);
  ledger.clear();
  EXPECT_EQ(ledger.take(0, 200), "") << "clear() forgets every run";
}

TEST(RwRunLedger, OverlapBeyondThePoolAndEmptyRunsAreViolations) {
  rw::RunLedger ledger(200);
  ASSERT_EQ(ledger.take(60, 10), "");  // pages 60..69, across words 0 and 1
  std::string const overlap = ledger.take(69, 2);
  EXPECT_NE(overlap.find("page 69 is already held"), std::string::npos) << overlap;
  std::string const inside = ledger.take(0, 100);
  EXPECT_NE(inside.find("page 60 is already held"), std::string::npos) << inside;
  std::string const beyond = ledger.take(195, 6);
  EXPECT_NE(beyond.find("beyond the pool"), std::string::npos) << beyond;
  EXPECT_NE(ledger.take(5, 0).find("empty run"), std::string::npos);
  EXPECT_EQ(ledger.held_pages(), 10u) << "a refused run records nothing";
  EXPECT_EQ(ledger.take(70, 1), "") << "the refused runs left no page behind";
  EXPECT_EQ(ledger.take(0, 60), "");
}

}  // namespace
