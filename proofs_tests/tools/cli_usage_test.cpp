// The command line as a new user and a hostile input try it (issue 36): each test is a finding
// that failed on the tool before its fix — an option or value that was taken silently, a wrong
// exit status, a message that hid the problem. docs/cli.md "Options and numbers" and "Exit
// statuses" are what these hold the tool to.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.hpp"

namespace heaplab::test {
namespace {

bool has(Result const& r, std::string const& text) {
  return r.output.find(text) != std::string::npos;
}

// Finding 11: an unknown option before the command, with a suggestion; -V and `version`.
TEST(CliUsage, AMistypedTopLevelOptionIsAnUnknownOptionWithASuggestion) {
  Result const r = run("--versoin");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "unknown option '--versoin' (did you mean '--version'?)")) << r.output;
  EXPECT_FALSE(has(r, "a command is required")) << r.output;
  Result const q = run("-x stress");
  EXPECT_EQ(q.status, 2) << q.output;
  EXPECT_TRUE(has(q, "unknown option '-x'")) << q.output;
}

TEST(CliUsage, VersionIsAnOptionAShortOptionAndACommand) {
  for (char const* args : {"--version", "-V", "version"}) {
    Result const r = run(args);
    EXPECT_EQ(r.status, 0) << args << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("heaplab ", 0), 0u) << args << "\n" << r.output;
    EXPECT_TRUE(has(r, "\ncommit: ")) << args << "\n" << r.output;
  }
}

// Finding 12: a case of another shard is a usage error that says so, not an internal assertion.
TEST(CliUsage, ACaseOfAnotherShardIsAUsageErrorWithoutInternals) {
  Result const r = run("stress --seed 5 --case 7 --shard 0/2 --dump");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "--case 7 belongs to shard 1/2, not to --shard 0/2")) << r.output;
  EXPECT_FALSE(has(r, ".cpp")) << "no source path in a usage error:\n" << r.output;
  EXPECT_FALSE(has(r, "expects")) << r.output;
  Result const ok = run("stress --seed 5 --case 7 --shard 1/2 --dump");
  EXPECT_EQ(ok.status, 0) << ok.output;
}

// Finding 14: two output formats that exclude each other are refused, not one silently picked.
TEST(CliUsage, ListInvariantsRefusesNamesWithMarkdown) {
  Result const r = run("list-invariants --names --markdown");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "--markdown excludes --names") || has(r, "--names excludes --markdown"))
      << r.output;
}

// Finding 21: a boolean option takes true/false (1/0, on/off, yes/no) and nothing else.
TEST(CliUsage, BooleanOptionsRefuseEmptyNumbersAndNegatives) {
  for (char const* value : {"''", "2", "-1", "maybe"}) {
    for (char const* option : {"--bench-smoke", "--apps-smoke"}) {
      Result const r = run(std::string("run --build-dir /nonexistent ") + option + " " + value);
      EXPECT_EQ(r.status, 2) << option << " " << value << "\n" << r.output;
      EXPECT_TRUE(has(r, "expected true or false")) << option << " " << value << "\n" << r.output;
    }
  }
  // A good value gets past the option checks (to the missing build folder).
  Result const r = run("run --build-dir /nonexistent --bench-smoke off");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "cpu-tier.txt not found")) << r.output;
}

// Finding 22: durations are decimal numbers (docs/cli.md), not hexadecimal or padded.
TEST(CliUsage, DurationsRefuseHexadecimalAndBlanks) {
  for (char const* value : {"0x10", "0X1p3", "' 5'", "5e", "infinity"}) {
    Result const r = run(std::string("stress --minutes ") + value + " --seed 1");
    EXPECT_EQ(r.status, 2) << value << "\n" << r.output;
    EXPECT_TRUE(has(r, "expected a number in")) << value << "\n" << r.output;
  }
}

// Finding 6: a summary that was asked for and could not be written is not a success.
TEST(CliUsage, AJsonSummaryThatCannotBeWrittenFailsTheRun) {
  TempDir dir;
  Result const r = run("stress --seconds 0.5 --seed 1 --json-summary /dev/full --out-dir '" +
                       dir.path().string() + "'");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "the JSON summary was not written")) << r.output;
}

