// The interleaving family (src/heaplab/families/interleaving, docs/explorer.md "Failure files")
// on the real protocol: its schedules' JSON form round-trips and is strict, its runner "explore"
// reproduces a run exactly from its decisions, rejects decisions that do not fit the program,
// passes generated schedules of every profile, and names the workloads' checks. The planted bug
// found through the generic stress loop, replayed and minimized, is interleaving_mutant_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/explore/controlled_run.hpp"
#include "heaplab/explore/strategy.hpp"
#include "heaplab/families/interleaving/explore_runner.hpp"
#include "heaplab/families/interleaving/family.hpp"
#include "heaplab/families/interleaving/workloads/programs.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/runner/stress.hpp"
#include "heaplab/schedule/json.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace explore      = heaplab::explore;
namespace interleaving = heaplab::interleaving_family;
namespace runner       = heaplab::runner;
namespace workloads    = heaplab::interleaving_family::workloads;
using interleaving::Decision;
using interleaving::InterleavingSchedule;

namespace {

std::vector<std::string> profile_names() {
  std::vector<std::string> out;
  for (auto const& p : interleaving::family().profiles()) out.push_back(p.name);
  return out;
}

/// A schedule with explicit decisions, reads among them (release_acquire).
InterleavingSchedule weak_decisions() {
  InterleavingSchedule s;
  s.description      = "hand-made";
  s.workload         = workloads::WorkloadKind::heap_weak;
  s.workload_seed    = 11;
  s.memory_model     = explore::MemoryModel::release_acquire;
  s.step_budget      = 1234;
  s.stale_read_bound = 2;
  s.steps            = {{Decision::Kind::thread, 0},
                        {Decision::Kind::read, 1},
                        {Decision::Kind::thread, 1},
                        {Decision::Kind::read, 0},
                        {Decision::Kind::read, 2}};
  return s;
}

/// The decisions of one run of `s`'s workload under a random strategy (explore directly, not
/// through the family's runner).
explore::RunResult recorded_run(InterleavingSchedule const& s, std::uint64_t seed) {
  explore::Program p = workloads::workload_factory(s.workload, s.workload_seed)(s.workload_seed);
  explore::RandomStrategy strategy(seed);
  explore::RunOptions o;
  o.memory_model     = s.memory_model;
  o.record_decisions = true;
  return explore::run_program(p, strategy, o);
}

std::string error_path(std::string const& text) {
  try {
    (void)interleaving::from_json(heaplab::schedule::parse_document(text));
  } catch (heaplab::schedule::schedule_error const& e) {
    return e.path();
  }
  return "(no error)";
}

}  // namespace

TEST(InterleavingSchedule, JsonRoundTripsForEveryProfileAndForDecisions) {
  for (auto const& profile : profile_names())
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      InterleavingSchedule const s =
          interleaving::generated_schedule(profile, seed, static_cast<std::uint32_t>(seed));
      auto const j = interleaving::to_json(s);
      EXPECT_EQ(interleaving::from_json(nlohmann::json::parse(j.dump())), s) << j.dump();
      EXPECT_EQ(interleaving::to_json(interleaving::from_json(nlohmann::json::parse(j.dump()))), j);
      EXPECT_TRUE(s.strategy.has_value());
      EXPECT_TRUE(s.steps.empty());
    }
  InterleavingSchedule const d = weak_decisions();
  auto const j                 = interleaving::to_json(d);
  EXPECT_EQ(interleaving::from_json(nlohmann::json::parse(j.dump())), d);
  EXPECT_EQ(j.dump(),
            "{\"format\":\"heaplab-interleaving\",\"version\":1,\"description\":\"hand-made\","
            "\"workload\":{\"kind\":\"heap-weak\",\"seed\":11},\"memory_model\":\"release_"
            "acquire\",\"step_budget\":1234,\"stale_read_bound\":2,\"steps\":[{\"thread\":0},{"
            "\"read\":1},{\"thread\":1},{\"read\":0},{\"read\":2}]}");
  EXPECT_EQ(interleaving::schedule_text(d.steps), "0*1,r1*1,1*1,r0*1,r2*1");
}

