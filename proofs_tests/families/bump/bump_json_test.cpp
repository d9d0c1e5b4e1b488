// Unit tests of the bump family's JSON form (bump_schedule.hpp): the canonical form round-trips,
// defaults are filled in, and every malformed document is a schedule_error naming the field path
// (and, read from text through the generic reader, its line and column).
#include <gtest/gtest.h>

#include <string>

#include "bump_family.hpp"
#include "bump_schedule.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace heaplab::bump_family {
namespace {

using nlohmann::json;

BumpSchedule sample() {
  BumpSchedule s;
  s.description = "two waves and a free_all";
  s.arena       = 4096;
  BumpAlloc a;
  a.threads = 8, a.sizes = {24}, a.align = 8, a.seed = 3;
  BumpAlloc b;
  b.threads = 5, b.sizes = {8, 100}, b.align = 16, b.seed = 4;
  s.steps = {a, BumpFreeAll{}, b};
  return s;
}

json document() { return json::parse(dump(sample())); }

/// The error bump_from_json gives for `doc` ("" when it reads).
std::string error_of(json const& doc) {
  try {
    (void)bump_from_json(doc);
  } catch (schedule::schedule_error const& e) {
    return e.path() + ": " + e.reason();
  }
  return "";
}

TEST(BumpJson, TheCanonicalFormRoundTrips) {
  BumpSchedule const s    = sample();
  BumpSchedule const back = bump_from_json(json::parse(dump(s)));
  EXPECT_EQ(back, s);
  EXPECT_EQ(dump(back), dump(s));
  EXPECT_EQ(to_json(s)["steps"][0].dump(),
            R"({"op":"alloc","threads":8,"size":24,"align":8,"seed":3})");
  EXPECT_EQ(to_json(s)["steps"][2]["sizes"].dump(), "[8,100]");
  EXPECT_EQ(to_json(s)["steps"][1].dump(), R"({"op":"free_all"})");
}

TEST(BumpJson, LeftOutFieldsGetTheirDefaultsAndAOneElementListIsWrittenAsSize) {
  json const doc = json::parse(R"({"format": "heaplab-bump-schedule", "version": 1, "arena": 64,
      "steps": [{"op": "alloc", "threads": 2, "sizes": [8]}]})");
  BumpSchedule const s = bump_from_json(doc);
  EXPECT_EQ(s.description, "");
  auto const& a = std::get<BumpAlloc>(s.steps.at(0));
  EXPECT_EQ(a.align, 1u);
  EXPECT_EQ(a.seed, 0u);
  EXPECT_EQ(to_json(s)["steps"][0].dump(),
            R"({"op":"alloc","threads":2,"size":8,"align":1,"seed":0})");
}

TEST(BumpJson, UnknownKeysAreRefusedWithTheClosestKnownOne) {
  json doc                  = document();
  doc["steps"][0]["thread"] = doc["steps"][0]["threads"];
  doc["steps"][0].erase("threads");
  EXPECT_EQ(
      error_of(doc).rfind("steps[0].thread: unknown key 'thread' (did you mean 'threads'?)", 0), 0u)
      << error_of(doc);
  json top     = document();
  top["arean"] = 1;
  EXPECT_NE(error_of(top).find("arean: unknown key 'arean' (did you mean 'arena'?)"),
            std::string::npos);
  json fa                   = document();
  fa["steps"][1]["threads"] = 1;
  EXPECT_EQ(error_of(fa).rfind("steps[1].threads: unknown key", 0), 0u) << error_of(fa);
}

