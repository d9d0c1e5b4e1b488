// The GPU runner on fixed schedules (docs/gpu-runner.md "Tests"): the registry entry, wator.json
// replayed on the GPU, heavily divergent warps under the watchdog, injected GPU-side bugs that
// the differential path must report, heap reuse across runs and universes.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "gpu_runner_support.hpp"
#include "gpu_test.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/families/heap/differential.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/schedule/json.hpp"

namespace gpu_runner_test {
namespace {

using schedule::AllocWave;
using schedule::Divergence;
using schedule::Schedule;

// ---------------------------------------------------------------------------------- registry

TEST(GpuRunner, TheRegistryMakesTheGpuRunner) {
  HEAPLAB_REQUIRE_GPU();
  EXPECT_EQ(runner::unavailable_reason("gpu"), "");
  auto r = runner::make_runner("gpu");
  EXPECT_EQ(r->name(), "gpu");
  EXPECT_FALSE(r->deterministic());
  EXPECT_NE(r->device_name(), "none");
  EXPECT_TRUE(r->usable());
}

TEST(GpuRunner, AConfigOfNoUniverseIsRefusedWithTheReason) {
  HEAPLAB_REQUIRE_GPU();
  auto r                       = gpu_runner();
  Schedule s                   = wator();
  s.config.types[3].size_bytes = 48;  // Shark: capacity 21 instead of 32
  auto const support           = r->supports(s.config);
  EXPECT_FALSE(support.supported);
  EXPECT_NE(support.reason.find("wator: type 3 ('Shark'): size 48 here, 32 in the universe"),
            std::string::npos)
      << support.reason;
  EXPECT_THROW((void)r->run(s), core::precondition_error);
}

// ------------------------------------------------------------------------------------- wator

TEST(GpuRunner, WatorPrefixBeforeTheFirstDefragPasses) {
  HEAPLAB_REQUIRE_GPU();
  Schedule const s = prefix_before_defrag(wator());
  ASSERT_EQ(s.steps.size(), 7u);  // 4 alloc waves, parallel_do allocate_child, check, free
  auto r                           = gpu_runner();
  runner::RunOutcome const outcome = r->run(s);
  EXPECT_EQ(outcome.steps_run, 7u);
  EXPECT_TRUE(outcome.ok()) << run_and_report(*r, s);
}

TEST(GpuRunner, WatorWithoutDefragStepsPassesIncludingTheFinalGraphDigest) {
  HEAPLAB_REQUIRE_GPU();
  // Defragmentation moves objects but never changes the id graph, so wator.json without its four
  // defrag steps still ends with the pinned graph digest; the model confirms it first.
  Schedule const s = without_defrag(wator());
  ASSERT_EQ(s.steps.size(), 16u);
  ASSERT_TRUE(std::holds_alternative<schedule::Check>(s.steps.back()));
  ASSERT_TRUE(std::get<schedule::Check>(s.steps.back()).graph_digest.has_value());
  auto model = heap_family::make_runner("model");
  ASSERT_TRUE(model->run(s).ok()) << "the model does not pass wator.json without defrag steps";
  auto r = gpu_runner();
  StepStats stats;
  std::string const report =
      run_and_report(*r, s, [&](runner::StepReport const& rep) { stats.add(rep); });
  EXPECT_EQ(report, "");
  EXPECT_EQ(stats.steps, 16u);
  std::cout << "[ STATS    ] " << stats.to_string() << "\n";
}

TEST(GpuRunner, WatorWithItsDefragStepsPasses) {
  HEAPLAB_REQUIRE_GPU();
  Schedule const s = wator();
  auto r           = gpu_runner();
  EXPECT_EQ(run_and_report(*r, s), "");
  EXPECT_TRUE(r->usable());
}

// ------------------------------------------------------------------------ divergent warps

TEST(GpuRunner, HeavilyDivergentWarpsTerminateAndMatchTheModel) {
  HEAPLAB_REQUIRE_GPU();
  auto r = gpu_runner();
  for (auto const& u : gpu::universes()) {
    // Enough blocks for every object, then so few that the waves run out of memory mid-warp.
    for (std::uint32_t M : {1024u, 3u}) {
      SCOPED_TRACE(u.name + ", M = " + std::to_string(M));
      Schedule const s = divergent_schedule(u.name, M);
      StepStats stats;
      auto const start         = std::chrono::steady_clock::now();
      std::string const report = run_and_report(*r, s, [&](auto const& rep) { stats.add(rep); });
      double const seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_EQ(report, "");
      EXPECT_EQ(stats.steps, s.steps.size());
      std::cout << "[ DIVERGE  ] " << u.name << " M=" << M << ": " << stats.to_string() << " in "
                << seconds << " s\n";
      if (M == 3) {
        EXPECT_GT(stats.out_of_memory, 0u) << "M = 3 should exhaust the heap";
      } else {
        EXPECT_EQ(stats.out_of_memory, 0u);
      }
    }
  }
}

// ---------------------------------------------------------------------- injected GPU bugs

/// Whether the run failed at `step`, with `kind` and `check`.
::testing::AssertionResult failed_at(runner::RunOutcome const& outcome,
                                     std::uint64_t step,
                                     runner::FailureKind kind,
                                     std::string const& check) {
  if (outcome.ok()) return ::testing::AssertionFailure() << "the run passed";
  runner::Failure const& f = *outcome.failure;
  if (f.step == step && f.kind == kind && f.check == check) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "failed at step " << f.step << ", check " << f.check << ": " << f.message;
}

runner::RunOutcome run_with_fault(gpu::InjectedFault fault, Schedule const& s) {
  gpu::GpuExecutorOptions o;
  o.fault = fault;
  heap_family::DifferentialRunner r(std::make_unique<gpu::GpuExecutor>(o));
  return r.run(s);
}

TEST(GpuRunner, AWrongInitialPointerOnTheGpuIsADivergenceAtItsStep) {
  HEAPLAB_REQUIRE_GPU();
  Schedule s;
  s.config = gpu::universe_config("wator", 8, 1, 0);
  AllocWave cells;
  cells.type    = 0;  // Cell
  cells.threads = 32;
  cells.count   = 1;
  s.steps.push_back(cells);
  AllocWave linked = cells;
  linked.threads   = 16;
  schedule::LinkRule rule;
  rule.type = 0;
  rule.slot = 1;  // Cell.neighbors[0]
  rule.seed = 1;
  linked.links.push_back(rule);
  s.steps.push_back(linked);
  schedule::validate(s);
  runner::RunOutcome const outcome = run_with_fault(gpu::InjectedFault::drop_first_link, s);
  ASSERT_TRUE(
      failed_at(outcome, 1, runner::FailureKind::divergence, heap_family::checks::kSnapshotDiff));
  auto const* detail = heap_family::heap_detail(*outcome.failure);
  ASSERT_NE(detail, nullptr);
  ASSERT_TRUE(detail->diff.has_value());
  EXPECT_EQ(detail->diff->total, 1u) << detail->diff->to_string();
  EXPECT_EQ(detail->diff->differences.front().field, "refs[1]") << detail->diff->to_string();
}

TEST(GpuRunner, AFreeTheGpuSkippedIsADivergenceAtItsStep) {
  HEAPLAB_REQUIRE_GPU();
  Schedule s;
  s.config = gpu::universe_config("sizes", 8, 1, 0);
  AllocWave tiny;
  tiny.type    = 0;  // Tiny
  tiny.threads = 64;
  tiny.count   = 1;
  s.steps.push_back(tiny);
  schedule::FreeWave all;
  all.select.type = 0;
  s.steps.push_back(all);
  schedule::validate(s);
  runner::RunOutcome const outcome = run_with_fault(gpu::InjectedFault::skip_last_free, s);
  ASSERT_TRUE(
      failed_at(outcome, 1, runner::FailureKind::divergence, heap_family::checks::kSnapshotDiff));
  // The same schedule passes without the fault.
  auto r = gpu_runner();
  EXPECT_EQ(run_and_report(*r, s), "");
}

TEST(GpuRunner, ADataFieldByteChangedOnTheGpuIsReportedByTheFieldCheck) {
  HEAPLAB_REQUIRE_GPU();
  Schedule s;
  s.config = gpu::universe_config("wator", 8, 1, 0);
  AllocWave fish;
  fish.type    = 2;  // Fish: Agent + padding u64[2], a data field
  fish.threads = 32;
  fish.count   = 2;
  s.steps.push_back(fish);
  schedule::validate(s);
  runner::RunOutcome const outcome = run_with_fault(gpu::InjectedFault::corrupt_field_byte, s);
  ASSERT_TRUE(failed_at(
      outcome, 0, runner::FailureKind::invariant_violation, heap_family::checks::kFieldsMatchId));
  EXPECT_NE(outcome.failure->message.find("1 live object(s)"), std::string::npos)
      << outcome.failure->message;
  EXPECT_NE(outcome.failure->message.find("'Fish', field"), std::string::npos)
      << outcome.failure->message;
  // The same schedule passes without the fault: every stamped byte reads back.
  auto r = gpu_runner();
  EXPECT_EQ(run_and_report(*r, s), "");
}

// ------------------------------------------------------------------------------- reuse, reset

TEST(GpuRunner, RunsDoNotLeakIntoEachOtherAcrossConfigsAndUniverses) {
  HEAPLAB_REQUIRE_GPU();
  auto r                    = gpu_runner();
  Schedule const prefix     = prefix_before_defrag(wator());
  Schedule const sizes      = divergent_schedule("sizes", 64);
  Schedule smaller          = prefix;
  smaller.config.num_blocks = 24;  // same universe, another M: a new heap
  for (Schedule const* s :
       std::vector<Schedule const*>{&prefix, &prefix, &sizes, &prefix, &smaller, &prefix})
    EXPECT_EQ(run_and_report(*r, *s), "");
}

}  // namespace
}  // namespace gpu_runner_test
