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

/// Violations of Def. 1-3 over the events of one run; `bitmaps` must hold the final values now.
inline std::vector<std::string> check_lemma5(std::vector<explore::Event> const& events,
                                             std::vector<BitmapUnderCheck> const& bitmaps) {
  std::vector<std::string> out;
  // address -> (bitmap index, level, container)
  std::map<void const*, std::tuple<std::size_t, std::uint32_t, std::uint32_t>> where;
  for (std::size_t m = 0; m < bitmaps.size(); ++m) {
    auto const& bm = bitmaps[m];
    for (std::uint32_t l = 0; l < bm.layout.num_levels; ++l)
      for (std::uint32_t c = 0; c < bm.layout.containers(l); ++c)
        where[bm.words + bm.layout.level_offset[l] + c] = {m, l, c};
  }
  struct Counts {
    std::int64_t sets = 0, clears = 0;
  };
  std::map<std::tuple<std::size_t, std::uint32_t, std::uint32_t>, Counts> bit_ops;  // (m, l, bit)
  std::map<std::tuple<std::size_t, std::uint32_t, std::uint32_t>, Counts>
      sf_cl;  // (m, l, container)
  for (auto const& e : events) {
    if (!e.modifies()) continue;
    auto it = where.find(e.address);
    if (it == where.end()) continue;
    auto const [m, l, c] = it->second;
    if (e.old_value == 0) ++sf_cl[{m, l, c}].sets;
    if (e.new_value == 0) ++sf_cl[{m, l, c}].clears;
    std::uint64_t changed = e.old_value ^ e.new_value;
    while (changed != 0) {
      unsigned const j = static_cast<unsigned>(core::find_first_set(changed));
      changed &= changed - 1u;
      auto& counts = bit_ops[{m, l, c * 64u + j}];
      if ((e.new_value >> j) & 1u)
        ++counts.sets;
      else
        ++counts.clears;
    }
  }
  auto bit_of = [](std::uint64_t const* words,
                   core::BitmapLayout const& layout,
                   std::uint32_t l,
                   std::uint32_t bit) {
    return static_cast<std::int64_t>((words[layout.level_offset[l] + bit / 64u] >> (bit % 64u)) &
                                     1u);
  };
  auto label = [&](std::size_t m, std::uint32_t l, std::uint32_t bit) {
    return bitmaps[m].name + ".L" + std::to_string(l) + " bit " + std::to_string(bit);
  };
  // Def. 3 per bit that was touched.
  for (auto const& [key, counts] : bit_ops) {
    auto const [m, l, bit]     = key;
    auto const& bm             = bitmaps[m];
    std::int64_t const surplus = counts.sets - counts.clears;
    std::int64_t const before  = bit_of(bm.initial.data(), bm.layout, l, bit);
    std::int64_t const after   = bit_of(bm.words, bm.layout, l, bit);
    if (surplus < -1 || surplus > 1 || before + surplus < 0 || before + surplus > 1 ||
        before + surplus != after)
      out.push_back("Lemma 5 / Def. 3: " + label(m, l, bit) + ": " + std::to_string(counts.sets) +
                    " sets, " + std::to_string(counts.clears) + " clears, initial " +
                    std::to_string(before) + ", final " + std::to_string(after));
  }
  // Def. 2 per container with a level above.
  for (std::size_t m = 0; m < bitmaps.size(); ++m) {
    auto const& bm = bitmaps[m];
    for (std::uint32_t l = 0; l + 1 < bm.layout.num_levels; ++l) {
      for (std::uint32_t c = 0; c < bm.layout.containers(l); ++c) {
        Counts const sfcl = sf_cl.count({m, l, c}) ? sf_cl.at({m, l, c}) : Counts{};
        Counts const up   = bit_ops.count({m, l + 1, c}) ? bit_ops.at({m, l + 1, c}) : Counts{};
        if (sfcl.sets != up.sets || sfcl.clears != up.clears)
          out.push_back("Lemma 5 / Def. 2: " + bm.name + ".L" + std::to_string(l) + "[" +
                        std::to_string(c) + "] had " + std::to_string(sfcl.sets) +
                        " set-first and " + std::to_string(sfcl.clears) + " clear-last, but " +
                        label(m, l + 1, c) + " was set " + std::to_string(up.sets) +
                        " and cleared " + std::to_string(up.clears) + " times");
      }
    }
  }
  // Def. 1 at the end.
  for (std::size_t m = 0; m < bitmaps.size(); ++m) {
    auto const& bm = bitmaps[m];
    for (std::uint32_t l = 0; l + 1 < bm.layout.num_levels; ++l)
      for (std::uint32_t c = 0; c < bm.layout.containers(l); ++c) {
        bool const nonempty = bm.words[bm.layout.level_offset[l] + c] != 0;
        if (nonempty != (bit_of(bm.words, bm.layout, l + 1, c) != 0))
          out.push_back("Def. 1: " + label(m, l + 1, c) + " is " +
                        std::to_string(bit_of(bm.words, bm.layout, l + 1, c)) + " but " + bm.name +
                        ".L" + std::to_string(l) + "[" + std::to_string(c) + "] is " +
                        (nonempty ? "non-empty" : "empty"));
      }
  }
  return out;
}

}  // namespace heaplab::interleaving_family::workloads
