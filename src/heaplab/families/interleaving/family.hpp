// The interleaving family, "interleaving" (docs/families.md, docs/explorer.md "Failure files"):
// the explorer's workloads (workloads/: heap, heap_k, bitmap, turnover, heap-weak, rw, rw-weak,
// queue, queue-weak, burst) run by the CPU controlled scheduler (src/heaplab/explore), one
// interleaving per schedule. Its schedules are InterleavingSchedule (schedule.hpp, format
// "heaplab-interleaving"); its one runner is "explore" (explore_runner.hpp), deterministic: the
// workload is a pure function of its kind and seed, the interleaving of the strategy's seed or of
// the decisions. So `heaplab stress --runner explore` is the explorer's random / PCT search through
// the generic stress loop, its failures are failure files with explicit decisions, and `heaplab
// replay / minimize / show` work on them (minimize: ddmin over the decisions). The model of the
// family is in the workloads: each checks itself (the invariant catalog at a barrier and after
// the run, an ownership log or the page model, Lemma 5 on the trace); invariants() lists them.
#pragma once

#include <cstdint>
#include <string>

#include "heaplab/families/interleaving/schedule.hpp"
#include "heaplab/runner/family.hpp"

namespace heaplab::interleaving_family {

class InterleavingFamily final : public runner::TypedFamily<InterleavingSchedule> {
 public:
  [[nodiscard]] std::string name() const override { return "interleaving"; }
  [[nodiscard]] std::string title() const override;
  [[nodiscard]] std::string schedule_format() const override { return kFormatName; }
  [[nodiscard]] std::string reference_runner() const override { return "explore"; }
  /// The checks the workloads make (explore_runner.hpp's check names).
  [[nodiscard]] std::vector<runner::InvariantInfo> invariants() const override;

  [[nodiscard]] runner::AnySchedule from_json(nlohmann::json const& document) const override;
  [[nodiscard]] nlohmann::ordered_json to_json(runner::AnySchedule const& s) const override;

  /// A schedule with a seeded strategy is one step, the strategy's run (dropping it leaves a run
  /// without preemption); a schedule of decisions has one step per decision.
  [[nodiscard]] std::size_t steps(runner::AnySchedule const& s) const override;
  [[nodiscard]] runner::AnySchedule keep_steps(
      runner::AnySchedule const& s, std::vector<std::size_t> const& indices) const override;
  /// "decision 17: T1", "decision 18: read r2 (skips 2 newer stores)"; "run: pct(...)".
  [[nodiscard]] std::string describe_step(runner::AnySchedule const& s,
                                          std::size_t i) const override;
  [[nodiscard]] std::string config_summary(runner::AnySchedule const& s) const override;
  [[nodiscard]] std::string size_summary(runner::AnySchedule const& s) const override;
  /// The config, the workload, the decisions run-length encoded, then one per line.
  void show(runner::AnySchedule const& s, std::ostream& out) const override;

  /// "mixed" (the default: case k runs workload kind (k mod 100) mod 11) and one per workload kind.
  [[nodiscard]] std::vector<runner::Profile> profiles() const override;
  /// generated_schedule(request.profile, seed, size).
  [[nodiscard]] runner::AnySchedule generate(runner::GenerationRequest const& request,
                                             std::uint64_t seed,
                                             std::uint32_t size) const override;

  /// Runs by workload, by strategy ("random", "pct(d=2)", "decisions") and by memory model.
  /// Runs by outcome are the StepReport counts (stress_notes).
  void cover(runner::AnySchedule const& s,
             std::size_t steps_run,
             runner::Coverage& coverage) const override;
  [[nodiscard]] std::vector<runner::CoverageCategory> coverage_categories() const override;
  [[nodiscard]] std::vector<std::string> progress_counts() const override {
    return {"atomic_operations"};
  }
  /// Runs by outcome; atomic operations, preemptions and stale reads.
  [[nodiscard]] std::vector<std::string> stress_notes(
      runner::StressCounts const& counts) const override;

  /// None beyond ddmin over the decisions: the workload is its seed's, and a smaller step budget
  /// would only turn a long run into a livelock.
  void reduce(runner::Reducer& reducer, runner::ReductionOptions const& options) const override;
};

/// The interleaving family (registered as "interleaving", with its runner "explore").
InterleavingFamily const& family();

/// The explorer's mixed strategy of a seed (explore::make_strategy, StrategyKind::mixed): even
/// seeds random, odd seeds PCT with depth 1 + (seed / 2) % 3 and the default step estimate.
SeededStrategy mixed_strategy(std::uint64_t seed);

/// Case (seed, size) of a profile: workload kind the profile's (mixed: kind (size - 1) mod 11,
/// so that stress's case k, of size 1 + k mod 100, runs kind (k mod 100) mod 11), workload seed =
/// seed, mixed_strategy(seed), the kind's memory model (release_acquire for heap-weak, rw-weak and
/// queue-weak), the default step budget. Throws core::precondition_error for an unknown profile.
InterleavingSchedule generated_schedule(std::string const& profile,
                                        std::uint64_t seed,
                                        std::uint32_t size);

}  // namespace heaplab::interleaving_family
