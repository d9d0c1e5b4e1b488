// Tests of the malloc family (src/heaplab/families/malloc, docs/malloc.md): the cookies, the strict
// JSON form and its work budget, every invariant of the catalog fed a broken state, the reference
// runner on hand-written and generated schedules, and each planted adapter bug caught by the
// generic stress loop within a few hundred cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "heaplab/core/expects.hpp"
#include "heaplab/families/malloc/catalog.hpp"
#include "heaplab/families/malloc/cookie.hpp"
#include "heaplab/families/malloc/family.hpp"
#include "heaplab/families/malloc/reference.hpp"
#include "heaplab/families/malloc/runner.hpp"
#include "heaplab/families/malloc/subject.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/runner/stress.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace heaplab::malloc_family {
namespace {

using nlohmann::json;

MallocSchedule parse(std::string const& text) { return malloc_from_json(json::parse(text)); }

/// The message of the schedule_error reading `text` throws ("" when it reads).
std::string error_of(std::string const& text) {
  try {
    (void)parse(text);
  } catch (schedule::schedule_error const& e) {
    return e.what();
  }
  return "";
}

std::string const kHead = R"({"format": "heaplab-malloc-schedule", "version": 1, "pool": 65536, )";

TEST(MallocCookie, WordAndByteWritesGiveTheSameBytesAndABadByteIsFound) {
  alignas(16) std::uint8_t a[64] = {}, b[64] = {};
  write_cookie(a, 40, 7, 2);
  for (std::uint64_t o = 0; o < 40; ++o) b[o] = cookie_byte(7, 2, o);
  EXPECT_EQ(0, std::memcmp(a, b, 64));
  EXPECT_EQ(40u, first_bad_byte(a, 40, 7, 2));
  EXPECT_EQ(0u, first_bad_byte(a, 40, 7, 3));  // another epoch
  EXPECT_EQ(0u, first_bad_byte(a, 40, 8, 2));  // another allocation
  a[33] ^= 1;
  EXPECT_EQ(33u, first_bad_byte(a, 40, 7, 2));
  write_cookie(a + 3, 20, 9, 0);  // unaligned: byte by byte
  EXPECT_EQ(20u, first_bad_byte(a + 3, 20, 9, 0));
  EXPECT_EQ(cookie_byte(9, 0, 5), a[8]);
}

TEST(MallocJson, ASchedulesDocumentRoundTripsCanonically) {
  MallocSchedule const s = parse(kHead + R"("steps": [
    {"op": "alloc", "threads": 64, "per_thread": 2, "sizes": "mixed", "min": 4, "max": 8192,
     "lanes": "warp_uniform", "divergence": "random_mask", "seed": 5},
    {"op": "fill", "threads": 8, "size": 256, "max_per_thread": 40},
    {"op": "free", "select": "size", "min": 16, "max": 64},
    {"op": "free", "select": "oldest", "fraction": 0.25},
    {"op": "touch"}]})");
  ASSERT_EQ(5u, s.steps.size());
  EXPECT_EQ(Lanes::warp_uniform, std::get<AllocWave>(s.steps[0]).lanes);
  EXPECT_EQ(40u, std::get<FillWave>(s.steps[1]).max_per_thread);
  EXPECT_EQ(0.25, std::get<FreeWave>(s.steps[3]).fraction);
  EXPECT_EQ(s, malloc_from_json(json::parse(to_json(s).dump())));
  EXPECT_EQ("free select=size sizes=[16,64]", describe(s.steps[2]));
}

TEST(MallocJson, BadFieldsAndTheWorkBudgetAreRefusedNamingTheField) {
  EXPECT_NE(std::string::npos,
            error_of(kHead + R"("steps": [{"op": "touch", "x": 1}]})").find("steps[0]"));
  EXPECT_NE(std::string::npos,
            error_of(kHead + R"("steps": [{"op": "free", "select": "all", "fraction": 0.5}]})")
                .find("steps[0].fraction"));
  EXPECT_NE(std::string::npos,
            error_of(kHead + R"("steps": [{"op": "alloc", "threads": 1, "per_thread": 1,
              "sizes": "fixed", "min": 8, "max": 16}]})")
                .find("steps[0].max"));
  EXPECT_NE(std::string::npos,
            error_of(R"({"format": "heaplab-malloc-schedule", "version": 1, "pool": 100,
              "steps": []})")
                .find("pool"));
  // 65536 threads x 64 requests: 4M requests in one wave, over the budget of 1M.
  std::string const huge = error_of(kHead + R"("steps": [{"op": "alloc", "threads": 65536,
      "per_thread": 64, "sizes": "fixed", "min": 8}]})");
  EXPECT_NE(std::string::npos, huge.find("work budget")) << huge;
}

