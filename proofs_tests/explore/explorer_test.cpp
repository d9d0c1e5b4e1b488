// The explorer on the real protocol (issue 4): RapidCheck generates workloads and the scheduler
// seed together; bounded exhaustive search of 2 threads x 2 operations on one block; the default
// exploration budget that finds every planted bug (mutant tests) finds nothing here.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "heaplab/families/interleaving/workloads/claim_paths.hpp"
#include "heaplab/families/interleaving/workloads/programs.hpp"
#include "workload_rc.hpp"

namespace explore   = heaplab::explore;
namespace workloads = heaplab::interleaving_family::workloads;

namespace {

/// One controlled run of `program` with a strategy chosen by the generated (seed, use_pct).
explore::RunResult run_once(explore::Program program, std::uint64_t seed, bool use_pct) {
  std::unique_ptr<explore::Strategy> strategy;
  if (use_pct)
    strategy =
        std::make_unique<explore::PctStrategy>(seed, 1 + static_cast<std::uint32_t>(seed % 3), 200);
  else
    strategy = std::make_unique<explore::RandomStrategy>(seed);
  return explore::run_program(program, *strategy);
}

rc::Gen<workloads::BitmapWorkload> gen_bitmap_workload() {
  return rc::gen::exec([] {
    workloads::BitmapWorkload w;
    w.num_bits               = *rc::gen::oneOf(rc::gen::inRange<std::uint32_t>(65, 400),
                                 rc::gen::inRange<std::uint32_t>(4097, 4400));
    std::uint32_t const last = (w.num_bits - 1) / 64;
    auto const raw           = *rc::gen::unique<std::vector<std::uint32_t>>(rc::gen::map(
        rc::gen::pair(rc::gen::element(0u, 1u, last), rc::gen::inRange<std::uint32_t>(0, 64)),
        [](std::pair<std::uint32_t, std::uint32_t> p) { return p.first * 64 + p.second; }));
    for (std::uint32_t b : raw)
      if (b < w.num_bits && w.tokens.size() < 6) w.tokens.push_back(b);
    std::sort(w.tokens.begin(), w.tokens.end());
    std::uint32_t const threads = *rc::gen::inRange<std::uint32_t>(2, 5);
    for (std::uint32_t i = 0; i < threads; ++i)
      w.threads.push_back(*rc::gen::container<std::vector<workloads::BitmapOp>>(
          *rc::gen::inRange<std::size_t>(1, 9),
          rc::gen::construct<workloads::BitmapOp>(rc::gen::arbitrary<bool>(),
                                                  rc::gen::inRange<std::uint32_t>(0, 8))));
    w.seed_salt = *rc::gen::arbitrary<std::uint64_t>();
    return w;
  });
}

}  // namespace

RC_GTEST_PROP(Explorer, TinyHeapInterleavingsKeepEveryInvariant, ()) {
  auto const workload = *workloads::gen_heap_workload(1, 4);
  auto const seed     = *rc::gen::arbitrary<std::uint64_t>();
  auto const use_pct  = *rc::gen::arbitrary<bool>();
  RC_TAG(workload.threads.size());
  auto const r = run_once(workloads::make_heap_program(workload), seed, use_pct);
  if (!r.passed())
    RC_FAIL(explore::format_failure(
        r, seed, use_pct ? explore::StrategyKind::pct : explore::StrategyKind::random));
}

RC_GTEST_PROP(Explorer, TwoLevelHeapInterleavingsKeepEveryInvariant, ()) {
  // 65..200 blocks: every state bitmap has two levels, so set-first / clear-last propagate and
  // the Lemma 5 trace check has upper-level operations to count.
  auto const workload = *workloads::gen_heap_workload(65, 200);
  auto const seed     = *rc::gen::arbitrary<std::uint64_t>();
  auto const use_pct  = *rc::gen::arbitrary<bool>();
  auto const r        = run_once(workloads::make_heap_program(workload), seed, use_pct);
  if (!r.passed())
    RC_FAIL(explore::format_failure(
        r, seed, use_pct ? explore::StrategyKind::pct : explore::StrategyKind::random));
}

