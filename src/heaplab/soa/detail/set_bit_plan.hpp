// The arithmetic of the GPU set-bit enumeration (DynaSOAr Alg. 5, sec. 4.1.5), shared by the GPU
// kernels (set_bit_kernels.cuh) and sequential host runs of the same steps (enumerate_by_chunks,
// enumerate_by_tiles, which the CPU test compares with core::BitmapRef::indices()). Two
// strategies compute the same R (set_bit_indices.cuh chooses):
//
// TILED (one kernel; the default). The level-0 containers are cut into tiles of kTileContainers
// = 64, tile t being the containers whose summary bits form level-1 container t. A thread block
// per tile reads that one summary word, reads only the selected level-0 containers, and
// scans their popcounts; the tiles' exclusive prefix comes from a single-pass decoupled
// look-back over per-tile state words (TileState), and each tile writes its bits from there.
// The levels above 1 are not read: at quiescence the levels are consistent (App. A.5 Def. 1), so
// level 1 alone selects exactly the non-empty level-0 containers. Cost: O(M / 4096) thread blocks
// that each read one word, plus O(set bits + selected containers); one launch.
//
// CHUNKED (the hierarchical top-down form, 1 + 2 per lower level kernels). The enumeration goes
// top-down. list(l) is the ascending list of the selected containers of
// level l: those whose summary bit b^{l+1} is set; list(top) = [0], the single top container.
// Step l turns list(l) into list(l-1) (for l = 0: into R, the positions of the set level-0
// bits): every container of list(l) contributes its set bits c * 64 + k, in list order. That is an
// ordered compaction: per container the number of set bits, an exclusive prefix sum over the
// list, then each container writes its bits from its offset. Its cost is O(|list(l)| +
// |list(l-1)|), independent of the level's size; only containers whose summary bit is set are
// read, which is correct at quiescence (levels consistent, App. A.5 Def. 1).
//
// Two executions of a chunked step: the top levels (every level l >= 1 with at most
// kOneBlockMaxContainers containers, and the top level) run in ONE thread block, one level after
// the other, in one kernel; the lower levels run chunked over a fixed grid of G blocks: list(l)
// is cut into G contiguous chunks (chunk_range), one kernel counts each chunk's bits, a second
// scans the G totals and writes each chunk from its offset. Neither depends on the number of bits
// M: the grid is a multiple of the SM count, and every loop is bounded by a list length.
//
// Host and device; no CUDA runtime calls (compiles with plain C++17 for the CPU test).
#pragma once

#include <cstdint>

#include "heaplab/core/bitops.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"

#if !HEAPLAB_DEVICE_CODE
#include <numeric>
#include <vector>
#endif

namespace heaplab::soa::detail {

/// Levels l >= 1 with at most this many containers are enumerated by the one-block kernel
/// (list(l) is then at most this long, list(l-1) at most 64 times that).
inline constexpr std::uint32_t kOneBlockMaxContainers = 1024;

/// [begin, end) of a list.
struct ChunkRange {
  std::uint32_t begin = 0;
  std::uint32_t end   = 0;
};

/// Chunk `chunk` of `chunks` contiguous chunks of ceil(n / chunks) items over a list of n items
/// (the last chunks may be shorter or empty). Chunks in index order cover 0..n in order, which
/// is what keeps the output sorted.
HEAPLAB_HD_INLINE ChunkRange chunk_range(std::uint32_t chunk,
                                         std::uint32_t chunks,
                                         std::uint32_t n) {
  std::uint64_t const size  = (std::uint64_t{n} + chunks - 1u) / chunks;
  std::uint64_t end_of_list = n;
  // MUTANT enumerate_chunk_drops_last: chunks end one item early, so the last selected
  // container of every level is never read (docs/mutants.md).
  if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::enumerate_chunk_drops_last) {
    if (n > 0) end_of_list = n - 1u;
  }
  std::uint64_t const begin = std::uint64_t{chunk} * size;
  std::uint64_t const first = begin < end_of_list ? begin : end_of_list;
  std::uint64_t const last  = first + size < end_of_list ? first + size : end_of_list;
  return {static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(last)};
}

/// One level of a hierarchical bitmap: its containers and its number of meaningful bits.
struct LevelView {
  std::uint64_t const* words = nullptr;  // the level's first container
  std::uint32_t bits         = 0;        // BitmapLayout::level_bits of the level

  HEAPLAB_HD_INLINE static LevelView of(std::uint64_t const* words,
                                        core::BitmapLayout const& layout,
                                        std::uint32_t level) {
    return {words + layout.level_offset[level], layout.level_bits[level]};
  }

