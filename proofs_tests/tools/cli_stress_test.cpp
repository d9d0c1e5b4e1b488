// The heaplab command line as a whole and `heaplab stress`: usage errors (exit status 2, one
// line, suggestions), --version and help, option checks, --out-dir and --json-summary checked at
// start, --case/--dump, shards, the JSON summary, coverage, Ctrl-C (docs/cli.md).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cli_support.hpp"
#include "gpu_test.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/runner/stress.hpp"
#include "heaplab/schedule/json.hpp"

#if !defined(HEAPLAB_BUILD_INFO_SCRIPT)
#error \
    "HEAPLAB_BUILD_INFO_SCRIPT must name cmake/BuildInfo.cmake (proofs_tests/tools/CMakeLists.txt)"
#endif

namespace heaplab::test {
namespace {

std::size_t lines_in(std::string const& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

nlohmann::json read_json(std::filesystem::path const& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

// ------------------------------------------------------------------------------- usage errors

struct UsageCase {
  std::string args;
  char const* expected;  // a part of the one line
};

TEST(CliUsage, EveryUsageErrorExitsTwoWithOneLine) {
  TempDir dir;
  std::ofstream(dir.path() / "plain-file") << "x";
  std::string const file_as_dir      = "'" + (dir.path() / "plain-file" / "sub").string() + "'";
  std::vector<UsageCase> const cases = {
      {"", "a command is required; commands: run, stress, replay"},
      {"stres", "unknown command 'stres' (did you mean 'stress'?)"},
      {"replya x.json", "unknown command 'replya' (did you mean 'replay'?)"},
      {"--bogus", "heaplab: error:"},
      {"stress --sed 5", "unknown option '--sed' (did you mean '--seed'?)"},
      {"stress --seconds=3 --minuts 1", "unknown option '--minuts' (did you mean '--minutes'?)"},
      {"stress --cases -1", "--cases: expected an integer in [1, "},
      {"stress --cases 0", "--cases: expected an integer in [1, "},
      {"stress --cases 1.5", "--cases: expected an integer"},
      {"stress --seed -1", "--seed: expected an integer in [0, 18446744073709551615], got '-1'"},
      {"stress --seed 18446744073709551616", "got '18446744073709551616'"},
      {"stress --seed 1e3", "--seed: expected an integer"},
      {"stress --seed 0x10", "--seed: expected an integer"},
      {"stress --seconds nan", "--seconds: expected a number in (0, "},
      {"stress --seconds inf", "--seconds: expected a number in (0, "},
      {"stress --minutes nan", "--minutes: expected a number in (0, "},
      {"stress --minutes 0", "--minutes: expected a number in (0, "},
      {"stress --minutes -2", "--minutes: expected a number"},
      {"stress --minutes 1 --seconds 5", "excludes"},
      {"stress --jobs 0", "--jobs: expected an integer in [1, 256]"},
      {"stress --heap-mib 0", "--heap-mib: expected an integer in [1, "},
      {"stress --profile huge", "--profile"},
      {"stress --runner cuda", "--runner"},
      {"stress --shard 3/3", "--shard: expected K/N with 0 <= K < N"},
      {"stress --shard 1", "--shard: expected K/N"},
      {"stress --shard -1/2", "--shard: expected K/N"},
      {"stress --out-dir ''", "--out-dir '': the directory name is empty"},
      {"stress --out-dir " + file_as_dir, "is not a directory"},
      {"stress --dump", "--dump needs --case K"},
      {"stress --case 3 --dump", "--dump needs the --seed of the run"},
      {"stress --case 9 --cases 5", "--case 9 is not below --cases 5"},
      {"stress --json-summary /", "--json-summary '/': it is a directory"},
      {"stress --watchdog-ms 0", "--watchdog-ms: expected an integer in [1, 86400000]"},
      {"run --budget 0", "--budget: expected an integer in [1, 86400]"},
      {"run --stress-seconds nan", "--stress-seconds: expected an integer"},
      {"run --rw-stress-seconds -1", "--rw-stress-seconds: expected an integer"},
      {"help stres", "unknown command 'stres' (did you mean 'stress'?)"},
      {"show", "file is required"},
      {"list-invariants --name", "unknown option '--name' (did you mean '--names'?)"},
  };
  for (auto const& c : cases) {
    Result const r = run(c.args);
    EXPECT_EQ(r.status, 2) << "heaplab " << c.args << "\n" << r.output;
    EXPECT_EQ(lines_in(r.output), 1u) << "heaplab " << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << "heaplab " << c.args << "\n"
                                                            << r.output;
  }
}

TEST(CliUsage, HelpAndVersionExitZero) {
  Result const top = run("--help");
  EXPECT_EQ(top.status, 0);
  EXPECT_NE(top.output.find("Usage: heaplab [OPTIONS] SUBCOMMAND"), std::string::npos)
      << "the program name, not its path\n"
      << top.output;
  // One line per subcommand: the line after each subcommand's line is another subcommand or
  // the end of the list.
  auto const list                      = top.output.substr(top.output.find("Subcommands:\n") + 13);
  std::vector<std::string> const names = {"run",
                                          "stress",
                                          "replay",
                                          "minimize",
                                          "show",
                                          "list-invariants",
                                          "families",
                                          "help",
                                          "version"};
  std::istringstream lines(list);
  std::size_t listed = 0;
  for (std::string line; std::getline(lines, line) && !line.empty();) {
    ASSERT_GE(line.size(), 3u);
    EXPECT_EQ(line.substr(0, 2), "  ") << line;
    EXPECT_NE(line[2], ' ') << "a continuation line under Subcommands:\n" << top.output;
    ++listed;
  }
  EXPECT_EQ(listed, names.size()) << top.output;
  EXPECT_NE(top.output.find("Examples:"), std::string::npos);

  Result const help = run("help");
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.output, top.output);
  for (auto const& name : names) {
    Result const sub = run("help " + name);
    EXPECT_EQ(sub.status, 0) << name;
    EXPECT_NE(sub.output.find("Examples:"), std::string::npos) << name << "\n" << sub.output;
    EXPECT_EQ(run(name + " --help").output, sub.output) << name;
  }
  Result const stress_help = run("stress --help");
  EXPECT_NE(stress_help.output.find("=small"), std::string::npos)
      << "defaults are shown by the library\n"
      << stress_help.output;

  Result const v = run("--version");
  EXPECT_EQ(v.status, 0) << v.output;
  std::regex const version(
      "^heaplab [0-9]+\\.[0-9]+\\.[0-9]+\ncommit: [^\n]+\nbuild: [^\n]+\n"
      "cuda: [^\n]+\n((MUTANT|PLANTING) BUILD[^\n]*\n)?gpus: [^\n]+\n$");
  EXPECT_TRUE(std::regex_search(v.output, version)) << v.output;
  // A git checkout names its commit; a tree built from a source archive (no .git, as
  // artifact-evaluation archives are) has none to name.
  if (std::filesystem::exists(std::filesystem::path(HEAPLAB_SOURCE_DIR) / ".git")) {
    EXPECT_EQ(v.output.find("commit: unknown\n"), std::string::npos)
        << "built from a git checkout\n"
        << v.output;
  }
}

/// Runs cmake/BuildInfo.cmake on a scratch git repository and returns the fragment it writes.
std::string build_info_of(std::filesystem::path const& repo, std::filesystem::path const& out) {
  std::string const cmd = "cmake -DSOURCE_DIR='" + repo.string() + "' -DOUTPUT='" + out.string() +
                          "' -DGIT_EXECUTABLE=git -P '" HEAPLAB_BUILD_INFO_SCRIPT "' 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string shell(std::string const& cmd) {
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return out;
  char buf[256];
  while (std::size_t const n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  pclose(pipe);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(CliVersion, TheTreeHashNamesTheFilesAsBuilt) {
  if (std::system("git --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no git here";
  TempDir dir;
  auto const repo = dir.path() / "repo";
  auto const out  = dir.path() / "build_info.inc";
  std::filesystem::create_directories(repo);
  std::string const git = "git -C '" + repo.string() + "' ";
  std::ofstream(repo / "a.txt") << "one\n";
  ASSERT_EQ(std::system((git + "init -q && " + git + "add a.txt && " + git +
                         "-c user.name=t -c user.email=t@t commit -qm one")
                            .c_str()),
            0);
  std::string const head  = shell(git + "rev-parse --short HEAD");
  std::string const clean = build_info_of(repo, out);
  EXPECT_NE(clean.find("#define HEAPLAB_GIT_DESCRIBE \"" + head + "\""), std::string::npos)
      << clean;
  EXPECT_NE(clean.find("#define HEAPLAB_TREE_HASH \"\""), std::string::npos) << clean;

  // A changed file and a new one: the tree hash is git's hash of exactly those contents.
  std::ofstream(repo / "a.txt") << "two\n";
  std::ofstream(repo / "b.txt") << "new\n";
  std::string const dirty         = build_info_of(repo, out);
  std::string const expected_tree = shell(
      "cd '" + repo.string() + "' && cp .git/index '" + (dir.path() / "idx").string() +
      "' && GIT_INDEX_FILE='" + (dir.path() / "idx").string() + "' git add -A && GIT_INDEX_FILE='" +
      (dir.path() / "idx").string() + "' git write-tree");
  ASSERT_EQ(expected_tree.size(), 40u) << expected_tree;
  EXPECT_NE(dirty.find("#define HEAPLAB_GIT_DESCRIBE \"" + head + "-dirty\""), std::string::npos)
      << dirty;
  EXPECT_NE(dirty.find("#define HEAPLAB_TREE_HASH \"" + expected_tree.substr(0, 12) + "\""),
            std::string::npos)
      << dirty;
  // The checkout's own index is untouched: b.txt is still untracked, a.txt still unstaged.
  EXPECT_EQ(shell(git + "status --porcelain"), " M a.txt\n?? b.txt");
}

// ------------------------------------------------------------------------------------- stress

TEST(CliStress, AZeroBudgetTestsNothingAndSaysSo) {
  TempDir dir;
  Result const r =
      run("stress --seconds 1e-9 --seed 1 --out-dir '" + (dir.path() / "f").string() + "'");
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_NE(r.output.find("NOTHING TESTED: no case ran"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("PASSED"), std::string::npos) << r.output;
}

TEST(CliStress, DumpRegeneratesAnyCaseAndTheCaseRunsAlone) {
  Result const r = run("stress --seed 5 --case 7 --dump --profile near-oom");
  ASSERT_EQ(r.status, 0) << r.output;
  auto const dumped = schedule::parse(r.output);
  runner::StressOptions o;
  o.seed                     = 5;
  o.request.profile          = "near-oom";
  o.request.runner           = "model";
  runner::StressCase const c = runner::make_case(heap_family::family(), o, 7);
  auto const& generated      = heap_family::HeapFamily::unwrap(c.schedule);
  EXPECT_EQ(dumped.steps, generated.steps);
  EXPECT_TRUE(schedule::same_config(dumped.config, generated.config));
  EXPECT_NE(dumped.description.find("--seed 5 --runner model --profile near-oom"),
            std::string::npos);
  EXPECT_NE(dumped.description.find("case 7"), std::string::npos);

  TempDir dir;
  Result const alone = run("stress --seed 5 --case 7 --profile near-oom --out-dir '" +
                           (dir.path() / "f").string() + "'");
  EXPECT_EQ(alone.status, 0) << alone.output;
  EXPECT_NE(alone.output.find("stopped: --case ran"), std::string::npos) << alone.output;
  EXPECT_NE(alone.output.find(" 1 cases"), std::string::npos) << alone.output;
  Result const other_shard = run("stress --seed 5 --case 7 --shard 0/2 --dump");
  EXPECT_EQ(other_shard.status, 2) << other_shard.output;
  EXPECT_NE(other_shard.output.find("belongs to shard 1/2"), std::string::npos)
      << other_shard.output;
}

TEST(CliStress, JsonSummaryAndCoverageAgreeWithTheRun) {
  TempDir dir;
  auto const summary = dir.path() / "summary.json";
  Result const r     = run("stress --seed 3 --cases 40 --json-summary '" + summary.string() +
                       "' --out-dir '" + (dir.path() / "f").string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("coverage: steps: alloc "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("coverage: defrag variants: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hierarchy depths: 1 level"), std::string::npos) << r.output;
  auto const j = read_json(summary);
  EXPECT_EQ(j.at("format"), "heaplab-stress-summary");
  EXPECT_EQ(j.at("seed"), 3);
  EXPECT_EQ(j.at("cases"), 40);
  EXPECT_EQ(j.at("result"), "PASSED");
  EXPECT_EQ(j.at("exit_status"), 0);
  EXPECT_EQ(j.at("stop_reason"), "--cases reached");
  EXPECT_EQ(j.at("options").at("shard"), "0/1");
  EXPECT_TRUE(j.at("failures").empty());
  std::uint64_t steps = 0;
  for (auto const& [kind, n] : j.at("coverage").at("step_kinds").items())
    steps += n.get<std::uint64_t>();
  EXPECT_EQ(steps, j.at("steps").get<std::uint64_t>()) << "every step that ran is counted once";
  std::uint64_t cases = 0;
  for (auto const& [m, n] : j.at("coverage").at("heap_sizes").items())
    cases += n.get<std::uint64_t>();
  EXPECT_EQ(cases, 40u);
  EXPECT_NE(r.output.find(std::to_string(steps) + " steps"), std::string::npos) << r.output;
}

TEST(CliStress, RatesAndTimeByPartAreReported) {
  TempDir dir;
  auto const summary = dir.path() / "summary.json";
  // differential-model measures the parts (a second model stands in for the implementation);
  // --max-blocks 4096 with the mixed profile draws 2-level heaps too.
  Result const r =
      run("stress --runner differential-model --profile mixed --max-blocks 4096 --seed 5 "
          "--cases 12 --no-perturb --json-summary '" +
          summary.string() + "' --out-dir '" + (dir.path() / "f").string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("rate: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cases/s with M > 64"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("time by part (summed over the workers' steps): implementation "),
            std::string::npos)
      << r.output;
  auto const j      = read_json(summary);
  double const secs = j.at("elapsed_s").get<double>();
  ASSERT_GT(secs, 0.0);
  EXPECT_NEAR(j.at("cases_per_s").get<double>(), 12.0 / secs, 1e-6 * (1 + 12.0 / secs));
  std::uint64_t deep = 0;
  for (auto const& [depth, n] : j.at("coverage").at("hierarchy_depths").items())
    if (depth != "1 level") deep += n.get<std::uint64_t>();
  EXPECT_GT(deep, 0u) << "the mixed profile draws 2- and 3-level heaps";
  EXPECT_EQ(j.at("family"), "heap");
  EXPECT_EQ(j.at("version"), 2);
  EXPECT_GT(j.at("counts").at("created").get<std::uint64_t>(), 0u);
  auto const& t      = j.at("time_by_part_s");
  double const parts = t.at("implementation").get<double>() + t.at("model").get<double>() +
                       t.at("checks").get<double>();
  EXPECT_GT(t.at("implementation").get<double>(), 0.0);
  EXPECT_GT(t.at("model").get<double>(), 0.0);
  EXPECT_GT(t.at("checks").get<double>(), 0.0);
  EXPECT_LE(parts, secs * 1.05) << "one worker: the parts add up to at most the run's time";
  // The model executor reads nothing back: its read-back part is zero and not printed.
  EXPECT_EQ(t.at("readback").get<double>(), 0.0);
  EXPECT_EQ(r.output.find("read-back"), std::string::npos) << r.output;
  // The process's CPU time: some (the steps ran on the CPU), no more than the machine's threads
  // can give in the run's time. Not compared with the steps' wall time: on a loaded machine
  // (ctest -j2 on two cores) a worker waits for a core and its busy time falls well below it.
  auto const& cpu   = j.at("cpu_s");
  double const busy = cpu.at("user").get<double>() + cpu.at("system").get<double>();
  EXPECT_GT(busy, 0.0) << "the steps ran on the CPU";
  EXPECT_LE(busy, secs * cpu.at("hardware_threads").get<double>() * 1.05 + 0.5);
  EXPECT_NE(r.output.find("CPU: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" hardware threads busy (user "), std::string::npos) << r.output;
  EXPECT_EQ(j.at("options").at("perturb"), false);
}

TEST(CliStress, CasesPerWorkerFollowTheRoundRobinDeal) {
  TempDir dir;
  auto const summary = dir.path() / "summary.json";
  // --cases 30 dealt round-robin to 3 workers: cases 0, 3, 6, ... to worker 0, and so on.
  Result const r = run("stress --seed 4 --cases 30 --jobs 3 --json-summary '" + summary.string() +
                       "' --out-dir '" + (dir.path() / "f").string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("cases per worker: 0: 10, 1: 10, 2: 10"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("cases per GPU"), std::string::npos) << "the model runner has no GPUs";
  auto const j = read_json(summary);
  EXPECT_EQ(j.at("cases_per_worker"), nlohmann::json::parse("[10, 10, 10]"));
}

TEST(CliStress, ShardsOfACampaignAddUpToTheWholeRun) {
  TempDir dir;
  std::uint64_t cases = 0, steps = 0;
  for (int k = 0; k < 3; ++k) {
    auto const summary = dir.path() / ("s" + std::to_string(k) + ".json");
    Result const r =
        run("stress --seed 11 --cases 25 --shard " + std::to_string(k) + "/3 --json-summary '" +
            summary.string() + "' --out-dir '" + (dir.path() / "f").string() + "'");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("shard " + std::to_string(k) + "/3"), std::string::npos) << r.output;
    auto const j = read_json(summary);
    cases += j.at("cases").get<std::uint64_t>();
    steps += j.at("steps").get<std::uint64_t>();
  }
  auto const whole = dir.path() / "whole.json";
  Result const r   = run("stress --seed 11 --cases 25 --json-summary '" + whole.string() +
                       "' --out-dir '" + (dir.path() / "f").string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  auto const j = read_json(whole);
  EXPECT_EQ(cases, 25u);
  EXPECT_EQ(j.at("cases").get<std::uint64_t>(), 25u);
  EXPECT_EQ(steps, j.at("steps").get<std::uint64_t>()) << "the same schedules, split three ways";
}

// Ctrl-C, SIGTERM (`timeout`, Slurm's time limit, `scancel`, a CI cancel) and SIGHUP (a dropped
// ssh session), on a runner of each CPU family that has one: the cases in flight finish, the
// summary and --json-summary are written, exit 130 (docs/cli.md "Exit statuses").
class StopSignal : public ::testing::TestWithParam<std::tuple<int, char const*>> {};

TEST_P(StopSignal, FinishesTheCasesPrintsTheSummaryAndExits130) {
  auto const [signal, runner] = GetParam();
  TempDir dir;
  auto const summary   = dir.path() / "summary.json";
  SignalledRun const r = run_and_signal(tool(),
                                        {"stress",
                                         "--runner",
                                         runner,
                                         "--seconds",
                                         "60",
                                         "--seed",
                                         "2",
                                         "--progress-every",
                                         "0.2",
                                         "--json-summary",
                                         summary.string(),
                                         "--out-dir",
                                         (dir.path() / "f").string()},
                                        "stress: elapsed",  // once cases are running
                                        signal);
  ASSERT_TRUE(r.sent) << r.output;
  ASSERT_TRUE(r.exited) << "killed by signal " << r.status << " instead of exiting\n" << r.output;
  EXPECT_EQ(r.status, 130) << r.output;
  EXPECT_LT(r.seconds, 30.0) << "it stopped well before its 60 s budget";
  EXPECT_NE(r.output.find("interrupted: finishing the cases in flight"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("stopped: interrupted"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("INTERRUPTED after"), std::string::npos) << r.output;
  auto const j = read_json(summary);
  EXPECT_EQ(j.at("result"), "INTERRUPTED");
  EXPECT_EQ(j.at("exit_status"), 130);
  EXPECT_GT(j.at("cases").get<std::uint64_t>(), 0u);
}

INSTANTIATE_TEST_SUITE_P(CliStress,
                         StopSignal,
                         ::testing::Combine(::testing::Values(SIGINT, SIGTERM, SIGHUP),
                                            ::testing::Values("model", "rw-cpu")),
                         [](auto const& info) {
                           int const sig            = std::get<0>(info.param);
                           std::string name         = sig == SIGINT    ? "SIGINT"
                                                      : sig == SIGTERM ? "SIGTERM"
                                                                       : "SIGHUP";
                           std::string const runner = std::get<1>(info.param);
                           return name + "_" + (runner == "model" ? "model" : "rw_cpu");
                         });

TEST(CliStress, OutputPathsAreCheckedBeforeAnyCaseRuns) {
  TempDir dir;
  std::ofstream(dir.path() / "plain") << "x";
  auto const start = std::chrono::steady_clock::now();
  Result const r   = run("stress --minutes 10 --seed 1 --out-dir '" +
                       (dir.path() / "plain" / "failures").string() + "'");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
  EXPECT_EQ(r.output.find("runner model"), std::string::npos) << "no case ran\n" << r.output;
  Result const j = run("stress --minutes 10 --seed 1 --json-summary '" +
                       (dir.path() / "missing" / "s.json").string() + "'");
  EXPECT_EQ(j.status, 2) << j.output;
  EXPECT_NE(j.output.find("does not exist"), std::string::npos) << j.output;
  // A directory that does not exist yet is fine (it is made when the first failure is saved).
  Result const ok = run("stress --seconds 0.5 --seed 1 --out-dir '" +
                        (dir.path() / "new" / "failures").string() + "'");
  EXPECT_EQ(ok.status, 0) << ok.output;
}

// ---------------------------------------------------------------------------------- run --junit

TEST(CliRun, JunitReportListsTheSuites) {
  TempDir dir;
  // A build folder of two tiny suites: one passes, one fails (shell scripts in gtest's words).
  auto const build = dir.path() / "build";
  std::filesystem::create_directories(build / "t");
  std::ofstream(build / "t" / "good") << "#!/bin/sh\necho '[  PASSED  ] 3 tests.'\n";
  std::ofstream(build / "t" / "bad") << "#!/bin/sh\necho '[  FAILED  ] 1 test, listed below:'\n"
                                        "exit 1\n";
  std::filesystem::permissions(build / "t" / "good", std::filesystem::perms::owner_all);
  std::filesystem::permissions(build / "t" / "bad", std::filesystem::perms::owner_all);
  std::ofstream(build / "cpu-tier.txt") << "t/good\nt/bad\n";
  std::ofstream(build / "gpu-tier.txt") << "";
  auto const xml = dir.path() / "run.xml";
  Result const r = run("run --cpu-only --stress-seconds 0 --rw-stress-seconds 0 --build-dir '" +
                       build.string() + "' --junit '" + xml.string() + "'");
  EXPECT_EQ(r.status, 1) << r.output;
  std::ifstream in(xml);
  std::string const text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("<testsuite name=\"heaplab.cpu\" tests=\"2\" failures=\"1\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<testcase classname=\"heaplab.cpu\" name=\"good\""), std::string::npos);
  EXPECT_NE(text.find("<failure message=\"FAIL\">FAIL: 1 failed; log: "), std::string::npos)
      << text;
  EXPECT_NE(text.find("<testsuite name=\"heaplab.gpu\" tests=\"0\""), std::string::npos) << text;
  EXPECT_NE(text.find("GPU tier skipped: --cpu-only"), std::string::npos) << text;
  Result const bad = run("run --junit /");
  EXPECT_EQ(bad.status, 2) << bad.output;
}

// --ran-earlier (tools/run-main-job's first stage): the listed suites are not run again, their rows
// read EARLIER and count as passed; the others run as ever (a failing one still fails the run).
TEST(CliRun, SuitesThatRanEarlierAreListedButNotRunAgain) {
  TempDir dir;
  auto const build = dir.path() / "build";
  std::filesystem::create_directories(build / "t");
  auto const ran = dir.path() / "ran";
  for (char const* name : {"first", "second"}) {
    std::ofstream(build / "t" / name) << "#!/bin/sh\necho " << name << " >> '" << ran.string()
                                      << "'\necho '[  PASSED  ] 2 tests.'\n";
    std::filesystem::permissions(build / "t" / name, std::filesystem::perms::owner_all);
  }
  std::ofstream(build / "cpu-tier.txt") << "t/first\nt/second\n";
  std::ofstream(build / "gpu-tier.txt") << "";
  std::ofstream(dir.path() / "earlier.txt") << "t/first\n";
  auto const xml         = dir.path() / "run.xml";
  std::string const args = "run --cpu-only --stress-seconds 0 --rw-stress-seconds 0 --build-dir '" +
                           build.string() + "' --junit '" + xml.string() + "' --ran-earlier '" +
                           (dir.path() / "earlier.txt").string() + "'";
  Result const r = run(args);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("t/first passed in the first stage; not run again"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("first                                cpu  EARLIER"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("ALL PASSED"), std::string::npos) << r.output;
  std::ifstream in(ran);
  std::string const which((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(which, "second\n") << "only the suite that did not run earlier runs";
  std::ifstream report(xml);
  std::string const text((std::istreambuf_iterator<char>(report)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("tests=\"2\" failures=\"0\""), std::string::npos) << text;
  EXPECT_NE(text.find("passed in the first stage (--ran-earlier); not run again"),
            std::string::npos)
      << text;
  // The others still decide: a failing second suite fails the run.
  std::ofstream(build / "t" / "second") << "#!/bin/sh\nexit 1\n";
  EXPECT_EQ(run(args).status, 1);
  Result const missing = run("run --cpu-only --build-dir '" + build.string() + "' --ran-earlier '" +
                             (dir.path() / "nothing.txt").string() + "'");
  EXPECT_EQ(missing.status, 2) << missing.output;
}

// SIGTERM to `heaplab run` (timeout, Slurm) while a suite runs: the suite goes with it instead of
// running on, orphaned and no longer bounded by the per-suite budget.
TEST(CliRun, ASuiteDoesNotOutliveAHeaplabRunThatWasKilled) {
  TempDir dir;
  auto const build = dir.path() / "build";
  std::filesystem::create_directories(build / "t");
  auto const pid_file = dir.path() / "suite.pid";
  std::ofstream(build / "t" / "slow")
      << "#!/bin/sh\necho $$ > '" << pid_file.string() << "'\nexec sleep 60\n";
  std::filesystem::permissions(build / "t" / "slow", std::filesystem::perms::owner_all);
  std::ofstream(build / "cpu-tier.txt") << "t/slow\n";
  std::ofstream(build / "gpu-tier.txt") << "";
  pid_t const heaplab = fork();
  ASSERT_GE(heaplab, 0);
  if (heaplab == 0) {
    int const null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    execl(tool().c_str(),
          tool().c_str(),
          "run",
          "--cpu-only",
          "--stress-seconds",
          "0",
          "--rw-stress-seconds",
          "0",
          "--build-dir",
          build.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_t suite = 0;  // the suite writes its pid once it runs
  for (int i = 0; i < 200 && suite == 0; ++i) {
    std::ifstream(pid_file) >> suite;
    if (suite == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(heaplab, SIGTERM);
  int status = 0;
  waitpid(heaplab, &status, 0);
  ASSERT_GT(suite, 0) << "the suite never started";
  auto const alive = [&] {
    std::ifstream stat("/proc/" + std::to_string(suite) + "/stat");
    std::string pid, comm, state;
    return static_cast<bool>(stat >> pid >> comm >> state) && state != "Z";
  };
  for (int i = 0; i < 100 && alive(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(alive()) << "the suite (pid " << suite << ") still runs after heaplab run died";
  if (alive()) kill(suite, SIGKILL);
}

// The tool's GPU probe against the tests' own (support/gpu_test.cpp, built with the CUDA runtime
// wherever nvcc was present): where the tests see a GPU, `heaplab run` must run the GPU tier. A
// tool that decided by a compile definition its own sources lack once skipped the whole GPU tier
// on an H100 ("this build has no CUDA runtime") and still said ALL PASSED.
TEST(CliRun, RunsTheGpuTierWhereverTheTestsSeeAGpu) {
  TempDir dir;
  auto const build = dir.path() / "build";
  std::filesystem::create_directories(build);
  std::ofstream(build / "cpu-tier.txt") << "";
  std::ofstream(build / "gpu-tier.txt") << "";
  Result const r =
      run("run --stress-seconds 0 --rw-stress-seconds 0 --gpu-stress-seconds 0 "
          "--bench-smoke false --apps-smoke false --build-dir '" +
          build.string() + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  auto const& gpu = heaplab::testing::gpu_info();
  if (gpu.available) {
    EXPECT_NE(r.output.find("GPU tier ran on " + gpu.name), std::string::npos) << r.output;
  } else {
    EXPECT_NE(r.output.find("GPU tier skipped: no CUDA device"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace heaplab::test
