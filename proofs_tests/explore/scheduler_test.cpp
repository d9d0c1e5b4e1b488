// The controlled scheduler on toy programs whose behaviour is known by hand: determinism and
// replay, interleaving counts of the bounded exhaustive search, and each failure kind.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/explore/controlled_run.hpp"
#include "heaplab/explore/explore.hpp"

namespace core    = heaplab::core;
namespace explore = heaplab::explore;
using A           = core::ObservedAtomics;

namespace {

/// Threads each doing `ops[i]` relaxed fetch_adds on their own word (no interaction).
explore::Program independent_counters(std::vector<int> ops) {
  auto words = std::make_shared<std::vector<std::uint64_t>>(ops.size(), 0);
  explore::Program p;
  for (std::size_t i = 0; i < ops.size(); ++i)
    p.threads.push_back([words, i, n = ops[i]] {
      for (int k = 0; k < n; ++k)
        A::fetch_add(&(*words)[i], std::uint64_t{1}, core::MemoryOrder::relaxed);
    });
  p.describe_address = [words](void const* a) {
    for (std::size_t i = 0; i < words->size(); ++i)
      if (a == &(*words)[i]) return "word[" + std::to_string(i) + "]";
    return std::string();
  };
  return p;
}

/// A lost-update bug: two threads increment with a load and a store. Check: the final value is 2.
explore::Program lost_update() {
  auto x = std::make_shared<std::uint64_t>(0);
  explore::Program p;
  for (int i = 0; i < 2; ++i)
    p.threads.push_back([x] {
      std::uint64_t const v = A::load(x.get(), core::MemoryOrder::acquire);
      A::store(x.get(), v + 1, core::MemoryOrder::release);
    });
  p.check = [x](std::vector<explore::Event> const&) {
    return *x == 2 ? std::vector<std::string>{}
                   : std::vector<std::string>{"lost update: x == " + std::to_string(*x)};
  };
  p.describe_address = [x](void const* a) {
    return a == x.get() ? std::string("x") : std::string();
  };
  return p;
}

}  // namespace

TEST(ControlledScheduler, SameSeedSameTraceByteForByte) {
  explore::RunOptions opts;
  opts.format_passing_trace = true;
  auto run                  = [&](std::uint64_t seed) {
    explore::Program p = independent_counters({5, 4, 6});
    explore::RandomStrategy s(seed);
    return explore::run_program(p, s, opts);
  };
  auto const a = run(42);
  auto const b = run(42);
  ASSERT_TRUE(a.passed()) << a.message;
  EXPECT_EQ(a.steps, 15u);
  EXPECT_EQ(a.trace_text, b.trace_text);
  EXPECT_NE(a.trace_text.find("word[2]"), std::string::npos);
  bool some_seed_differs = false;
  for (std::uint64_t seed = 1; seed < 10 && !some_seed_differs; ++seed)
    some_seed_differs = run(seed).trace_text != a.trace_text;
  EXPECT_TRUE(some_seed_differs);
}

TEST(ControlledScheduler, ExhaustiveSearchCountsMatchTheFormula) {
  // Two threads of a and b operations. Decision sequences with at most c preemptions, worked out
  // by hand: c = 0: 2 (who starts); c = 1: 2 + a + b; c = 2: 2 + a + b + 2ab.
  int const a = 2, b = 3;
  std::uint64_t const expected[] = {2, 2 + a + b, 2 + a + b + 2 * a * b};
  for (std::uint32_t bound = 0; bound <= 2; ++bound) {
    explore::ExploreOptions o;
    o.strategy         = explore::StrategyKind::exhaustive;
    o.preemption_bound = bound;
    auto const r = explore::explore([&](std::uint64_t) { return independent_counters({a, b}); }, o);
    EXPECT_TRUE(r.exhausted);
    EXPECT_FALSE(r.failure.has_value());
    EXPECT_EQ(r.runs, expected[bound]) << "bound " << bound;
  }
}

TEST(ControlledScheduler, ExhaustiveSearchFindsTheLostUpdateWithOnePreemption) {
  explore::ExploreOptions o;
  o.strategy         = explore::StrategyKind::exhaustive;
  o.preemption_bound = 0;
  EXPECT_FALSE(
      explore::explore([](std::uint64_t) { return lost_update(); }, o).failure.has_value());
  o.preemption_bound = 1;
  auto const r       = explore::explore([](std::uint64_t) { return lost_update(); }, o);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->outcome, explore::Outcome::check_failed);
  EXPECT_NE(r.failure_report.find("lost update: x == 1"), std::string::npos);
}

