// A planted bug (docs/mutants.md) must be found by the explorer within its default budget, and
// its failure must replay to the identical trace. Compiled once per mutant with
// HEAPLAB_MUTANT_NAME="<name>" (heaplab::core::mutant::kPlanted) and HEAPLAB_MUTANT_WORKLOAD =
//   "heap"      random heap workloads, default exploration (mixed random/PCT, 2000 runs)
//   "bitmap"    random bitmap token workloads, default exploration
//   "turnover"  the fixed block-turnover workload, exhaustive search (preemption bound 2)
//   "heap-weak" random heap workloads with observed object words, default exploration in the
//               weak-memory mode (release_acquire); the same budget in the sequentially
//               consistent mode must NOT find the bug (it is a missing release/acquire)
//   "rw"        random-walk page pool workloads (issue 11), default exploration
//   "rw-weak"   rw with observed page words, as heap-weak
//   "queue"     the queue baseline on a tiny ring (issue 11), default exploration
//   "queue-weak" queue with observed page words, as heap-weak
//   "burst"     cold-start k-slot bursts for claim tickets, default exploration
// (proofs_tests/explore/CMakeLists.txt), which also names the one workload header the kind needs
// (HEAPLAB_MUTANT_PROGRAMS) and its program function (HEAPLAB_MUTANT_PROGRAM, e.g.
// heap_kind_program): 36 of these binaries are built, and the header of one group of kinds
// compiles in half the time of programs.hpp, which has them all. A target may also define
// HEAPLAB_MUTANT_OUTCOME, the
// outcome the failure must have ("step_budget_exceeded", ...). The same budgets find nothing in the
// real protocol (explorer_test.cpp, DefaultBudgetFindsNothingInTheRealProtocol and
// WeakMemoryDefaultBudgetFindsNothingInTheRealProtocol).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "heaplab/core/mutants.hpp"
#include "heaplab/explore/explore.hpp"
#include HEAPLAB_MUTANT_PROGRAMS

#if !defined(HEAPLAB_MUTANT_NAME) || !defined(HEAPLAB_MUTANT_WORKLOAD) || \
    !defined(HEAPLAB_MUTANT_PROGRAMS) || !defined(HEAPLAB_MUTANT_PROGRAM)
#error "mutant_test.cpp is built per mutant by proofs_tests/explore/CMakeLists.txt"
#endif

namespace explore   = heaplab::explore;
namespace workloads = heaplab::interleaving_family::workloads;

namespace {

/// The failure report up to its trace, then the trace's header and last `lines` events (where
/// the failure shows).
std::string report_head_and_trace_tail(std::string const& report, std::size_t lines) {
  std::size_t const trace = report.find("  trace:\n");
  if (trace == std::string::npos) return report;
  std::size_t const header_end = report.find('\n', trace + 10);
  std::size_t start            = report.size();
  for (std::size_t n = 0; n <= lines && start > header_end + 1; ++n)
    start = report.rfind('\n', start - 2) + 1;
  if (start <= header_end + 1) return report;
  return report.substr(0, header_end + 1) + "   ... (earlier events cut here) ...\n" +
         report.substr(start);
}

}  // namespace

TEST(PlantedBug, IsFoundWithinTheDefaultBudgetAndReplays) {
  auto const kind = workloads::workload_kind_from_string(HEAPLAB_MUTANT_WORKLOAD);
  explore::ProgramFactory const factory = [kind](std::uint64_t workload_seed) {
    return workloads::HEAPLAB_MUTANT_PROGRAM(kind, workload_seed);
  };
  explore::ExploreOptions options;  // defaults: mixed strategy, seeds 1.., 2000 runs
  if (kind == workloads::WorkloadKind::turnover)
    options.strategy = explore::StrategyKind::exhaustive;
  bool const weak = workloads::is_weak_workload(kind);
  if (weak) options.run.memory_model = explore::MemoryModel::release_acquire;
  explore::ExploreReport const report = explore::explore(factory, options);
  ASSERT_TRUE(report.failure.has_value())
      << "planted bug '" << heaplab::core::mutant::kPlanted << "' was not found in " << report.runs
      << " runs (" << report.seconds << " s)";
  std::printf("planted bug '%s' found (%s) by %s%s after %llu runs in %.3f s: %s\n",
              heaplab::core::mutant::kPlanted,
              explore::to_string(options.run.memory_model),
              report.failure->strategy.c_str(),
              kind == workloads::WorkloadKind::turnover
                  ? ""
                  : (", seed " + std::to_string(report.failing_seed)).c_str(),
              static_cast<unsigned long long>(report.runs),
              report.seconds,
              explore::to_string(report.failure->outcome));
  std::printf("%s", report_head_and_trace_tail(report.failure_report, 40).c_str());
#if defined(HEAPLAB_MUTANT_OUTCOME)
  // The target names how the bug must show (e.g. step_budget_exceeded for a livelock).
  EXPECT_STREQ(explore::to_string(report.failure->outcome), HEAPLAB_MUTANT_OUTCOME);
#endif
  // The failure reproduces the identical trace, twice.
  for (int i = 0; i < 2; ++i) {
    explore::RunResult const again =
        kind == workloads::WorkloadKind::turnover
            ? explore::replay_schedule(factory, report.failing_schedule, options)
            : explore::replay(factory, options.strategy, report.failing_seed, options);
    EXPECT_EQ(again.outcome, report.failure->outcome);
    EXPECT_EQ(again.message, report.failure->message);
    EXPECT_EQ(again.trace_text, report.failure->trace_text);
  }
  if (weak) {
    // The point of the weak-memory mode: the sequentially consistent machine, with the same
    // budget and workloads, does not see a missing release/acquire.
    explore::ExploreOptions sc             = options;
    sc.run.memory_model                    = explore::MemoryModel::sequential_consistency;
    explore::ExploreReport const sc_report = explore::explore(factory, sc);
    EXPECT_FALSE(sc_report.failure.has_value())
        << "the sequentially consistent mode found it too:\n"
        << sc_report.failure_report;
    std::printf("sequential_consistency, same budget: %s in %llu runs (%.3f s)\n",
                sc_report.failure ? "FOUND" : "not found",
                static_cast<unsigned long long>(sc_report.runs),
                sc_report.seconds);
  }
}