TEST(BumpJson, ValuesOutOfRangeNameTheirField) {
  // Values as JSON text, so that they are typed as a reader types them (0 is unsigned).
  auto with = [](char const* pointer, char const* value) {
    json doc                         = document();
    doc[json::json_pointer(pointer)] = json::parse(value);
    return error_of(doc);
  };
  EXPECT_EQ(with("/steps/0/threads", "0"), "steps[0].threads: must be at least 1, got 0");
  EXPECT_EQ(with("/steps/0/threads", "4097"), "steps[0].threads: must be at most 4096, got 4097");
  EXPECT_EQ(with("/steps/0/align", "12"),
            "steps[0].align: must be a power of two (1, 2, 4, ..., 4096), got 12");
  EXPECT_EQ(with("/steps/0/align", "8192"), "steps[0].align: must be at most 4096, got 8192");
  EXPECT_EQ(with("/steps/0/size", "0"), "steps[0].size: must be at least 1, got 0");
  EXPECT_EQ(with("/steps/2/sizes/1", "-3"),
            "steps[2].sizes[1]: must not be negative, got number -3");
  EXPECT_EQ(with("/arena", "0"), "arena: must be at least 1, got 0");
  EXPECT_EQ(with("/arena", "1073741825"), "arena: must be at most 1073741824, got 1073741825");
  EXPECT_EQ(with("/steps/2/sizes", "[]"), "steps[2].sizes: must list at least one size");
  EXPECT_EQ(with("/steps/0/op", R"("alloca")"),
            "steps[0].op: unknown op 'alloca'; expected one of: alloc, free_all");
  EXPECT_EQ(with("/version", "2"), "version: unsupported version 2; this heaplab reads version 1");
  EXPECT_EQ(with("/steps/0/seed", R"("x")"),
            "steps[0].seed: expected a non-negative integer, got string \"x\"");
  EXPECT_EQ(with("/steps/0/threads", "2.5"),
            "steps[0].threads: expected a non-negative integer, got number 2.5");
}

TEST(BumpJson, StructuralErrorsNameTheirField) {
  json both                 = document();
  both["steps"][0]["sizes"] = {1, 2};
  EXPECT_EQ(error_of(both).rfind("steps[0]: give exactly one of \"size\"", 0), 0u)
      << error_of(both);
  json none = document();
  none["steps"][0].erase("size");
  EXPECT_EQ(error_of(none).rfind("steps[0]: give exactly one of", 0), 0u);
  json missing = document();
  missing.erase("arena");
  EXPECT_EQ(error_of(missing), "arena: missing required field 'arena'");
  json many     = document();
  many["steps"] = json::array();
  for (int i = 0; i < 4097; ++i) many["steps"].push_back({{"op", "free_all"}});
  EXPECT_EQ(error_of(many), "steps: at most 4096 steps");
  json list                 = document();
  list["steps"][2]["sizes"] = json::array();
  for (int i = 0; i < 17; ++i) list["steps"][2]["sizes"].push_back(1);
  EXPECT_EQ(error_of(list), "steps[2].sizes: at most 16 sizes");
  EXPECT_EQ(error_of(json::array()).rfind(": a bump schedule is a JSON object", 0), 0u);
  json format      = document();
  format["format"] = "heaplab-rw-schedule";
  EXPECT_EQ(error_of(format).rfind("format: expected \"heaplab-bump-schedule\"", 0), 0u);
}

TEST(BumpJson, ValidateChecksHandBuiltSchedulesWithTheSamePaths) {
  BumpSchedule s = sample();
  EXPECT_NO_THROW(validate(s));
  std::get<BumpAlloc>(s.steps[2]).sizes[1] = 0;
  try {
    validate(s);
    FAIL() << "a size of 0 was accepted";
  } catch (schedule::schedule_error const& e) {
    EXPECT_EQ(e.path(), "steps[2].sizes[1]");
  }
}

TEST(BumpJson, TheGenericReaderFindsTheFamilyByFormatAndLocatesErrors) {
  std::string text           = dump(sample());
  runner::Replayable const r = runner::parse_replayable(text);
  EXPECT_EQ(r.family().name(), "bump");
  EXPECT_EQ(BumpFamily::unwrap(r.schedule), sample());
  text.replace(text.find("\"align\": 16"), 11, "\"align\": 24");
  try {
    (void)runner::parse_replayable(text);
    FAIL() << "align 24 was accepted";
  } catch (schedule::schedule_error const& e) {
    EXPECT_EQ(e.path(), "steps[2].align");
    EXPECT_GT(e.line(), 1u);
    EXPECT_GT(e.column(), 1u);
  }
}

}  // namespace
}  // namespace heaplab::bump_family
