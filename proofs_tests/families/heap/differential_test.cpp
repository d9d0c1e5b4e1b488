// The runners: ModelRunner, and DifferentialRunner against fake implementations (an agreeing one
// and deliberately broken ones), so that the differential path is proven before the GPU runner
// uses it (runner/differential.hpp).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "fake_executors.hpp"
#include "heap_schedules.hpp"
#include "heaplab/check/defrag_obligations.hpp"
#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/families/heap/model_runner.hpp"
#include "heaplab/families/heap/report.hpp"
#include "heaplab/model/interpreter.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/schedule/generators.hpp"
#include "heaplab/schedule/json.hpp"

namespace heaplab::test {
namespace {

using runner::FailureKind;

/// The heap detail of a failure (the diff, both snapshots); a failure without one fails the test.
heap_family::HeapFailureDetail const& hd(runner::Failure const& f) {
  static heap_family::HeapFailureDetail const none;
  auto const* d = heap_family::heap_detail(f);
  EXPECT_NE(d, nullptr) << "the failure has no heap detail: " << f.message;
  return d ? *d : none;
}

TEST(ModelRunner, PassesASampleAndReportsEveryStep) {
  auto const s = schedule::load(data_file("model/data/wator.json"));
  heap_family::ModelRunner r;
  std::vector<std::size_t> seen;
  auto const outcome = r.run(s, [&](runner::StepReport const& step) {
    seen.push_back(step.index);
    EXPECT_TRUE(step.ok);
    EXPECT_EQ(step.capacity, 32u);
  });
  EXPECT_TRUE(outcome.ok());
  EXPECT_EQ(outcome.steps_run, 20u);
  ASSERT_EQ(seen.size(), 20u);
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i);
}

TEST(ModelRunner, ADigestMismatchIsADigestFailureOfThatStep) {
  auto const s = schedule::load(data_file("model/data/fails_digest.json"));
  heap_family::ModelRunner r;
  std::size_t calls  = 0;
  bool last_ok       = true;
  auto const outcome = r.run(s, [&](runner::StepReport const& step) {
    ++calls;
    last_ok = step.ok;
  });
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->step, 2u);
  EXPECT_EQ(outcome.failure->kind, FailureKind::digest_mismatch);
  EXPECT_EQ(outcome.failure->check, "graph-digest");
  EXPECT_NE(outcome.failure->message.find("expected 0x0000000000000000"), std::string::npos);
  EXPECT_TRUE(hd(*outcome.failure).actual.has_value());
  EXPECT_EQ(calls, 3u);  // the failing step is reported, and is the last one
  EXPECT_FALSE(last_ok);
}

TEST(ModelRunner, RejectsAnInvalidScheduleAsBadInput) {
  schedule::Schedule s = tiny_schedule();
  s.steps.push_back(defrag(7));  // no type 7
  heap_family::ModelRunner r;
  EXPECT_THROW(r.run(s), core::precondition_error);
}

// ------------------------------------------------------------------------------ agreeing fakes

TEST(DifferentialRunner, AnAgreeingImplementationPassesRandomSchedules) {
  check_property(150, [] {
    schedule::Schedule const s = *schedule::gen::schedule();
    auto const seed            = *rc::gen::inRange<std::uint64_t>(0, 1u << 30);
    heap_family::DifferentialRunner r(std::make_unique<HonestExecutor>(seed));
    auto const outcome = r.run(s);
    if (outcome.failure) RC_FAIL(runner::format_failure(*outcome.failure));
    RC_ASSERT(outcome.steps_run == s.steps.size());
  });
}

/// An agreeing executor that spends `busy` in every execute() and says `readback` of it was
/// spent reading the heap back (ExecutedStep::readback_seconds).
class TimedExecutor final : public TamperingExecutor {
 public:
  TimedExecutor(std::chrono::milliseconds busy, double readback)
      : busy_(busy), readback_(readback) {}
  [[nodiscard]] std::string bug() const override { return "timed"; }

