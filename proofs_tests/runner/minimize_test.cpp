// Minimizing failing schedules (runner/minimize.hpp) with planted failures: an implementation bug
// that needs a fill, a thinning free and a defrag to show, a pinned digest, and a flaky runner
// that fails only on some runs (the K-reruns rule).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>

#include "fake_executors.hpp"
#include "heap_schedules.hpp"
#include "heaplab/families/heap/family.hpp"
#include "heaplab/families/heap/model_runner.hpp"
#include "heaplab/runner/minimize.hpp"
#include "heaplab/schedule/generators.hpp"
#include "heaplab/schedule/json.hpp"

namespace heaplab::test {
namespace {

using runner::FailureKind;

runner::AnySchedule any(schedule::Schedule s) { return heap_family::family().wrap(std::move(s)); }
schedule::Schedule const& sched(runner::AnySchedule const& a) {
  return heap_family::HeapFamily::unwrap(a);
}

/// Random noise steps over `config` around the three steps that expose LostCookieOnMove: a fill
/// of three blocks, a free of half of it, a defrag (objects move).
schedule::Schedule noisy_failing_schedule(std::uint64_t seed) {
  schedule::Schedule s = tiny_schedule(8);
  auto const noise     = schedule::gen::steps(s.config);
  auto before          = noise(rc::Random(seed), 30).value();
  auto after           = noise(rc::Random(seed + 1000), 30).value();
  s.steps              = before;
  s.steps.push_back(alloc(150));
  s.steps.push_back(free_fraction(0.5, seed));
  s.steps.push_back(defrag(0));
  s.steps.insert(s.steps.end(), after.begin(), after.end());
  return s;
}

TEST(Minimize, ReducesAPlantedImplementationBugToAtMostFiveSteps) {
  int minimized = 0;
  for (std::uint64_t seed = 1; seed <= 40 && minimized < 6; ++seed) {
    schedule::Schedule const input = noisy_failing_schedule(seed);
    heap_family::DifferentialRunner r(std::make_unique<LostCookieOnMoveExecutor>());
    auto const first = r.run(input);
    if (!first.failure) continue;  // the noise emptied the heap before the defrag: no move
    ASSERT_EQ(first.failure->check, "cookie-matches-id") << runner::format_failure(*first.failure);
    std::vector<std::string> log;
    runner::MinimizeOptions options;
    options.log = [&](std::string const& line) { log.push_back(line); };
    std::string why;
    auto const result = runner::minimize(r, any(input), std::nullopt, options, &why);
    ASSERT_TRUE(result.has_value()) << why;
    SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(input.steps.size()) +
                 " steps:\n" + schedule::dump(sched(result->schedule)));
    std::printf("seed %llu: steps %zu -> %zu, M %u -> %u, %zu runs\n",
                static_cast<unsigned long long>(seed),
                input.steps.size(),
                sched(result->schedule).steps.size(),
                input.config.num_blocks,
                sched(result->schedule).config.num_blocks,
                result->runs);
    EXPECT_LE(sched(result->schedule).steps.size(), 5u);
    EXPECT_LT(sched(result->schedule).steps.size(), input.steps.size());
    EXPECT_EQ(result->original_steps, input.steps.size());
    EXPECT_FALSE(result->budget_exhausted);
    EXPECT_FALSE(log.empty());
    // The result fails the same way, on a fresh run...
    auto const again = r.run(sched(result->schedule));
    ASSERT_TRUE(again.failure.has_value());
    EXPECT_EQ(again.failure->kind, FailureKind::invariant_violation);
    EXPECT_EQ(again.failure->check, "cookie-matches-id");
    EXPECT_EQ(result->failure.check, "cookie-matches-id");
    // ...it is a defrag that moves objects, so it still has a defrag step...
    bool has_defrag = false;
    for (auto const& step : sched(result->schedule).steps)
      has_defrag = has_defrag || std::holds_alternative<schedule::Defrag>(step);
    EXPECT_TRUE(has_defrag);
    // ...and the model alone passes it: the bug is the implementation's.
    heap_family::ModelRunner model;
    EXPECT_TRUE(model.run(sched(result->schedule)).ok());
    ++minimized;
  }
  EXPECT_GE(minimized, 6) << "too few of the noisy schedules failed; the test needs failing inputs";
}

TEST(Minimize, APinnedDigestShrinksToTheCheckAlone) {
  auto const input = schedule::load(data_file("model/data/fails_digest.json"));
  heap_family::ModelRunner r;
  auto const result = runner::minimize(
      r, any(input), runner::FailureSignature{FailureKind::digest_mismatch, "graph-digest"}, {});
  ASSERT_TRUE(result.has_value());
  ASSERT_EQ(sched(result->schedule).steps.size(), 1u) << schedule::dump(sched(result->schedule));
  EXPECT_TRUE(std::holds_alternative<schedule::Check>(sched(result->schedule).steps[0]));
  EXPECT_EQ(sched(result->schedule).config.num_blocks, 1u);  // M shrinks too
  EXPECT_EQ(result->failure.kind, FailureKind::digest_mismatch);
}

TEST(Minimize, AnInputThatDoesNotFailTheSameWayIsReported) {
  auto const input = schedule::load(data_file("model/data/fails_digest.json"));
  heap_family::ModelRunner r;
  std::string why;
  auto const result =
      runner::minimize(r,
                       any(input),
                       runner::FailureSignature{FailureKind::invariant_violation, "pointers-valid"},
                       {},
                       &why);
  EXPECT_FALSE(result.has_value());
  EXPECT_NE(why.find("does not fail with kind invariant_violation and check pointers-valid"),
            std::string::npos)
      << why;
  auto const passing = schedule::load(data_file("model/data/wator.json"));
  EXPECT_FALSE(runner::minimize(r, any(passing), std::nullopt, {}, &why).has_value());
}

/// Fails (check "planted-flaky") on every third run of a schedule that contains a defrag step,
/// like a GPU race that shows up only sometimes.
class FlakyRunner final : public heap_family::HeapRunner {
 public:
  [[nodiscard]] std::string name() const override { return "flaky"; }
  [[nodiscard]] bool deterministic() const override { return false; }
  int calls = 0;