  /// Container c (c < ceil(bits / 64)) without the bits at or past `bits` (whatever a last
  /// container holds past the end is not part of the bitmap). A plain load: the bitmap is
  /// quiescent (no kernel modifies it while the enumeration runs).
  HEAPLAB_HD_INLINE std::uint64_t container(std::uint32_t c) const {
    std::uint64_t const word = words[c];
    std::uint32_t const left = bits - c * 64u;  // >= 1 for a container of the level
    return left >= 64u ? word : word & core::low_bits(left);
  }
};

/// Which levels the one-block kernel enumerates and how big the list buffers must be.
/// list(l) for l <= top - 1 lives in list buffer l % 2 (list(top) = [0] needs none); step l
/// reads list buffer l % 2 and writes buffer (l - 1) % 2 or, for l = 0, R.
struct EnumerationPlan {
  std::uint32_t num_levels = 0;
  /// The one-block kernel runs the steps top .. one_block_lowest; the chunked kernels the steps
  /// one_block_lowest - 1 .. 0. Level 0 is chunked unless it is the top level.
  std::uint32_t one_block_lowest = 0;
  std::uint32_t list_entries[2]  = {0, 0};  // entries of list buffers 0 and 1

  HEAPLAB_HD_INLINE static constexpr EnumerationPlan for_layout(core::BitmapLayout const& layout) {
    EnumerationPlan plan{};
    plan.num_levels = layout.num_levels;
    if (layout.num_levels == 0) return plan;
    std::uint32_t lowest = layout.num_levels - 1u;
    while (lowest >= 2u && layout.containers(lowest - 1u) <= kOneBlockMaxContainers) --lowest;
    plan.one_block_lowest = lowest;
    // list(l) has at most containers(l) entries; containers shrink going up, so buffer 0 is
    // sized by list(0), buffer 1 by list(1).
    if (layout.num_levels >= 2u) plan.list_entries[0] = layout.containers(0);
    if (layout.num_levels >= 3u) plan.list_entries[1] = layout.containers(1);
    return plan;
  }

  /// Chunked steps (levels one_block_lowest - 1 .. 0): 0 when one block does everything.
  HEAPLAB_HD_INLINE constexpr std::uint32_t chunked_steps() const { return one_block_lowest; }
};

/// Level-0 containers per tile of the tiled enumeration: one level-1 word's worth, so tile t is
/// selected by level-1 container t.
inline constexpr std::uint32_t kTileContainers = 64;

/// The tiled enumeration's state word of one tile (decoupled look-back): bits 63..32 the epoch
/// of the enumeration that wrote it (a word of another epoch reads as "not yet published"), bits
/// 31..30 the status, bits 29..0 the value: the tile's own number of set bits (aggregate) or
/// that number plus every earlier tile's (inclusive). One 64-bit word, so a reader sees epoch,
/// status and value of one write together.
struct TileState {
  static constexpr std::uint32_t kAggregate = 1;
  static constexpr std::uint32_t kInclusive = 2;
  /// Values (set-bit counts) must stay below this: bitmaps of fewer bits take the tiled path.
  static constexpr std::uint32_t kMaxValue = (1u << 30) - 1u;

  HEAPLAB_HD_INLINE static constexpr std::uint64_t pack(std::uint32_t epoch,
                                                        std::uint32_t status,
                                                        std::uint32_t value) {
    return (std::uint64_t{epoch} << 32) | (std::uint64_t{status} << 30) | (value & kMaxValue);
  }
  HEAPLAB_HD_INLINE static constexpr std::uint32_t epoch(std::uint64_t w) {
    return static_cast<std::uint32_t>(w >> 32);
  }
  HEAPLAB_HD_INLINE static constexpr std::uint32_t status(std::uint64_t w) {
    return static_cast<std::uint32_t>(w >> 30) & 3u;
  }
  HEAPLAB_HD_INLINE static constexpr std::uint32_t value(std::uint64_t w) {
    return static_cast<std::uint32_t>(w) & kMaxValue;
  }
};

/// Tiles of the tiled enumeration of `layout`: ceil(containers(0) / 64), which is containers(1)
/// (0 for an empty layout).
HEAPLAB_HD_INLINE constexpr std::uint32_t tiles_for(core::BitmapLayout const& layout) {
  return layout.num_levels == 0 ? 0u
                                : (layout.containers(0) + kTileContainers - 1u) / kTileContainers;
}

/// Whether the tiled enumeration can take `layout` (its counts fit TileState's value field).
HEAPLAB_HD_INLINE constexpr bool tiled_fits(core::BitmapLayout const& layout) {
  return layout.num_levels > 0 && layout.num_bits <= TileState::kMaxValue;
}

