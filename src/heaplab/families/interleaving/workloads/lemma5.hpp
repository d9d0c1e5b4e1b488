// Trace-based check of DynaSOAr App. A.5 (Def. 2, Def. 3, Lemma 5) for hierarchical bitmaps.
//
// From a controlled run's trace, every completed set and clear of every bit on every level is
// known: an RMW on a container that changed bit j from 0 to 1 is one set of that bit, 1 to 0 one
// clear (the retrying set/clear complete exactly with such a change; a try_* that changed nothing
// is no operation). A container's RMW that took it from 0 to non-zero is a set-first (SF), from
// non-zero to 0 a clear-last (CL). The check:
//   - per bit and level: set-surplus S = #set - #clear in {-1, 0, 1} and initial + S in {0, 1}
//     and equal to the final value (Def. 3: the multiset is legal);
//   - per container C^l_i with a level above: #SF(C^l_i) == #set(b^{l+1}_i) and
//     #CL(C^l_i) == #clear(b^{l+1}_i) (Def. 2: each SF/CL generated exactly one upper update);
//   - at the end every level is consistent with the one below (Def. 1).
// Issued-but-unfinished operations do not appear in a trace; a run that ends has none (a retrying
// set/clear of an illegal multiset never ends and the scheduler reports the run as a deadlock).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "heaplab/core/bitops.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/explore/trace.hpp"

