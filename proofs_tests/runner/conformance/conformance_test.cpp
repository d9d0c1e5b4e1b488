// The runner conformance suite: one value-parameterized suite over every registered runner of every
// family (runner::Registry::instance().runner_names(), read when GoogleTest registers its tests,
// after static initialization), the way RMM instantiates one conformance suite per memory
// resource. A new runner or a new family adds no test code: linking its library adds its runners
// here. What every runner must satisfy (runner/family.hpp, the contracts of Family and Runner):
//   1. generated schedules pass; on_step is called once per step, in order, indices 0..n-1;
//      steps_run == steps; every StepReport has a non-empty line;
//   2. a deterministic runner gives the same outcome and step lines on a rerun, and a run after
//      another schedule equals a run alone (every run starts from an empty heap);
//   3. the family's JSON form round-trips (from_json(to_json(s)) has the same canonical JSON) and
//      a document with an unknown key is a schedule_error;
//   4. keep_steps of any subset runs without throwing;
//   5. a schedule of another family is rejected by throwing, before any step (never a crash
//      failure);
//   6. a failure file of the family with a generated schedule dumps and parses back equal.
// Cases are the family's generate(request, seed, size) with the runner's default profile (else
// the family's first) and request.runner set to the runner; seed and size (1..100) come from
// RapidCheck.
//
// Compiled twice (CMakeLists.txt): the cpu-tier binary instantiates the runners without uses_gpu,
// the gpu-tier binary (HEAPLAB_CONFORMANCE_GPU) those with uses_gpu. A runner that cannot run
// here is SKIPPED with runner::unavailable_reason (a GPU runner under HEAPLAB_REQUIRE_GPU=1 fails
// instead).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu_test.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/schedule/schedule.hpp"
#include "property.hpp"

namespace heaplab {
namespace {

#if defined(HEAPLAB_CONFORMANCE_GPU)
constexpr bool kGpuTier = true;
#else
constexpr bool kGpuTier = false;
#endif

/// The registered runners of this binary's tier, by name.
std::vector<std::string> runners_of_this_tier() {
  std::vector<std::string> out;
  for (runner::RunnerInfo const* info : runner::Registry::instance().runners())
    if (info->uses_gpu == kGpuTier) out.push_back(info->name);
  return out;
}

/// One generated case: the family's generate(request, seed, size).
struct Case {
  std::uint64_t seed = 0;
  std::uint32_t size = 0;
  runner::AnySchedule schedule;
};

/// What a run shows from outside: how far it got, its failure, its step lines.
struct Trace {
  std::size_t steps_run = 0;
  std::optional<runner::FailureRecord> failure;
  std::vector<std::string> lines;
  friend bool operator==(Trace const& a, Trace const& b) {
    return a.steps_run == b.steps_run && a.failure == b.failure && a.lines == b.lines;
  }
};

Trace trace(runner::Runner& r, runner::AnySchedule const& s) {
  Trace t;
  runner::RunOutcome const out =
      r.run(s, [&](runner::StepReport const& step) { t.lines.push_back(step.line); });
  t.steps_run = out.steps_run;
  if (out.failure) t.failure = out.failure->record();
  return t;
}

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (kGpuTier) HEAPLAB_REQUIRE_GPU();
    std::string const reason = runner::unavailable_reason(GetParam());
    if (reason.empty()) return;
    if (info().uses_gpu && testing::gpu_required())
      FAIL() << "HEAPLAB_REQUIRE_GPU=1 but runner '" << GetParam() << "' cannot run: " << reason;
    GTEST_SKIP() << "runner '" << GetParam() << "' cannot run here: " << reason;
  }

  [[nodiscard]] runner::RunnerInfo const& info() const {
    return *runner::Registry::instance().runner(GetParam());
  }
  [[nodiscard]] runner::Family const& family() const {
    return runner::family_of_runner(GetParam());
  }
  [[nodiscard]] std::unique_ptr<runner::Runner> make() const {
    return runner::make_runner(GetParam());
  }
  /// GPU runners pay a device round trip per step. check_property runs at least RapidCheck's
  /// max_success (100 unless RC_PARAMS says otherwise) whatever this asks.
  [[nodiscard]] int cases() const { return info().uses_gpu ? 20 : 100; }

