// The heaplab command line: stress (plain progress lines without a terminal, the \r line with
// one), replay of failure files, minimize, and the "GPU runner not available" path.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>

#include "cli_support.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/schedule/json.hpp"

namespace heaplab::test {
namespace {

TEST(Cli, StressWithoutATerminalPrintsPlainProgressLinesAndPasses) {
  TempDir dir;
  auto const out = dir.path() / "failures";
  Result const r =
      run("stress --seconds 3 --seed 5 --progress-every 1 --out-dir '" + out.string() + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find('\r'), std::string::npos) << "no carriage returns without a terminal";
  EXPECT_GE(count(r.output, "\nstress: elapsed"), 3u) << r.output;
  std::regex const line(
      "stress: elapsed +[0-9.]+ s \\| cases [0-9,]+ \\| steps [0-9,]+ \\| live [0-9,]+ \\| "
      "heap fill +[0-9.]+% \\| defrags [0-9,]+ \\| failures 0");
  EXPECT_TRUE(std::regex_search(r.output, line)) << r.output;
  EXPECT_NE(r.output.find("runner model (family heap), profile small"), std::string::npos);
  EXPECT_NE(r.output.find("seed 5"), std::string::npos);
  EXPECT_NE(r.output.find("heaplab stress: PASSED, no failures (seed 5)"), std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(Cli, StressOnATerminalUpdatesOneLineInPlace) {
  TempDir dir;
  Result const r = run_on_terminal(
      {"stress", "--seconds", "2", "--seed", "5", "--out-dir", (dir.path() / "failures").string()});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_GE(count(r.output, "\relapsed"), 3u) << r.output;
  EXPECT_EQ(count(r.output, "\nstress: elapsed"), 1u) << "only the final line is a plain line";
}

TEST(Cli, StressHelpExplainsTheOptions) {
  Result const r = run("stress --help");
  EXPECT_EQ(r.status, 0);
  for (char const* option : {"--minutes",
                             "--seed",
                             "--heap-mib",
                             "--profile",
                             "--runner",
                             "--cases",
                             "--out-dir",
                             "--jobs",
                             "near-oom",
                             "shard",
                             "Exit status"})
    EXPECT_NE(r.output.find(option), std::string::npos) << option << "\n" << r.output;
}

TEST(Cli, StressOnTheGpuRunnerSaysWhyItCannotRun) {
  std::string const reason = runner::unavailable_reason("gpu");
  if (reason.empty()) GTEST_SKIP() << "the GPU runner is built in this heaplab";
  Result const r = run("stress --seconds 1 --runner gpu");
  EXPECT_EQ(r.status, 4) << "not checked: no GPU runner here\n" << r.output;
  EXPECT_NE(r.output.find("SKIPPED: nothing was tested: --runner gpu: " + reason),
            std::string::npos)
      << r.output;
}

// Issue 36, finding 9: no usable GPU means nothing was tested (exit 4), for stress as for replay,
// heaplab_bench and heaplab_apps, whether or not the GPU runner is built.
TEST(Cli, StressOnTheGpuRunnerWithoutAUsableGpuTestedNothing) {
  Result const r = run("stress --seconds 1 --runner gpu", "CUDA_VISIBLE_DEVICES=-1 ");
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_NE(r.output.find("heaplab stress: SKIPPED: nothing was tested: --runner gpu: "),
            std::string::npos)
      << r.output;
}

TEST(Cli, ReplayOfAFailureFileRunsTheModelSaysWhyNotTheGpuAndReproduces) {
  TempDir dir;
  auto const file = digest_failure_file(dir);
  Result const r  = run("replay '" + file.string() + "'");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("failure file, 4 steps"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("recorded failure: step 2, digest_mismatch, check graph-digest"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("step 0: alloc Node"), std::string::npos) << "each step is printed";
  EXPECT_NE(r.output.find("FIRST FAILURE at step 2"), std::string::npos) << r.output;
  EXPECT_NE(
      r.output.find("reproduced: the recorded failure (step 2, digest_mismatch, graph-digest)"),
      std::string::npos)
      << r.output;
  if (!runner::unavailable_reason("gpu").empty()) {
    EXPECT_NE(r.output.find("gpu side: not run: " + runner::unavailable_reason("gpu")),
              std::string::npos)
        << r.output;
  }
}

TEST(Cli, ReplayOfAFileFromAnUnknownRunnerRunsTheModelAndSaysItIsNotChecked) {
  TempDir dir;
  runner::FailureFile const f =
      heap_failure("fake-broken",
                   {3, runner::FailureKind::divergence, "snapshot-diff", "planted"},
                   "model/data/wator.json");
  auto const path = dir.path() / "fake.json";
  runner::write_failure(f, path);
  Result const r = run("replay -q '" + path.string() + "'");
  EXPECT_EQ(r.status, 4) << "the runner that recorded the failure did not run\n" << r.output;
  EXPECT_NE(r.output.find("fake-broken side: not run: unknown runner 'fake-broken'"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("the recorded failure (runner fake-broken) did not reproduce on model"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("NOT CHECKED: the recorded failure came from the fake-broken runner"),
            std::string::npos)
      << r.output;
}

TEST(Cli, ReplayModelStillWorksAndExplicitGpuIsAnError) {
  Result const ok = run("replay --model '" + data_file("model/data/wator.json").string() + "'");
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("replay passed: 20 steps"), std::string::npos);
  EXPECT_EQ(ok.output.find("gpu side"), std::string::npos) << "--model runs the model only";
  if (runner::unavailable_reason("gpu").empty()) return;
  Result const gpu =
      run("replay --runner gpu '" + data_file("model/data/wator.json").string() + "'");
  EXPECT_EQ(gpu.status, 2) << gpu.output;
}

TEST(Cli, ReplayOnTheDifferentialModelRunnerPassesASample) {
  Result const r = run("replay -q --runner differential-model '" +
                       data_file("model/data/wator.json").string() + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("replay passed: 20 steps, every check held after every step "
                          "(differential-model)"),
            std::string::npos)
      << r.output;
}

TEST(Cli, MinimizeWritesASmallerFailureFileThatReplays) {
  TempDir dir;
  auto const file = digest_failure_file(dir);
  auto const out  = dir.path() / "small.json";
  Result const r  = run("minimize '" + file.string() + "' -o '" + out.string() + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("steps 4 -> 1"), std::string::npos) << r.output;
  auto const small = runner::load_failure(out);
  EXPECT_EQ(heap_schedule(small).steps.size(), 1u);
  EXPECT_EQ(small.origin.command, "minimize");
  EXPECT_EQ(small.origin.original_steps, std::optional<std::uint64_t>(4));
  EXPECT_EQ(small.failure.kind, runner::FailureKind::digest_mismatch);
  Result const replayed = run("replay --model '" + out.string() + "'");
  EXPECT_EQ(replayed.status, 1) << replayed.output;
  EXPECT_NE(replayed.output.find("reproduced"), std::string::npos) << replayed.output;
}

TEST(Cli, MinimizeOfAPassingScheduleSaysSo) {
  Result const r =
      run("minimize '" + data_file("model/data/wator.json").string() + "' -o /dev/null");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("nothing to minimize: the input does not fail"), std::string::npos)
      << r.output;
}

TEST(Cli, MalformedFilesExitWithStatusTwoAndAPosition) {
  TempDir dir;
  auto const bad = dir.path() / "bad.json";
  std::ofstream(bad) << "{\"format\": \"heaplab-failure\", \"version\": 1, \"runer\": 3}";
  for (char const* cmd : {"replay", "minimize", "show"}) {
    Result const r = run(std::string(cmd) + " '" + bad.string() + "'");
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find("bad.json:1:"), std::string::npos) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find("unknown key 'runer' (did you mean 'runner'?)"), std::string::npos)
        << cmd << "\n"
        << r.output;
  }
}

TEST(Cli, ShowPrintsAFailureFile) {
  TempDir dir;
  auto const file = digest_failure_file(dir);
  Result const r  = run("show '" + file.string() + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("recorded failure: step 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("steps (4):"), std::string::npos) << r.output;
  Result const json = run("show --json '" + file.string() + "'");
  EXPECT_EQ(json.status, 0);
  EXPECT_EQ(runner::parse_failure(json.output), runner::load_failure(file));
}

}  // namespace
}  // namespace heaplab::test
