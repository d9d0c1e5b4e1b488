// ScheduleRunner: the one interface through which heaplab runs a schedule on an implementation
// (the model, the GPU allocator, a fake in tests) and learns about the first failure
// (docs/replay.md "Runners").
//
// Contract for every implementation of ScheduleRunner:
//   * run() starts from an empty heap of schedule.config every time it is called; nothing of an
//     earlier run may leak into a later one (minimize and stress call it many times).
//   * Steps run in order. After each step the runner checks the whole invariant catalog
//     (check::check_all) on the implementation's snapshot, CompactGpu's obligations after a
//     defrag step and the digests of a check step; a runner that compares with the model
//     (DifferentialRunner) also checks refinement and the snapshot diff (differential.hpp).
//   * on_step, when given, is called once per step that ran, in order, after its checks; the
//     failing step is reported too (with ok == false) and is the last call.
//   * run() returns the first failure (the run stops there) or none. Failures of the
//     implementation never escape as exceptions: an exception thrown while executing a step is
//     a FailureKind::crash of that step. run() throws only for bad input (a schedule that
//     schedule::validate rejects, a config for which supports() says no).
//   * A hang (a kernel that exceeded the watchdog budget, cuda/watchdog.hpp) is returned as
//     FailureKind::hang; the kernel cannot be cancelled, so after a hang the runner is unusable
//     and the caller must save what it needs and end the process (std::_Exit; heaplab stress
//     does so with exit status 3). `usable()` says so.
//   * deterministic() is true when the same schedule always gives the same outcome (the model);
//     callers then need no reruns (minimize --reruns).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/check/diff.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot.hpp"
#include "heaplab/schedule/failure_file.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace heaplab::runner {

using schedule::FailureKind;

/// Check names used for failures that are not catalog invariants (the catalog's names are in
/// check::catalog(); CompactGpu's obligations are "defrag-post-fill", "defrag-post-candidates",
/// "defrag-pass-bound").
namespace checks {
inline constexpr char const* kSnapshotDiff = "snapshot-diff";         // divergence
inline constexpr char const* kPlacement    = "placement-refinement";  // divergence
inline constexpr char const* kOutOfMemory  = "oom-justified";  // divergence (check::kOomJustified)
inline constexpr char const* kRoots        = "roots";          // divergence
inline constexpr char const* kDefragPasses = "defrag-passes";  // divergence
/// parallel_do visits every object live at launch exactly once, and no other (DynaSOAr sec. 2.1)
inline constexpr char const* kParallelDoVisits = "parallel-do-visits";  // invariant_violation
/// An allocation returned a pointer that is not a slot of the requested type in this heap
inline constexpr char const* kAllocationResult = "allocation-result";  // invariant_violation
inline constexpr char const* kGraphDigest      = "graph-digest";       // digest_mismatch
inline constexpr char const* kSnapshotDigest   = "snapshot-digest";    // digest_mismatch
inline constexpr char const* kWatchdog         = "watchdog";           // hang
inline constexpr char const* kException        = "exception";          // crash
}  // namespace checks

/// Wall time of one step's parts, in seconds (the differential runner measures them; other
/// runners leave them 0). Where a stress run's time goes: `heaplab stress` prints the sums.
struct StepTimes {
  double implementation = 0;  // the executor: kernels, waiting, snapshot read-back and translation
  double model          = 0;  // the mirror: refinement, prediction, its snapshot
  double checks         = 0;  // invariant catalog, obligations, snapshot diff
};

/// What one step did, as the per-step callback sees it (stress progress, replay's step lines).
struct StepReport {
  std::size_t index = 0;
  std::string op;                    // "alloc", "free", "parallel_do", "defrag", "check"
  std::string description;           // schedule::describe
  bool ok                   = true;  // false for the failing step
  std::size_t created       = 0;     // objects allocated
  std::size_t out_of_memory = 0;     // allocations that found no memory
  std::size_t deleted       = 0;
  std::size_t live_objects  = 0;  // after the step
  std::size_t blocks_in_use = 0;  // after the step
  std::size_t num_blocks    = 0;  // M
  double fragmentation      = 0;  // F over all allocated blocks (CompactGpu sec. 2.2)
  std::size_t defrag_passes = 0;  // defrag steps: passes run
  std::uint64_t moved       = 0;  // defrag steps: objects moved
  StepTimes times;
  /// One line: index, description, live objects, blocks in use, F, what the step did.
  [[nodiscard]] std::string summary() const;
};

/// The first failure of a run.
struct Failure {
  std::size_t step = 0;
  FailureKind kind = FailureKind::invariant_violation;
  std::string check;    // invariant or check name: a catalog name or one of checks::
  std::string message;  // one line
  std::string step_description;
  /// Every violation found after the failing step (catalog, obligations, digests).
  std::vector<check::Violation> violations;
  /// Divergence: the differences between the model's expected snapshot and the actual one.
  std::optional<check::SnapshotDiff> diff;
  /// The model's prediction (or refinement-accepted state) after the step, where there is one.
  std::optional<check::HeapSnapshot> expected;
  /// The implementation's snapshot after the step, where one could be taken.
  std::optional<check::HeapSnapshot> actual;

  /// "same way" for minimize and replay: same kind and same check name (the step may move).
  [[nodiscard]] bool same_way(Failure const& other) const {
    return kind == other.kind && check == other.check;
  }
  /// The record a failure file stores.
  [[nodiscard]] schedule::FailureRecord record() const { return {step, kind, check, message}; }
};

struct RunOutcome {
  std::size_t steps_run = 0;  // including the failing one
  std::optional<Failure> failure;
  [[nodiscard]] bool ok() const { return !failure.has_value(); }
};

/// Whether a runner can run schedules of a config (e.g. the GPU runner needs a device and a heap
/// that fits into its memory).
struct Support {
  bool supported = true;
  std::string reason;  // why not, when !supported
};

using StepCallback = std::function<void(StepReport const&)>;

class ScheduleRunner {
 public:
  virtual ~ScheduleRunner()                        = default;
  ScheduleRunner()                                 = default;
  ScheduleRunner(ScheduleRunner const&)            = delete;
  ScheduleRunner& operator=(ScheduleRunner const&) = delete;

  /// "model", "gpu", "differential-model", ...: what failure files record as `runner`.
  [[nodiscard]] virtual std::string name() const                               = 0;
  [[nodiscard]] virtual Support supports(core::HeapConfig const& config) const = 0;
  /// Runs `schedule` from an empty heap (see the contract above).
  virtual RunOutcome run(schedule::Schedule const& schedule, StepCallback const& on_step = {}) = 0;
  /// True when reruns of a schedule always give the same outcome.
  [[nodiscard]] virtual bool deterministic() const = 0;
  /// False after a hang: the device still runs the stuck kernel; end the process.
  [[nodiscard]] virtual bool usable() const { return true; }
  /// The device this runner uses ("none" for CPU runners), for failure files.
  [[nodiscard]] virtual std::string device_name() const { return "none"; }
};

/// The failure kind of a violation found by the model-side checks: digest names give
/// digest_mismatch, everything else invariant_violation.
FailureKind kind_of_violation(check::Violation const& v);

}  // namespace heaplab::runner
