// Time-budgeted random testing: `heaplab stress` (docs/workflow.md, docs/replay.md).
//
// A stress run generates random schedules (schedule::gen generators, shaped by a profile), runs
// each through a ScheduleRunner (invariants after every step; the model comparison for
// differential runners) and saves every failure as a failure file. Everything about case k is a
// pure function of (run seed, k): its seed is case_seed(run_seed, k), its RapidCheck parameters
// (seed, size) generate its schedule, so any failure file reproduces without the run around it.
//
// Shards and workers. A campaign can be split into N shards (`heaplab stress --shard K/N`, one
// process each, on any machines): shard K owns the cases k with k % N == K. Inside one process the
// shard's cases are dealt round-robin to `workers` threads, each with its own runner (the GPU
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

#include <rapidcheck.h>

#include "heaplab/runner/runner.hpp"
#include "heaplab/schedule/failure_file.hpp"

namespace heaplab::runner {

/// small: gen::config() heaps (M in [2, 32]) and gen::steps() schedules (the property tests'
///        distribution);
/// large: the same kinds of types, M from --heap-mib (at least half of it), waves scaled to the
///        heap (fills of 1/16..4/16 of its capacity, thinning frees of 2/8..7/8, defrags, and
///        fill-half/thin/defrag episodes) mixed with random steps;
/// near-oom: small heaps (M in [2, 48]) driven to and past exhaustion: waves asking for 90-130%
///        of the remaining capacity, child allocations, frees and defrags near full.
/// mixed: the default of the GPU runner: 1-, 2- and 3-level bitmap hierarchies (M in [2, 64],
///        [65, 4096], [4097, 8192], drawn 5:3:2, log-uniform within a class, capped by
///        --max-blocks and --heap-mib). One-level
///        heaps get the small profile's schedules (gen::schedule_for); deeper ones random steps,
///        waves of up to 1/4 of the heap (at most 6144 objects), thinning frees and
///        fill-thin-defrag episodes, and end with a defragmentation.
enum class Profile { small, large, near_oom, mixed };
char const* to_string(Profile profile);
std::optional<Profile> profile_from_string(std::string const& s);

/// Bytes of one block's object area: 64 objects of the smallest type (DynaSOAr sec. 3.2).
std::uint64_t block_bytes(core::HeapConfig const& config);
/// How many blocks of `config` fit into heap_mib MiB (at least 1).
std::uint32_t blocks_for_heap(core::HeapConfig const& config, std::uint32_t heap_mib);

/// Schedules of a profile over configs drawn from `configs` (the profile then sets M from
/// heap_mib). max_blocks caps M (the model is sequential: its runners cap M to keep cases short;
/// the GPU runner's cap is the file format's). The default, schedule::gen::config(), draws any type
/// list; the GPU runner supports only its type universes (config_gen_for("gpu"), registry.hpp).
rc::Gen<schedule::Schedule> profile_schedule(Profile profile,
                                             std::uint32_t heap_mib,
                                             std::uint32_t max_blocks,
                                             rc::Gen<core::HeapConfig> configs);
rc::Gen<schedule::Schedule> profile_schedule(Profile profile,
                                             std::uint32_t heap_mib,
                                             std::uint32_t max_blocks);

struct StressOptions {
  double seconds            = 60;  // time budget (cases in flight finish after it)
  std::uint64_t seed        = 1;   // fixes the whole run
  std::uint32_t heap_mib    = 16;
  Profile profile           = Profile::small;
  std::uint32_t max_blocks  = 512;
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
  /// Where case configs come from: config_gen_for(runner name) (registry.hpp). Empty means
  /// schedule::gen::config() (any type list; the CPU runners run every config). Case k is a pure
  /// function of (seed, k, configs).
  std::function<rc::Gen<core::HeapConfig>()> configs;
};

/// The seed of case k of a run: schedule::mix(run_seed, k, salt).
std::uint64_t case_seed(std::uint64_t run_seed, std::uint64_t k);
/// RapidCheck size of case k: 1 + k % 100 (sizes cycle, small cases first; max_size <= 100).
std::uint32_t case_size(std::uint64_t k);

struct StressCase {
  std::uint64_t index = 0;
  std::uint64_t seed  = 0;
  schedule::RapidCheckParams rapidcheck;  // profile_schedule(...)(rc::Random(seed), size)
  schedule::Schedule schedule;
};
/// Case k of a run (deterministic; thread-safe: RapidCheck generation is serialized).
StressCase make_case(StressOptions const& options, std::uint64_t k);

/// What a run exercised, counted over the steps that ran (a failing case counts up to its failing
/// step) and the configs of the cases that ran. Keys are the schedule format's names ("alloc",
/// "random_mask", "recompute_global", ...); heap sizes are bucketed by hierarchy depth.
struct Coverage {
  std::map<std::string, std::uint64_t> step_kinds;           // alloc, free, parallel_do, ...
  std::map<std::string, std::uint64_t> divergence;           // alloc waves by pattern
  std::map<std::string, std::uint64_t> free_patterns;        // free waves by selector pattern
  std::map<std::string, std::uint64_t> parallel_do_actions;  // parallel_do by action
  std::map<std::string, std::uint64_t> defrag_variants;      // defrag by rewriting variant
  std::map<std::string, std::uint64_t> heap_sizes;           // cases by M bucket
  std::map<std::string, std::uint64_t> hierarchy_depths;     // cases by bitmap levels of M
  std::map<std::string, std::uint64_t> type_counts;          // cases by number of types

