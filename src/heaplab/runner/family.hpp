// The allocator-family interface: what an allocator family gives heaplab so that stress,
// replay, minimize, show, failure files, the runner registry and the command line work for it
// without a line of their own (docs/families.md). It is written like a C++ concept: each part
// says what a family must provide and what it must guarantee.
//
// A family is a kind of allocator with its own schedules: the object heap (DynaSOAr and
// CompactGpu: typed objects, defragmentation), the random-walk page pools (RW, RW-BM, CoRW,
// RW_malloc), ... It provides
//   * a schedule type S and its JSON form (a "format" of its own): Family::from_json, to_json;
//   * its steps: how many, keeping a subset of them (ddmin), one line per step;
//   * generators of random schedules, by profile (stress);
//   * its runners (the model, CPU threads, GPU), each a Runner registered by name
//     (registry.hpp); a runner checks the family's invariant catalog after every step and,
//     where it has one, compares with the family's model by refinement;
//   * the failure-file body (the schedule's JSON) and its show form;
//   * minimize's reductions beyond dropping steps (a smaller heap, smaller waves);
//   * coverage: what a stress run exercised, by category.
// Schedules cross the interface as AnySchedule (a shared immutable value of the family's S);
// TypedFamily<S> implements the step plumbing for a schedule with `steps` and `description`.
//
// Contracts every family keeps:
//   * from_json is strict: unknown or duplicate keys, wrong types, values out of range and
//     missing fields throw schedule::schedule_error naming the field path ("steps[3].threads");
//     to_json(from_json(d)) is canonical, and from_json(to_json(s)) == s for every valid s.
//   * generate is a pure function of (request, seed, size): a case is reproduced by its seed.
//   * keep_steps of any subset gives a valid schedule (steps never refer to each other by
//     index), so ddmin may drop any step.
//   * A Runner's run() starts from an empty heap every time and never lets an implementation's
//     failure escape as an exception (outcome.hpp, Runner below).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "heaplab/core/expects.hpp"
#include "heaplab/runner/any_schedule.hpp"
#include "heaplab/runner/outcome.hpp"

namespace heaplab::runner {

/// A named way of generating schedules (`heaplab stress --profile NAME`).
struct Profile {
  std::string name;  // "small", "mixed", ...
  std::string help;  // one line
};

/// What stress asks of a family's generator for one case.
struct GenerationRequest {
  std::string profile;          // one of Family::profiles()
  std::string runner;           // the runner the case is for (a GPU runner may support fewer
                                // configs: the family knows which)
  std::uint32_t heap_mib = 16;  // the heap size the profile scales to (where it scales)
  std::uint32_t max_size = 0;   // cap on the heap's size in the family's unit (blocks, pages);
                                // 0: the family's default
};

/// What one stress run exercised: per category (e.g. "step_kinds"), per value (e.g. "alloc"),
/// how often.
struct Coverage {
  std::map<std::string, std::map<std::string, std::uint64_t>> counts;
  void add(std::string const& category, std::string const& value, std::uint64_t n = 1) {
    counts[category][value] += n;
  }
  void merge(Coverage const& other) {
    for (auto const& [category, values] : other.counts)
      for (auto const& [value, n] : values) counts[category][value] += n;
  }
};

/// A coverage category as the stress summary prints it ("coverage: LABEL: ...").
struct CoverageCategory {
  std::string key;    // as in Coverage::counts and the JSON summary
  std::string label;  // "alloc divergence"
};

/// Which of the family's own reductions minimize may try.
struct ReductionOptions {
  bool heap  = true;  // a smaller heap (blocks, pages): `heaplab minimize --no-config` turns off
  bool sizes = true;  // smaller steps (threads, counts, fractions): `--no-sizes` turns off
};

/// What minimize offers a family's reductions: the smallest failing schedule so far and a way to
/// try a smaller one.
class Reducer {
 public:
  virtual ~Reducer() = default;
  /// The smallest schedule found so far that fails the same way.
  [[nodiscard]] virtual AnySchedule const& best() const = 0;
  /// Runs `candidate`; when it fails the same way it becomes best() and `what` is logged
  /// ("step 3: threads 64 -> 8"). Throws (and unwinds the family's code) when the budget is
  /// spent; candidates the runner rejects count as not failing.
  virtual bool try_candidate(AnySchedule const& candidate) = 0;
  virtual void log(std::string const& line)                = 0;
};

/// One invariant of a family's catalog, as `heaplab list-invariants` prints it.
struct InvariantInfo {
  std::string name;             // as failure files record it ("hierarchy-consistent")
  std::string citation;         // the paper section it comes from ("DynaSOAr App. A.5 Def. 1")
  std::string statement;        // one line
  bool needs_payloads = false;  // skipped on states without object payloads
};

/// The stress summary of a family: what its counts mean, for people.
struct StressCounts {
  std::uint64_t cases = 0;
  std::uint64_t steps = 0;
  std::map<std::string, std::uint64_t> counts;  // StepReport::counts summed
  Coverage coverage;
  double elapsed = 0;
};

class Family {
 public:
  virtual ~Family()                = default;
  Family()                         = default;
  Family(Family const&)            = delete;
  Family& operator=(Family const&) = delete;