/// Level-0 container `k` of tile `tile` (k < kTileContainers) as the tiled enumeration reads it:
/// 0 past the level's last container or when the summary bit k of level-1 container `tile` is
/// clear (the container is then not read); a one-level bitmap has no summary and one container.
HEAPLAB_HD_INLINE std::uint64_t tile_container(std::uint64_t const* words,
                                               core::BitmapLayout const& layout,
                                               std::uint32_t tile,
                                               std::uint32_t k) {
  std::uint32_t const c = tile * kTileContainers + k;
  if (c >= layout.containers(0)) return 0;
  if (layout.num_levels >= 2u) {
    std::uint64_t const summary = LevelView::of(words, layout, 1).container(tile);
    if (((summary >> k) & 1u) == 0) return 0;
  }
  return LevelView::of(words, layout, 0).container(c);
}

#if !HEAPLAB_DEVICE_CODE
/// Writes the set bits of list[r.begin .. r.end) (containers of `level`) in order to out[at ..];
/// returns the position after the last one written.
inline std::uint32_t write_chunk(LevelView const& level,
                                 std::vector<std::uint32_t> const& list,
                                 ChunkRange r,
                                 std::vector<std::uint32_t>& out,
                                 std::uint32_t at) {
  for (std::uint32_t i = r.begin; i < r.end; ++i) {
    std::uint64_t word = level.container(list[i]);
    while (word != 0) {
      out.at(at++) = list[i] * 64u + static_cast<std::uint32_t>(core::find_first_set(word));
      word &= word - 1u;
    }
  }
  return at;
}

/// One step run sequentially with the GPU's partition into g chunks: each chunk's total, the
/// exclusive scan of the totals, then each chunk written from its offset.
inline std::vector<std::uint32_t> step_by_chunks(LevelView const& level,
                                                 std::vector<std::uint32_t> const& list,
                                                 std::uint32_t g) {
  auto const n = static_cast<std::uint32_t>(list.size());
  std::vector<std::uint32_t> offset(g + 1u, 0);  // chunk totals, then their exclusive scan
  for (std::uint32_t b = 0; b < g; ++b) {
    ChunkRange const r = chunk_range(b, g, n);
    for (std::uint32_t i = r.begin; i < r.end; ++i)
      offset[b + 1u] += static_cast<std::uint32_t>(core::popcount(level.container(list[i])));
  }
  std::partial_sum(offset.begin(), offset.end(), offset.begin());
  std::vector<std::uint32_t> next(offset[g]);
  for (std::uint32_t b = 0; b < g; ++b)
    write_chunk(level, list, chunk_range(b, g, n), next, offset[b]);
  return next;
}

/// The GPU enumeration's steps run sequentially, with its partition: the one-block steps as
/// one chunk, the chunked steps cut into `chunks` chunks. Must equal BitmapRef::indices().
inline std::vector<std::uint32_t> enumerate_by_chunks(std::uint64_t const* words,
                                                      core::BitmapLayout const& layout,
                                                      std::uint32_t chunks) {
  EnumerationPlan const plan = EnumerationPlan::for_layout(layout);
  std::vector<std::uint32_t> list;
  if (plan.num_levels == 0) return list;
  list.push_back(0);  // list(top)
  for (std::uint32_t l = plan.num_levels; l-- > 0;) {
    std::uint32_t const g = l >= plan.one_block_lowest ? 1u : chunks;
    list                  = step_by_chunks(LevelView::of(words, layout, l), list, g);
  }
  return list;
}

/// The tiled enumeration's steps run sequentially: each tile's containers as the kernel reads
/// them (tile_container), the tiles' aggregates, their exclusive prefix (what the look-back
/// computes), then each tile's bits from its prefix. Must equal BitmapRef::indices().
inline std::vector<std::uint32_t> enumerate_by_tiles(std::uint64_t const* words,
                                                     core::BitmapLayout const& layout) {
  std::uint32_t const tiles = tiles_for(layout);
  std::vector<std::uint32_t> prefix(tiles + 1u, 0);
  for (std::uint32_t t = 0; t < tiles; ++t) {
    std::uint32_t aggregate = 0;
    for (std::uint32_t k = 0; k < kTileContainers; ++k)
      aggregate += static_cast<std::uint32_t>(core::popcount(tile_container(words, layout, t, k)));
    prefix[t + 1u] = prefix[t] + aggregate;
  }
  std::vector<std::uint32_t> out(prefix[tiles]);
  for (std::uint32_t t = 0; t < tiles; ++t) {
    std::uint32_t at = prefix[t];
    for (std::uint32_t k = 0; k < kTileContainers; ++k) {
      std::uint64_t word = tile_container(words, layout, t, k);
      while (word != 0) {
        out.at(at++) = (t * kTileContainers + k) * 64u +
                       static_cast<std::uint32_t>(core::find_first_set(word));
        word &= word - 1u;
      }
    }
  }
  return out;
}
#endif

}  // namespace heaplab::soa::detail
