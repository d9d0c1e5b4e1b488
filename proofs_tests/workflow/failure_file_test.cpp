// Failure files (schedule/failure_file.hpp): round trips, the strict reader's errors, naming and
// saving.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "heaplab/schedule/failure_file.hpp"
#include "heaplab/schedule/generators.hpp"
#include "heaplab/schedule/json.hpp"
#include "workflow_test_support.hpp"

namespace heaplab::workflow_test {
namespace {

using schedule::FailureFile;
using schedule::FailureKind;
using schedule::schedule_error;

FailureFile sample() {
  FailureFile f;
  f.created           = "2026-11-22T10:11:12Z";
  f.git_commit        = "f375faa-dirty";
  f.gpu               = "NVIDIA H100 80GB HBM3";
  f.runner            = "gpu";
  f.seed              = 1234;
  f.rapidcheck        = schedule::RapidCheckParams{1234, 37};
  f.origin.command    = "stress";
  f.origin.run_seed   = 7;
  f.origin.case_index = 12;
  f.origin.profile    = "near-oom";
  f.origin.heap_mib   = 16;
  f.failure           = {1, FailureKind::divergence, "snapshot-diff", "3 differences; first: ..."};
  f.schedule          = tiny_schedule(4);
  f.schedule.steps    = {alloc(10), alloc(5, 1)};
  return f;
}

std::string text_of(FailureFile const& f) { return schedule::dump(f); }

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
    (void)schedule::parse_failure(text);
  } catch (schedule_error const& e) {
    return e.what();
  }
  ADD_FAILURE() << "parsed without error:\n" << text;
  return {};
}

TEST(FailureFile, RoundTripsThroughTextAndIsCanonical) {
  FailureFile const f    = sample();
  std::string const text = text_of(f);
  FailureFile const back = schedule::parse_failure(text);
  EXPECT_EQ(back, f);
  EXPECT_EQ(text_of(back), text);
  // Optional fields absent.
  FailureFile g = f;
  g.rapidcheck.reset();
  g.origin = schedule::FailureOrigin{"minimize", {}, {}, {}, {}, "x.json", 40};
  EXPECT_EQ(schedule::parse_failure(text_of(g)), g);
}

TEST(FailureFile, RoundTripsRandomSchedules) {
  check_property(100, [] {
    FailureFile f = sample();
    f.schedule    = *schedule::gen::schedule();
    RC_PRE(!f.schedule.steps.empty());
    f.failure.step = *rc::gen::inRange<std::uint64_t>(0, f.schedule.steps.size());
    f.failure.kind = static_cast<FailureKind>(*rc::gen::inRange(0, 5));
    RC_ASSERT(schedule::parse_failure(text_of(f)) == f);
  });
}

TEST(FailureFile, TheTextHasTheDocumentedLayout) {
  auto const j = schedule::to_json(sample());
  std::vector<std::string> keys;
  for (auto const& item : j.items()) keys.push_back(item.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"format",
                                      "version",
                                      "created",
                                      "git_commit",
                                      "gpu",
                                      "runner",
                                      "seed",
                                      "rapidcheck",
                                      "origin",
                                      "failure",
                                      "schedule"}));
  EXPECT_EQ(j["format"], "heaplab-failure");
  EXPECT_EQ(j["version"], 1);
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
      {"\"version\": 1,",
       "\"version\": 2,",
       "version: unsupported version 2; this heaplab reads version 1"},
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
    EXPECT_THROW((void)schedule::parse_failure(text), schedule_error) << text.substr(0, 20);
  }
  EXPECT_NE(error_of("{\"format\": \"heaplab-failure\", \"version\": 1,").find("invalid JSON"),
            std::string::npos);
}

TEST(FailureFile, LoadReplayableTellsTheFormatsApart) {
  TempDir dir;
  auto const failure_path  = dir.path() / "f.json";
  auto const schedule_path = dir.path() / "s.json";
  auto const other_path    = dir.path() / "o.json";
  schedule::write_failure(sample(), failure_path);
  std::ofstream(schedule_path) << schedule::dump(sample().schedule);
  std::ofstream(other_path) << "{\"format\": \"something-else\"}";
  auto const f = schedule::load_replayable(failure_path);
  ASSERT_TRUE(std::holds_alternative<FailureFile>(f));
  EXPECT_EQ(std::get<FailureFile>(f), sample());
  auto const s = schedule::load_replayable(schedule_path);
  ASSERT_TRUE(std::holds_alternative<schedule::Schedule>(s));
  EXPECT_EQ(schedule::schedule_of(s), sample().schedule);
  try {
    (void)schedule::load_replayable(other_path);
    FAIL();
  } catch (schedule_error const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("o.json:1:"), std::string::npos) << what;
    EXPECT_NE(what.find("unknown format 'something-else'; expected a schedule file"),
              std::string::npos)
        << what;
  }
  try {
    (void)schedule::load_replayable(dir.path() / "missing.json");
    FAIL();
  } catch (schedule_error const& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json: cannot open the file"), std::string::npos);
  }
}

TEST(FailureFile, SaveNamesFilesByTimeAndSeedAndNeverOverwrites) {
  EXPECT_EQ(schedule::failure_file_name("2026-11-22T10:11:12Z", 99), "20261122T101112Z-99.json");
  TempDir dir;
  auto const out      = dir.path() / "failures";  // created on demand
  FailureFile const f = sample();
  auto const first    = schedule::save_failure(f, out);
  auto const second   = schedule::save_failure(f, out);
  EXPECT_EQ(first.filename(), "20261122T101112Z-1234.json");
  EXPECT_EQ(second.filename(), "20261122T101112Z-1234-2.json");
  EXPECT_EQ(schedule::load_failure(first), f);
  EXPECT_EQ(schedule::load_failure(second), f);
  EXPECT_EQ(dir.file_count(), 3u);  // the directory and two files: no temporaries left
}

TEST(FailureFile, WritingAnInvalidRecordIsRefused) {
  TempDir dir;
  FailureFile f  = sample();
  f.failure.step = 9;
  EXPECT_THROW(schedule::write_failure(f, dir.path() / "x.json"), schedule_error);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "x.json"));
}

TEST(FailureFile, TheTimestampIsUtcIso8601) {
  EXPECT_TRUE(std::regex_match(
      schedule::utc_now_iso8601(),
      std::regex("20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z")));
}

}  // namespace
}  // namespace heaplab::workflow_test