// Finding 18: --json-summary is written for every family's runners, the rw ones included.
TEST(CliUsage, AJsonSummaryIsWrittenForTheRandomWalkRunners) {
  TempDir dir;
  auto const summary = dir.path() / "summary.json";
  Result const r     = run("stress --runner rw-model --seconds 0.5 --seed 1 --json-summary '" +
                       summary.string() + "' --out-dir '" + dir.path().string() + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  std::ifstream in(summary);
  ASSERT_TRUE(in.good()) << "no summary written:\n" << r.output;
  auto const j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("family"), "rw") << j.dump(2);
  EXPECT_EQ(j.at("options").at("runner"), "rw-model") << j.dump(2);
  EXPECT_EQ(j.at("result"), "PASSED") << j.dump(2);
}

// Finding 7: a budget that ends before the input ran checked nothing: exit 4, not "does not fail".
TEST(CliUsage, MinimizeWhoseBudgetEndsBeforeTheFirstRunCheckedNothing) {
  TempDir dir;
  Result const r = run("minimize '" + data_file("model/data/fails_digest.json").string() +
                       "' --minutes 1e-300 -o '" + (dir.path() / "out.json").string() + "'");
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_TRUE(has(r, "nothing was checked: the budget ended before the input was run")) << r.output;
  EXPECT_FALSE(has(r, "does not fail")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out.json"));
}

// Finding 8: an output folder where no file can be created is refused before the run, even where
// access() says yes (root and /proc).
TEST(CliUsage, AnOutputFolderWhereNoFileCanBeCreatedIsRefused) {
  Result const r = run("stress --seconds 1 --seed 1 --out-dir /proc/heaplab-test-x");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "--out-dir '/proc/heaplab-test-x'")) << r.output;
  EXPECT_TRUE(has(r, "not writable")) << r.output;
}

// Finding 13: a failure file without its schedule names the missing field once, where it is.
TEST(CliUsage, AFailureFileWithoutAScheduleSaysWhichFieldIsMissing) {
  TempDir dir;
  auto const file = digest_failure_file(dir);
  nlohmann::json j;
  {
    std::ifstream in(file);
    j = nlohmann::json::parse(in);
  }
  j.erase("schedule");
  auto const broken = dir.path() / "no-schedule.json";
  std::ofstream(broken) << j.dump(2);
  for (char const* cmd : {"show", "replay", "minimize"}) {
    Result const r = run(std::string(cmd) + " '" + broken.string() + "'");
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.output;
    EXPECT_TRUE(has(r, "no-schedule.json:")) << cmd << "\n" << r.output;
    EXPECT_TRUE(has(r, ": schedule: missing required field 'schedule'")) << cmd << "\n" << r.output;
    EXPECT_FALSE(has(r, "schedule.schedule")) << cmd << "\n" << r.output;
  }
}

// Finding 23: a suite whose binary was not built is NOT BUILT, points to no log, and is not
// counted as a suite that ran.
TEST(CliUsage, RunSaysWhichSuitesWereNotBuiltAndDoesNotCountThemAsRun) {
  TempDir dir;
  std::ofstream(dir.path() / "cpu-tier.txt") << "proofs_tests/nowhere/never_built_test\n";
  Result const r = run("run --cpu-only --stress-seconds 0 --rw-stress-seconds 0 --build-dir '" +
                       dir.path().string() + "'");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "never_built_test")) << r.output;
  EXPECT_TRUE(has(r, "NOT BUILT")) << r.output;
  EXPECT_TRUE(
      has(r, "not built: " + (dir.path() / "proofs_tests/nowhere/never_built_test").string()))
      << r.output;
  EXPECT_FALSE(has(r, "log: ")) << "no log exists for a suite that did not run:\n" << r.output;
  EXPECT_TRUE(has(r, "CPU tier ran (0 suites, 1 not built)")) << r.output;
}

// Docs drift of issue 36: under a file size limit (ulimit -f) minimize says which file it could
// not write (SIGXFSZ used to end it without a word, status 153) and leaves no partial file.
TEST(CliUsage, AFileSizeLimitIsAnErrorThatNamesTheFileNotASilentDeath) {
  TempDir dir;
  auto const out = dir.path() / "small.json";
  Result const r = run_command("ulimit -f 0 && '" + tool() + "' minimize '" +
                               data_file("model/data/fails_digest.json").string() + "' -q -o '" +
                               out.string() + "' 2>&1");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "File too large")) << r.output;
  EXPECT_TRUE(has(r, out.string() + " was not written")) << r.output;
  for (auto const& entry : std::filesystem::directory_iterator(dir.path()))
    ADD_FAILURE() << "left behind: " << entry.path();
}