 protected:
  [[nodiscard]] runner::Support supports_config(core::HeapConfig const&) const override {
    return {};
  }
  runner::RunOutcome run_schedule(schedule::Schedule const& s,
                                  runner::StepCallback const&) override {
    runner::RunOutcome out = model_.run(s);
    ++calls;
    for (std::size_t i = 0; i < s.steps.size() && calls % 3 == 0; ++i)
      if (std::holds_alternative<schedule::Defrag>(s.steps[i])) {
        runner::Failure f;
        f.step      = i;
        f.kind      = FailureKind::invariant_violation;
        f.check     = "planted-flaky";
        out.failure = f;
        break;
      }
    return out;
  }

 private:
  heap_family::ModelRunner model_;
};

TEST(Minimize, ACandidateFailsIfAnyOfKRunsFails) {
  schedule::Schedule input = tiny_schedule(4);
  input.steps              = {alloc(10), alloc(20), free_fraction(0.5, 1), defrag(0), alloc(3)};
  runner::FailureSignature const target{FailureKind::invariant_violation, "planted-flaky"};
  {
    FlakyRunner once;
    runner::MinimizeOptions k1;
    k1.reruns = 1;
    std::string why;
    EXPECT_FALSE(runner::minimize(once, any(input), target, k1, &why).has_value())
        << "one run of the input passes (it fails on every third run only)";
    EXPECT_EQ(once.calls, 1);
  }
  FlakyRunner thrice;
  runner::MinimizeOptions k3;
  k3.reruns         = 3;
  auto const result = runner::minimize(thrice, any(input), target, k3);
  ASSERT_TRUE(result.has_value());
  ASSERT_EQ(sched(result->schedule).steps.size(), 1u) << schedule::dump(sched(result->schedule));
  EXPECT_TRUE(std::holds_alternative<schedule::Defrag>(sched(result->schedule).steps[0]));
}

TEST(Minimize, StopsAtTheRunBudgetWithAFailingResult) {
  schedule::Schedule const input = noisy_failing_schedule(3);
  heap_family::DifferentialRunner r(std::make_unique<LostCookieOnMoveExecutor>());
  ASSERT_FALSE(r.run(input).ok());
  runner::MinimizeOptions options;
  options.max_runs  = 4;
  auto const result = runner::minimize(r, any(input), std::nullopt, options);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->budget_exhausted);
  EXPECT_EQ(result->runs, 4u);
  EXPECT_FALSE(r.run(sched(result->schedule)).ok());
}

TEST(Minimize, AHangingCandidateStopsMinimizationWithTheBestSoFar) {
  // The hang happens at step 2; the input is confirmed and the first candidate hangs.
  schedule::Schedule input = tiny_schedule(4);
  input.steps              = {alloc(1), alloc(1), alloc(1), alloc(1)};
  heap_family::DifferentialRunner r(std::make_unique<HangingExecutor>(2));
  auto const result = runner::minimize(r, any(input), std::nullopt, {});
  EXPECT_FALSE(result.has_value()) << "the runner is unusable after the input's own hang";
  EXPECT_FALSE(r.usable());
}

}  // namespace
}  // namespace heaplab::test