 private:
  void tamper(schedule::Step const&, schedule::StepPlan const&, ExecutedStep& out) override {
    std::this_thread::sleep_for(busy_);
    out.readback_seconds = readback_;
  }
  std::chrono::milliseconds busy_;
  double readback_;
};

TEST(DifferentialRunner, TheReadBackTimeIsSplitOffTheImplementationsTime) {
  auto const s = schedule::load(data_file("model/data/wator.json"));  // 20 steps
  // 4 ms per step, 3 of them read-back: implementation >= ~1 ms, read-back exactly 3 ms.
  heap_family::DifferentialRunner r(
      std::make_unique<TimedExecutor>(std::chrono::milliseconds(4), 0.003));
  std::vector<runner::StepTimes> times;
  auto const outcome = r.run(s, [&](runner::StepReport const& x) { times.push_back(x.times); });
  ASSERT_TRUE(outcome.ok()) << runner::format_failure(*outcome.failure);
  ASSERT_EQ(times.size(), s.steps.size());
  for (auto const& t : times) {
    EXPECT_DOUBLE_EQ(t.readback, 0.003);
    EXPECT_GE(t.implementation, 0.0009);  // the 4 ms sleep less the 3 ms read-back
    EXPECT_DOUBLE_EQ(t.total(), t.implementation + t.readback + t.model + t.checks);
  }
  // A claim larger than the whole call is capped at it: the implementation's part is then 0.
  heap_family::DifferentialRunner capped(
      std::make_unique<TimedExecutor>(std::chrono::milliseconds(1), 10.0));
  times.clear();
  ASSERT_TRUE(capped.run(s, [&](runner::StepReport const& x) { times.push_back(x.times); }).ok());
  for (auto const& t : times) {
    EXPECT_EQ(t.implementation, 0.0);
    EXPECT_GE(t.readback, 0.0009);
    EXPECT_LT(t.readback, 10.0);
  }
}

TEST(DifferentialRunner, TheLowestPlacementPolicyAgreesToo) {
  check_property(100, [] {
    schedule::Schedule const s = *schedule::gen::schedule();
    heap_family::DifferentialRunner r(
        std::make_unique<heap_family::ModelExecutor>(heap_family::PlacementPolicy::lowest, 1));
    auto const outcome = r.run(s);
    if (outcome.failure) RC_FAIL(runner::format_failure(*outcome.failure));
  });
}

TEST(DifferentialRunner, AgreesPastOutOfMemory) {
  // 2 blocks of 64 Nodes, 200 asked for: 72 allocations fail. Refinement accepts the 128 the
  // implementation placed and the run continues in step with it.
  schedule::Schedule s = tiny_schedule(2);
  s.steps              = {alloc(200), free_fraction(0.5, 3), alloc(40), schedule::Check{}};
  heap_family::DifferentialRunner r(std::make_unique<HonestExecutor>(5));
  std::vector<runner::StepReport> reports;
  auto const outcome = r.run(s, [&](runner::StepReport const& x) { reports.push_back(x); });
  ASSERT_TRUE(outcome.ok()) << runner::format_failure(*outcome.failure);
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports[0].count("created"), 128u);
  EXPECT_EQ(reports[0].count("out_of_memory"), 72u);
}

