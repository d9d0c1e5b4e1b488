// The explorer: runs a program under many interleavings until one fails.
//
//   random / pct / mixed   runs 0, 1, 2, ... use seeds seed, seed + 1, ...; each run builds a
//                          fresh program from its seed (so a seed can also choose the workload)
//                          and a strategy from the same seed. mixed alternates: even seeds
//                          random, odd seeds PCT with depth 1 + (seed / 2) % 3.
//   exhaustive             every interleaving with at most preemption_bound preemptions (a switch
//                          away from a thread that could run on; switches at thread exit, at a
//                          retry (Backoff::retry) or away from a thread waiting for a memory
//                          change are free), by depth-first re-execution (CHESS-style). A thread
//                          that just retried (Backoff::retry) is not rescheduled while another can
//                          run (fairness; else retry loops make the space infinite). For tiny
//                          programs; the program must be deterministic. In the weak-memory
//                          mode it also enumerates, at every load, which store it reads, with
//                          at most stale_read_bound loads reading an older store per schedule.
// A failure is reported with its seed and strategy; replay(...) with the same arguments
// reproduces the identical trace. docs/explorer.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/explore/controlled_run.hpp"

namespace heaplab::explore {

enum class StrategyKind : std::uint8_t { random, pct, mixed, exhaustive };

[[nodiscard]] char const* to_string(StrategyKind k);
/// "random", "pct", "mixed", "exhaustive"; throws std::invalid_argument otherwise.
[[nodiscard]] StrategyKind strategy_kind_from_string(std::string const& name);

struct ExploreOptions {
  StrategyKind strategy = StrategyKind::mixed;
  std::uint64_t seed    = 1;
  /// random/pct/mixed: number of runs; exhaustive: a cap on the interleavings explored.
  std::uint64_t max_runs = 2000;
  /// Stop after this many seconds (0: no limit); the report says how many runs were done.
  double time_budget_s           = 0;
  std::uint32_t pct_depth        = 3;    // for strategy pct
  std::uint64_t pct_steps        = 150;  // PCT's step estimate k (heap runs take ~100-200 steps)
  std::uint32_t preemption_bound = 2;    // exhaustive
  /// exhaustive, weak-memory mode (run.memory_model release_acquire): at most this many loads
  /// of a schedule read an older store than the latest; every choice of which older store
  /// (within the thread's view) is enumerated.
  std::uint32_t stale_read_bound = 1;
  RunOptions run{};
};

/// Builds a fresh program for one run; `run_seed` is the run's seed (ignored by exhaustive).
using ProgramFactory = std::function<Program(std::uint64_t run_seed)>;

struct ExploreReport {
  std::uint64_t runs  = 0;
  std::uint64_t steps = 0;  // atomic operations over all runs
  double seconds      = 0;
  /// exhaustive: the whole bounded space was explored (false if max_runs / time cut it short).
  bool exhausted = false;
  std::optional<RunResult> failure;
  std::uint64_t failing_seed = 0;  // random/pct/mixed
  /// exhaustive: the failing run's choices, one per decision point (replay_schedule).
  std::vector<std::uint32_t> failing_schedule;
  /// Human-readable failure: strategy, seed, outcome, message, how to replay, trace.
  std::string failure_report;
};

/// The strategy a seed selects under kind (random, pct, mixed).
[[nodiscard]] std::unique_ptr<Strategy> make_strategy(StrategyKind kind,
                                                      std::uint64_t seed,
                                                      ExploreOptions const& options);

ExploreReport explore(ProgramFactory const& factory, ExploreOptions const& options = {});

/// One run with the strategy `kind` and `seed` select (random, pct, mixed): the replay of a
/// failure that explore reported with that seed.
RunResult replay(ProgramFactory const& factory,
                 StrategyKind kind,
                 std::uint64_t seed,
                 ExploreOptions const& options = {});

/// One run that follows `schedule` (the thread chosen at each decision point, as an exhaustive
/// failure reports it) and then continues without preemption.
RunResult replay_schedule(ProgramFactory const& factory,
                          std::vector<std::uint32_t> const& schedule,
                          ExploreOptions const& options = {});

/// "0*12,1*5,0*3": a schedule run-length encoded (thread*count, comma separated), and back. In
/// the weak-memory mode read choices appear as r<k>*count (k: newer stores the load skipped).
/// parse_schedule throws std::invalid_argument for malformed text.
[[nodiscard]] std::string format_schedule(std::vector<std::uint32_t> const& schedule);
[[nodiscard]] std::vector<std::uint32_t> parse_schedule(std::string const& text);

/// The failure text explore() puts in failure_report.
[[nodiscard]] std::string format_failure(RunResult const& result,
                                         std::uint64_t seed,
                                         StrategyKind kind);

}  // namespace heaplab::explore
