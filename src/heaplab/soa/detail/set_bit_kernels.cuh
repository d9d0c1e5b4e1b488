// The GPU kernels of the hierarchical set-bit enumeration (DynaSOAr Alg. 5, sec. 4.1.5); the
// steps, the partition and the ordering argument are in set_bit_plan.hpp, the host side in
// set_bit_indices.cuh. nvcc only.
//
// Concurrency: none between the enumeration and the bitmap. The bitmap is quiescent (no kernel
// modifies it between the first and the last kernel of an enumeration), so its words are read
// with plain loads and every level is consistent (App. A.5 Def. 1). The chunked kernels run in
// stream order; a kernel reads what an earlier one wrote (lists, counts, chunk totals) after the
// kernel boundary, and within a block shared and global memory written before a __syncthreads()
// is visible after it; they use no atomics. The tiled kernel's thread blocks communicate through
// two device-scope atomics, both relaxed: the tile ticket (a fetch_add) and the tiles' state
// words (stores and loads of whole 64-bit words); enumerate_tiles_kernel states why relaxed is
// enough.
#pragma once

#include <cstdint>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "heaplab/core/atomics.hpp"

#include "heaplab/core/bitops.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/soa/detail/set_bit_plan.hpp"

namespace heaplab::soa::detail {

/// Threads per block of the chunked kernels and of the one-block kernel.
inline constexpr unsigned kChunkThreads    = 256;
inline constexpr unsigned kOneBlockThreads = 1024;

/// An ordered compaction of a range of a selected-container list by one thread block, one tile
/// of kThreads containers at a time: thread t loads container in[i] (i = tile + t), an
/// exclusive block scan of the popcounts gives its offset, then each warp writes the bits of 32
/// consecutive containers of the tile, lane k the bits k and k + 32 of each (coalesced: a
/// container's bits land in consecutive entries).
template <unsigned kThreads>
struct EnumerationTile {
  static_assert(kThreads % 32u == 0, "whole warps");
  using Scan = cub::BlockScan<std::uint32_t, kThreads>;

  struct Storage {
    typename Scan::TempStorage scan;
    std::uint64_t word[kThreads];
    std::uint32_t container[kThreads];
    std::uint32_t offset[kThreads];
  };

  /// Writes the set bits of the containers in[r.begin .. r.end) of `level` (in == nullptr: the
  /// list 0, 1, 2, ...) in list order to out[at ..]; returns how many (the same value in every
  /// thread). Every thread of the block calls it with the same arguments.
  __device__ static std::uint32_t write_range(Storage& s,
                                              LevelView const& level,
                                              std::uint32_t const* in,
                                              ChunkRange r,
                                              std::uint32_t* out,
                                              std::uint32_t at) {
    std::uint32_t written = 0;
    for (std::uint32_t tile = r.begin; tile < r.end; tile += kThreads) {
      std::uint32_t const i = tile + threadIdx.x;
      std::uint32_t c       = 0;
      std::uint64_t word    = 0;
      if (i < r.end) {
        c    = in == nullptr ? i : in[i];
        word = level.container(c);
      }
      std::uint32_t offset = 0;
      std::uint32_t total  = 0;
      Scan(s.scan).ExclusiveSum(static_cast<std::uint32_t>(__popcll(word)), offset, total);
      s.word[threadIdx.x]      = word;
      s.container[threadIdx.x] = c;
      s.offset[threadIdx.x]    = offset;
      __syncthreads();
      write_tile(s, out + at + written, 32u);
      __syncthreads();  // the next tile overwrites s (and reuses the scan's storage)
      written += total;
    }
    return written;
  }