Allocation at(std::uint64_t address, std::uint64_t size, std::uint64_t id) {
  return {address, size, id, 0, 0, static_cast<std::uint32_t>(id)};
}

MallocState base_state(std::vector<Allocation> const& kept) {
  MallocState s;
  s.pool_bytes        = 4096;
  s.subject.name      = "test";
  s.subject.alignment = 16;
  s.pool              = {0x1000, 0x2000};
  s.kept              = &kept;
  s.granted           = {at(0x1100, 32, 2)};
  return s;
}

bool has(std::vector<check::Violation> const& v, std::string const& name) {
  for (auto const& x : v)
    if (x.invariant == name) return true;
  return false;
}

TEST(MallocCatalog, ALegalStatePassesAndEachBrokenStateIsNamed) {
  std::vector<Allocation> const kept = {at(0x1000, 64, 1)};
  EXPECT_TRUE(check_all(base_state(kept)).empty());

  MallocState s        = base_state(kept);
  s.granted[0].address = 0x1108;
  EXPECT_TRUE(has(check_all(s), "malloc-aligned"));

  s                    = base_state(kept);
  s.granted[0].address = 0x1ff0;  // 32 bytes from 16 before the end
  EXPECT_TRUE(has(check_all(s), "malloc-inside-pool"));

  s                    = base_state(kept);
  s.granted[0].address = 0x1030;  // inside [0x1000, 0x1040)
  EXPECT_TRUE(has(check_all(s), "malloc-disjoint"));
  EXPECT_EQ("malloc-disjoint", check_all(s).front().invariant);

  s         = base_state(kept);
  s.corrupt = {{kept[0], 12}};
  EXPECT_TRUE(has(check_all(s), "malloc-cookies-intact"));

  s                    = base_state(kept);
  s.subject.null_floor = 0.5;
  s.nulls              = {{3, 64}};  // 96 + 64 B live of 4096: far below half
  EXPECT_TRUE(has(check_all(s), "malloc-null-justified"));
  s.nulls = {{3, 4000}};  // 96 + 4000 > 2048: legal
  EXPECT_TRUE(check_all(s).empty());

  s                    = base_state(kept);
  s.subject.exact_gaps = true;
  s.nulls              = {{3, 2048}};  // the gap above 0x1120 holds 3808 B
  EXPECT_TRUE(has(check_all(s), "malloc-null-justified"));
  s.nulls = {{3, 3809}};
  EXPECT_TRUE(check_all(s).empty());

  s                  = base_state(kept);
  s.subject.recovery = 0.9;
  s.fill_from_empty  = 1000;
  s.first_fill       = 4000;
  EXPECT_TRUE(has(check_all(s), "malloc-recovers"));
  s.fill_from_empty = 3900;
  EXPECT_TRUE(check_all(s).empty());
}

TEST(MallocCatalog, TheLargestAlignedGapCountsTheEndsAndAlignment) {
  std::vector<Allocation> const v = {at(0x1010, 8, 1), at(0x1040, 16, 2)};
  // gaps: [0x1000, 0x1010) 16, [0x1020 (0x1018 aligned), 0x1040) 32, [0x1050, 0x1100) 176
  EXPECT_EQ(176u, largest_aligned_gap(v, {0x1000, 0x1100}, 16));
  EXPECT_EQ(0x100u, largest_aligned_gap({}, {0x1000, 0x1100}, 16));
}

runner::RunOutcome run_reference(MallocSchedule const& s,
                                 std::vector<runner::StepReport>* reports = nullptr) {
  MallocRunner r(
      "malloc-model", [] { return make_reference_subject(); }, true);
  return r.run(s, [&](runner::StepReport const& x) {
    if (reports) reports->push_back(x);
  });
}

