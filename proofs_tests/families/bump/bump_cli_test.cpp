// End to end: heaplab built with the bump family and its planted runner (heaplab_with_bump:
// tools/heaplab/main.cpp, heaplab::cli and no line of generic code for bump) lists the family,
// stresses bump-cpu without a failure, finds the planted race of bump-cpu-planted and saves it as
// a failure file of family "bump", replays it (STILL FAILS; the reference passes), minimizes it
// to a smaller failure file that still fails, shows it, and refuses a malformed bump schedule
// with FILE:LINE:COLUMN and the field path. The tool is found relative to this test binary
// (HEAPLAB_TOOL_RELATIVE), as proofs_tests/tools/support/cli_support.hpp does.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bump_family.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "run_command.hpp"

#if !defined(HEAPLAB_TOOL_RELATIVE)
#error "HEAPLAB_TOOL_RELATIVE must name heaplab_with_bump (proofs_tests/families/bump)"
#endif

namespace heaplab::bump_family {
namespace {

namespace fs = std::filesystem;

std::string const& tool() {
  static std::string const path = test::beside_test_binary(HEAPLAB_TOOL_RELATIVE);
  return path;
}

using test::Result;

/// Runs the tool with `args` (a shell command line), stdout and stderr together.
Result run(std::string const& args) {
  return test::run_command("'" + tool() + "' " + args + " 2>&1");
}

bool has(Result const& r, std::string const& text) {
  return r.output.find(text) != std::string::npos;
}

/// A fresh empty directory, removed with the object.
class TempDir {
 public:
  explicit TempDir(std::string const& name) {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("heaplab-bump-" + name + "-" + std::to_string(rd()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(TempDir const&)            = delete;
  TempDir& operator=(TempDir const&) = delete;
  [[nodiscard]] fs::path const& path() const { return path_; }
  [[nodiscard]] std::string operator/(std::string const& name) const {
    return (path_ / name).string();
  }
  [[nodiscard]] std::vector<fs::path> json_files() const {
    std::vector<fs::path> out;
    for (auto const& e : fs::directory_iterator(path_))
      if (e.path().extension() == ".json") out.push_back(e.path());
    return out;
  }

 private:
  fs::path path_;
};

TEST(BumpCli, ListsTheFamilyItsRunnersAndItsInvariants) {
  auto const f = run("families");
  ASSERT_EQ(f.status, 0) << f.output;
  for (char const* text : {"bump",
                           "heaplab-bump-schedule",
                           "bump-model",
                           "bump-cpu",
                           "bump-cpu-planted",
                           "heap",
                           "rw"})
    EXPECT_TRUE(has(f, text)) << text << " missing in:\n" << f.output;
  auto const inv = run("list-invariants");
  ASSERT_EQ(inv.status, 0) << inv.output;
  EXPECT_TRUE(has(inv, "bump-disjoint")) << inv.output;
  EXPECT_TRUE(has(inv, "bump-free-all-resets")) << inv.output;
}

TEST(BumpCli, StressOfTheRealAllocatorPasses) {
  TempDir const d("pass");
  auto const r =
      run("stress --runner bump-cpu --cases 200 --seed 1 -q --out-dir " + d.path().string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "PASSED, no failures (seed 1)")) << r.output;
  EXPECT_TRUE(has(r, "coverage: alloc waves by threads:")) << r.output;
  EXPECT_TRUE(d.json_files().empty());
}

TEST(BumpCli, ThePlantedRaceIsFoundReplayedMinimizedAndShown) {
  TempDir const d("planted");
  auto const s =
      run("stress --runner bump-cpu-planted --cases 200 --seed 1 --max-failures 1 -q "
          "--out-dir " +
          d.path().string());
  ASSERT_EQ(s.status, 1) << s.output;
  EXPECT_TRUE(has(s, "FAILED, 1 failure")) << s.output;
  auto const files = d.json_files();
  ASSERT_EQ(files.size(), 1u) << s.output;
  std::string const file      = files.front().string();
  runner::FailureFile const f = runner::load_failure(file);
  EXPECT_EQ(f.family().name(), "bump");
  EXPECT_EQ(f.runner, "bump-cpu-planted");
  EXPECT_EQ(f.failure.check, "bump-disjoint");
  std::ifstream in(file);
  std::string const text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"family\": \"bump\""), std::string::npos) << text;

  auto const still = run("replay --reruns 20 " + file);
  EXPECT_EQ(still.status, 1) << still.output;
  EXPECT_TRUE(has(still, "STILL FAILS")) << still.output;
  EXPECT_TRUE(has(still, "bump-model side passed")) << still.output;