TEST(InterleavingSchedule, GeneratedSchedulesFollowTheExplorersMixedStrategy) {
  // mixed: case k (size 1 + k % 100) runs kind (k % 100) % (number of kinds); even seeds random,
  // odd seeds PCT.
  auto const& kinds = workloads::all_workload_kinds();
  for (std::uint32_t size = 1; size <= 30; ++size) {
    auto const s = interleaving::generated_schedule("mixed", 1000 + size, size);
    EXPECT_EQ(s.workload, kinds[(size - 1) % kinds.size()]);
    EXPECT_EQ(s.workload_seed, 1000u + size);
    EXPECT_EQ(s.strategy->name,
              size % 2 == 0 ? interleaving::SeededStrategy::Name::random
                            : interleaving::SeededStrategy::Name::pct);
    EXPECT_EQ(s.memory_model,
              workloads::is_weak_workload(s.workload)
                  ? explore::MemoryModel::release_acquire
                  : explore::MemoryModel::sequential_consistency);
  }
  auto const pct = interleaving::mixed_strategy(7);
  EXPECT_EQ(interleaving::describe(pct), "pct(depth=1,steps=150,seed=7)");
  EXPECT_EQ(interleaving::describe(interleaving::mixed_strategy(8)), "random(seed=8)");
  EXPECT_THROW((void)interleaving::generated_schedule("heap-strong", 1, 1),
               heaplab::core::precondition_error);
}

TEST(InterleavingSchedule, StrictReadingNamesTheField) {
  std::string const head =
      R"({"format": "heaplab-interleaving", "version": 1, "workload": {"kind": "heap", "seed": 3},)";
  std::string const sc = R"( "memory_model": "sequential_consistency", "step_budget": 100,)";
  std::string const ra = R"( "memory_model": "release_acquire", "step_budget": 100,)";
  struct Case {
    std::string text;
    std::string path;
  };
  std::vector<Case> const cases = {
      {head + sc + R"( "steps": [], "stepz": 1})", "stepz"},
      {R"({"format": "heaplab-interleaving", "version": 1,)" + sc + R"( "steps": []})", "workload"},
      {R"({"format": "heaplab-interleaving", "version": 2})", "version"},
      {R"({"format": "heaplab-schedule", "version": 1})", "format"},
      {R"({"format": "heaplab-interleaving", "version": 1, "workload": {"kind": "heep", "seed": 3},)" +
           sc + R"( "steps": []})",
       "workload.kind"},
      {head + R"( "memory_model": "tso", "step_budget": 100, "steps": []})", "memory_model"},
      {head + R"( "memory_model": "sc", "step_budget": 0, "steps": []})", "memory_model"},
      {head + R"( "memory_model": "sequential_consistency", "step_budget": 0, "steps": []})",
       "step_budget"},
      {head + sc + R"( "strategy": {"name": "random", "seed": 1}, "steps": [{"thread": 0}]})",
       "steps"},
      {head + sc + R"( "strategy": {"name": "random", "seed": 1, "depth": 2}, "steps": []})",
       "strategy.depth"},
      {head + sc + R"( "strategy": {"name": "pct", "seed": 1, "depth": 0, "step_estimate": 9},)" +
           R"( "steps": []})",
       "strategy"},
      {head + sc + R"( "strategy": {"name": "dfs", "seed": 1}, "steps": []})", "strategy.name"},
      {head + sc + R"( "steps": [{"read": 1}]})", "steps[0].read"},
      {head + sc + R"( "steps": [{"thread": 0}, {"thread": 1, "read": 0}]})", "steps[1]"},
      {head + sc + R"( "steps": [{"thread": 0}, 5]})", "steps[1]"},
      {head + sc + R"( "steps": [{"thread": -1}]})", "steps[0].thread"},
      {head + sc + R"( "stale_read_bound": 1, "steps": []})", "stale_read_bound"},
      {head + ra + R"( "stale_read_bound": 1, "steps": [{"read": 1}, {"thread": 0}, {"read": 2}]})",
       "steps[2].read"},
      {head + ra + R"( "stale_read_bound": 1, "strategy": {"name": "random", "seed": 1},)" +
           R"( "steps": []})",
       "stale_read_bound"},
  };
  for (auto const& c : cases) EXPECT_EQ(error_path(c.text), c.path) << c.text;
  EXPECT_EQ(
      error_path(head + ra + R"( "stale_read_bound": 1, "steps": [{"read": 1}, {"read": 0}]})"),
      "(no error)");
}

