// Unit tests of the bump family's runners (bump_runner.hpp, bump_family.cpp, bump_planted.cpp):
// the registered runners pass generated schedules of every profile and report every step; the
// runner turns each kind of wrong answer of a backend into the failure its invariant names; the
// planted race is caught; the generator is a pure function; minimize shrinks a failing schedule
// with the family's reductions.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "bump_family.hpp"
#include "bump_runner.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/runner/minimize.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace heaplab::bump_family {
namespace {

BumpSchedule const& unwrap(runner::AnySchedule const& s) { return BumpFamily::unwrap(s); }

runner::AnySchedule generated(std::string const& profile, std::uint64_t seed, std::uint32_t size) {
  runner::GenerationRequest request;
  request.profile = profile;
  return family().generate(request, seed, size);
}

BumpAlloc wave(std::uint32_t threads, std::uint64_t size, std::uint64_t align = 1) {
  BumpAlloc a;
  a.threads = threads;
  a.sizes   = {size};
  a.align   = align;
  return a;
}

/// The sequential bump with one planted defect, for deterministic failures.
class FaultyBackend final : public BumpBackend {
 public:
  enum class Fault { misalign, off_by_one_end, keep_top_on_free_all, throw_on_wave };
  FaultyBackend(std::uint64_t arena, Fault fault) : arena_(arena), fault_(fault) {}
  std::vector<std::uint64_t> alloc_wave(BumpAlloc const& w) override {
    if (fault_ == Fault::throw_on_wave) throw std::runtime_error("the backend gave up");
    std::vector<std::uint64_t> out(w.threads, kNull);
    for (std::uint32_t t = 0; t < w.threads; ++t) {
      std::uint64_t const start = align_up(top_, w.align) + (fault_ == Fault::misalign ? 1 : 0);
      std::uint64_t const slack = fault_ == Fault::off_by_one_end ? 1 : 0;  // end <= arena + 1
      if (start + w.size_of(t) > arena_ + slack) continue;
      out[t] = start;
      top_   = start + w.size_of(t);
    }
    return out;
  }
  void free_all() override {
    if (fault_ != Fault::keep_top_on_free_all) top_ = 0;
  }
  [[nodiscard]] std::uint64_t top() const override { return top_; }

 private:
  std::uint64_t arena_;
  Fault fault_;
  std::uint64_t top_ = 0;
};

BumpRunner faulty_runner(FaultyBackend::Fault fault) {
  return BumpRunner(
      "faulty",
      [fault](std::uint64_t arena) { return std::make_unique<FaultyBackend>(arena, fault); },
      true);
}

TEST(BumpRunners, AreRegisteredWithTheFamily) {
  auto& registry = runner::Registry::instance();
  ASSERT_EQ(registry.family("bump"), &family());
  EXPECT_EQ(registry.family_of_format("heaplab-bump-schedule"), &family());
  std::vector<std::string> names;
  for (auto const* r : registry.runners_of("bump")) names.push_back(r->name);
  EXPECT_EQ(
      names,
      (std::vector<std::string>{"bump-model", "bump-cpu", "bump-cpu-lost", "bump-cpu-planted"}));
  EXPECT_TRUE(runner::make_runner("bump-model")->deterministic());
  EXPECT_FALSE(runner::make_runner("bump-cpu")->deterministic());
}

TEST(BumpRunners, PassGeneratedSchedulesOfEveryProfileAndReportEveryStep) {
  for (char const* name : {"bump-model", "bump-cpu"}) {
    auto r = runner::make_runner(name);
    for (auto const& profile : family().profiles()) {
      std::uint64_t nulls = 0;
      for (std::uint32_t k = 0; k < 30; ++k) {
        auto const s     = generated(profile.name, 1000 + k, 1 + k * 3);
        std::size_t next = 0;
        auto const out   = r->run(s, [&](runner::StepReport const& step) {
          EXPECT_EQ(step.index, next++);
          EXPECT_FALSE(step.line.empty());
          EXPECT_EQ(step.capacity, unwrap(s).arena);
          nulls += step.count("nulls");
        });
        ASSERT_TRUE(out.ok()) << name << " " << profile.name << " case " << k << ": "
                              << runner::format_failure(*out.failure);
        EXPECT_EQ(out.steps_run, unwrap(s).steps.size());
        EXPECT_EQ(next, unwrap(s).steps.size());
      }
      EXPECT_GT(nulls, 0u) << name << " " << profile.name << ": no request ran out of arena";
    }
  }
}

TEST(BumpRunners, TheModelCountsAndDescribesEachStep) {
  BumpSchedule s;
  s.arena = 100;
  s.steps = {wave(4, 30), BumpFreeAll{}, wave(2, 8, 64)};
  auto r  = runner::make_runner("bump-model");
  std::vector<runner::StepReport> steps;
  auto const out = r->run(family().wrap(s), [&](auto const& step) { steps.push_back(step); });
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].count("granted"), 3u);
  EXPECT_EQ(steps[0].count("nulls"), 1u);
  EXPECT_EQ(steps[0].count("bytes"), 90u);
  EXPECT_EQ(steps[0].line,
            "step 0: alloc threads=4 size=30 align=1 seed=0 | live 3, top 90/100 B | granted 3, "
            "nulls 1 | ok");
  EXPECT_EQ(steps[1].count("free_alls"), 1u);
  EXPECT_EQ(steps[1].live, 0u);
  EXPECT_EQ(steps[2].in_use, 72u);  // 0 and 64
  EXPECT_EQ(steps[2].count("granted"), 2u);
}

