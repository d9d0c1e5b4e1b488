// Hierarchical bitmap (DynaSOAr sec. 4.1), sequentially: layout, every operation against a
// std::set model, consistency (App. A.5 Def. 1) after every operation, rotation (sec. 4.2).
// Concurrent behaviour is checked under the explorer (explorer_test.cpp, lemma5.hpp).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"

namespace core = heaplab::core;
using Bitmap   = core::BitmapRef<core::HostAtomics>;

namespace {

/// Def. 1 on every level, written out independently of the code under test.
bool consistent(std::vector<std::uint64_t> const& words, core::BitmapLayout const& layout) {
  for (std::uint32_t l = 0; l + 1 < layout.num_levels; ++l)
    for (std::uint32_t c = 0; c < layout.containers(l); ++c) {
      bool const nonempty = words[layout.level_offset[l] + c] != 0;
      bool const summary  = ((words[layout.level_offset[l + 1] + c / 64] >> (c % 64)) & 1u) != 0;
      if (nonempty != summary) return false;
    }
  return true;
}

std::set<std::uint32_t> level0(std::vector<std::uint64_t> const& words, std::uint32_t n) {
  std::set<std::uint32_t> s;
  for (std::uint32_t b = 0; b < n; ++b)
    if ((words[b / 64] >> (b % 64)) & 1u) s.insert(b);
  return s;
}

}  // namespace

RC_GTEST_PROP(HierarchicalBitmap, LayoutMatchesSnapshotShape, ()) {
  std::uint32_t const n = *rc::gen::oneOf(rc::gen::inRange<std::uint32_t>(1, 300),
                                          rc::gen::inRange<std::uint32_t>(4000, 300000));
  auto const layout     = core::BitmapLayout::for_bits(n);
  auto const bits       = heaplab::check::level_bit_counts(n);
  auto const conts      = heaplab::check::level_container_counts(n);
  RC_ASSERT(layout.num_levels == bits.size());
  std::uint32_t total = 0;
  for (std::uint32_t l = 0; l < layout.num_levels; ++l) {
    RC_ASSERT(layout.level_bits[l] == bits[l]);
    RC_ASSERT(layout.containers(l) == conts[l]);
    RC_ASSERT(layout.level_offset[l] == total);
    total += conts[l];
  }
  RC_ASSERT(layout.total_words == total);
  RC_ASSERT(layout.containers(layout.num_levels - 1) == 1u);
}

TEST(HierarchicalBitmap, HandWorkedLayouts) {
  EXPECT_EQ(core::BitmapLayout::for_bits(0).num_levels, 0u);
  EXPECT_EQ(core::BitmapLayout::for_bits(64).num_levels, 1u);
  auto const l65 = core::BitmapLayout::for_bits(65);  // 2 containers + 1 summary
  EXPECT_EQ(l65.num_levels, 2u);
  EXPECT_EQ(l65.total_words, 3u);
  auto const l4097 = core::BitmapLayout::for_bits(4097);  // 65 + 2 + 1
  EXPECT_EQ(l4097.num_levels, 3u);
  EXPECT_EQ(l4097.total_words, 68u);
  EXPECT_EQ(l4097.level_offset[2], 67u);
}

// Every operation against a std::set model; single-threaded, so no operation may fail
// spuriously and the hierarchy must be consistent after each one.
RC_GTEST_PROP(HierarchicalBitmap, SequentialOperationsMatchSetModel, ()) {
  std::uint32_t const n = *rc::gen::oneOf(rc::gen::inRange<std::uint32_t>(1, 200),
                                          rc::gen::inRange<std::uint32_t>(4000, 4300));
  auto const layout     = core::BitmapLayout::for_bits(n);
  std::vector<std::uint64_t> words(layout.total_words, 0);
  Bitmap const bm(words.data(), layout);
  std::set<std::uint32_t> model;
  auto const ops = *rc::gen::container<std::vector<std::pair<int, std::uint32_t>>>(
      rc::gen::pair(rc::gen::inRange(0, 6), rc::gen::arbitrary<std::uint32_t>()));
  for (auto const& [op, arg] : ops) {
    std::uint32_t const pos = arg % n;
    switch (op) {
      case 0:  // try_set
        RC_ASSERT(bm.try_set(pos, core::MemoryOrder::relaxed) == model.insert(pos).second);
        break;
      case 1:  // try_clear
        RC_ASSERT(bm.try_clear(pos, core::MemoryOrder::relaxed) == (model.erase(pos) == 1));
        break;
      case 2:  // set / clear of a bit in the opposite state (a legal use, never spins)
        if (model.count(pos)) {
          bm.clear(pos, core::MemoryOrder::relaxed);
          model.erase(pos);
        } else {
          bm.set(pos, core::MemoryOrder::relaxed);
          model.insert(pos);
        }
        break;
      case 3: {  // try_find_set: a member, or kNotFound iff empty
        std::uint32_t const found = bm.try_find_set(arg);
        if (model.empty())
          RC_ASSERT(found == core::kNotFound);
        else
          RC_ASSERT(model.count(found) == 1u);
        break;
      }
      case 4: {  // clear_any removes a member
        std::uint32_t const got = bm.clear_any(arg, core::MemoryOrder::acquire);
        if (model.empty()) {
          RC_ASSERT(got == core::kNotFound);
        } else {
          RC_ASSERT(model.erase(got) == 1u);
        }
        break;
      }
      default: {  // find_set_scan and get
        std::uint32_t const found = bm.find_set_scan(arg);
        bool const ok = model.empty() ? found == core::kNotFound : model.count(found) == 1u;
        RC_ASSERT(ok);
        RC_ASSERT(bm.get(pos) == (model.count(pos) == 1u));
        break;
      }
    }
    RC_ASSERT(consistent(words, layout));
    RC_ASSERT(level0(words, n) == model);
  }
  auto const idx = bm.indices();
  RC_ASSERT(std::vector<std::uint32_t>(model.begin(), model.end()) == idx);
}