  [[nodiscard]] runner::GenerationRequest request() const {
    runner::GenerationRequest r;
    r.profile =
        info().default_profile.empty() ? family().profiles().front().name : info().default_profile;
    r.runner   = GetParam();
    r.max_size = info().default_max_size;
    // A runner whose heap is the process's (one_per_process: CUDA malloc, the peers) gets the
    // campaigns' 64 MiB (docs/results.md): at the default 16 MiB one fill of CUDA's malloc took
    // more than 30 s on an H200 (2026-11-28), so 20 cases outlast the test's budget.
    if (info().one_per_process) r.heap_mib = 64;
    r.heap_mib = std::max(r.heap_mib, info().min_heap_mib);  // malloc-gallatin: 1 GiB
    return r;
  }
  /// A case drawn by RapidCheck (inside a property).
  [[nodiscard]] Case generated() const {
    Case c;
    c.seed     = *rc::gen::arbitrary<std::uint64_t>();
    c.size     = *rc::gen::inRange<std::uint32_t>(1, 101);
    c.schedule = family().generate(request(), c.seed, c.size);
    return c;
  }
};

TEST_P(Conformance, GeneratedSchedulesPassAndEveryStepIsReportedOnceInOrder) {
  auto r = make();
  EXPECT_EQ(r->name(), GetParam());
  testing::check_property(cases(),
                          [&] {
                            runner::AnySchedule const s = generated().schedule;
                            RC_PRE(r->supports(s).supported);
                            std::vector<std::size_t> seen;
                            std::size_t empty_lines = 0;
                            runner::RunOutcome const out =
                                r->run(s, [&](runner::StepReport const& step) {
                                  seen.push_back(step.index);
                                  if (step.line.empty()) ++empty_lines;
                                });
                            if (out.failure) RC_FAIL(runner::format_failure(*out.failure));
                            std::size_t const n = family().steps(s);
                            RC_ASSERT(out.steps_run == n);
                            RC_ASSERT(seen.size() == n);
                            for (std::size_t i = 0; i < seen.size(); ++i) RC_ASSERT(seen[i] == i);
                            RC_ASSERT(empty_lines == 0u);
                          },
                          {/*shrink=*/r->deterministic(), /*print=*/false});
  EXPECT_TRUE(r->usable());
}

TEST_P(Conformance, ADeterministicRunnerRepeatsItselfAndStartsFromAnEmptyHeap) {
  // A deterministic runner gives the same trace for a schedule every time, also right after
  // another schedule. A runner that is not (the GPU ones: the hardware's schedule decides) is
  // held to what holds for it too: a schedule it passed alone, it passes after another one, every
  // step run (a heap left over from the other schedule would show as a failure or an OOM). Not a
  // skip: the GPU tier counts a skipped test on a GPU box as a failure (tools/gpu-tier).
  auto alone               = make();
  bool const deterministic = alone->deterministic();
  auto after               = make();
  testing::check_property(
      cases(),
      [&] {
        runner::AnySchedule const s     = generated().schedule;
        runner::AnySchedule const other = generated().schedule;
        RC_PRE(alone->supports(s).supported && alone->supports(other).supported);
        Trace const first = trace(*alone, s);
        if (deterministic) {
          RC_ASSERT(trace(*alone, s) == first);
          (void)trace(*after, other);
          RC_ASSERT(trace(*after, s) == first);
          return;
        }
        RC_PRE(!first.failure.has_value());
        (void)trace(*after, other);
        Trace const again = trace(*after, s);
        RC_ASSERT(!again.failure.has_value());
        RC_ASSERT(again.steps_run == first.steps_run);
        RC_ASSERT(again.lines.size() == first.lines.size());
      },
      {deterministic, false});
}

TEST_P(Conformance, TheFamilysJsonFormRoundTripsAndRefusesUnknownKeys) {
  testing::check_property(cases(),
                          [&] {
                            runner::AnySchedule const s    = generated().schedule;
                            nlohmann::ordered_json const j = family().to_json(s);
                            nlohmann::json const document  = nlohmann::json::parse(j.dump());
                            runner::AnySchedule const back = family().from_json(document);
                            RC_ASSERT(family().to_json(back) == j);
                            RC_ASSERT(family().steps(back) == family().steps(s));
                            nlohmann::json extra             = document;
                            extra["conformance_unknown_key"] = 1;
                            bool refused                     = false;
                            try {
                              (void)family().from_json(extra);
                            } catch (schedule::schedule_error const&) {
                              refused = true;
                            }
                            RC_ASSERT(refused);
                          },
                          {true, false});
}

