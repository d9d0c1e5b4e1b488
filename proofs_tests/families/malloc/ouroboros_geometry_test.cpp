// Ouroboros' geometry as heaplab knows it (src/heaplab/families/malloc/ouroboros_geometry.hpp;
// docs/rw.md "Ouroboros beside RW_malloc"): the page a request takes, the chunks of a pool, the
// chunks a wave can take and the guard that holds it, and the check of a grant, fed grants that
// are broken in each way it names. Expected values are worked out by hand from Ouroboros'
// Parameters.h (16 B .. 8 KiB pages in ten queues, 8 KiB chunks after 128 B of metadata).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "heaplab/families/malloc/ouroboros_geometry.hpp"

namespace heaplab::malloc_family::ouroboros {
namespace {

TEST(OuroborosGeometry, TheParametersAreOuroborosOwn) {
  EXPECT_EQ(kSmallestPage, 16u);
  EXPECT_EQ(kLargestPage, 8192u);
  EXPECT_EQ(kChunkStride, 8320u);
}

TEST(OuroborosGeometry, ARequestTakesThePowerOfTwoPageAtLeastSixteenBytes) {
  EXPECT_EQ(page_bytes(0), 0u);
  EXPECT_EQ(page_bytes(1), 16u);
  EXPECT_EQ(page_bytes(16), 16u);
  EXPECT_EQ(page_bytes(17), 32u);
  EXPECT_EQ(page_bytes(24), 32u);
  EXPECT_EQ(page_bytes(1000), 1024u);
  EXPECT_EQ(page_bytes(6000), 8192u);
  EXPECT_EQ(page_bytes(8192), 8192u);
  EXPECT_EQ(page_bytes(8193), 0u);  // CUDA's device malloc in Ouroboros, not a queue
}

TEST(OuroborosGeometry, APoolIsWholeChunksRoundedUp) {
  EXPECT_EQ(chunks_for(0), 1u);
  EXPECT_EQ(chunks_for(1), 1u);
  EXPECT_EQ(chunks_for(8320), 1u);
  EXPECT_EQ(chunks_for(8321), 2u);
  // 8 GiB = 8320 x 1,032,444 + 512.
  EXPECT_EQ(chunks_for(std::uint64_t{8} << 30), 1032445u);
}

TEST(OuroborosGeometry, AWaveTakesItsPagesInWholeChunksAndTheSlack) {
  EXPECT_EQ(wave_chunks({}), 64u);
  EXPECT_EQ(wave_chunks(std::vector<std::uint32_t>(512, 16)), 1u + 64u);  // 512 x 16 B = 8 KiB
  EXPECT_EQ(wave_chunks(std::vector<std::uint32_t>(513, 16)), 2u + 64u);
  EXPECT_EQ(wave_chunks({8192, 8192, 1}), 3u + 64u);  // 16,400 B of pages
  EXPECT_EQ(wave_chunks({9000}), 64u);                // served by no queue
}

TEST(OuroborosGeometry, APoolOfPagesIsWholeChunksOfPagesRoundedUp) {
  EXPECT_EQ(pool_chunks_for(0), 1u);
  EXPECT_EQ(pool_chunks_for(8192), 1u);
  EXPECT_EQ(pool_chunks_for(8193), 2u);
  EXPECT_EQ(pool_chunks_for(std::uint64_t{8} << 30), 1048576u);  // 8 GiB / 8 KiB
}

TEST(OuroborosGeometry, TheGuardHoldsOneWaveOfTheLargestRequests) {
  EXPECT_EQ(guard_chunks(std::uint64_t{1} << 20, 8192), (std::uint64_t{1} << 20) + 64);
  EXPECT_EQ(guard_chunks(10, 24), 1u + 64u);   // 10 pages of 32 B
  EXPECT_EQ(guard_chunks(1, 9000), 1u + 64u);  // counted as the largest page
  // The guard is never smaller than what wave_chunks allows a wave of those requests to take.
  std::vector<std::uint32_t> const wave(4096, 3000);
  EXPECT_GE(guard_chunks(wave.size(), 3000), wave_chunks(wave));
}

TEST(OuroborosGeometry, PagesAreNumberedChunkByChunk) {
  EXPECT_EQ(page_number(128, 256), 0u);
  EXPECT_EQ(page_number(128 + 31 * 256, 256), 31u);  // a chunk's last 256-B page
  EXPECT_EQ(page_number(8320 + 128, 256), 32u);      // the next chunk's first
  EXPECT_EQ(page_number(5 * 8320 + 128 + 16, 16), 5u * 512u + 1u);
}

TEST(OuroborosGeometry, AGrantIsAPageOfAChunkInThePoolOrTheGuard) {
  // Two pool chunks and one guard chunk; 16-byte pages unless said.
  EXPECT_EQ(classify(128, 16, 2, 1), Grant::in_pool);
  EXPECT_EQ(classify(128 + 16 * 511, 16, 2, 1), Grant::in_pool);  // the chunk's last page
  EXPECT_EQ(classify(8320 + 128 + 4096, 4096, 2, 1), Grant::in_pool);
  EXPECT_EQ(classify(2 * 8320 + 128, 16, 2, 1), Grant::in_guard);
}

TEST(OuroborosGeometry, BrokenGrantsAreNamed) {
  EXPECT_EQ(classify(0, 16, 2, 1), Grant::in_metadata);
  EXPECT_EQ(classify(127, 16, 2, 1), Grant::in_metadata);
  EXPECT_EQ(classify(8320 + 64, 16, 2, 1), Grant::in_metadata);
  EXPECT_EQ(classify(128 + 8, 16, 2, 1), Grant::misaligned);
  EXPECT_EQ(classify(128 + 32, 64, 2, 1), Grant::misaligned);  // 32 B into 64-B pages
  EXPECT_EQ(classify(128, 0, 2, 1), Grant::misaligned);        // a request no queue serves
  EXPECT_EQ(classify(3 * 8320 + 128, 16, 2, 1), Grant::past_guard);
  EXPECT_EQ(classify(3 * 8320, 16, 2, 1), Grant::past_guard);  // before the metadata check
  EXPECT_STREQ(grant_name(Grant::past_guard), "past the guard (Ouroboros ran over its queues)");
}

}  // namespace
}  // namespace heaplab::malloc_family::ouroboros
