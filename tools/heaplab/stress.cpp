// `heaplab stress`: time-budgeted random schedules through a runner, a failure file for every
// failure (docs/cli.md, docs/workflow.md, docs/replay.md). The loop lives in runner/stress.hpp;
// this file is the command line: options, the progress line, failure messages, Ctrl-C, the
// summary with coverage, the JSON summary, exit status.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <iostream>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "files.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/runner/rw_registry.hpp"
#include "heaplab/runner/stress.hpp"
#include "heaplab/schedule/json.hpp"
#include "options.hpp"
#include "rw_commands.hpp"

namespace heaplab::cli {
namespace {

struct StressCli {
  double minutes          = 1;
  double seconds          = -1;  // instead of --minutes when set
  std::uint64_t seed      = 0;
  bool seed_given         = false;
  std::string shard       = "0/1";  // K/N
  std::uint64_t only_case = 0;
  bool case_given         = false;
  bool dump               = false;
  std::string json_summary;
  std::uint32_t heap_mib = 16;
  std::string profile;  // default: small for the CPU runners, mixed for gpu
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
  bool no_perturb              = false;
};

/// Set by SIGINT; the stress loop finishes the cases in flight and stops. A second SIGINT ends
/// the process at once.
std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free, "used from a signal handler");

extern "C" void on_sigint(int) {
  if (g_interrupt.exchange(true)) _exit(kExitInterrupted);
  static char const msg[] =
      "\nheaplab stress: interrupted: finishing the cases in flight, then the summary "
      "(Ctrl-C again to stop at once)\n";
  ssize_t const ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
}

/// "K/N" with N >= 1 and K < N.
std::optional<std::pair<std::uint32_t, std::uint32_t>> parse_shard(std::string const& text) {
  auto const slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  std::string const k = text.substr(0, slash), n = text.substr(slash + 1);
  std::string err_k = k, err_n = n;
  if (!unsigned_integer(0, 1u << 20)(err_k).empty() ||
      !unsigned_integer(1, 1u << 20)(err_n).empty())
    return std::nullopt;
  auto const ki = static_cast<std::uint32_t>(std::stoul(k));
  auto const ni = static_cast<std::uint32_t>(std::stoul(n));
  if (ki >= ni) return std::nullopt;
  return std::make_pair(ki, ni);
}

std::string utc_now() {
  std::time_t const t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

/// "alloc 120, free 80, ..." in the order of the map's keys.
std::string counts_text(std::map<std::string, std::uint64_t> const& counts) {
  if (counts.empty()) return "none";
  std::string out;
  for (auto const& [key, n] : counts)
    out += (out.empty() ? "" : ", ") + key + " " + std::to_string(n);
  return out;
}

nlohmann::ordered_json coverage_json(runner::Coverage const& c) {
  nlohmann::ordered_json j;
  j["step_kinds"]          = c.step_kinds;
  j["divergence"]          = c.divergence;
  j["free_patterns"]       = c.free_patterns;
  j["parallel_do_actions"] = c.parallel_do_actions;
  j["defrag_variants"]     = c.defrag_variants;
  j["heap_sizes"]          = c.heap_sizes;
  j["hierarchy_depths"]    = c.hierarchy_depths;
  j["type_counts"]         = c.type_counts;
  return j;
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

/// Cases whose heap has M > 64 blocks (2- and 3-level bitmap hierarchies).
std::uint64_t deep_cases(runner::Coverage const& c) {
  std::uint64_t deep = 0;
  for (auto const& [depth, n] : c.hierarchy_depths)
    if (depth.rfind("1 ", 0) != 0) deep += n;
  return deep;
}

double per_second(std::uint64_t n, double seconds) {
  return seconds > 0 ? static_cast<double>(n) / seconds : 0.0;
}

std::string rate_text(runner::StressStats const& s) {
  char buf[256];
  std::snprintf(buf,
                sizeof buf,
                "%.1f cases/s (%.1f cases/s with M > 64: 2- and 3-level hierarchies), %.0f steps/s",
                per_second(s.cases, s.elapsed),
                per_second(deep_cases(s.coverage), s.elapsed),
                per_second(s.steps, s.elapsed));
  return buf;
}

std::string times_text(runner::StepTimes const& t) {
  double const total = t.implementation + t.model + t.checks;
  if (total <= 0) return "not measured by this runner";
  auto share = [&](double x) { return 100.0 * x / total; };
  char buf[256];
  std::snprintf(buf,
                sizeof buf,
                "implementation %.1f s (%.0f%%), model %.1f s (%.0f%%), checks and diff %.1f s "
                "(%.0f%%)",
                t.implementation,
                share(t.implementation),
                t.model,
                share(t.model),
                t.checks,
                share(t.checks));
  return buf;
}

/// The JSON summary of a run (`--json-summary`, docs/cli.md "Machine-readable results").
std::string summary_json(StressCli const& cli,
                         runner::StressOptions const& o,
                         runner::StressResult const& result,
                         std::string const& started,
                         std::string const& device,
                         int exit_status,
                         std::string const& verdict) {
  auto const& s = result.stats;
  nlohmann::ordered_json j;
  j["format"]           = "heaplab-stress-summary";
  j["version"]          = 1;
  j["heaplab"]          = {{"version", runner::version()}, {"commit", runner::git_commit()}};
  j["started"]          = started;
  j["ended"]            = utc_now();
  j["device"]           = device;
  j["seed"]             = o.seed;
  j["options"]          = {{"runner", cli.runner},
                           {"profile", runner::to_string(o.profile)},
                           {"heap_mib", o.heap_mib},
                           {"max_blocks", o.max_blocks},
                           {"seconds", o.seconds},
                           {"cases", o.max_cases ? nlohmann::ordered_json(o.max_cases) : nullptr},
                           {"case", o.only_case ? nlohmann::ordered_json(*o.only_case) : nullptr},
                           {"shard", std::to_string(o.shard_index) + "/" + std::to_string(o.shard_count)},
                           {"jobs", o.workers},
                           {"max_failures", o.max_failures},
                           {"placement_seed", cli.placement_seed},
                           {"perturb", !cli.no_perturb},
                           {"out_dir", o.out_dir.string()}};
  j["result"]           = verdict;
  j["exit_status"]      = exit_status;
  j["stop_reason"]      = result.stop_reason;
  j["elapsed_s"]        = s.elapsed;
  j["cases"]            = s.cases;
  j["skipped"]          = s.skipped;
  j["steps"]            = s.steps;
  j["defrags"]          = s.defrags;
  j["out_of_memory"]    = s.out_of_memory;
  j["cases_per_s"]      = per_second(s.cases, s.elapsed);
  j["deep_cases_per_s"] = per_second(deep_cases(s.coverage), s.elapsed);
  j["cases_per_worker"] = s.cases_per_worker;
  j["steps_per_s"]      = per_second(s.steps, s.elapsed);
  j["time_by_part_s"]   = {{"implementation", s.times.implementation},
                           {"model", s.times.model},
                           {"checks", s.times.checks}};
  j["coverage"]         = coverage_json(s.coverage);
  auto& failures = j["failures"] = nlohmann::ordered_json::array();
  for (auto const& f : result.failures)
    failures.push_back({{"file",
                         f.path.empty() ? nlohmann::ordered_json(nullptr)
                                        : nlohmann::ordered_json(f.path.string())},
                        {"save_error", f.save_error},
                        {"case", f.file.origin.case_index.value_or(0)},
                        {"case_seed", f.file.seed},
                        {"step", f.failure.step},
                        {"kind", schedule::to_string(f.failure.kind)},
                        {"check", f.failure.check},
                        {"message", f.failure.message},
                        {"worker", f.worker}});
  return j.dump(2) + "\n";
}

/// Options that make no sense together or cannot be honoured here; "" when fine.
std::string option_problem(StressCli const& cli) {
  if (cli.dump && !cli.case_given) return "--dump needs --case K";
  if (cli.dump && !cli.seed_given) return "--dump needs the --seed of the run";
  if (cli.case_given && cli.cases && cli.only_case >= cli.cases)
    return "--case " + std::to_string(cli.only_case) + " is not below --cases " +
           std::to_string(cli.cases);
  if (!cli.dump) {
    if (auto const why = output_dir_problem(cli.out_dir); !why.empty())
      return "--out-dir '" + cli.out_dir + "': " + why;
  }
  if (!cli.json_summary.empty()) {
    if (auto const why = output_file_problem(cli.json_summary); !why.empty())
      return "--json-summary '" + cli.json_summary + "': " + why;
  }
  return {};
}

/// `--runner gpu` without --jobs: per visible GPU one worker per two hardware threads, 1 to 8.
/// A GPU runner's step spends most of its time on the host (snapshot translation, the model,
/// the checks), so several workers share one GPU; worker w uses GPU w % gpus.
unsigned default_gpu_workers() {
  unsigned const gpus    = static_cast<unsigned>(std::max(1, runner::visible_gpu_count()));
  unsigned const threads = std::max(1u, std::thread::hardware_concurrency());
  return gpus * std::clamp(threads / (2 * gpus), 1u, 8u);
}

/// The run's options from the command line (already checked by option_problem and the option
/// validators).
runner::StressOptions stress_options(StressCli const& cli,
                                     runner::Profile profile,
                                     std::pair<std::uint32_t, std::uint32_t> shard) {
  runner::StressOptions o;
  o.seconds      = cli.seconds >= 0 ? cli.seconds : cli.minutes * 60.0;
  o.seed         = cli.seed_given ? cli.seed
                                  : static_cast<std::uint64_t>(
                                std::chrono::system_clock::now().time_since_epoch().count()) %
                                1000000007ull;
  o.heap_mib     = cli.heap_mib;
  o.profile      = profile;
  o.max_cases    = cli.cases;
  o.max_failures = cli.max_failures;
  o.out_dir      = cli.out_dir;
  o.shard_index  = shard.first;
  o.shard_count  = shard.second;
  if (cli.case_given) o.only_case = cli.only_case;
  o.interrupt    = &g_interrupt;
  bool const gpu = cli.runner == "gpu";
  o.max_blocks   = cli.max_blocks ? cli.max_blocks : (gpu ? schedule::kMaxBlocks : 512u);
  o.workers      = cli.jobs ? cli.jobs : (gpu ? default_gpu_workers() : 1u);
  o.tick_seconds = 0.25;
  // Configs the runner supports: the GPU runner only runs its type universes (docs/gpu-runner.md).
  o.configs = [runner_name = cli.runner] { return runner::config_gen_for(runner_name); };
  return o;
}

/// `--dump`: case K's schedule on stdout, exactly as the run would generate it. No runner is
/// needed, but the runner's config generator is (the GPU runner draws from its universes).
int dump_case(StressCli const& cli, runner::StressOptions const& o) {
  if (!runner::runner_built(cli.runner)) {
    std::fprintf(stderr,
                 "heaplab stress: error: --dump --runner %s: %s, so its cases cannot be "
                 "regenerated here\n",
                 cli.runner.c_str(),
                 runner::unavailable_reason(cli.runner).c_str());
    return kExitUsage;
  }
  try {
    (void)runner::cases_of_shard(o, 1);  // checks the case against the shard
    auto const c             = runner::make_case(o, *o.only_case);
    schedule::Schedule sched = c.schedule;
    sched.description        = "heaplab stress --seed " + std::to_string(o.seed) + " --profile " +
                        runner::to_string(o.profile) + " --heap-mib " + std::to_string(o.heap_mib) +
                        " --runner " + cli.runner + ", case " + std::to_string(c.index);
    std::cout << schedule::dump(sched);
    return kExitPassed;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab stress: error: %s\n", e.what());
    return kExitUsage;
  }
}

/// The first lines of a run: what runs, where failure files go, how to repeat it.
void print_header(StressCli const& cli, runner::StressOptions const& o) {
  std::string const shard_text = o.shard_count > 1
                                     ? ", shard " + cli.shard + " (cases k with k % " +
                                           std::to_string(o.shard_count) +
                                           " == " + std::to_string(o.shard_index) + ")"
                                     : std::string();
  std::string const limit_text = o.only_case   ? ", case " + std::to_string(*o.only_case) + " only"
                                 : o.max_cases ? ", cases below " + std::to_string(o.max_cases)
                                               : std::string();
  std::printf(
      "heaplab stress: runner %s, profile %s, heap %u MiB (M <= %u blocks), seed %llu, budget "
      "%.1f s%s%s, %u worker%s; failure files in %s/\n",
      cli.runner.c_str(),
      runner::to_string(o.profile),
      o.heap_mib,
      o.max_blocks,
      static_cast<unsigned long long>(o.seed),
      o.seconds,
      limit_text.c_str(),
      shard_text.c_str(),
      o.workers,
      o.workers == 1 ? "" : "s",
      o.out_dir.string().c_str());
  if (!cli.seed_given)
    std::printf("heaplab stress: (no --seed given; repeat this run with --seed %llu)\n",
                static_cast<unsigned long long>(o.seed));
  std::fflush(stdout);
}

/// What the run prints while it runs: the progress line (in place on a terminal, else a plain
/// line every --progress-every seconds), each failure with its replay command, a hang. The
/// observer's callbacks come from the shards' threads; one mutex serializes the output.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(StressCli const& cli)
      : cli_(cli),
        tty_(isatty(fileno(stdout)) != 0),
        replay_extra_(cli.runner == "model" ? "" : " --runner " + cli.runner) {}

  runner::StressObserver observer() {
    runner::StressObserver o;
    o.on_tick    = [this](runner::StressStats const& s) { tick(s); };
    o.on_failure = [this](runner::SavedFailure const& f) { failure(f); };
    o.on_hang    = [this](runner::SavedFailure const&) { hang(); };
    return o;
  }
  /// Ends an open progress line, so that what follows starts on a line of its own.
  void end_line() {
    std::lock_guard<std::mutex> lock(mutex_);
    end_line_locked();
  }

 private:
  void end_line_locked() {
    if (line_open_) std::printf("\n");
    line_open_ = false;
  }
  void tick(runner::StressStats const& s) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cli_.quiet) return;
    if (tty_) {
      std::printf("\r%s   ", progress_text(s).c_str());
      line_open_ = true;
    } else if (s.elapsed - last_plain_ >= cli_.progress_every) {
      last_plain_ = s.elapsed;
      std::printf("stress: %s\n", progress_text(s).c_str());
    }
    std::fflush(stdout);
  }
  void failure(runner::SavedFailure const& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    end_line_locked();
    std::printf("FAILURE (worker %u) case %llu, seed %llu, at step %zu: %s, check %s: %s\n",
                f.worker,
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
                  program_path().c_str(),
                  f.path.c_str(),
                  replay_extra_.c_str());
    }
    std::fflush(stdout);
  }
  [[noreturn]] void hang() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::printf(
        "heaplab stress: a kernel hung (watchdog); it cannot be cancelled, so the run ends here "
        "(exit status %d)\n",
        kExitHang);
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(kExitHang);
  }

  StressCli const& cli_;
  bool const tty_;
  std::string const replay_extra_;
  std::mutex mutex_;
  bool line_open_    = false;  // a \r progress line is on screen
  double last_plain_ = 0;
};

