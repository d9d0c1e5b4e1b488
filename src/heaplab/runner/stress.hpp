// Time-budgeted random testing of any family: `heaplab stress` (docs/workflow.md,
// docs/replay.md).
//
// A stress run generates random schedules (the family's generate(), shaped by a profile), runs
// each through a runner of the family (its checks after every step; the model comparison for
// differential runners) and saves every failure as a failure file. Everything about case k is a
// pure function of (run seed, k): its seed is case_seed(run_seed, k), its RapidCheck size
// case_size(k), and the family's generate(request, seed, size) gives its schedule, so any failure
// file reproduces without the run around it.
//
// Shards and workers. A campaign can be split into N shards (`heaplab stress --shard K/N`, one
// process each, on any machines): shard K owns the cases k with k % N == K. Inside one process the
// shard's cases are dealt round-robin to `workers` threads, each with its own runner (a GPU
// runner of worker w uses device w % GPUs; several workers may share a GPU). Because a case's
// schedule depends only on (seed, k), the set of schedules tried is the same for any number of
// shards, workers or GPUs; with --cases C the union of the N shards' cases is exactly the unsharded
// run's cases 0..C-1. Only how many are tried within a time budget changes.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/runner/failure_file.hpp"
#include "heaplab/runner/family.hpp"

namespace heaplab::runner {

struct StressOptions {
  double seconds     = 60;         // time budget (cases in flight finish after it)
  std::uint64_t seed = 1;          // fixes the whole run
  GenerationRequest request;       // profile, runner, heap size (the family's generate())
  std::uint64_t max_cases   = 0;   // stop after this many cases (0: only the time budget)
  std::size_t max_failures  = 10;  // stop after this many failures
  unsigned workers          = 1;   // threads in this process, each with its own runner
  std::uint32_t shard_index = 0;   // this process runs the cases k % shard_count == index
  std::uint32_t shard_count = 1;
  std::optional<std::uint64_t> only_case;  // run case k alone (it must belong to the shard)
  /// When it becomes true (SIGINT), the cases in flight finish and the run stops ("interrupted").
  std::atomic<bool> const* interrupt = nullptr;
  std::filesystem::path out_dir      = "failures";
  double tick_seconds                = 1;  // how often StressObserver::on_tick is called
  /// A worker that finishes no step of its case for this long is stalled: the calling thread
  /// reports every stalled worker's case as a hang (check "stall", a failure file each) and calls
  /// StressObserver::on_hang, which must end the process (a stalled thread cannot be joined). It
  /// catches what a runner's own watchdog cannot: a thread blocked inside a call that never
  /// returns, e.g. a CUDA call that waits for the whole device behind another worker's stuck
  /// kernel, where the watchdog's polling itself blocks (docs/gpu-runner.md "Hangs"). 0: off.
  double stall_seconds = 0;
};

/// The seed of case k of a run: schedule::mix(run_seed, k, salt).
std::uint64_t case_seed(std::uint64_t run_seed, std::uint64_t k);
/// RapidCheck size of case k: 1 + k % 100 (sizes cycle, small cases first; max_size <= 100).
std::uint32_t case_size(std::uint64_t k);

struct StressCase {
  std::uint64_t index = 0;
  std::uint64_t seed  = 0;
  RapidCheckParams rapidcheck;  // family.generate(request, seed, size)
  AnySchedule schedule;
};
/// Case k of a run (deterministic; thread-safe: generation is serialized, RapidCheck's context
/// being process-wide).
StressCase make_case(Family const& family, StressOptions const& options, std::uint64_t k);

/// The description a case's schedule gets in its failure file and in --dump: how to regenerate
/// it ("heaplab stress --seed 7 --profile small --heap-mib 16 --runner model, case 12").
std::string case_description(StressOptions const& options, std::uint64_t k);

/// Counters of a run. live, in_use and capacity are those after the last step any worker ran
/// (the heap fill shown is in_use / capacity).
/// A stress run so far: what the family's stress_notes() see (StressCounts: elapsed, cases,
/// steps, the summed StepReport counts, coverage) and the rest of the progress line.
struct StressStats : StressCounts {
  std::uint64_t skipped = 0;  // cases the runner does not support
  std::string skip_reason;    // why the first of them was not supported
  std::uint64_t failures = 0;
  /// Cases run by each worker (index w; a GPU runner's worker w runs on GPU w % GPUs).
  std::vector<std::uint64_t> cases_per_worker;
  std::uint64_t live     = 0;
  std::uint64_t in_use   = 0;
  std::uint64_t capacity = 0;
  /// Step time by part, summed over the steps of every worker (StepReport::times): with W
  /// workers it adds up to about W x elapsed.
  StepTimes times;
};

struct SavedFailure {
  std::filesystem::path path;  // empty if the file could not be written (see save_error)
  std::string save_error;
  FailureFile file;
  Failure failure;
  unsigned worker = 0;
};

struct StressObserver {
  /// Every tick_seconds, from the calling thread.
  std::function<void(StressStats const&)> on_tick;
  /// After each failure file is written, from the worker's thread (calls are serialized).
  std::function<void(SavedFailure const&)> on_failure;
  /// After a hang's failure file is written, from the worker's thread. The device still runs the
  /// stuck kernel, so the command-line tool ends the process here (std::_Exit). Without it the
  /// run stops every worker and returns with StressResult::hang set.
  std::function<void(SavedFailure const&)> on_hang;
};

struct StressResult {
  StressStats stats;
  std::vector<SavedFailure> failures;
  bool hang = false;
  /// "time budget", "--cases reached", "--max-failures reached", "hang", "interrupted",
  /// "--case ran"
  std::string stop_reason;
};

/// Makes the runner of worker w (`heaplab stress` gives a GPU runner device w % GPUs).
using RunnerFactory = std::function<std::unique_ptr<Runner>(unsigned worker)>;

/// The case indices a process with these options runs, in order, at most `limit` of them (for
/// tests and --dump; a time-budgeted run stops earlier). Throws for bad shard options.
std::vector<std::uint64_t> cases_of_shard(StressOptions const& options, std::uint64_t limit);

/// The failure file of a failed stress case on a runner named `runner_name` on `device_name`
/// (Runner::name(), Runner::device_name(): the loop asks each runner once, up front, so that a
/// worker's stall is saved without calling into its runner, which may be blocked).
FailureFile failure_file_for(StressOptions const& options,
                             StressCase const& c,
                             std::string const& device_name,
                             std::string const& runner_name,
                             Failure const& failure);

/// Runs the loop (see the top of this file) over `family`'s cases on runners of that family.
/// Throws only for bad options (core::precondition_error).
StressResult run_stress(Family const& family,
                        StressOptions const& options,
                        RunnerFactory const& make_runner,
                        StressObserver const& observer = {});

}  // namespace heaplab::runner
