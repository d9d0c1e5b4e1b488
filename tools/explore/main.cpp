// heaplab_explore: the explorer's command line (docs/explorer.md).
//
//   heaplab_explore --workload heap --runs 20000             search (mixed random/PCT)
//   heaplab_explore --workload heap --seed 1234 --replay     replay one seed, print its trace
//   heaplab_explore --workload heap --workload-seed 7 --strategy exhaustive --bound 2
//   heaplab_explore --workload heap-weak --memory-model release_acquire   weak-memory mode
//   heaplab_explore --workload rw --runs 20000               random-walk page pool (issue 11)
//   heaplab_explore --workload queue --runs 20000            its queue baseline (queue-weak: weak)
//   heaplab_explore --workload burst --runs 20000            claim-ticket bursts (issue 13)
//   heaplab_explore --workload heap --out-dir failures       a failure becomes a failure file
//
// With --out-dir, a failing run (of any strategy, or of --replay / --schedule) is written as a
// failure file of the interleaving family (src/heaplab/families/interleaving): the workload, the
// memory model and the run's decisions, confirmed by one run of the family's runner "explore";
// `heaplab replay FILE`, `heaplab minimize FILE` and `heaplab show FILE` take it.
//
// Built from the real protocol; configure with -DHEAPLAB_MUTANT=<name> to explore a planted bug
// (docs/mutants.md).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>
#include <string>

#include "heaplab/families/interleaving/explore_runner.hpp"
#include "heaplab/families/interleaving/family.hpp"
#include "heaplab/families/interleaving/workloads/programs.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "program.hpp"

namespace explore      = heaplab::explore;
namespace interleaving = heaplab::interleaving_family;
namespace runner       = heaplab::runner;
namespace workloads    = heaplab::interleaving_family::workloads;