/// The end of a run: counts, why it stopped, and what it covered.
/// "0: 12, 1: 11" (counts by index).
std::string indexed_counts(std::vector<std::uint64_t> const& counts) {
  std::string out;
  for (std::size_t i = 0; i < counts.size(); ++i)
    out += (i ? ", " : "") + std::to_string(i) + ": " + with_commas(counts[i]);
  return out;
}

/// `gpus` > 0 for the GPU runner: the cases are also summed per GPU (worker w runs on w % gpus).
void print_summary(runner::StressResult const& result, unsigned gpus) {
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
  auto const& c = s.coverage;
  std::printf("coverage: steps: %s\n", counts_text(c.step_kinds).c_str());
  std::printf("coverage: alloc divergence: %s\n", counts_text(c.divergence).c_str());
  std::printf("coverage: free selectors: %s\n", counts_text(c.free_patterns).c_str());
  std::printf("coverage: parallel_do actions: %s\n", counts_text(c.parallel_do_actions).c_str());
  std::printf("coverage: defrag variants: %s\n", counts_text(c.defrag_variants).c_str());
  std::printf("coverage: heap sizes: %s; hierarchy depths: %s; types: %s\n",
              counts_text(c.heap_sizes).c_str(),
              counts_text(c.hierarchy_depths).c_str(),
              counts_text(c.type_counts).c_str());
  std::printf("rate: %s\n", rate_text(s).c_str());
  std::printf("cases per worker: %s\n", indexed_counts(s.cases_per_worker).c_str());
  if (gpus > 0) {
    std::vector<std::uint64_t> per_gpu(gpus, 0);
    for (std::size_t w = 0; w < s.cases_per_worker.size(); ++w)
      per_gpu[w % gpus] += s.cases_per_worker[w];
    std::printf("cases per GPU: %s\n", indexed_counts(per_gpu).c_str());
  }
  std::printf("time by part (summed over the workers' steps): %s\n", times_text(s.times).c_str());
  if (s.cases > 0 && c.defrag_variants.empty())
    std::printf("heaplab stress: WARNING: this run exercised no defragmentation\n");
}

