// rw::DeviceSizeClassQueue (size_class_queue.hpp, docs/rw.md "Baselines"), the baseline of
// RW_malloc's figures, on a GPU (SKIPPED without one):
//  - a wave with requests of every class (1 .. 512 pages) and inactive threads gets disjoint
//    chunks of 2^ceil(log2 n) pages inside the pool, carved back to back (carved() = their sum);
//  - a wave asking for more than the pool holds gets nulls (out of memory, no hang), the chunks it
//    did get are disjoint and inside the pool, a later wave gets only nulls;
//  - freed chunks come back to their class: a wave of the same sizes is served from the rings
//    alone (one step each, nothing carved) with exactly the freed chunks;
//  - bad input is a precondition_error on the host.
// The chunk a request must get is computed here by a naive loop, never by the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/rw/device_baselines.hpp"
#include "heaplab/rw/page_pool.hpp"

namespace core = heaplab::core;
namespace rw   = heaplab::rw;

namespace {

std::uint32_t chunk_for(std::uint32_t n) {
  std::uint32_t chunk = 1;
  while (chunk < n) chunk *= 2;
  return chunk;
}

/// Sizes of a wave of `threads`: every fifth thread inactive, the others 1 .. max_pages pages
/// (seeded), so that every class appears.
std::vector<std::uint32_t> sizes(std::uint32_t threads,
                                 std::uint32_t max_pages,
                                 std::uint64_t seed) {
  std::vector<std::uint32_t> pages(threads);
  rw::PageRng rng{seed};
  for (std::uint32_t i = 0; i < threads; ++i) pages[i] = i % 5 == 4 ? 0 : 1 + rng.below(max_pages);
  return pages;
}

struct Checked {
  std::uint64_t chunk_pages = 0;  // pages of the chunks handed out
  std::uint32_t nulls       = 0;  // active threads that got nothing
  rw::FreePageWave held;          // what was handed out, as a free wave
};

/// Checks a wave's answers: inactive threads get nothing, chunks are disjoint (also from `owner`'s
/// earlier ones) and inside the pool. Records the chunks in `owner`.
Checked check_wave(std::vector<std::uint32_t> const& pages,
                   rw::AllocResult const& r,
                   std::vector<bool>& owner) {
  Checked out;
  EXPECT_EQ(r.first.size(), pages.size());
  for (std::size_t i = 0; i < pages.size(); ++i) {
    if (pages[i] == 0) {
      EXPECT_EQ(r.first[i], rw::kNoPage) << "inactive thread " << i << " got a chunk";
      EXPECT_EQ(r.steps[i], 0u);
      continue;
    }
    if (r.first[i] == rw::kNoPage) {
      ++out.nulls;
      continue;
    }
    std::uint32_t const chunk = chunk_for(pages[i]);
    EXPECT_LE(std::uint64_t{r.first[i]} + chunk, owner.size())
        << "thread " << i << ": chunk of " << chunk << " at " << r.first[i] << " beyond the pool";
    for (std::uint64_t p = r.first[i]; p < std::uint64_t{r.first[i]} + chunk && p < owner.size();
         ++p) {
      EXPECT_FALSE(owner[p]) << "thread " << i << ": page " << p << " handed out twice";
      owner[p] = true;
    }
    out.chunk_pages += chunk;
    out.held.first.push_back(r.first[i]);
    out.held.count.push_back(pages[i]);
  }
  return out;
}

TEST(DeviceSizeClassQueue, AWaveOfEveryClassGetsDisjointChunksCarvedBackToBack) {
  HEAPLAB_REQUIRE_GPU();
  std::uint32_t const t = 1u << 22;
  rw::DeviceSizeClassQueue q(t, 10);  // up to 512 pages
  ASSERT_EQ(q.max_request_pages(), 512u);
  std::vector<std::uint32_t> const pages = sizes(8192, 512, 3);  // about 1.7M pages of chunks
  for (std::uint32_t block : {256u, 64u}) {
    SCOPED_TRACE("block " + std::to_string(block));
    q.reset();
    std::vector<bool> owner(t, false);
    Checked const c = check_wave(pages, q.allocate(pages, block), owner);
    EXPECT_EQ(c.nulls, 0u) << "the pool holds every chunk of this wave";
    EXPECT_EQ(q.carved(), c.chunk_pages) << "every chunk carved, back to back";
    for (std::uint32_t k = 0; k < 10; ++k) EXPECT_EQ(q.available(k), 0) << "class " << k;
  }
}

TEST(DeviceSizeClassQueue, ExhaustionGivesNullsAndFreedChunksComeBackToTheirClass) {
  HEAPLAB_REQUIRE_GPU();
  std::uint32_t const t = 100003;    // not a power of two
  rw::DeviceSizeClassQueue q(t, 8);  // up to 128 pages
  std::vector<bool> owner(t, false);
  std::vector<std::uint32_t> const pages = sizes(4096, 128, 5);  // about 200K pages asked for
  Checked const first                    = check_wave(pages, q.allocate(pages), owner);
  EXPECT_GT(first.nulls, 0u) << "the wave asks for twice the pool";
  // Carves are fetch_adds on one counter: the successful ones cover [0, end), and the first that
  // failed (or the last refused look) saw end + its chunk > T, so end > T - 128.
  EXPECT_LE(first.chunk_pages, t);
  EXPECT_GT(first.chunk_pages, t - 128) << "the pool is spent up to less than the largest chunk";
  // Chunks of the largest class no longer fit (carved >= end > T - 128); the rings are empty.
  rw::AllocResult const again = q.allocate(std::vector<std::uint32_t>(1024, 128));
  for (std::uint32_t p : again.first) EXPECT_EQ(p, rw::kNoPage) << "a spent pool answers null";
  // Free every chunk: each class's ring gets back exactly its chunks.
  std::map<std::uint32_t, std::multiset<std::uint32_t>> freed;  // class -> first pages
  for (std::size_t k = 0; k < first.held.first.size(); ++k) {
    std::uint32_t cls = 0;
    while ((1u << cls) < first.held.count[k]) ++cls;
    freed[cls].insert(first.held.first[k]);
  }
  std::uint64_t const carved = q.carved();
  q.free(first.held);
  // (Read with count, not operator[]: an empty entry for a class nothing was granted in would
  // make `freed` differ from `got` below; on an H200 no 1-page chunk was granted once.)
  for (std::uint32_t k = 0; k < 8; ++k)
    EXPECT_EQ(q.available(k), static_cast<std::int64_t>(freed.count(k) ? freed.at(k).size() : 0))
        << "class " << k;
  // The same requests again: served from the rings alone, one step each, the same chunks.
  rw::AllocResult const reuse = q.allocate(first.held.count);
  std::map<std::uint32_t, std::multiset<std::uint32_t>> got;
  for (std::size_t k = 0; k < reuse.first.size(); ++k) {
    ASSERT_NE(reuse.first[k], rw::kNoPage) << "request " << k << ": its class's ring had a chunk";
    // Served by its ring: no carve (checked below). Not "one step": a take that loses the race for
    // the ring's count retries, and each retry is a step (it happened under compute-sanitizer's
    // initcheck, which schedules the threads its own way).
    EXPECT_GE(reuse.steps[k], 1u) << "request " << k;
    std::uint32_t cls = 0;
    while ((1u << cls) < first.held.count[k]) ++cls;
    got[cls].insert(reuse.first[k]);
  }
  EXPECT_EQ(got, freed);
  EXPECT_EQ(q.carved(), carved) << "nothing carved while the rings held chunks";
}

TEST(DeviceSizeClassQueue, BadInputIsAPreconditionErrorOnTheHost) {
  HEAPLAB_REQUIRE_GPU();
  EXPECT_THROW(rw::DeviceSizeClassQueue(0, 4), core::precondition_error);
  EXPECT_THROW(rw::DeviceSizeClassQueue(100, 0), core::precondition_error);
  EXPECT_THROW(rw::DeviceSizeClassQueue(100, rw::kMaxSizeClasses + 1), core::precondition_error);
  rw::DeviceSizeClassQueue q(100, 4);  // up to 8 pages
  EXPECT_THROW((void)q.allocate({1, 9}), core::precondition_error);
  EXPECT_THROW((void)q.allocate({1}, 48), core::precondition_error);
  rw::FreePageWave beyond;
  beyond.first = {96};
  beyond.count = {5};  // a chunk of 8 at 96 ends beyond T = 100
  EXPECT_THROW(q.free(beyond), core::precondition_error);
  EXPECT_EQ(q.carved(), 0u) << "nothing was launched";
}

}  // namespace
