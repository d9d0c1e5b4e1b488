// The object heap family, "heap" (docs/families.md): DynaSOAr's allocator and CompactGpu's
// defragmentation, as heaplab tests them. Its schedules are schedule::Schedule (format
// "heaplab-schedule", docs/schedules.md); its runners are "model" (ModelRunner),
// "differential-model" (DifferentialRunner over a second model placing at random) and, in GPU
// builds, "gpu" (gpu/gpu_runner.hpp); its invariant catalog is check::catalog(); its model is
// model::HeapModel (models/).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <rapidcheck.h>

#include "heaplab/core/heap_config.hpp"
#include "heaplab/families/heap/heap_runner.hpp"
#include "heaplab/runner/family.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace heaplab::heap_family {

class HeapFamily final : public runner::TypedFamily<schedule::Schedule> {
 public:
  [[nodiscard]] std::string name() const override { return "heap"; }
  [[nodiscard]] std::string title() const override;
  [[nodiscard]] std::string schedule_format() const override;
  [[nodiscard]] std::string reference_runner() const override { return "model"; }
  [[nodiscard]] std::vector<std::string> replay_runners() const override { return {"gpu"}; }
  [[nodiscard]] std::vector<runner::InvariantInfo> invariants() const override;

  [[nodiscard]] runner::AnySchedule from_json(nlohmann::json const& document) const override;
  [[nodiscard]] nlohmann::ordered_json to_json(runner::AnySchedule const& s) const override;

  [[nodiscard]] std::string describe_step(runner::AnySchedule const& s,
                                          std::size_t i) const override;
  [[nodiscard]] std::string config_summary(runner::AnySchedule const& s) const override;
  [[nodiscard]] std::string size_summary(runner::AnySchedule const& s) const override;
  void show(runner::AnySchedule const& s, std::ostream& out) const override;

  [[nodiscard]] std::vector<runner::Profile> profiles() const override;
  [[nodiscard]] runner::AnySchedule generate(runner::GenerationRequest const& request,
                                             std::uint64_t seed,
                                             std::uint32_t size) const override;
  [[nodiscard]] std::string request_summary(runner::GenerationRequest const& r) const override;

  void cover(runner::AnySchedule const& s,
             std::size_t steps_run,
             runner::Coverage& coverage) const override;
  [[nodiscard]] std::vector<runner::CoverageCategory> coverage_categories() const override;
  [[nodiscard]] std::vector<std::string> progress_counts() const override { return {"defrags"}; }
  [[nodiscard]] std::vector<std::string> stress_notes(
      runner::StressCounts const& counts) const override;

  void reduce(runner::Reducer& reducer, runner::ReductionOptions const& options) const override;
};

/// The heap family (registered as "heap").
HeapFamily const& family();

/// The registered heap runner `name` (runner::make_runner), typed; throws
/// core::precondition_error for a runner of another family.
std::unique_ptr<HeapRunner> make_runner(std::string const& name,
                                        runner::RunnerOptions const& options = {});

/// M when stress is asked for no particular cap (the model follows every step: keep cases short).
inline constexpr std::uint32_t kDefaultMaxBlocks = 512;

/// Where stress draws the configs of a runner's cases from: registered by a runner that supports
/// fewer configs than any type list (the GPU runner: its type universes); every other runner gets
/// schedule::gen::config().
struct ConfigSourceRegistration {
  ConfigSourceRegistration(std::string runner, std::function<rc::Gen<core::HeapConfig>()> configs);
};
/// The configs of `runner`'s cases.
rc::Gen<core::HeapConfig> configs_for(std::string const& runner);

/// The "gpu" runner's registry entry (GPU, default profile "mixed", up to schedule::kMaxBlocks):
/// gpu/ registers it with the real runner; a build without CUDA with one that says why not.
runner::RunnerInfo gpu_runner_info(std::string help,
                                   runner::RunnerInfo::Make make,
                                   std::function<std::string()> unavailable);

/// Levels of a hierarchical bitmap over M blocks with 64-bit words (DynaSOAr sec. 4.2): 1 for
/// M <= 64, 2 for M <= 4096, 3 above.
std::uint32_t hierarchy_depth(std::uint32_t num_blocks);

}  // namespace heaplab::heap_family