TEST(MallocReference, FillsFreesAndRefillsCleanlyAndRecovers) {
  MallocSchedule const s = parse(kHead + R"("steps": [
    {"op": "fill", "threads": 8, "size": 256, "max_per_thread": 100},
    {"op": "free", "select": "random", "fraction": 0.5, "seed": 1},
    {"op": "alloc", "threads": 40, "per_thread": 3, "sizes": "heavy", "min": 4, "max": 4096,
     "seed": 2},
    {"op": "touch"},
    {"op": "free", "select": "all"},
    {"op": "fill", "threads": 8, "size": 256, "max_per_thread": 100}]})");
  std::vector<runner::StepReport> reports;
  runner::RunOutcome const out = run_reference(s, &reports);
  ASSERT_TRUE(out.ok()) << runner::format_failure(*out.failure);
  ASSERT_EQ(6u, reports.size());
  EXPECT_EQ(65536u, reports[0].in_use);  // 256 grants of 256 B fill the pool exactly
  EXPECT_EQ(8u, reports[0].count("nulls"));
  EXPECT_EQ(0u, reports[0].count("null_then_success"));
  EXPECT_EQ(65536u, reports[0].count("fill.256.bytes"));
  EXPECT_EQ(0u, reports[4].live);
  EXPECT_EQ(65536u, reports[5].count("fill.256.bytes"));
}

TEST(MallocReference, GeneratedCasesOfEveryProfilePassTheCatalog) {
  for (std::string const profile : {"mixed", "oom", "small", "bounded"})
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      runner::GenerationRequest request;
      request.profile  = profile;
      request.heap_mib = 1;
      auto const s     = family().generate(request, seed, static_cast<std::uint32_t>(seed * 8));
      runner::RunOutcome const out = run_reference(MallocFamily::unwrap(s));
      EXPECT_TRUE(out.ok()) << profile << " seed " << seed << ": "
                            << runner::format_failure(*out.failure);
    }
}

TEST(MallocRwCpu, RwMallocOnOsThreadsPassesGeneratedCasesOfEveryProfile) {
  runner::RunnerOptions options;
  options.threads = 3;
  auto const r    = runner::make_runner("malloc-rw-cpu", options);
  for (std::string const profile : {"mixed", "oom"})
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      runner::GenerationRequest request;
      request.profile  = profile;
      request.heap_mib = 1;
      runner::RunOutcome const out =
          r->run(family().generate(request, seed, static_cast<std::uint32_t>(seed * 20)));
      EXPECT_TRUE(out.ok()) << profile << " seed " << seed << ": "
                            << runner::format_failure(*out.failure);
    }
}

TEST(MallocRwCpu, AFreeOfAnAddressItDidNotHandOutIsACrash) {
  auto subject = make_rw_cpu_subject(2);
  subject->reset(1 << 16);
  EXPECT_THROW(subject->free_wave({subject->pool().begin + 16}), std::runtime_error);
  AllocPlan plan{40, 1, false, std::vector<std::uint64_t>(40, 100), {}};
  for (std::uint64_t i = 0; i < 40; ++i) plan.ids.push_back(i + 1);
  std::vector<std::uint64_t> const got = subject->alloc_wave(plan);
  ASSERT_EQ(40u, got.size());
  std::vector<Block> blocks;
  for (std::uint64_t i = 0; i < 40; ++i) {
    ASSERT_NE(0u, got[i]);
    blocks.push_back({got[i], 100, i + 1, 0});
  }
  for (std::uint64_t bad : subject->verify(blocks)) EXPECT_EQ(100u, bad);  // cookies written
  subject->free_wave(got);
  std::vector<std::uint64_t> const again = subject->alloc_wave(plan);
  EXPECT_EQ(0, std::count(again.begin(), again.end(), 0u));  // the freed runs came back
}

TEST(MallocReference, ASubjectsExceptionIsACrashOfThatStep) {
  MallocSchedule s = parse(kHead + R"("steps": [{"op": "touch"}]})");
  class Throws final : public Subject {
   public:
    SubjectInfo info() const override { return {}; }
    void reset(std::uint64_t) override {}
    AddressRange pool() const override { return {}; }
    std::vector<std::uint64_t> alloc_wave(AllocPlan const&) override { return {}; }
    void free_wave(std::vector<std::uint64_t> const&) override {}
    void write(std::vector<Block> const&) override {}
    std::vector<std::uint64_t> verify(std::vector<Block> const&) override { return {}; }
  };
  s.steps.insert(s.steps.begin(), AllocWave{});
  MallocRunner r(
      "throws", [] { return std::make_unique<Throws>(); }, true);
  runner::RunOutcome const out = r.run(s);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(runner::FailureKind::crash, out.failure->kind);
  EXPECT_EQ(0u, out.failure->step);
  EXPECT_NE(std::string::npos, out.failure->message.find("answered 0 of 32"));
}