/// The exit status and its word: failures first, then an interruption, then "nothing ran".
std::pair<int, char const*> verdict_of(runner::StressResult const& result) {
  if (!result.failures.empty()) return {kExitFailed, "FAILED"};
  if (result.stop_reason == "interrupted") return {kExitInterrupted, "INTERRUPTED"};
  if (result.stats.cases == 0) return {kExitNotChecked, "NOTHING TESTED"};
  return {kExitPassed, "PASSED"};
}

/// The last line(s): the verdict, and the failure files for a failed run.
void print_verdict(runner::StressResult const& result, int status, std::uint64_t run_seed) {
  auto const seed = static_cast<unsigned long long>(run_seed);
  auto const& s   = result.stats;
  if (status == kExitFailed) {
    std::printf("heaplab stress: FAILED, %zu failure%s (seed %llu):\n",
                result.failures.size(),
                result.failures.size() == 1 ? "" : "s",
                seed);
    for (auto const& f : result.failures)
      std::printf("  %s  step %zu %s %s\n",
                  f.path.empty() ? "(not saved)" : f.path.c_str(),
                  f.failure.step,
                  schedule::to_string(f.failure.kind),
                  f.failure.check.c_str());
    if (result.stop_reason == "interrupted")
      std::printf("heaplab stress: (interrupted before the budget ran out)\n");
  } else if (status == kExitInterrupted) {
    std::printf("heaplab stress: INTERRUPTED after %s cases, no failure so far (seed %llu)\n",
                with_commas(s.cases).c_str(),
                seed);
  } else if (status == kExitNotChecked) {
    std::printf(
        "heaplab stress: NOTHING TESTED: no case ran (%s skipped) (seed %llu); exit status %d\n",
        with_commas(s.skipped).c_str(),
        seed,
        kExitNotChecked);
  } else {
    std::printf("heaplab stress: PASSED, no failures (seed %llu)\n", seed);
  }
}