TEST(Registry, NamesTheRunnersAndSaysWhyTheGpuRunnerIsUnavailable) {
  EXPECT_EQ(runner::make_runner("model")->name(), "model");
  EXPECT_EQ(runner::make_runner("differential-model")->name(), "differential-model");
  EXPECT_TRUE(runner::make_runner("differential-model")->deterministic());
  // "gpu" either runs here or says why not, with the same reason unavailable_reason gives (GPU
  // runner not built, or no CUDA device).
  try {
    (void)runner::make_runner("gpu");
    EXPECT_TRUE(runner::unavailable_reason("gpu").empty());
  } catch (runner::runner_unavailable const& e) {
    EXPECT_FALSE(std::string(e.what()).empty());
    EXPECT_EQ(std::string(e.what()), runner::unavailable_reason("gpu"));
  }
  try {
    (void)runner::make_runner("gpx");
    FAIL() << "an unknown runner name must be rejected";
  } catch (core::precondition_error const& e) {
    EXPECT_NE(std::string(e.what()).find("unknown runner 'gpx'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("differential-model"), std::string::npos);
  }
}

// ------------------------------------------------------------------------------- broken fakes

TEST(DifferentialRunner, AWrongButValidPointerIsADivergenceNamingTheSlotAndBothTargets) {
  schedule::Schedule s = tiny_schedule(4);
  s.steps              = {alloc(10), alloc(5, /*link_seed=*/1)};
  auto executor        = std::make_unique<WrongPointerExecutor>(1);
  auto* fake           = executor.get();
  heap_family::DifferentialRunner r(std::move(executor));
  auto const outcome = r.run(s);
  ASSERT_TRUE(fake->planted.has_value());
  ASSERT_TRUE(outcome.failure.has_value());
  auto const& f = *outcome.failure;
  EXPECT_EQ(f.step, 1u);
  EXPECT_EQ(f.kind, FailureKind::divergence);
  EXPECT_EQ(f.check, "snapshot-diff");
  EXPECT_TRUE(f.violations.empty()) << "the planted pointer is valid: the catalog must hold";
  ASSERT_TRUE(hd(f).diff.has_value());
  auto const& p            = *fake->planted;
  std::string const want_e = std::to_string(p.was.block) + ":" + std::to_string(p.was.slot);
  std::string const want_a = std::to_string(p.now.block) + ":" + std::to_string(p.now.slot);
  EXPECT_EQ(hd(f).diff->total, 1u) << hd(f).diff->to_string();
  auto const& d = hd(f).diff->differences.at(0);
  EXPECT_EQ(d.block, static_cast<std::int64_t>(p.block));
  EXPECT_EQ(d.slot, static_cast<std::int64_t>(p.slot));
  EXPECT_EQ(d.field, "refs[" + std::to_string(p.ref) + "]");
  EXPECT_EQ(d.expected, want_e);
  EXPECT_EQ(d.actual, want_a);
  // The readable report: step, block, field, expected, actual on one line.
  std::string const text = runner::format_failure(f);
  std::string const line = "step 1, block " + std::to_string(p.block) + " slot " +
                           std::to_string(p.slot) + ": refs[" + std::to_string(p.ref) +
                           "]: expected " + want_e + ", actual " + want_a;
  EXPECT_NE(text.find(line), std::string::npos) << text;
  EXPECT_TRUE(hd(f).expected.has_value());
  EXPECT_TRUE(hd(f).actual.has_value());
}

TEST(DifferentialRunner, AMisreportedSlotIsADivergenceAtThatBlock) {
  schedule::Schedule s = tiny_schedule(4);
  s.steps              = {alloc(10)};
  auto executor        = std::make_unique<MisreportedSlotExecutor>();
  auto* fake           = executor.get();
  heap_family::DifferentialRunner r(std::move(executor));
  auto const outcome = r.run(s);
  ASSERT_TRUE(fake->planted.has_value());
  ASSERT_TRUE(outcome.failure.has_value());
  auto const& f = *outcome.failure;
  EXPECT_EQ(f.kind, FailureKind::divergence);
  EXPECT_EQ(f.check, "snapshot-diff");
  ASSERT_TRUE(hd(f).diff.has_value());
  auto const& p = *fake->planted;
  // The model holds the object where it was reported, the implementation where it really is.
  bool at_real = false, at_reported = false, bitmap = false;
  for (auto const& d : hd(f).diff->differences) {
    EXPECT_EQ(d.block, static_cast<std::int64_t>(p.block)) << d.to_string();
    if (d.slot == p.real_slot && d.field == "object")
      at_real = d.expected == "no object" && d.actual == "object id " + std::to_string(p.id);
    if (d.slot == p.reported_slot && d.field == "object")
      at_reported = d.expected == "object id " + std::to_string(p.id) && d.actual == "no object";
    if (d.field.rfind("alloc_bitmap", 0) == 0) bitmap = true;
  }
  EXPECT_TRUE(at_real) << hd(f).diff->to_string();
  EXPECT_TRUE(at_reported) << hd(f).diff->to_string();
  EXPECT_TRUE(bitmap) << hd(f).diff->to_string();
}

TEST(DifferentialRunner, AnIllegalPlacementIsRejectedByRefinement) {
  schedule::Schedule s = two_type_schedule();
  s.steps              = {alloc(10, std::nullopt, 0), alloc(10, std::nullopt, 1)};
  heap_family::DifferentialRunner r(std::make_unique<IllegalPlacementExecutor>());
  auto const outcome = r.run(s);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->step, 1u);
  EXPECT_EQ(outcome.failure->kind, FailureKind::divergence);
  EXPECT_EQ(outcome.failure->check, "placement-refinement");
  EXPECT_NE(outcome.failure->message.find("allocated for"), std::string::npos)
      << outcome.failure->message;
}

TEST(DifferentialRunner, RunningOutOfMemoryWhileBlocksAreFreeIsADivergence) {
  schedule::Schedule s = tiny_schedule(4);
  s.steps              = {alloc(10)};
  heap_family::DifferentialRunner r(std::make_unique<SpuriousOutOfMemoryExecutor>());
  auto const outcome = r.run(s);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->kind, FailureKind::divergence);
  EXPECT_EQ(outcome.failure->check, "oom-justified");
  EXPECT_NE(outcome.failure->message.find(
                "1 allocation of Node returned null although 3 blocks were free before and after"),
            std::string::npos)
      << outcome.failure->message;
  // With the rule off, the same run passes: the model accepts any subset of placements.
  heap_family::DifferentialOptions off;
  off.check_out_of_memory = false;
  heap_family::DifferentialRunner lenient(std::make_unique<SpuriousOutOfMemoryExecutor>(), off);
  EXPECT_TRUE(lenient.run(s).ok());
}

