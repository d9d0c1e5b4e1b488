// `heaplab stress`: time-budgeted random schedules through a runner, a failure file for every
// failure (docs/workflow.md, docs/replay.md). The loop lives in runner/stress.hpp; this file is
// the command line: options, the progress line, failure messages, the summary, exit status.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "commands.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/runner/stress.hpp"

namespace heaplab::cli {
namespace {

constexpr int kExitHang = 3;

struct StressCli {
  double minutes               = 1;
  double seconds               = -1;  // overrides --minutes when set
  std::uint64_t seed           = 0;
  bool seed_given              = false;
  std::uint32_t heap_mib       = 16;
  std::string profile          = "small";
  std::string runner           = "model";
  std::uint64_t cases          = 0;
  std::string out_dir          = "failures";
  unsigned jobs                = 0;  // 0: 1 for CPU runners, one per visible GPU for gpu
  std::size_t max_failures     = 10;
  std::uint32_t max_blocks     = 0;  // 0: runner default
  double progress_every        = 10;
  std::uint64_t placement_seed = 1;
  int watchdog_ms              = 0;
  bool quiet                   = false;
};

std::string self_path() {
  std::error_code ec;
  auto const p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("heaplab") : p.string();
}

std::string with_commas(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

std::string progress_text(runner::StressStats const& s) {
  char buf[256];
  double const fill = s.num_blocks ? 100.0 * static_cast<double>(s.blocks_in_use) /
                                         static_cast<double>(s.num_blocks)
                                   : 0.0;
  std::snprintf(buf,
                sizeof buf,
                "elapsed %6.1f s | cases %s | steps %s | live objects %s | heap fill %5.1f%% | "
                "defrags %s | failures %llu",
                s.elapsed,
                with_commas(s.cases).c_str(),
                with_commas(s.steps).c_str(),
                with_commas(s.live_objects).c_str(),
                fill,
                with_commas(s.defrags).c_str(),
                static_cast<unsigned long long>(s.failures));
  return buf;
}

int stress(StressCli const& cli) {
  auto const profile = runner::profile_from_string(cli.profile);
  if (!profile) {
    std::fprintf(stderr,
                 "heaplab stress: unknown profile '%s' (small, large, near-oom)\n",
                 cli.profile.c_str());
    return 2;
  }
  runner::StressOptions o;
  o.seconds      = cli.seconds >= 0 ? cli.seconds : cli.minutes * 60.0;
  o.seed         = cli.seed_given ? cli.seed
                                  : static_cast<std::uint64_t>(
                                std::chrono::system_clock::now().time_since_epoch().count()) %
                                1000000007ull;
  o.heap_mib     = cli.heap_mib;
  o.profile      = *profile;
  o.max_cases    = cli.cases;
  o.max_failures = cli.max_failures;
  o.out_dir      = cli.out_dir;
  bool const gpu = cli.runner == "gpu";
  o.max_blocks   = cli.max_blocks ? cli.max_blocks : (gpu ? schedule::kMaxBlocks : 512u);
  o.shards       = cli.jobs
                       ? cli.jobs
                       : (gpu ? static_cast<unsigned>(std::max(1, runner::visible_gpu_count())) : 1u);
  o.tick_seconds = 0.25;
  // Configs the runner supports: the GPU runner only runs its type universes (docs/gpu-runner.md).
  o.configs = [runner_name = cli.runner] { return runner::config_gen_for(runner_name); };

  runner::RunnerOptions ro;
  ro.placement_seed = cli.placement_seed;
  if (cli.watchdog_ms > 0) ro.watchdog_budget = std::chrono::milliseconds(cli.watchdog_ms);
  auto factory = [&](unsigned shard) {
    runner::RunnerOptions per = ro;
    per.device                = static_cast<int>(shard);
    return runner::make_runner(cli.runner, per);
  };
  // Fail early and clearly when the runner cannot run here.
  try {
    (void)factory(0);
  } catch (runner::runner_unavailable const& e) {
    std::fprintf(stderr, "heaplab stress: --runner %s: %s\n", cli.runner.c_str(), e.what());
    return 2;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab stress: --runner %s: %s\n", cli.runner.c_str(), e.what());
    return 2;
  }

  bool const tty = isatty(fileno(stdout)) != 0;
  std::printf(
      "heaplab stress: runner %s, profile %s, heap %u MiB (M <= %u blocks), seed %llu, budget "
      "%.1f s%s, %u shard%s; failure files in %s/\n",
      cli.runner.c_str(),
      runner::to_string(o.profile),
      o.heap_mib,
      o.max_blocks,
      static_cast<unsigned long long>(o.seed),
      o.seconds,
      o.max_cases ? (", at most " + std::to_string(o.max_cases) + " cases").c_str() : "",
      o.shards,
      o.shards == 1 ? "" : "s",
      o.out_dir.string().c_str());
  if (!cli.seed_given)
    std::printf("heaplab stress: (no --seed given; repeat this run with --seed %llu)\n",
                static_cast<unsigned long long>(o.seed));
  std::fflush(stdout);

  std::mutex print_mutex;
  bool line_open                 = false;  // a \r progress line is on screen
  double last_plain              = 0;
  std::string const replay_extra = cli.runner == "model" ? "" : " --runner " + cli.runner;

  auto end_line = [&] {
    if (line_open) std::printf("\n");
    line_open = false;
  };
  runner::StressObserver observer;
  observer.on_tick = [&](runner::StressStats const& s) {
    std::lock_guard<std::mutex> lock(print_mutex);
    if (cli.quiet) return;
    if (tty) {
      std::printf("\r%s   ", progress_text(s).c_str());
      line_open = true;
    } else if (s.elapsed - last_plain >= cli.progress_every) {
      last_plain = s.elapsed;
      std::printf("stress: %s\n", progress_text(s).c_str());
    }
    std::fflush(stdout);
  };
  auto print_failure = [&](runner::SavedFailure const& f) {
    std::lock_guard<std::mutex> lock(print_mutex);
    end_line();
    std::printf("FAILURE (shard %u) case %llu, seed %llu, at step %zu: %s, check %s: %s\n",
                f.shard,
                static_cast<unsigned long long>(f.file.origin.case_index.value_or(0)),
                static_cast<unsigned long long>(f.file.seed),
                f.failure.step,
                schedule::to_string(f.failure.kind),
                f.failure.check.c_str(),
                f.failure.message.c_str());
    if (f.path.empty()) {
      std::printf("  the failure file could not be written: %s\n", f.save_error.c_str());
    } else {
      std::printf("  failure file: %s\n  replay it:    %s replay %s%s\n",
                  f.path.c_str(),
                  self_path().c_str(),
                  f.path.c_str(),
                  replay_extra.c_str());
    }
    std::fflush(stdout);
  };
  observer.on_failure = print_failure;
  observer.on_hang    = [&](runner::SavedFailure const&) {
    std::lock_guard<std::mutex> lock(print_mutex);
    std::printf(
        "heaplab stress: a kernel hung (watchdog); it cannot be cancelled, so the run ends here "
           "(exit status %d)\n",
        kExitHang);
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(kExitHang);
  };

  runner::StressResult result;
  try {
    result = runner::run_stress(o, factory, observer);
  } catch (std::exception const& e) {
    end_line();
    std::fprintf(stderr, "heaplab stress: %s\n", e.what());
    return 2;
  }
  {
    std::lock_guard<std::mutex> lock(print_mutex);
    end_line();
  }
  auto const& s = result.stats;
  std::printf("stress: %s\n", progress_text(s).c_str());
  std::printf(
      "heaplab stress: %s cases (%s skipped: config not supported), %s steps, %s defrags, %s "
      "allocations out of memory in %.1f s; stopped: %s\n",
      with_commas(s.cases).c_str(),
      with_commas(s.skipped).c_str(),
      with_commas(s.steps).c_str(),
      with_commas(s.defrags).c_str(),
      with_commas(s.out_of_memory).c_str(),
      s.elapsed,
      result.stop_reason.c_str());
  if (result.failures.empty()) {
    std::printf("heaplab stress: PASSED, no failures (seed %llu)\n",
                static_cast<unsigned long long>(o.seed));
    return 0;
  }
  std::printf("heaplab stress: FAILED, %zu failure%s (seed %llu):\n",
              result.failures.size(),
              result.failures.size() == 1 ? "" : "s",
              static_cast<unsigned long long>(o.seed));
  for (auto const& f : result.failures)
    std::printf("  %s  step %zu %s %s\n",
                f.path.empty() ? "(not saved)" : f.path.c_str(),
                f.failure.step,
                schedule::to_string(f.failure.kind),
                f.failure.check.c_str());
  return 1;
}

}  // namespace

void add_stress(CLI::App& app) {
  auto cli  = std::make_shared<StressCli>();
  auto* cmd = app.add_subcommand(
      "stress",
      "Time-budgeted random testing (docs/workflow.md). Generates random schedules (alloc waves,\n"
      "frees, parallel_do, defrag, checks) shaped by --profile, runs each through --runner with\n"
      "the whole invariant catalog after every step (and, for differential runners, the model\n"
      "comparison), and writes every failure to a failure file in --out-dir, printing its path\n"
      "and the exact replay command.\n"
      "Seeds: --seed fixes the whole run: case k has seed mix(seed, k) and RapidCheck size\n"
      "1 + k % 100, both recorded in its failure file. Configs: any type list for the CPU "
      "runners;\n"
      "for --runner gpu, the GPU runner's type universes (wator, sizes, tree) with random n, k1.\n"
      "With several shards (--jobs; for --runner\n"
      "gpu one per visible GPU), case k runs on shard k % J, so the cases do not depend on J.\n"
      "Progress: one line updated in place when stdout is a terminal, else a plain line every\n"
      "--progress-every seconds; a summary at the end.\n"
      "Exit status: 0 no failure, 1 failures (files written), 2 bad options or the runner cannot\n"
      "run here, 3 a kernel hung (its failure file is written, then the process ends at once).");
  cmd->add_option(
         "--minutes", cli->minutes, "time budget in minutes (default 1; fractions allowed)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--seconds", cli->seconds, "time budget in seconds (instead of --minutes)")
      ->check(CLI::Range(0.0, 1e8));
  cmd->add_option("--seed", cli->seed, "seed of the whole run (default: from the clock, printed)")
      ->each([cli](std::string const&) { cli->seed_given = true; });
  cmd->add_option("--heap-mib",
                  cli->heap_mib,
                  "heap size in MiB; M = heap / (64 x smallest type size), capped by --max-blocks "
                  "(default 16)")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--profile",
                  cli->profile,
                  "small: M in [2, 32], the property tests' schedules; large: M from --heap-mib, "
                  "waves scaled to the heap; near-oom: small heaps driven past exhaustion")
      ->check(CLI::IsMember({"small", "large", "near-oom"}));
  cmd->add_option("--runner",
                  cli->runner,
                  "model (the reference model), differential-model (the differential path with a "
                  "second model in place of the GPU), gpu (the GPU allocator vs the model)")
      ->check(CLI::IsMember({"model", "differential-model", "gpu"}));
  cmd->add_option(
      "--cases", cli->cases, "stop after this many cases (default: the time budget only)");
  cmd->add_option("--out-dir", cli->out_dir, "directory for failure files (default failures)");
  cmd->add_option("--jobs",
                  cli->jobs,
                  "shards run in parallel, each with its own runner (default 1; gpu: one per GPU)")
      ->check(CLI::Range(1u, 256u));
  cmd->add_option("--max-failures", cli->max_failures, "stop after this many failures (default 10)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
  cmd->add_option(
         "--max-blocks", cli->max_blocks, "cap on M (default 512 for CPU runners, 65536 for gpu)")
      ->check(CLI::Range(1u, 65536u));
  cmd->add_option("--progress-every",
                  cli->progress_every,
                  "seconds between progress lines when stdout is not a terminal (default 10)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--placement-seed",
                  cli->placement_seed,
                  "differential-model: seed of its random legal placements (default 1)");
  cmd->add_option("--watchdog-ms",
                  cli->watchdog_ms,
                  "gpu: budget of one step's kernels in ms (default HEAPLAB_WATCHDOG_MS or 5000)")
      ->check(CLI::Range(1, 86400000));
  cmd->add_flag("--quiet,-q", cli->quiet, "no progress lines (failures and the summary only)");
  cmd->callback([cli] { std::exit(stress(*cli)); });
}

}  // namespace heaplab::cli
