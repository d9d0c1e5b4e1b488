#include "heaplab/check/defrag_obligations.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/expects.hpp"

namespace heaplab::check {

namespace {

/// Calls f(block, type) for each allocated block of `type` (or of every concrete type).
template <typename F>
void for_each_allocated_of(HeapSnapshot const& s, std::optional<std::uint32_t> type, F&& f) {
  auto const& config = s.config;
  if (type) {
    HEAPLAB_EXPECTS(*type < config.num_types() && !config.types[*type].is_abstract &&
                        *type < s.allocated.size(),
                    "type " + std::to_string(*type) + " is not a concrete type of the snapshot");
  }
  for (std::uint32_t t = 0; t < config.num_types() && t < s.allocated.size(); ++t) {
    if (config.types[t].is_abstract || (type && *type != t)) continue;
    for (std::uint32_t b : set_bits(s.allocated[t]))
      if (b < s.blocks.size()) f(b, t);
  }
}

}  // namespace

double fragmentation(HeapSnapshot const& snapshot, std::optional<std::uint32_t> type) {
  double free_levels   = 0;
  std::uint64_t blocks = 0;
  for_each_allocated_of(snapshot, type, [&](std::uint32_t b, std::uint32_t t) {
    std::uint32_t const cap  = snapshot.config.capacity(t);
    std::uint32_t const used = used_slots(snapshot.blocks[b].alloc_bitmap, cap);
    free_levels += static_cast<double>(cap - used) / cap;
    ++blocks;
  });
  return blocks == 0 ? 0.0 : free_levels / static_cast<double>(blocks);
}

double slot_weighted_fragmentation(HeapSnapshot const& snapshot,
                                   std::optional<std::uint32_t> type) {
  std::uint64_t unused = 0, slots = 0;
  for_each_allocated_of(snapshot, type, [&](std::uint32_t b, std::uint32_t t) {
    std::uint32_t const cap = snapshot.config.capacity(t);
    unused += cap - used_slots(snapshot.blocks[b].alloc_bitmap, cap);
    slots += cap;
  });
  return slots == 0 ? 0.0 : static_cast<double>(unused) / static_cast<double>(slots);
}

std::vector<Violation> check_defrag_postconditions(HeapSnapshot const& after,
                                                   std::uint32_t type,
                                                   std::uint32_t n,
                                                   std::uint32_t k1) {
  HEAPLAB_EXPECTS(n >= 1, "the defragmentation factor n must be at least 1");
  std::vector<Violation> out;
  auto const& config      = after.config;
  std::uint32_t remaining = 0;
  for_each_allocated_of(after, type, [&](std::uint32_t b, std::uint32_t t) {
    std::uint32_t const cap  = config.capacity(t);
    std::uint32_t const used = used_slots(after.blocks[b].alloc_bitmap, cap);
    bool const low_fill      = core::is_defrag_fill(used, cap, n);
    if (low_fill) ++remaining;
    if (low_fill && !test_bit(after.defrag.at(t), b)) {
      Violation v;
      v.invariant = "defrag-post-fill";
      v.message   = "block " + std::to_string(b) + " of " + type_name(config, t) + " holds " +
                  std::to_string(used) + "/" + std::to_string(cap) +
                  " objects (fill <= n/(n+1) with n=" + std::to_string(n) +
                  ") but is not a defragmentation candidate";
      v.block = b;
      v.bit   = b;
      v.type  = t;
      out.push_back(std::move(v));
    }
  });
  std::uint32_t const allowed = std::max(k1, n);
  if (remaining > allowed) {
    Violation v;
    v.invariant = "defrag-post-candidates";
    v.message   = std::to_string(remaining) + " blocks of " + type_name(config, type) +
                " have fill <= n/(n+1) (n=" + std::to_string(n) +
                ") after defragmentation; at most max(k1, n) = " + std::to_string(allowed) +
                " may remain";
    v.type = type;
    out.push_back(std::move(v));
  }
  return out;
}

std::uint32_t worst_case_passes(std::uint32_t d, std::uint32_t n, std::uint32_t k1) {
  HEAPLAB_EXPECTS(n >= 1, "the defragmentation factor n must be at least 1");
  return core::worst_case_passes_with_cap(d, n, k1, core::kUnlimitedSources);
}

double paper_pass_bound(std::uint32_t d, std::uint32_t n, std::uint32_t k1) {
  HEAPLAB_EXPECTS(n >= 1, "the defragmentation factor n must be at least 1");
  double const k = std::max<std::uint32_t>(k1, 1);
  if (d <= k) return 0.0;
  return std::log(static_cast<double>(d) / k) / std::log(static_cast<double>(n + 1) / n);
}

std::vector<Violation> check_pass_bound(std::uint32_t passes,
                                        std::uint32_t d,
                                        std::uint32_t n,
                                        std::uint32_t k1,
                                        std::uint32_t source_cap) {
  HEAPLAB_EXPECTS(n >= 1, "the defragmentation factor n must be at least 1");
  HEAPLAB_EXPECTS(source_cap >= 1, "the source cap must be at least 1");
  std::vector<Violation> out;
  std::uint32_t const bound = core::worst_case_passes_with_cap(d, n, k1, source_cap);
  if (passes > bound) {
    bool const capped = source_cap != core::kUnlimitedSources;
    Violation v;
    v.invariant = "defrag-pass-bound";
    v.message   = std::to_string(passes) + " passes, but from d=" + std::to_string(d) +
                " candidates with n=" + std::to_string(n) + ", k1=" + std::to_string(k1) +
                (capped ? " and at most " + std::to_string(source_cap) + " sources per pass"
                        : std::string()) +
                " at most " + std::to_string(bound) + " can run (r <- r - " +
                (capped ? "min(floor(r/(n+1)), cap)" : "floor(r/(n+1))") +
                " while r > k1 and r > n; CompactGpu sec. 3.6, 3.8)";
    out.push_back(std::move(v));
  }
  return out;
}

std::uint32_t count_candidates(HeapSnapshot const& snapshot, std::uint32_t type, std::uint32_t n) {
  std::uint32_t count = 0;
  for_each_allocated_of(snapshot, type, [&](std::uint32_t b, std::uint32_t t) {
    std::uint32_t const cap = snapshot.config.capacity(t);
    if (core::is_defrag_fill(used_slots(snapshot.blocks[b].alloc_bitmap, cap), cap, n)) ++count;
  });
  return count;
}

std::vector<Violation> check_defrag_obligations(HeapSnapshot const& after, DefragCall const& call) {
  HEAPLAB_EXPECTS(call.n >= 1, "the defragmentation factor n must be at least 1");
  std::vector<Violation> out;
  std::uint32_t const left = count_candidates(after, call.type, call.n);
  if (call.n == after.config.defrag_factor) {
    out = check_defrag_postconditions(after, call.type, call.n, call.k1);
  } else if (std::uint32_t const allowed = std::max(call.k1, call.n); left > allowed) {
    // n-override (docs/model.md): defrag[T] follows the config's n, so only the candidate count
    // of this call's n can be checked.
    Violation v;
    v.invariant = "defrag-post-candidates";
    v.message   = std::to_string(left) + " blocks of " + type_name(after.config, call.type) +
                " have fill <= n/(n+1) (n=" + std::to_string(call.n) +
                ") after defragmentation; at most max(k1, n) = " + std::to_string(allowed) +
                " may remain";
    v.type = call.type;
    out.push_back(std::move(v));
  }
  for (auto& v :
       check_pass_bound(call.passes, call.candidates_before, call.n, call.k1, call.source_cap))
    out.push_back(std::move(v));
  return out;
}

}  // namespace heaplab::check
