// The type-erased side of the GPU executor: one GPU heap of one universe (universe_executor.cuh
// implements it per type list) and the table of universes (one entry per universe_*.cu). Plain C++.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "heaplab/families/heap/differential.hpp"
#include "heaplab/families/heap/gpu/gpu_runner.hpp"
#include "heaplab/families/heap/gpu/type_map.hpp"

namespace heaplab::heap_family::gpu::detail {

struct UniverseOptions {
  std::chrono::milliseconds watchdog_budget{5000};
  std::uint64_t shape_seed = 1;
  InjectedFault fault      = InjectedFault::none;
  bool perturb             = true;  // GpuExecutorOptions::perturb
};

/// One soa::Heap of a universe with the parameters of map.gpu(), plus the executor's state: the
/// map from object ids to encoded pointers and the device array of external roots.
class UniverseExecutor {
 public:
  virtual ~UniverseExecutor()                          = default;
  UniverseExecutor()                                   = default;
  UniverseExecutor(UniverseExecutor const&)            = delete;
  UniverseExecutor& operator=(UniverseExecutor const&) = delete;

  [[nodiscard]] virtual TypeMap const& map() const = 0;
  /// An empty heap again (Heap::reset), no roots, no ids; the warp-shape sequence restarts.
  virtual void reset() = 0;
  /// StepExecutor::execute for this heap.
  virtual ExecutedStep execute(schedule::Step const& step, schedule::StepPlan const& plan) = 0;
};

/// What universe_*.cu provides.
struct UniverseEntry {
  Universe info;
  /// The universe's TypeMap with M, n, k1 (validated; throws core::precondition_error).
  TypeMap (*type_map)(std::uint32_t num_blocks, std::uint32_t n, std::uint32_t k1) = nullptr;
  /// An executor with a new GPU heap on the current device (throws on CUDA errors).
  std::unique_ptr<UniverseExecutor> (*make_executor)(TypeMap const& map,
                                                     UniverseOptions const& options) = nullptr;
};

UniverseEntry wator_universe();
UniverseEntry sizes_universe();
UniverseEntry tree_universe();
UniverseEntry head8_universe();
UniverseEntry head16_universe();
UniverseEntry head32_universe();

/// Every universe's entry, in universes() order.
std::vector<UniverseEntry> const& universe_entries();

}  // namespace heaplab::heap_family::gpu::detail