/// The reference allocator declaring other policies: `edit` changes its SubjectInfo.
class Declaring final : public Subject {
 public:
  explicit Declaring(std::function<void(SubjectInfo&)> edit)
      : inner_(make_reference_subject()), edit_(std::move(edit)) {}
  SubjectInfo info() const override {
    SubjectInfo i = inner_->info();
    edit_(i);
    return i;
  }
  void reset(std::uint64_t b) override { inner_->reset(b); }
  AddressRange pool() const override { return inner_->pool(); }
  std::vector<std::uint64_t> alloc_wave(AllocPlan const& p) override {
    return inner_->alloc_wave(p);
  }
  void free_wave(std::vector<std::uint64_t> const& a) override { inner_->free_wave(a); }
  void write(std::vector<Block> const& b) override { inner_->write(b); }
  std::vector<std::uint64_t> verify(std::vector<Block> const& b) override {
    return inner_->verify(b);
  }

 private:
  std::unique_ptr<Subject> inner_;
  std::function<void(SubjectInfo&)> edit_;
};

std::unique_ptr<Subject> needs_one_mib() {
  return std::make_unique<Declaring>([](SubjectInfo& i) { i.min_pool = 1 << 20; });
}

TEST(MallocRunnerSupport, APoolBelowTheSubjectsMinimumIsNotSupportedAndSaysWhy) {
  MallocRunner r("needs-1-mib", needs_one_mib, true);
  MallocSchedule s         = parse(kHead + R"("steps": [{"op": "touch"}]})");  // 64 KiB
  runner::Support const no = r.supports(s);
  EXPECT_FALSE(no.supported);
  EXPECT_NE(std::string::npos, no.reason.find("at least 1048576 bytes")) << no.reason;
  EXPECT_NE(std::string::npos, no.reason.find("--heap-mib 1 or more")) << no.reason;
  EXPECT_THROW((void)r.run(s), core::precondition_error);
  s.pool = 1 << 20;
  EXPECT_TRUE(r.supports(s).supported);
  EXPECT_TRUE(r.run(s).ok());

  // Stress skips the cases with smaller pools and says why.
  runner::StressOptions o;
  o.max_cases        = 20;
  o.request.profile  = "mixed";
  o.request.runner   = "malloc-model";  // pools that vary (not one fixed pool)
  o.request.heap_mib = 1;               // pools of 64 KiB .. 1 MiB
  o.out_dir          = std::filesystem::temp_directory_path() / "heaplab-malloc-min-pool";
  auto const result  = runner::run_stress(family(), o, [](unsigned) {
    return std::make_unique<MallocRunner>("needs-1-mib", needs_one_mib, true);
  });
  EXPECT_GT(result.stats.skipped, 0u);
  EXPECT_NE(std::string::npos, result.stats.skip_reason.find("needs a pool of at least"))
      << result.stats.skip_reason;
  std::filesystem::remove_all(o.out_dir);
}

// The watchdog budget of a subject's kernels: --watchdog-ms, else HEAPLAB_WATCHDOG_MS, else the
// subject's declaration, else 5 s (CUDA malloc declares 30 s; its fills near a full heap are slow).
TEST(MallocSubject, TheWatchdogBudgetIsAskedThenTheEnvironmentThenTheSubjectsThenFiveSeconds) {
  using std::chrono::milliseconds;
  char const* const saved = std::getenv("HEAPLAB_WATCHDOG_MS");
  std::string const kept  = saved != nullptr ? saved : "";
  unsetenv("HEAPLAB_WATCHDOG_MS");
  SubjectInfo slow;
  slow.watchdog_ms = 30000;
  SubjectInfo const plain;
  EXPECT_EQ(watchdog_budget(1234, slow), milliseconds(1234));
  EXPECT_EQ(watchdog_budget(0, slow), milliseconds(30000));
  EXPECT_EQ(watchdog_budget(0, plain), milliseconds(5000));
  setenv("HEAPLAB_WATCHDOG_MS", "250", 1);
  EXPECT_EQ(watchdog_budget(0, slow), milliseconds(250));
  EXPECT_EQ(watchdog_budget(0, plain), milliseconds(250));
  EXPECT_EQ(watchdog_budget(1234, slow), milliseconds(1234));
  if (saved != nullptr)
    setenv("HEAPLAB_WATCHDOG_MS", kept.c_str(), 1);
  else
    unsetenv("HEAPLAB_WATCHDOG_MS");
}