// Regression (issue 15 item 7): the differential runner checked the pass count against the
// uncapped bound, so a Recompute-Shared defragmentation (CompactGpu sec. 3.8: 2048 sources per
// pass for n = 1) that the model predicts exactly was reported as a `defrag-pass-bound` failure.
// 4098 blocks each holding 1 of 4 objects are 4098 candidates; with k1 = 2049 the uncapped worst
// case is one pass (4098 -> 2049), but the cap leaves 2050 after the first pass, so the model
// runs two. (With k1 = 0 the same happens from d = 6145 on, as a bound: 14 capped passes against
// 13; this cheaper heap makes the model actually exceed the uncapped bound.)
TEST(DifferentialRunner, TheRecomputeSharedCapRaisesThePassBound) {
  schedule::Schedule s;
  s.config.types.push_back({"Small", 8, std::nullopt, false, {}});
  s.config.types.push_back({"Big", 128, std::nullopt, false, {}});  // capacity 64 * 8 / 128 = 4
  s.config.num_blocks    = 4100;
  s.config.defrag_factor = 1;
  s.config.k1            = 0;
  std::uint32_t const d  = 4098;
  ASSERT_EQ(s.config.capacity(1), 4u);
  schedule::FreeWave halve;  // every second live Big object in id order: 4 -> 2 -> 1 per block
  halve.select.type    = 1;
  halve.select.pattern = schedule::SelectPattern::every_kth;
  halve.select.k       = 2;
  halve.select.offset  = 0;
  schedule::Defrag shared;
  shared.type    = 1;
  shared.k1      = 2049;
  shared.variant = core::RewriteVariant::recompute_shared;
  s.steps        = {alloc(4 * d, std::nullopt, 1), halve, halve, shared};

  std::uint32_t const cap = core::sources_per_pass(core::RewriteVariant::recompute_shared, 1);
  ASSERT_EQ(cap, 2048u);
  EXPECT_EQ(core::worst_case_passes_with_cap(d, 1, 2049), 1u);
  EXPECT_EQ(core::worst_case_passes_with_cap(d, 1, 2049, cap), 2u);
  // What the old differential runner checked: two passes against the uncapped bound.
  EXPECT_FALSE(check::check_pass_bound(2, d, 1, 2049).empty());
  EXPECT_TRUE(check::check_pass_bound(2, d, 1, 2049, cap).empty());

  std::vector<runner::StepReport> reports;
  heap_family::DifferentialRunner r(
      std::make_unique<heap_family::ModelExecutor>(heap_family::PlacementPolicy::lowest, 1));
  auto const outcome = r.run(s, [&](runner::StepReport const& x) { reports.push_back(x); });
  ASSERT_TRUE(outcome.ok()) << runner::format_failure(*outcome.failure);
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports[2].live, d);
  EXPECT_EQ(reports[3].count("defrag_passes"), 2u) << "the heap must make the model exceed 1 pass";
  // The model runner (the interpreter) agrees: the same single implementation.
  EXPECT_TRUE(heap_family::ModelRunner{}.run(s).ok());
}

