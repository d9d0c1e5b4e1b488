// A planted bug (docs/mutants.md) must be found by the explorer within its default budget, and
// its failure must replay to the identical trace. Compiled once per mutant with
// HEAPLAB_MUTANT_<NAME>=1, HEAPLAB_MUTANT_LABEL="<name>" and HEAPLAB_MUTANT_WORKLOAD =
//   "heap"      random heap workloads, default exploration (mixed random/PCT, 2000 runs)
//   "bitmap"    random bitmap token workloads, default exploration
//   "turnover"  the fixed block-turnover workload, exhaustive search (preemption bound 2)
// (proofs_tests/core/CMakeLists.txt). The same budgets find nothing in the real protocol
// (explorer_test.cpp, DefaultBudgetFindsNothingInTheRealProtocol).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "harness/programs.hpp"

#if !defined(HEAPLAB_MUTANT_LABEL) || !defined(HEAPLAB_MUTANT_WORKLOAD)
#error "mutant_test.cpp is built per mutant by proofs_tests/core/CMakeLists.txt"
#endif

namespace sched   = heaplab::sched;
namespace harness = heaplab::harness;

TEST(PlantedBug, IsFoundWithinTheDefaultBudgetAndReplays) {
  auto const kind    = harness::workload_kind_from_string(HEAPLAB_MUTANT_WORKLOAD);
  auto const factory = harness::workload_factory(kind);
  sched::ExploreOptions options;  // defaults: mixed strategy, seeds 1.., 2000 runs
  if (kind == harness::WorkloadKind::turnover) options.strategy = sched::StrategyKind::exhaustive;
  sched::ExploreReport const report = sched::explore(factory, options);
  ASSERT_TRUE(report.failure.has_value())
      << "planted bug '" << HEAPLAB_MUTANT_LABEL << "' was not found in " << report.runs
      << " runs (" << report.seconds << " s)";
  std::printf("planted bug '%s' found by %s%s after %llu runs in %.3f s: %s\n",
              HEAPLAB_MUTANT_LABEL,
              report.failure->strategy.c_str(),
              kind == harness::WorkloadKind::turnover
                  ? ""
                  : (", seed " + std::to_string(report.failing_seed)).c_str(),
              static_cast<unsigned long long>(report.runs),
              report.seconds,
              sched::to_string(report.failure->outcome));
  std::printf("%s", report.failure_report.substr(0, 3000).c_str());
  // The failure reproduces the identical trace, twice.
  for (int i = 0; i < 2; ++i) {
    sched::RunResult const again =
        kind == harness::WorkloadKind::turnover
            ? sched::replay_schedule(factory, report.failing_schedule, options)
            : sched::replay(factory, options.strategy, report.failing_seed, options);
    EXPECT_EQ(again.outcome, report.failure->outcome);
    EXPECT_EQ(again.message, report.failure->message);
    EXPECT_EQ(again.trace_text, report.failure->trace_text);
  }
}