TEST(HierarchicalBitmap, SetFirstAndClearLastPropagateThroughLevels) {
  // 4200 bits: 66 level-0 containers, 2 level-1 containers, 1 level-2 container.
  auto const layout = core::BitmapLayout::for_bits(4200);
  std::vector<std::uint64_t> words(layout.total_words, 0);
  Bitmap const bm(words.data(), layout);
  bm.set(4100, core::MemoryOrder::relaxed);  // container 64 of L0 -> bit 64 of L1 (container 1, bit
                                             // 0) -> bit 1 of L2
  EXPECT_EQ(words[64], std::uint64_t{1} << (4100 % 64));
  EXPECT_EQ(words[layout.level_offset[1] + 1], 1u);
  EXPECT_EQ(words[layout.level_offset[2]], 2u);
  bm.set(4101, core::MemoryOrder::relaxed);  // not set-first: upper levels unchanged
  EXPECT_EQ(words[layout.level_offset[2]], 2u);
  bm.clear(4100, core::MemoryOrder::relaxed);  // not clear-last
  EXPECT_EQ(words[layout.level_offset[1] + 1], 1u);
  bm.clear(4101, core::MemoryOrder::relaxed);  // clear-last on every level
  for (auto w : words) EXPECT_EQ(w, 0u);
}

TEST(HierarchicalBitmap, RotationChoosesTheFirstSetBitAtOrAfterTheSeedPosition) {
  auto const layout = core::BitmapLayout::for_bits(64);
  std::vector<std::uint64_t> words(layout.total_words, 0);
  Bitmap const bm(words.data(), layout);
  bm.set(3, core::MemoryOrder::relaxed);
  bm.set(40, core::MemoryOrder::relaxed);
  // Level-0 rotation = seed & 63 (detail::rotation(seed, 0)).
  EXPECT_EQ(bm.try_find_set(0), 3u);
  EXPECT_EQ(bm.try_find_set(4), 40u);
  EXPECT_EQ(bm.try_find_set(40), 40u);
  EXPECT_EQ(bm.try_find_set(41), 3u);  // wraps around
}

TEST(HierarchicalBitmap, TryFindSetFailsOnALaggingSummaryButTheScanDoesNot) {
  // A state another thread can leave behind for a moment: a level-0 bit set whose set-first
  // has not reached level 1 yet (sec. 4.1.4).
  auto const layout = core::BitmapLayout::for_bits(130);
  std::vector<std::uint64_t> words(layout.total_words, 0);
  words[2] = 1;  // bit 128, summary bit 2 of L1 still clear
  Bitmap const bm(words.data(), layout);
  EXPECT_EQ(bm.try_find_set(0), core::kNotFound);
  EXPECT_EQ(bm.find_set_scan(0), 128u);
  words[3] |= std::uint64_t{1} << 2;  // the pending set-first propagation lands
  EXPECT_EQ(bm.clear_any(0, core::MemoryOrder::acquire), 128u);
  for (auto w : words) EXPECT_EQ(w, 0u);  // and the clear-last propagated
}

