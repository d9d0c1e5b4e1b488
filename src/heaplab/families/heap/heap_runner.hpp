// The object heap family's runners (docs/families.md "heap"): HeapRunner, the base of the model
// runner, the differential runner and the GPU runner, with the typed entry points tests use
// (run(schedule::Schedule), supports(core::HeapConfig)); its check names; what a heap failure
// carries beyond the generic record (the diff and both snapshots, HeapFailureDetail).
//
// Every HeapRunner keeps the runner::Runner contract (runner/family.hpp); in addition it checks
// the whole invariant catalog (check::check_all) after every step, CompactGpu's obligations after
// a defrag step and the digests of a check step; a runner that compares with the model
// (DifferentialRunner) also checks refinement and the snapshot diff (differential.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/check/diff.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot.hpp"
#include "heaplab/runner/family.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace heaplab::heap_family {

using runner::Failure;
using runner::FailureKind;
using runner::RunOutcome;
using runner::StepCallback;
using runner::StepReport;
using runner::Support;

/// Check names of the heap family that are not catalog invariants (the catalog's names are in
/// check::catalog(); CompactGpu's obligations are "defrag-post-fill", "defrag-post-candidates",
/// "defrag-pass-bound").
namespace checks {
using runner::checks::kException;                                     // crash
using runner::checks::kWatchdog;                                      // hang
inline constexpr char const* kSnapshotDiff = "snapshot-diff";         // divergence
inline constexpr char const* kPlacement    = "placement-refinement";  // divergence
inline constexpr char const* kOutOfMemory  = "oom-justified";  // divergence (check::kOomJustified)
inline constexpr char const* kRoots        = "roots";          // divergence
inline constexpr char const* kDefragPasses = "defrag-passes";  // divergence
/// parallel_do visits every object live at launch exactly once, and no other (DynaSOAr sec. 2.1)
inline constexpr char const* kParallelDoVisits = "parallel-do-visits";  // invariant_violation
/// An allocation returned a pointer that is not a slot of the requested type in this heap
inline constexpr char const* kAllocationResult = "allocation-result";  // invariant_violation
/// Every byte of every data field of a live object is the byte the executor stamped at its
/// allocation (core::field_byte of its id): a torn, shifted or misplaced copy of any field
inline constexpr char const* kFieldsMatchId  = "fields-match-id";  // invariant_violation
inline constexpr char const* kGraphDigest    = "graph-digest";     // digest_mismatch
inline constexpr char const* kSnapshotDigest = "snapshot-digest";  // digest_mismatch
}  // namespace checks

/// The failure kind of a violation found by the model-side checks: digest names give
/// digest_mismatch, everything else invariant_violation.
FailureKind kind_of_violation(check::Violation const& v);

/// What a heap failure carries beyond its record: the divergence from the model and both
/// snapshots. Replay prints the diff (step, block, field, expected, actual) and the part of the
/// snapshot the failure is about (report.hpp).
struct HeapFailureDetail final : runner::FailureDetail {
  /// Divergence: the differences between the model's expected snapshot and the actual one.
  std::optional<check::SnapshotDiff> diff;
  /// The model's prediction (or refinement-accepted state) after the step, where there is one.
  std::optional<check::HeapSnapshot> expected;
  /// The implementation's snapshot after the step, where one could be taken.
  std::optional<check::HeapSnapshot> actual;
  [[nodiscard]] std::string report(Failure const& failure,
                                   runner::ReportOptions const& options) const override;
};

/// The heap detail of a failure (null when it has none).
HeapFailureDetail const* heap_detail(Failure const& failure);

/// What a heap step did, in the heap's terms; report() turns it into the generic StepReport
/// (counts "created", "out_of_memory", "deleted", "defrags", "defrag_passes", "moved"; live
/// objects, blocks in use of M; the line replay prints).
struct HeapStepStats {
  std::size_t created       = 0;  // objects allocated
  std::size_t out_of_memory = 0;  // allocations that found no memory
  std::size_t deleted       = 0;
  std::size_t live_objects  = 0;  // after the step
  std::size_t blocks_in_use = 0;  // after the step
  std::size_t num_blocks    = 0;  // M
  double fragmentation      = 0;  // F over all allocated blocks (CompactGpu sec. 2.2)
  std::size_t defrag_passes = 0;  // defrag steps: passes run
  std::uint64_t moved       = 0;  // defrag steps: objects moved
};

/// The generic report of step `index` (op and description from the schedule).
StepReport step_report(std::size_t index,
                       std::string op,
                       std::string description,
                       bool ok,
                       HeapStepStats const& stats,
                       runner::StepTimes const& times = {});

/// The base of the heap family's runners: typed entry points over schedule::Schedule, and the
/// generic ones (runner::Runner) that unwrap an AnySchedule of the heap family.
class HeapRunner : public runner::Runner {
 public:
  using runner::Runner::run;
  using runner::Runner::supports;

  /// Runs `schedule` from an empty heap (runner::Runner's contract).
  RunOutcome run(schedule::Schedule const& schedule, StepCallback const& on_step = {}) {
    return run_schedule(schedule, on_step);
  }
  /// Whether it can run schedules of this config.
  [[nodiscard]] Support supports(core::HeapConfig const& config) const {
    return supports_config(config);
  }

  RunOutcome run(runner::AnySchedule const& schedule, StepCallback const& on_step = {}) final;
  [[nodiscard]] Support supports(runner::AnySchedule const& schedule) const final;

 protected:
  virtual RunOutcome run_schedule(schedule::Schedule const& schedule,
                                  StepCallback const& on_step)                        = 0;
  [[nodiscard]] virtual Support supports_config(core::HeapConfig const& config) const = 0;
};

}  // namespace heaplab::heap_family
