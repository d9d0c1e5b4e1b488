// RapidCheck GPU properties over schedules (docs/gpu-runner.md "Tests"; issue 5 "Verify"): for
// each type universe, random configs (the universe's types with random M, n, k1) and random
// schedules (schedule::gen::schedule_for) run on the "gpu" runner, a DifferentialRunner over the
// GPU allocator. After every step the runner checks that the whole invariant catalog holds on the
// GPU's snapshot, that the model accepts the GPU's placements by refinement (and a null
// allocation only when it was justified: oom-justified, docs/invariants.md), and that the GPU's
// snapshot equals the model's: placements, bitmaps, state bitmaps, and the live-object graph
// (ids, cookies, pointer targets), plus the external roots.
//
// GPU runs are nondeterministic, so shrinking is off; a failing case is written as a failure file
// under $HEAPLAB_FAILURE_DIR (default failures/) and the test prints its path and the replay
// command.
//
// Cases: 100 per universe (RC_PARAMS="max_success=N" for more); 5 under a CUDA tool such as
// compute-sanitizer, where kernels run 10-100x slower (HEAPLAB_GPU_PROPERTY_CASES overrides both).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "gpu_runner_support.hpp"
#include "gpu_test.hpp"
#include "heaplab/families/heap/gpu/universe_gen.hpp"
#include "heaplab/schedule/generators.hpp"

namespace gpu_runner_test {
namespace {

int property_cases() {
  if (char const* n = std::getenv("HEAPLAB_GPU_PROPERTY_CASES"); n != nullptr && *n != '\0')
    return std::max(1, std::atoi(n));
  return under_cuda_tool() ? 5 : 100;
}

void run_property(std::string const& universe_name) {
  std::size_t universe = gpu::universes().size();
  for (std::size_t u = 0; u < gpu::universes().size(); ++u)
    if (gpu::universes()[u].name == universe_name) universe = u;
  ASSERT_LT(universe, gpu::universes().size()) << "no universe " << universe_name;
  auto runner = gpu_runner();
  StepStats stats;
  std::uint64_t case_number = 0;
  int const cases           = property_cases();
  check_property_noshrink(cases, [&] {
    core::HeapConfig const config = *gpu::universe_config_gen(universe);
    schedule::Schedule const s    = *schedule::gen::schedule_for(config);
    ++case_number;
    ++stats.runs;
    runner::RunOutcome const outcome =
        runner->run(s, [&](runner::StepReport const& r) { stats.add(r); });
    if (!outcome.ok()) {
      std::string const report =
          save_failure(*runner, s, *outcome.failure, "property", case_number);
      if (outcome.failure->kind == runner::FailureKind::hang || !runner->usable())
        exit_after_hang(report);
      RC_FAIL(report + runner::format_failure(*outcome.failure));
    }
  });
  std::cout << "[ STATS    ] universe " << universe_name << ": " << stats.to_string() << "\n";
  EXPECT_GE(stats.runs, static_cast<std::uint64_t>(cases));
  // The schedules must have exercised the GPU: objects were created and freed.
  EXPECT_GT(stats.created, 0u);
  EXPECT_GT(stats.deleted, 0u);
}

/// One instance per type universe of the GPU runner (gpu::universes(): wator, sizes, tree and
/// the layout universes head8/16/32, whose objects do not start with their id).
class GpuRunnerProperty : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuRunnerProperty, UniverseMatchesTheModelAfterEveryStep) {
  HEAPLAB_REQUIRE_GPU();
  run_property(GetParam());
}

std::vector<std::string> universe_names() {
  std::vector<std::string> names;
  for (auto const& u : gpu::universes()) names.push_back(u.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Universes,
                         GpuRunnerProperty,
                         ::testing::ValuesIn(universe_names()),
                         [](::testing::TestParamInfo<std::string> const& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace gpu_runner_test
