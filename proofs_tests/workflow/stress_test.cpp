// The stress loop (runner/stress.hpp): deterministic cases, sharding, failure files that replay,
// hangs.
#include <gtest/gtest.h>

#include <mutex>
#include <set>

#include "fake_executors.hpp"
#include "heaplab/runner/model_runner.hpp"
#include "heaplab/runner/stress.hpp"
#include "heaplab/schedule/failure_file.hpp"
#include "heaplab/schedule/json.hpp"
#include "workflow_test_support.hpp"

namespace heaplab::workflow_test {
namespace {

using runner::FailureKind;

runner::StressOptions options_in(TempDir const& dir) {
  runner::StressOptions o;
  o.seconds = 60;
  o.seed    = 42;
  o.out_dir = dir.path() / "failures";
  return o;
}

TEST(Stress, CasesAreAPureFunctionOfSeedAndIndex) {
  runner::StressOptions o;
  o.seed = 9;
  for (auto profile : {runner::Profile::small, runner::Profile::large, runner::Profile::near_oom}) {
    o.profile    = profile;
    auto const a = runner::make_case(o, 17);
    auto const b = runner::make_case(o, 17);
    EXPECT_EQ(a.schedule, b.schedule) << runner::to_string(profile);
    EXPECT_EQ(a.seed, runner::case_seed(9, 17));
    EXPECT_EQ(a.rapidcheck.seed, a.seed);
    EXPECT_EQ(a.rapidcheck.size, runner::case_size(17));
    // What a failure file records regenerates the schedule.
    auto const regenerated = runner::profile_schedule(profile, o.heap_mib, o.max_blocks)(
        rc::Random(a.rapidcheck.seed), static_cast<int>(a.rapidcheck.size));
    EXPECT_EQ(regenerated.value(), a.schedule);
    EXPECT_NO_THROW(schedule::validate(a.schedule));
    EXPECT_NE(runner::make_case(o, 18).seed, a.seed);
  }
}

TEST(Stress, ProfilesShapeTheHeap) {
  runner::StressOptions o;
  o.seed                  = 3;
  o.max_blocks            = 300;
  std::uint32_t large_min = 1u << 30, near_oom_max = 0, small_max = 0;
  for (std::uint64_t k = 0; k < 40; ++k) {
    o.profile        = runner::Profile::small;
    small_max        = std::max(small_max, runner::make_case(o, k).schedule.config.num_blocks);
    o.profile        = runner::Profile::large;
    auto const large = runner::make_case(o, k).schedule.config;
    large_min        = std::min(large_min, large.num_blocks);
    EXPECT_LE(large.num_blocks, 300u);
    o.profile    = runner::Profile::near_oom;
    near_oom_max = std::max(near_oom_max, runner::make_case(o, k).schedule.config.num_blocks);
  }
  EXPECT_LE(small_max, 32u);
  EXPECT_GE(large_min, 150u);  // at least half of the cap (16 MiB holds more than 300 blocks)
  EXPECT_LE(near_oom_max, 48u);
}

TEST(Stress, TwoModelShardsPassForAFewSecondsAndWriteNothing) {
  TempDir dir;
  auto o    = options_in(dir);
  o.seconds = 3;
  o.shards  = 2;  // two model runners at once (also run under ThreadSanitizer)
  std::vector<runner::StressStats> ticks;
  runner::StressObserver observer;
  observer.on_tick  = [&](runner::StressStats const& s) { ticks.push_back(s); };
  o.tick_seconds    = 0.5;
  auto const result = runner::run_stress(
      o, [](unsigned) { return std::make_unique<runner::ModelRunner>(); }, observer);
  EXPECT_TRUE(result.failures.empty());
  EXPECT_EQ(result.stats.failures, 0u);
  EXPECT_GT(result.stats.cases, 10u);
  EXPECT_GT(result.stats.steps, result.stats.cases);
  EXPECT_GE(result.stats.elapsed, 3.0);
  EXPECT_LT(result.stats.elapsed, 20.0);
  EXPECT_EQ(result.stop_reason, "time budget");
  EXPECT_GE(ticks.size(), 4u);
  EXPECT_FALSE(std::filesystem::exists(o.out_dir)) << "no failure, so no failure directory";
}

TEST(Stress, AFailureOfABrokenRunnerIsSavedAndReplaysFromItsFile) {
  TempDir dir;
  auto o         = options_in(dir);
  o.max_failures = 1;
  o.max_cases    = 500;
  std::vector<runner::SavedFailure> seen;
  runner::StressObserver observer;
  observer.on_failure = [&](runner::SavedFailure const& f) { seen.push_back(f); };
  auto const result   = runner::run_stress(
      o, [](unsigned) { return differential<StaleDefragBitExecutor>(); }, observer);
  ASSERT_EQ(result.failures.size(), 1u);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(result.stop_reason, "--max-failures reached");
  auto const& saved = result.failures.front();
  ASSERT_FALSE(saved.path.empty()) << saved.save_error;
  EXPECT_EQ(saved.path.parent_path(), o.out_dir);

  // The file is complete and strict-readable.
  auto const file = schedule::load_failure(saved.path);
  EXPECT_EQ(file.runner, "fake-stale-defrag-bit");
  EXPECT_EQ(file.gpu, "none");
  EXPECT_EQ(file.origin.command, "stress");
  EXPECT_EQ(file.origin.run_seed, std::optional<std::uint64_t>(42));
  EXPECT_EQ(file.origin.profile, "small");
  ASSERT_TRUE(file.origin.case_index.has_value());
  EXPECT_EQ(file.seed, runner::case_seed(42, *file.origin.case_index));
  EXPECT_EQ(file.failure.kind, FailureKind::invariant_violation);
  EXPECT_EQ(file.failure.check, "defrag-iff-low-fill");
  EXPECT_FALSE(file.git_commit.empty());

  // Replaying the file on the same (broken) implementation reproduces the failure exactly...
  auto replayer    = differential<StaleDefragBitExecutor>();
  auto const again = replayer->run(file.schedule);
  ASSERT_TRUE(again.failure.has_value());
  EXPECT_EQ(again.failure->step, file.failure.step);
  EXPECT_EQ(again.failure->kind, file.failure.kind);
  EXPECT_EQ(again.failure->check, file.failure.check);
  EXPECT_EQ(again.failure->message, file.failure.message);
  // ...and the model alone passes it.
  runner::ModelRunner model;
  EXPECT_TRUE(model.run(file.schedule).ok());
}

/// Records the seeds of the schedules it is given (thread-safe), and passes them.
class RecordingRunner final : public runner::ScheduleRunner {
 public:
  explicit RecordingRunner(std::mutex& m, std::multiset<std::string>& seen) : m_(m), seen_(seen) {}
  [[nodiscard]] std::string name() const override { return "recording"; }
  [[nodiscard]] runner::Support supports(core::HeapConfig const&) const override { return {}; }
  [[nodiscard]] bool deterministic() const override { return true; }
  runner::RunOutcome run(schedule::Schedule const& s, runner::StepCallback const&) override {
    std::lock_guard<std::mutex> lock(m_);
    seen_.insert(schedule::dump(s));
    return {};
  }

