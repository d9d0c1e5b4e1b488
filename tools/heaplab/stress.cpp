// `heaplab stress`: time-budgeted random schedules of any family through one of its runners, a
// failure file for every failure (docs/cli.md, docs/workflow.md, docs/replay.md). The loop lives
// in runner/stress.hpp; this file is the command line: options, the progress line, failure
// messages, signals, the summary with coverage, the JSON summary, exit status. It looks the
// runner and its family up once (runner/registry.hpp) and never branches on a family.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
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
#include "heaplab/cuda/detail/budget_wait.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/runner/stress.hpp"
#include "options.hpp"

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
  std::string profile;  // default: the runner's, else its family's first
  std::string runner           = "model";
  std::uint64_t cases          = 0;
  std::string out_dir          = "failures";
  unsigned jobs                = 0;  // 0: 1, or one per visible GPU for a GPU runner
  unsigned threads             = 0;  // OS threads per wave of a CPU-threads runner
  std::size_t max_failures     = 10;
  std::uint32_t max_blocks     = 0;  // 0: the runner's default, else the family's
  double progress_every        = 10;
  std::uint64_t placement_seed = 1;
  int watchdog_ms              = 0;
  double stall_seconds         = -1;  // -1: the default (stall_limit)
  bool quiet                   = false;
  bool no_perturb              = false;
};

/// Set by SIGINT, SIGTERM or SIGHUP; the stress loop finishes the cases in flight and stops, and
/// the summary is written. A second signal ends the process at once.
std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free, "used from a signal handler");