/// One alloc wave of 2^20 threads x `count` Node objects on M = 65536 (the format's limits).
std::string huge_wave(std::uint32_t count) {
  return R"({"format": "heaplab-schedule", "version": 1, "description": "huge",)"
         R"( "config": {"types": [{"name": "Node", "size": 8, "pointers": []}],)"
         R"( "num_blocks": 65536, "n": 1, "k1": 0},)"
         R"( "steps": [{"op": "alloc", "type": "Node", "threads": 1048576, "count": )" +
         std::to_string(count) + "}]}";
}

// Finding 4: a 300-byte schedule asking for 2^20 x 64 allocations (59 s and 7.7 GB on the model
// before) is refused when it is loaded, by the work budget: exit 2, at once, in little memory.
TEST(CliUsage, AScheduleBeyondTheWorkBudgetIsRefusedAtLoad) {
  TempDir dir;
  auto const file = dir.path() / "huge-wave.json";
  std::ofstream(file) << huge_wave(64);
  for (char const* command : {"replay --model", "show", "minimize"}) {
    Result const r = run_limited(std::string(command) + " '" + file.string() + "'", 64, 5);
    EXPECT_EQ(r.status, 2) << command << "\n" << r.output;
    EXPECT_TRUE(has(r, "huge-wave.json:1:185: steps[0]: asks for up to 67,108,864 allocations"))
        << command << "\n"
        << r.output;
    EXPECT_TRUE(has(r, "the work budget is 4,194,304 per wave")) << command << "\n" << r.output;
  }
}

// Finding 4 (the rest): a schedule within the budget that needs more memory than the process may
// use is resource exhaustion (exit 2, named as such), not a crash of the model (exit 1, FAILED on
// model). 2^20 x 4 fills the heap: about 1.2 GB on the model.
TEST(CliUsage, OutOfMemoryWhileReplayingIsNotAFailureOfTheModel) {
  TempDir dir;
  auto const file = dir.path() / "full-heap.json";
  std::ofstream(file) << huge_wave(4);
  Result const r = run_limited("replay --model '" + file.string() + "'", 512, 120);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "out of memory while running the schedule on model")) << r.output;
  EXPECT_FALSE(has(r, "FAILED")) << r.output;
  EXPECT_FALSE(has(r, "crash")) << r.output;
}

// As git and cargo do: a command's --help wins over a bad value given with it.
TEST(CliUsage, HelpWinsOverABadValue) {
  for (char const* args : {"stress --seed x --help",
                           "stress --help --minutes nan",
                           "replay --reruns -1 -h",
                           "list-invariants --names --markdown --help"}) {
    Result const r = run(args);
    EXPECT_EQ(r.status, 0) << args << "\n" << r.output;
    EXPECT_TRUE(has(r, "Usage: heaplab ")) << args << "\n" << r.output;
    EXPECT_TRUE(has(r, "Examples:")) << args << "\n" << r.output;
  }
  // After "--" a --help is an argument, not a request for help.
  Result const r = run("show -- --help");
  EXPECT_EQ(r.status, 2) << r.output;
}

// "-" is standard input for the commands that read a file.
// --help shows a number option's type and its range once: the checks every number gets carry no
// description of their own (they printed "--minutes FLOAT:(0, 1e+06]:FLOAT=1").
TEST(CliUsage, HelpShowsEachNumbersTypeAndRangeOnce) {
  Result const r = run("stress --help");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "--minutes FLOAT:(0, 1e+06]=1")) << r.output;
  EXPECT_TRUE(has(r, "--heap-mib UINT:[1, 1048576]=16")) << r.output;
  EXPECT_FALSE(has(r, ":FLOAT")) << r.output;
  EXPECT_FALSE(has(r, ":INT")) << r.output;
  EXPECT_FALSE(has(r, "]:[")) << "a range twice:\n" << r.output;
}