/// SIGINT handled by on_sigint for the lifetime of this object.
class InterruptScope {
 public:
  InterruptScope() {
    struct sigaction action {};
    action.sa_handler = on_sigint;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_);
  }
  ~InterruptScope() { sigaction(SIGINT, &previous_, nullptr); }
  InterruptScope(InterruptScope const&)            = delete;
  InterruptScope& operator=(InterruptScope const&) = delete;

 private:
  struct sigaction previous_ {};
};

/// `--runner rw-*`: the random-walk pool's stress loop (rw_commands.hpp).
int stress_rw(StressCli const& cli) {
  RwStressArgs a;
  a.runner         = cli.runner;
  a.seconds        = cli.seconds >= 0 ? cli.seconds : cli.minutes * 60.0;
  a.seed           = cli.seed;
  a.seed_given     = cli.seed_given;
  a.cases          = cli.cases;
  a.out_dir        = cli.out_dir;
  a.max_failures   = cli.max_failures;
  a.progress_every = cli.progress_every;
  a.quiet          = cli.quiet;
  a.os_threads     = cli.jobs;
  a.dump           = cli.dump;
  if (cli.case_given) a.only_case = cli.only_case;
  return rw_stress(a);
}

int stress(StressCli const& cli) {
  if (runner::is_rw_runner(cli.runner)) {
    if (auto const why = option_problem(cli); !why.empty()) {
      std::fprintf(stderr, "heaplab stress: error: %s\n", why.c_str());
      return kExitUsage;
    }
    return stress_rw(cli);
  }
  auto const profile = runner::profile_from_string(!cli.profile.empty()  ? cli.profile
                                                   : cli.runner == "gpu" ? "mixed"
                                                                         : "small");
  auto const shard   = parse_shard(cli.shard);
  if (!profile || !shard) return kExitUsage;  // the option checks let neither through
  if (auto const why = option_problem(cli); !why.empty()) {
    std::fprintf(stderr, "heaplab stress: error: %s\n", why.c_str());
    return kExitUsage;
  }
  runner::StressOptions const o = stress_options(cli, *profile, *shard);
  if (cli.dump) return dump_case(cli, o);

  runner::RunnerOptions ro;
  ro.placement_seed = cli.placement_seed;
  ro.perturb        = !cli.no_perturb;
  if (cli.watchdog_ms > 0) ro.watchdog_budget = std::chrono::milliseconds(cli.watchdog_ms);
  unsigned const gpus   = static_cast<unsigned>(std::max(1, runner::visible_gpu_count()));
  ro.runners_per_device = (o.workers + gpus - 1) / gpus;
  auto factory          = [&](unsigned worker) {
    runner::RunnerOptions per = ro;
    per.device                = static_cast<int>(worker % gpus);
    return runner::make_runner(cli.runner, per);
  };
  // Fail early and clearly when the runner cannot run here.
  std::string device;
  try {
    device = factory(0)->device_name();
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab stress: error: --runner %s: %s\n", cli.runner.c_str(), e.what());
    return kExitUsage;
  }
  std::string const started = utc_now();
  print_header(cli, o);

  ProgressPrinter printer(cli);
  runner::StressResult result;
  {
    InterruptScope const interrupts;
    try {
      result = runner::run_stress(o, factory, printer.observer());
    } catch (std::exception const& e) {
      printer.end_line();
      std::fprintf(stderr, "heaplab stress: %s\n", e.what());
      return kExitUsage;
    }
  }
  printer.end_line();
  print_summary(result, cli.runner == "gpu" ? gpus : 0);
  auto const [status, verdict] = verdict_of(result);
  if (!cli.json_summary.empty()) {
    try {
      write_file_atomically(cli.json_summary,
                            summary_json(cli, o, result, started, device, status, verdict));
      std::printf("heaplab stress: JSON summary in %s\n", cli.json_summary.c_str());
    } catch (std::exception const& e) {
      std::fprintf(stderr, "heaplab stress: the JSON summary was not written: %s\n", e.what());
    }
  }
  print_verdict(result, status, o.seed);
  return status;
}

