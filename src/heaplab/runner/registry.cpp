// registry.hpp. The GPU runner (runner/gpu, GPU builds) is the "gpu" branches below.
#include "heaplab/runner/registry.hpp"

#include <algorithm>

#include "heaplab/core/expects.hpp"
#include "heaplab/runner/differential.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/model_executor.hpp"
#include "heaplab/runner/model_runner.hpp"
#include "heaplab/schedule/generators.hpp"
#if defined(HEAPLAB_HAVE_GPU_RUNNER)
#include "heaplab/runner/gpu/gpu_runner.hpp"    // the GPU runner (runner/gpu, GPU builds)
#include "heaplab/runner/gpu/universe_gen.hpp"  // its configs
#endif

namespace heaplab::runner {

namespace {

std::string const kGpuNotBuilt =
    "the GPU runner is not built: this heaplab was configured without CUDA (nvcc absent), so "
    "src/heaplab/runner/gpu was left out (docs/gpu-runner.md)";

}  // namespace

std::vector<std::string> const& runner_names() {
  static std::vector<std::string> const names = {"model", "differential-model", "gpu"};
  return names;
}

std::string unavailable_reason(std::string const& name) {
#if defined(HEAPLAB_HAVE_GPU_RUNNER)
  if (name == "gpu") return gpu::gpu_runner_unavailable_reason();
#endif
  if (name == "gpu") return kGpuNotBuilt;
  return "";
}

bool runner_built(std::string const& name) {
#if defined(HEAPLAB_HAVE_GPU_RUNNER)
  if (name == "gpu") return true;
#endif
  return name != "gpu" &&
         std::find(runner_names().begin(), runner_names().end(), name) != runner_names().end();
}

rc::Gen<core::HeapConfig> config_gen_for(std::string const& name) {
#if defined(HEAPLAB_HAVE_GPU_RUNNER)
  if (name == "gpu") return gpu::any_universe_config_gen();
#endif
  (void)name;
  return schedule::gen::config();
}

std::unique_ptr<ScheduleRunner> make_runner(std::string const& name, RunnerOptions const& options) {
  if (name == "model") return std::make_unique<ModelRunner>();
  if (name == "differential-model")
    return std::make_unique<DifferentialRunner>(
        std::make_unique<ModelExecutor>(PlacementPolicy::random_legal, options.placement_seed));
#if defined(HEAPLAB_HAVE_GPU_RUNNER)
  if (name == "gpu") return gpu::make_gpu_runner(options);
#endif
  if (name == "gpu") throw runner_unavailable(unavailable_reason(name));
  std::string known;
  for (auto const& n : runner_names()) known += (known.empty() ? "" : ", ") + n;
  throw core::precondition_error("unknown runner '" + name + "'; runners: " + known);
}

}  // namespace heaplab::runner
