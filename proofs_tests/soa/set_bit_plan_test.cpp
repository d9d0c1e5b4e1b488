// The hierarchical set-bit enumeration's arithmetic on the CPU (soa/detail/set_bit_plan.hpp,
// DynaSOAr Alg. 5, sec. 4.1.5): the chunk partition, the plan (which levels one block runs, the
// list buffers), and the GPU's steps run sequentially with the GPU's partition against
// core::BitmapRef::indices() and a naive loop. Built a second time with the planted bug
// enumerate_chunk_drops_last (soa_mutant_enumerate_chunk_drops_last_test), where
// ChunkedEnumeration.EqualsIndicesAndANaiveLoop must fail (docs/mutants.md). The tiled
// enumeration (one kernel, decoupled look-back) likewise: its tile state word, its tiles, and its
// steps run sequentially (enumerate_by_tiles).
#include "heaplab/soa/detail/set_bit_plan.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "set_bit_bitmaps.hpp"

namespace core    = heaplab::core;
namespace detail  = heaplab::soa::detail;
namespace bitmaps = heaplab::testing;

namespace {

/// Chunk counts: one block, a few, more than there are items, an H100's chunked grid.
std::vector<std::uint32_t> const kChunkCounts{1u, 2u, 3u, 7u, 264u};

}  // namespace

TEST(ChunkRange, ChunksCoverTheListInOrder) {
  for (std::uint32_t n : {0u, 1u, 2u, 63u, 64u, 65u, 263u, 264u, 265u, 1000u, 100000u}) {
    for (std::uint32_t g : kChunkCounts) {
      std::uint32_t next = 0;
      for (std::uint32_t b = 0; b < g; ++b) {
        detail::ChunkRange const r = detail::chunk_range(b, g, n);
        ASSERT_EQ(r.begin, next) << "n " << n << ", chunk " << b << " of " << g;
        ASSERT_LE(r.begin, r.end);
        ASSERT_LE(r.end - r.begin, (n + g - 1u) / g);
        next = r.end;
      }
      EXPECT_EQ(next, n) << "n " << n << ", " << g << " chunks";
    }
  }
}

TEST(EnumerationPlan, OneBlockRunsTheTopLevelsAndLevelZeroIsChunked) {
  struct Want {
    std::uint32_t bits, levels, lowest, list0, list1;
  };
  // lowest: the one-block kernel runs levels top .. lowest; list0/list1: list buffer entries.
  for (Want const w : {Want{0, 0, 0, 0, 0},
                       Want{1, 1, 0, 0, 0},
                       Want{64, 1, 0, 0, 0},
                       Want{65, 2, 1, 2, 0},
                       Want{4096, 2, 1, 64, 0},
                       Want{4097, 3, 1, 65, 2},
                       Want{1u << 20, 4, 1, 16384, 256},
                       Want{1u << 22, 4, 1, 65536, 1024},
                       Want{(1u << 22) + 1u, 4, 2, 65537, 1025},
                       Want{1u << 31, 6, 3, 33554432, 524288}}) {
    detail::EnumerationPlan const p =
        detail::EnumerationPlan::for_layout(core::BitmapLayout::for_bits(w.bits));
    EXPECT_EQ(p.num_levels, w.levels) << w.bits << " bits";
    EXPECT_EQ(p.one_block_lowest, w.lowest) << w.bits << " bits";
    EXPECT_EQ(p.list_entries[0], w.list0) << w.bits << " bits";
    EXPECT_EQ(p.list_entries[1], w.list1) << w.bits << " bits";
  }
}

TEST(LevelView, IgnoresBitsPastTheLevel) {
  std::uint64_t const words[3]    = {~std::uint64_t{0}, ~std::uint64_t{0}, ~std::uint64_t{0}};
  core::BitmapLayout const layout = core::BitmapLayout::for_bits(70);
  detail::LevelView const level0  = detail::LevelView::of(words, layout, 0);
  EXPECT_EQ(level0.container(0), ~std::uint64_t{0});
  EXPECT_EQ(level0.container(1), core::low_bits(6));
  EXPECT_EQ(detail::LevelView::of(words, layout, 1).container(0), core::low_bits(2));
}