TEST(HierarchicalBitmap, FindSetSaysWhetherItFailedAtTheTopLevel) {
  // find_active_block ends its lookups after a failure at the top level (one word: another
  // rotation reads it again) and retries one below it (a summary that a concurrent clear-last
  // left set, sec. 4.1.4). 130 bits: level 0 words 0..2, level 1 (the top) word 3.
  auto const layout = core::BitmapLayout::for_bits(130);
  ASSERT_EQ(layout.num_levels, 2u);
  std::vector<std::uint64_t> words(layout.total_words, 0);
  Bitmap const bm(words.data(), layout);
  auto found = bm.find_set(7);
  EXPECT_EQ(found.pos, core::kNotFound);
  EXPECT_TRUE(found.top_empty);      // nothing set
  words[3] = std::uint64_t{1} << 1;  // summary of word 1 set, word 1 empty: a pending clear-last
  found    = bm.find_set(7);
  EXPECT_EQ(found.pos, core::kNotFound);
  EXPECT_FALSE(found.top_empty);
  words[1] = std::uint64_t{1} << 5;  // bit 69, now consistent
  found    = bm.find_set(7);
  EXPECT_EQ(found.pos, 69u);
  EXPECT_FALSE(found.top_empty);
  EXPECT_EQ(bm.try_find_set(7), 69u);
  // No bits at all (num_levels 0): empty at the top by definition.
  Bitmap const none(nullptr, core::BitmapLayout::for_bits(0));
  EXPECT_TRUE(none.find_set(0).top_empty);
  EXPECT_EQ(none.top_word(), 0u);
}

TEST(HierarchicalBitmap, FindSetStartsFromATopWordTheCallerLoaded) {
  // reserve_slots loads active[T]'s top-level word beside its block hint and hands it to the
  // first lookup: the descent starts from that word, not from a second load of it.
  auto const layout = core::BitmapLayout::for_bits(130);
  std::vector<std::uint64_t> words(layout.total_words, 0);
  Bitmap const bm(words.data(), layout);
  words[1]                = std::uint64_t{1} << 5;  // bit 69
  words[3]                = std::uint64_t{1} << 1;  // its summary
  std::uint64_t const top = bm.top_word();
  EXPECT_EQ(top, words[3]);
  EXPECT_EQ(bm.find_set(7, &top).pos, 69u);
  std::uint64_t const stale = 0;  // loaded before the set-first reached the top
  auto const found          = bm.find_set(7, &stale);
  EXPECT_EQ(found.pos, core::kNotFound);
  EXPECT_TRUE(found.top_empty);
  std::uint64_t const other = std::uint64_t{1} << 0;  // names word 0, which is empty
  EXPECT_EQ(bm.find_set(7, &other).pos, core::kNotFound);
  EXPECT_FALSE(bm.find_set(7, &other).top_empty);
  // One level: the top word is level 0 itself.
  auto const one = core::BitmapLayout::for_bits(40);
  std::vector<std::uint64_t> w1(one.total_words, 0);
  Bitmap const small(w1.data(), one);
  w1[0]                    = std::uint64_t{1} << 33;
  std::uint64_t const top1 = small.top_word();
  EXPECT_EQ(small.find_set(3, &top1).pos, 33u);
  std::uint64_t const none1 = 0;
  EXPECT_EQ(small.find_set(3, &none1).pos, core::kNotFound);
}

TEST(HierarchicalBitmap, ClearAnyWithoutRotationTakesTheLowestSetBit) {
  // HeapStorage::rotate_bitmaps off (DynaSOAr Fig. 12C "NoShift"): whatever the seed, every
  // search starts at bit 0 of every level, so clear_any takes the set bits in ascending order.
  // With rotation the seeds spread the picks (the property the ablation removes).
  auto const layout                        = core::BitmapLayout::for_bits(5000);
  std::vector<std::uint32_t> const members = {5, 70, 130, 4000, 4999};
  auto const fill                          = [&](std::vector<std::uint64_t>& words) {
    std::fill(words.begin(), words.end(), 0);
    Bitmap const bm(words.data(), layout);
    for (std::uint32_t b : members) bm.set(b, core::MemoryOrder::relaxed);
  };
  std::vector<std::uint64_t> words(layout.total_words, 0);
  Bitmap const bm(words.data(), layout);
  fill(words);
  for (std::size_t i = 0; i < members.size(); ++i) {
    std::uint64_t const seed = 0x9E3779B97F4A7C15ull * (i + 1);
    EXPECT_EQ(bm.clear_any(seed, core::MemoryOrder::acquire, /*rotate=*/false), members[i]);
  }
  EXPECT_EQ(bm.clear_any(1, core::MemoryOrder::acquire, false), core::kNotFound);
  for (auto w : words) EXPECT_EQ(w, 0u);
  // With rotation, some of 64 seeds picks another member first.
  std::set<std::uint32_t> first_picks;
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    fill(words);
    first_picks.insert(bm.clear_any(seed * 0x2545F4914F6CDD1Dull, core::MemoryOrder::acquire));
  }
  EXPECT_GT(first_picks.size(), 1u);
}