  /// Adds one case: its config and its first `steps_run` steps.
  void add(schedule::Schedule const& schedule, std::size_t steps_run);
  void merge(Coverage const& other);
};

/// Levels of a hierarchical bitmap over M blocks with 64-bit words (DynaSOAr sec. 4.2): 1 for
/// M <= 64, 2 for M <= 4096, 3 above.
std::uint32_t hierarchy_depth(std::uint32_t num_blocks);

/// Counters of a run. live_objects, blocks_in_use and num_blocks are those after the last step
/// any shard ran (the heap fill shown is blocks_in_use / num_blocks).
struct StressStats {
  double elapsed              = 0;
  std::uint64_t cases         = 0;
  std::uint64_t steps         = 0;
  std::uint64_t defrags       = 0;
  std::uint64_t out_of_memory = 0;  // allocations that found no memory
  std::uint64_t skipped       = 0;  // cases whose config the runner does not support
  std::uint64_t failures      = 0;
  /// Cases run by each worker (index w; the GPU runner's worker w runs on GPU w % GPUs).
  std::vector<std::uint64_t> cases_per_worker;
  std::uint64_t live_objects  = 0;
  std::uint64_t blocks_in_use = 0;
  std::uint64_t num_blocks    = 0;
  /// Step time by part, summed over the steps of every worker (StepReport::times): with W
  /// workers it adds up to about W x elapsed.
  StepTimes times;
  Coverage coverage;
};

struct SavedFailure {
  std::filesystem::path path;  // empty if the file could not be written (see save_error)
  std::string save_error;
  schedule::FailureFile file;
  Failure failure;
  unsigned worker = 0;
};

struct StressObserver {
  /// Every tick_seconds, from the calling thread.
  std::function<void(StressStats const&)> on_tick;
  /// After each failure file is written, from the shard's thread (calls are serialized).
  std::function<void(SavedFailure const&)> on_failure;
  /// After a hang's failure file is written, from the shard's thread. The device still runs the
  /// stuck kernel, so the command-line tool ends the process here (std::_Exit). Without it the
  /// run stops every shard and returns with StressResult::hang set.
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

/// Makes the runner of worker w (`heaplab stress` gives the GPU runner device w % GPUs).
using RunnerFactory = std::function<std::unique_ptr<ScheduleRunner>(unsigned worker)>;

/// The case indices a process with these options runs, in order, at most `limit` of them (for
/// tests and --dump; a time-budgeted run stops earlier). Throws for bad shard options.
std::vector<std::uint64_t> cases_of_shard(StressOptions const& options, std::uint64_t limit);

/// The failure file of a failed stress case.
/// The header every stress failure file starts with: when, which build and device, which runner,
/// which case of which run (origin "stress"); the heap and rw files add their own fields.
schedule::FailureHeader stress_failure_header(std::string const& device,
                                              std::string const& runner,
                                              std::uint64_t case_seed,
                                              schedule::RapidCheckParams const& rapidcheck,
                                              std::uint64_t run_seed,
                                              std::uint64_t case_index);

schedule::FailureFile failure_file_for(StressOptions const& options,
                                       StressCase const& c,
                                       ScheduleRunner const& runner,
                                       Failure const& failure);

/// Runs the loop (see the top of this file). Throws only for bad options.
StressResult run_stress(StressOptions const& options,
                        RunnerFactory const& make_runner,
                        StressObserver const& observer = {});

}  // namespace heaplab::runner