namespace {

struct Options {
  std::string workload = "heap", strategy = "mixed";
  std::uint64_t seed = 1, runs = 2000, budget = 50'000, pct_steps = 150;
  std::uint32_t pct_depth = 3, bound = 2, stale_bound = 1;
  std::string memory_model;
  double seconds = 0;
  std::optional<std::uint64_t> workload_seed;
  bool replay = false, show_workload = false;
  std::string schedule;
  std::string out_dir;
};

void add_workload_options(CLI::App& app, Options& o) {
  app.add_option(
         "--workload",
         o.workload,
         "heap (random allocate/free/hand-over workloads on a tiny heap), heap_k (the same with "
         "k-slot requests of 1..8 objects), bitmap (tokens on a multi-level bitmap), turnover "
         "(one fixed block-turnover workload, for exhaustive) or heap-weak (heap with the object "
         "words checked for stale reads; weak-memory mode by default), rw (the random-walk page "
         "pool: RW and RW-BM 32/64 on a tiny pool, a third RW_malloc warps with RW-BM walkers, "
         "CoRW warps in a third of the others) or rw-weak (rw with the page words checked for "
         "stale reads; weak-memory mode by default), queue (the queue baseline of the random-walk "
         "paper on a ring of 2-6 slots) or queue-weak (queue with the page words checked for "
         "stale reads; weak-memory mode by default), burst (cold-start k-slot bursts on a heap "
         "of 2-8 blocks that reach every claim-ticket path), heap-large (prefilled heaps of "
         "65..192 "
         "blocks near out of memory: two-level bitmaps)")
      ->check(CLI::IsMember(workloads::workload_kind_names()));
  app.add_option("--memory-model",
                 o.memory_model,
                 "sequential_consistency (sc: every load reads the latest store; the default "
                 "except for the -weak workloads) or release_acquire (ra: the weak-memory mode, a "
                 "load may read an older store that coherence and happens-before allow)")
      ->check(CLI::IsMember({"sequential_consistency", "sc", "release_acquire", "ra"}));
  app.add_option("--stale-bound",
                 o.stale_bound,
                 "loads per schedule that may read an older store (strategy exhaustive, "
                 "release_acquire)");
  app.add_option(
      "--workload-seed",
      o.workload_seed,
      "use this one workload for every run (default: each run's seed picks its workload)");
  app.add_flag("--show-workload",
               o.show_workload,
               "print the workload of --seed (or --workload-seed) and exit");
}

void add_search_options(CLI::App& app, Options& o) {
  app.add_option("--strategy",
                 o.strategy,
                 "mixed (even seeds random, odd seeds PCT), random, pct or exhaustive")
      ->check(CLI::IsMember({"mixed", "random", "pct", "exhaustive"}));
  app.add_option(
      "--seed", o.seed, "first run's seed (run i uses seed + i); with --replay the seed to replay");
  app.add_option("--runs", o.runs, "runs (exhaustive: cap on interleavings)");
  app.add_option("--time", o.seconds, "stop after this many seconds (0: no limit)");
  app.add_option("--budget", o.budget, "atomic operations per run before it counts as a livelock");
  app.add_option("--pct-depth", o.pct_depth, "PCT depth d (strategy pct)");
  app.add_option("--pct-steps", o.pct_steps, "PCT step estimate k");
  app.add_option("--bound", o.bound, "preemption bound (strategy exhaustive)");
  app.add_flag("--replay", o.replay, "run the one seed --seed and print its trace");
  app.add_option(
      "--schedule",
      o.schedule,
      "replay this schedule (as an exhaustive failure prints it) on the workload of --seed "
      "(or --workload-seed) and print its trace");
  app.add_option("--out-dir",
                 o.out_dir,
                 "write a failing run as a failure file of the interleaving family here (its "
                 "decisions explicit; heaplab replay / minimize / show take it)");
}

explore::ExploreOptions explore_options(Options const& opt, workloads::WorkloadKind kind) {
  explore::ExploreOptions o;
  o.strategy             = explore::strategy_kind_from_string(opt.strategy);
  o.seed                 = opt.seed;
  o.max_runs             = opt.runs;
  o.time_budget_s        = opt.seconds;
  o.pct_depth            = opt.pct_depth;
  o.pct_steps            = opt.pct_steps;
  o.preemption_bound     = opt.bound;
  o.stale_read_bound     = opt.stale_bound;
  o.run.step_budget      = opt.budget;
  o.run.record_decisions = !opt.out_dir.empty();  // the failure file needs the decisions
  o.run.memory_model =
      !opt.memory_model.empty()           ? explore::memory_model_from_string(opt.memory_model)
      : workloads::is_weak_workload(kind) ? explore::MemoryModel::release_acquire
                                          : explore::MemoryModel::sequential_consistency;
  return o;
}

/// Where a failing run came from, for its failure file.
struct Origin {
  std::uint64_t workload_seed = 0;
  std::uint64_t seed          = 0;  // the failing run's seed (0: a schedule)
  std::optional<std::uint64_t> run_index;
  std::string command;  // how heaplab_explore was asked
};

/// Writes the failing run `r` as a failure file of the interleaving family into opt.out_dir,
/// after one run of the family's runner on its decisions confirmed the failure. Prints the path
/// and the replay command; returns false (with a message) when it could not.
bool write_failure_file(Options const& opt,
                        explore::ExploreOptions const& o,
                        workloads::WorkloadKind kind,
                        explore::RunResult const& r,
                        Origin const& origin) {
  interleaving::InterleavingSchedule s;
  s.description   = origin.command + ": " + r.strategy + ", " + explore::to_string(r.outcome);
  s.workload      = kind;
  s.workload_seed = origin.workload_seed;
  s.memory_model  = o.run.memory_model;
  s.step_budget   = o.run.step_budget;
  if (o.strategy == explore::StrategyKind::exhaustive &&
      o.run.memory_model == explore::MemoryModel::release_acquire)
    s.stale_read_bound = o.stale_read_bound;
  for (auto const& d : r.decisions) s.steps.push_back(interleaving::Decision::decode(d.chosen));
  interleaving::ExploreRunner confirm;
  runner::RunOutcome const again = confirm.run(s);
  if (!again.failure) {
    std::fprintf(stderr,
                 "heaplab_explore: the failure did not reproduce from its %zu decisions; no "
                 "failure file written\n",
                 s.steps.size());
    return false;
  }
  runner::FailureFile f;
  f.created           = runner::utc_now_iso8601();
  f.git_commit        = runner::git_commit();
  f.runner            = confirm.name();
  f.seed              = origin.seed;
  f.origin.command    = "explore";
  f.origin.run_seed   = opt.seed;
  f.origin.case_index = origin.run_index;
  f.origin.profile    = workloads::to_string(kind);
  f.failure           = again.failure->record();
  f.schedule          = interleaving::family().wrap(std::move(s));
  auto const path     = runner::save_failure(f, opt.out_dir);
  std::printf("failure file: %s (%s)\nreplay: heaplab replay %s\n",
              path.string().c_str(),
              f.recorded().c_str(),
              path.string().c_str());
  return true;
}

std::string command_of(Options const& opt) {
  std::string c = "heaplab_explore --workload " + opt.workload;
  if (opt.workload_seed) c += " --workload-seed " + std::to_string(*opt.workload_seed);
  return c;
}

/// --schedule: one run that follows the given decisions.
int run_schedule(Options const& opt,
                 explore::ExploreOptions o,
                 workloads::WorkloadKind kind,
                 explore::ProgramFactory const& factory) {
  o.run.format_passing_trace = true;
  o.run.trace_tail           = 0;
  explore::RunResult const r =
      explore::replay_schedule(factory, explore::parse_schedule(opt.schedule), o);
  if (r.passed()) {
    std::printf("schedule passed (%llu atomic operations)\n%s",
                static_cast<unsigned long long>(r.steps),
                r.trace_text.c_str());
    return 0;
  }
  std::printf("%s", explore::format_failure(r, 0, explore::StrategyKind::exhaustive).c_str());
  if (!opt.out_dir.empty())
    (void)write_failure_file(
        opt, o, kind, r, {*opt.workload_seed, 0, {}, command_of(opt) + " --schedule ..."});
  return 1;
}

/// --replay: the one run of seed --seed under --strategy.
int run_replay(Options const& opt,
               explore::ExploreOptions o,
               workloads::WorkloadKind kind,
               explore::ProgramFactory const& factory) {
  o.run.format_passing_trace = true;
  o.run.trace_tail           = 0;
  std::uint64_t const ws     = opt.workload_seed.value_or(opt.seed);
  explore::RunResult const r = explore::replay(factory, o.strategy, opt.seed, o);
  std::printf("workload (seed %llu):\n%s\n\n",
              static_cast<unsigned long long>(ws),
              workloads::describe_workload(kind, ws).c_str());
  if (r.passed()) {
    std::printf("%s seed %llu: passed (%llu atomic operations)\n%s",
                r.strategy.c_str(),
                static_cast<unsigned long long>(opt.seed),
                static_cast<unsigned long long>(r.steps),
                r.trace_text.c_str());
    return 0;
  }
  std::printf("%s", explore::format_failure(r, opt.seed, o.strategy).c_str());
  if (!opt.out_dir.empty())
    (void)write_failure_file(opt, o, kind, r, {ws, opt.seed, {}, command_of(opt)});
  return 1;
}

/// The search: random / pct / mixed over seeds, or exhaustive.
int run_search(Options const& opt,
               explore::ExploreOptions const& o,
               workloads::WorkloadKind kind,
               explore::ProgramFactory const& factory) {
  explore::ExploreReport const rep = explore::explore(factory, o);
  if (!rep.failure) {
    std::printf("no failure in %llu runs (%llu atomic operations, %.2f s)%s\n",
                static_cast<unsigned long long>(rep.runs),
                static_cast<unsigned long long>(rep.steps),
                rep.seconds,
                o.strategy == explore::StrategyKind::exhaustive
                    ? (rep.exhausted ? "; bounded space exhausted" : "; search cut short")
                    : "");
    return 0;
  }
  bool const exhaustive  = o.strategy == explore::StrategyKind::exhaustive;
  std::uint64_t const ws = opt.workload_seed.value_or(rep.failing_seed);
  std::printf("%s", rep.failure_report.c_str());
  if (!exhaustive)
    std::printf("workload of seed %llu:\n%s\n",
                static_cast<unsigned long long>(ws),
                workloads::describe_workload(kind, ws).c_str());
  std::printf(
      "found after %llu runs in %.2f s\n", static_cast<unsigned long long>(rep.runs), rep.seconds);
  if (!opt.out_dir.empty()) {
    std::string const how = command_of(opt) + " --strategy " + opt.strategy + " --seed " +
                            std::to_string(exhaustive ? opt.seed : rep.failing_seed);
    (void)write_failure_file(
        opt, o, kind, *rep.failure, {ws, exhaustive ? 0 : rep.failing_seed, rep.runs - 1, how});
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (!heaplab::program::plant_requested_bug("heaplab_explore"))
    return heaplab::program::kExitUsage;
  CLI::App app{
      "Explore interleavings of the portable core's protocol under the controlled scheduler."};
  Options opt;
  add_workload_options(app, opt);
  add_search_options(app, opt);
  heaplab::program::add_version_flag(app, "heaplab_explore");
  heaplab::program::check_every_number(app);
  heaplab::program::last_one_wins(app);
  try {
    heaplab::program::parse(app, argc, argv);
  } catch (CLI::ParseError const& e) {
    // One line and exit 2, as every heaplab program (CLI11_PARSE would use CLI11's own codes).
    return heaplab::program::parse_error(app, e, "heaplab_explore");
  }
  try {
    auto const kind = workloads::workload_kind_from_string(opt.workload);
    if (opt.show_workload) {
      std::printf("%s\n",
                  workloads::describe_workload(kind, opt.workload_seed.value_or(opt.seed)).c_str());
      return 0;
    }
    explore::ExploreOptions const o = explore_options(opt, kind);
    // The exhaustive search and --schedule need a fixed program: the workload of --seed unless
    // --workload-seed gives one.
    if ((o.strategy == explore::StrategyKind::exhaustive || !opt.schedule.empty()) &&
        !opt.workload_seed)
      opt.workload_seed = opt.seed;
    auto const factory = workloads::workload_factory(kind, opt.workload_seed);
    if (!opt.schedule.empty()) return run_schedule(opt, o, kind, factory);
    if (opt.replay) return run_replay(opt, o, kind, factory);
    return run_search(opt, o, kind, factory);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab_explore: error: %s\n", e.what());
    return 2;
  }
}
