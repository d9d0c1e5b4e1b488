// The test-only bump family, "bump" (README.md in this folder): a bump allocator over an arena
// with free_all. Its schedules are BumpSchedule (format "heaplab-bump-schedule"); its runners are
// "bump-model" (SequentialBump alone, deterministic, the reference) and "bump-cpu" (AtomicBump on
// OS threads), each a BumpRunner, registered from bump_family.cpp; its invariant catalog is
// bump_catalog(); its model is BumpModel. It exists to show that a family gets stress, replay,
// minimize, show, failure files and the runner conformance suite with no edit to generic code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bump_allocator.hpp"
#include "bump_schedule.hpp"
#include "heaplab/runner/family.hpp"
#include "heaplab/runner/registry.hpp"

namespace heaplab::bump_family {

class BumpFamily final : public runner::TypedFamily<BumpSchedule> {
 public:
  [[nodiscard]] std::string name() const override { return "bump"; }
  [[nodiscard]] std::string title() const override;
  [[nodiscard]] std::string schedule_format() const override { return kBumpFormatName; }
  [[nodiscard]] std::string reference_runner() const override { return "bump-model"; }
  [[nodiscard]] std::vector<std::string> replay_runners() const override { return {"bump-cpu"}; }
  [[nodiscard]] std::vector<runner::InvariantInfo> invariants() const override;

  [[nodiscard]] runner::AnySchedule from_json(nlohmann::json const& document) const override;
  [[nodiscard]] nlohmann::ordered_json to_json(runner::AnySchedule const& s) const override;

  [[nodiscard]] std::string describe_step(runner::AnySchedule const& s,
                                          std::size_t i) const override;
  /// "arena 4096 B".
  [[nodiscard]] std::string config_summary(runner::AnySchedule const& s) const override;
  /// "arena = 4096 B".
  [[nodiscard]] std::string size_summary(runner::AnySchedule const& s) const override;
  void show(runner::AnySchedule const& s, std::ostream& out) const override;

  /// "small" (the default), "wide" and "tiny" (bump_generate.cpp).
  [[nodiscard]] std::vector<runner::Profile> profiles() const override;
  /// A pure function of its arguments (schedule::mix of the seed; no std:: distribution); a
  /// request's max_size caps the arena (bytes).
  [[nodiscard]] runner::AnySchedule generate(runner::GenerationRequest const& request,
                                             std::uint64_t seed,
                                             std::uint32_t size) const override;

  void cover(runner::AnySchedule const& s,
             std::size_t steps_run,
             runner::Coverage& coverage) const override;
  [[nodiscard]] std::vector<runner::CoverageCategory> coverage_categories() const override;
  [[nodiscard]] std::vector<std::string> progress_counts() const override {
    return {"granted", "nulls"};
  }
  [[nodiscard]] std::vector<std::string> stress_notes(
      runner::StressCounts const& counts) const override;

  /// For each alloc wave: one size instead of a list, alignment 1, then halve its threads while
  /// it still fails; then the smallest arena that still fails (runner::shrink_number).
  void reduce(runner::Reducer& reducer, runner::ReductionOptions const& options) const override;
};

/// The bump family (registered as "bump").
BumpFamily const& family();

/// Makes the concurrent allocator of one run over an arena of the given bytes.
using AllocatorFactory = std::function<std::unique_ptr<ConcurrentBump>(std::uint64_t arena)>;

/// A CPU-threads runner of the family: `make` on a ThreadsBackend with RunnerOptions::threads OS
/// threads per wave, nondeterministic (bump-cpu; the planted runner registers itself with it).
runner::RunnerInfo cpu_runner_info(std::string name, std::string help, AllocatorFactory make);

}  // namespace heaplab::bump_family
