// heaplab_explore: the explorer's command line (docs/explorer.md).
//
//   heaplab_explore --workload heap --runs 20000                 search (mixed random/PCT)
//   heaplab_explore --workload heap --seed 1234 --replay         replay one seed, print its trace
//   heaplab_explore --workload heap --workload-seed 7 --strategy exhaustive --bound 2
//   heaplab_explore --workload heap-weak --memory-model release_acquire   weak-memory mode
//   heaplab_explore --workload rw --runs 20000                   random-walk page pool (issue 11)
//   heaplab_explore --workload queue --runs 20000                its queue baseline (queue-weak:
//   weak) heaplab_explore --workload burst --runs 20000                claim-ticket bursts (issue
//   13)
//
// Built from the real protocol; configure with -DHEAPLAB_MUTANT=<name> to explore a planted bug
// (docs/mutants.md).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>
#include <string>

#include "heaplab/families/interleaving/workloads/programs.hpp"

namespace explore   = heaplab::explore;
namespace workloads = heaplab::interleaving_family::workloads;

int main(int argc, char** argv) {
  CLI::App app{
      "Explore interleavings of the portable core's protocol under the controlled scheduler."};
  std::string workload = "heap", strategy = "mixed";
  std::uint64_t seed = 1, runs = 2000, budget = 50'000, pct_steps = 150;
  std::uint32_t pct_depth = 3, bound = 2, stale_bound = 1;
  std::string memory_model;
  double seconds = 0;
  std::optional<std::uint64_t> workload_seed;
  bool replay = false, show_workload = false;
  std::string schedule;
  app.add_option(
         "--workload",
         workload,
         "heap (random allocate/free/hand-over workloads on a tiny heap), heap_k (the same with "
         "k-slot requests of 1..8 objects), bitmap (tokens on a multi-level bitmap), turnover "
         "(one fixed block-turnover workload, for exhaustive) or heap-weak (heap with the object "
         "words checked for stale reads; weak-memory mode by default), rw (the random-walk page "
         "pool: RW and RW-BM 32/64 on a tiny pool, a third RW_malloc warps with RW-BM walkers, "
         "CoRW "
         "warps in a third of the others) or "
         "rw-weak (rw with the page words checked "
         "for stale reads; weak-memory mode by default), queue (the queue baseline of the "
         "random-walk paper on a ring of 2-6 slots) or queue-weak (queue with the page words "
         "checked for stale reads; weak-memory mode by default), burst (cold-start k-slot "
         "bursts on a heap of 2-8 blocks that reach every claim-ticket path)")
      ->check(CLI::IsMember({"heap",
                             "heap_k",
                             "bitmap",
                             "turnover",
                             "heap-weak",
                             "rw",
                             "rw-weak",
                             "queue",
                             "queue-weak",
                             "burst"}));
  app.add_option("--memory-model",
                 memory_model,
                 "sequential_consistency (sc: every load reads the latest store; the default "
                 "except for heap-weak) or release_acquire (ra: the weak-memory mode, a load may "
                 "read an older store that coherence and happens-before allow)")
      ->check(CLI::IsMember({"sequential_consistency", "sc", "release_acquire", "ra"}));
  app.add_option("--stale-bound",
                 stale_bound,
                 "loads per schedule that may read an older store (strategy exhaustive, "
                 "release_acquire)");
  app.add_option("--strategy",
                 strategy,
                 "mixed (even seeds random, odd seeds PCT), random, pct or exhaustive")
      ->check(CLI::IsMember({"mixed", "random", "pct", "exhaustive"}));
  app.add_option(
      "--seed", seed, "first run's seed (run i uses seed + i); with --replay the seed to replay");
  app.add_option("--runs", runs, "runs (exhaustive: cap on interleavings)");
  app.add_option("--time", seconds, "stop after this many seconds (0: no limit)");
  app.add_option("--budget", budget, "atomic operations per run before it counts as a livelock");
  app.add_option("--pct-depth", pct_depth, "PCT depth d (strategy pct)");
  app.add_option("--pct-steps", pct_steps, "PCT step estimate k");
  app.add_option("--bound", bound, "preemption bound (strategy exhaustive)");
  app.add_option(
      "--workload-seed",
      workload_seed,
      "use this one workload for every run (default: each run's seed picks its workload)");
  app.add_flag("--replay", replay, "run the one seed --seed and print its trace");
  app.add_option("--schedule",
                 schedule,
                 "replay this schedule (as an exhaustive failure prints it) and print its trace");
  app.add_flag("--show-workload",
               show_workload,
               "print the workload of --seed (or --workload-seed) and exit");
  CLI11_PARSE(app, argc, argv);

  try {
    auto const kind = workloads::workload_kind_from_string(workload);
    if (show_workload) {
      std::printf("%s\n", workloads::describe_workload(kind, workload_seed.value_or(seed)).c_str());
      return 0;
    }
    explore::ExploreOptions o;
    o.strategy         = explore::strategy_kind_from_string(strategy);
    o.seed             = seed;
    o.max_runs         = runs;
    o.time_budget_s    = seconds;
    o.pct_depth        = pct_depth;
    o.pct_steps        = pct_steps;
    o.preemption_bound = bound;
    o.stale_read_bound = stale_bound;
    o.run.step_budget  = budget;
    o.run.memory_model = !memory_model.empty() ? explore::memory_model_from_string(memory_model)
                         : workloads::is_weak_workload(kind)
                             ? explore::MemoryModel::release_acquire
                             : explore::MemoryModel::sequential_consistency;
    if (o.strategy == explore::StrategyKind::exhaustive && !workload_seed) workload_seed = seed;
    auto const factory = workloads::workload_factory(kind, workload_seed);
    if (!schedule.empty()) {
      o.run.format_passing_trace = true;
      o.run.trace_tail           = 0;
      explore::RunResult const r =
          explore::replay_schedule(factory, explore::parse_schedule(schedule), o);
      if (r.passed())
        std::printf("schedule passed (%llu atomic operations)\n%s",
                    static_cast<unsigned long long>(r.steps),
                    r.trace_text.c_str());
      else
        std::printf("%s", explore::format_failure(r, 0, explore::StrategyKind::exhaustive).c_str());
      return r.passed() ? 0 : 1;
    }
    if (replay) {
      o.run.format_passing_trace = true;
      o.run.trace_tail           = 0;
      explore::RunResult const r = explore::replay(factory, o.strategy, seed, o);
      std::printf("workload (seed %llu):\n%s\n\n",
                  static_cast<unsigned long long>(workload_seed.value_or(seed)),
                  workloads::describe_workload(kind, workload_seed.value_or(seed)).c_str());
      if (r.passed())
        std::printf("%s seed %llu: passed (%llu atomic operations)\n%s",
                    r.strategy.c_str(),
                    static_cast<unsigned long long>(seed),
                    static_cast<unsigned long long>(r.steps),
                    r.trace_text.c_str());
      else
        std::printf("%s", explore::format_failure(r, seed, o.strategy).c_str());
      return r.passed() ? 0 : 1;
    }
    explore::ExploreReport const rep = explore::explore(factory, o);
    if (rep.failure) {
      std::printf("%s", rep.failure_report.c_str());
      if (o.strategy != explore::StrategyKind::exhaustive)
        std::printf(
            "workload of seed %llu:\n%s\n",
            static_cast<unsigned long long>(workload_seed.value_or(rep.failing_seed)),
            workloads::describe_workload(kind, workload_seed.value_or(rep.failing_seed)).c_str());
      std::printf("found after %llu runs in %.2f s\n",
                  static_cast<unsigned long long>(rep.runs),
                  rep.seconds);
      return 1;
    }
    std::printf("no failure in %llu runs (%llu atomic operations, %.2f s)%s\n",
                static_cast<unsigned long long>(rep.runs),
                static_cast<unsigned long long>(rep.steps),
                rep.seconds,
                o.strategy == explore::StrategyKind::exhaustive
                    ? (rep.exhausted ? "; bounded space exhausted" : "; search cut short")
                    : "");
    return 0;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab_explore: error: %s\n", e.what());
    return 2;
  }
}