TEST_P(Conformance, KeepingAnySubsetOfTheStepsRunsWithoutThrowing) {
  auto r = make();
  testing::check_property(
      cases(),
      [&] {
        runner::AnySchedule const s = generated().schedule;
        std::size_t const n         = family().steps(s);
        auto const keep = *rc::gen::container<std::vector<bool>>(n, rc::gen::arbitrary<bool>());
        std::vector<std::size_t> indices;
        for (std::size_t i = 0; i < n; ++i)
          if (keep[i]) indices.push_back(i);
        runner::AnySchedule const sub = family().keep_steps(s, indices);
        RC_ASSERT(family().steps(sub) == indices.size());
        RC_PRE(r->supports(sub).supported);
        try {
          (void)r->run(sub);
        } catch (std::exception const& e) {
          RC_FAIL(std::string("run threw on a subset of a generated schedule: ") + e.what());
        }
      },
      {r->deterministic(), false});
  EXPECT_TRUE(r->usable());
}

TEST_P(Conformance, AScheduleOfAnotherFamilyIsRejectedByThrowing) {
  std::vector<runner::Family const*> others;
  for (runner::Family const* f : runner::Registry::instance().families())
    if (f != &family()) others.push_back(f);
  if (others.empty()) GTEST_SKIP() << "no other family is linked into this binary";
  auto r = make();
  testing::check_property(cases(),
                          [&] {
                            runner::Family const* other = *rc::gen::elementOf(others);
                            runner::GenerationRequest request;
                            request.profile = other->profiles().front().name;
                            request.runner  = other->reference_runner();
                            runner::AnySchedule const s =
                                other->generate(request,
                                                *rc::gen::arbitrary<std::uint64_t>(),
                                                *rc::gen::inRange<std::uint32_t>(1, 101));
                            std::size_t reported = 0;
                            bool threw           = false;
                            try {
                              (void)r->run(s, [&](runner::StepReport const&) { ++reported; });
                            } catch (std::exception const&) {
                              threw = true;
                            }
                            RC_ASSERT(threw);
                            RC_ASSERT(reported == 0u);
                          },
                          {true, false});
  EXPECT_TRUE(r->usable());
}

TEST_P(Conformance, AFailureFileOfTheFamilyRoundTrips) {
  std::vector<runner::FailureKind> const kinds = {runner::FailureKind::invariant_violation,
                                                  runner::FailureKind::divergence,
                                                  runner::FailureKind::digest_mismatch,
                                                  runner::FailureKind::hang,
                                                  runner::FailureKind::crash};
  testing::check_property(cases(),
                          [&] {
                            Case const c        = generated();
                            std::size_t const n = family().steps(c.schedule);
                            RC_PRE(n > 0u);
                            runner::FailureFile f;
                            f.created              = "2026-11-22T10:11:12Z";
                            f.runner               = GetParam();
                            f.seed                 = c.seed;
                            f.rapidcheck           = runner::RapidCheckParams{c.seed, c.size};
                            f.origin.command       = "conformance";
                            f.failure              = {*rc::gen::inRange<std::size_t>(0, n),
                                                      *rc::gen::elementOf(kinds),
                                                      "conformance-check",
                                                      "a failure the conformance suite made up"};
                            f.schedule             = c.schedule;
                            std::string const text = runner::dump(f);
                            runner::FailureFile const back = runner::parse_failure(text);
                            RC_ASSERT(back == f);
                            RC_ASSERT(runner::dump(back) == text);
                          },
                          {true, false});
}

INSTANTIATE_TEST_SUITE_P(Runners,
                         Conformance,
                         ::testing::ValuesIn(runners_of_this_tier()),
                         [](::testing::TestParamInfo<std::string> const& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Conformance);

}  // namespace
}  // namespace heaplab