  /// Warp w writes the bits of the tile's containers per_warp * w .. per_warp * (w + 1) - 1
  /// (s.word, s.container and s.offset of them set, visible to the block).
  __device__ static void write_tile(Storage const& s, std::uint32_t* out, unsigned per_warp) {
    unsigned const lane = threadIdx.x % 32u;
    unsigned const warp = threadIdx.x / 32u;
    for (unsigned j = 0; j < per_warp; ++j) {
      unsigned const k         = warp * per_warp + j;
      std::uint64_t const word = s.word[k];
      if (word == 0) continue;  // the same k, so the same decision, in every lane
      std::uint32_t const base  = s.offset[k];
      std::uint32_t const first = s.container[k] * 64u;
      for (unsigned bit = lane; bit < 64u; bit += 32u) {
        if (((word >> bit) & 1u) == 0) continue;
        unsigned const rank = static_cast<unsigned>(__popcll(word & core::low_bits(bit)));
        out[base + rank]    = first + bit;
      }
    }
  }
};

/// The one-block steps: levels top .. lowest, one after the other (list(top) = [0] implicit).
/// Step l reads list(l) from lists[l % 2] and writes list(l-1) to lists[(l - 1) % 2], or R to
/// `out` for l = 0; the length of the last list written goes to *out_count. One block of
/// kThreads (kOneBlockThreads) threads. (The kernels are templates so that every translation
/// unit including this header may instantiate them.)
template <unsigned kThreads>
__global__ void __launch_bounds__(kThreads) enumerate_top_levels_kernel(std::uint64_t const* words,
                                                                        core::BitmapLayout layout,
                                                                        std::uint32_t lowest,
                                                                        std::uint32_t* list0,
                                                                        std::uint32_t* list1,
                                                                        std::uint32_t* out,
                                                                        std::uint32_t* out_count) {
  using Tile = EnumerationTile<kThreads>;
  __shared__ typename Tile::Storage storage;
  std::uint32_t* const lists[2] = {list0, list1};
  std::uint32_t const top       = layout.num_levels - 1u;
  std::uint32_t n               = 1;  // |list(top)|
  for (std::uint32_t l = top;; --l) {
    std::uint32_t const* in = l == top ? nullptr : lists[l % 2u];
    std::uint32_t* dst      = l == 0 ? out : lists[(l - 1u) % 2u];
    n                       = Tile::write_range(
        storage, LevelView::of(words, layout, l), in, chunk_range(0, 1, n), dst, 0);
    if (l == lowest) break;
  }
  if (threadIdx.x == 0) *out_count = n;
}

/// Chunked step, first kernel: block b's chunk of list(l) (in[0 .. *in_count)), its number of
/// set bits to chunk_totals[b]. kThreads = kChunkThreads.
template <unsigned kThreads>
__global__ void __launch_bounds__(kThreads) count_chunks_kernel(LevelView level,
                                                                std::uint32_t const* in,
                                                                std::uint32_t const* in_count,
                                                                std::uint32_t* chunk_totals) {
  using Reduce = cub::BlockReduce<std::uint32_t, kThreads>;
  __shared__ typename Reduce::TempStorage reduce;
  ChunkRange const r = chunk_range(blockIdx.x, gridDim.x, *in_count);
  std::uint32_t bits = 0;
  for (std::uint32_t i = r.begin + threadIdx.x; i < r.end; i += kThreads)
    bits += static_cast<std::uint32_t>(__popcll(level.container(in[i])));
  std::uint32_t const total = Reduce(reduce).Sum(bits);
  if (threadIdx.x == 0) chunk_totals[blockIdx.x] = total;
}

/// The sum of chunk_totals[0 .. blockIdx.x) and of all gridDim.x totals, in every thread.
template <unsigned kThreads>
__device__ void chunk_offset(std::uint32_t const* chunk_totals,
                             std::uint32_t& before,
                             std::uint32_t& all) {
  using Reduce = cub::BlockReduce<std::uint32_t, kThreads>;
  __shared__ typename Reduce::TempStorage reduce;
  __shared__ std::uint32_t sums[2];
  std::uint32_t mine_before = 0;
  std::uint32_t mine_all    = 0;
  for (std::uint32_t j = threadIdx.x; j < gridDim.x; j += kThreads) {
    std::uint32_t const t = chunk_totals[j];
    mine_all += t;
    if (j < blockIdx.x) mine_before += t;
  }
  std::uint32_t const b = Reduce(reduce).Sum(mine_before);
  __syncthreads();  // the reduction's storage is reused
  std::uint32_t const a = Reduce(reduce).Sum(mine_all);
  if (threadIdx.x == 0) {
    sums[0] = b;
    sums[1] = a;
  }
  __syncthreads();
  before = sums[0];
  all    = sums[1];
}

/// Chunked step, second kernel: block b writes the bits of its chunk of list(l) from the sum
/// of the totals of chunks 0 .. b-1 (chunks in index order cover the list in order, so R or
/// list(l-1) stays sorted); the last block writes the total to *out_count. kThreads =
/// kChunkThreads.
template <unsigned kThreads>
__global__ void __launch_bounds__(kThreads) write_chunks_kernel(LevelView level,
                                                                std::uint32_t const* in,
                                                                std::uint32_t const* in_count,
                                                                std::uint32_t const* chunk_totals,
                                                                std::uint32_t* out,
                                                                std::uint32_t* out_count) {
  using Tile = EnumerationTile<kThreads>;
  __shared__ typename Tile::Storage storage;
  std::uint32_t before = 0;
  std::uint32_t all    = 0;
  chunk_offset<kThreads>(chunk_totals, before, all);
  if (blockIdx.x == gridDim.x - 1u && threadIdx.x == 0) *out_count = all;
  ChunkRange const r = chunk_range(blockIdx.x, gridDim.x, *in_count);
  Tile::write_range(storage, level, in, r, out, before);
}

/// What the enumeration does with each entry of R besides writing it: nothing.
struct NoVisit {
  __device__ void operator()(std::uint32_t) const {}
};

/// visit(out[i]) for every i < *count (the chunked enumeration's visit step, one kernel).
template <class Visit>
__global__ void visit_kernel(std::uint32_t const* out, std::uint32_t const* count, Visit visit) {
  std::uint32_t const n = *count;
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    visit(out[i]);
}

/// Where the tiled kernel gets its tile numbers: tile = fetch_add(*counter, 1) - base. The host
/// advances base by the grid size of every launch, so the counter never needs a reset.
struct TileTickets {
  unsigned long long* counter = nullptr;
  unsigned long long base     = 0;
};

/// The tiled enumeration (set_bit_plan.hpp "TILED"): one thread block of kThreads threads per
/// tile of kTileContainers level-0 containers, all in one launch of tiles_for(layout) blocks.
///  1. The block takes the next tile number from the ticket counter. Tickets, not blockIdx:
///     a block waits (step 3) only for tiles whose ticket was taken before its own, i.e. by
///     blocks already running, so the wait ends even if the grid is larger than what fits on
///     the GPU at once (thread blocks are not guaranteed to start in blockIdx order).
///  2. Thread k < 64 reads container k of the tile (tile_container: only if its summary bit is
///     set); a block scan of the popcounts gives each container's offset in the tile and the
///     tile's aggregate.
///  3. Warp 0 publishes the aggregate in states[tile] (tile 0: directly its inclusive value),
///     then looks back: its lanes read the states of the 32 preceding tiles at once, waiting
///     until each carries this enumeration's epoch; the nearest inclusive state ends the walk,
///     the aggregates before it are added, else the window moves 32 tiles back. Then it
///     publishes the inclusive value (the tile's linearization point: from here a later tile's
///     look-back stops at it); the last tile writes the total to *out_count.
///  4. The block writes its bits to out[prefix + offset ..] (R stays sorted: tiles in index
///     order cover the containers in order) and, after a __syncthreads(), calls visit on every
///     entry it wrote, spread over all its threads.
/// Memory orders: relaxed everywhere. The ticket's fetch_add is atomic, so tickets are
/// distinct. A state word carries its epoch, status and value in one 64-bit word written by one
/// store, so a reader that sees the epoch sees that write's value; nothing else is communicated
/// between blocks through memory (out is read only after the kernel ends), so no acquire or
/// release ordering is needed. A state of an earlier enumeration has another epoch (the host
/// never reuses an epoch without clearing the states) and is waited past, never read as a value.
template <unsigned kThreads, class Visit>
__global__ void __launch_bounds__(kThreads) enumerate_tiles_kernel(std::uint64_t const* words,
                                                                   core::BitmapLayout layout,
                                                                   TileTickets tickets,
                                                                   std::uint64_t* states,
                                                                   std::uint32_t epoch,
                                                                   std::uint32_t* out,
                                                                   std::uint32_t* out_count,
                                                                   Visit visit) {
  static_assert(
      kThreads >= kTileContainers && kThreads % 32u == 0 && kTileContainers % (kThreads / 32u) == 0,
      "a thread per container, the containers split evenly over the warps");
  using Tile = EnumerationTile<kThreads>;
  __shared__ typename Tile::Storage storage;
  __shared__ std::uint32_t shared_tile;
  __shared__ std::uint32_t shared_prefix;
  if (threadIdx.x == 0)
    shared_tile = static_cast<std::uint32_t>(
        core::DeviceAtomics::fetch_add(tickets.counter, 1ull, core::MemoryOrder::relaxed) -
        tickets.base);
  __syncthreads();
  std::uint32_t const tile = shared_tile;
  std::uint64_t const word =
      threadIdx.x < kTileContainers ? tile_container(words, layout, tile, threadIdx.x) : 0;
  std::uint32_t offset = 0;
  std::uint32_t total  = 0;
  typename Tile::Scan(storage.scan)
      .ExclusiveSum(static_cast<std::uint32_t>(__popcll(word)), offset, total);
  storage.word[threadIdx.x]      = word;
  storage.container[threadIdx.x] = tile * kTileContainers + threadIdx.x;
  storage.offset[threadIdx.x]    = offset;
  if (threadIdx.x < 32u) {
    unsigned const lane = threadIdx.x;
    auto const publish  = [&](std::uint32_t status, std::uint32_t value) {
      core::DeviceAtomics::store(
          states + tile, TileState::pack(epoch, status, value), core::MemoryOrder::relaxed);
    };
    if (lane == 0) publish(tile == 0 ? TileState::kInclusive : TileState::kAggregate, total);
    std::uint32_t prefix = 0;
    for (std::int64_t window = std::int64_t{tile} - 1; window >= 0; window -= 32) {
      std::int64_t const j = window - lane;  // lane 0 the nearest predecessor
      std::uint64_t state  = TileState::pack(epoch, TileState::kInclusive, 0);  // j < 0
      if (j >= 0) {
        do {
          state = core::DeviceAtomics::load(states + j, core::MemoryOrder::relaxed);
        } while (TileState::epoch(state) != epoch);
      }
      unsigned const inclusive =
          __ballot_sync(0xFFFFFFFFu, TileState::status(state) == TileState::kInclusive);
      // Lanes up to the nearest inclusive one (all 32 if none) contribute their values.
      unsigned const last = inclusive != 0 ? static_cast<unsigned>(__ffs(inclusive)) - 1u : 31u;
      std::uint32_t v     = lane <= last ? TileState::value(state) : 0u;
      for (unsigned d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, d);
      prefix += v;
      if (inclusive != 0) break;
    }
    if (lane == 0) {
      if (tile != 0) publish(TileState::kInclusive, prefix + total);
      if (tile == tiles_for(layout) - 1u) *out_count = prefix + total;
      shared_prefix = prefix;
    }
  }
  __syncthreads();
  std::uint32_t const prefix = shared_prefix;
  Tile::write_tile(storage, out + prefix, kTileContainers / (kThreads / 32u));
  __syncthreads();  // the block's writes to out are visible to all its threads
  for (std::uint32_t i = threadIdx.x; i < total; i += kThreads) visit(out[prefix + i]);
}

}  // namespace heaplab::soa::detail
