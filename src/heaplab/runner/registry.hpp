// Runners by name, as the command line names them (heaplab stress/replay/minimize --runner).
//
//   model               ModelRunner: the reference model alone (model_runner.hpp)
//   differential-model  DifferentialRunner over ModelExecutor with random legal placements: the
//                       differential path of the GPU runner, with a second model in place of the
//                       GPU (model_executor.hpp)
//   gpu                 DifferentialRunner over the GPU allocator (runner/gpu/gpu_runner.hpp; in
//                       builds without CUDA make_runner throws runner_unavailable saying so)
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "heaplab/core/heap_config.hpp"
#include "heaplab/runner/runner.hpp"

namespace heaplab::runner {

struct RunnerOptions {
  /// differential-model: seed of the random legal placements.
  std::uint64_t placement_seed = 1;
  /// gpu: the CUDA device (stress gives worker w device w % GPUs).
  int device = 0;
  /// gpu: how many runners share the device (each keeps its heaps under 1 / (2 x this) of the
  /// device's free memory).
  unsigned runners_per_device = 1;
  /// gpu: warp-order perturbation in every step's kernels (GpuExecutorOptions::perturb).
  bool perturb = true;
  /// gpu: the watchdog's budget for one step's kernels (cuda/watchdog.hpp).
  std::chrono::milliseconds watchdog_budget{5000};
};

/// A runner that exists but cannot run here (not built, no GPU); what() says why.
class runner_unavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Every runner name, in the order of the table above.
std::vector<std::string> const& runner_names();

/// Throws core::precondition_error for an unknown name (listing the known ones) and
/// runner_unavailable for a runner that cannot run here.
std::unique_ptr<ScheduleRunner> make_runner(std::string const& name,
                                            RunnerOptions const& options = {});

/// Random configs that runner `name` supports, for `heaplab stress`: any type list
/// (schedule::gen::config()) for the CPU runners; for "gpu", the GPU runner's type universes with
/// random M, n and k1 (gpu::any_universe_config_gen, docs/gpu-runner.md), or, where the GPU runner
/// is not built, schedule::gen::config() (make_runner then says why it cannot run).
rc::Gen<core::HeapConfig> config_gen_for(std::string const& name);

/// Whether this heaplab has runner `name` at all (whether or not it can run here): "gpu" only in
/// builds with the GPU runner. Where it is false, config_gen_for(name) is not that runner's.
bool runner_built(std::string const& name);

/// "" when make_runner(name) would succeed, else why not (without constructing it).
std::string unavailable_reason(std::string const& name);

}  // namespace heaplab::runner