namespace heaplab::interleaving_family::workloads {

/// One hierarchical bitmap to check: where its words are, their layout, their values before the
/// run.
struct BitmapUnderCheck {
  std::string name;
  std::uint64_t const* words = nullptr;
  core::BitmapLayout layout{};
  std::vector<std::uint64_t> initial;  // layout.total_words values
};

namespace lemma5_detail {

/// (bitmap index, level, container or bit)
using Key = std::tuple<std::size_t, std::uint32_t, std::uint32_t>;

struct Counts {
  std::int64_t sets = 0, clears = 0;
};

/// What one run did to the bitmaps under check: per bit its sets and clears (Def. 3), per
/// container its set-first and clear-last operations (a word going from or to 0, Def. 2).
struct Operations {
  std::map<Key, Counts> bit_ops;  // (m, l, bit)
  std::map<Key, Counts> sf_cl;    // (m, l, container)
};

inline Operations count_operations(std::vector<explore::Event> const& events,
                                   std::vector<BitmapUnderCheck> const& bitmaps) {
  std::map<void const*, Key> where;  // address -> (bitmap index, level, container)
  for (std::size_t m = 0; m < bitmaps.size(); ++m) {
    auto const& bm = bitmaps[m];
    for (std::uint32_t l = 0; l < bm.layout.num_levels; ++l)
      for (std::uint32_t c = 0; c < bm.layout.containers(l); ++c)
        where[bm.words + bm.layout.level_offset[l] + c] = {m, l, c};
  }
  Operations ops;
  for (auto const& e : events) {
    if (!e.modifies()) continue;
    auto it = where.find(e.address);
    if (it == where.end()) continue;
    auto const [m, l, c] = it->second;
    if (e.old_value == 0) ++ops.sf_cl[{m, l, c}].sets;
    if (e.new_value == 0) ++ops.sf_cl[{m, l, c}].clears;
    std::uint64_t changed = e.old_value ^ e.new_value;
    while (changed != 0) {
      unsigned const j = static_cast<unsigned>(core::find_first_set(changed));
      changed &= changed - 1u;
      auto& counts = ops.bit_ops[{m, l, c * 64u + j}];
      if ((e.new_value >> j) & 1u)
        ++counts.sets;
      else
        ++counts.clears;
    }
  }
  return ops;
}

inline std::int64_t bit_of(std::uint64_t const* words,
                           core::BitmapLayout const& layout,
                           std::uint32_t l,
                           std::uint32_t bit) {
  return static_cast<std::int64_t>((words[layout.level_offset[l] + bit / 64u] >> (bit % 64u)) & 1u);
}

inline std::string label(std::vector<BitmapUnderCheck> const& bitmaps,
                         std::size_t m,
                         std::uint32_t l,
                         std::uint32_t bit) {
  return bitmaps[m].name + ".L" + std::to_string(l) + " bit " + std::to_string(bit);
}

/// Def. 3 per bit that was touched: the sets and clears alternate, from the initial value to the
/// final one.
inline void check_def3(Operations const& ops,
                       std::vector<BitmapUnderCheck> const& bitmaps,
                       std::vector<std::string>& out) {
  for (auto const& [key, counts] : ops.bit_ops) {
    auto const [m, l, bit]     = key;
    auto const& bm             = bitmaps[m];
    std::int64_t const surplus = counts.sets - counts.clears;
    std::int64_t const before  = bit_of(bm.initial.data(), bm.layout, l, bit);
    std::int64_t const after   = bit_of(bm.words, bm.layout, l, bit);
    if (surplus < -1 || surplus > 1 || before + surplus < 0 || before + surplus > 1 ||
        before + surplus != after)
      out.push_back("Lemma 5 / Def. 3: " + label(bitmaps, m, l, bit) + ": " +
                    std::to_string(counts.sets) + " sets, " + std::to_string(counts.clears) +
                    " clears, initial " + std::to_string(before) + ", final " +
                    std::to_string(after));
  }
}

/// Def. 2 per container with a level above: as many set-first (clear-last) operations as sets
/// (clears) of its summary bit.
inline void check_def2(Operations const& ops,
                       std::vector<BitmapUnderCheck> const& bitmaps,
                       std::vector<std::string>& out) {
  for (std::size_t m = 0; m < bitmaps.size(); ++m) {
    auto const& bm = bitmaps[m];
    for (std::uint32_t l = 0; l + 1 < bm.layout.num_levels; ++l) {
      for (std::uint32_t c = 0; c < bm.layout.containers(l); ++c) {
        Counts const sfcl = ops.sf_cl.count({m, l, c}) ? ops.sf_cl.at({m, l, c}) : Counts{};
        Counts const up =
            ops.bit_ops.count({m, l + 1, c}) ? ops.bit_ops.at({m, l + 1, c}) : Counts{};
        if (sfcl.sets != up.sets || sfcl.clears != up.clears)
          out.push_back("Lemma 5 / Def. 2: " + bm.name + ".L" + std::to_string(l) + "[" +
                        std::to_string(c) + "] had " + std::to_string(sfcl.sets) +
                        " set-first and " + std::to_string(sfcl.clears) + " clear-last, but " +
                        label(bitmaps, m, l + 1, c) + " was set " + std::to_string(up.sets) +
                        " and cleared " + std::to_string(up.clears) + " times");
      }
    }
  }
}

/// Def. 1 at the end: a summary bit is set iff its container is non-empty.
inline void check_def1(std::vector<BitmapUnderCheck> const& bitmaps,
                       std::vector<std::string>& out) {
  for (std::size_t m = 0; m < bitmaps.size(); ++m) {
    auto const& bm = bitmaps[m];
    for (std::uint32_t l = 0; l + 1 < bm.layout.num_levels; ++l)
      for (std::uint32_t c = 0; c < bm.layout.containers(l); ++c) {
        bool const nonempty = bm.words[bm.layout.level_offset[l] + c] != 0;
        if (nonempty != (bit_of(bm.words, bm.layout, l + 1, c) != 0))
          out.push_back("Def. 1: " + label(bitmaps, m, l + 1, c) + " is " +
                        std::to_string(bit_of(bm.words, bm.layout, l + 1, c)) + " but " + bm.name +
                        ".L" + std::to_string(l) + "[" + std::to_string(c) + "] is " +
                        (nonempty ? "non-empty" : "empty"));
      }
  }
}

}  // namespace lemma5_detail

/// Violations of Def. 1-3 over the events of one run; `bitmaps` must hold the final values now.
inline std::vector<std::string> check_lemma5(std::vector<explore::Event> const& events,
                                             std::vector<BitmapUnderCheck> const& bitmaps) {
  std::vector<std::string> out;
  lemma5_detail::Operations const ops = lemma5_detail::count_operations(events, bitmaps);
  lemma5_detail::check_def3(ops, bitmaps, out);
  lemma5_detail::check_def2(ops, bitmaps, out);
  lemma5_detail::check_def1(bitmaps, out);
  return out;
}

}  // namespace heaplab::interleaving_family::workloads
