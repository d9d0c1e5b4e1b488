// The GPU runner: schedules executed on the GPU object allocator (soa::Heap) and compared step by
// step with the reference model (docs/gpu-runner.md).
//
//   auto runner = heaplab::heap_family::gpu::make_gpu_runner({});   //
//   DifferentialRunner(GpuExecutor) core::HeapConfig c =
//   heaplab::heap_family::gpu::universe_config("wator", 32, 2, 1); RunOutcome r =
//   runner->run(schedule_over_c);
//
// GPU heap types are compile-time classes, so the runner supports exactly the configs of its
// *type universes* (universes()): a schedule's config must match one universe's types exactly
// (names, sizes, bases, abstract flags, pointer fields); M, n and k1 are free. It registers
// itself as the heap family's runner "gpu" (gpu_executor.cpp), so `heaplab stress --runner gpu`,
// `heaplab replay` and `heaplab minimize --runner gpu` use it; stress draws its cases' configs
// from the universes (any_universe_config_gen, universe_gen.hpp).
//
// Plain C++ header (no CUDA types): usable from .cpp files.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/core/heap_config.hpp"
#include "heaplab/families/heap/differential.hpp"
#include "heaplab/runner/family.hpp"

namespace heaplab::cudart {
class pinned_buffer;
class step_arena;
}  // namespace heaplab::cudart

namespace heaplab::heap_family::gpu {

// ------------------------------------------------------------------------------ type universes

/// A set of GPU heap types (a soa::HeapTypes list) and the schedule config it implements.
struct Universe {
  std::string name;         // "wator", "sizes", "tree"
  std::string description;  // one line: the types and what the universe covers
  /// The schedule-side config (type_map.hpp) with M = 32, n = 1, k1 = 0; use universe_config()
  /// for other parameters.
  core::HeapConfig config;
  std::uint64_t gpu_block_bytes = 0;  // bytes of one GPU block (soa::HeapTypes::block_bytes)
  std::string gpu_types;  // the GPU type list with sizes, e.g. "Tracked(16, abstract) ..."
};

/// Every universe, in a fixed order: the six written by hand (wator, sizes, tree, head8, head16,
/// head32), then the 32 random-layout universes rand00..rand31 (tools/gen-random-universes).
std::vector<Universe> const& universes();

/// Whether `u` is one of the generated random-layout universes (named rand00..rand31).
bool is_random_layout(Universe const& u);

/// The config of universe `name` with M = num_blocks, n and k1 (validated). Throws
/// core::precondition_error for an unknown name (listing the known ones) or invalid parameters.
core::HeapConfig universe_config(std::string const& name,
                                 std::uint32_t num_blocks,
                                 std::uint32_t n,
                                 std::uint32_t k1);

/// Which universe a config's types match: its index into universes(), or none and why not (for
/// every universe, the first difference).
struct UniverseMatch {
  std::optional<std::size_t> index;
  std::string reason;  // empty when index is set
};
UniverseMatch match_universe(core::HeapConfig const& config);

// ------------------------------------------------------------------------------------ executor

/// Deliberate bugs for tests that prove the differential path sees GPU-side errors (never set
/// them outside tests).
enum class InjectedFault {
  none,
  drop_first_link,     // alloc waves: the first planned initial pointer is written as null
  skip_last_free,      // free waves: the last planned free is not launched
  corrupt_field_byte,  // alloc waves: byte 0 of the first new object's first data field flipped
};

struct GpuExecutorOptions {
  int device = 0;  // the CUDA device (cudaSetDevice before every call)
  /// Executors sharing the device: supports() refuses a heap needing more than
  /// free memory / (2 x runners_per_device).
  unsigned runners_per_device = 1;
  /// Budget of one step's kernels (cuda/watchdog.hpp). When a CUDA tool is injected
  /// (cudart::under_cuda_tool: compute-sanitizer) and HEAPLAB_WATCHDOG_MS is not set, it is
  /// multiplied by 30, as heaplab's GPU tests do.
  std::chrono::milliseconds watchdog_budget{5000};
  /// Seeds the warp shapes of free kernels (order of the frees, idle lanes, block sizes).
  std::uint64_t shape_seed = 1;
  InjectedFault fault      = InjectedFault::none;
  /// Warp-order perturbation (core/perturb.hpp) in every step's kernels: allocation, free and
  /// parallel_do warps and CompactGpu's kernels sleep by a hash of (shape_seed, step, warp).
  bool perturb = true;
};

/// The watchdog budget actually used for `options` (after the tool scaling described above).
std::chrono::milliseconds effective_watchdog_budget(GpuExecutorOptions const& options);

namespace detail {
class UniverseExecutor;
}

/// A StepExecutor over the GPU heap (differential.hpp contract). reset() picks the universe the
/// config matches and builds (or resets) a soa::Heap of it with the config's M, n, k1; execute()
/// runs one step's kernels on the heap's own stream, waits with the watchdog, checks the device's
/// error reports and returns the placements, the snapshot with payloads (as the schedule config
/// sees it, TypeMap), the external roots and, for defrag steps, the pass count.
/// Not thread-safe; one executor per host thread (stress shards each have their own).
class GpuExecutor final : public StepExecutor {
 public:
  explicit GpuExecutor(GpuExecutorOptions options = {});
  ~GpuExecutor() override;
  GpuExecutor(GpuExecutor const&)            = delete;
  GpuExecutor& operator=(GpuExecutor const&) = delete;

  [[nodiscard]] std::string name() const override { return "gpu"; }
  /// validate(), a matching universe, and (where a device is usable) a heap that fits in half
  /// of the device's free memory.
  [[nodiscard]] Support supports(core::HeapConfig const& config) const override;
  [[nodiscard]] bool deterministic() const override { return false; }
  [[nodiscard]] std::string device_name() const override;
  void reset(core::HeapConfig const& config) override;
  ExecutedStep execute(schedule::Step const& step, schedule::StepPlan const& plan) override;

  /// The universe of the last reset() (nullopt before the first).
  [[nodiscard]] std::optional<std::size_t> universe() const { return universe_; }
  [[nodiscard]] GpuExecutorOptions const& options() const { return options_; }

 private:
  GpuExecutorOptions options_;
  std::optional<std::size_t> universe_;
  /// The page-locked buffer every heap of this executor reads its snapshots back into (one per
  /// worker, grown to the largest heap seen; cuda/pinned_buffer.hpp). Leaked after a hang.
  std::unique_ptr<cudart::pinned_buffer> staging_;
  /// The steps' argument and result arrays (cuda/step_arena.hpp), reused by every heap.
  std::unique_ptr<cudart::step_arena> arena_;
  std::unique_ptr<detail::UniverseExecutor> executor_;
};

// -------------------------------------------------------------------------------------- runner

/// "" when the GPU runner can run here; else why not ("no CUDA device (...)").
std::string gpu_runner_unavailable_reason();

/// The "gpu" runner: DifferentialRunner over a GpuExecutor on options.device with
/// options.watchdog_ms, options.perturb and options.runners_per_device (registered under "gpu"
/// in gpu_executor.cpp). Throws runner::runner_unavailable when no GPU is usable.
std::unique_ptr<HeapRunner> make_gpu_runner(runner::RunnerOptions const& options);

}  // namespace heaplab::heap_family::gpu