// oom-justified, slot rule (issue 15 item 2): an allocator that never reuses blocks that were
// active before the wave runs out of memory once the free blocks are gone, although an old
// block of the type still has room. No block is free after the wave (the old block-only rule
// passed it), the placements are legal and the catalog holds: only oom-justified sees it.
TEST(DifferentialRunner, ANullWhileAnOldActiveBlockHasRoomIsCaughtBySlotRule) {
  schedule::Schedule s = tiny_schedule(2);
  s.steps              = {alloc(10), alloc(70)};
  // Honest: 64 + 6 fit in block 0 and 1, nothing fails.
  EXPECT_TRUE(heap_family::DifferentialRunner(std::make_unique<HonestExecutor>(3)).run(s).ok());
  heap_family::DifferentialRunner r(std::make_unique<FreshBlocksOnlyExecutor>());
  std::vector<runner::StepReport> reports;
  auto const outcome = r.run(s, [&](runner::StepReport const& x) { reports.push_back(x); });
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->step, 1u);
  EXPECT_EQ(outcome.failure->kind, FailureKind::divergence);
  EXPECT_EQ(outcome.failure->check, "oom-justified");
  EXPECT_NE(outcome.failure->message.find("6 allocations of Node returned null although 54 slots "
                                          "of blocks of Node stayed free through the wave "
                                          "(first: block 0 slot 10)"),
            std::string::npos)
      << outcome.failure->message;
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1].count("out_of_memory"), 6u);
}

// The differential runner applies the rule to parallel_do allocate_child too (it only allocates).
TEST(DifferentialRunner, ParallelDoAllocateChildIsAnAllocationOnlyWave) {
  schedule::Schedule s = tiny_schedule(2);
  schedule::ParallelDo p;
  p.type        = 0;
  p.action      = schedule::Action::allocate_child;
  p.child_type  = 0;
  p.parent_slot = 0;
  s.steps       = {alloc(10), p};  // 10 parents, 10 children: fit in block 0 (honest)
  EXPECT_TRUE(heap_family::DifferentialRunner(std::make_unique<HonestExecutor>(3)).run(s).ok());
  heap_family::DifferentialRunner r(
      std::make_unique<FreshBlocksOnlyExecutor>(/*drop_children=*/true));
  auto const outcome = r.run(s);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->step, 1u);
  EXPECT_EQ(outcome.failure->check, "oom-justified");
}

TEST(DifferentialRunner, AStaleDefragBitIsAnInvariantViolationWithTheDiff) {
  schedule::Schedule s = tiny_schedule(4);
  s.steps              = {alloc(150), free_fraction(0.1, 2)};
  heap_family::DifferentialRunner r(std::make_unique<StaleDefragBitExecutor>());
  auto const outcome = r.run(s);
  ASSERT_TRUE(outcome.failure.has_value());
  auto const& f = *outcome.failure;
  EXPECT_EQ(f.step, 1u);
  EXPECT_EQ(f.kind, FailureKind::invariant_violation);
  EXPECT_EQ(f.check, "defrag-iff-low-fill");
  ASSERT_TRUE(hd(f).diff.has_value());
  bool names_defrag_bitmap = false;
  for (auto const& d : hd(f).diff->differences)
    names_defrag_bitmap = names_defrag_bitmap || d.where.rfind("defrag[Node] level 0", 0) == 0;
  EXPECT_TRUE(names_defrag_bitmap) << hd(f).diff->to_string();
}

