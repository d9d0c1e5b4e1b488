// heaplab stress / replay / minimize / show with the random-walk runners (docs/rw.md "Schedules
// and runners", docs/cli.md): the real tool passes, the tool built with the planted bug
// rw_returns_page_beyond_pool (tools/CMakeLists.txt) fails, its failure file replays as STILL
// FAILS there (and FIXED on the real tool), minimizes to one small wave, and a failure file of
// a runner that cannot run here is NOT CHECKED, never "passed".
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>

#include "cli_support.hpp"
#include "heaplab/families/rw/family.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/schedule/json.hpp"
#include "heaplab/schedule/rw_json.hpp"

#if !defined(HEAPLAB_MUTANT_TOOL_RELATIVE)
#error \
    "HEAPLAB_MUTANT_TOOL_RELATIVE must name the mutant heaplab (proofs_tests/tools/CMakeLists.txt)"
#endif

namespace hs = heaplab::schedule;
namespace hr = heaplab::runner;
using heaplab::test::run;

namespace {

std::string const& mutant_tool() {
  static std::string const path = heaplab::test::beside_test_binary(HEAPLAB_MUTANT_TOOL_RELATIVE);
  return path;
}

/// Runs the mutant tool (stdout and stderr together).
heaplab::test::Result run_mutant(std::string const& args) {
  return heaplab::test::run_command("'" + mutant_tool() + "' " + args + " 2>&1");
}

std::filesystem::path fresh_dir(std::string const& name) {
  auto const d = std::filesystem::temp_directory_path() / ("heaplab_rw_cli_" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

hs::RwSchedule const& rw_schedule(hr::FailureFile const& f) {
  return heaplab::rw_family::RwFamily::unwrap(f.schedule);
}

std::vector<std::filesystem::path> json_files(std::filesystem::path const& dir) {
  std::vector<std::filesystem::path> out;
  for (auto const& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") out.push_back(e.path());
  return out;
}

}  // namespace

TEST(RwCli, StressPassesOnTheRealPoolAndRwGpuSaysWhyItCannotRun) {
  auto const d = fresh_dir("pass");
  for (char const* runner : {"rw-cpu", "rw-model"}) {
    auto const r = run(std::string("stress --runner ") + runner +
                       " --seed 4 --cases 30 -q --out-dir " + d.string());
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("PASSED, no failures (seed 4)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("coverage: alloc waves by algorithm:"), std::string::npos);
  }
  EXPECT_TRUE(json_files(d).empty());
  // rw-gpu: where no GPU is present (CI), the stress says why and exits 4 (not checked: nothing
  // was tested) without running.
  if (!hr::unavailable_reason("rw-gpu").empty()) {
    auto const gpu = run("stress --runner rw-gpu --seconds 1 --out-dir " + d.string());
    EXPECT_EQ(gpu.status, 4) << gpu.output;
    EXPECT_NE(gpu.output.find(hr::unavailable_reason("rw-gpu")), std::string::npos) << gpu.output;
  }
}

TEST(RwCli, APlantedBugIsFoundReplaysAsStillFailsAndMinimizes) {
  auto const d = fresh_dir("mutant");
  auto const s = run_mutant(
      "stress --runner rw-cpu --seed 1 --cases 50 --max-failures 1 -q "
      "--out-dir " +
      d.string());
  ASSERT_EQ(s.status, 1) << s.output;
  EXPECT_NE(s.output.find("FAILED, 1 failure"), std::string::npos) << s.output;
  auto const files = json_files(d);
  ASSERT_EQ(files.size(), 1u) << s.output;
  auto const f = hr::load_failure(files.front());
  EXPECT_EQ(f.family().name(), "rw");
  EXPECT_EQ(f.runner, "rw-cpu");
  EXPECT_EQ(f.failure.check, "rw-no-page-beyond-pool");
  EXPECT_NE(rw_schedule(f).pool.num_pages % rw_schedule(f).pool.word_bits, 0u);

  auto const still = run_mutant("replay " + files.front().string());
  EXPECT_EQ(still.status, 1) << still.output;
  EXPECT_NE(still.output.find("STILL FAILS"), std::string::npos) << still.output;
  auto const fixed = run("replay " + files.front().string());
  EXPECT_EQ(fixed.status, 0) << fixed.output;
  EXPECT_NE(fixed.output.find("FIXED"), std::string::npos) << fixed.output;

  auto const min_path = d / "min.out";
  auto const m = run_mutant("minimize " + files.front().string() + " -o " + min_path.string());
  ASSERT_EQ(m.status, 0) << m.output;
  auto const small = hr::load_failure(min_path);
  EXPECT_EQ(rw_schedule(small).steps.size(), 1u) << m.output;
  EXPECT_EQ(small.origin.command, "minimize");
  EXPECT_EQ(small.failure.check, "rw-no-page-beyond-pool");
  EXPECT_LE(rw_schedule(small).pool.num_pages, rw_schedule(f).pool.num_pages);
  if (auto const* a = std::get_if<hs::RwAllocWave>(&rw_schedule(small).steps[0])) {
    EXPECT_EQ(a->threads, 1u);
  }
  auto const again = run_mutant("replay " + min_path.string());
  EXPECT_EQ(again.status, 1) << again.output;
  EXPECT_NE(again.output.find("STILL FAILS"), std::string::npos) << again.output;
}

TEST(RwCli, AFailureOfARunnerThatCannotRunHereIsNotChecked) {
  auto const d = fresh_dir("gpu");
  hr::FailureFile f;
  f.created        = "2026-11-25T10:00:00Z";
  f.runner         = "rw-gpu";
  f.gpu            = "NVIDIA H100";
  f.origin.command = "test";
  hs::RwSchedule sched;
  sched.pool.num_pages = 64;
  sched.steps.push_back(hs::RwAllocWave{});
  f.schedule      = heaplab::rw_family::family().wrap(sched);
  f.failure       = {0, hr::FailureKind::divergence, "rw-getpage-refinement", "wave 0 thread 3: x"};
  auto const path = hr::save_failure(f, d);
  // No GPU visible to the tool, so rw-gpu cannot run here on any machine (a GPU box too).
  std::string const no_gpu = "CUDA_VISIBLE_DEVICES=-1 ";
  auto const r             = run("replay " + path.string(), no_gpu);
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_NE(r.output.find("NOT CHECKED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("could not run here"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("passed on"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rw-model side passed"), std::string::npos) << r.output;

  // Asked for explicitly, a runner that cannot run is a usage error.
  auto const asked = run("replay --runner rw-gpu " + path.string(), no_gpu);
  EXPECT_EQ(asked.status, 2) << asked.output;

  auto const shown = run("show " + path.string());
  EXPECT_EQ(shown.status, 0) << shown.output;
  EXPECT_NE(shown.output.find("runner rw-gpu"), std::string::npos) << shown.output;
  auto const json = run("show --json " + path.string());
  EXPECT_EQ(hr::parse_failure(json.output), f);
}

TEST(RwCli, AMalformedRwFileIsAPositionedUsageError) {
  auto const d = fresh_dir("bad");
  hs::RwSchedule s;
  s.steps.push_back(hs::RwFreeWave{});
  std::string text = hs::dump(s);
  text.replace(text.find("\"word_bits\""), 11, "\"word_bist\"");
  std::ofstream(d / "bad.json") << text;
  for (char const* cmd : {"replay", "show", "minimize"}) {
    auto const r = run(std::string(cmd) + " " + (d / "bad.json").string());
    EXPECT_EQ(r.status, 2) << cmd << ": " << r.output;
    EXPECT_NE(r.output.find("bad.json:7:18: pool.word_bist: unknown key 'word_bist' (did you mean "
                            "'word_bits'?)"),
              std::string::npos)
        << cmd << ": " << r.output;
  }
}

namespace {

/// A stress run of the planted pool, which fails in every case and so saves failure files all the
/// time, stopped by `signal` at its first failure line (other workers are then saving theirs).
heaplab::test::SignalledRun stress_stopped_while_saving(std::filesystem::path const& dir,
                                                        int signal) {
  return heaplab::test::run_and_signal(mutant_tool(),
                                       {"stress",
                                        "--runner",
                                        "rw-cpu",
                                        "--seed",
                                        "3",
                                        "--seconds",
                                        "60",
                                        "--max-failures",
                                        "100000",
                                        "--out-dir",
                                        (dir / "f").string(),
                                        "--json-summary",
                                        (dir / "summary.json").string()},
                                       "FAILURE",
                                       signal);
}

/// Every failure file in `dir` is whole: it loads, with its schedule.
void expect_every_failure_file_whole(std::filesystem::path const& dir) {
  for (auto const& f : json_files(dir)) {
    EXPECT_GT(std::filesystem::file_size(f), 0u) << f;
    EXPECT_NO_THROW((void)hr::load_failure(f)) << f;
  }
}

std::size_t tmp_files(std::filesystem::path const& dir) {
  std::size_t n = 0;
  for (auto const& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".tmp") ++n;
  return n;
}

}  // namespace

// SIGTERM or SIGHUP while failure files are being saved: the saves in flight complete, every file
// loads, no .tmp is left, and the summary is written: FAILED (exit 1, failures come before the
// interruption), stopped by the interruption (docs/cli.md).
TEST(RwCli, StopSignalsWhileSavingLoseNoFailureFile) {
  for (int const signal : {SIGTERM, SIGHUP}) {
    auto const d = fresh_dir("stop_while_saving_" + std::to_string(signal));
    auto const r = stress_stopped_while_saving(d, signal);
    ASSERT_TRUE(r.sent) << r.output;
    ASSERT_TRUE(r.exited) << "killed by signal " << r.status << "\n" << r.output;
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("stopped: interrupted"), std::string::npos) << r.output;
    auto const files = json_files(d / "f");
    EXPECT_FALSE(files.empty()) << r.output;
    EXPECT_EQ(heaplab::test::count(r.output, "failure file:"), files.size()) << r.output;
    expect_every_failure_file_whole(d / "f");
    EXPECT_EQ(tmp_files(d / "f"), 0u);
    auto const summary = hs::parse_document(hs::read_text_file(d / "summary.json"));
    EXPECT_EQ(summary.at("result"), "FAILED");
    EXPECT_EQ(summary.at("stop_reason"), "interrupted");
    EXPECT_EQ(summary.at("failures").size(), files.size());
  }
}

// kill -9 while failure files are being saved (nothing can finish a save then): still no empty or
// partial NAME.json, because a file gets its name only once its text is complete (a .tmp may
// stay, and replay reads only .json files).
TEST(RwCli, KillDuringSavesLeavesNoPartialFailureFile) {
  for (int round = 0; round < 3; ++round) {
    auto const d = fresh_dir("kill_while_saving_" + std::to_string(round));
    auto const r = stress_stopped_while_saving(d, SIGKILL);
    ASSERT_TRUE(r.sent) << r.output;
    EXPECT_FALSE(r.exited);
    expect_every_failure_file_whole(d / "f");
    auto const replay = run("replay " + (d / "f").string());
    EXPECT_NE(replay.status, 2) << "every file in the folder must load\n" << replay.output;
  }
}
