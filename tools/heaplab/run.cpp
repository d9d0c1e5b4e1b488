// `heaplab run`: the main job (README command 1). Runs the CPU tier always and the GPU tier where
// a GPU is present, says which ran and why not, prints a summary table, and exits non-zero on
// any failure.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "files.hpp"
#include "options.hpp"
#include "process.hpp"

#include "heaplab/runner/environment.hpp"

namespace fs = std::filesystem;

namespace heaplab::cli {
namespace {

struct RunOptions {
  std::string build_dir;
  int budget_seconds     = 900;
  bool cpu_only          = false;
  int stress_seconds     = 20;
  int gpu_stress_seconds = 60;
  int rw_stress_seconds  = 10;  // rw-cpu (CPU tier) and rw-gpu (GPU tier) stress smokes
  bool bench_smoke       = true;
  bool apps_smoke        = true;
  int app_shapes         = 2;              // random shapes per app in the apps smoke
  std::optional<std::uint64_t> apps_seed;  // their seed (default: from the clock, printed)
  std::string junit;                       // JUnit XML report, "" for none
  std::string ran_earlier;  // a list of suites (as in cpu-tier.txt) that passed just before
};

/// The apps smoke of the GPU tier (docs/apps.md): each app at a small size with --check, a
/// defragmentation policy where the app has one, and the other allocators (--allocators) where
/// the app runs on them.
struct AppSmokeRun {
  char const* name;
  char const* args;
  int expect = 0;  // the exit status that passes: 0, or 5 for a run that must not fit
};
constexpr AppSmokeRun kAppSmokeRuns[] = {
    {"gen-ca",
     "gen-ca --width 128 --height 128 --iterations 300 --check --check-every 5 --baseline "
     "--defrag-every 10 --defrag-n 2"},
    {"nbody",
     "nbody --bodies 1024 --iterations 50 --check --check-every 10 --baseline --allocators "
     "cuda-malloc,rw-malloc"},
    {"collision",
     "collision --bodies 1024 --iterations 200 --merge-radius 0.005 --check --check-every 10 "
     "--baseline --defrag-every 20 --defrag-n 2 --allocators cuda-malloc,rw-malloc"},
    {"wa-tor",
     "wa-tor --width 256 --height 128 --iterations 100 --check --check-every 10 --baseline "
     "--cuda-malloc --defrag-after 5% --defrag-n 4 --allocators cuda-malloc,rw-malloc"},
    {"structure",
     "structure --width 64 --height 32 --iterations 60 --shrink 0.002 --check --check-every 5 "
     "--baseline --defrag-every 10 --defrag-n 2 --allocators cuda-malloc,rw-malloc"},
    {"game-of-life",
     "game-of-life --width 160 --height 96 --iterations 100 --density 0.3 --check --check-every 5 "
     "--baseline --defrag-every 10 --defrag-n 2 --allocators cuda-malloc,rw-malloc"},
    // Two apps that allocate inside their do-alls run without the block hints (HeapOptions::
    // block_hints, on by default): DynaSOAr's unhinted path on the GPU in every main job; the
    // random shapes below run them with the defaults.
    {"sugarscape",
     "sugarscape --width 128 --height 96 --iterations 60 --check --check-every 5 --baseline "
     "--defrag-every 10 --defrag-n 2 --allocators cuda-malloc,rw-malloc --no-block-hints"},
    {"traffic",
     "traffic --width 12 --height 9 --iterations 150 --check --check-every 10 --baseline "
     "--defrag-every 20 --defrag-n 2 --allocators cuda-malloc,rw-malloc --no-block-hints"},
    {"barnes-hut",
     "barnes-hut --bodies 2000 --iterations 30 --check --check-every 10 --allocators "
     "cuda-malloc,rw-malloc"},
};
/// The same apps on random shapes (`--random-shape`, docs/apps.md "Random shapes"): no shape
/// options, so that heaplab_apps draws grid sides, densities, body counts, rules and scenarios.
/// DynaSOAr Fig. 11's probes (docs/apps.md "Same memory for every variant"): each app's run that
/// cannot fit into --memory-mib 1 must end with exit 5 (OutOfMemory) and not crash, hang or fail
/// its --check; the variants spread over the heap, the baseline and the allocators, at set-up
/// and during the run (traffic makes its cars during the run); and one run that fits.
constexpr AppSmokeRun kAppMemoryRuns[] = {
    {"nbody", "nbody --bodies 100000 --iterations 1 --check --only heap --memory-mib 1", 5},
    {"collision",
     "collision --bodies 100000 --iterations 2 --check --only cuda-malloc --memory-mib 1",
     5},
    {"wa-tor",
     "wa-tor --width 512 --height 256 --iterations 20 --check --only rw-malloc --memory-mib 1",
     5},
    {"structure",
     "structure --width 512 --height 256 --iterations 5 --check --only baseline --memory-mib 1",
     5},
    {"game-of-life",
     "game-of-life --width 512 --height 512 --iterations 10 --check --only heap --memory-mib 1",
     5},
    {"sugarscape",
     "sugarscape --width 512 --height 512 --iterations 10 --check --only rw-malloc --memory-mib 1",
     5},
    {"traffic",
     "traffic --width 256 --height 192 --iterations 150 --check --check-every 50 --only heap "
     "--memory-mib 1",
     5},
    {"barnes-hut",
     "barnes-hut --bodies 100000 --iterations 2 --check --only cuda-malloc --memory-mib 1",
     5},
    {"wa-tor",
     "wa-tor --width 128 --height 64 --iterations 40 --check --check-every 10 --only rw-malloc "
     "--memory-mib 8"},
};
constexpr AppSmokeRun kAppRandomRuns[] = {
    {"gen-ca", "gen-ca --iterations 100 --check --check-every 5 --defrag-every 10 --defrag-n 2"},
    {"nbody", "nbody --iterations 20 --check --check-every 5"},
    {"collision",
     "collision --iterations 100 --check --check-every 10 --defrag-every 20 --defrag-n 2"},
    {"wa-tor", "wa-tor --iterations 60 --check --check-every 10 --defrag-after 5% --defrag-n 4"},
    {"structure",
     "structure --iterations 60 --check --check-every 5 --defrag-every 10 --defrag-n 2"},
    {"game-of-life",
     "game-of-life --iterations 60 --check --check-every 5 --defrag-every 10 --defrag-n 2"},
    {"sugarscape",
     "sugarscape --iterations 40 --check --check-every 5 --defrag-every 10 --defrag-n 2"},
};

struct SuiteRow {
  std::string name;
  std::string tier;
  std::string result;  // PASS, FAIL, TIMEOUT, NOT BUILT, EARLIER (passed in a first stage)
  int passed     = 0;
  int skipped    = 0;
  int failed     = 0;
  double seconds = 0;
  std::string log;      // "" when nothing ran
  std::string missing;  // the binary that was not built ("" when it was): result NOT BUILT
};

/// PASS, or EARLIER: it passed in the first stage (--ran-earlier).
bool passed(SuiteRow const& r) { return r.result == "PASS" || r.result == "EARLIER"; }

/// A row for a binary that is not in the build folder: nothing ran, so there is no log.
SuiteRow not_built(std::string name, std::string tier, fs::path const& binary) {
  SuiteRow row;
  row.name    = std::move(name);
  row.tier    = std::move(tier);
  row.result  = "NOT BUILT";
  row.missing = binary.string();
  return row;
}

fs::path default_build_dir() {
  std::error_code ec;
  auto const exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return fs::current_path();
  return exe.parent_path().parent_path();  // <build>/tools/heaplab
}

std::vector<std::string> read_list(fs::path const& file) {
  std::vector<std::string> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

int count_from_log(std::string const& text, std::string const& tag) {
  // gtest's summary lines: "[  PASSED  ] 12 tests." / "[  SKIPPED ] 1 test, listed below:".
  // The last such line wins (gtest prints the summary last).
  std::string const marker = "[  " + tag;
  int total                = 0;
  for (auto pos = text.find(marker); pos != std::string::npos; pos = text.find(marker, pos + 1)) {
    auto const close = text.find("] ", pos);
    if (close == std::string::npos) break;
    char* end    = nullptr;
    long const n = std::strtol(text.c_str() + close + 2, &end, 10);
    if (end != text.c_str() + close + 2 && std::string(end).rfind(" test", 0) == 0)
      total = static_cast<int>(n);
  }
  return total;
}

SuiteRow run_suite(fs::path const& build,
                   std::string const& rel,
                   std::string const& tier,
                   fs::path const& logdir,
                   int budget) {
  auto const bin = build / rel;
  if (!fs::exists(bin)) return not_built(fs::path(rel).filename().string(), tier, bin);
  SuiteRow row;
  row.name = fs::path(rel).filename().string();
  row.tier = tier;
  row.log  = (logdir / (row.name + ".log")).string();
  fs::remove(row.log);
  std::vector<std::string> env;
  if (tier == "gpu") env.push_back("HEAPLAB_REQUIRE_GPU=1");
  auto const r = run_process({bin.string()}, env, row.log, std::chrono::seconds(budget));
  row.seconds  = r.seconds;
  std::ifstream in(row.log);
  std::string const text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  row.passed  = count_from_log(text, "PASSED");
  row.skipped = count_from_log(text, "SKIPPED");
  row.failed  = count_from_log(text, "FAILED");
  row.result  = r.timed_out ? "TIMEOUT" : (r.exit_code == 0 ? "PASS" : "FAIL");
  return row;
}

/// The rows as JUnit XML: one <testsuite> per tier, one <testcase> per suite (binary or command);
/// a suite that did not pass is a <failure> whose text names its log; a suite with only skipped
/// tests (a gpu binary without a GPU) is <skipped>.
std::string junit_xml(std::vector<SuiteRow> const& rows, std::string const& gpu_status) {
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"heaplab run\">\n";
  for (std::string const tier : {"cpu", "gpu"}) {
    int tests = 0, failures = 0, skipped = 0;
    double seconds = 0;
    std::string cases;
    for (auto const& r : rows) {
      if (r.tier != tier) continue;
      ++tests;
      seconds += r.seconds;
      char time[32];
      std::snprintf(time, sizeof time, "%.3f", r.seconds);
      cases += "    <testcase classname=\"heaplab." + tier + "\" name=\"" + xml_escaped(r.name) +
               "\" time=\"" + time + "\">\n";
      if (!passed(r)) {
        ++failures;
        cases += "      <failure message=\"" + xml_escaped(r.result) + "\">" +
                 xml_escaped(r.missing.empty() ? r.result + ": " + std::to_string(r.failed) +
                                                     " failed; log: " + r.log
                                               : "NOT BUILT: " + r.missing) +
                 "</failure>\n";
      } else if (r.passed == 0 && r.skipped > 0) {
        ++skipped;
        cases += "      <skipped message=\"" + std::to_string(r.skipped) + " skipped\"/>\n";
      }
      cases +=
          "      <system-out>" +
          xml_escaped(r.result == "EARLIER"
                          ? "passed in the first stage (--ran-earlier); not run again"
                          : std::to_string(r.passed) + " passed, " + std::to_string(r.skipped) +
                                " skipped, " + std::to_string(r.failed) +
                                " failed; log: " + (r.log.empty() ? "none (not built)" : r.log)) +
          "</system-out>\n    </testcase>\n";
    }
    char time[32];
    std::snprintf(time, sizeof time, "%.3f", seconds);
    out += "  <testsuite name=\"heaplab." + tier + "\" tests=\"" + std::to_string(tests) +
           "\" failures=\"" + std::to_string(failures) + "\" errors=\"0\" skipped=\"" +
           std::to_string(skipped) + "\" time=\"" + time + "\">\n";
    if (tier == "gpu" && tests == 0)
      out += "    <properties><property name=\"gpu-status\" value=\"" + xml_escaped(gpu_status) +
             "\"/></properties>\n";
    out += cases + "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

/// Whether a CUDA device is present, and the line that says which (or why not). The probe is the
/// runner library's, which is built with the CUDA runtime where there is one (this tool's own
/// sources are not).
std::pair<bool, std::string> probe_gpu() {
  auto const gpu = runner::gpu_description();
  if (gpu.empty()) return {false, runner::gpu_unavailable_reason()};
  return {true, "GPU: " + gpu};
}

/// The suites of one `heaplab run`, as rows of the summary table.
class MainJob {
 public:
  MainJob(RunOptions const& opt, fs::path build)
      : opt_(opt), build_(std::move(build)), logdir_(build_ / "run-logs") {
    fs::create_directories(logdir_);
    std::error_code ec;
    auto const self = fs::read_symlink("/proc/self/exe", ec);
    self_           = ec ? std::string("heaplab") : self.string();
  }

  /// Every binary of <tier>-tier.txt, one row each; those in --ran-earlier are not run again.
  void run_tier(std::string const& tier) {
    std::vector<std::string> const earlier =
        opt_.ran_earlier.empty() ? std::vector<std::string>{} : read_list(opt_.ran_earlier);
    for (auto const& rel : read_list(build_ / (tier + "-tier.txt"))) {
      if (std::find(earlier.begin(), earlier.end(), rel) != earlier.end()) {
        SuiteRow row;
        row.name   = fs::path(rel).filename().string();
        row.tier   = tier;
        row.result = "EARLIER";
        rows_.push_back(row);
        std::printf("heaplab run: [%s] %s passed in the first stage; not run again\n",
                    tier.c_str(),
                    rel.c_str());
        continue;
      }
      std::printf("heaplab run: [%s] %s ...\n", tier.c_str(), rel.c_str());
      std::fflush(stdout);
      rows_.push_back(run_suite(build_, rel, tier, logdir_, opt_.budget_seconds));
      print_done(rows_.back());
    }
  }

  /// `heaplab stress` for `seconds` on `runner_name` (seed 1: the same cases every run).
  void stress_smoke(std::string const& tier, std::string const& runner_name, int seconds) {
    run_command("stress (" + runner_name + ", " + std::to_string(seconds) + " s)",
                tier,
                "stress-" + runner_name + ".log",
                {self_,
                 "stress",
                 "--runner",
                 runner_name,
                 "--seconds",
                 std::to_string(seconds),
                 "--seed",
                 "1",
                 "--progress-every",
                 "5",
                 "--out-dir",
                 (logdir_ / ("failures-" + runner_name)).string()},
                seconds + 120);
  }

  /// A small CompactGpu Table 1 run with every rewriting variant and the pointer check.
  void bench_smoke() {
    auto const bench = build_ / "bench" / "heaplab_bench";
    if (!fs::exists(bench)) {
      rows_.push_back(not_built("defrag bench", "gpu", bench));
      return;
    }
    run_command("defrag bench (scale 0.05, 3 variants)",
                "gpu",
                "defrag-bench.log",
                {bench.string(),
                 "defrag",
                 "--scale",
                 "0.05",
                 "--warmup",
                 "0",
                 "--repeats",
                 "1",
                 "--verify",
                 "true",
                 "--variant",
                 "forwarding",
                 "recompute-global",
                 "recompute-shared"},
                opt_.budget_seconds);
    // The random-walk allocators (docs/rw.md "Benchmarks"): a small Fig. 7 cell and a small
    // hash join, every output checked (a page handed out twice or a missing match fails it).
    std::vector<std::string> const small{"--pool-bytes", "67108864", "--runs", "2"};
    std::vector<std::string> fig7{bench.string(), "rw", "fig7", "--threads", "1024"};
    fig7.insert(fig7.end(), small.begin(), small.end());
    run_command("rw bench fig7 (small)", "gpu", "rw-bench-fig7.log", fig7, opt_.budget_seconds);
    std::vector<std::string> fig12{bench.string(), "rw", "fig12", "--tuples", "16384", "65536"};
    fig12.insert(fig12.end(), small.begin(), small.end());
    run_command("rw bench fig12 (small)", "gpu", "rw-bench-fig12.log", fig12, opt_.budget_seconds);
  }

  /// Each of the papers' applications (docs/apps.md) at a small size with --check, with a
  /// defragmentation policy in the loop: a row per app, PASS when its checks passed.
  void apps_smoke() {
    auto const apps = build_ / "apps" / "heaplab_apps";
    if (!fs::exists(apps)) {
      rows_.push_back(not_built("apps smoke", "gpu", apps));
      return;
    }
    for (auto const& run : kAppSmokeRuns) run_app(apps, run, "", "");
    for (std::size_t i = 0; i < std::size(kAppMemoryRuns); ++i)
      run_app(apps, kAppMemoryRuns[i], "", "-memory-" + std::to_string(i));
    if (opt_.app_shapes == 0) return;
    std::uint64_t const seed = opt_.apps_seed.value_or(
        static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) %
        1000000);
    std::printf("heaplab run: apps smoke: %d random shapes per app from --apps-seed %llu\n",
                opt_.app_shapes,
                static_cast<unsigned long long>(seed));
    for (int k = 0; k < opt_.app_shapes; ++k) {
      for (std::size_t a = 0; a < std::size(kAppRandomRuns); ++a) {
        // Shape seeds of one run: seed * 100 + k * 10 + a, so a row's seed names its run.
        std::string const shape = std::to_string(seed * 100 + std::uint64_t(k) * 10 + a);
        run_app(apps, kAppRandomRuns[a], shape, "-shape-" + std::to_string(k));
      }
    }
  }

  /// One apps-smoke row: heaplab_apps ARGS [--random-shape SHAPE].
  void run_app(fs::path const& apps,
               AppSmokeRun const& run,
               std::string const& shape,
               std::string const& log_suffix) {
    std::vector<std::string> argv{apps.string()};
    std::istringstream words(run.args);
    for (std::string w; words >> w;) argv.push_back(w);
    if (!shape.empty()) {
      argv.push_back("--random-shape");
      argv.push_back(shape);
    }
    bool const defrag      = std::string(run.args).find("--defrag") != std::string::npos;
    bool const no_hints    = std::string(run.args).find("--no-block-hints") != std::string::npos;
    std::string const what = shape.empty() ? "" : ", random shape " + shape;
    std::string const fits =
        run.expect == 0 ? "" : ", must not fit: exit " + std::to_string(run.expect);
    run_command(std::string("app ") + run.name + " (--check" + (defrag ? ", defrag" : "") +
                    (no_hints ? ", no block hints" : "") + what + fits + ")",
                "gpu",
                std::string("app-") + run.name + log_suffix + ".log",
                argv,
                opt_.budget_seconds,
                run.expect);
  }

  /// The summary table; returns the number of rows that did not pass.
  int print_table() const {
    int failures = 0;
    std::printf("\n%-36s %-4s %-8s %7s %8s %7s %8s\n",
                "suite",
                "tier",
                "result",
                "passed",
                "skipped",
                "failed",
                "seconds");
    for (auto const& r : rows_) {
      std::printf("%-36s %-4s %-8s %7d %8d %7d %8.1f\n",
                  r.name.c_str(),
                  r.tier.c_str(),
                  r.result.c_str(),
                  r.passed,
                  r.skipped,
                  r.failed,
                  r.seconds);
      if (!passed(r)) {
        ++failures;
        if (r.missing.empty())
          std::printf("    log: %s\n", r.log.c_str());
        else
          std::printf("    not built: %s (cmake --build %s)\n", r.missing.c_str(), build_.c_str());
      }
    }
    return failures;
  }

  [[nodiscard]] std::vector<SuiteRow> const& rows() const { return rows_; }

 private:
  static void print_done(SuiteRow const& r) {
    std::printf("heaplab run: [%s] %s %s (%.1f s)\n",
                r.tier.c_str(),
                r.name.c_str(),
                r.result.c_str(),
                r.seconds);
  }

  /// A command (stress smoke, bench smoke) as one row: PASS when it exits 0.
  void run_command(std::string const& name,
                   std::string const& tier,
                   std::string const& log_name,
                   std::vector<std::string> const& argv,
                   int timeout_seconds,
                   int expect = 0) {
    std::printf("heaplab run: [%s] %s ...\n", tier.c_str(), name.c_str());
    std::fflush(stdout);
    SuiteRow row;
    row.name = name;
    row.tier = tier;
    row.log  = (logdir_ / log_name).string();
    fs::remove(row.log);
    auto const r  = run_process(argv, {}, row.log, std::chrono::seconds(timeout_seconds));
    row.seconds   = r.seconds;
    bool const ok = !r.timed_out && r.exit_code == expect;
    row.result    = r.timed_out ? "TIMEOUT" : (ok ? "PASS" : "FAIL");
    (ok ? row.passed : row.failed) = 1;
    rows_.push_back(row);
    print_done(row);
  }

  RunOptions const& opt_;
  fs::path build_;
  fs::path logdir_;
  std::string self_;
  std::vector<SuiteRow> rows_;
};

int run_main_job(RunOptions const& opt) {
  if (!opt.junit.empty()) {
    if (auto const why = output_file_problem(opt.junit); !why.empty()) {
      std::fprintf(
          stderr, "heaplab run: error: --junit '%s': %s\n", opt.junit.c_str(), why.c_str());
      return kExitUsage;
    }
  }
  fs::path const build = opt.build_dir.empty() ? default_build_dir() : fs::path(opt.build_dir);
  if (!fs::exists(build / "cpu-tier.txt")) {
    std::fprintf(
        stderr,
        "heaplab run: %s/cpu-tier.txt not found: pass --build-dir <configured build folder>\n",
        build.c_str());
    return 2;
  }
  MainJob job(opt, build);
  auto const [gpu, gpu_line] = probe_gpu();
  std::printf("heaplab run: build folder %s\nheaplab run: %s\n", build.c_str(), gpu_line.c_str());

  job.run_tier("cpu");
  // A short model stress smoke (docs/workflow.md): random schedules on the reference model.
  if (opt.stress_seconds > 0) job.stress_smoke("cpu", "model", opt.stress_seconds);
  // The random-walk pools on CPU threads against their model (docs/rw.md "Schedules and runners").
  if (opt.rw_stress_seconds > 0) job.stress_smoke("cpu", "rw-cpu", opt.rw_stress_seconds);
  std::string gpu_status;
  if (opt.cpu_only) {
    gpu_status = "GPU tier skipped: --cpu-only";
  } else if (!gpu) {
    gpu_status = "GPU tier skipped: " + gpu_line;
  } else {
    job.run_tier("gpu");
    // The GPU runner against the model on random schedules, then a small CompactGpu Table 1 run
    // (docs/workflow.md "The main job").
    if (opt.gpu_stress_seconds > 0) job.stress_smoke("gpu", "gpu", opt.gpu_stress_seconds);
    if (opt.rw_stress_seconds > 0) job.stress_smoke("gpu", "rw-gpu", opt.rw_stress_seconds);
    if (opt.bench_smoke) job.bench_smoke();
    if (opt.apps_smoke) job.apps_smoke();
    gpu_status = "GPU tier ran on " + gpu_line.substr(5);
  }

  int const failures  = job.print_table();
  auto const& rows    = job.rows();
  auto const cpu_rows = [&rows](bool built) {
    return static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [&](auto const& r) {
      return r.tier == "cpu" && r.missing.empty() == built;
    }));
  };
  std::string const cpu_missing =
      cpu_rows(false) == 0 ? "" : ", " + std::to_string(cpu_rows(false)) + " not built";
  std::printf("\nheaplab run: CPU tier ran (%zu suites%s). %s\n",
              cpu_rows(true),
              cpu_missing.c_str(),
              gpu_status.c_str());
  std::printf("heaplab run: %s\n", failures == 0 ? "ALL PASSED" : "FAILURES (see logs above)");
  if (!opt.junit.empty()) {
    try {
      write_file_atomically(opt.junit, junit_xml(rows, gpu_status));
      std::printf("heaplab run: JUnit report in %s\n", opt.junit.c_str());
    } catch (std::exception const& e) {
      std::fprintf(stderr, "heaplab run: the JUnit report was not written: %s\n", e.what());
      return kExitFailed;
    }
  }
  return failures == 0 ? kExitPassed : kExitFailed;
}

}  // namespace

void add_run(CLI::App& app) {
  auto opt  = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand(
      "run", "the main job: the default verification suite, every tier this machine can run");
  cmd->option_defaults()->always_capture_default();
  cmd->footer(
      "The CPU tier (the cpu-labelled test binaries, a model and an rw-cpu stress smoke) always\n"
      "runs; the GPU tier (the gpu-labelled binaries, properties included, `stress --runner gpu`\n"
      "and `--runner rw-gpu`, and a\n"
      "CompactGpu and random-walk bench smokes, and each application with --check, on its fixed\n"
      "shape and on --app-shapes random ones) runs where\n"
      "a CUDA device is present, otherwise a line says why\n"
      "it was skipped. Logs go to <build>/run-logs. Prints a summary table; --junit also writes\n"
      "it as JUnit XML (one testsuite per tier, one testcase per suite) for CI systems.\n"
      "Exit status: 0 all passed, 1 a suite failed, 2 bad options or no build folder.\n"
      "Examples:\n"
      "  heaplab run\n"
      "  heaplab run --cpu-only --junit heaplab-run.xml\n"
      "  heaplab run --gpu-stress-seconds 600 --budget 1800\n"
      "  heaplab run --apps-seed 123456       the apps smoke's random shapes of an earlier run");
  cmd->add_option("--build-dir",
                  opt->build_dir,
                  "configured build folder (default: the one this executable was built in)");
  cmd->add_option("--budget", opt->budget_seconds, "wall-clock budget per suite in seconds")
      ->check(unsigned_integer(1, 86400));
  cmd->add_flag("--cpu-only", opt->cpu_only, "run the CPU tier only, even where a GPU is present");
  cmd->add_option("--stress-seconds",
                  opt->stress_seconds,
                  "seconds of the model stress smoke in the CPU tier (0: none)")
      ->check(unsigned_integer(0, 86400));
  cmd->add_option("--gpu-stress-seconds",
                  opt->gpu_stress_seconds,
                  "seconds of `stress --runner gpu` in the GPU tier (0: none)")
      ->check(unsigned_integer(0, 86400));
  cmd->add_option("--rw-stress-seconds",
                  opt->rw_stress_seconds,
                  "seconds of each random-walk stress smoke: rw-cpu in the CPU tier, rw-gpu in the "
                  "GPU tier (0: none)")
      ->check(unsigned_integer(0, 86400));
  cmd->add_option(
         "--bench-smoke",
         opt->bench_smoke,
         "GPU tier: a small CompactGpu Table 1 run (all variants, pointers verified) and small "
         "random-walk Fig. 7 and Fig. 12 runs (outputs verified)")
      ->check(boolean_word());
  cmd->add_option("--apps-smoke",
                  opt->apps_smoke,
                  "GPU tier: each of the papers' applications at a small size with --check and a "
                  "defragmentation policy (docs/apps.md)")
      ->check(boolean_word());
  cmd->add_option("--app-shapes",
                  opt->app_shapes,
                  "GPU tier: random shapes per application in the apps smoke (heaplab_apps "
                  "--random-shape, docs/apps.md \"Random shapes\"; 0: none)")
      ->check(unsigned_integer(0, 100));
  cmd->add_option("--apps-seed",
                  opt->apps_seed,
                  "seed of the apps smoke's random shapes (default: from the clock; printed, so "
                  "that a run replays)")
      ->check(unsigned_integer(0, 1000000000));
  cmd->add_option("--junit", opt->junit, "also write the results as JUnit XML to this file");
  cmd->add_option("--ran-earlier",
                  opt->ran_earlier,
                  "a file listing suites (as <build>/cpu-tier.txt names them) that passed just "
                  "before; they are not run again and their rows read EARLIER (tools/run-main-job "
                  "passes its first stage's list)")
      ->check(CLI::ExistingFile);
  cmd->callback([opt] { std::exit(run_main_job(*opt)); });
}

}  // namespace heaplab::cli