RC_GTEST_PROP(Explorer, BitmapTokenInterleavingsSatisfyLemma5, ()) {
  auto const workload = *gen_bitmap_workload();
  auto const seed     = *rc::gen::arbitrary<std::uint64_t>();
  auto const use_pct  = *rc::gen::arbitrary<bool>();
  auto const r        = run_once(workloads::make_bitmap_program(workload), seed, use_pct);
  if (!r.passed())
    RC_FAIL(explore::format_failure(
        r, seed, use_pct ? explore::StrategyKind::pct : explore::StrategyKind::random));
}

TEST(Explorer, TwoThreadsTwoOperationsOnOneBlockExhaustively) {
  std::uint64_t total = 0;
  for (auto const& [name, workload] : workloads::two_by_two_workloads()) {
    explore::ExploreOptions o;
    o.strategy         = explore::StrategyKind::exhaustive;
    o.preemption_bound = 2;
    o.max_runs         = 100'000;
    auto const w       = workload;
    auto const report =
        explore::explore([w](std::uint64_t) { return workloads::make_heap_program(w); }, o);
    EXPECT_FALSE(report.failure.has_value()) << name << "\n" << report.failure_report;
    EXPECT_TRUE(report.exhausted) << name;
    std::printf("exhaustive (preemption bound 2) %-40s %6llu interleavings, %.2f s\n",
                name.c_str(),
                static_cast<unsigned long long>(report.runs),
                report.seconds);
    total += report.runs;
  }
  std::printf("exhaustive: %llu interleavings in total\n", static_cast<unsigned long long>(total));
}

TEST(Explorer, DefaultBudgetFindsNothingInTheRealProtocol) {
  explore::ExploreOptions const defaults;
  for (auto kind : {workloads::WorkloadKind::heap,
                    workloads::WorkloadKind::heap_k,
                    workloads::WorkloadKind::bitmap,
                    workloads::WorkloadKind::heap_large}) {
    auto const report = explore::explore(workloads::workload_factory(kind), defaults);
    EXPECT_FALSE(report.failure.has_value()) << report.failure_report;
    EXPECT_EQ(report.runs, defaults.max_runs);
    std::printf("%s workloads: %llu runs, %llu atomic operations, %.2f s, no failure\n",
                workloads::to_string(kind),
                static_cast<unsigned long long>(report.runs),
                static_cast<unsigned long long>(report.steps),
                report.seconds);
  }
  explore::ExploreOptions exhaustive;
  exhaustive.strategy = explore::StrategyKind::exhaustive;
  auto const report =
      explore::explore(workloads::workload_factory(workloads::WorkloadKind::turnover), exhaustive);
  EXPECT_FALSE(report.failure.has_value()) << report.failure_report;
  EXPECT_TRUE(report.exhausted);
  std::printf("turnover workload, exhaustive (bound 2): %llu interleavings, no failure\n",
              static_cast<unsigned long long>(report.runs));
}

TEST(Explorer, WeakMemoryDefaultBudgetFindsNothingInTheRealProtocol) {
  // The budget that finds every heap-weak planted bug (a weakened release or acquire,
  // docs/mutants.md) in the weak-memory mode finds nothing in the real protocol.
  explore::ExploreOptions weak;
  weak.run.memory_model = explore::MemoryModel::release_acquire;
  for (auto kind : {workloads::WorkloadKind::heap_weak, workloads::WorkloadKind::bitmap}) {
    auto const report = explore::explore(workloads::workload_factory(kind), weak);
    EXPECT_FALSE(report.failure.has_value()) << report.failure_report;
    EXPECT_EQ(report.runs, weak.max_runs);
    std::printf(
        "%s workloads, release_acquire: %llu runs, %llu atomic operations, %.2f s, no "
        "failure\n",
        kind == workloads::WorkloadKind::heap_weak ? "heap-weak" : "bitmap",
        static_cast<unsigned long long>(report.runs),
        static_cast<unsigned long long>(report.steps),
        report.seconds);
  }
  explore::ExploreOptions exhaustive = weak;
  exhaustive.strategy                = explore::StrategyKind::exhaustive;
  exhaustive.max_runs                = 200'000;
  auto const report =
      explore::explore(workloads::workload_factory(workloads::WorkloadKind::turnover), exhaustive);
  EXPECT_FALSE(report.failure.has_value()) << report.failure_report;
  EXPECT_TRUE(report.exhausted);
  std::printf(
      "turnover workload, release_acquire, exhaustive (preemption bound 2, stale-read "
      "bound 1): %llu schedules, %.2f s, no failure\n",
      static_cast<unsigned long long>(report.runs),
      report.seconds);
}

