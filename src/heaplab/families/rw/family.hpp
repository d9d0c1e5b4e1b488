// The random-walk page pool family, "rw" (docs/families.md, docs/rw.md "Schedules and runners"):
// RW, RW-BM, CoRW and RW_malloc (the ICS'22 paper). Its schedules are schedule::RwSchedule
// (format "heaplab-rw-schedule"); its runners are "rw-model" (a sequential pool, ModelPool),
// "rw-cpu" (the portable core on CPU threads, CpuThreadsPool) and "rw-gpu" (rw::DevicePool, where
// a GPU is present), each an RwRunner; its invariant catalog is check::rw_catalog(); its model is
// model::RwModelInterpreter (models/).
#pragma once

#include "heaplab/runner/family.hpp"
#include "heaplab/schedule/rw_schedule.hpp"

namespace heaplab::rw_family {

class RwFamily final : public runner::TypedFamily<schedule::RwSchedule> {
 public:
  [[nodiscard]] std::string name() const override { return "rw"; }
  [[nodiscard]] std::string title() const override;
  [[nodiscard]] std::string schedule_format() const override;
  [[nodiscard]] std::string reference_runner() const override { return "rw-model"; }
  [[nodiscard]] std::vector<std::string> replay_runners() const override {
    return {"rw-cpu", "rw-gpu"};
  }
  [[nodiscard]] std::vector<runner::InvariantInfo> invariants() const override;

  [[nodiscard]] runner::AnySchedule from_json(nlohmann::json const& document) const override;
  [[nodiscard]] nlohmann::ordered_json to_json(runner::AnySchedule const& s) const override;

  [[nodiscard]] std::string describe_step(runner::AnySchedule const& s,
                                          std::size_t i) const override;
  [[nodiscard]] std::string config_summary(runner::AnySchedule const& s) const override;
  [[nodiscard]] std::string size_summary(runner::AnySchedule const& s) const override;
  void show(runner::AnySchedule const& s, std::ostream& out) const override;

  /// "mixed" (every algorithm, the default) and one profile per algorithm ("rw", "rw-bm",
  /// "corw", "rw-malloc": only its alloc waves).
  [[nodiscard]] std::vector<runner::Profile> profiles() const override;
  [[nodiscard]] runner::AnySchedule generate(runner::GenerationRequest const& request,
                                             std::uint64_t seed,
                                             std::uint32_t size) const override;

  void cover(runner::AnySchedule const& s,
             std::size_t steps_run,
             runner::Coverage& coverage) const override;
  [[nodiscard]] std::vector<runner::CoverageCategory> coverage_categories() const override;
  [[nodiscard]] std::vector<std::string> progress_counts() const override {
    return {"pages", "nulls"};
  }
  [[nodiscard]] std::vector<std::string> stress_notes(
      runner::StressCounts const& counts) const override;

  /// Every lane of each alloc wave asks, then halve its threads; halve T (pre-taken pages scaled
  /// or cut), then drop the pre-taken pages.
  void reduce(runner::Reducer& reducer, runner::ReductionOptions const& options) const override;
};

/// The random-walk family (registered as "rw").
RwFamily const& family();

}  // namespace heaplab::rw_family
