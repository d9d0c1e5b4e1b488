// Ouroboros' memory geometry (github.com/GPUPeople/Ouroboros, its Parameters.h as fetched by
// tools/fetch-ouroboros; docs/malloc.md "Peers"), as numbers heaplab's code can use without
// Ouroboros' headers: the benchmarks that put Ouroboros beside RW_malloc (heaplab_bench rw
// fig8-11, docs/rw.md) size its guard and check its grants with them. Plain C++, no CUDA;
// gpu/peer_ouroboros.cu asserts at compile time that Ouroboros' own constants are these.
#pragma once

#include <cstdint>
#include <vector>

namespace heaplab::malloc_family::ouroboros {

inline constexpr std::uint64_t kSmallestPage  = 16;  // SMALLEST_PAGE_SIZE
inline constexpr std::uint64_t kQueues        = 10;  // NUM_QUEUES: pages of 16 B << q
inline constexpr std::uint64_t kLargestPage   = kSmallestPage << (kQueues - 1);  // 8 KiB
inline constexpr std::uint64_t kChunkPages    = kLargestPage;  // CHUNK_SIZE: a chunk's page bytes
inline constexpr std::uint64_t kChunkMetadata = 128;           // CHUNK_METADATA_SIZE, before them
inline constexpr std::uint64_t kChunkStride   = kChunkMetadata + kChunkPages;  // chunk to chunk

/// The page a request of `request` bytes takes: the smallest 16 B << q >= request; 0 when no
/// queue serves it (0 bytes, or above 8 KiB: Ouroboros hands those to CUDA's device malloc).
constexpr std::uint64_t page_bytes(std::uint64_t request) {
  if (request == 0 || request > kLargestPage) return 0;
  std::uint64_t page = kSmallestPage;
  while (page < request) page *= 2;
  return page;
}

/// Chunks that hold `bytes` (chunk strides, metadata included), rounded up, at least one.
constexpr std::uint64_t chunks_for(std::uint64_t bytes) {
  std::uint64_t const c = (bytes + kChunkStride - 1) / kChunkStride;
  return c == 0 ? 1 : c;
}

/// Chunks whose pages hold `bytes` (8 KiB each; their metadata comes on top, as RW_malloc's
/// bitmap lies outside its pages), rounded up, at least one: a benchmark's pool for Ouroboros.
constexpr std::uint64_t pool_chunks_for(std::uint64_t bytes) {
  std::uint64_t const c = (bytes + kChunkPages - 1) / kChunkPages;
  return c == 0 ? 1 : c;
}

/// Chunks added to a wave's page bytes for the chunks its queues hold partly used: at least two
/// per queue (one being filled, one taken by a racing semaphore), with a margin.
inline constexpr std::uint64_t kSlackChunks = 64;

/// The most chunks one wave of requests for `bytes` can take from Ouroboros' chunk counter.
inline std::uint64_t wave_chunks(std::vector<std::uint32_t> const& bytes) {
  std::uint64_t pages = 0;
  for (std::uint32_t b : bytes) pages += page_bytes(b);
  return (pages + kChunkPages - 1) / kChunkPages + kSlackChunks;
}

/// A guard past the pool, in chunks, that holds one wave of `requests` requests of up to
/// max_bytes each (a request no queue serves counted as the largest page).
constexpr std::uint64_t guard_chunks(std::uint64_t requests, std::uint64_t max_bytes) {
  std::uint64_t const page = page_bytes(max_bytes) == 0 ? kLargestPage : page_bytes(max_bytes);
  return (requests * page + kChunkPages - 1) / kChunkPages + kSlackChunks;
}

/// The page number of a grant among the pages of `page` bytes of all chunks (chunk c's pages are
/// c * (8 KiB / page) ..): dense page ids as RW's GETPAGE hands out (fig7). The grant must be a
/// page (classify).
constexpr std::uint64_t page_number(std::uint64_t offset, std::uint64_t page) {
  return offset / kChunkStride * (kChunkPages / page) +
         (offset % kChunkStride - kChunkMetadata) / page;
}

/// Where a grant lies, given as a byte offset from the first chunk.
enum class Grant : std::uint8_t {
  in_pool,      // a page of one of the pool's chunks
  in_guard,     // a page of a guard chunk: beyond the memory the figure compares (a null there)
  misaligned,   // not at a multiple of its page size after its chunk's metadata
  in_metadata,  // inside a chunk's 128 B of metadata
  past_guard,   // in or past the chunk after the guard: Ouroboros overwrote its own queues
};

/// Classifies a grant of a request whose page is `page` bytes (page_bytes), on an instance of
/// pool_chunks + guard_chunks usable chunks.
constexpr Grant classify(std::uint64_t offset,
                         std::uint64_t page,
                         std::uint64_t pool_chunks,
                         std::uint64_t guard_chunks) {
  std::uint64_t const chunk  = offset / kChunkStride;
  std::uint64_t const inside = offset % kChunkStride;
  if (chunk >= pool_chunks + guard_chunks) return Grant::past_guard;
  if (inside < kChunkMetadata) return Grant::in_metadata;
  if (page == 0 || (inside - kChunkMetadata) % page != 0) return Grant::misaligned;
  return chunk < pool_chunks ? Grant::in_pool : Grant::in_guard;
}

/// "in the pool", "in the guard", ... for messages.
constexpr char const* grant_name(Grant g) {
  switch (g) {
    case Grant::in_pool:
      return "in the pool";
    case Grant::in_guard:
      return "in the guard";
    case Grant::misaligned:
      return "not at a page boundary of its size";
    case Grant::in_metadata:
      return "inside a chunk's metadata";
    case Grant::past_guard:
      return "past the guard (Ouroboros ran over its queues)";
  }
  return "?";
}

}  // namespace heaplab::malloc_family::ouroboros