  // ---------------------------------------------------------------------------- identity
  /// "heap", "rw": what failure files record as `family`.
  [[nodiscard]] virtual std::string name() const = 0;
  /// One line: "the object heap (DynaSOAr allocator, CompactGpu defragmentation)".
  [[nodiscard]] virtual std::string title() const = 0;
  /// The "format" of its schedule files ("heaplab-schedule"); unique among families.
  [[nodiscard]] virtual std::string schedule_format() const = 0;
  /// Its reference runner (the model alone): `replay --model`, minimize of a schedule file.
  [[nodiscard]] virtual std::string reference_runner() const = 0;
  /// Runners replay tries besides the reference and a failure file's own (where they can run).
  [[nodiscard]] virtual std::vector<std::string> replay_runners() const { return {}; }

  /// Its invariant catalog: every check its runners make on the implementation's state after
  /// every step (docs/invariants.md).
  [[nodiscard]] virtual std::vector<InvariantInfo> invariants() const = 0;

  // --------------------------------------------------------------------------- JSON form
  /// A schedule document (already parsed); strict (see the contracts above).
  [[nodiscard]] virtual AnySchedule from_json(nlohmann::json const& document) const = 0;
  /// The canonical document.
  [[nodiscard]] virtual nlohmann::ordered_json to_json(AnySchedule const& schedule) const = 0;

  // ------------------------------------------------------------------------------- steps
  [[nodiscard]] virtual std::size_t steps(AnySchedule const& schedule) const = 0;
  /// The schedule with only the steps at `indices` (ascending), in their order.
  [[nodiscard]] virtual AnySchedule keep_steps(AnySchedule const& schedule,
                                               std::vector<std::size_t> const& indices) const = 0;
  /// One line for step i: "alloc Fish threads=64 count=2 divergence=alternate".
  [[nodiscard]] virtual std::string describe_step(AnySchedule const& schedule,
                                                  std::size_t i) const              = 0;
  [[nodiscard]] virtual std::string description(AnySchedule const& schedule) const  = 0;
  [[nodiscard]] virtual AnySchedule with_description(AnySchedule const& schedule,
                                                     std::string description) const = 0;

  // ----------------------------------------------------------------------------- showing
  /// One line: the heap or pool ("M=16 n=2 k1=16; types: ..."), for replay's first line.
  [[nodiscard]] virtual std::string config_summary(AnySchedule const& schedule) const = 0;
  /// Its size in the family's unit, for minimize's lines ("M = 16", "T = 64").
  [[nodiscard]] virtual std::string size_summary(AnySchedule const& schedule) const = 0;
  /// `heaplab show`: the schedule's config and its steps, one per line.
  virtual void show(AnySchedule const& schedule, std::ostream& out) const = 0;

  // -------------------------------------------------------------------------- generation
  /// Its profiles; the first is the default.
  [[nodiscard]] virtual std::vector<Profile> profiles() const = 0;
  /// Case (seed, size) of a stress run: a pure function of its arguments. RapidCheck sizes are
  /// 1..100. Throws core::precondition_error for a profile it does not have.
  [[nodiscard]] virtual AnySchedule generate(GenerationRequest const& request,
                                             std::uint64_t seed,
                                             std::uint32_t size) const = 0;
  /// "heap 16 MiB (M <= 512 blocks)": what the request means for this family, for stress's first
  /// line ("" when the family does not scale with the request).
  [[nodiscard]] virtual std::string request_summary(GenerationRequest const&) const { return {}; }

  // ---------------------------------------------------------------------------- coverage
  /// Counts the config of a case and its first `steps_run` steps into `coverage`.
  virtual void cover(AnySchedule const& schedule,
                     std::size_t steps_run,
                     Coverage& coverage) const = 0;
  /// The categories cover() uses, in the order the stress summary prints them.
  [[nodiscard]] virtual std::vector<CoverageCategory> coverage_categories() const = 0;
  /// StepReport counts the progress line shows ("defrags").
  [[nodiscard]] virtual std::vector<std::string> progress_counts() const { return {}; }
  /// Extra summary lines and warnings after a stress run (e.g. "no defragmentation ran").
  [[nodiscard]] virtual std::vector<std::string> stress_notes(StressCounts const&) const {
    return {};
  }