TEST(MallocSchedule, DemandBytesSumsEveryRequestAndAFillHasNoBound) {
  // 10 threads x 2 requests of 64 B, then 3 threads x 1 of 100 B with odd lanes idle
  // (alternate: threads 0 and 2 ask).
  MallocSchedule s = parse(kHead + R"("steps": [
      {"op": "alloc", "threads": 10, "per_thread": 2, "sizes": "fixed", "min": 64, "max": 64,
       "lanes": "per_lane", "divergence": "all", "seed": 1},
      {"op": "free", "select": "all"},
      {"op": "alloc", "threads": 3, "per_thread": 1, "sizes": "fixed", "min": 100, "max": 100,
       "lanes": "per_lane", "divergence": "alternate", "seed": 1}]})");
  ASSERT_TRUE(demand_bytes(s).has_value());
  EXPECT_EQ(10u * 2u * 64u + 2u * 100u, *demand_bytes(s));
  s.steps.emplace_back(FillWave{});
  EXPECT_FALSE(demand_bytes(s).has_value());
}

TEST(MallocRunnerSupport, ASubjectWithoutAnOutOfMemoryPathGetsOnlyBoundedDemand) {
  auto const make = [] {
    return std::make_unique<Declaring>([](SubjectInfo& i) { i.max_demand = 0.125; });
  };
  MallocRunner r("no-oom-path", make, true);
  // 65536-byte pool: at most 8192 bytes together.
  MallocSchedule s = parse(kHead + R"("steps": [
      {"op": "alloc", "threads": 128, "per_thread": 1, "sizes": "fixed", "min": 64, "max": 64,
       "lanes": "per_lane", "divergence": "all", "seed": 1}]})");
  EXPECT_TRUE(r.supports(s).supported);  // 8192 bytes
  std::get<AllocWave>(s.steps[0]).threads = 129;
  runner::Support const over              = r.supports(s);
  EXPECT_FALSE(over.supported);
  EXPECT_NE(std::string::npos, over.reason.find("no usable out-of-memory path")) << over.reason;
  EXPECT_NE(std::string::npos, over.reason.find("asks for 8256")) << over.reason;
  std::get<AllocWave>(s.steps[0]).threads = 1;
  s.steps.emplace_back(FillWave{});
  runner::Support const fills = r.supports(s);
  EXPECT_FALSE(fills.supported);
  EXPECT_NE(std::string::npos, fills.reason.find("this schedule fills")) << fills.reason;
  EXPECT_THROW((void)r.run(s), core::precondition_error);

  // The bounded profile's cases keep to a sixteenth of the pool (summed here from request_size)
  // and run, none skipped, while the mixed profile's fills are skipped.
  runner::StressOptions o;
  o.max_cases        = 60;
  o.request.runner   = "malloc-model";
  o.request.heap_mib = 1;
  o.out_dir          = std::filesystem::temp_directory_path() / "heaplab-malloc-max-demand";
  for (std::uint64_t k = 0; k < o.max_cases; ++k) {
    o.request.profile      = "bounded";
    MallocSchedule const c = runner::make_case(family(), o, k).schedule.get<MallocSchedule>();
    std::uint64_t sum      = 0;
    for (MallocStep const& step : c.steps) {
      ASSERT_FALSE(std::holds_alternative<FillWave>(step)) << "case " << k;
      if (auto const* a = std::get_if<AllocWave>(&step))
        for (std::uint32_t t = 0; t < a->threads; ++t)
          for (std::uint32_t q = 0; q < a->per_thread; ++q) sum += request_size(*a, t, q);
    }
    EXPECT_LE(sum, c.pool / 16) << "case " << k;
  }
  for (std::string const profile : {"bounded", "mixed"}) {
    o.request.profile = profile;
    auto const result = runner::run_stress(family(), o, [&](unsigned) {
      return std::make_unique<MallocRunner>("no-oom-path", make, true);
    });
    EXPECT_EQ(0u, result.stats.failures) << profile;
    EXPECT_EQ(o.max_cases, result.stats.cases + result.stats.skipped) << profile;
    if (profile == "bounded") {
      EXPECT_EQ(0u, result.stats.skipped) << result.stats.skip_reason;
      EXPECT_GT(result.stats.counts.at("granted"), 0u);
    } else {
      EXPECT_GT(result.stats.skipped, 0u);
      EXPECT_NE(std::string::npos, result.stats.skip_reason.find("--profile bounded"))
          << result.stats.skip_reason;
    }
  }
  std::filesystem::remove_all(o.out_dir);
}

