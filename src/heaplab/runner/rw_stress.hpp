// Time-budgeted random testing of the random-walk pool: `heaplab stress --runner rw-*`
// (docs/rw.md "Schedules and runners", docs/cli.md). Like the heap's stress loop (stress.hpp),
// everything about case k is a pure function of (run seed, k): its seed is case_seed(seed, k) and
// its schedule schedule::gen::rw_schedule(algorithms)(rc::Random(seed), case_size(k)), both
// recorded in its failure file. One worker: the rw-cpu runner runs each wave on several OS
// threads already.
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

#include "heaplab/runner/rw_runner.hpp"
#include "heaplab/schedule/failure_file.hpp"
#include "heaplab/schedule/rw_schedule.hpp"

namespace heaplab::runner {

struct RwStressOptions {
  double seconds           = 60;
  std::uint64_t seed       = 1;
  std::uint64_t max_cases  = 0;  // 0: only the time budget
  std::size_t max_failures = 10;
  std::optional<std::uint64_t> only_case;
  std::atomic<bool> const* interrupt = nullptr;
  std::filesystem::path out_dir      = "failures";
  double tick_seconds                = 1;
  /// The algorithms the cases use (empty: all four; every rw runner runs every algorithm).
  std::vector<schedule::RwAlgorithm> algorithms;
};

struct RwStressCase {
  std::uint64_t index = 0;
  std::uint64_t seed  = 0;
  schedule::RapidCheckParams rapidcheck;
  schedule::RwSchedule schedule;
};
/// Case k of a run (deterministic).
RwStressCase make_rw_case(RwStressOptions const& options, std::uint64_t k);

struct RwStressStats {
  double elapsed         = 0;
  std::uint64_t cases    = 0;
  std::uint64_t failures = 0;
  RwRunStats run;                                   // summed over the cases' waves
  std::map<std::string, std::uint64_t> algorithms;  // alloc waves by algorithm
  std::map<std::string, std::uint64_t> lanes;       // alloc waves by lane pattern
  std::map<std::string, std::uint64_t> frees;       // free waves by selection
};

struct RwSavedFailure {
  std::filesystem::path path;  // empty when the file could not be written
  std::string save_error;
  schedule::RwFailureFile file;
  RwFailure failure;
};

struct RwStressObserver {
  std::function<void(RwStressStats const&)> on_tick;
  std::function<void(RwSavedFailure const&)> on_failure;
};

struct RwStressResult {
  RwStressStats stats;
  std::vector<RwSavedFailure> failures;
  std::string stop_reason;  // as StressResult::stop_reason
};

/// The failure file of a failed case (origin "stress").
schedule::RwFailureFile rw_failure_file_for(RwStressOptions const& options,
                                            RwStressCase const& c,
                                            RwRunner const& runner,
                                            RwFailure const& failure);

/// Runs the loop. Throws only for bad options.
RwStressResult run_rw_stress(RwStressOptions const& options,
                             RwRunner& runner,
                             RwStressObserver const& observer = {});

}  // namespace heaplab::runner