  // ---------------------------------------------------------------------------- minimize
  /// The family's reductions beyond dropping steps, tried on reducer.best() until none applies
  /// (minimize repeats the whole round while anything shrinks).
  virtual void reduce(Reducer& reducer, ReductionOptions const& options) const = 0;
};

/// The step plumbing of a family whose schedule type S has `std::vector<Step> steps` and
/// `std::string description`.
template <class S>
class TypedFamily : public Family {
 public:
  using Schedule = S;

  [[nodiscard]] AnySchedule wrap(S schedule) const {
    return AnySchedule(*this, std::move(schedule));
  }
  [[nodiscard]] static S const& unwrap(AnySchedule const& schedule) { return schedule.get<S>(); }

  [[nodiscard]] std::size_t steps(AnySchedule const& schedule) const override {
    return unwrap(schedule).steps.size();
  }
  [[nodiscard]] AnySchedule keep_steps(AnySchedule const& schedule,
                                       std::vector<std::size_t> const& indices) const override {
    S s             = unwrap(schedule);
    auto const& all = unwrap(schedule).steps;
    s.steps.clear();
    for (std::size_t i : indices) {
      HEAPLAB_EXPECTS(i < all.size(), "keep_steps: a step index outside the schedule");
      s.steps.push_back(all[i]);
    }
    return wrap(std::move(s));
  }
  [[nodiscard]] std::string description(AnySchedule const& schedule) const override {
    return unwrap(schedule).description;
  }
  [[nodiscard]] AnySchedule with_description(AnySchedule const& schedule,
                                             std::string description) const override {
    S s           = unwrap(schedule);
    s.description = std::move(description);
    return wrap(std::move(s));
  }
};

/// Knobs the command line passes to every runner it makes; each runner uses those it has
/// (docs/families.md lists which).
struct RunnerOptions {
  /// A seed of the runner's own choices (differential-model: its random legal placements).
  std::uint64_t seed = 1;
  /// The CUDA device (stress gives worker w device w % GPUs).
  int device = 0;
  /// How many runners share the device (each keeps its heap under 1 / (2 x this) of the
  /// device's free memory).
  unsigned runners_per_device = 1;
  /// Warp-order perturbation in every step's kernels (GPU runners).
  bool perturb = true;
  /// The watchdog's budget for one step's kernels, in milliseconds (GPU runners); 0: the
  /// runner's default, HEAPLAB_WATCHDOG_MS when it is set, else the runner's own (a malloc
  /// subject may declare one: SubjectInfo::watchdog_ms), else 5 s.
  unsigned watchdog_ms = 0;
  /// OS threads per wave of a CPU-threads runner (0: its default).
  unsigned threads = 0;
};

/// Runs schedules of one family on one implementation (the model, CPU threads, a GPU).
///
/// Contract:
///   * run() starts from an empty heap every time; nothing of an earlier run leaks into a later
///     one (minimize and stress call it many times).
///   * Steps run in order; after each the runner checks the family's invariant catalog on the
///     implementation's state and, where it has a model, compares with it.
///   * on_step, when given, is called once per step that ran, in order, after its checks; the
///     failing step too (ok == false), last.
///   * run() returns the first failure (the run stops there) or none. Failures of the
///     implementation never escape as exceptions: an exception while executing a step is a
///     FailureKind::crash of that step (check "exception"). run() throws only for bad input (a
///     schedule of another family, one supports() rejects).
///   * A hang is FailureKind::hang (check "watchdog"); the kernel cannot be cancelled, so the
///     runner is unusable afterwards (usable() == false) and the caller must save what it needs
///     and end the process.
///   * deterministic() is true when the same schedule always gives the same outcome.
class Runner {
 public:
  virtual ~Runner()                = default;
  Runner()                         = default;
  Runner(Runner const&)            = delete;
  Runner& operator=(Runner const&) = delete;

  /// The name it is registered under; what failure files record as `runner`.
  [[nodiscard]] virtual std::string name() const                                        = 0;
  [[nodiscard]] virtual Support supports(AnySchedule const& schedule) const             = 0;
  virtual RunOutcome run(AnySchedule const& schedule, StepCallback const& on_step = {}) = 0;
  [[nodiscard]] virtual bool deterministic() const                                      = 0;
  /// False after a hang: the device still runs the stuck kernel; end the process.
  [[nodiscard]] virtual bool usable() const { return true; }
  /// The device it uses ("none" for CPU runners), for failure files.
  [[nodiscard]] virtual std::string device_name() const { return "none"; }
};

/// A runner that is registered but cannot run here (not built, no GPU); what() says why.
class runner_unavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace heaplab::runner
