// Random-walk schedules (schedule/rw_schedule.hpp, rw_json.hpp, generators.hpp) and failure files
// of the rw family (runner/failure_file.hpp): round trips, the deterministic choices, and bad
// input.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <set>
#include <string>

#include "heaplab/families/rw/family.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/schedule/choice.hpp"
#include "heaplab/schedule/generators.hpp"
#include "heaplab/schedule/json.hpp"
#include "heaplab/schedule/rw_json.hpp"

namespace hs = heaplab::schedule;
namespace hr = heaplab::runner;
namespace hf = heaplab::rw_family;

namespace {

/// A small valid schedule written by hand.
std::string const kValid = R"({"format": "heaplab-rw-schedule", "version": 1,
 "pool": {"pages": 100, "word_bits": 32, "max_steps": 50, "pretaken": {"count": 10, "seed": 3}},
 "steps": [{"op": "alloc", "algorithm": "rw-bm", "threads": 64, "seed": 5,
            "lanes": {"pattern": "every_kth", "k": 2, "offset": 1}},
           {"op": "free", "select": {"pattern": "oldest", "count": 3}}]})";

/// The error message of parse_rw(text), or "" if it parsed.
std::string error_of(std::string const& text) {
  try {
    hs::parse_rw(text);
  } catch (hs::schedule_error const& e) {
    return e.what();
  }
  return {};
}

