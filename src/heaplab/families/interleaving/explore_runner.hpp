// The interleaving family's runner "explore" (docs/explorer.md "Failure files"): one controlled
// run (explore::run_program) of the schedule's workload under its memory model and step budget,
// either under its seeded strategy or following its decisions.
//
// What a step is. A step of an interleaving schedule is one decision (schedule.hpp). The checks
// of a workload do not run after each decision: they run inside the threads (the protocol's
// checks, the ownership log, the catalog at the mid-run barrier) and after the run (the catalog,
// lost capacity, Lemma 5 on the trace, oom-justified, bounded waiting). So the runner reports one
// StepReport per run, after the run and its checks: its index is the last decision the run
// followed (the failing step on a failure; 0 when it followed none), its counts are the run's
// ("runs", "atomic_operations", "decisions", "preemptions", "stale_reads" and the outcome:
// "passed", "thread_error", "check_failed", "deadlock" or "livelock"). RunOutcome::steps_run is
// the number of the schedule's decisions the run followed (0 for a strategy schedule).
//
// Failures (runner::Failure). Every failure is FailureKind::invariant_violation; its check names
// what failed, as the workload reports it (check_of below): a thread that threw is the protocol's
// check ("protocol", HEAPLAB_PROTOCOL_CHECK), a precondition ("precondition", a double free) or a
// workload check inside the thread ("catalog-at-barrier", "ownership-log", "happens-before",
// "page-model", ...); a failed post-run check is the check of its first violation ("lemma5",
// "oom-justified", "bounded-waiting", ...); a deadlock is "deadlock" and an exceeded step budget
// "livelock" (never FailureKind::hang: for the generic tools a hang is an uncancellable GPU
// kernel that ends the process). The message is the first line of the explorer's; every line is
// a violation; the detail (ExploreFailureDetail) keeps the outcome, the workload, the decisions
// and the trace.
//
// Reproduction. A run under a strategy records its decisions (RunOptions::record_decisions); on a
// failure, Failure::reproducer is the same schedule with those decisions as explicit steps and no
// strategy, and failure.step is its last index, so stress saves an exact reproduction and
// minimize (ddmin over the decisions) starts from it. A schedule with decisions reproduces itself:
// its failure has no reproducer (the run's decisions beyond the list are the non-preemptive
// continuation the schedule already implies; handing them back would undo every ddmin step), and
// failure.step is the last decision followed; a schedule with no decisions at all is treated like
// a strategy schedule (its failure's step must index a step).
//
// Decisions that do not fit. A decision may not fit the program: a thread that cannot run at
// its decision point, a read decision where the run decides which thread runs or the other way
// round, a read choice beyond the stores the load may read (a subset that ddmin tried, a failure
// file replayed on a build whose protocol makes other atomic operations, a hand-edited file). The
// first such decision ends the list: the run goes on without preemption, exactly as if the list
// had ended there, so every schedule has one deterministic run; steps_run counts the decisions
// followed, and the step report and the failure detail say where the list stopped fitting.
// run() throws only for an invalid schedule (validate(): schedule::schedule_error) or one of
// another family.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "heaplab/families/interleaving/schedule.hpp"
#include "heaplab/runner/family.hpp"

namespace heaplab::interleaving_family {

/// Check names of the interleaving family (Failure::check); what each means is in
/// InterleavingFamily::invariants().
namespace checks {
inline constexpr char const* kProtocol         = "protocol";
inline constexpr char const* kPrecondition     = "precondition";
inline constexpr char const* kCatalogAtBarrier = "catalog-at-barrier";
inline constexpr char const* kBarrierOwnership = "barrier-ownership";
inline constexpr char const* kCatalogAtEnd     = "catalog-at-end";
inline constexpr char const* kCapacityLost     = "capacity-lost";
inline constexpr char const* kOwnershipLog     = "ownership-log";
inline constexpr char const* kAllocationResult = "allocation-result";
inline constexpr char const* kPayload          = "payload";
inline constexpr char const* kHappensBefore    = "happens-before";
inline constexpr char const* kOomJustified     = "oom-justified";
inline constexpr char const* kLemma5           = "lemma5";
inline constexpr char const* kBoundedWaiting   = "bounded-waiting";
inline constexpr char const* kClaimPaths       = "claim-paths";
inline constexpr char const* kBitmapTokens     = "bitmap-tokens";
inline constexpr char const* kPageModel        = "page-model";
inline constexpr char const* kRwCatalog        = "rw-catalog";
inline constexpr char const* kRequestSteps     = "request-steps";
inline constexpr char const* kPagesLost        = "pages-lost";
inline constexpr char const* kQueueRing        = "queue-ring";
inline constexpr char const* kDeadlock         = "deadlock";
inline constexpr char const* kLivelock         = "livelock";
inline constexpr char const* kScheduler        = "scheduler";
inline constexpr char const* kThreadException  = "thread-exception";
inline constexpr char const* kPostRunCheck     = "post-run-check";
}  // namespace checks

/// The check a line of an explorer failure message reports ("T0 failed: catalog at the barrier:
/// [...]" -> "catalog-at-barrier"); `thread_error` says whether it came from a thread (the
/// fallback is then "thread-exception", else "post-run-check").
std::string check_of(std::string_view line, bool thread_error);

/// The workload's description (workloads::describe_workload of its kind and seed).
std::string describe_workload_of(InterleavingSchedule const& s);

/// What an interleaving failure carries beyond its record, for replay and minimize.
struct ExploreFailureDetail final : runner::FailureDetail {
  std::string outcome;    // "thread_error after 50 atomic operations, 2 threads, 5 preemptions"
  std::string strategy;   // explore::Strategy::describe() of the run
  std::string memory;     // "release_acquire (3 loads read an older store)", or ""
  std::string workload;   // the workload's description (workloads::describe_workload)
  std::string decisions;  // the run's decisions, run-length encoded (schedule_text)
  std::string unfit;      // where the schedule's decisions stopped fitting the program, or ""
  std::string trace;      // the formatted trace (its last 400 operations)
  [[nodiscard]] std::string report(runner::Failure const& failure,
                                   runner::ReportOptions const& options) const override;
};

class ExploreRunner final : public runner::Runner {
 public:
  [[nodiscard]] std::string name() const override { return "explore"; }
  [[nodiscard]] bool deterministic() const override { return true; }
  [[nodiscard]] runner::Support supports(runner::AnySchedule const& s) const override;

  /// One controlled run (see the top of this file).
  runner::RunOutcome run(InterleavingSchedule const& s, runner::StepCallback const& on_step = {});
  runner::RunOutcome run(runner::AnySchedule const& s,
                         runner::StepCallback const& on_step = {}) override;
};

}  // namespace heaplab::interleaving_family
