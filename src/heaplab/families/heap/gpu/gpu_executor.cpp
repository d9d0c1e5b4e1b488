// GpuExecutor, the universe table and the "gpu" runner (gpu_runner.hpp). Host code: the CUDA
// work is in the universe executors (detail/universe_executor.cuh, instantiated by universe_*.cu).
#include "heaplab/families/heap/gpu/gpu_runner.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "heaplab/core/expects.hpp"
#include "heaplab/cuda/pinned_buffer.hpp"
#include "heaplab/cuda/step_arena.hpp"
#include "heaplab/cuda/watchdog.hpp"
#include "heaplab/families/heap/family.hpp"
#include "heaplab/families/heap/gpu/detail/universe_executor.hpp"
#include "heaplab/families/heap/gpu/universe_gen.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/registry.hpp"

namespace heaplab::heap_family::gpu {

namespace {

void set_device(int device) {
  cudaError_t const s = cudaSetDevice(device);
  if (s != cudaSuccess) {
    (void)cudaGetLastError();
    throw std::runtime_error("cudaSetDevice(" + std::to_string(device) +
                             ") failed: " + cudaGetErrorName(s) + ": " + cudaGetErrorString(s));
  }
}

/// Device bytes a heap of `config` in universe u needs: the block area plus a generous bound on
/// the metadata (headers, every level of every state bitmap, parallel_do scratch).
std::uint64_t heap_bytes_estimate(Universe const& u, core::HeapConfig const& config) {
  std::uint64_t const M = config.num_blocks;
  return M * u.gpu_block_bytes + M * (32 + 8 * std::uint64_t{config.num_types() + 1}) + (1u << 20);
}

}  // namespace

namespace detail {

std::vector<UniverseEntry> const& universe_entries() {
  static std::vector<UniverseEntry> const entries = [] {
    std::vector<UniverseEntry> out = {wator_universe(),
                                      sizes_universe(),
                                      tree_universe(),
                                      head8_universe(),
                                      head16_universe(),
                                      head32_universe()};
    add_random_universes(out);
    return out;
  }();
  return entries;
}

}  // namespace detail

bool is_random_layout(Universe const& u) { return u.name.rfind("rand", 0) == 0; }

std::vector<Universe> const& universes() {
  static std::vector<Universe> const list = [] {
    std::vector<Universe> out;
    for (auto const& e : detail::universe_entries()) out.push_back(e.info);
    return out;
  }();
  return list;
}

core::HeapConfig universe_config(std::string const& name,
                                 std::uint32_t num_blocks,
                                 std::uint32_t n,
                                 std::uint32_t k1) {
  std::string known;
  for (auto const& e : detail::universe_entries()) {
    if (e.info.name == name) return e.type_map(num_blocks, n, k1).schedule();
    known += (known.empty() ? "" : ", ") + e.info.name;
  }
  throw core::precondition_error("unknown GPU type universe '" + name + "'; universes: " + known);
}

UniverseMatch match_universe(core::HeapConfig const& config) {
  UniverseMatch m;
  std::string why;
  auto const& list = universes();
  for (std::size_t u = 0; u < list.size(); ++u) {
    std::string const difference = type_difference(list[u].config, config);
    if (difference.empty()) {
      m.index = u;
      return m;
    }
    why += (why.empty() ? "" : "; ") + list[u].name + ": " + difference;
  }
  m.reason =
      "no GPU type universe has these types (GPU heap types are compiled in; the GPU runner "
      "supports the configs of gpu::universes(), docs/gpu-runner.md): " +
      why;
  return m;
}

std::chrono::milliseconds effective_watchdog_budget(GpuExecutorOptions const& options) {
  bool const tool            = cudart::under_cuda_tool();
  char const* const v        = std::getenv("HEAPLAB_WATCHDOG_MS");
  bool const explicit_budget = v != nullptr && *v != '\0';
  return tool && !explicit_budget ? options.watchdog_budget * 30 : options.watchdog_budget;
}

// ------------------------------------------------------------------------------------ executor

GpuExecutor::GpuExecutor(GpuExecutorOptions options)
    : options_(options),
      staging_(std::make_unique<cudart::pinned_buffer>()),
      arena_(std::make_unique<cudart::step_arena>()) {}

GpuExecutor::~GpuExecutor() {
  // After a hang cudaFree(Host) would wait for the stuck kernel: leave the memory to the process.
  if (executor_ && executor_->hung()) {
    staging_->leak();
    arena_->leak();
  }
}

std::string GpuExecutor::device_name() const { return runner::gpu_name(options_.device); }

Support GpuExecutor::supports(core::HeapConfig const& config) const {
  try {
    config.validate();
  } catch (std::exception const& e) {
    return {false, e.what()};
  }
  UniverseMatch const m = match_universe(config);
  if (!m.index) return {false, m.reason};
  if (options_.device >= 0 && options_.device < runner::visible_gpu_count()) {
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaSetDevice(options_.device) == cudaSuccess &&
        cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      std::uint64_t const need  = heap_bytes_estimate(universes()[*m.index], config);
      std::uint64_t const share = 2ull * std::max(1u, options_.runners_per_device);
      if (need > free_bytes / share)
        return {false,
                "a heap of M = " + std::to_string(config.num_blocks) + " blocks of universe '" +
                    universes()[*m.index].name + "' needs about " + std::to_string(need) +
                    " bytes; device " + std::to_string(options_.device) + " has " +
                    std::to_string(free_bytes) + " bytes free (a runner uses at most 1/" +
                    std::to_string(share) + " of it)"};
    } else {
      (void)cudaGetLastError();
    }
  }
  return {};
}

