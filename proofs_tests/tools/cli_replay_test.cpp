// The heaplab command line, replay and minimize -o (issue 16): a replay that could not run the
// runner that recorded a failure is NOT CHECKED (exit 4), never "passed"; replay of several files
// and directories prints a table of verdicts with the worst exit status; minimize -o never
// overwrites its input, checks the output before any work and leaves no temporary file.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/schedule/json.hpp"

namespace heaplab::test {
namespace {

namespace fs = std::filesystem;

std::string quoted(fs::path const& p) { return "'" + p.string() + "'"; }

std::string read_bytes(fs::path const& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A failure file recorded by `runner` (divergence, snapshot-diff at step 3) whose schedule is
/// wator.json, which the model passes: on a runner that runs here it is fixed.
fs::path passing_failure_file(fs::path const& path, std::string const& runner) {
  runner::FailureFile f =
      heap_failure(runner,
                   {3, runner::FailureKind::divergence, "snapshot-diff", "planted"},
                   "model/data/wator.json");
  f.gpu  = runner == "gpu" ? "NVIDIA H200" : "none";
  f.seed = 5;
  runner::write_failure(f, path);
  return path;
}

/// The last line that is not empty.
std::string last_line(std::string const& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

/// The line of the verdict table that starts with `file` (the table follows "heaplab replay: N
/// files"), or "" if there is none.
std::string table_row(std::string const& output, std::string const& file) {
  auto const table = output.find("\nheaplab replay: ");
  if (table == std::string::npos) return "";
  std::istringstream in(output.substr(table));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(file + " ", 0) == 0) return line;
  return "";
}

std::vector<std::string> tmp_files(fs::path const& dir) {
  std::vector<std::string> out;
  for (auto const& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp") != std::string::npos)
      out.push_back(e.path().filename().string());
  return out;
}

bool gpu_unavailable() { return !runner::unavailable_reason("gpu").empty(); }

// ---------------------------------------------------------------------------------------------
// One file: the verdict and its exit status.

TEST(CliReplay, AGpuFailureWithoutAGpuIsNotCheckedAndNeverPasses) {
  if (!gpu_unavailable()) GTEST_SKIP() << "the GPU runner can run here: the gpu side is checked";
  TempDir dir;
  auto const file = passing_failure_file(dir.path() / "gpu.json", "gpu");
  Result const r  = run("replay " + quoted(file));
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_NE(r.output.find("NOT CHECKED: the recorded failure came from the gpu runner, which could "
                          "not run here (" +
                          runner::unavailable_reason("gpu") +
                          "); the model side passed, which says nothing about the gpu failure "
                          "(exit status 4)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("replay passed"), std::string::npos) << r.output;
  EXPECT_EQ(last_line(r.output).rfind("NOT CHECKED:", 0), 0u) << r.output;
}

TEST(CliReplay, TheCheckedInGpuFailureIsNotCheckedWithoutAGpu) {
  auto const file =
      fs::path(HEAPLAB_SOURCE_DIR) / "docs/results/failures" / "rewrite_filter_off_by_one.min.json";
  if (!fs::exists(file)) GTEST_SKIP() << file << " is not in this tree";
  if (!gpu_unavailable()) GTEST_SKIP() << "the GPU runner can run here: the gpu side is checked";
  Result const r = run("replay " + quoted(file));
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_NE(r.output.find("NOT CHECKED: the recorded failure came from the gpu runner"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("the model side passed, which says nothing about the gpu failure"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("replay passed"), std::string::npos) << r.output;
}

TEST(CliReplay, AGpuFailureReplayedOnTheModelAloneIsNotChecked) {
  TempDir dir;
  auto const file = passing_failure_file(dir.path() / "gpu.json", "gpu");
  Result const r  = run("replay --model " + quoted(file));
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_NE(r.output.find("NOT CHECKED: the recorded failure came from the gpu runner, which was "
                          "not among the runners asked for"),
            std::string::npos)
      << r.output;
}

TEST(CliReplay, AFailureWhoseRunnerRanAndPassedIsFixed) {
  TempDir dir;
  auto const file = passing_failure_file(dir.path() / "fixed.json", "model");
  Result const r  = run("replay -q " + quoted(file));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("verdict: FIXED: the recorded failure (model: divergence, check "
                          "snapshot-diff) did not reproduce on model, and every side that ran "
                          "passed (exit status 0)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("NOT CHECKED"), std::string::npos) << r.output;
}

TEST(CliReplay, AReproducingFailureStillFails) {
  TempDir dir;
  auto const file = digest_failure_file(dir);
  Result const r  = run("replay -q " + quoted(file));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("verdict: STILL FAILS: the recorded failure (model: digest_mismatch, "
                          "check graph-digest) reproduced on model (exit status 1)"),
            std::string::npos)
      << r.output;
}

TEST(CliReplay, APlainScheduleWithoutAGpuStillPassesAndSaysTheGpuSideDidNotRun) {
  Result const r = run("replay -q " + quoted(data_file("model/data/wator.json")));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("replay passed: 20 steps"), std::string::npos) << r.output;
  if (gpu_unavailable()) {
    EXPECT_NE(r.output.find("gpu side: not run: " + runner::unavailable_reason("gpu")),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("verdict: passed on model; not run: gpu (exit status 0)"),
              std::string::npos)
        << r.output;
  }
}

TEST(CliReplay, AScheduleThatNoRunnerCouldRunIsNotCheckedNotPassed) {
  if (!gpu_unavailable()) GTEST_SKIP() << "the GPU runner can run here";
  Result const r = run("replay --runner gpu " + quoted(data_file("model/data/wator.json")));
  EXPECT_EQ(r.status, 2) << "a runner asked for cannot run\n" << r.output;
  EXPECT_NE(r.output.find("NOT CHECKED: no runner could run this schedule here (not run: gpu)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("passed"), std::string::npos) << r.output;
}

TEST(CliReplay, HelpDocumentsEveryExitStatus) {
  Result const r = run("replay --help");
  EXPECT_EQ(r.status, 0) << r.output;
  for (char const* text : {"0 every runner that ran passed",
                           "1 a runner failed",
                           "2 unreadable or malformed file",
                           "3 a kernel hung",
                           "4 NOT CHECKED",
                           "--verbose",
                           "directories"})
    EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
}

// ---------------------------------------------------------------------------------------------
// Several files and directories: a table and the worst exit status.

/// A directory with one file of each verdict: a malformed file (sorted first, so that the rest
/// is replayed after it), a failure that reproduces, a fixed one, a gpu failure and a schedule.
struct MixedDirectory {
  TempDir dir;
  fs::path malformed, reproduces, fixed, gpu, plain;
  MixedDirectory() {
    malformed = dir.path() / "a_malformed.json";
    std::ofstream(malformed) << "{\"format\": \"heaplab-failure\", \"version\": 1, \"runer\": 3}";
    reproduces = digest_failure_file(dir, "b_reproduces.json");
    fixed      = passing_failure_file(dir.path() / "c_fixed.json", "model");
    gpu        = passing_failure_file(dir.path() / "d_gpu.json", "gpu");
    plain      = dir.path() / "e_plain.json";
    fs::copy_file(data_file("model/data/wator.json"), plain);
    std::ofstream(dir.path() / "notes.txt") << "not a replay file";
  }
};

TEST(CliReplay, ADirectoryGivesATableOfVerdictsAndTheWorstExitStatus) {
  MixedDirectory m;
  auto const start = std::chrono::steady_clock::now();
  Result const r   = run("replay " + quoted(m.dir.path()));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_EQ(r.status, 2) << "a malformed file counts 2, the worst here\n" << r.output;
  EXPECT_NE(r.output.find("heaplab replay: 5 files"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("notes.txt"), std::string::npos) << "only *.json files\n" << r.output;

  std::string const bad = table_row(r.output, m.malformed.string());
  EXPECT_NE(bad.find("error: "), std::string::npos) << r.output;
  EXPECT_NE(bad.find("unknown key 'runer'"), std::string::npos) << r.output;
  EXPECT_NE(table_row(r.output, m.reproduces.string()).find("still fails"), std::string::npos)
      << r.output;
  EXPECT_NE(table_row(r.output, m.reproduces.string()).find("model: digest_mismatch"),
            std::string::npos)
      << "the recorded runner and check\n"
      << r.output;
  std::string const fixed = table_row(r.output, m.fixed.string());
  EXPECT_EQ(fixed.substr(fixed.size() - 5), "fixed") << r.output;
  std::string const gpu = table_row(r.output, m.gpu.string());
  if (gpu_unavailable()) {
    EXPECT_EQ(gpu.substr(gpu.size() - 11), "not checked") << r.output;
    EXPECT_NE(gpu.find("gpu: not run"), std::string::npos) << r.output;
  }
  std::string const plain = table_row(r.output, m.plain.string());
  EXPECT_EQ(plain.substr(plain.size() - 6), "passes") << r.output;
  EXPECT_NE(r.output.find("; exit status 2"), std::string::npos) << r.output;
  // Quieter per-file output: no step lines, but each side's verdict.
  EXPECT_EQ(r.output.find("step 0: alloc"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  model side: FAILED at step 2: digest_mismatch, check graph-digest"),
            std::string::npos)
      << r.output;
}

// --json: the same verdicts, exit statuses and sides for a script or CI, written at the end; a
// summary that cannot be written fails a replay that would have passed.
/// `replay` of the whole mixed directory with `option` (--json, --junit) writing to a file
/// `name` in a folder of its own; returns that file's path.
fs::path replay_with_summary(MixedDirectory const& m, char const* option, char const* name) {
  fs::path const out = m.dir.path() / "summary" / name;
  fs::create_directories(out.parent_path());
  Result const r = run("replay " + quoted(m.dir.path()) + " " + option + " " + quoted(out));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find(" in " + out.string()), std::string::npos) << "names where it wrote";
  return out;
}

TEST(CliReplay, JsonGivesEveryFilesVerdictStatusAndSides) {
  MixedDirectory m;
  fs::path const out = replay_with_summary(m, "--json", "replay.json");
  auto const j       = nlohmann::json::parse(read_bytes(out));
  EXPECT_EQ(j.at("format"), "heaplab-replay-summary");
  EXPECT_EQ(j.at("exit_status"), 2);
  ASSERT_EQ(j.at("files").size(), 5u) << j.dump(2);
  auto const file = [&](fs::path const& p) {
    for (auto const& f : j.at("files"))
      if (f.at("file") == p.string()) return f;
    ADD_FAILURE() << p << " is not in the summary\n" << j.dump(2);
    return nlohmann::json{};
  };
  auto const bad = file(m.malformed);
  EXPECT_EQ(bad.at("verdict"), "error");
  EXPECT_NE(bad.at("error").get<std::string>().find("unknown key 'runer'"), std::string::npos);
  auto const reproduces = file(m.reproduces);
  EXPECT_EQ(reproduces.at("verdict"), "still fails");
  EXPECT_EQ(reproduces.at("exit_status"), 1);
  ASSERT_FALSE(reproduces.at("sides").empty());
  EXPECT_EQ(reproduces.at("sides")[0].at("runner"), "model");
  EXPECT_EQ(reproduces.at("sides")[0].at("state"), "failed");
  EXPECT_EQ(reproduces.at("sides")[0].at("same_as_recorded"), true);
  EXPECT_EQ(file(m.fixed).at("verdict"), "fixed");
  EXPECT_EQ(file(m.plain).at("verdict"), "passes");
  EXPECT_EQ(file(m.plain).at("exit_status"), 0);

  Result const lost = run("replay " + quoted(m.plain) + " --model --json /dev/full");
  EXPECT_EQ(lost.status, 1) << lost.output;
  EXPECT_NE(lost.output.find("the JSON summary was not written"), std::string::npos) << lost.output;
  Result const nowhere = run("replay " + quoted(m.plain) + " --json /nonexistent-dir/r.json");
  EXPECT_EQ(nowhere.status, 2) << nowhere.output;
  EXPECT_NE(nowhere.output.find("does not exist"), std::string::npos) << nowhere.output;
}

/// The <testcase ...> element of `name` in a JUnit report, up to its </testcase>; "" if none.
std::string junit_case(std::string const& xml, std::string const& name) {
  auto const at = xml.find("<testcase classname=\"heaplab.replay\" name=\"" + name + "\"");
  if (at == std::string::npos) return "";
  return xml.substr(at, xml.find("</testcase>", at) - at);
}

std::size_t occurrences(std::string const& text, std::string const& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CliReplay, JunitGivesOneTestcasePerFileWithItsVerdict) {
  MixedDirectory m;
  std::string const xml = read_bytes(replay_with_summary(m, "--junit", "replay.xml"));
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u) << xml;
  EXPECT_EQ(occurrences(xml, "<testcase "), 5u) << xml;
  EXPECT_EQ(occurrences(xml, "</testcase>"), 5u) << xml;
  bool const no_gpu = gpu_unavailable();
  EXPECT_NE(xml.find("<testsuite name=\"heaplab.replay\" tests=\"5\" failures=\"1\" errors=\"1\" "
                     "skipped=\"" +
                     std::string(no_gpu ? "1" : "0") + "\""),
            std::string::npos)
      << xml;
  std::string const reproduces = junit_case(xml, m.reproduces.string());
  EXPECT_NE(reproduces.find("<failure message=\"still fails (model: fails"), std::string::npos)
      << xml;
  std::string const bad = junit_case(xml, m.malformed.string());
  EXPECT_NE(bad.find("<error message=\"error: "), std::string::npos) << xml;
  EXPECT_NE(bad.find("unknown key 'runer'"), std::string::npos) << xml;
  for (fs::path const& passing : {m.fixed, m.plain}) {
    std::string const c = junit_case(xml, passing.string());
    EXPECT_FALSE(c.empty()) << passing << "\n" << xml;
    EXPECT_EQ(c.find("<failure"), std::string::npos) << c;
    EXPECT_EQ(c.find("<error"), std::string::npos) << c;
  }
  if (no_gpu) {
    EXPECT_NE(junit_case(xml, m.gpu.string()).find("<skipped message=\"not checked"),
              std::string::npos)
        << xml;
  }

  Result const lost = run("replay " + quoted(m.plain) + " --model --junit /dev/full");
  EXPECT_EQ(lost.status, 1) << lost.output;
  EXPECT_NE(lost.output.find("the JUnit report was not written"), std::string::npos) << lost.output;
  Result const nowhere = run("replay " + quoted(m.plain) + " --junit /nonexistent-dir/r.xml");
  EXPECT_EQ(nowhere.status, 2) << nowhere.output;
  EXPECT_NE(nowhere.output.find("--junit '/nonexistent-dir/r.xml'"), std::string::npos)
      << nowhere.output;
}

TEST(CliReplay, SeveralFilesTakeTheWorstStatusInTheOrderFailedNotCheckedPassed) {
  MixedDirectory m;
  auto const fixed_and_plain = quoted(m.fixed) + " " + quoted(m.plain);
  Result const ok            = run("replay " + fixed_and_plain);
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("heaplab replay: 2 files"), std::string::npos) << ok.output;
  if (gpu_unavailable()) {
    Result const unchecked = run("replay " + fixed_and_plain + " " + quoted(m.gpu));
    EXPECT_EQ(unchecked.status, 4) << unchecked.output;
    Result const failed =
        run("replay " + quoted(m.gpu) + " " + quoted(m.reproduces) + " " + fixed_and_plain);
    EXPECT_EQ(failed.status, 1) << "a failure outranks not checked\n" << failed.output;
  }
  Result const verbose = run("replay -v " + quoted(m.reproduces) + " " + quoted(m.plain));
  EXPECT_EQ(verbose.status, 1) << verbose.output;
  EXPECT_NE(verbose.output.find("step 0: alloc"), std::string::npos) << "-v: in full";
  EXPECT_NE(verbose.output.find("FIRST FAILURE at step 2"), std::string::npos) << verbose.output;
}

TEST(CliReplay, RunnerOptionsDoNotSwallowTheFiles) {
  MixedDirectory m;
  Result const r = run("replay --runner model --runner differential-model " + quoted(m.fixed) +
                       " " + quoted(m.plain));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("heaplab replay: 2 files"), std::string::npos) << r.output;
  EXPECT_NE(table_row(r.output, m.plain.string()).find("differential-model: passes"),
            std::string::npos)
      << r.output;
}

TEST(CliReplay, AnEmptyDirectoryAndAMissingFileAreErrors) {
  TempDir dir;
  Result const r = run("replay " + quoted(dir.path()) + " " + quoted(dir.path() / "missing.json"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("no *.json files in the directory " + dir.path().string()),
            std::string::npos)
      << r.output;
  EXPECT_NE(table_row(r.output, (dir.path() / "missing.json").string()).find("error: "),
            std::string::npos)
      << r.output;
}

// ---------------------------------------------------------------------------------------------
// minimize -o

TEST(CliMinimize, RefusesToOverwriteItsInputHoweverItIsSpelled) {
  TempDir dir;
  auto const file          = digest_failure_file(dir, "x.json");
  std::string const before = read_bytes(file);
  fs::create_directories(dir.path() / "sub");
  fs::create_hard_link(file, dir.path() / "hard.json");
  std::vector<std::string> const outputs = {file.string(),
                                            (dir.path() / "." / "x.json").string(),
                                            (dir.path() / "sub" / ".." / "x.json").string(),
                                            (dir.path() / "hard.json").string()};
  for (auto const& out : outputs) {
    auto const start = std::chrono::steady_clock::now();
    Result const r   = run("minimize " + quoted(file) + " -o '" + out + "'");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << out;
    EXPECT_EQ(r.status, 2) << out << "\n" << r.output;
    EXPECT_NE(r.output.find("refusing to overwrite the input"), std::string::npos) << out << "\n"
                                                                                   << r.output;
    EXPECT_EQ(r.output.find("per candidate"), std::string::npos)
        << "refused before any minimization work\n"
        << r.output;
    EXPECT_EQ(read_bytes(file), before) << out;
  }
  // The default output (x.min.json) is checked the same way: here a link to the input.
  fs::create_symlink("x.json", dir.path() / "x.min.json");
  Result const r = run("minimize " + quoted(file));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("refusing to overwrite the input"), std::string::npos) << r.output;
  EXPECT_EQ(read_bytes(file), before);
  EXPECT_TRUE(tmp_files(dir.path()).empty());
}

TEST(CliMinimize, ChecksTheOutputDirectoryBeforeAnyWork) {
  TempDir dir;
  auto const file    = digest_failure_file(dir);
  auto const missing = dir.path() / "no-such-dir" / "out.json";
  Result const r     = run("minimize " + quoted(file) + " -o " + quoted(missing));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("cannot write the output " + missing.string() + ": its directory " +
                          missing.parent_path().string() + " does not exist"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("per candidate"), std::string::npos) << "before any work\n" << r.output;
  EXPECT_FALSE(fs::exists(missing.parent_path()));

  Result const dir_out = run("minimize " + quoted(file) + " -o " + quoted(dir.path()));
  EXPECT_EQ(dir_out.status, 2) << dir_out.output;
  EXPECT_NE(dir_out.output.find("is a directory"), std::string::npos) << dir_out.output;

  // A directory that exists but takes no new file (even for root): /proc.
  if (fs::is_directory("/proc")) {
    Result const proc = run("minimize " + quoted(file) + " -o /proc/heaplab-minimize-test.json");
    EXPECT_EQ(proc.status, 2) << proc.output;
    EXPECT_NE(proc.output.find("cannot write the output /proc/heaplab-minimize-test.json"),
              std::string::npos)
        << proc.output;
    EXPECT_EQ(proc.output.find("per candidate"), std::string::npos) << proc.output;
  }
  EXPECT_TRUE(tmp_files(dir.path()).empty());
}

/// Runs minimize with a file size limit of 0 (writes to regular files fail with EFBIG; SIGXFSZ
/// ignored), so that the output cannot be written after the minimization succeeded.
Result run_without_file_space(std::string const& args) {
  return run_command("trap '' XFSZ; ulimit -f 0; exec '" + tool() + "' " + args + " 2>&1");
}

TEST(CliMinimize, LeavesNoTemporaryFileAfterSuccessOrFailure) {
  TempDir dir;
  auto const file = digest_failure_file(dir);
  auto const out  = dir.path() / "small.json";
  Result const ok = run("minimize -q " + quoted(file) + " -o " + quoted(out));
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_TRUE(tmp_files(dir.path()).empty()) << ok.output;
  EXPECT_EQ(dir.file_count(), 2u) << "the input and the output, nothing else";

  // Overwriting an existing (other) output replaces it.
  std::ofstream(out) << "old";
  Result const again = run("minimize -q " + quoted(file) + " -o " + quoted(out));
  EXPECT_EQ(again.status, 0) << again.output;
  EXPECT_EQ(heap_schedule(runner::load_failure(out)).steps.size(), 1u);

  // The write fails after the minimization: exit 2, nothing written, nothing left behind.
  auto const failed_out = dir.path() / "failed.json";
  Result const failed =
      run_without_file_space("minimize -q " + quoted(file) + " -o " + quoted(failed_out));
  EXPECT_EQ(failed.status, 2) << failed.output;
  EXPECT_NE(failed.output.find(failed_out.string() + " was not written"), std::string::npos)
      << failed.output;
  EXPECT_FALSE(fs::exists(failed_out));
  EXPECT_TRUE(tmp_files(dir.path()).empty()) << failed.output;

  // An input that does not fail: exit 1, nothing written.
  auto const passing = dir.path() / "passing.json";
  fs::copy_file(data_file("model/data/wator.json"), passing);
  Result const nothing = run("minimize -q " + quoted(passing));
  EXPECT_EQ(nothing.status, 1) << nothing.output;
  EXPECT_FALSE(fs::exists(dir.path() / "passing.min.json"));
  EXPECT_TRUE(tmp_files(dir.path()).empty()) << nothing.output;
}

}  // namespace
}  // namespace heaplab::test