/// The time budget: --minutes or --seconds.
void add_budget_options(CLI::App* cmd, std::shared_ptr<StressCli> const& cli) {
  cmd->add_option("--minutes", cli->minutes, "time budget in minutes (fractions allowed)")
      ->check(finite_number(0, 1e6, true));
  cmd->add_option("--seconds", cli->seconds, "time budget in seconds, instead of --minutes")
      ->check(finite_number(0, 1e8, true))
      ->default_str("")
      ->excludes("--minutes");
}

/// What the cases are and what runs them: the run's seed, the heap size, the profile, the
/// runner.
void add_campaign_options(CLI::App* cmd, std::shared_ptr<StressCli> const& cli) {
  cmd->add_option("--seed", cli->seed, "seed of the whole run (default: from the clock, printed)")
      ->check(unsigned_integer(0, std::numeric_limits<std::uint64_t>::max()))
      ->default_str("clock")
      ->each([cli](std::string const&) { cli->seed_given = true; });
  cmd->add_option("--heap-mib",
                  cli->heap_mib,
                  "heap size in MiB; M = heap / (64 x smallest type size), capped by --max-blocks")
      ->check(unsigned_integer(1, 1u << 20));
  cmd->add_option("--profile",
                  cli->profile,
                  "small: M in [2, 32], the property tests' schedules; mixed: 1-, 2- and 3-level "
                  "bitmap hierarchies (M up to 8192), a defrag in every case; large: M from "
                  "--heap-mib, waves scaled to the heap; near-oom: small heaps driven past "
                  "exhaustion")
      ->check(CLI::IsMember({"small", "mixed", "large", "near-oom"}))
      ->default_str("small; gpu: mixed");
  cmd->add_option("--runner",
                  cli->runner,
                  "model (the reference model), differential-model (the differential path with a "
                  "second model in place of the GPU), gpu (the GPU allocator vs the model); the "
                  "random-walk page pool: rw-model (a sequential pool), rw-cpu (the pool on CPU "
                  "threads), rw-gpu (the GPU pool; docs/rw.md)")
      ->check(
          CLI::IsMember({"model", "differential-model", "gpu", "rw-model", "rw-cpu", "rw-gpu"}));
}

