// The explorer's workload kinds and their names (programs.hpp builds their programs). Light on
// purpose: the interleaving family's schedules name a kind without compiling the workloads.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/core/enum_names.hpp"

namespace heaplab::interleaving_family::workloads {

/// heap: random_heap_workload(seed); heap_k: the same with k-slot requests of 1..8 objects
/// (k_slot_limits()); bitmap: random_bitmap_workload(seed); turnover: the one fixed
/// turnover_workload() (for the exhaustive search); heap-weak: random_heap_workload(seed) with
/// observed object words (HeapWorkload::observed_objects), the workload of the weak-memory mode
/// (explore::MemoryModel::release_acquire; docs/explorer.md "Weak memory").
/// rw: random_rw_workload(seed), the random-walk page pool (RW, RW-BM 32/64; rw_workload.hpp);
/// rw-weak: the same with observed page words (weak-memory mode).
/// queue: random_queue_workload(seed), the queue baseline on a tiny ring (queue_workload.hpp);
/// queue-weak: the same with observed page words (weak-memory mode).
/// burst: random_burst_workload(seed), cold-start k-slot bursts on a heap of 2-8 blocks that
/// reach every claim-ticket path (opener, waiter served, waiter timed out, run-table reuse).
/// heap-large: random_large_heap_workload(seed), prefilled heaps of 65..192 blocks (two-level
/// bitmaps) near out of memory (issue 34, class 1).
enum class WorkloadKind : std::uint8_t {
  heap,
  heap_k,
  bitmap,
  turnover,
  heap_weak,
  rw,
  rw_weak,
  queue,
  queue_weak,
  burst,
  heap_large
};

/// Every kind, in declaration order.
inline std::vector<WorkloadKind> const& all_workload_kinds() {
  static std::vector<WorkloadKind> const kinds{WorkloadKind::heap,
                                               WorkloadKind::heap_k,
                                               WorkloadKind::bitmap,
                                               WorkloadKind::turnover,
                                               WorkloadKind::heap_weak,
                                               WorkloadKind::rw,
                                               WorkloadKind::rw_weak,
                                               WorkloadKind::queue,
                                               WorkloadKind::queue_weak,
                                               WorkloadKind::burst,
                                               WorkloadKind::heap_large};
  return kinds;
}

/// "heap", "heap_k", "bitmap", "turnover", "heap-weak", "rw", "rw-weak", "queue", "queue-weak",
/// "burst", "heap-large" (the names of heaplab_explore --workload).
inline constexpr core::EnumName<WorkloadKind> kWorkloadKindNames[] = {
    {WorkloadKind::heap, "heap"},
    {WorkloadKind::heap_k, "heap_k"},
    {WorkloadKind::bitmap, "bitmap"},
    {WorkloadKind::turnover, "turnover"},
    {WorkloadKind::heap_weak, "heap-weak"},
    {WorkloadKind::rw, "rw"},
    {WorkloadKind::rw_weak, "rw-weak"},
    {WorkloadKind::queue, "queue"},
    {WorkloadKind::queue_weak, "queue-weak"},
    {WorkloadKind::burst, "burst"},
    {WorkloadKind::heap_large, "heap-large"}};

inline char const* to_string(WorkloadKind k) { return core::name_of(kWorkloadKindNames, k); }

/// Every kind's name, in declaration order.
inline std::vector<std::string> workload_kind_names() {
  std::vector<std::string> out;
  for (WorkloadKind k : all_workload_kinds()) out.push_back(to_string(k));
  return out;
}

/// The kind of a name, or nullopt.
inline std::optional<WorkloadKind> parse_workload_kind(std::string const& s) {
  return core::value_of(kWorkloadKindNames, s);
}

/// The kind of a name; throws std::invalid_argument for an unknown one.
inline WorkloadKind workload_kind_from_string(std::string const& s) {
  if (auto const k = parse_workload_kind(s)) return *k;
  throw std::invalid_argument("unknown workload '" + s +
                              "' (expected heap, heap_k, bitmap, turnover, heap-weak, rw, "
                              "rw-weak, queue, queue-weak, burst or heap-large)");
}

/// The workloads whose default memory model is the weak-memory mode (release_acquire).
inline bool is_weak_workload(WorkloadKind k) {
  return k == WorkloadKind::heap_weak || k == WorkloadKind::rw_weak ||
         k == WorkloadKind::queue_weak;
}

}  // namespace heaplab::interleaving_family::workloads