TEST(ControlledScheduler, RandomFailureReplaysToTheIdenticalTrace) {
  explore::ExploreOptions o;
  o.strategy   = explore::StrategyKind::random;
  o.seed       = 1;
  auto const r = explore::explore([](std::uint64_t) { return lost_update(); }, o);
  ASSERT_TRUE(r.failure.has_value());
  auto const again =
      explore::replay([](std::uint64_t) { return lost_update(); }, o.strategy, r.failing_seed, o);
  auto const third =
      explore::replay([](std::uint64_t) { return lost_update(); }, o.strategy, r.failing_seed, o);
  EXPECT_EQ(again.outcome, explore::Outcome::check_failed);
  EXPECT_EQ(again.trace_text, r.failure->trace_text);
  EXPECT_EQ(third.trace_text, r.failure->trace_text);
  EXPECT_NE(r.failure_report.find("--seed " + std::to_string(r.failing_seed)), std::string::npos);
  EXPECT_NE(r.failure->trace_text.find(" x "), std::string::npos);  // symbolic address
}

TEST(ControlledScheduler, IllegalSetMultisetIsReportedAsDeadlock) {
  // Two set() of the same clear bit and no clear: set-surplus 2 violates Def. 3; the second set
  // waits forever for a clear (DynaSOAr App. A.5: "illegal bitmap operations deadlock").
  auto words = std::make_shared<std::uint64_t>(0);
  explore::Program p;
  for (int i = 0; i < 2; ++i)
    p.threads.push_back([words] {
      core::BitmapRef<A>(words.get(), core::BitmapLayout::for_bits(64))
          .set(5, core::MemoryOrder::relaxed);
    });
  explore::RandomStrategy s(3);
  auto const r = explore::run_program(p, s);
  EXPECT_EQ(r.outcome, explore::Outcome::deadlock) << r.message;
  EXPECT_LT(r.steps, 10u);  // detected at once, not by the step budget
}

TEST(ControlledScheduler, NonTerminationIsReportedWhenTheStepBudgetRunsOut) {
  auto flag = std::make_shared<std::uint64_t>(0);
  explore::Program p;
  p.threads.push_back([flag] {  // waits for a flag nobody sets, retrying with "new" seeds
    while (A::load(flag.get(), core::MemoryOrder::acquire) == 0) A::backoff(core::Backoff::retry);
  });
  p.threads.push_back([flag] { A::load(flag.get(), core::MemoryOrder::relaxed); });
  explore::RunOptions opts;
  opts.step_budget = 500;
  explore::PctStrategy s(9, 2, 100);
  auto const r = explore::run_program(p, s, opts);
  EXPECT_EQ(r.outcome, explore::Outcome::step_budget_exceeded);
  EXPECT_EQ(r.steps, 501u);
  EXPECT_NE(r.trace_text.find("earlier events omitted"), std::string::npos);
}

TEST(ControlledScheduler, ExceptionInAThreadIsReportedWithTheThread) {
  explore::Program p = independent_counters({3, 3});
  p.threads[1]       = [] {
    std::uint64_t w = 0;
    A::load(&w, core::MemoryOrder::relaxed);
    throw std::runtime_error("boom");
  };
  explore::RandomStrategy s(1);
  auto const r = explore::run_program(p, s);
  EXPECT_EQ(r.outcome, explore::Outcome::thread_error);
  EXPECT_NE(r.message.find("T1 failed: boom"), std::string::npos);
}

TEST(ControlledScheduler, PctDepthOneNeverPreempts) {
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    explore::Program p = independent_counters({4, 4, 4});
    explore::PctStrategy s(seed, 1, 50);
    auto const r = explore::run_program(p, s);
    ASSERT_TRUE(r.passed());
    EXPECT_EQ(r.preemptions, 0u);
  }
}

TEST(ControlledScheduler, StrategyNamesRoundTrip) {
  for (auto k : {explore::StrategyKind::random,
                 explore::StrategyKind::pct,
                 explore::StrategyKind::mixed,
                 explore::StrategyKind::exhaustive})
    EXPECT_EQ(explore::strategy_kind_from_string(explore::to_string(k)), k);
  EXPECT_THROW((void)explore::strategy_kind_from_string("fair"), std::invalid_argument);
}