/// Which cases run: --cases, --case (and --dump), --shard.
void add_case_selection_options(CLI::App* cmd, std::shared_ptr<StressCli> const& cli) {
  cmd->add_option("--cases",
                  cli->cases,
                  "run only the cases k < CASES (of this shard); omit for the time budget alone")
      ->check(unsigned_integer(1, std::uint64_t{1} << 62))
      ->default_str("");
  cmd->add_option("--case", cli->only_case, "run case K alone (with --dump: print its schedule)")
      ->check(unsigned_integer(0, std::uint64_t{1} << 62))
      ->default_str("")
      ->each([cli](std::string const&) { cli->case_given = true; });
  cmd->add_flag("--dump",
                cli->dump,
                "with --seed and --case: print the case's schedule (JSON) on stdout, run nothing");
  cmd->add_option("--shard",
                  cli->shard,
                  "K/N: run only the cases k with k % N == K (N processes split one campaign)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return parse_shard(text)
                       ? std::string()
                       : "expected K/N with 0 <= K < N <= 1048576, got '" + text + "'";
          },
          "K/N"));
}

/// Where the results go: failure files, the JSON summary.
void add_output_options(CLI::App* cmd, std::shared_ptr<StressCli> const& cli) {
  cmd->add_option("--out-dir", cli->out_dir, "directory for failure files (checked at start)");
  cmd->add_option("--json-summary",
                  cli->json_summary,
                  "write a machine-readable summary here at the end (docs/cli.md)");
}