 private:
  std::mutex& m_;
  std::multiset<std::string>& seen_;
};

TEST(Stress, ShardsSplitTheSameCasesRoundRobin) {
  TempDir dir;
  auto o      = options_in(dir);
  o.max_cases = 24;
  std::mutex m;
  std::multiset<std::string> one, three;
  o.shards = 1;
  auto const r1 =
      runner::run_stress(o, [&](unsigned) { return std::make_unique<RecordingRunner>(m, one); });
  o.shards = 3;
  std::vector<unsigned> shards_made;
  auto const r3 = runner::run_stress(o, [&](unsigned shard) {
    shards_made.push_back(shard);
    return std::make_unique<RecordingRunner>(m, three);
  });
  EXPECT_EQ(r1.stats.cases, 24u);
  EXPECT_EQ(r3.stats.cases, 24u);
  EXPECT_EQ(r3.stop_reason, "--cases reached");
  EXPECT_EQ(shards_made, (std::vector<unsigned>{0, 1, 2}));
  EXPECT_EQ(one, three) << "the same 24 schedules, whatever the number of shards";
  std::multiset<std::string> expected;
  for (std::uint64_t k = 0; k < 24; ++k)
    expected.insert(schedule::dump(runner::make_case(o, k).schedule));
  EXPECT_EQ(one, expected);
}

TEST(Stress, AHangSavesItsFailureAndStopsTheRun) {
  TempDir dir;
  auto o   = options_in(dir);
  o.shards = 2;
  auto const result =
      runner::run_stress(o, [](unsigned) { return differential<HangingExecutor>(0); });
  EXPECT_TRUE(result.hang);
  EXPECT_EQ(result.stop_reason, "hang");
  ASSERT_FALSE(result.failures.empty());
  auto const file = schedule::load_failure(result.failures.front().path);
  EXPECT_EQ(file.failure.kind, FailureKind::hang);
  EXPECT_EQ(file.failure.check, "watchdog");
  EXPECT_EQ(file.failure.step, 0u);
}

TEST(Stress, BadOptionsAreRejected) {
  runner::StressOptions o;
  o.shards     = 0;
  auto factory = [](unsigned) { return std::make_unique<runner::ModelRunner>(); };
  EXPECT_THROW(runner::run_stress(o, factory), core::precondition_error);
  EXPECT_EQ(runner::profile_from_string("near-oom"), runner::Profile::near_oom);
  EXPECT_FALSE(runner::profile_from_string("huge").has_value());
}

}  // namespace
}  // namespace heaplab::workflow_test