// An option given twice takes the last value (git, cargo); CLI11 alone refused ("At Most 1
// required but received 2"). Options that collect values keep every one.
TEST(CliUsage, ARepeatedOptionTakesTheLastValue) {
  Result const r = run("stress --seed 1 --seed 2 --case 0 --dump");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "\"heaplab stress --seed 2 ")) << r.output;
  EXPECT_FALSE(has(r, "At Most 1")) << r.output;
  TempDir dir;
  std::string const file = (dir.path() / "s.json").string();
  ASSERT_EQ(run("stress --seed 3 --case 0 --dump > '" + file + "'").status, 0);
  Result const both = run("replay '" + file + "' --runner model --runner differential-model");
  EXPECT_EQ(both.status, 0) << both.output;
  EXPECT_TRUE(has(both, "passed on model and differential-model")) << both.output;
}

TEST(CliUsage, ADashReadsStandardInput) {
  auto const file    = data_file("model/data/wator.json").string();
  Result const shown = run("show - < '" + file + "'");
  EXPECT_EQ(shown.status, 0) << shown.output;
  // The same text but for the first line, which names the file ("-" here).
  auto const body = [](std::string const& text) { return text.substr(text.find('\n')); };
  EXPECT_EQ(shown.output.rfind("schedule - (family heap", 0), 0u) << shown.output;
  EXPECT_EQ(body(shown.output), body(run("show '" + file + "'").output));
  Result const replayed = run("replay --model - < '" + file + "'");
  EXPECT_EQ(replayed.status, 0) << replayed.output;
  EXPECT_TRUE(has(replayed, "replay passed: 20 steps")) << replayed.output;
  // minimize needs a name for its output when the input has none.
  Result const minimized = run("minimize - < '" + file + "'");
  EXPECT_EQ(minimized.status, 2) << minimized.output;
  EXPECT_TRUE(has(minimized, "the input is standard input (-): name the output with -o FILE"))
      << minimized.output;
}

// Finding 19: README's `heaplab replay failures/` after a clean stress run names why the folder
// is not there.
TEST(CliUsage, ReplayOfAFailuresFolderThatAStressRunNeverCreatedSaysWhy) {
  TempDir dir;
  Result const clean =
      run("stress --seconds 0.5 --seed 1 --out-dir '" + (dir.path() / "failures").string() + "'");
  ASSERT_EQ(clean.status, 0) << clean.output;
  ASSERT_FALSE(std::filesystem::exists(dir.path() / "failures"));
  Result const r = run("replay '" + (dir.path() / "failures").string() + "/'");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "heaplab stress creates its --out-dir only when it finds a failure"))
      << r.output;
}

// Finding 10: terminal control codes from a shared file (its strings, its name) never reach the
// terminal raw: a string with one is refused where it is, and a file name is printed escaped.
TEST(CliUsage, TerminalControlCodesFromFilesNeverReachTheTerminal) {
  TempDir dir;
  auto const file = digest_failure_file(dir);
  nlohmann::json j;
  {
    std::ifstream in(file);
    j = nlohmann::json::parse(in);
  }
  j["failure"]["message"] = "retitled\x1b]0;owned\x07 and hidden\x1b[2K";
  auto const titled       = dir.path() / "titled.json";
  std::ofstream(titled) << j.dump(2);  // nlohmann writes the codes as \u001b, \u0007
  for (char const* cmd : {"show", "replay", "minimize"}) {
    Result const r = run(std::string(cmd) + " '" + titled.string() + "'");
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.output;
    EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << cmd << ": a raw ESC was printed";
    EXPECT_EQ(r.output.find('\x07'), std::string::npos) << cmd << ": a raw BEL was printed";
    EXPECT_TRUE(has(r, "failure.message: a terminal control code (\\x1b) in a string"))
        << cmd << "\n"
        << r.output;
  }
  // A file name with control codes (C0 and a C1 in UTF-8), in a folder replayed as a whole.
  TempDir shared;
  std::filesystem::copy_file(file, shared.path() / "fail\x1b[2J\xc2\x9b.json");
  Result const r = run("replay '" + shared.path().string() + "'");
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << "a raw ESC was printed:\n" << r.output;
  EXPECT_EQ(r.output.find("\xc2\x9b"), std::string::npos) << "a raw CSI was printed";
  EXPECT_TRUE(has(r, "fail\\x1b[2J\\u009b.json")) << r.output;
}

}  // namespace
}  // namespace heaplab::test