/// How the run goes: workers, limits, progress, and the runners' own knobs.
void add_tuning_options(CLI::App* cmd, std::shared_ptr<StressCli> const& cli) {
  cmd->add_option("--jobs",
                  cli->jobs,
                  "workers in this process, each with its own runner (default 1; gpu: per visible "
                  "GPU one per two hardware threads, 1 to 8; worker w uses GPU w % GPUs)")
      ->check(unsigned_integer(1, 256))
      ->default_str("");
  cmd->add_option("--max-failures", cli->max_failures, "stop after this many failures")
      ->check(unsigned_integer(1, 1000000));
  cmd->add_option(
         "--max-blocks", cli->max_blocks, "cap on M (default 512 for CPU runners, 65536 for gpu)")
      ->check(unsigned_integer(1, 65536))
      ->default_str("");
  cmd->add_option("--progress-every",
                  cli->progress_every,
                  "seconds between progress lines when stdout is not a terminal")
      ->check(finite_number(0, 1e6));
  cmd->add_option("--placement-seed",
                  cli->placement_seed,
                  "differential-model: seed of its random legal placements")
      ->check(unsigned_integer(0, std::numeric_limits<std::uint64_t>::max()));
  cmd->add_option("--watchdog-ms",
                  cli->watchdog_ms,
                  "gpu: budget of one step's kernels in ms (default HEAPLAB_WATCHDOG_MS or 5000)")
      ->check(unsigned_integer(1, 86400000))
      ->default_str("");
  cmd->add_flag("--quiet,-q", cli->quiet, "no progress lines (failures and the summary only)");
  cmd->add_flag("--no-perturb",
                cli->no_perturb,
                "gpu: no warp-order perturbation (seeded warp delays in every step's kernels, "
                "docs/gpu-runner.md)");
}

}  // namespace

