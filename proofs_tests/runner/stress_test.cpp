// The stress loop (runner/stress.hpp) on the heap family: deterministic cases, the heap
// profiles, sharding, failure files that replay, hangs, coverage.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "fake_executors.hpp"
#include "heap_schedules.hpp"
#include "heaplab/families/heap/family.hpp"
#include "heaplab/families/heap/model_runner.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/runner/stress.hpp"
#include "heaplab/schedule/generators.hpp"
#include "heaplab/schedule/json.hpp"

namespace heaplab::test {
namespace {

using runner::FailureKind;

heap_family::HeapFamily const& heap() { return heap_family::family(); }

schedule::Schedule const& sched(runner::AnySchedule const& a) {
  return heap_family::HeapFamily::unwrap(a);
}

/// Case k of a heap run, as a schedule::Schedule.
schedule::Schedule heap_case(runner::StressOptions const& o, std::uint64_t k) {
  return sched(runner::make_case(heap(), o, k).schedule);
}

runner::StressOptions heap_options(std::string profile = "small") {
  runner::StressOptions o;
  o.request.profile = std::move(profile);
  o.request.runner  = "model";
  return o;
}

runner::StressOptions options_in(TempDir const& dir) {
  runner::StressOptions o = heap_options();
  o.seconds               = 60;
  o.seed                  = 42;
  o.out_dir               = dir.path() / "failures";
  return o;
}

runner::StressResult run_heap(runner::StressOptions const& o,
                              runner::RunnerFactory const& factory,
                              runner::StressObserver const& observer = {}) {
  return runner::run_stress(heap(), o, factory, observer);
}

TEST(Stress, CasesAreAPureFunctionOfSeedAndIndex) {
  runner::StressOptions o = heap_options();
  o.seed                  = 9;
  for (auto const& profile : heap().profiles()) {
    o.request.profile = profile.name;
    auto const a      = runner::make_case(heap(), o, 17);
    auto const b      = runner::make_case(heap(), o, 17);
    EXPECT_EQ(sched(a.schedule), sched(b.schedule)) << profile.name;
    EXPECT_EQ(a.seed, runner::case_seed(9, 17));
    EXPECT_EQ(a.rapidcheck.seed, a.seed);
    EXPECT_EQ(a.rapidcheck.size, runner::case_size(17));
    // What a failure file records regenerates the schedule.
    auto const regenerated = schedule::gen::profile_schedule(
        profile.name, o.request.heap_mib, heap_family::kDefaultMaxBlocks, schedule::gen::config())(
        rc::Random(a.rapidcheck.seed), static_cast<int>(a.rapidcheck.size));
    EXPECT_EQ(regenerated.value(), sched(a.schedule));
    EXPECT_NO_THROW(schedule::validate(sched(a.schedule)));
    EXPECT_NE(runner::make_case(heap(), o, 18).seed, a.seed);
  }
}

TEST(Stress, ProfilesShapeTheHeap) {
  runner::StressOptions o = heap_options();
  o.seed                  = 3;
  o.request.max_size      = 300;
  std::uint32_t large_min = 1u << 30, near_oom_max = 0, small_max = 0;
  for (std::uint64_t k = 0; k < 40; ++k) {
    o.request.profile = "small";
    small_max         = std::max(small_max, heap_case(o, k).config.num_blocks);
    o.request.profile = "large";
    auto const large  = heap_case(o, k).config;
    large_min         = std::min(large_min, large.num_blocks);
    EXPECT_LE(large.num_blocks, 300u);
    o.request.profile = "near-oom";
    near_oom_max      = std::max(near_oom_max, heap_case(o, k).config.num_blocks);
  }
  EXPECT_LE(small_max, 32u);
  EXPECT_GE(large_min, 150u);  // at least half of the cap (16 MiB holds more than 300 blocks)
  EXPECT_LE(near_oom_max, 48u);
}

TEST(Stress, TheMixedProfileCoversEveryHierarchyDepthWithDefragsAndParallelDo) {
  runner::StressOptions o = heap_options("mixed");
  o.seed                  = 12;
  o.request.max_size      = 8192;
  std::map<std::uint32_t, int> depths;
  std::size_t parallel_dos = 0, steps = 0;
  for (std::uint64_t k = 0; k < 100; ++k) {  // sizes 1..100, as a run cycles through them
    auto const c = heap_case(o, k);
    EXPECT_GE(c.config.num_blocks, 2u);
    EXPECT_LE(c.config.num_blocks, 8192u);
    ++depths[heap_family::hierarchy_depth(c.config.num_blocks)];
    for (auto const& s : c.steps) parallel_dos += std::holds_alternative<schedule::ParallelDo>(s);
    steps += c.steps.size();
    if (c.config.num_blocks <= 64) continue;  // the small profile's schedules
    EXPECT_TRUE(std::any_of(
        c.steps.begin(),
        c.steps.end(),
        [](schedule::Step const& s) { return std::holds_alternative<schedule::Defrag>(s); }))
        << "case " << k;
    for (auto const& s : c.steps) {
      if (auto const* w = std::get_if<schedule::AllocWave>(&s)) {
        EXPECT_LE(std::uint64_t{w->threads} * w->count.value_or(1), 2u * 6144u + 8u)
            << "case " << k;
      }
    }
  }
  EXPECT_GE(depths[1], 25) << "1-level hierarchies (M <= 64)";
  EXPECT_GE(depths[2], 15) << "2-level hierarchies (65 <= M <= 4096)";
  EXPECT_GE(depths[3], 8) << "3-level hierarchies (M > 4096)";
  // The GPU's default profile must keep parallel_do frequent (a first mixed profile with 2%
  // parallel_do steps missed parallel_do_reads_alloc_bitmap for 25 s on an H100).
  EXPECT_GE(parallel_dos * 20, steps) << parallel_dos << " parallel_do steps of " << steps;
  // The cap wins: with --max-blocks 100 no 3-level heap is drawn.
  o.request.max_size = 100;
  for (std::uint64_t k = 0; k < 30; ++k) EXPECT_LE(heap_case(o, k).config.num_blocks, 100u);
}

TEST(Stress, TwoModelShardsPassForAFewSecondsAndWriteNothing) {
  TempDir dir;
  auto o    = options_in(dir);
  o.seconds = 3;
  o.workers = 2;  // two model runners at once (also run under ThreadSanitizer)
  std::vector<runner::StressStats> ticks;
  runner::StressObserver observer;
  observer.on_tick  = [&](runner::StressStats const& s) { ticks.push_back(s); };
  o.tick_seconds    = 0.5;
  auto const result = run_heap(
      o, [](unsigned) { return std::make_unique<heap_family::ModelRunner>(); }, observer);
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
  auto const result   = run_heap(
      o, [](unsigned) { return differential<StaleDefragBitExecutor>(); }, observer);
  ASSERT_EQ(result.failures.size(), 1u);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(result.stop_reason, "--max-failures reached");
  auto const& saved = result.failures.front();
  ASSERT_FALSE(saved.path.empty()) << saved.save_error;
  EXPECT_EQ(saved.path.parent_path(), o.out_dir);

  // The file is complete and strict-readable.
  auto const file = runner::load_failure(saved.path);
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
  auto const again = replayer->run(sched(file.schedule));
  ASSERT_TRUE(again.failure.has_value());
  EXPECT_EQ(again.failure->step, file.failure.step);
  EXPECT_EQ(again.failure->kind, file.failure.kind);
  EXPECT_EQ(again.failure->check, file.failure.check);
  EXPECT_EQ(again.failure->message, file.failure.message);
  // ...and the model alone passes it.
  heap_family::ModelRunner model;
  EXPECT_TRUE(model.run(sched(file.schedule)).ok());
}

/// Records the seeds of the schedules it is given (thread-safe), and passes them.
class RecordingRunner final : public runner::Runner {
 public:
  explicit RecordingRunner(std::mutex& m, std::multiset<std::string>& seen) : m_(m), seen_(seen) {}
  [[nodiscard]] std::string name() const override { return "recording"; }
  [[nodiscard]] runner::Support supports(runner::AnySchedule const&) const override { return {}; }
  [[nodiscard]] bool deterministic() const override { return true; }
  runner::RunOutcome run(runner::AnySchedule const& s, runner::StepCallback const&) override {
    std::lock_guard<std::mutex> lock(m_);
    seen_.insert(schedule::dump(sched(s)));
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
  o.workers     = 1;
  auto const r1 = run_heap(o, [&](unsigned) { return std::make_unique<RecordingRunner>(m, one); });
  o.workers     = 3;
  std::vector<unsigned> shards_made;
  auto const r3 = run_heap(o, [&](unsigned shard) {
    shards_made.push_back(shard);
    return std::make_unique<RecordingRunner>(m, three);
  });
  EXPECT_EQ(r1.stats.cases, 24u);
  EXPECT_EQ(r3.stats.cases, 24u);
  EXPECT_EQ(r3.stop_reason, "--cases reached");
  EXPECT_EQ(shards_made, (std::vector<unsigned>{0, 1, 2}));
  EXPECT_EQ(one, three) << "the same 24 schedules, whatever the number of shards";
  std::multiset<std::string> expected;
  for (std::uint64_t k = 0; k < 24; ++k) expected.insert(schedule::dump(heap_case(o, k)));
  EXPECT_EQ(one, expected);
}

TEST(Stress, TheUnionOfNShardsIsTheUnshardedRun) {
  TempDir dir;
  auto o      = options_in(dir);
  o.max_cases = 30;
  std::mutex m;
  std::multiset<std::string> whole, shards;
  run_heap(o, [&](unsigned) { return std::make_unique<RecordingRunner>(m, whole); });
  std::set<std::uint64_t> indices;
  for (std::uint32_t n : {4u}) {
    for (std::uint32_t k = 0; k < n; ++k) {
      auto s        = o;
      s.shard_index = k;
      s.shard_count = n;
      s.workers     = 1 + k % 2;  // workers inside a shard change nothing either
      auto const r =
          run_heap(s, [&](unsigned) { return std::make_unique<RecordingRunner>(m, shards); });
      EXPECT_EQ(r.stop_reason, "--cases reached");
      for (auto const c : runner::cases_of_shard(s, 1000)) {
        EXPECT_EQ(c % n, k);
        EXPECT_TRUE(indices.insert(c).second) << "case " << c << " in two shards";
      }
    }
  }
  EXPECT_EQ(whole.size(), 30u);
  EXPECT_EQ(whole, shards) << "4 shards ran exactly the unsharded run's 30 schedules";
  EXPECT_EQ(indices.size(), 30u);
  EXPECT_EQ(*indices.rbegin(), 29u);
}

TEST(Stress, BadShardsAndCasesAreRejected) {
  TempDir dir;
  auto o        = options_in(dir);
  auto factory  = [](unsigned) { return std::make_unique<heap_family::ModelRunner>(); };
  o.shard_count = 3;
  o.shard_index = 3;
  EXPECT_THROW(run_heap(o, factory), core::precondition_error);
  o.shard_index = 1;
  o.only_case   = 5;  // 5 % 3 == 2: another shard's case
  EXPECT_THROW(run_heap(o, factory), core::precondition_error);
  o.only_case = 7;
  EXPECT_EQ(runner::cases_of_shard(o, 10), (std::vector<std::uint64_t>{7}));
}

TEST(Stress, OneCaseRunsAloneAndIsTheSameSchedule) {
  TempDir dir;
  auto o      = options_in(dir);
  o.only_case = 11;
  o.workers   = 2;
  std::mutex m;
  std::multiset<std::string> seen;
  auto const r = run_heap(o, [&](unsigned) { return std::make_unique<RecordingRunner>(m, seen); });
  EXPECT_EQ(r.stats.cases, 1u);
  EXPECT_EQ(r.stop_reason, "--case ran");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(*seen.begin(), schedule::dump(heap_case(o, 11)));
}

TEST(Stress, AnInterruptFinishesTheCaseInFlightAndStops) {
  TempDir dir;
  auto o = options_in(dir);
  std::atomic<bool> interrupt{false};
  o.interrupt = &interrupt;
  std::atomic<int> started{0};
  /// Raises the interrupt in the middle of its second case; that case still completes.
  class InterruptingRunner final : public runner::Runner {
   public:
    InterruptingRunner(std::atomic<bool>& flag, std::atomic<int>& started)
        : flag_(flag), started_(started) {}
    [[nodiscard]] std::string name() const override { return "interrupting"; }
    [[nodiscard]] runner::Support supports(runner::AnySchedule const&) const override { return {}; }
    [[nodiscard]] bool deterministic() const override { return true; }
    runner::RunOutcome run(runner::AnySchedule const& s, runner::StepCallback const&) override {
      if (++started_ == 2) flag_ = true;
      runner::RunOutcome out;
      out.steps_run = sched(s).steps.size();
      return out;
    }

   private:
    std::atomic<bool>& flag_;
    std::atomic<int>& started_;
  };
  auto const r = run_heap(
      o, [&](unsigned) { return std::make_unique<InterruptingRunner>(interrupt, started); });
  EXPECT_EQ(r.stop_reason, "interrupted");
  EXPECT_EQ(r.stats.cases, 2u) << "the case in flight finished, no new case started";
  EXPECT_EQ(started.load(), 2);
  EXPECT_LT(r.stats.elapsed, 30.0);
}

TEST(Stress, CoverageCountsTheStepsThatRanAndTheConfigs) {
  auto s = two_type_schedule();
  s.steps.push_back(alloc(8, std::nullopt, 0));
  schedule::AllocWave alt = std::get<schedule::AllocWave>(alloc(8, std::nullopt, 1));
  alt.divergence          = schedule::Divergence::alternate;
  s.steps.push_back(alt);
  schedule::Defrag d;
  d.variant = core::RewriteVariant::recompute_shared;
  s.steps.push_back(d);
  s.steps.push_back(schedule::Check{});
  runner::Coverage coverage;
  heap().cover(heap().wrap(s), 3, coverage);  // the check did not run
  auto const& c = coverage.counts;
  using Counts  = std::map<std::string, std::uint64_t>;
  EXPECT_EQ(c.at("step_kinds"), (Counts{{"alloc", 2}, {"defrag", 1}}));
  EXPECT_EQ(c.at("divergence"), (Counts{{"all", 1}, {"alternate", 1}}));
  EXPECT_EQ(c.at("defrag_variants"), (Counts{{"recompute_shared", 1}}));
  EXPECT_EQ(c.at("heap_sizes"), (Counts{{"M 1-8", 1}}));
  EXPECT_EQ(c.at("hierarchy_depths"), (Counts{{"1 level", 1}}));
  EXPECT_EQ(c.at("type_counts"), (Counts{{"2 types", 1}}));
  for (auto const& category : heap().coverage_categories())
    EXPECT_TRUE(c.count(category.key) || category.key == "free_patterns" ||
                category.key == "parallel_do_actions")
        << category.key;
  runner::Coverage twice = coverage;
  twice.merge(coverage);
  EXPECT_EQ(twice.counts.at("step_kinds").at("alloc"), 4u);
  EXPECT_EQ(heap_family::hierarchy_depth(64), 1u);
  EXPECT_EQ(heap_family::hierarchy_depth(65), 2u);
  EXPECT_EQ(heap_family::hierarchy_depth(4096), 2u);
  EXPECT_EQ(heap_family::hierarchy_depth(4097), 3u);
}

TEST(Stress, AHangSavesItsFailureAndStopsTheRun) {
  TempDir dir;
  auto o            = options_in(dir);
  o.workers         = 2;
  auto const result = run_heap(o, [](unsigned) { return differential<HangingExecutor>(0); });
  EXPECT_TRUE(result.hang);
  EXPECT_EQ(result.stop_reason, "hang");
  ASSERT_FALSE(result.failures.empty());
  auto const file = runner::load_failure(result.failures.front().path);
  EXPECT_EQ(file.failure.kind, FailureKind::hang);
  EXPECT_EQ(file.failure.check, "watchdog");
  EXPECT_EQ(file.failure.step, 0u);
}

/// Reports `steps_before` steps of its first case, then blocks inside run() (a call that never
/// returns, as a CUDA call behind a stuck kernel) until `release` is set; other cases pass at
/// once. With `step_every` > 0 it instead reports a step every step_every seconds for
/// `busy_seconds` (slow, but never stalled).
class StallingRunner final : public runner::Runner {
 public:
  StallingRunner(std::atomic<bool>& release,
                 std::size_t steps_before,
                 double step_every   = 0,
                 double busy_seconds = 0)
      : release_(release),
        steps_before_(steps_before),
        step_every_(step_every),
        busy_seconds_(busy_seconds) {}
  [[nodiscard]] std::string name() const override { return "stalling"; }
  [[nodiscard]] runner::Support supports(runner::AnySchedule const&) const override { return {}; }
  [[nodiscard]] bool deterministic() const override { return true; }
  runner::RunOutcome run(runner::AnySchedule const&, runner::StepCallback const& on_step) override {
    runner::RunOutcome out;
    if (cases_++ > 0) return out;
    auto const start = std::chrono::steady_clock::now();
    auto const since = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    for (std::size_t i = 0; i < steps_before_; ++i) on_step(runner::StepReport{});
    if (step_every_ > 0) {
      while (since() < busy_seconds_) {
        std::this_thread::sleep_for(std::chrono::duration<double>(step_every_));
        on_step(runner::StepReport{});
      }
      return out;
    }
    while (!release_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return out;
  }

 private:
  std::atomic<bool>& release_;
  std::size_t steps_before_;
  double step_every_;
  double busy_seconds_;
  int cases_ = 0;
};

TEST(Stress, AWorkerThatStopsAnsweringIsSavedAsAStallAndEndsTheRunThroughOnHang) {
  TempDir dir;
  auto o          = options_in(dir);
  o.workers       = 1;
  o.only_case     = 60;  // a case of more than four steps: the stall is in its fifth
  o.stall_seconds = 0.3;
  ASSERT_GE(heap_case(o, 60).steps.size(), 5u);
  std::atomic<bool> release{false};
  std::vector<runner::SavedFailure> hangs;
  runner::StressObserver observer;
  // The command line ends the process in on_hang; here it lets the stuck call return instead.
  observer.on_hang = [&](runner::SavedFailure const& f) {
    hangs.push_back(f);
    release = true;
  };
  auto const start  = std::chrono::steady_clock::now();
  auto const result = run_heap(
      o, [&](unsigned) { return std::make_unique<StallingRunner>(release, 4); }, observer);
  double const took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(hangs.size(), 1u) << "on_hang is called once, for the stalled worker";
  EXPECT_TRUE(result.hang);
  EXPECT_EQ(result.stop_reason, "hang");
  EXPECT_LT(took, 10.0);
  ASSERT_FALSE(hangs.front().path.empty()) << hangs.front().save_error;
  auto const file = runner::load_failure(hangs.front().path);
  EXPECT_EQ(file.failure.kind, FailureKind::hang);
  EXPECT_EQ(file.failure.check, "stall");
  EXPECT_EQ(file.failure.step, 4u) << "the step in progress: four had finished";
  EXPECT_EQ(file.origin.case_index, std::optional<std::uint64_t>(60));
  EXPECT_NE(file.failure.message.find("finished no step of this case for"), std::string::npos)
      << file.failure.message;
}

TEST(Stress, ASlowWorkerThatKeepsFinishingStepsIsNoStall) {
  TempDir dir;
  auto o          = options_in(dir);
  o.max_cases     = 2;
  o.stall_seconds = 0.4;
  std::atomic<bool> release{true};
  bool hung = false;
  runner::StressObserver observer;
  observer.on_hang  = [&](runner::SavedFailure const&) { hung = true; };
  auto const result = run_heap(
      o,
      [&](unsigned) { return std::make_unique<StallingRunner>(release, 0, 0.1, 1.5); },
      observer);
  EXPECT_FALSE(hung) << "a step every 0.1 s for 1.5 s is slow progress, not a stall";
  EXPECT_FALSE(result.hang);
  EXPECT_EQ(result.stats.cases, 2u);
  EXPECT_GE(result.stats.elapsed, 1.5);
}

TEST(Stress, BadOptionsAreRejected) {
  runner::StressOptions o = heap_options();
  o.workers               = 0;
  auto factory            = [](unsigned) { return std::make_unique<heap_family::ModelRunner>(); };
  EXPECT_THROW(run_heap(o, factory), core::precondition_error);
  o.workers       = 1;
  o.stall_seconds = 1;  // the stall guard without on_hang: a stalled worker could not be joined
  EXPECT_THROW(run_heap(o, factory), core::precondition_error);
  o.stall_seconds = -1;
  runner::StressObserver ends;
  ends.on_hang = [](runner::SavedFailure const&) {};
  EXPECT_THROW(run_heap(o, factory, ends), core::precondition_error);
  o.stall_seconds   = 0;
  o.request.profile = "huge";
  EXPECT_THROW((void)runner::make_case(heap(), o, 0), core::precondition_error);
}

}  // namespace
}  // namespace heaplab::test