TEST(ChunkedEnumeration, EqualsIndicesAndANaiveLoop) {
  std::mt19937_64 rng(20261201);
  std::vector<std::uint32_t> sizes = bitmaps::boundary_sizes();
  sizes.push_back((1u << 22) + 1u);  // level 1 has 1025 containers: chunked too
  for (std::uint32_t n : sizes) {
    for (bitmaps::BitPattern pattern : bitmaps::all_patterns()) {
      bitmaps::BitmapCase const c = bitmaps::make_bitmap(n, pattern, rng);
      SCOPED_TRACE(c.name);
      std::vector<std::uint64_t> clean = c.words;
      core::BitmapRef<core::HostAtomics> const bitmap(clean.data(), c.layout);
      ASSERT_EQ(bitmap.indices(), c.truth) << "the host Alg. 5 (or the generator)";
      std::vector<std::uint64_t> const garbage = bitmaps::with_garbage(c);
      for (std::uint32_t g : kChunkCounts) {
        ASSERT_EQ(detail::enumerate_by_chunks(clean.data(), c.layout, g), c.truth)
            << g << " chunks";
        ASSERT_EQ(detail::enumerate_by_chunks(garbage.data(), c.layout, g), c.truth)
            << g << " chunks, garbage past every level";
      }
    }
  }
}

TEST(ChunkedEnumeration, EmptyLayoutGivesNothing) {
  EXPECT_TRUE(detail::enumerate_by_chunks(nullptr, core::BitmapLayout::for_bits(0), 3).empty());
}

TEST(TileState, PacksEpochStatusAndValueIntoOneWord) {
  using detail::TileState;
  for (std::uint32_t epoch : {0u, 1u, 0xFFFFFFFFu}) {
    for (std::uint32_t status : {TileState::kAggregate, TileState::kInclusive}) {
      for (std::uint32_t value : {0u, 1u, 12345u, TileState::kMaxValue}) {
        std::uint64_t const w = TileState::pack(epoch, status, value);
        EXPECT_EQ(TileState::epoch(w), epoch);
        EXPECT_EQ(TileState::status(w), status);
        EXPECT_EQ(TileState::value(w), value);
      }
    }
  }
  // A zeroed word (fresh or cleared state buffer) is epoch 0 with no status: never published.
  EXPECT_EQ(TileState::status(0), 0u);
  EXPECT_EQ(TileState::epoch(0), 0u);
}

TEST(TiledEnumeration, TilesAreTheLevelOneContainers) {
  for (std::uint32_t bits : {1u, 64u, 65u, 4096u, 4097u, 100000u, 1u << 20, (1u << 22) + 1u}) {
    core::BitmapLayout const layout = core::BitmapLayout::for_bits(bits);
    std::uint32_t const want        = layout.num_levels >= 2 ? layout.containers(1) : 1u;
    EXPECT_EQ(detail::tiles_for(layout), want) << bits << " bits";
    EXPECT_TRUE(detail::tiled_fits(layout)) << bits << " bits";
  }
  EXPECT_EQ(detail::tiles_for(core::BitmapLayout::for_bits(0)), 0u);
  EXPECT_FALSE(detail::tiled_fits(core::BitmapLayout::for_bits(0)));
  EXPECT_FALSE(detail::tiled_fits(core::BitmapLayout::for_bits(1u << 30)));
}

TEST(TiledEnumeration, EqualsIndicesAndANaiveLoop) {
  std::mt19937_64 rng(20261124);
  std::vector<std::uint32_t> sizes = bitmaps::boundary_sizes();
  sizes.push_back((1u << 22) + 1u);
  for (std::uint32_t n : sizes) {
    for (bitmaps::BitPattern pattern : bitmaps::all_patterns()) {
      bitmaps::BitmapCase const c = bitmaps::make_bitmap(n, pattern, rng);
      SCOPED_TRACE(c.name);
      ASSERT_EQ(detail::enumerate_by_tiles(c.words.data(), c.layout), c.truth);
      std::vector<std::uint64_t> const garbage = bitmaps::with_garbage(c);
      ASSERT_EQ(detail::enumerate_by_tiles(garbage.data(), c.layout), c.truth)
          << "garbage past every level";
    }
  }
}

TEST(TiledEnumeration, ReadsOnlyContainersWhoseSummaryBitIsSet) {
  // A level-0 bit without its level-1 summary bit (levels inconsistent: not quiescent) is not
  // read; the levels above 1 are not read at all.
  core::BitmapLayout const layout = core::BitmapLayout::for_bits(4096 * 3);
  std::vector<std::uint64_t> words(layout.total_words, 0);
  words[100] = 1;  // level-0 container 100, summary bit 100 of level 1 clear
  words[layout.level_offset[0] + 191] = std::uint64_t{1} << 63;  // the last bit
  words[layout.level_offset[1] + 2]   = std::uint64_t{1} << 63;  // its summary (container 191)
  // level 2 (the top) left 0: not read by the tiled enumeration
  EXPECT_EQ(detail::enumerate_by_tiles(words.data(), layout),
            (std::vector<std::uint32_t>{4096u * 3u - 1u}));
}