void add_stress(CLI::App& app) {
  auto cli  = std::make_shared<StressCli>();
  auto* cmd = app.add_subcommand(
      "stress", "random schedules against the model or the GPU, a failure file per failure");
  cmd->option_defaults()->always_capture_default();
  cmd->footer(
      "Generates random schedules (alloc waves, frees, parallel_do, defrag, checks) shaped by\n"
      "--profile, runs each through --runner with the whole invariant catalog after every step\n"
      "(and, for differential runners, the model comparison), and writes every failure to a\n"
      "failure file in --out-dir, printing its path and the exact replay command.\n"
      "Seeds: --seed fixes the whole run: case k has seed mix(seed, k) and RapidCheck size\n"
      "1 + k % 100, both recorded in its failure file. Configs: any type list for the CPU\n"
      "runners; for --runner gpu, the GPU runner's type universes (wator, sizes, tree).\n"
      "Shards: --shard K/N runs the cases k with k % N == K, so N processes on N machines split\n"
      "one campaign (tools/slurm-stress.sh); with --cases C their union is exactly the unsharded\n"
      "run's cases 0..C-1. Inside a process, --jobs workers deal the shard's cases round-robin\n"
      "(--runner gpu: one worker per visible GPU); the cases never depend on N or --jobs.\n"
      "Progress: one line updated in place on a terminal, else a plain line every\n"
      "--progress-every seconds; at the end a summary with coverage (steps per kind, divergence\n"
      "patterns, parallel_do actions, defrag variants, heap sizes and hierarchy depths).\n"
      "Ctrl-C: the cases in flight finish, the summary is printed, exit status 130.\n"
      "Exit status: 0 no failure, 1 failures (files written), 2 bad options or the runner cannot\n"
      "run here, 3 a kernel hung (its failure file is written, then the process ends at once),\n"
      "4 nothing tested (no case ran), 130 interrupted.\n"
      "Examples:\n"
      "  heaplab stress --minutes 5 --seed 1\n"
      "  heaplab stress --runner gpu --profile large --minutes 10 --json-summary run.json\n"
      "  heaplab stress --seed 7 --cases 1000 --shard 2/8       # one of 8 shards\n"
      "  heaplab stress --seed 7 --case 123 --dump > case.json  # case 123's schedule\n"
      "  heaplab stress --seed 7 --case 123                     # run case 123 alone");
  // The options, group by group, in the order --help lists them.
  add_budget_options(cmd, cli);
  add_campaign_options(cmd, cli);
  add_case_selection_options(cmd, cli);
  add_output_options(cmd, cli);
  add_tuning_options(cmd, cli);
  cmd->callback([cli] { std::exit(stress(*cli)); });
}

}  // namespace heaplab::cli
