// `heaplab run`: the main job (README command 1). Runs the CPU tier always and the GPU tier where
// a GPU is present, says which ran and why not, prints a summary table, and exits non-zero on
// any failure.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "process.hpp"

#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
#include "heaplab/cuda/device_info.hpp"
#endif

namespace fs = std::filesystem;

namespace heaplab::cli {
namespace {

struct RunOptions {
  std::string build_dir;
  int budget_seconds     = 900;
  bool cpu_only          = false;
  int stress_seconds     = 20;
  int gpu_stress_seconds = 60;
  bool bench_smoke       = true;
};

struct SuiteRow {
  std::string name;
  std::string tier;
  std::string result;  // PASS, FAIL, TIMEOUT
  int passed     = 0;
  int skipped    = 0;
  int failed     = 0;
  double seconds = 0;
  std::string log;
};

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
  SuiteRow row;
  row.name = fs::path(rel).filename().string();
  row.tier = tier;
  row.log  = (logdir / (row.name + ".log")).string();
  fs::remove(row.log);
  auto const bin = build / rel;
  if (!fs::exists(bin)) {
    row.result = "MISSING";
    return row;
  }
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

int run_main_job(RunOptions const& opt) {
  fs::path const build = opt.build_dir.empty() ? default_build_dir() : fs::path(opt.build_dir);
  if (!fs::exists(build / "cpu-tier.txt")) {
    std::fprintf(
        stderr,
        "heaplab run: %s/cpu-tier.txt not found: pass --build-dir <configured build folder>\n",
        build.c_str());
    return 2;
  }
  fs::path const logdir = build / "run-logs";
  fs::create_directories(logdir);

  std::string gpu_line;
  bool gpu = false;
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
  auto const dev = heaplab::cuda::probe_device();
  gpu            = dev.available;
  gpu_line       = dev.available ? "GPU: " + dev.name + " (sm_" + std::to_string(dev.cc_major) +
                                 std::to_string(dev.cc_minor) + ")"
                                 : dev.reason;
#else
  gpu_line = "no CUDA device (this build has no CUDA runtime: nvcc was absent at configure time)";
#endif
  std::printf("heaplab run: build folder %s\nheaplab run: %s\n", build.c_str(), gpu_line.c_str());

  std::vector<SuiteRow> rows;
  auto run_tier = [&](std::string const& tier) {
    auto const list = read_list(build / (tier + "-tier.txt"));
    for (auto const& rel : list) {
      std::printf("heaplab run: [%s] %s ...\n", tier.c_str(), rel.c_str());
      std::fflush(stdout);
      rows.push_back(run_suite(build, rel, tier, logdir, opt.budget_seconds));
      auto const& r = rows.back();
      std::printf("heaplab run: [%s] %s %s (%.1f s)\n",
                  tier.c_str(),
                  r.name.c_str(),
                  r.result.c_str(),
                  r.seconds);
    }
  };
  // A command (stress smoke, bench smoke) as one row: PASS when it exits 0.
  std::error_code self_ec;
  auto const self_path   = fs::read_symlink("/proc/self/exe", self_ec);
  std::string const self = self_ec ? std::string("heaplab") : self_path.string();
  auto run_command       = [&](std::string const& name,
                         std::string const& tier,
                         std::string const& log_name,
                         std::vector<std::string> const& argv,
                         int timeout_seconds) {
    std::printf("heaplab run: [%s] %s ...\n", tier.c_str(), name.c_str());
    std::fflush(stdout);
    SuiteRow row;
    row.name = name;
    row.tier = tier;
    row.log  = (logdir / log_name).string();
    fs::remove(row.log);
    auto const r = run_process(argv, {}, row.log, std::chrono::seconds(timeout_seconds));
    row.seconds  = r.seconds;
    row.result   = r.timed_out ? "TIMEOUT" : (r.exit_code == 0 ? "PASS" : "FAIL");
    (r.exit_code == 0 ? row.passed : row.failed) = 1;
    rows.push_back(row);
    std::printf("heaplab run: [%s] %s %s (%.1f s)\n",
                tier.c_str(),
                row.name.c_str(),
                row.result.c_str(),
                row.seconds);
  };
  // `heaplab stress` for `seconds` on `runner_name` (seed 1: the same cases every run).
  auto stress_smoke = [&](std::string const& tier, std::string const& runner_name, int seconds) {
    run_command("stress (" + runner_name + ", " + std::to_string(seconds) + " s)",
                tier,
                "stress-" + runner_name + ".log",
                {self,
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
                 (logdir / ("failures-" + runner_name)).string()},
                seconds + 120);
  };

  run_tier("cpu");
  // A short model stress smoke (docs/workflow.md): random schedules on the reference model.
  if (opt.stress_seconds > 0) stress_smoke("cpu", "model", opt.stress_seconds);
  std::string gpu_status;
  if (opt.cpu_only) {
    gpu_status = "GPU tier skipped: --cpu-only";
  } else if (!gpu) {
    gpu_status = "GPU tier skipped: " + gpu_line;
  } else {
    run_tier("gpu");
    // The GPU runner against the model on random schedules, then a small CompactGpu Table 1 run
    // with every rewriting variant and the pointer check (docs/workflow.md "The main job").
    if (opt.gpu_stress_seconds > 0) stress_smoke("gpu", "gpu", opt.gpu_stress_seconds);
    auto const bench = build / "stress" / "heaplab_bench";
    if (opt.bench_smoke && fs::exists(bench)) {
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
                  opt.budget_seconds);
    } else if (opt.bench_smoke) {
      rows.push_back({"defrag bench", "gpu", "MISSING", 0, 0, 1, 0, bench.string()});
    }
    gpu_status = "GPU tier ran on " + gpu_line.substr(5);
  }