namespace {

/// Explores the burst workloads (claim tickets) with `options`, summing their claim-ticket paths.
workloads::ClaimPathCounts explore_bursts(explore::ExploreOptions const& options,
                                          std::uint32_t claim_wait_rounds_override = ~0u) {
  auto paths   = std::make_shared<workloads::ClaimPathCounts>();
  auto factory = [paths, claim_wait_rounds_override](std::uint64_t seed) {
    workloads::HeapWorkload w = workloads::random_burst_workload(seed);
    if (claim_wait_rounds_override != ~0u) w.claim_wait_rounds = claim_wait_rounds_override;
    return workloads::make_heap_program(w, paths);
  };
  auto const report = explore::explore(factory, options);
  EXPECT_FALSE(report.failure.has_value()) << report.failure_report;
  EXPECT_EQ(report.runs, options.max_runs);
  EXPECT_EQ(paths->runs, report.runs);
  std::printf("burst workloads, %s: %llu runs, %llu atomic operations, %.2f s, no failure\n  %s\n",
              explore::to_string(options.run.memory_model),
              static_cast<unsigned long long>(report.runs),
              static_cast<unsigned long long>(report.steps),
              report.seconds,
              paths->to_string().c_str());
  return *paths;
}

void expect_every_ticket_path(workloads::ClaimPathCounts const& c) {
  EXPECT_GT(c.opener_block, 0u) << "no opener published a block";
  EXPECT_GT(c.opener_none, 0u) << "no opener found the heap exhausted (published kNotFound)";
  EXPECT_GT(c.waiter_served, 0u) << "no waiter was served a block by its run's entry";
  EXPECT_GT(c.waiter_served_none, 0u) << "no waiter read its opener's kNotFound";
  EXPECT_GT(c.waiter_lookup, 0u) << "no waiter took a block its last-quarter lookup found";
  EXPECT_GT(c.waiter_timed_out, 0u) << "no waiter timed out";
  EXPECT_GT(c.entry_held_other_run, 0u)
      << "no waiter saw another run in its entry (run-table reuse)";
}

}  // namespace

TEST(Explorer, ClaimTicketBurstsReachEveryTicketPathAndFindNothing) {
  // Cold-start bursts (issue 13): the default budget that finds the claim-ticket mutants
  // (docs/mutants.md), and 500 runs in the weak-memory mode. Every ticket path must be reached
  // (claim_paths.hpp reads them off the traces; the bounded-waiting check runs on every trace).
  explore::ExploreOptions const sc;
  expect_every_ticket_path(explore_bursts(sc));
  explore::ExploreOptions weak = sc;
  weak.max_runs                = 500;
  weak.run.memory_model        = explore::MemoryModel::release_acquire;
  expect_every_ticket_path(explore_bursts(weak));
}

TEST(Explorer, ClaimPathCountersStayZeroWithTicketsOff) {
  // The counters can fail: the same bursts with claim_wait_rounds 0 (tickets off) take no path.
  explore::ExploreOptions o;
  o.max_runs                         = 100;
  workloads::ClaimPathCounts const c = explore_bursts(o, 0);
  EXPECT_EQ(c.takes, 0u);
  EXPECT_EQ(c.opener_block + c.opener_none + c.waiter_served + c.waiter_served_none +
                c.waiter_lookup + c.waiter_timed_out + c.entry_held_other_run,
            0u);
}
