// What every runner of every allocator family reports: the first failure of a run, one report
// per step, and how a run ended (docs/families.md "Outcomes"). The family interface
// (family.hpp) is written in these terms, so stress, replay, minimize and failure files never
// look inside a family's own types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "heaplab/check/invariants.hpp"
#include "heaplab/runner/any_schedule.hpp"

namespace heaplab::runner {

/// How a run failed. Every runner of every family reports one of these.
enum class FailureKind {
  invariant_violation,  // a catalog invariant (or an obligation) failed on the implementation
  divergence,           // the implementation and the model disagree (refinement, prediction)
  digest_mismatch,      // a check step's digest differs
  hang,                 // a kernel did not finish within the watchdog's budget
  crash,                // an exception or a CUDA error while executing a step
};
char const* to_string(FailureKind kind);
std::optional<FailureKind> failure_kind_from_string(std::string const& s);
/// Every kind's name, in declaration order (for error messages).
std::vector<std::string> failure_kind_names();

/// Check names that every family shares (a family's own are in its folder).
namespace checks {
inline constexpr char const* kWatchdog  = "watchdog";   // hang
inline constexpr char const* kStall     = "stall";      // hang: a worker stopped answering
inline constexpr char const* kException = "exception";  // crash
}  // namespace checks

/// Whether a runner can run a schedule here (a GPU runner needs a device and a heap that fits).
struct Support {
  bool supported = true;
  std::string reason;  // why not, when !supported
};

/// Wall time of one step's parts, in seconds (the differential runners measure them; others
/// leave them 0). Where a stress run's time goes: `heaplab stress` prints the sums.
struct StepTimes {
  double implementation = 0;  // the implementation: launching, kernels, waiting
  double readback       = 0;  // its state read back as a snapshot (copies, conversion, ids)
  double model          = 0;  // the model side: refinement, prediction
  double checks         = 0;  // invariant catalog, obligations, snapshot diff
  [[nodiscard]] double total() const { return implementation + readback + model + checks; }
};

/// What one step did, as the per-step callback sees it (stress progress, replay's step lines).
struct StepReport {
  std::size_t index = 0;
  std::string op;           // the step's kind: "alloc", "free", "defrag", ...
  std::string description;  // the family's one-line description of the step
  bool ok = true;           // false for the failing step
  /// Objects (or handles) live after the step.
  std::uint64_t live = 0;
  /// Units of the heap in use after the step and how many there are (blocks of M, pages of T):
  /// the heap fill that stress shows is in_use / capacity.
  std::uint64_t in_use   = 0;
  std::uint64_t capacity = 0;
  /// What the step did, by name ("created", "out_of_memory", "defrags", "pages"); a stress run
  /// sums them over every step it ran.
  std::vector<std::pair<std::string, std::uint64_t>> counts;
  /// The family's one-line account of the step (replay prints it).
  std::string line;
  StepTimes times;

  /// counts[key], 0 when absent.
  [[nodiscard]] std::uint64_t count(std::string_view key) const;
  /// Adds n to counts[key].
  void add_count(std::string const& key, std::uint64_t n);
};

struct Failure;

/// How much of a failure the command line prints (replay, minimize).
struct ReportOptions {
  std::size_t max_violations  = 10;
  std::size_t max_differences = 20;
  bool dump_snapshot          = true;   // the part of the heap the failure is about
  bool full_dump              = false;  // the whole heap instead
  std::string runner;                   // the runner that failed ("actual = gpu")
};

/// What a family knows about a failure beyond its kind, check and message (a snapshot diff,
/// both snapshots, the thread to blame). Replay prints report() below the generic part.
class FailureDetail {
 public:
  virtual ~FailureDetail() = default;
  /// Multi-line text, each line ending in '\n' ("" when there is nothing to add).
  [[nodiscard]] virtual std::string report(Failure const& failure,
                                           ReportOptions const& options) const = 0;
};

/// The failure a failure file records.
struct FailureRecord {
  std::uint64_t step = 0;  // index into the schedule's steps
  FailureKind kind   = FailureKind::invariant_violation;
  std::string check;    // invariant or check name ("defrag-iff-low-fill", "snapshot-diff")
  std::string message;  // one line
  friend bool operator==(FailureRecord const& a, FailureRecord const& b) {
    return a.step == b.step && a.kind == b.kind && a.check == b.check && a.message == b.message;
  }
};

/// The first failure of a run.
struct Failure {
  std::size_t step = 0;
  FailureKind kind = FailureKind::invariant_violation;
  std::string check;    // invariant or check name: a catalog name or a family's check name
  std::string message;  // one line
  std::string step_description;
  /// Every violation found after the failing step (catalog, obligations, digests).
  std::vector<check::Violation> violations;
  /// The family's own account (null when it has none).
  std::shared_ptr<FailureDetail const> detail;
  /// A schedule of the same family that reproduces this failure exactly, where the run made
  /// choices the schedule leaves open and the runner recorded them (the interleaving an
  /// explorer chose); empty otherwise. Stress saves it instead of the case's schedule, and
  /// minimize continues from it.
  AnySchedule reproducer;

  /// "The same way" for minimize and replay: same kind and same check (the step may move).
  [[nodiscard]] bool same_way(Failure const& other) const {
    return kind == other.kind && check == other.check;
  }
  [[nodiscard]] FailureRecord record() const { return {step, kind, check, message}; }
};

/// A failure whose kind and check come from the first of `violations` (non-empty); `kind_of`
/// decides the kind of a violation (invariant_violation unless the family says otherwise).
Failure failure_from_violations(std::size_t step,
                                std::string description,
                                std::vector<check::Violation> violations,
                                FailureKind (*kind_of)(check::Violation const&) = nullptr);

struct RunOutcome {
  std::size_t steps_run = 0;  // including the failing one
  std::optional<Failure> failure;
  [[nodiscard]] bool ok() const { return !failure.has_value(); }
};

using StepCallback = std::function<void(StepReport const&)>;

/// The failure as text for the command line:
///
///   FIRST FAILURE at step 5: free Fish fraction 0.5 seed 3
///     kind divergence, check snapshot-diff
///     message: ...
///     violations (2): (one per line)
///   followed by the family's detail (the diff, the snapshot part, ...).
std::string format_failure(Failure const& failure, ReportOptions const& options = {});

}  // namespace heaplab::runner
