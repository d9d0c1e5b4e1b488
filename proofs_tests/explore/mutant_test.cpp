// A planted bug (docs/mutants.md) must be found by the explorer within its default budget, and
// its failure must replay to the identical trace. One binary plants each bug in turn: this
// translation unit is compiled with HEAPLAB_MUTANT_RUNTIME (core/mutants.hpp), so every switch
// mutant::<name> is a plain bool that mutant::plant(name) sets before the exploration, and the
// protocol code the workloads run (header-only, instantiated here) reads it. One case per bug,
// named by the bug (`--gtest_filter='*/dealloc_no_reactivate'`), with the workload that exposes
// it:
//   heap      random heap workloads, default exploration (mixed random/PCT, 2000 runs)
//   heap_k    random heap workloads with k-slot reservations, default exploration
//   bitmap    random bitmap token workloads, default exploration
//   turnover  the fixed block-turnover workload, exhaustive search (preemption bound 2)
//   heap-weak random heap workloads with observed object words, default exploration in the
//             weak-memory mode (release_acquire); the same budget in the sequentially consistent
//             mode must NOT find the bug (it is a missing release/acquire)
//   rw        random-walk page pool workloads (issue 11), default exploration
//   rw-weak   rw with observed page words, as heap-weak
//   queue     the queue baseline on a tiny ring (issue 11), default exploration
//   queue-weak queue with observed page words, as heap-weak
//   burst     cold-start k-slot bursts for claim tickets, default exploration
// A case may also name the outcome the failure must have ("step_budget_exceeded", ...). The same
// budgets find nothing in the real protocol (explorer_test.cpp,
// DefaultBudgetFindsNothingInTheRealProtocol and
// WeakMemoryDefaultBudgetFindsNothingInTheRealProtocol), and PlantedBugs.EachCaseTestsOneKnownBug
// below checks that every case plants a bug that exists and that nothing stays planted.
//
// The harness's bounded-waiting check (workloads/claim_paths.hpp) is a switch of this binary too,
// so claim_wait_unbounded is also shown without it: the waiter that polls forever must then run
// into the step budget (a livelock) within the default budget.
namespace heaplab_mutant_test {
inline bool check_bounded_waiting = true;
}  // namespace heaplab_mutant_test
#define HEAPLAB_HARNESS_CHECK_BOUNDED_WAITING ::heaplab_mutant_test::check_bounded_waiting

#ifndef HEAPLAB_MUTANT_RUNTIME
#error "mutant_test.cpp plants its bugs at run time: build it with HEAPLAB_MUTANT_RUNTIME"
#endif

#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>
#include <string>

#include "heaplab/core/mutants.hpp"
#include "heaplab/explore/explore.hpp"
#include "heaplab/families/interleaving/workloads/programs.hpp"

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

/// One planted bug under the explorer: the bug, the workload kind that exposes it, the outcome
/// its failure must have (nullptr: any), and whether the harness checks bounded waiting.
struct PlantedCase {
  char const* bug;
  char const* workload;
  char const* outcome        = nullptr;
  bool check_bounded_waiting = true;
  char const* label          = nullptr;  // the case's name where two cases plant one bug
};

std::ostream& operator<<(std::ostream& os, PlantedCase const& c) { return os << c.bug; }