TEST(DifferentialRunner, AnExceptionIsACrashOfThatStep) {
  schedule::Schedule s = tiny_schedule(4);
  s.steps              = {alloc(3), alloc(3), alloc(3)};
  heap_family::DifferentialRunner r(std::make_unique<ThrowingExecutor>(1));
  auto const outcome = r.run(s);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->step, 1u);
  EXPECT_EQ(outcome.failure->kind, FailureKind::crash);
  EXPECT_EQ(outcome.failure->check, "exception");
  EXPECT_NE(outcome.failure->message.find("illegal memory access"), std::string::npos);
  EXPECT_TRUE(r.usable());
  EXPECT_TRUE(r.run(tiny_schedule(4)).ok());  // the next run starts afresh
}

TEST(DifferentialRunner, AnExecutorsOwnCheckIsAnInvariantViolationNotACrash) {
  schedule::Schedule s = tiny_schedule(4);
  s.steps              = {alloc(3), alloc(3), alloc(3)};
  heap_family::DifferentialRunner r(std::make_unique<SelfCheckFailingExecutor>(2));
  auto const outcome = r.run(s);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->step, 2u);
  EXPECT_EQ(outcome.failure->kind, FailureKind::invariant_violation);
  EXPECT_EQ(outcome.failure->check, "parallel-do-visits");
  ASSERT_EQ(outcome.failure->violations.size(), 1u);
  EXPECT_NE(outcome.failure->message.find("not live at launch"), std::string::npos);
  EXPECT_TRUE(r.usable());
}

TEST(DifferentialRunner, AHangMakesTheRunnerUnusable) {
  schedule::Schedule s = tiny_schedule(4);
  s.steps              = {alloc(3), alloc(3)};
  heap_family::DifferentialRunner r(std::make_unique<HangingExecutor>(0));
  auto const outcome = r.run(s);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->step, 0u);
  EXPECT_EQ(outcome.failure->kind, FailureKind::hang);
  EXPECT_EQ(outcome.failure->check, "watchdog");
  EXPECT_EQ(outcome.steps_run, 1u);
  EXPECT_FALSE(r.usable());
  EXPECT_THROW(r.run(s), core::precondition_error);
}

TEST(DifferentialRunner, ADifferentPassCountIsADivergence) {
  schedule::Schedule s = tiny_schedule(4);
  s.steps              = {alloc(200), free_fraction(0.75, 9), defrag(0)};
  heap_family::DifferentialRunner r(std::make_unique<WrongPassCountExecutor>());
  auto const outcome = r.run(s);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->step, 2u);
  EXPECT_EQ(outcome.failure->kind, FailureKind::divergence);
  EXPECT_EQ(outcome.failure->check, "defrag-passes");
}

TEST(DifferentialRunner, RootsMustMatchTheModel) {
  schedule::Schedule s                      = tiny_schedule(4);
  auto wave                                 = alloc(4);
  std::get<schedule::AllocWave>(wave).roots = true;
  s.steps                                   = {wave};
  heap_family::DifferentialRunner r(std::make_unique<SwappedRootsExecutor>());
  auto const outcome = r.run(s);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->kind, FailureKind::divergence);
  EXPECT_EQ(outcome.failure->check, "roots");
  EXPECT_NE(outcome.failure->message.find("root 0: expected"), std::string::npos)
      << outcome.failure->message;
}

TEST(DifferentialRunner, ABadGraphDigestIsADigestMismatch) {
  auto s = schedule::load(data_file("model/data/fails_digest.json"));
  heap_family::DifferentialRunner r(std::make_unique<HonestExecutor>(3));
  auto const outcome = r.run(s);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->step, 2u);
  EXPECT_EQ(outcome.failure->kind, FailureKind::digest_mismatch);
  EXPECT_EQ(outcome.failure->check, "graph-digest");
}

}  // namespace
}  // namespace heaplab::test
