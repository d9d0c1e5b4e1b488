// Statistics of a GPU heap (Heap::statistics()): per type the allocated blocks, the slots they
// hold and the slots in use, the fragmentation F of CompactGpu sec. 2.2, and the out-of-memory
// count. Host only, plain C++: the heap's kernel counts blocks and used slots per type, the
// numbers below are derived here (CPU-tested against check::fragmentation on snapshots).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heaplab/core/expects.hpp"
#include "heaplab/core/heap_config.hpp"

namespace heaplab::soa {

struct TypeStatistics {
  std::string name;
  std::uint32_t capacity         = 0;  // N_T (0 for abstract types)
  std::uint64_t allocated_blocks = 0;  // blocks in allocated[T]
  std::uint64_t allocated_slots  = 0;  // allocated_blocks * N_T
  std::uint64_t used_slots       = 0;  // live objects: allocation bits below N_T in those blocks
  /// CompactGpu sec. 2.2 over this type's allocated blocks: the mean free level
  /// (N_T - used(b)) / N_T; 0 without allocated blocks (= check::fragmentation(snapshot, T)).
  double fragmentation = 0;
};

struct HeapStatistics {
  std::vector<TypeStatistics> types;  // indexed by type id
  std::uint64_t num_blocks       = 0;
  std::uint64_t free_blocks      = 0;  // bits set in the free-block bitmap
  std::uint64_t allocated_blocks = 0;
  std::uint64_t used_slots       = 0;
  /// CompactGpu sec. 2.2 over every allocated block (each block weighs the same):
  /// = check::fragmentation(snapshot, nullopt).
  double fragmentation = 0;
  /// Allocation requests answered with nullptr since the heap was created or last reset.
  std::uint64_t oom_count = 0;
};

/// The statistics from per-type counts of allocated blocks and used slots (and the number of
/// free blocks, which at quiescence is num_blocks - allocated blocks). F over a type's
/// blocks is sum_b (N - used_b) / N / blocks = (blocks - used / N) / blocks, so the per-block sum
/// of CompactGpu sec. 2.2 needs only the two totals.
inline HeapStatistics statistics_from_counts(core::HeapConfig const& config,
                                             std::vector<std::uint64_t> const& blocks_per_type,
                                             std::vector<std::uint64_t> const& used_per_type,
                                             std::uint64_t free_blocks,
                                             std::uint64_t oom_count) {
  HEAPLAB_EXPECTS(
      blocks_per_type.size() == config.num_types() && used_per_type.size() == config.num_types(),
      "statistics_from_counts: one count per type expected");
  HeapStatistics s;
  s.num_blocks       = config.num_blocks;
  s.oom_count        = oom_count;
  double free_levels = 0;
  for (std::uint32_t t = 0; t < config.num_types(); ++t) {
    TypeStatistics ts;
    ts.name             = config.types[t].name;
    ts.capacity         = config.capacity(t);
    ts.allocated_blocks = blocks_per_type[t];
    ts.used_slots       = used_per_type[t];
    ts.allocated_slots  = ts.allocated_blocks * ts.capacity;
    if (ts.allocated_blocks > 0 && ts.capacity > 0) {
      double const type_free = static_cast<double>(ts.allocated_blocks) -
                               static_cast<double>(ts.used_slots) / ts.capacity;
      ts.fragmentation = type_free / static_cast<double>(ts.allocated_blocks);
      free_levels += type_free;
    }
    s.allocated_blocks += ts.allocated_blocks;
    s.used_slots += ts.used_slots;
    s.types.push_back(std::move(ts));
  }
  s.free_blocks = free_blocks;
  s.fragmentation =
      s.allocated_blocks == 0 ? 0.0 : free_levels / static_cast<double>(s.allocated_blocks);
  return s;
}

}  // namespace heaplab::soa
