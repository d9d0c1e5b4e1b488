// Failure files (runner/failure_file.hpp): round trips, the strict reader's errors, version 1
// files, families, naming and saving. The heap and rw families are linked in (registered).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "heap_schedules.hpp"
#include "heaplab/families/heap/family.hpp"
#include "heaplab/families/rw/family.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/schedule/generators.hpp"
#include "heaplab/schedule/json.hpp"
#include "heaplab/schedule/rw_json.hpp"

namespace heaplab::test {
namespace {

using runner::FailureFile;
using runner::FailureKind;
using schedule::schedule_error;

runner::AnySchedule heap(schedule::Schedule s) { return heap_family::family().wrap(std::move(s)); }
schedule::Schedule const& heap_of(FailureFile const& f) {
  return heap_family::HeapFamily::unwrap(f.schedule);
}

FailureFile sample() {
  FailureFile f;
  f.created            = "2026-11-22T10:11:12Z";
  f.git_commit         = "f375faa-dirty";
  f.gpu                = "NVIDIA H100 80GB HBM3";
  f.runner             = "gpu";
  f.seed               = 1234;
  f.rapidcheck         = runner::RapidCheckParams{1234, 37};
  f.origin.command     = "stress";
  f.origin.run_seed    = 7;
  f.origin.case_index  = 12;
  f.origin.profile     = "near-oom";
  f.origin.heap_mib    = 16;
  f.failure            = {1, FailureKind::divergence, "snapshot-diff", "3 differences; first: ..."};
  schedule::Schedule s = tiny_schedule(4);
  s.steps              = {alloc(10), alloc(5, 1)};
  f.schedule           = heap(std::move(s));
  return f;
}

std::string text_of(FailureFile const& f) { return runner::dump(f); }

FailureFile parse(std::string const& text) { return runner::parse_failure(text); }

/// The canonical text with one edit (a regex replacement that must match).
std::string edited(std::string const& pattern, std::string const& replacement) {
  std::string const text = text_of(sample());
  std::string out        = std::regex_replace(
      text, std::regex(pattern), replacement, std::regex_constants::format_first_only);
  EXPECT_NE(out, text) << "the edit '" << pattern << "' did not apply";
  return out;
}

/// Parses `text` and returns the error message (fails the test if it parses).
std::string error_of(std::string const& text) {
  try {
    (void)parse(text);
  } catch (schedule_error const& e) {
    return e.what();
  }
  ADD_FAILURE() << "parsed without error:\n" << text;
  return {};
}

TEST(FailureFile, RoundTripsThroughTextAndIsCanonical) {
  FailureFile const f    = sample();
  std::string const text = text_of(f);
  FailureFile const back = parse(text);
  EXPECT_EQ(back, f);
  EXPECT_EQ(text_of(back), text);
  // Optional fields absent.
  FailureFile g = f;
  g.rapidcheck.reset();
  g.origin = runner::FailureOrigin{"minimize", {}, {}, {}, {}, "x.json", 40};
  EXPECT_EQ(parse(text_of(g)), g);
}

TEST(FailureFile, RoundTripsRandomSchedules) {
  check_property(100, [] {
    FailureFile f              = sample();
    schedule::Schedule const s = *schedule::gen::schedule();
    RC_PRE(!s.steps.empty());
    f.schedule     = heap(s);
    f.failure.step = *rc::gen::inRange<std::uint64_t>(0, s.steps.size());
    f.failure.kind = static_cast<FailureKind>(*rc::gen::inRange(0, 5));
    RC_ASSERT(parse(text_of(f)) == f);
  });
}

TEST(FailureFile, TheTextHasTheDocumentedLayout) {
  auto const j = runner::to_json(sample());
  std::string keys;
  for (auto const& item : j.items()) keys += (keys.empty() ? "" : " ") + item.key();
  EXPECT_EQ(keys,
            "format version family created git_commit gpu runner seed rapidcheck origin failure "
            "schedule");
  EXPECT_EQ(j["format"], "heaplab-failure");
  EXPECT_EQ(j["version"], 2);
  EXPECT_EQ(j["family"], "heap");
  EXPECT_EQ(j["failure"]["kind"], "divergence");
  EXPECT_EQ(j["schedule"]["format"], "heaplab-schedule");
  EXPECT_EQ(j["schedule"]["config"]["num_blocks"], 4);
}

TEST(FailureFile, UnknownKeysAreErrorsWithASuggestionAndAPosition) {
  std::string const e = error_of(edited("\"runner\"", "\"runer\""));
  EXPECT_NE(e.find("runer: unknown key 'runer' (did you mean 'runner'?)"), std::string::npos) << e;
  EXPECT_TRUE(std::regex_search(e, std::regex("^line [0-9]+, column [0-9]+: "))) << e;
}

TEST(FailureFile, DuplicateKeysAreErrors) {
  std::string const e =
      error_of(edited("\"gpu\": \"([^\"]*)\",", "\"gpu\": \"$1\", \"gpu\": \"x\","));
  EXPECT_NE(e.find("gpu: duplicate key"), std::string::npos) << e;
  std::string const nested =
      error_of(edited("\"check\": \"snapshot-diff\",", "\"check\": \"a\", \"check\": \"b\","));
  EXPECT_NE(nested.find("failure.check: duplicate key"), std::string::npos) << nested;
}

TEST(FailureFile, WrongTypesMissingFieldsAndBadValuesAreNamed) {
  struct Case {
    std::string pattern, replacement, expected;
  };
  std::vector<Case> const cases = {
      {"\"seed\": 1234,",
       "\"seed\": \"1234\",",
       "seed: expected a non-negative integer, got string"},
      {"\"seed\": 1234,", "\"seed\": -4,", "seed: must not be negative"},
      {"\"kind\": \"divergence\"",
       "\"kind\": \"diverged\"",
       "failure.kind: unknown failure kind 'diverged'; expected one of: invariant_violation, "
       "divergence, digest_mismatch, hang, crash"},
      {"\"step\": 1,",
       "\"step\": 2,",
       "failure.step: step 2 is outside the schedule, which has 2 steps"},
      {"\"created\": \"[^\"]*\",", "", "created: missing required field 'created'"},
      {"\"check\": \"snapshot-diff\"", "\"check\": \"\"", "failure.check: must not be empty"},
      {"\"version\": 2,",
       "\"version\": 3,",
       "version: unsupported version 3; this heaplab reads versions 1 and 2"},
      {"\"family\": \"heap\"",
       "\"family\": \"hepa\"",
       "family: unknown allocator family 'hepa'; this heaplab has the families heap, interleaving, "
       "malloc, rw"},
      {"\"family\": \"heap\"",
       "\"family\": \"rw\"",
       "schedule.format: the family 'rw' has schedules of format 'heaplab-rw-schedule', not "
       "'heaplab-schedule'"},
      {"\"format\": \"heaplab-failure\"",
       "\"format\": \"heaplab-schedule\"",
       "format: expected \"heaplab-failure\""},
      {"\"size\": 37", "\"size\": 37.5", "rapidcheck.size: expected a non-negative integer"},
      {"\"command\": \"stress\"",
       "\"command\": 3",
       "origin.command: expected a string, got number"},
  };
  for (auto const& c : cases) {
    std::string const e = error_of(edited(c.pattern, c.replacement));
    EXPECT_NE(e.find(c.expected), std::string::npos) << "edit " << c.pattern << "\n" << e;
  }
}

TEST(FailureFile, ErrorsInTheEmbeddedScheduleCarryItsPathAndLine) {
  std::string const text = edited("\"threads\": 10,", "\"treads\": 10,");
  std::string const e    = error_of(text);
  EXPECT_NE(e.find("schedule.steps[0].treads: unknown key 'treads' (did you mean 'threads'?)"),
            std::string::npos)
      << e;
  // The line named is the line of the bad key.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(e, m, std::regex("^line ([0-9]+)")));
  std::istringstream lines(text);
  std::string line;
  for (int i = 1; i <= std::stoi(m[1]); ++i) std::getline(lines, line);
  EXPECT_NE(line.find("treads"), std::string::npos) << "line " << m[1] << ": " << line;
}

TEST(FailureFile, MalformedTextNeverCrashesTheReader) {
  for (std::string const& text : {std::string(""),
                                  std::string("{"),
                                  std::string("[]"),
                                  std::string("\"x\""),
                                  std::string(5000, '['),
                                  std::string("{\"format\": 3}"),
                                  std::string("\x01\x02\xff")}) {
    EXPECT_THROW((void)parse(text), schedule_error) << text.substr(0, 20);
  }
  EXPECT_NE(error_of("{\"format\": \"heaplab-failure\", \"version\": 2,").find("invalid JSON"),
            std::string::npos);
}

TEST(FailureFile, LoadReplayableTellsTheFormatsAndFamiliesApart) {
  TempDir dir;
  auto const failure_path  = dir.path() / "f.json";
  auto const schedule_path = dir.path() / "s.json";
  auto const rw_path       = dir.path() / "rw.json";
  auto const other_path    = dir.path() / "o.json";
  runner::write_failure(sample(), failure_path);
  std::ofstream(schedule_path) << schedule::dump(heap_of(sample()));
  schedule::RwSchedule rw;
  rw.steps.push_back(schedule::RwFreeWave{});
  std::ofstream(rw_path) << schedule::dump(rw);
  std::ofstream(other_path) << "{\"format\": \"something-else\"}";
  auto const f = runner::load_replayable(failure_path);
  ASSERT_TRUE(f.failure_file.has_value());
  EXPECT_EQ(*f.failure_file, sample());
  EXPECT_EQ(&f.family(), &heap_family::family());
  auto const s = runner::load_replayable(schedule_path);
  ASSERT_FALSE(s.failure_file.has_value());
  EXPECT_EQ(heap_family::HeapFamily::unwrap(s.schedule), heap_of(sample()));
  auto const r = runner::load_replayable(rw_path);
  EXPECT_EQ(&r.family(), &rw_family::family());
  EXPECT_EQ(rw_family::RwFamily::unwrap(r.schedule), rw);
  try {
    (void)runner::load_replayable(other_path);
    FAIL();
  } catch (schedule_error const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("o.json:1:"), std::string::npos) << what;
    EXPECT_NE(what.find("unknown format 'something-else'; expected a failure file"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("a heap schedule file (\"format\": \"heaplab-schedule\")"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("a rw schedule file (\"format\": \"heaplab-rw-schedule\")"),
              std::string::npos)
        << what;
  }
  try {
    (void)runner::load_replayable(dir.path() / "missing.json");
    FAIL();
  } catch (schedule_error const& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json: cannot open the file"), std::string::npos);
  }
}

TEST(FailureFile, VersionOneFilesHaveTheFamilyOfTheirSchedule) {
  // A version 1 file as heaplab wrote them before families had names: no "family".
  std::string const v2 = text_of(sample());
  std::string v1       = std::regex_replace(
      v2, std::regex("\"version\": 2,\n  \"family\": \"heap\","), "\"version\": 1,");
  ASSERT_NE(v1, v2);
  FailureFile const back = parse(v1);
  EXPECT_EQ(back, sample());
  EXPECT_EQ(text_of(back), v2) << "read as version 1, written as version 2";
  std::string const with_family =
      std::regex_replace(v2, std::regex("\"version\": 2,"), "\"version\": 1,");
  EXPECT_NE(error_of(with_family).find("family: version 1 files have no family"),
            std::string::npos);
}

TEST(FailureFile, EveryCommittedFailureFileLoads) {
  // Failure files are kept for years (docs/results/failures, test data): each still loads.
  std::size_t loaded = 0;
  for (auto const& dir : {std::filesystem::path(HEAPLAB_SOURCE_DIR) / "docs/results/failures",
                          std::filesystem::path(HEAPLAB_SOURCE_DIR) / "proofs_tests"}) {
    for (auto const& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (entry.path().extension() != ".json") continue;
      std::ifstream in(entry.path());
      std::string const text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      if (text.find("\"heaplab-failure\"") == std::string::npos) continue;
      EXPECT_NO_THROW((void)runner::load_failure(entry.path())) << entry.path();
      ++loaded;
    }
  }
  EXPECT_GE(loaded, 5u) << "docs/results/failures holds the committed failure files";
}

TEST(FailureFile, SaveNamesFilesByTimeAndSeedAndNeverOverwrites) {
  EXPECT_EQ(runner::failure_file_name("2026-11-22T10:11:12Z", 99), "20261122T101112Z-99.json");
  TempDir dir;
  auto const out      = dir.path() / "failures";  // created on demand
  FailureFile const f = sample();
  auto const first    = runner::save_failure(f, out);
  auto const second   = runner::save_failure(f, out);
  EXPECT_EQ(first.filename(), "20261122T101112Z-1234.json");
  EXPECT_EQ(second.filename(), "20261122T101112Z-1234-2.json");
  EXPECT_EQ(runner::load_failure(first), f);
  EXPECT_EQ(runner::load_failure(second), f);
  EXPECT_EQ(dir.file_count(), 3u);  // the directory and two files: no temporaries left
}

TEST(FailureFile, WritingAnInvalidRecordIsRefused) {
  TempDir dir;
  FailureFile f  = sample();
  f.failure.step = 9;
  EXPECT_THROW(runner::write_failure(f, dir.path() / "x.json"), schedule_error);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "x.json"));
}

TEST(FailureFile, TheTimestampIsUtcIso8601) {
  EXPECT_TRUE(std::regex_match(
      runner::utc_now_iso8601(),
      std::regex("20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z")));
}

}  // namespace
}  // namespace heaplab::test
