// Program factories for the explorer: a workload kind plus seeds -> a fresh explore::Program per
// run. Shared by the explorer CLI (heaplab_explore), the property tests and the mutant tests.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "heaplab/explore/explore.hpp"
#include "heaplab/families/interleaving/workloads/bitmap_workload.hpp"
#include "heaplab/families/interleaving/workloads/heap_workload.hpp"
#include "heaplab/families/interleaving/workloads/queue_workload.hpp"
#include "heaplab/families/interleaving/workloads/rw_workload.hpp"
#include "heaplab/families/interleaving/workloads/workload_gen.hpp"
#include "heaplab/families/interleaving/workloads/workload_kind.hpp"

namespace heaplab::interleaving_family::workloads {

/// Each run draws its workload from its own seed, unless `fixed_workload_seed` pins one workload
/// for every run (the exhaustive search needs a fixed program). Heap workloads add the
/// claim-ticket paths of every run to `claim_paths` if given (claim_paths.hpp).
inline explore::ProgramFactory workload_factory(
    WorkloadKind kind,
    std::optional<std::uint64_t> fixed_workload_seed = {},
    std::shared_ptr<ClaimPathCounts> claim_paths     = {}) {
  return [kind, fixed_workload_seed, claim_paths](std::uint64_t run_seed) {
    std::uint64_t const ws = fixed_workload_seed.value_or(run_seed);
    switch (kind) {
      case WorkloadKind::bitmap:
        return bitmap_kind_program(kind, ws);
      case WorkloadKind::rw:
      case WorkloadKind::rw_weak:
        return rw_kind_program(kind, ws);
      case WorkloadKind::queue:
      case WorkloadKind::queue_weak:
        return queue_kind_program(kind, ws);
      default:
        return heap_kind_program(kind, ws, claim_paths);
    }
  };
}

/// A printable description of the workload a seed selects.
inline std::string describe_workload(WorkloadKind kind, std::uint64_t workload_seed) {
  std::ostringstream os;
  if (kind == WorkloadKind::heap)
    os << random_heap_workload(workload_seed);
  else if (kind == WorkloadKind::heap_k)
    os << random_heap_workload(workload_seed, k_slot_limits());
  else if (kind == WorkloadKind::bitmap)
    os << random_bitmap_workload(workload_seed);
  else if (kind == WorkloadKind::heap_weak)
    os << random_heap_weak_workload(workload_seed);
  else if (kind == WorkloadKind::rw)
    os << random_rw_workload(workload_seed);
  else if (kind == WorkloadKind::rw_weak)
    os << random_rw_weak_workload(workload_seed);
  else if (kind == WorkloadKind::queue)
    os << random_queue_workload(workload_seed);
  else if (kind == WorkloadKind::queue_weak)
    os << random_queue_weak_workload(workload_seed);
  else if (kind == WorkloadKind::burst)
    os << random_burst_workload(workload_seed);
  else if (kind == WorkloadKind::heap_large)
    os << random_large_heap_workload(workload_seed);
  else
    os << turnover_workload();
  return os.str();
}

}  // namespace heaplab::interleaving_family::workloads
