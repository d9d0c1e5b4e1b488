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

/// The heap-weak workload of a seed.
inline HeapWorkload random_heap_weak_workload(std::uint64_t seed) {
  HeapWorkload w     = random_heap_workload(seed);
  w.observed_objects = true;
  return w;
}

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
      case WorkloadKind::heap:
        return make_heap_program(random_heap_workload(ws), claim_paths);
      case WorkloadKind::heap_k:
        return make_heap_program(random_heap_workload(ws, k_slot_limits()), claim_paths);
      case WorkloadKind::burst:
        return make_heap_program(random_burst_workload(ws), claim_paths);
      case WorkloadKind::bitmap:
        return make_bitmap_program(random_bitmap_workload(ws));
      case WorkloadKind::heap_weak:
        return make_heap_program(random_heap_weak_workload(ws), claim_paths);
      case WorkloadKind::rw:
        return make_rw_program(random_rw_workload(ws));
      case WorkloadKind::rw_weak:
        return make_rw_program(random_rw_weak_workload(ws));
      case WorkloadKind::queue:
        return make_queue_program(random_queue_workload(ws));
      case WorkloadKind::queue_weak:
        return make_queue_program(random_queue_weak_workload(ws));
      case WorkloadKind::turnover:
        break;
    }
    return make_heap_program(turnover_workload());
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
  else
    os << turnover_workload();
  return os.str();
}

}  // namespace heaplab::interleaving_family::workloads
