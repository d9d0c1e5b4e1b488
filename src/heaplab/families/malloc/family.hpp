// The malloc family, "malloc" (docs/malloc.md): any allocator with malloc(size) / free(ptr),
// driven by alloc, fill, free and touch waves (schedule.hpp), checked by the catalog of
// catalog.hpp after every step (runner.hpp). Its runners are MallocRunners over subjects
// (subject.hpp): malloc-model (the reference allocator, the family's reference runner),
// malloc-cuda (CUDA's device malloc) and malloc-rw-gpu (RW_malloc) where a GPU is present, and the
// peers where their CMake options are on (docs/malloc.md "Peers").
#pragma once

#include <string>
#include <vector>

#include "heaplab/families/malloc/runner.hpp"
#include "heaplab/families/malloc/schedule.hpp"
#include "heaplab/runner/family.hpp"
#include "heaplab/runner/registry.hpp"

namespace heaplab::malloc_family {

class MallocFamily final : public runner::TypedFamily<MallocSchedule> {
 public:
  [[nodiscard]] std::string name() const override { return "malloc"; }
  [[nodiscard]] std::string title() const override;
  [[nodiscard]] std::string schedule_format() const override { return kMallocFormatName; }
  [[nodiscard]] std::string reference_runner() const override { return "malloc-model"; }
  [[nodiscard]] std::vector<runner::InvariantInfo> invariants() const override;

  [[nodiscard]] runner::AnySchedule from_json(nlohmann::json const& document) const override;
  [[nodiscard]] nlohmann::ordered_json to_json(runner::AnySchedule const& s) const override;

  [[nodiscard]] std::string describe_step(runner::AnySchedule const& s,
                                          std::size_t i) const override;
  /// "pool 1048576 B".
  [[nodiscard]] std::string config_summary(runner::AnySchedule const& s) const override;
  /// "pool = 1048576 B".
  [[nodiscard]] std::string size_summary(runner::AnySchedule const& s) const override;
  void show(runner::AnySchedule const& s, std::ostream& out) const override;

  /// "mixed" (the default), "oom" and "small" (generate.cpp).
  [[nodiscard]] std::vector<runner::Profile> profiles() const override;
  /// A pure function of its arguments; the pool scales with request.heap_mib (at most) and
  /// request.max_size caps it (KiB).
  [[nodiscard]] runner::AnySchedule generate(runner::GenerationRequest const& request,
                                             std::uint64_t seed,
                                             std::uint32_t size) const override;
  [[nodiscard]] std::string request_summary(runner::GenerationRequest const& r) const override;

  void cover(runner::AnySchedule const& s,
             std::size_t steps_run,
             runner::Coverage& coverage) const override;
  [[nodiscard]] std::vector<runner::CoverageCategory> coverage_categories() const override;
  [[nodiscard]] std::vector<std::string> progress_counts() const override {
    return {"granted", "nulls", "freed"};
  }
  /// Requests, grants and nulls; the utilization at the first null by size; findings
  /// (null_then_success); warnings for checks that were not exercised.
  [[nodiscard]] std::vector<std::string> stress_notes(
      runner::StressCounts const& counts) const override;

  /// Per wave: fixed sizes, fewer requests per thread, halved threads; then a smaller pool.
  void reduce(runner::Reducer& reducer, runner::ReductionOptions const& options) const override;
};

/// The malloc family (registered as "malloc").
MallocFamily const& family();

/// Makes a runner's subject from the command line's runner options.
using SubjectMaker = std::function<std::unique_ptr<Subject>(runner::RunnerOptions const&)>;

/// A runner of the family over `make`'s subject (how the tests' planted subjects register theirs).
runner::RunnerInfo runner_info(std::string name,
                               std::string help,
                               SubjectMaker make,
                               bool deterministic);

/// A GPU runner of the family over `make`'s subject: nondeterministic, unavailable without a
/// usable GPU (runner::gpu_unavailable_reason); `one_per_process` when the allocator's state is
/// the process's (CUDA malloc's heap, a peer's globals: RunnerInfo::one_per_process).
runner::RunnerInfo gpu_runner_info(std::string name,
                                   std::string help,
                                   SubjectMaker make,
                                   bool one_per_process);

/// r with RunnerInfo::min_heap_mib from the subject's smallest pool (SubjectInfo::min_pool,
/// bytes), in whole MiB rounded up: a suite that sizes its heaps for every runner (the runner
/// conformance test) then never asks the subject for a pool it refuses.
runner::RunnerInfo with_min_pool(runner::RunnerInfo r, SubjectInfo const& s);

}  // namespace heaplab::malloc_family