struct PlantedCase {
  PlantedBug bug;
  char const* profile;
  char const* check;
};

class MallocPlanted : public ::testing::TestWithParam<PlantedCase> {};

TEST_P(MallocPlanted, TheGenericStressCatchesThePlantedAdapterBug) {
  PlantedCase const c = GetParam();
  runner::StressOptions o;
  o.seconds          = 60;
  o.max_cases        = 400;
  o.max_failures     = 1;
  o.request.profile  = c.profile;
  o.request.runner   = "malloc-model";
  o.request.heap_mib = 1;
  o.out_dir          = std::filesystem::temp_directory_path() /
              ("heaplab-malloc-planted-" + std::string(to_string(c.bug)));
  std::filesystem::remove_all(o.out_dir);
  auto const result = runner::run_stress(family(), o, [&](unsigned) {
    return std::make_unique<MallocRunner>(
        "planted", [&] { return make_planted_subject(make_reference_subject(), c.bug); }, true);
  });
  ASSERT_EQ(1u, result.failures.size())
      << to_string(c.bug) << " was not caught in " << result.stats.cases << " cases";
  EXPECT_EQ(c.check, result.failures.front().failure.check);
  EXPECT_LT(result.stats.cases, 100u) << "caught, but only after many cases";
  std::filesystem::remove_all(o.out_dir);
}

INSTANTIATE_TEST_SUITE_P(
    Bugs,
    MallocPlanted,
    ::testing::Values(PlantedCase{PlantedBug::overlap, "mixed", "malloc-disjoint"},
                      PlantedCase{PlantedBug::misaligned, "mixed", "malloc-aligned"},
                      PlantedCase{PlantedBug::overrun, "mixed", "malloc-cookies-intact"},
                      PlantedCase{PlantedBug::lost_free, "oom", "malloc-null-justified"}),
    [](auto const& info) {
      std::string n = to_string(info.param.bug);
      for (char& ch : n)
        if (ch == '-') ch = '_';
      return n;
    });

TEST(MallocRegistry, TheFamilyAndItsRunnersAreRegistered) {
  auto const& registry = runner::Registry::instance();
  ASSERT_NE(nullptr, registry.family("malloc"));
  EXPECT_EQ(registry.family("malloc"), registry.family_of_format(kMallocFormatName));
  for (char const* name : {"malloc-model", "malloc-cuda", "malloc-rw-gpu"})
    EXPECT_NE(nullptr, registry.runner(name)) << name;
}

TEST(MallocRunners, TheSmallestPoolReachesTheRunnerInWholeMiBRoundedUp) {
  // RunnerInfo::min_heap_mib (the conformance suite's heap floor; malloc-gallatin's 1 GiB).
  runner::RunnerInfo const r;
  SubjectInfo s;
  auto const mib = [&](std::uint64_t bytes) {
    s.min_pool = bytes;
    return with_min_pool(r, s).min_heap_mib;
  };
  EXPECT_EQ(mib(0), 0u);
  EXPECT_EQ(mib(1), 1u);
  EXPECT_EQ(mib(std::uint64_t{1} << 20), 1u);
  EXPECT_EQ(mib((std::uint64_t{1} << 20) + 1), 2u);
  EXPECT_EQ(mib(std::uint64_t{1} << 30), 1024u);
  EXPECT_EQ(mib(std::uint64_t{1} << 62), 0xFFFFFFFFu);  // saturates
  s.min_pool = std::uint64_t{1} << 30;
  runner::RunnerInfo named;
  named.name = "x";
  EXPECT_EQ(with_min_pool(named, s).name, "x");  // the rest of the info is kept
}

}  // namespace
}  // namespace heaplab::malloc_family