extern "C" void on_stop_signal(int) {
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

/// "alloc 120, free 80, ..." in the order of the map's keys.
std::string counts_text(std::map<std::string, std::uint64_t> const& counts) {
  if (counts.empty()) return "none";
  std::string out;
  for (auto const& [key, n] : counts)
    out += (out.empty() ? "" : ", ") + key + " " + std::to_string(n);
  return out;
}

std::string with_commas(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

/// What one run is: the runner, its family and the options, looked up and checked once.
struct Campaign {
  runner::RunnerInfo const* info = nullptr;
  runner::Family const* family   = nullptr;
  runner::StressOptions options;
};

std::uint64_t count_of(runner::StressStats const& s, std::string const& key) {
  auto const it = s.counts.find(key);
  return it == s.counts.end() ? 0 : it->second;
}

std::string progress_text(runner::Family const& family, runner::StressStats const& s) {
  char buf[256];
  std::snprintf(buf,
                sizeof buf,
                "elapsed %6.1f s | cases %s | steps %s",
                s.elapsed,
                with_commas(s.cases).c_str(),
                with_commas(s.steps).c_str());
  std::string out = buf;
  if (s.capacity > 0) {  // a family whose runners report a heap (StepReport::capacity)
    std::snprintf(buf,
                  sizeof buf,
                  " | live %s | heap fill %5.1f%%",
                  with_commas(s.live).c_str(),
                  100.0 * static_cast<double>(s.in_use) / static_cast<double>(s.capacity));
    out += buf;
  }
  for (auto const& key : family.progress_counts())
    out += " | " + key + " " + with_commas(count_of(s, key));
  return out + " | failures " + std::to_string(s.failures);
}

double per_second(std::uint64_t n, double seconds) {
  return seconds > 0 ? static_cast<double>(n) / seconds : 0.0;
}

std::string times_text(runner::StepTimes const& t) {
  double const total = t.total();
  if (total <= 0) return "not measured by this runner";
  auto part = [&](char const* name, double x) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s %.1f s (%.0f%%)", name, x, 100.0 * x / total);
    return std::string(buf);
  };
  std::string out = part("implementation", t.implementation);
  if (t.readback > 0) out += ", " + part("read-back", t.readback);
  return out + ", " + part("model", t.model) + ", " + part("checks and diff", t.checks);
}

/// The process's CPU time (user, system) in seconds, from getrusage.
struct CpuTime {
  double user = 0, system = 0;
  static CpuTime now() {
    rusage u{};
    if (getrusage(RUSAGE_SELF, &u) != 0) return {};
    auto seconds = [](timeval const& v) { return v.tv_sec + v.tv_usec / 1e6; };
    return {seconds(u.ru_utime), seconds(u.ru_stime)};
  }
  CpuTime operator-(CpuTime const& o) const { return {user - o.user, system - o.system}; }
};

/// "CPU: 12.3 of 16 hardware threads busy (user 80%, system 20%); steps 11.0 of 12 workers'
/// time": where a run's wall time went beyond the steps (case generation, heap set-up, idling).
std::string cpu_text(CpuTime const& cpu, runner::StressStats const& s, unsigned workers) {
  double const busy = cpu.user + cpu.system;
  if (s.elapsed <= 0 || busy <= 0) return "not measured";
  char buf[256];
  std::snprintf(buf,
                sizeof buf,
                "%.1f of %u hardware threads busy (user %.0f%%, system %.0f%%); steps took %.1f "
                "of the %u workers' %.1f s each",
                busy / s.elapsed,
                std::max(1u, std::thread::hardware_concurrency()),
                100.0 * cpu.user / busy,
                100.0 * cpu.system / busy,
                s.times.total() / s.elapsed,
                workers,
                s.elapsed);
  return buf;
}

nlohmann::ordered_json options_json(StressCli const& cli, runner::StressOptions const& o) {
  return {{"runner", cli.runner},
          {"profile", o.request.profile},
          {"heap_mib", o.request.heap_mib},
          {"max_blocks", o.request.max_size},
          {"seconds", o.seconds},
          {"cases", o.max_cases ? nlohmann::ordered_json(o.max_cases) : nullptr},
          {"case", o.only_case ? nlohmann::ordered_json(*o.only_case) : nullptr},
          {"shard", std::to_string(o.shard_index) + "/" + std::to_string(o.shard_count)},
          {"jobs", o.workers},
          {"threads", cli.threads},
          {"max_failures", o.max_failures},
          {"placement_seed", cli.placement_seed},
          {"perturb", !cli.no_perturb},
          {"out_dir", o.out_dir.string()}};
}

nlohmann::ordered_json failures_json(runner::StressResult const& result) {
  auto failures = nlohmann::ordered_json::array();
  for (auto const& f : result.failures)
    failures.push_back({{"file",
                         f.path.empty() ? nlohmann::ordered_json(nullptr)
                                        : nlohmann::ordered_json(f.path.string())},
                        {"save_error", f.save_error},
                        {"case", f.file.origin.case_index.value_or(0)},
                        {"case_seed", f.file.seed},
                        {"step", f.failure.step},
                        {"kind", runner::to_string(f.failure.kind)},
                        {"check", f.failure.check},
                        {"message", f.failure.message},
                        {"worker", f.worker}});
  return failures;
}

/// The JSON summary of a run (`--json-summary`, docs/cli.md "Machine-readable results").
std::string summary_json(StressCli const& cli,
                         Campaign const& c,
                         runner::StressResult const& result,
                         std::string const& started,
                         std::string const& device,
                         CpuTime const& cpu,
                         int exit_status,
                         std::string const& verdict) {
  auto const& s            = result.stats;
  auto const& o            = c.options;
  nlohmann::ordered_json j = summary_header("heaplab-stress-summary", 2, started);
  j["device"]              = device;
  j["family"]              = c.family->name();
  j["seed"]                = o.seed;
  j["options"]             = options_json(cli, o);
  j["result"]              = verdict;
  j["exit_status"]         = exit_status;
  j["stop_reason"]         = result.stop_reason;
  j["elapsed_s"]           = s.elapsed;
  j["cases"]               = s.cases;
  j["skipped"]             = s.skipped;
  j["steps"]               = s.steps;
  j["counts"]              = s.counts;
  j["cases_per_s"]         = per_second(s.cases, s.elapsed);
  j["cases_per_worker"]    = s.cases_per_worker;
  j["steps_per_s"]         = per_second(s.steps, s.elapsed);
  j["time_by_part_s"]      = {{"implementation", s.times.implementation},
                              {"readback", s.times.readback},
                              {"model", s.times.model},
                              {"checks", s.times.checks}};
  j["cpu_s"]               = {{"user", cpu.user},
                              {"system", cpu.system},
                              {"hardware_threads", std::thread::hardware_concurrency()}};
  j["coverage"]            = s.coverage.counts;
  j["notes"]               = c.family->stress_notes(s);
  j["failures"]            = failures_json(result);
  return j.dump(2) + "\n";
}

/// Options that make no sense together or cannot be honoured here; "" when fine.
std::string option_problem(StressCli const& cli) {
  if (cli.dump && !cli.case_given) return "--dump needs --case K";
  if (cli.dump && !cli.seed_given) return "--dump needs the --seed of the run";
  if (cli.case_given && cli.cases && cli.only_case >= cli.cases)
    return "--case " + std::to_string(cli.only_case) + " is not below --cases " +
           std::to_string(cli.cases);
  if (auto const shard = parse_shard(cli.shard);
      cli.case_given && shard && cli.only_case % shard->second != shard->first)
    return "--case " + std::to_string(cli.only_case) + " belongs to shard " +
           std::to_string(cli.only_case % shard->second) + "/" + std::to_string(shard->second) +
           ", not to --shard " + cli.shard + " (case k is in shard k % N)";
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

/// A GPU runner without --jobs: per visible GPU one worker per hardware thread, 1 to 16. A GPU
/// runner's step spends most of its time on the host (snapshot translation, the model, the
/// checks), so several workers share one GPU; worker w uses GPU w % gpus. On a 16-thread H200
/// box 16 workers ran 83.7 cases/s, 8 workers 69.4 (docs/results.md, 2026-12-02).
unsigned default_gpu_workers() {
  unsigned const gpus    = static_cast<unsigned>(std::max(1, runner::visible_gpu_count()));
  unsigned const threads = std::max(1u, std::thread::hardware_concurrency());
  return gpus * std::clamp(threads / gpus, 1u, 16u);
}

/// The profile to use: --profile, else the runner's default, else the family's first; "" (after
/// saying why) when the family has no such profile.
std::string profile_for(StressCli const& cli, Campaign const& c) {
  auto const profiles    = c.family->profiles();
  std::string const name = !cli.profile.empty()               ? cli.profile
                           : !c.info->default_profile.empty() ? c.info->default_profile
                                                              : profiles.front().name;
  std::string known;
  for (auto const& p : profiles) {
    if (p.name == name) return name;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  std::fprintf(stderr,
               "heaplab stress: error: --profile %s: the %s family has the profiles %s\n",
               name.c_str(),
               c.family->name().c_str(),
               known.c_str());
  return {};
}

/// --stall-seconds, or its default: for a GPU runner 12 watchdog budgets (60 s by default; 30
/// times that under a CUDA tool, whose kernels run 10-100x slower), so that a step the watchdog
/// would have reported is never taken for a stall; off for the CPU runners, whose steps never
/// wait for a device (an explorer's case may search for minutes without a step).
double stall_limit(StressCli const& cli, Campaign const& c) {
  if (cli.stall_seconds >= 0) return cli.stall_seconds;
  if (!c.info->uses_gpu) return 0;
  double const watchdog =
      cli.watchdog_ms > 0
          ? cli.watchdog_ms / 1000.0
          : std::chrono::duration<double>(cudart::default_watchdog_budget()).count();
  return 12 * watchdog * (cudart::under_cuda_tool() ? 30 : 1);
}

/// The run's options from the command line (already checked by option_problem and the option
/// validators).
runner::StressOptions stress_options(StressCli const& cli,
                                     Campaign const& c,
                                     std::string profile,
                                     std::pair<std::uint32_t, std::uint32_t> shard) {
  runner::StressOptions o;
  o.seconds          = cli.seconds >= 0 ? cli.seconds : cli.minutes * 60.0;
  o.seed             = cli.seed_given ? cli.seed
                                      : static_cast<std::uint64_t>(
                                std::chrono::system_clock::now().time_since_epoch().count()) %
                                1000000007ull;
  o.request.profile  = std::move(profile);
  o.request.runner   = cli.runner;
  o.request.heap_mib = cli.heap_mib;
  o.request.max_size = cli.max_blocks ? cli.max_blocks : c.info->default_max_size;
  o.max_cases        = cli.cases;
  o.max_failures     = cli.max_failures;
  o.out_dir          = cli.out_dir;
  o.shard_index      = shard.first;
  o.shard_count      = shard.second;
  if (cli.case_given) o.only_case = cli.only_case;
  o.interrupt     = &g_interrupt;
  o.workers       = cli.jobs                  ? cli.jobs
                    : c.info->one_per_process ? 1u
                    : c.info->uses_gpu        ? default_gpu_workers()
                                              : 1u;
  o.tick_seconds  = 0.25;
  o.stall_seconds = stall_limit(cli, c);
  return o;
}

/// `--dump`: case K's schedule on stdout, exactly as the run would generate it. No runner is
/// made.
int dump_case(Campaign const& c) {
  auto const& o = c.options;
  try {
    (void)runner::cases_of_shard(o, 1);  // checks the case against the shard
    auto const k                = *o.only_case;
    runner::StressCase const sc = runner::make_case(*c.family, o, k);
    auto const described = c.family->with_description(sc.schedule, runner::case_description(o, k));
    std::cout << c.family->to_json(described).dump(2) << "\n";
    return kExitPassed;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab stress: error: %s\n", e.what());
    return kExitUsage;
  }
}

/// The first lines of a run: what runs, where failure files go, how to repeat it.
void print_header(StressCli const& cli, Campaign const& c) {
  auto const& o                = c.options;
  std::string const shard_text = o.shard_count > 1
                                     ? ", shard " + cli.shard + " (cases k with k % " +
                                           std::to_string(o.shard_count) +
                                           " == " + std::to_string(o.shard_index) + ")"
                                     : std::string();
  std::string const limit_text = o.only_case   ? ", case " + std::to_string(*o.only_case) + " only"
                                 : o.max_cases ? ", cases below " + std::to_string(o.max_cases)
                                               : std::string();
  std::string const request    = c.family->request_summary(o.request);
  std::printf(
      "heaplab stress: runner %s (family %s), profile %s%s, seed %llu, budget %.1f s%s%s, %u "
      "worker%s; failure files in %s/\n",
      cli.runner.c_str(),
      c.family->name().c_str(),
      o.request.profile.c_str(),
      request.empty() ? "" : (", " + request).c_str(),
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
/// observer's callbacks come from the workers' threads; one mutex serializes the output.
class ProgressPrinter {
 public:
  ProgressPrinter(StressCli const& cli, runner::Family const& family)
      : cli_(cli),
        family_(family),
        tty_(isatty(fileno(stdout)) != 0),
        replay_extra_(cli.runner == family.reference_runner() ? "" : " --runner " + cli.runner) {}

  runner::StressObserver observer() {
    runner::StressObserver o;
    o.on_tick    = [this](runner::StressStats const& s) { tick(s); };
    o.on_failure = [this](runner::SavedFailure const& f) { failure(f); };
    o.on_hang    = [this](runner::SavedFailure const& f) { hang(f.failure.check); };
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
      std::printf("\r%s   ", progress_text(family_, s).c_str());
      line_open_ = true;
    } else if (s.elapsed - last_plain_ >= cli_.progress_every) {
      last_plain_ = s.elapsed;
      std::printf("stress: %s\n", progress_text(family_, s).c_str());
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
                runner::to_string(f.failure.kind),
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
  [[noreturn]] void hang(std::string const& check) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::printf(
        "heaplab stress: %s; it cannot be cancelled, so the run ends here (exit status %d)\n",
        check == runner::checks::kStall
            ? "a worker stalled (--stall-seconds): a call of its runner never returned"
            : "a kernel hung (watchdog)",
        kExitHang);
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(kExitHang);
  }

  StressCli const& cli_;
  runner::Family const& family_;
  bool const tty_;
  std::string const replay_extra_;
  std::mutex mutex_;
  bool line_open_    = false;  // a \r progress line is on screen
  double last_plain_ = 0;
};

/// "0: 12, 1: 11" (counts by index).
std::string indexed_counts(std::vector<std::uint64_t> const& counts) {
  std::string out;
  for (std::size_t i = 0; i < counts.size(); ++i)
    out += (i ? ", " : "") + std::to_string(i) + ": " + with_commas(counts[i]);
  return out;
}

/// The end of a run: counts, why it stopped, what it covered, where the time went. `gpus` > 0
/// for a GPU runner: the cases are also summed per GPU (worker w runs on w % gpus).
void print_summary(runner::Family const& family,
                   runner::StressResult const& result,
                   unsigned gpus,
                   CpuTime const& cpu,
                   unsigned workers) {
  auto const& s = result.stats;
  std::printf("stress: %s\n", progress_text(family, s).c_str());
  std::printf(
      "heaplab stress: %s cases (%s skipped: not supported by the runner), %s steps in %.1f s; "
      "stopped: %s\n",
      with_commas(s.cases).c_str(),
      with_commas(s.skipped).c_str(),
      with_commas(s.steps).c_str(),
      s.elapsed,
      result.stop_reason.c_str());
  if (s.skipped > 0) std::printf("heaplab stress: skipped because: %s\n", s.skip_reason.c_str());
  for (auto const& note : family.stress_notes(s)) std::printf("heaplab stress: %s\n", note.c_str());
  for (auto const& category : family.coverage_categories()) {
    auto const it = s.coverage.counts.find(category.key);
    std::printf("coverage: %s: %s\n",
                category.label.c_str(),
                counts_text(it == s.coverage.counts.end() ? std::map<std::string, std::uint64_t>{}
                                                          : it->second)
                    .c_str());
  }
  std::printf("rate: %.1f cases/s, %.0f steps/s\n",
              per_second(s.cases, s.elapsed),
              per_second(s.steps, s.elapsed));
  std::printf("cases per worker: %s\n", indexed_counts(s.cases_per_worker).c_str());
  if (gpus > 0) {
    std::vector<std::uint64_t> per_gpu(gpus, 0);
    for (std::size_t w = 0; w < s.cases_per_worker.size(); ++w)
      per_gpu[w % gpus] += s.cases_per_worker[w];
    std::printf("cases per GPU: %s\n", indexed_counts(per_gpu).c_str());
  }
  std::printf("time by part (summed over the workers' steps): %s\n", times_text(s.times).c_str());
  std::printf("CPU: %s\n", cpu_text(cpu, s, workers).c_str());
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
                  runner::to_string(f.failure.kind),
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

/// SIGINT, SIGTERM and SIGHUP (what Ctrl-C, `timeout`, Slurm's time limit, `scancel` and a
/// dropped ssh session send) handled by on_stop_signal for the lifetime of this object.
class InterruptScope {
 public:
  InterruptScope() {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i)
      sigaction(kSignals[i], &action, &previous_[i]);
  }
  ~InterruptScope() {
    for (std::size_t i = 0; i < kSignals.size(); ++i)
      sigaction(kSignals[i], &previous_[i], nullptr);
  }
  InterruptScope(InterruptScope const&)            = delete;
  InterruptScope& operator=(InterruptScope const&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> previous_{};
};

/// The runner's entry and its family, or an error line (an unknown runner, with the closest).
std::optional<Campaign> find_campaign(StressCli const& cli) {
  Campaign c;
  c.info = runner::Registry::instance().runner(cli.runner);
  if (c.info) c.family = runner::Registry::instance().family(c.info->family);
  if (c.info && c.family) return c;
  try {
    (void)runner::family_of_runner(cli.runner);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab stress: error: --runner %s: %s\n", cli.runner.c_str(), e.what());
  }
  return std::nullopt;
}

/// The runner factory of the run's workers (worker w on GPU w % GPUs).
runner::RunnerFactory factory_for(StressCli const& cli, runner::StressOptions const& o) {
  runner::RunnerOptions ro;
  ro.seed    = cli.placement_seed;
  ro.perturb = !cli.no_perturb;
  ro.threads = cli.threads;
  if (cli.watchdog_ms > 0) ro.watchdog_ms = static_cast<unsigned>(cli.watchdog_ms);
  unsigned const gpus   = static_cast<unsigned>(std::max(1, runner::visible_gpu_count()));
  ro.runners_per_device = (o.workers + gpus - 1) / gpus;
  return [ro, gpus, name = cli.runner](unsigned worker) {
    runner::RunnerOptions per = ro;
    per.device                = static_cast<int>(worker % gpus);
    return runner::make_runner(name, per);
  };
}

/// Runs the loop with the signal handlers in place; nullopt (after saying why) on bad options.
std::optional<runner::StressResult> run_campaign(Campaign const& c,
                                                 runner::RunnerFactory const& factory,
                                                 ProgressPrinter& printer) {
  InterruptScope const interrupts;
  try {
    return runner::run_stress(*c.family, c.options, factory, printer.observer());
  } catch (std::exception const& e) {
    printer.end_line();
    std::fprintf(stderr, "heaplab stress: %s\n", e.what());
    return std::nullopt;
  }
}

/// Writes --json-summary; false (after saying why) when it cannot.
bool write_summary(StressCli const& cli,
                   Campaign const& c,
                   runner::StressResult const& result,
                   std::string const& started,
                   std::string const& device,
                   CpuTime const& cpu,
                   int status,
                   char const* verdict) {
  try {
    write_file_atomically(cli.json_summary,
                          summary_json(cli, c, result, started, device, cpu, status, verdict));
    std::printf("heaplab stress: JSON summary in %s\n", cli.json_summary.c_str());
    return true;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab stress: the JSON summary was not written: %s\n", e.what());
    return false;
  }
}

int stress(StressCli const& cli) {
  auto campaign = find_campaign(cli);
  if (!campaign) return kExitUsage;
  std::string profile = profile_for(cli, *campaign);
  auto const shard    = parse_shard(cli.shard);
  if (profile.empty() || !shard) return kExitUsage;  // the option checks let no bad shard through
  if (auto const why = option_problem(cli); !why.empty()) {
    std::fprintf(stderr, "heaplab stress: error: %s\n", why.c_str());
    return kExitUsage;
  }
  if (campaign->info->one_per_process && cli.jobs > 1) {
    std::fprintf(stderr,
                 "heaplab stress: error: --jobs %u: %s runs one worker per process (its "
                 "allocator's state is the process's); run several processes with --shard K/N\n",
                 cli.jobs,
                 cli.runner.c_str());
    return kExitUsage;
  }
  campaign->options = stress_options(cli, *campaign, std::move(profile), *shard);
  if (cli.dump) return dump_case(*campaign);

  runner::RunnerFactory const factory = factory_for(cli, campaign->options);
  // Fail early and clearly when the runner cannot run here.
  std::string device;
  try {
    device = factory(0)->device_name();
  } catch (std::exception const& e) {
    // No usable GPU for a GPU runner: nothing can be tested here (4, as every heaplab program
    // without a GPU); any other reason the runner cannot run is a usage error.
    if (campaign->info->uses_gpu && runner::visible_gpu_count() == 0) {
      std::fprintf(stderr,
                   "heaplab stress: SKIPPED: nothing was tested: --runner %s: %s\n",
                   cli.runner.c_str(),
                   e.what());
      return kExitNotChecked;
    }
    std::fprintf(stderr, "heaplab stress: error: --runner %s: %s\n", cli.runner.c_str(), e.what());
    return kExitUsage;
  }
  std::string const started = runner::utc_now_iso8601();
  print_header(cli, *campaign);

  ProgressPrinter printer(cli, *campaign->family);
  CpuTime const cpu_before = CpuTime::now();
  auto const result        = run_campaign(*campaign, factory, printer);
  if (!result) return kExitUsage;
  CpuTime const cpu = CpuTime::now() - cpu_before;
  printer.end_line();
  unsigned const gpus = campaign->info->uses_gpu
                            ? static_cast<unsigned>(std::max(1, runner::visible_gpu_count()))
                            : 0;
  print_summary(*campaign->family, *result, gpus, cpu, campaign->options.workers);
  auto const [status, verdict] = verdict_of(*result);
  bool const summary_written =
      cli.json_summary.empty() ||
      write_summary(cli, *campaign, *result, started, device, cpu, status, verdict);
  print_verdict(*result, status, campaign->options.seed);
  // A summary asked for and not written is lost data: never report success then.
  return !summary_written && status == kExitPassed ? kExitUsage : status;
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
                  "heap size in MiB; heap family: M = heap / (64 x smallest type size), capped by "
                  "--max-blocks")
      ->check(unsigned_integer(1, 1u << 20));
  cmd->add_option("--profile",
                  cli->profile,
                  "how cases are generated: one of the runner's family's profiles (`heaplab "
                  "families` lists them); heap: small, mixed, large, near-oom; rw: mixed, rw, "
                  "rw-bm, corw, rw-malloc")
      ->default_str("small (the family's first; gpu: mixed)");
  cmd->add_option("--runner",
                  cli->runner,
                  "the runner, and with it the family, of the cases (`heaplab families` lists "
                  "them): model, differential-model, gpu (heap); rw-model, rw-cpu, rw-gpu (rw)")
      ->check(CLI::Validator(
          [](std::string& name) -> std::string {
            std::string const why = runner::unavailable_reason(name);
            return runner::Registry::instance().runner(name) ? std::string() : why;
          },
          "RUNNER"));
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
                  "workers in this process, each with its own runner (default 1; a GPU runner: per "
                  "visible GPU one per hardware thread, 1 to 16; worker w uses GPU w % GPUs)")
      ->check(unsigned_integer(1, 256))
      ->default_str("");
  cmd->add_option("--threads",
                  cli->threads,
                  "OS threads per wave of a CPU-threads runner (rw-cpu, malloc-rw-cpu; default "
                  "min(4, hardware threads))")
      ->check(unsigned_integer(1, 256))
      ->default_str("");
  cmd->add_option("--max-failures", cli->max_failures, "stop after this many failures")
      ->check(unsigned_integer(1, 1000000));
  cmd->add_option("--max-blocks",
                  cli->max_blocks,
                  "cap on the heap's size (heap: M, default 512 for CPU runners, 65536 for gpu; "
                  "malloc: the pool in KiB)")
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
  cmd->add_option("--stall-seconds",
                  cli->stall_seconds,
                  "a worker that finishes no step for this long is reported as a hang (check "
                  "stall, exit 3): a call blocked for good, where the watchdog cannot poll; 0 = "
                  "off (default: gpu runners 12 watchdog budgets, others off)")
      ->check(finite_number(0, 1e6))
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
      "stress", "random schedules of any family on one of its runners, a failure file per failure");
  cmd->option_defaults()->always_capture_default();
  cmd->footer(
      "Generates random schedules of the runner's family (heap: alloc waves, frees, parallel_do,\n"
      "defrag, checks; rw: getpage and free waves), shaped by --profile, runs each through\n"
      "--runner with the family's invariant catalog after every step (and, for differential\n"
      "runners, the model comparison), and writes every failure to a failure file in --out-dir,\n"
      "printing its path and the exact replay command. `heaplab families` lists the families,\n"
      "their runners and profiles.\n"
      "Seeds: --seed fixes the whole run: case k has seed mix(seed, k) and RapidCheck size\n"
      "1 + k % 100, both recorded in its failure file. Configs: any the family generates; a\n"
      "runner may support fewer (--runner gpu: the GPU runner's type universes).\n"
      "Shards: --shard K/N runs the cases k with k % N == K, so N processes on N machines split\n"
      "one campaign (tools/slurm-stress.sh); with --cases C their union is exactly the unsharded\n"
      "run's cases 0..C-1. Inside a process, --jobs workers deal the shard's cases round-robin\n"
      "(a GPU runner: one worker per visible GPU); the cases never depend on N or --jobs.\n"
      "Progress: one line updated in place on a terminal, else a plain line every\n"
      "--progress-every seconds; at the end a summary with the family's coverage.\n"
      "Ctrl-C, SIGTERM, SIGHUP: the cases in flight finish, the summary (and --json-summary) is\n"
      "written, exit status 130; a second signal ends the process at once.\n"
      "Exit status: 0 no failure, 1 failures (files written), 2 bad options, the runner cannot\n"
      "run here or --json-summary could not be written, 3 a kernel hung (its failure file is\n"
      "written, then the process ends at once), 4 nothing tested (no case ran), 130 interrupted.\n"
      "Examples:\n"
      "  heaplab stress --minutes 5 --seed 1\n"
      "  heaplab stress --runner gpu --profile large --minutes 10 --json-summary run.json\n"
      "  heaplab stress --runner rw-cpu --profile rw-malloc --minutes 2\n"
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