// The program function of each group of kinds (a mutant test includes only its group's header,
// proofs_tests/explore/CMakeLists.txt) takes exactly its own kinds: every kind has one group.
TEST(Workloads, EveryKindHasExactlyOneGroupThatBuildsItsProgram) {
  for (auto const kind : workloads::all_workload_kinds()) {
    int groups = 0;
    auto tries = [&](auto const& make) {
      try {
        (void)make();
        ++groups;
      } catch (std::logic_error const& e) {
        EXPECT_NE(std::string(e.what()).find(workloads::to_string(kind)), std::string::npos);
      }
    };
    tries([&] { return workloads::heap_kind_program(kind, 1); });
    tries([&] { return workloads::bitmap_kind_program(kind, 1); });
    tries([&] { return workloads::rw_kind_program(kind, 1); });
    tries([&] { return workloads::queue_kind_program(kind, 1); });
    EXPECT_EQ(groups, 1) << workloads::to_string(kind);
  }
}

TEST(ExploreRunner, DecisionsReproduceARunExactly) {
  interleaving::ExploreRunner r;
  for (auto const kind : workloads::all_workload_kinds())
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      InterleavingSchedule s;
      s.workload                   = kind;
      s.workload_seed              = seed;
      s.memory_model               = workloads::is_weak_workload(kind)
                                         ? explore::MemoryModel::release_acquire
                                         : explore::MemoryModel::sequential_consistency;
      explore::RunResult const run = recorded_run(s, seed);
      ASSERT_TRUE(run.passed()) << run.message;
      for (auto const& d : run.decisions) s.steps.push_back(Decision::decode(d.chosen));
      std::vector<runner::StepReport> reports;
      auto const out = r.run(s, [&](runner::StepReport const& rep) { reports.push_back(rep); });
      EXPECT_FALSE(out.failure) << runner::format_failure(*out.failure);
      EXPECT_EQ(out.steps_run, s.steps.size());
      // One report per decision, in order; the last one carries the run's counts.
      ASSERT_EQ(reports.size(), s.steps.size());
      for (std::size_t i = 0; i < reports.size(); ++i) {
        EXPECT_EQ(reports[i].index, i);
        EXPECT_FALSE(reports[i].line.empty());
      }
      EXPECT_EQ(reports.front().count("runs"), s.steps.size() == 1 ? 1u : 0u);
      runner::StepReport const& last = reports.back();
      EXPECT_TRUE(last.ok);
      EXPECT_EQ(last.count("passed"), 1u);
      // The same run: as many atomic operations, decisions, preemptions and stale reads.
      EXPECT_EQ(last.count("atomic_operations"), run.steps);
      EXPECT_EQ(last.count("decisions"), run.decisions.size());
      EXPECT_EQ(last.count("preemptions"), run.preemptions);
      EXPECT_EQ(last.count("stale_reads"), run.stale_reads);
    }
}

TEST(ExploreRunner, ADecisionThatDoesNotFitEndsTheList) {
  interleaving::ExploreRunner r;
  InterleavingSchedule s;
  s.workload      = workloads::WorkloadKind::turnover;  // two threads
  s.workload_seed = 1;
  s.steps = {{Decision::Kind::thread, 0}, {Decision::Kind::thread, 5}, {Decision::Kind::thread, 1}};
  std::vector<runner::StepReport> reports;
  auto const out = r.run(s, [&](runner::StepReport const& rep) { reports.push_back(rep); });
  EXPECT_FALSE(out.failure);
  EXPECT_EQ(out.steps_run, 1u);  // thread 5 does not exist: the list ends there
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].line.find("steps[1] did not fit (thread 5 cannot run"), std::string::npos)
      << reports[0].line;
  // The same run as the list cut there: a deterministic function of the schedule.
  InterleavingSchedule cut = s;
  cut.steps.resize(1);
  std::vector<runner::StepReport> cut_reports;
  (void)r.run(cut, [&](runner::StepReport const& rep) { cut_reports.push_back(rep); });
  EXPECT_EQ(cut_reports.at(0).count("atomic_operations"), reports[0].count("atomic_operations"));
  // A read decision where the run decides which thread runs.
  s.memory_model = explore::MemoryModel::release_acquire;
  s.steps        = {{Decision::Kind::read, 0}};
  EXPECT_EQ(r.run(s).steps_run, 0u);
  // No decisions at all: the non-preemptive run, which passes. An invalid schedule throws.
  s.steps.clear();
  s.memory_model = explore::MemoryModel::sequential_consistency;
  EXPECT_FALSE(r.run(s).failure);
  s.step_budget = 0;
  EXPECT_THROW((void)r.run(s), heaplab::schedule::schedule_error);
}