// clang-format off
PlantedCase const kPlantedCases[] = {
    {"invalidate_no_rollback",          "heap"},
    {"init_bitmap_before_type",         "turnover"},
    {"dealloc_no_reactivate",           "heap"},
    {"rollback_no_deferred_deactivate", "heap"},
    {"defrag_crossing_from_reload",     "heap"},
    {"alloc_retry_forever_on_oom",      "heap"},
    {"delete_keeps_defrag_bit",         "heap"},
    {"hierarchy_skip_set_first",        "bitmap"},
    {"hierarchy_try_propagate",         "bitmap"},
    {"hierarchy_deep_set_stops",        "bitmap"},
    {"hierarchy_deep_clear_stops",      "bitmap"},
    {"weak_publish_release",            "heap-weak"},
    {"weak_reserve_acquire",            "heap-weak"},
    {"free_relaxed",                    "heap-weak"},
    {"weak_invalidate_acquire",         "heap-weak"},
    {"weak_delete_release",             "heap-weak"},
    {"weak_claim_acquire",              "heap-weak"},
    {"claim_wait_unbounded",            "burst"},
    {"claim_wait_unbounded",            "burst", "step_budget_exceeded", false,
     "claim_wait_unbounded_livelock"},
    {"claim_wait_miss_is_oom",          "burst"},
    {"alloc_null_after_lost_round",     "heap"},
    {"hint_skips_type_check",           "heap"},
    {"reserve_k_update_one_slot",       "heap_k"},
    {"rw_claim_without_atomic",         "rw"},
    {"rw_bm_success_from_word",         "rw"},
    {"rw_steps_unbounded",              "rw"},
    {"rw_returns_page_beyond_pool",     "rw"},
    {"rw_free_relaxed",                 "rw-weak"},
    {"corw_keeps_lost_claim",           "rw"},
    {"corw_offer_not_marked",           "rw"},
    {"corw_offer_taken_off_by_one",     "rw"},
    {"corw_lock_not_released",          "rw"},
    {"rw_malloc_no_rollback",           "rw"},
    {"rw_malloc_partial_claim_wins",    "rw"},
    {"rw_malloc_rollback_all_bits",     "rw"},
    {"rw_queue_slot_relaxed",           "queue-weak"},
    // The queue baseline's rw_queue_empty_keeps_decrement: the ring-consistency check at the
    // barrier sees count one below tail - head (docs/mutants.md). Its host-side test is
    // rw_mutant_rw_queue_empty_keeps_decrement_test (proofs_tests/rw).
    {"rw_queue_empty_keeps_decrement",  "queue"},
    // Out-of-memory answers on large heaps (issue 34, class 1): prefilled heaps of 65..192
    // blocks, two-level bitmaps (workload heap-large, oom-justified's two rules).
    {"free_search_first_word_only",     "heap-large"},
    {"oom_scan_no_wrap",                "heap-large"},
    {"oom_fallback_trusts_summary",     "heap-large"},
};
// clang-format on

/// Plants a case's bug (and the harness switch) for one test and takes both back after it, so a
/// failing case cannot leave a bug planted for the next.
class Planted {
 public:
  explicit Planted(PlantedCase const& c) {
    EXPECT_EQ(heaplab::core::mutant::plant(c.bug), "") << c.bug;
    heaplab_mutant_test::check_bounded_waiting = c.check_bounded_waiting;
  }
  ~Planted() {
    EXPECT_EQ(heaplab::core::mutant::plant(""), "");
    heaplab_mutant_test::check_bounded_waiting = true;
  }
  Planted(Planted const&)            = delete;
  Planted& operator=(Planted const&) = delete;
};

class PlantedBug : public testing::TestWithParam<PlantedCase> {};

}  // namespace

TEST_P(PlantedBug, IsFoundWithinTheDefaultBudgetAndReplays) {
  PlantedCase const& c = GetParam();
  Planted const planted(c);
  ASSERT_STREQ(heaplab::core::mutant::kPlanted, c.bug) << "not a planted bug: " << c.bug;
  auto const kind                       = workloads::workload_kind_from_string(c.workload);
  explore::ProgramFactory const factory = workloads::workload_factory(kind);
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
  // The case names how the bug must show (e.g. step_budget_exceeded for a livelock).
  if (c.outcome != nullptr) {
    EXPECT_STREQ(explore::to_string(report.failure->outcome), c.outcome);
  }
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

INSTANTIATE_TEST_SUITE_P(Explorer,
                         PlantedBug,
                         testing::ValuesIn(kPlantedCases),
                         [](testing::TestParamInfo<PlantedCase> const& info) {
                           return std::string(info.param.label != nullptr ? info.param.label
                                                                          : info.param.bug);
                         });

TEST(PlantedBugs, EachCaseTestsOneKnownBugAndNothingStaysPlanted) {
  for (PlantedCase const& c : kPlantedCases) {
    {
      Planted const planted(c);
      EXPECT_STREQ(heaplab::core::mutant::kPlanted, c.bug) << "not a planted bug: " << c.bug;
    }
    EXPECT_STREQ(heaplab::core::mutant::kPlanted, "");
  }
  // plant() refuses a name that is not a planted bug, and plants nothing then.
  EXPECT_NE(heaplab::core::mutant::plant("no_such_bug").find("'no_such_bug' names no planted bug"),
            std::string::npos);
  EXPECT_STREQ(heaplab::core::mutant::kPlanted, "");
  EXPECT_FALSE(heaplab::core::mutant::dealloc_no_reactivate);
  EXPECT_EQ(heaplab::core::mutant::plant("dealloc_no_reactivate"), "");
  EXPECT_TRUE(heaplab::core::mutant::dealloc_no_reactivate);
  EXPECT_EQ(heaplab::core::mutant::plant(""), "");
  EXPECT_FALSE(heaplab::core::mutant::dealloc_no_reactivate);
}
