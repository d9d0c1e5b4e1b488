// The queue baseline (rw/queue_pool.hpp, RW sec. 3.2.1) under the controlled scheduler
// (workloads/queue_workload.hpp; docs/rw.md "Baselines"): the ring-consistency check fed broken
// rings, the workloads' coverage, the default budget and a bounded exhaustive search finding
// nothing in the real queue. Its planted bugs are explore_mutant_test (case rw_queue_slot_relaxed)
// (queue-weak) and explore_mutant_test (case rw_queue_empty_keeps_decrement) (queue).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>

#include "heaplab/explore/explore.hpp"
#include "heaplab/families/interleaving/workloads/programs.hpp"
#include "heaplab/rw/queue_pool.hpp"
#include "rw_explore_support.hpp"

namespace core      = heaplab::core;
namespace workloads = heaplab::interleaving_family::workloads;
namespace rw        = heaplab::rw;
namespace explore   = heaplab::explore;
namespace qd        = heaplab::rw::queue_detail;

namespace {

/// The state of a HostQueue (C slots, T pages) after `gets` requests and then freeing `frees` of
/// the pages they got (in order), on one thread.
struct Driven {
  workloads::QueueState state;
  std::set<std::uint32_t> free_pages;
};

Driven drive(std::uint32_t t, std::uint32_t c, std::uint32_t gets, std::uint32_t frees) {
  rw::HostQueue q(t, c, t);
  auto const ref = q.ref<core::HostAtomics>();
  std::set<std::uint32_t> free_pages;
  for (std::uint32_t p = 0; p < t; ++p) free_pages.insert(p);
  std::vector<std::uint32_t> got;
  for (std::uint32_t k = 0; k < gets; ++k) {
    rw::GetPageResult const r = ref.get_page();
    if (r.ok()) got.push_back(r.page), free_pages.erase(r.page);
  }
  for (std::uint32_t k = 0; k < frees && k < got.size(); ++k)
    ref.free_page(got[k]), free_pages.insert(got[k]);
  rw::QueueStorage const s = q.storage();
  Driven d;
  d.state.slots.assign(s.slots, s.slots + s.capacity);
  d.state.head  = *s.head;
  d.state.tail  = *s.tail;
  d.state.count = *s.count;
  d.free_pages  = free_pages;
  return d;
}

TEST(QueueExplorer, StateCheckPassesRealRingsAndNamesEachBrokenOne) {
  // Real rings after several laps (C = 3, T = 2: tickets wrap every 3), also after a null.
  for (std::uint32_t gets : {0u, 1u, 2u, 3u})
    for (std::uint32_t frees : {0u, 1u, 2u}) {
      Driven const d = drive(2, 3, gets, frees);
      auto const p   = workloads::queue_state_problems(d.state, d.free_pages);
      EXPECT_TRUE(p.empty()) << gets << " gets, " << frees << " frees: " << p.front();
    }
  Driven const ok   = drive(2, 3, 2, 1);  // head 2, tail 3: one page in slot 2 (lap 0)
  auto const broken = [&](auto change, std::set<std::uint32_t> free_pages) {
    workloads::QueueState s = ok.state;
    change(s);
    auto const p = workloads::queue_state_problems(s, free_pages);
    return p.empty() ? std::string() : p.front();
  };
  auto const same = [](workloads::QueueState&) {};
  EXPECT_NE(broken([](workloads::QueueState& s) { s.count -= 1; }, ok.free_pages).find("count"),
            std::string::npos);
  EXPECT_NE(broken([](workloads::QueueState& s) { s.tail = s.head + 4; }, ok.free_pages)
                .find("do not leave"),
            std::string::npos);
  EXPECT_NE(broken([](workloads::QueueState& s) { s.slots[2] = qd::empty_slot(1); }, ok.free_pages)
                .find("should be full"),
            std::string::npos);
  EXPECT_NE(broken([](workloads::QueueState& s) { s.slots[0] = qd::empty_slot(0); }, ok.free_pages)
                .find("should be empty for lap 1"),
            std::string::npos);
  std::set<std::uint32_t> other = ok.free_pages;
  other.insert(1 - *other.begin());
  other.erase(other.begin());
  EXPECT_NE(broken(same, other).find("not the model's free pages"), std::string::npos);
  EXPECT_NE(broken(same, {}).find("the model has 0 free"), std::string::npos);
}

TEST(QueueExplorer, WorkloadsCoverEveryRingSizeAndEveryOp) {
  std::set<std::uint32_t> capacities;
  std::set<int> kinds;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    workloads::QueueWorkload const w = workloads::random_queue_workload(seed);
    capacities.insert(w.capacity);
    EXPECT_GE(w.num_pages, 1u);
    EXPECT_LE(w.num_pages, w.capacity);
    EXPECT_GE(w.threads.size(), 2u);
    EXPECT_LE(w.threads.size(), 4u);
    for (auto const& ops : w.threads)
      for (auto const& op : ops) kinds.insert(static_cast<int>(op.kind));
  }
  EXPECT_EQ(capacities, (std::set<std::uint32_t>{2, 3, 4, 5, 6}));
  EXPECT_EQ(kinds.size(), 4u);
  EXPECT_TRUE(workloads::random_queue_weak_workload(5).observed_pages);
}

TEST(QueueExplorer, DefaultBudgetFindsNothingInTheRealQueue) {
  for (auto kind : {workloads::WorkloadKind::queue, workloads::WorkloadKind::queue_weak}) {
    explore::ExploreOptions o;  // mixed random/PCT, seeds 1.., 2000 runs
    if (workloads::is_weak_workload(kind))
      o.run.memory_model = explore::MemoryModel::release_acquire;
    heaplab::rw_test::expect_explorer_finds_nothing(workloads::workload_factory(kind), o);
  }
}

TEST(QueueExplorer, BoundedExhaustiveSearchFindsNothingOnSmallWorkloads) {
  // Two threads on a ring of 2 slots: both ask for the one page (one gets null), or both take
  // and free so that the tickets wrap the ring; every schedule with <= 2 preemptions.
  using K = workloads::RwOp::Kind;
  workloads::QueueWorkload one_page;
  one_page.num_pages            = 1;
  one_page.capacity             = 2;
  one_page.threads              = {{{K::get}, {K::free_own}}, {{K::get}, {K::give}}};
  workloads::QueueWorkload laps = one_page;
  laps.num_pages                = 2;
  laps.threads = {{{K::get}, {K::free_own}, {K::get}}, {{K::get}, {K::take_and_free}}};
  for (workloads::QueueWorkload const& w : {one_page, laps}) {
    for (auto model :
         {explore::MemoryModel::sequential_consistency, explore::MemoryModel::release_acquire}) {
      workloads::QueueWorkload observed = w;
      observed.observed_pages           = model == explore::MemoryModel::release_acquire;
      explore::ExploreOptions o;
      o.strategy         = explore::StrategyKind::exhaustive;
      o.max_runs         = 20000;
      o.run.memory_model = model;
      auto const factory = [observed](std::uint64_t) {
        return workloads::make_queue_program(observed);
      };
      explore::ExploreReport const r = explore::explore(factory, o);
      EXPECT_FALSE(r.failure.has_value()) << r.failure_report;
      EXPECT_TRUE(r.exhausted);
      std::printf("T=%u C=%u %s: %llu schedules%s\n",
                  w.num_pages,
                  w.capacity,
                  explore::to_string(model),
                  static_cast<unsigned long long>(r.runs),
                  r.exhausted ? " (bounded space exhausted)" : " (cut short)");
    }
  }
}

}  // namespace