TEST(ExploreRunner, PassesGeneratedSchedulesOfEveryProfileThroughTheStressLoop) {
  auto const& family = runner::family_of_runner("explore");
  EXPECT_EQ(&family, &interleaving::family());
  EXPECT_EQ(runner::Registry::instance().family_of_format("heaplab-interleaving"), &family);
  EXPECT_EQ(family.reference_runner(), "explore");
  for (auto const& profile : profile_names()) {
    runner::StressOptions o;
    o.seconds         = 60;
    o.seed            = 3;
    o.max_cases       = profile == "mixed" ? 40 : 8;
    o.request.profile = profile;
    o.request.runner  = "explore";
    o.out_dir         = std::filesystem::temp_directory_path() / "heaplab_interleaving_family_test";
    auto const result =
        runner::run_stress(family, o, [](unsigned) { return runner::make_runner("explore"); });
    EXPECT_TRUE(result.failures.empty())
        << profile << ": " << runner::format_failure(result.failures.front().failure);
    EXPECT_EQ(result.stats.cases, o.max_cases);
    EXPECT_EQ(result.stats.counts.at("passed"), o.max_cases);
    EXPECT_GT(result.stats.counts.at("atomic_operations"), 0u);
    auto const& workloads_run = result.stats.coverage.counts.at("workloads");
    EXPECT_EQ(workloads_run.size(),
              profile == "mixed" ? workloads::all_workload_kinds().size() : std::size_t{1})
        << profile;
    EXPECT_EQ(result.stats.coverage.counts.at("strategies").size() > 1, true) << profile;
  }
}

TEST(ExploreRunner, NamesTheWorkloadsChecks) {
  struct Case {
    char const* line;
    bool thread;
    char const* check;
  };
  Case const cases[] = {
      {"T0 failed: catalog at the barrier: [defrag-implies-active] block 0",
       true,
       "catalog-at-barrier"},
      {"T1 failed: protocol violation: an initialized block lost a padding bit (x at y:1)",
       true,
       "protocol"},
      {"T2 failed: ownership log: free: slot (block 0, slot 1) was owned by T1",
       true,
       "ownership-log"},
      {"T1 failed: allocation of slot (block 1, slot 0): the new owner reads the object word as "
       "0x0 but the last write to it stored 0x5",
       true,
       "happens-before"},
      {"T0 failed: model: getpage for owner 1 returned page 60, which owner 0 still holds",
       true,
       "page-model"},
      {"T3 failed: rw catalog at the barrier: [rw-owned-page-used] page 4", true, "rw-catalog"},
      {"T0 failed: the barrier: queue: count -3 but tail - head = 0 pages in the ring",
       true,
       "queue-ring"},
      {"T1 failed: getpage took 0 steps (max_steps 4, page 3)", true, "request-steps"},
      {"T0 failed: token 3 put back by a non-holder", true, "bitmap-tokens"},
      {"T0 failed: something else", true, "thread-exception"},
      {"oom-justified: 4 allocation(s) returned null", false, "oom-justified"},
      {"Lemma 5 / Def. 2: free.L0[0] ...", false, "lemma5"},
      {"Def. 1: free.L1[0] is set", false, "lemma5"},
      {"bounded waiting: waiter T1 (run 0 of type 0) polled its run's entry 2 times",
       false,
       "bounded-waiting"},
      {"catalog at the end: [x] y", false, "catalog-at-end"},
      {"capacity lost: after every object was freed, block 0 is not free", false, "capacity-lost"},
      {"after the drain 3 of 4 pages are free", false, "pages-lost"},
      {"T1 still holds pages", false, "pages-lost"},
      {"the end: queue: the ring's pages are not the model's free pages", false, "queue-ring"},
      {"something else", false, "post-run-check"},
  };
  for (auto const& c : cases)
    EXPECT_EQ(interleaving::check_of(c.line, c.thread), c.check) << c.line;
  // Every check the runner can name is in the family's catalog.
  std::vector<std::string> names;
  for (auto const& inv : interleaving::family().invariants()) names.push_back(inv.name);
  for (auto const& c : cases)
    EXPECT_NE(std::find(names.begin(), names.end(), c.check), names.end()) << c.check;
  for (char const* c : {"deadlock", "livelock", "precondition", "scheduler"})
    EXPECT_NE(std::find(names.begin(), names.end(), c), names.end()) << c;
}