  int failures = 0;
  std::printf("\n%-36s %-4s %-8s %7s %8s %7s %8s\n",
              "suite",
              "tier",
              "result",
              "passed",
              "skipped",
              "failed",
              "seconds");
  for (auto const& r : rows) {
    std::printf("%-36s %-4s %-8s %7d %8d %7d %8.1f\n",
                r.name.c_str(),
                r.tier.c_str(),
                r.result.c_str(),
                r.passed,
                r.skipped,
                r.failed,
                r.seconds);
    if (r.result != "PASS") {
      ++failures;
      std::printf("    log: %s\n", r.log.c_str());
    }
  }
  std::printf("\nheaplab run: CPU tier ran (%zu suites). %s\n",
              static_cast<std::size_t>(std::count_if(
                  rows.begin(), rows.end(), [](auto const& r) { return r.tier == "cpu"; })),
              gpu_status.c_str());
  std::printf("heaplab run: %s\n", failures == 0 ? "ALL PASSED" : "FAILURES (see logs above)");
  return failures == 0 ? 0 : 1;
}

}  // namespace

void add_run(CLI::App& app) {
  auto opt  = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand(
      "run",
      "The main job: run the default verification suite. The CPU tier (the cpu-labelled test\n"
      "binaries and a model stress smoke) always runs; the GPU tier (the gpu-labelled binaries,\n"
      "properties included, `stress --runner gpu` and a CompactGpu bench smoke) runs where a CUDA\n"
      "device is present, otherwise a line says why it was skipped. Logs go to <build>/run-logs.\n"
      "Prints a summary table; exit status 1 on any failure.");
  cmd->add_option("--build-dir",
                  opt->build_dir,
                  "configured build folder (default: the one this executable was built in)");
  cmd->add_option("--budget", opt->budget_seconds, "wall-clock budget per suite in seconds")
      ->check(CLI::Range(1, 86400));
  cmd->add_flag("--cpu-only", opt->cpu_only, "run the CPU tier only, even where a GPU is present");
  cmd->add_option("--stress-seconds",
                  opt->stress_seconds,
                  "seconds of the model stress smoke in the CPU tier (0: none; default 20)")
      ->check(CLI::Range(0, 86400));
  cmd->add_option("--gpu-stress-seconds",
                  opt->gpu_stress_seconds,
                  "seconds of `stress --runner gpu` in the GPU tier (0: none; default 60)")
      ->check(CLI::Range(0, 86400));
  cmd->add_option("--bench-smoke",
                  opt->bench_smoke,
                  "GPU tier: a small CompactGpu Table 1 run, all variants, pointers verified "
                  "(default true)");
  cmd->callback([opt] { std::exit(run_main_job(*opt)); });
}

}  // namespace heaplab::cli