void GpuExecutor::reset(core::HeapConfig const& config) {
  set_device(options_.device);
  UniverseMatch const m = match_universe(config);
  if (!m.index) throw core::precondition_error(m.reason);
  auto const& entry = detail::universe_entries()[*m.index];
  if (executor_ && universe_ == m.index) {
    core::HeapConfig const& have = executor_->map().schedule();
    if (have.num_blocks == config.num_blocks && have.defrag_factor == config.defrag_factor &&
        have.k1 == config.k1) {
      executor_->reset();
      return;
    }
  }
  executor_.reset();  // frees the old heap before the new one is allocated
  universe_.reset();
  detail::UniverseOptions o;
  o.watchdog_budget = effective_watchdog_budget(options_);
  o.shape_seed      = options_.shape_seed;
  o.perturb         = options_.perturb;
  o.fault           = options_.fault;
  o.staging         = staging_.get();
  o.arena           = arena_.get();
  executor_ =
      entry.make_executor(entry.type_map(config.num_blocks, config.defrag_factor, config.k1), o);
  universe_ = m.index;
}

ExecutedStep GpuExecutor::execute(schedule::Step const& step, schedule::StepPlan const& plan) {
  if (!executor_) throw std::logic_error("GpuExecutor::execute before reset");
  set_device(options_.device);
  return executor_->execute(step, plan);
}

// -------------------------------------------------------------------------------------- runner

std::string gpu_runner_unavailable_reason() { return runner::gpu_unavailable_reason(); }

std::unique_ptr<HeapRunner> make_gpu_runner(runner::RunnerOptions const& options) {
  if (std::string const why = gpu_runner_unavailable_reason(); !why.empty())
    throw runner::runner_unavailable(why);
  int const count = runner::visible_gpu_count();
  if (options.device < 0 || options.device >= count)
    throw runner::runner_unavailable("no CUDA device " + std::to_string(options.device) + " (" +
                                     std::to_string(count) + " visible)");
  GpuExecutorOptions o;
  o.device             = options.device;
  o.runners_per_device = options.runners_per_device;
  o.perturb            = options.perturb;
  o.watchdog_budget    = options.watchdog_ms == 0 ? cudart::default_watchdog_budget()
                                                  : std::chrono::milliseconds(options.watchdog_ms);
  return std::make_unique<DifferentialRunner>(std::make_unique<GpuExecutor>(o));
}

namespace {

// The heap family's GPU runner, and the configs its cases are drawn from (its type universes).
runner::RunnerRegistration const gpu_runner{gpu_runner_info(
    "the GPU object allocator and CompactGpu against the model, step by step "
    "(docs/gpu-runner.md)",
    [](runner::RunnerOptions const& o) -> std::unique_ptr<runner::Runner> {
      return make_gpu_runner(o);
    },
    &gpu_runner_unavailable_reason)};
ConfigSourceRegistration const gpu_configs{"gpu", [] { return any_universe_config_gen(); }};

}  // namespace

}  // namespace heaplab::heap_family::gpu
