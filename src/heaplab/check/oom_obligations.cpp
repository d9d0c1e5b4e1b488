#include "heaplab/check/oom_obligations.hpp"

#include <string>

#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/expects.hpp"

namespace heaplab::check {

std::vector<Violation> check_oom_justified(HeapSnapshot const& before,
                                           HeapSnapshot const& after,
                                           std::vector<std::uint64_t> const& nulls) {
  HEAPLAB_EXPECTS(before.blocks.size() == after.blocks.size() &&
                      before.config.num_types() == after.config.num_types(),
                  "check_oom_justified: the snapshots before and after the wave have different "
                  "shapes");
  auto const& config    = after.config;
  std::uint32_t const m = static_cast<std::uint32_t>(after.blocks.size());

  // (a) blocks free before and after: free during the whole wave, whatever type failed.
  std::uint32_t free_throughout = 0;
  std::int64_t first_free       = -1;
  for (std::uint32_t b = 0; b < m; ++b)
    if (test_bit(before.free_blocks, b) && test_bit(after.free_blocks, b)) {
      if (first_free < 0) first_free = b;
      ++free_throughout;
    }

  std::vector<Violation> out;
  for (std::uint32_t t = 0; t < config.num_types() && t < nulls.size(); ++t) {
    if (nulls[t] == 0) continue;
    std::string const what = std::to_string(nulls[t]) + " allocation" + (nulls[t] == 1 ? "" : "s") +
                             " of " + type_name(config, t) + " returned null";
    if (free_throughout > 0) {
      Violation v;
      v.invariant = kOomJustified;
      v.message   = what + " although " + std::to_string(free_throughout) + " block" +
                  (free_throughout == 1 ? " was" : "s were") +
                  " free before and after the wave (first: block " + std::to_string(first_free) +
                  "); an allocation may fail only when no block is free (DynaSOAr Alg. 1, sec. "
                  "3.5)";
      v.block = first_free;
      v.bit   = first_free;
      v.type  = t;
      out.push_back(std::move(v));
      continue;
    }
    // (b) slots of T free before and after in blocks of T before and after.
    if (config.types[t].is_abstract) continue;
    std::uint32_t const cap  = config.capacity(t);
    std::uint64_t slots      = 0;
    std::int64_t first_block = -1;
    std::int64_t first_slot  = -1;
    for (std::uint32_t b = 0; b < m; ++b) {
      if (allocated_type(before, b) != t || allocated_type(after, b) != t) continue;
      std::uint64_t const open =
          ~before.blocks[b].alloc_bitmap & ~after.blocks[b].alloc_bitmap & ~padding_mask(cap);
      if (open == 0) continue;
      slots += static_cast<std::uint64_t>(core::popcount(open));
      if (first_block < 0) {
        first_block = b;
        first_slot  = core::find_first_set(open);
      }
    }
    if (slots > 0) {
      Violation v;
      v.invariant = kOomJustified;
      v.message = what + " although " + std::to_string(slots) + " slot" + (slots == 1 ? "" : "s") +
                  " of blocks of " + type_name(config, t) +
                  " stayed free through the wave (first: block " + std::to_string(first_block) +
                  " slot " + std::to_string(first_slot) +
                  "); an allocation may fail only when no active block of its type has a free "
                  "slot (DynaSOAr Alg. 1, sec. 3.5)";
      v.block = first_block;
      v.bit   = first_slot;
      v.type  = t;
      out.push_back(std::move(v));
    }
  }
  return out;
}

}  // namespace heaplab::check