std::string replaced(std::string s, std::string const& from, std::string const& to) {
  auto const at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

TEST(RwSchedule, AValidFileParsesToWhatItSays) {
  hs::RwSchedule const s = hs::parse_rw(kValid);
  EXPECT_EQ(s.pool.num_pages, 100u);
  EXPECT_EQ(s.pool.pretaken.count, 10u);
  ASSERT_EQ(s.steps.size(), 2u);
  auto const& a = std::get<hs::RwAllocWave>(s.steps[0]);
  EXPECT_EQ(a.algorithm, heaplab::core::RwAlgorithm::rw_bm);
  EXPECT_EQ(a.lanes, hs::RwLanes::every_kth);
  EXPECT_EQ(a.k, 2u);
  EXPECT_EQ(a.offset, 1u);
  EXPECT_EQ(std::get<hs::RwFreeWave>(s.steps[1]).count, 3u);
}

RC_GTEST_PROP(RwSchedule, GeneratedSchedulesRoundTripThroughJson, ()) {
  hs::RwSchedule const s = *hs::gen::rw_schedule();
  hs::validate(s);
  hs::RwSchedule const back = hs::parse_rw(hs::dump(s));
  RC_ASSERT(back == s);
  RC_ASSERT(hs::dump(back) == hs::dump(s));
}

RC_GTEST_PROP(RwSchedule, RwFailureFilesRoundTrip, ()) {
  hr::FailureFile f;
  f.created                  = "2026-11-25T10:00:00Z";
  f.runner                   = "rw-cpu";
  f.seed                     = *rc::gen::arbitrary<std::uint64_t>();
  f.origin.command           = "test";
  hs::RwSchedule const sched = *hs::gen::rw_schedule();
  f.schedule                 = hf::family().wrap(sched);
  f.failure       = {sched.steps.size() - 1, hr::FailureKind::divergence, "x", "wave 0: y"};
  auto const text = hr::dump(f);
  hr::FailureFile const back = hr::parse_failure(text);
  RC_ASSERT(back == f);
}

TEST(RwSchedule, LoadAnyTellsTheFourKindsApart) {
  auto const dir = std::filesystem::temp_directory_path() / "heaplab_rw_schedule_test";
  std::filesystem::create_directories(dir);
  hs::RwSchedule const s = hs::parse_rw(kValid);
  hs::write_text_file(dir / "s.json", hs::dump(s));
  auto const loaded = hr::load_replayable(dir / "s.json");
  ASSERT_FALSE(loaded.failure_file.has_value());
  EXPECT_EQ(&loaded.family(), &hf::family());
  EXPECT_EQ(hf::RwFamily::unwrap(loaded.schedule), s);

  hr::FailureFile f;
  f.created        = "2026-11-25T10:00:00Z";
  f.runner         = "rw-cpu";
  f.origin.command = "test";
  f.schedule       = hf::family().wrap(s);
  f.failure        = {1, hr::FailureKind::crash, "exception", "boom"};
  auto const path  = hr::save_failure(f, dir);
  auto const back  = hr::load_replayable(path);
  ASSERT_TRUE(back.failure_file.has_value());
  EXPECT_EQ(*back.failure_file, f);
  // A second save of the same failure gets another name ("-2"), never overwriting the first.
  EXPECT_NE(hr::save_failure(f, dir), path);

  hs::write_text_file(dir / "bad.json", replaced(hr::dump(f), "\"max_steps\"", "\"max_stpes\""));
  try {
    hr::load_replayable(dir / "bad.json");
    FAIL() << "a misspelled key inside an rw failure file was accepted";
  } catch (hs::schedule_error const& e) {
    EXPECT_EQ(e.path(), "schedule.pool.max_stpes");
    EXPECT_NE(std::string(e.what()).find("did you mean 'max_steps'"), std::string::npos)
        << e.what();
    EXPECT_GT(e.line(), 1u);
  }
  std::filesystem::remove_all(dir);
}

TEST(RwSchedule, BadInputIsAPositionedErrorNamingTheField) {
  struct Case {
    std::string from, to, expect;
  };
  std::vector<Case> const cases = {
      {"\"word_bits\": 32", "\"word_bits\": 48", "pool.word_bits: must be 32 or 64"},
      {"\"pages\": 100", "\"pages\": 0", "pool.pages: must be in [1, 16777216], got 0"},
      {"\"pages\": 100", "\"pages\": 16777217", "pool.pages: must be at most 16777216"},
      {"\"threads\": 64", "\"threads\": 0", "steps[0].threads: must be in [1, 1048576]"},
      {"\"threads\": 64", "\"threads\": 1048577", "steps[0].threads: must be at most 1048576"},
      {"\"offset\": 1", "\"offset\": 2", "steps[0].offset: must be in [0, 1], got 2"},
      {"\"rw-bm\"", "\"rw-bn\"", "steps[0].algorithm: unknown value 'rw-bn'"},
      {"\"seed\": 5,",
       "\"seed\": 5, \"sizes\": {\"pattern\": \"fixed\", \"n\": 2},",
       "steps[0].sizes: rw-bm hands out one page per request"},
      {"\"count\": 10, \"seed\": 3", "\"count\": 101", "pool.pretaken.count: must be in [0, 100]"},
      {"\"count\": 10, \"seed\": 3",
       "\"pages\": [1, 100]",
       "pool.pretaken.pages[1]: page 100 is beyond"},
      {"\"count\": 10, \"seed\": 3",
       "\"pages\": [4, 4]",
       "pool.pretaken.pages: a page is listed twice"},
      {"\"count\": 3}",
       "\"count\": 3, \"cuont\": 1}",
       "unknown key 'cuont' (did you mean 'count'?)"},
      {"\"op\": \"free\"", "\"op\": \"fre\"", "steps[1].op: unknown op 'fre'"},
      {"\"max_steps\": 50", "\"max_steps\": 1e400", "out of range (beyond the largest double"},
      {"\"max_steps\": 50", "\"max_steps\": -1", "pool.max_steps: must not be negative"},
      {"\"version\": 1", "\"version\": 2", "version: unsupported version 2"},
  };
  for (auto const& c : cases) {
    std::string const err = error_of(replaced(kValid, c.from, c.to));
    EXPECT_NE(err.find(c.expect), std::string::npos) << c.to << "\n  got: " << err;
    EXPECT_NE(err.find(":"), std::string::npos) << err;
  }
  // Positioned: the bad value's line (line 3 holds "threads").
  std::string const err = error_of(replaced(kValid, "\"threads\": 64", "\"threads\": 0"));
  EXPECT_EQ(err.rfind("line 3, column ", 0), 0u) << err;
}

TEST(RwSchedule, HostileInputGivesAnErrorNeverACrash) {
  EXPECT_NE(error_of(std::string(100000, '[')).find("nested deeper than 64"), std::string::npos);
  EXPECT_NE(error_of("").find("empty"), std::string::npos);
  EXPECT_NE(error_of(std::string("{\"format\": \"heaplab-rw-schedule\"\0}", 34)).find("NUL"),
            std::string::npos);
  EXPECT_NE(
      error_of("{\"format\": \"heaplab-rw-schedule\", \"version\": 1, \"pool\": []}").find("pool"),
      std::string::npos);
  EXPECT_NE(error_of("\x01\x02\xff").find("invalid JSON"), std::string::npos);
  // Waves beyond the limit are refused before they are read.
  std::string many = R"({"format": "heaplab-rw-schedule", "version": 1, "pool": {"pages": 8},
    "steps": [)";
  for (std::uint32_t i = 0; i <= hs::kRwMaxWaves; ++i) many += i ? ",{}" : "{}";
  EXPECT_NE(error_of(many + "]}").find("steps: at most 65536 steps"), std::string::npos);
}

TEST(RwSchedule, RequestsFollowTheLanePatternAndSizes) {
  hs::RwAllocWave a;
  a.algorithm  = heaplab::core::RwAlgorithm::rw_malloc;
  a.threads    = 70;
  a.lanes      = hs::RwLanes::every_kth;
  a.k          = 3;
  a.offset     = 2;
  a.sizes      = hs::RwSizes::cycle;
  a.size_list  = {4, 1, 7};
  auto const r = hs::rw_requests(a);
  ASSERT_EQ(r.size(), 70u);
  for (std::uint32_t i = 0; i < 70; ++i)
    EXPECT_EQ(r[i], (i % 32) % 3 == 2 ? a.size_list[i % 3] : 0u) << i;

  a.lanes      = hs::RwLanes::random_subset;
  a.lane_seed  = 99;
  a.sizes      = hs::RwSizes::uniform;
  a.nmax       = 5;
  auto const u = hs::rw_requests(a);
  std::set<std::uint32_t> sizes;
  for (std::uint32_t i = 0; i < 70; ++i) {
    bool const active = (hs::mix(99, i / 32, 0) >> (i % 32)) & 1;
    EXPECT_EQ(u[i] != 0, active) << i;
    if (active) {
      EXPECT_GE(u[i], 1u);
      EXPECT_LE(u[i], 5u);
      sizes.insert(u[i]);
    }
  }
  EXPECT_GT(sizes.size(), 2u) << "uniform sizes all alike";
}

TEST(RwSchedule, PretakenPagesAreDistinctInRangeAndSeeded) {
  hs::RwPool p;
  p.num_pages      = 1000;
  p.pretaken.count = 995;  // 0.5 % left free
  p.pretaken.seed  = 7;
  auto const a     = hs::rw_pretaken_pages(p);
  ASSERT_EQ(a.size(), 995u);
  EXPECT_EQ(std::set<std::uint32_t>(a.begin(), a.end()).size(), 995u);
  EXPECT_LT(a.back(), 1000u);
  EXPECT_EQ(hs::rw_pretaken_pages(p), a);
  p.pretaken.count = 10;
  auto const b     = hs::rw_pretaken_pages(p);
  p.pretaken.seed  = 8;
  EXPECT_NE(hs::rw_pretaken_pages(p), b);
}

TEST(RwSchedule, FreeSelectionIsOverHeldIdsInOrder) {
  std::vector<std::uint64_t> const held = {3, 5, 8, 13, 21};
  hs::RwFreeWave f;
  f.select = hs::RwFreeSelect::oldest;
  f.count  = 2;
  EXPECT_EQ(hs::rw_free_selection(f, held), (std::vector<std::size_t>{0, 1}));
  f.select = hs::RwFreeSelect::all;
  EXPECT_EQ(hs::rw_free_selection(f, held).size(), 5u);
  f.select   = hs::RwFreeSelect::fraction;
  f.fraction = 0.5;
  f.seed     = 4;
  std::vector<std::size_t> expect;
  for (std::size_t i = 0; i < held.size(); ++i)
    if (hs::unit_interval(hs::mix(4, held[i], hs::kSaltSelect)) < 0.5) expect.push_back(i);
  EXPECT_EQ(hs::rw_free_selection(f, held), expect);
}

TEST(RwSchedule, GeneratorsCoverEveryShape) {
  std::set<std::string> seen;
  for (int i = 0; i < 400; ++i) {
    auto const s = hs::gen::rw_schedule()(rc::Random(static_cast<std::uint64_t>(i)), 50).value();
    std::uint32_t const left = s.pool.num_pages - s.pool.pretaken.count;
    if (!s.pool.pretaken.pages && left * 200 <= s.pool.num_pages + 200 && s.pool.num_pages >= 512)
      seen.insert("near-exhaustion");
    for (auto const& st : s.steps) {
      if (auto const* a = std::get_if<hs::RwAllocWave>(&st)) {
        seen.insert(hs::to_string(a->algorithm));
        seen.insert(std::string("lanes ") + hs::to_string(a->lanes));
        if (a->algorithm == heaplab::core::RwAlgorithm::rw_malloc)
          seen.insert(std::string("sizes ") + hs::to_string(a->sizes));
      } else {
        seen.insert(std::string("free ") + hs::to_string(std::get<hs::RwFreeWave>(st).select));
      }
    }
  }
  for (char const* want : {"rw",
                           "rw-bm",
                           "corw",
                           "rw-malloc",
                           "lanes all",
                           "lanes every_kth",
                           "lanes random_subset",
                           "sizes fixed",
                           "sizes cycle",
                           "sizes uniform",
                           "free all",
                           "free fraction",
                           "free oldest",
                           "near-exhaustion"})
    EXPECT_TRUE(seen.count(want)) << want;
}