  // The reference alone: it passes. The recorded runner was not asked for, so replay says the
  // recorded failure was not checked (exit 4); the schedule file alone passes (exit 0).
  auto const model = run("replay --runner bump-model " + file);
  EXPECT_EQ(model.status, 4) << model.output;
  EXPECT_TRUE(has(model, "bump-model side passed")) << model.output;
  EXPECT_TRUE(has(model, "NOT CHECKED")) << model.output;
  std::ofstream(d / "schedule.json") << dump(BumpFamily::unwrap(f.schedule));
  auto const sched = run("replay --runner bump-model " + (d / "schedule.json"));
  EXPECT_EQ(sched.status, 0) << sched.output;
  EXPECT_TRUE(has(sched, "replay passed")) << sched.output;

  auto const m = run("minimize " + file + " -o " + (d / "min.out"));
  ASSERT_EQ(m.status, 0) << m.output;
  runner::FailureFile const small = runner::load_failure(d / "min.out");
  EXPECT_EQ(small.origin.command, "minimize");
  EXPECT_EQ(small.failure.check, "bump-disjoint");
  BumpSchedule const& before = BumpFamily::unwrap(f.schedule);
  BumpSchedule const& after  = BumpFamily::unwrap(small.schedule);
  EXPECT_LE(after.steps.size(), before.steps.size());
  EXPECT_LE(after.arena, before.arena);
  EXPECT_LT(dump(after).size(), dump(before).size()) << m.output;
  auto const again = run("replay --reruns 20 " + (d / "min.out"));
  EXPECT_EQ(again.status, 1) << again.output;
  EXPECT_TRUE(has(again, "STILL FAILS")) << again.output;

  auto const shown = run("show " + file);
  EXPECT_EQ(shown.status, 0) << shown.output;
  EXPECT_TRUE(has(shown, "runner bump-cpu-planted")) << shown.output;
  EXPECT_TRUE(has(shown, "arena: " + std::to_string(before.arena) + " bytes")) << shown.output;
  EXPECT_TRUE(has(shown, "0: " + describe(before.steps.front()))) << shown.output;
  auto const json = run("show --json " + file);
  EXPECT_EQ(json.status, 0) << json.output;
  EXPECT_EQ(runner::parse_failure(json.output), f);
}

/// A valid bump schedule: one wave of two threads on a 64-byte arena.
BumpSchedule one_wave() {
  BumpSchedule s;
  s.arena = 64;
  BumpAlloc a;
  a.threads = 2;
  s.steps   = {a};
  return s;
}

TEST(BumpCli, ARunnerLeftUnusableByACrashEndsTheReplayWithTheFilesVerdict) {
  TempDir const d("lost");
  std::ofstream(d / "a.json") << dump(one_wave());
  std::ofstream(d / "b.json") << dump(one_wave());
  // One file: it fails (exit 1, the crash's verdict, not a hang's 3); the model side never runs.
  auto const one = run("replay --runner bump-cpu-lost --runner bump-model " + (d / "a.json"));
  EXPECT_EQ(one.status, 1) << one.output;
  EXPECT_TRUE(has(one, "cannot be used again in this process")) << one.output;
  EXPECT_FALSE(has(one, "bump-model side")) << one.output;
  EXPECT_TRUE(has(one, "ending the process (exit status 1)")) << one.output;
  EXPECT_FALSE(has(one, "a kernel hung")) << one.output;
  // A folder: the first file's replay ends the process; the second is not replayed.
  auto const folder =
      run("replay --runner bump-cpu-lost --junit " + (d / "r.xml") + " " + d.path().string());
  EXPECT_EQ(folder.status, 1) << folder.output;
  EXPECT_TRUE(has(folder, "1 of 2 files replayed")) << folder.output;
  std::ifstream in(d / "r.xml");
  std::string const xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(xml.find("not replayed: a hang or an unusable runner"), std::string::npos) << xml;
}

TEST(BumpCli, AMalformedBumpScheduleIsAPositionedUsageError) {
  TempDir const d("bad");
  std::string text = dump(one_wave());
  text.replace(text.find("\"align\""), 7, "\"aling\"");
  std::ofstream(d / "bad.json") << text;
  for (char const* cmd : {"replay", "show", "minimize"}) {
    auto const r = run(std::string(cmd) + " " + (d / "bad.json"));
    EXPECT_EQ(r.status, 2) << cmd << ": " << r.output;
    EXPECT_TRUE(has(r,
                    "bad.json:11:16: steps[0].aling: unknown key 'aling' (did you mean "
                    "'align'?)"))
        << cmd << ": " << r.output;
  }
}

}  // namespace
}  // namespace heaplab::bump_family
