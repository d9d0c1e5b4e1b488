// One property suite for every runner, instantiated by name (docs/testing.md "Runner properties";
// the style of RMM's mr_ref_tests.cpp): whatever runs schedules — the reference model, the
// differential runner over the model executor, the GPU runner — must pass random schedules of the
// configs it supports, report every step once and in order, and reject a malformed schedule as
// bad input before running it. Runner-specific tests stay next to the runner (differential_test,
// gpu_runner_test); a new runner gets these properties by adding its name below.
//
// Compiled twice (proofs_tests/families/heap/CMakeLists.txt): the cpu-tier binary instantiates the
// CPU runners, the gpu-tier binary (HEAPLAB_RUNNER_PROPERTY_GPU) the "gpu" runner, which reports
// SKIPPED with the reason where it cannot run (a failure under HEAPLAB_REQUIRE_GPU=1).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/families/heap/family.hpp"
#include "heaplab/families/heap/heap_runner.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/schedule/generators.hpp"
#include "property.hpp"

namespace heaplab {
namespace {

class RunnerProperty : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string const reason = runner::unavailable_reason(GetParam());
    if (reason.empty()) return;
    if (GetParam() == "gpu" && testing::gpu_required())
      FAIL() << "HEAPLAB_REQUIRE_GPU=1 but the gpu runner cannot run: " << reason;
    GTEST_SKIP() << "runner '" << GetParam() << "' cannot run here: " << reason;
  }
  [[nodiscard]] std::unique_ptr<heap_family::HeapRunner> make() const {
    auto r     = runner::make_runner(GetParam());
    auto* heap = dynamic_cast<heap_family::HeapRunner*>(r.get());
    if (!heap) ADD_FAILURE() << GetParam() << " is not a heap runner";
    (void)r.release();
    return std::unique_ptr<heap_family::HeapRunner>(heap);
  }
  /// GPU cases cost a device round trip per step; the CPU runners take more.
  [[nodiscard]] int cases() const { return GetParam() == "gpu" ? 40 : 100; }
};

TEST_P(RunnerProperty, PassesRandomSchedulesAndReportsEveryStepInOrder) {
  auto r = make();
  EXPECT_EQ(r->name(), GetParam());
  std::size_t created = 0;
  testing::check_property(cases(),
                          [&] {
                            core::HeapConfig const config = *heap_family::configs_for(GetParam());
                            schedule::Schedule const s    = *schedule::gen::schedule_for(config);
                            std::vector<std::size_t> seen;
                            runner::RunOutcome const outcome =
                                r->run(s, [&](runner::StepReport const& step) {
                                  seen.push_back(step.index);
                                  created += step.count("created");
                                  RC_ASSERT(step.ok);
                                });
                            if (outcome.failure) RC_FAIL(runner::format_failure(*outcome.failure));
                            RC_ASSERT(outcome.steps_run == s.steps.size());
                            RC_ASSERT(seen.size() == s.steps.size());
                            for (std::size_t i = 0; i < seen.size(); ++i) RC_ASSERT(seen[i] == i);
                          },
                          {/*shrink=*/r->deterministic(), /*print=*/true});
  EXPECT_GT(created, 0u) << "the schedules never allocated: the property did not exercise "
                         << GetParam();
  EXPECT_TRUE(r->usable());
}

TEST_P(RunnerProperty, RejectsADefragOfAnUnknownTypeAsBadInputBeforeRunning) {
  auto r = make();
  testing::check_property(cases() / 4,
                          [&] {
                            core::HeapConfig const config = *heap_family::configs_for(GetParam());
                            schedule::Schedule s          = *schedule::gen::schedule_for(config);
                            schedule::Defrag bad;
                            bad.type = config.num_types() + 7;  // no such type
                            s.steps.push_back(bad);
                            std::size_t steps_reported = 0;
                            bool threw                 = false;
                            try {
                              (void)r->run(s, [&](runner::StepReport const&) { ++steps_reported; });
                            } catch (core::precondition_error const&) {
                              threw = true;
                            }
                            RC_ASSERT(threw);
                            RC_ASSERT(steps_reported == 0u);  // validated before the first step ran
                          },
                          {/*shrink=*/r->deterministic(), /*print=*/true});
  EXPECT_TRUE(r->usable());
}

#if defined(HEAPLAB_RUNNER_PROPERTY_GPU)
std::vector<std::string> const kRunners{"gpu"};
#else
std::vector<std::string> const kRunners{"model", "differential-model"};
#endif

INSTANTIATE_TEST_SUITE_P(Runners,
                         RunnerProperty,
                         ::testing::ValuesIn(kRunners),
                         [](::testing::TestParamInfo<std::string> const& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace heaplab