TEST(BumpRunners, EachFaultOfABackendIsReportedByItsCheck) {
  BumpSchedule s;
  s.arena = 64;
  // The last wave's 8th grant ends at 65 = arena + 1: only an off-by-one end check grants it.
  s.steps = {wave(3, 8, 8), BumpFreeAll{}, wave(1, 9), wave(8, 7)};
  struct Case {
    FaultyBackend::Fault fault;
    std::size_t step;
    char const* check;
  };
  for (Case const c : {Case{FaultyBackend::Fault::misalign, 0, "bump-aligned"},
                       Case{FaultyBackend::Fault::keep_top_on_free_all, 1, "bump-free-all-resets"},
                       Case{FaultyBackend::Fault::off_by_one_end, 3, "bump-inside-arena"},
                       Case{FaultyBackend::Fault::throw_on_wave, 0, "exception"}}) {
    BumpRunner r         = faulty_runner(c.fault);
    std::size_t reported = 0;
    auto const out       = r.run(s, [&](runner::StepReport const& step) {
      ++reported;
      EXPECT_EQ(step.ok, step.index != c.step);
    });
    ASSERT_FALSE(out.ok()) << c.check;
    EXPECT_EQ(out.failure->check, c.check);
    EXPECT_EQ(out.failure->step, c.step);
    EXPECT_EQ(out.steps_run, c.step + 1);
    EXPECT_EQ(reported, c.step + 1);
    EXPECT_EQ(out.failure->kind,
              c.fault == FaultyBackend::Fault::throw_on_wave
                  ? runner::FailureKind::crash
                  : runner::FailureKind::invariant_violation);
  }
}

TEST(BumpRunners, RejectInvalidSchedulesAndSchedulesOfAnotherTypeAsBadInput) {
  auto r = runner::make_runner("bump-model");
  BumpSchedule s;
  s.steps = {wave(0, 8)};
  EXPECT_THROW((void)r->run(family().wrap(s)), schedule::schedule_error);
  struct Other {
    std::vector<int> steps;
    std::string description;
  };
  runner::AnySchedule const other(family(), Other{});
  EXPECT_THROW((void)r->run(other), core::precondition_error);
  EXPECT_THROW((void)r->supports(other), core::precondition_error);
}

TEST(BumpRunners, ThePlantedRaceIsCaughtAsOverlappingGrants) {
  BumpSchedule s;
  s.arena = 1 << 20;
  s.steps = {wave(64, 16, 8)};
  auto r  = runner::make_runner("bump-cpu-planted");
  std::optional<runner::Failure> failure;
  for (int attempt = 0; attempt < 10 && !failure; ++attempt)
    failure = r->run(family().wrap(s)).failure;
  ASSERT_TRUE(failure) << "the planted race never showed in 10 runs";
  EXPECT_EQ(failure->check, "bump-disjoint");
  EXPECT_EQ(failure->kind, runner::FailureKind::invariant_violation);
}

TEST(BumpGenerator, IsAPureFunctionOfRequestSeedAndSize) {
  for (auto const& profile : family().profiles())
    for (std::uint32_t size : {1u, 50u, 100u}) {
      auto const a = generated(profile.name, 42, size);
      EXPECT_EQ(family().to_json(a), family().to_json(generated(profile.name, 42, size)));
      EXPECT_NO_THROW(validate(unwrap(a)));
    }
  EXPECT_NE(family().to_json(generated("small", 1, 50)),
            family().to_json(generated("small", 2, 50)));
  runner::GenerationRequest capped;
  capped.profile  = "wide";
  capped.max_size = 100;
  EXPECT_LE(unwrap(family().generate(capped, 5, 50)).arena, 100u);
  EXPECT_THROW((void)generated("huge", 1, 1), core::precondition_error);
}

TEST(BumpMinimize, ShrinksAFailingScheduleWithTheFamilysReductions) {
  // Wave 2: threads asking for 101 bytes (even) or 7 (odd), the first in its order an even one,
  // which the off-by-one end check grants [0, 101) in an arena of 100.
  BumpAlloc w = wave(64, 101, 16);
  w.sizes     = {101, 7};
  while (wave_order(w).front() % 2 != 0) ++w.seed;
  BumpSchedule s;
  s.arena          = 100;
  s.steps          = {wave(3, 10), BumpFreeAll{}, w, wave(2, 5)};
  BumpRunner r     = faulty_runner(FaultyBackend::Fault::off_by_one_end);
  auto const first = r.run(s);
  ASSERT_FALSE(first.ok());
  ASSERT_EQ(first.failure->check, "bump-inside-arena");
  ASSERT_EQ(first.failure->step, 2u);
  std::vector<std::string> log;
  runner::MinimizeOptions options;
  options.log = [&](std::string const& line) { log.push_back(line); };
  std::string why;
  auto const result = runner::minimize(r, family().wrap(s), std::nullopt, options, &why);
  ASSERT_TRUE(result) << why;
  EXPECT_EQ(result->failure.check, "bump-inside-arena");
  BumpSchedule const& small = unwrap(result->schedule);
  ASSERT_EQ(small.steps.size(), 1u);
  auto const& a = std::get<BumpAlloc>(small.steps[0]);
  EXPECT_EQ(a.threads, 1u);
  EXPECT_EQ(a.sizes, std::vector<std::uint64_t>{101});
  EXPECT_EQ(a.align, 1u);
  EXPECT_EQ(small.arena, 100u);  // any smaller arena passes: 101 > arena + 1
  EXPECT_FALSE(r.run(small).ok());
  EXPECT_FALSE(log.empty());
}

}  // namespace
}  // namespace heaplab::bump_family
