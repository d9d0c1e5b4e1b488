// The explorer's weak-memory mode (explore::MemoryModel::release_acquire, docs/explorer.md "Weak
// memory") on litmus programs written with ObservedAtomics: each outcome the C++
// release/acquire model forbids is never produced (searched by many seeds and exhaustively with a
// stale-read bound), and each outcome it allows is produced by some seed, which is how every
// "never" test here can fail: the same check, on the variant with one order weakened, fires.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/explore/controlled_run.hpp"
#include "heaplab/explore/explore.hpp"
#include "heaplab/explore/memory_model.hpp"

namespace core    = heaplab::core;
namespace explore = heaplab::explore;
using A           = core::ObservedAtomics;
using core::MemoryOrder;

namespace {

/// Shared words and the registers the threads load into; inspected after the run.
struct Cells {
  std::uint64_t x = 0, y = 0, data = 0, flag = 0;
  std::uint64_t r[6] = {};
};

/// "" when the outcome is allowed; also gets the run's trace.
using Forbidden = std::function<std::string(Cells const&, std::vector<explore::Event> const&)>;

explore::Program litmus(std::vector<std::function<void(Cells&)>> bodies, Forbidden forbidden) {
  auto c = std::make_shared<Cells>();
  explore::Program p;
  for (auto& body : bodies) p.threads.push_back([c, body] { body(*c); });
  p.check = [c, forbidden](std::vector<explore::Event> const& events) {
    std::string const what = forbidden(*c, events);
    return what.empty() ? std::vector<std::string>{} : std::vector<std::string>{what};
  };
  p.describe_address = [c](void const* a) -> std::string {
    if (a == &c->x) return "x";
    if (a == &c->y) return "y";
    if (a == &c->data) return "data";
    if (a == &c->flag) return "flag";
    return {};
  };
  return p;
}

explore::ExploreOptions weak(explore::StrategyKind kind, std::uint64_t runs) {
  explore::ExploreOptions o;
  o.strategy         = kind;
  o.max_runs         = runs;
  o.run.memory_model = explore::MemoryModel::release_acquire;
  return o;
}

/// Searches with 2000 mixed seeds and exhaustively (preemption bound 2, stale-read bound 2).
/// Returns the first report that found the outcome (or the last one).
explore::ExploreReport search(std::function<explore::Program()> const& make,
                              explore::MemoryModel model = explore::MemoryModel::release_acquire) {
  auto const factory             = [make](std::uint64_t) { return make(); };
  explore::ExploreOptions seeded = weak(explore::StrategyKind::mixed, 2000);
  seeded.run.memory_model        = model;
  auto report                    = explore::explore(factory, seeded);
  if (report.failure) return report;
  explore::ExploreOptions exhaustive = weak(explore::StrategyKind::exhaustive, 200'000);
  exhaustive.run.memory_model        = model;
  exhaustive.stale_read_bound        = 2;
  auto ex                            = explore::explore(factory, exhaustive);
  EXPECT_TRUE(ex.failure || ex.exhausted);
  return ex;
}

// Message passing: data = 1; flag = 1 (store_order) || r0 = flag (load_order); r1 = data.
explore::Program message_passing(MemoryOrder store_order, MemoryOrder load_order) {
  return litmus({[store_order](Cells& c) {
                   A::store(&c.data, std::uint64_t{1}, MemoryOrder::relaxed);
                   A::store(&c.flag, std::uint64_t{1}, store_order);
                 },
                 [load_order](Cells& c) {
                   c.r[0] = A::load(&c.flag, load_order);
                   c.r[1] = A::load(&c.data, MemoryOrder::relaxed);
                 }},
                [](Cells const& c, auto const&) {
                  return c.r[0] == 1 && c.r[1] == 0 ? "MP: flag read 1 but data read 0" : "";
                });
}

// Store buffering: x = 1; r0 = y || y = 1; r1 = x.
explore::Program store_buffering(MemoryOrder order) {
  return litmus(
      {[order](Cells& c) {
         A::store(&c.x, std::uint64_t{1}, order);
         c.r[0] = A::load(&c.y, order == MemoryOrder::seq_cst ? order : MemoryOrder::relaxed);
       },
       [order](Cells& c) {
         A::store(&c.y, std::uint64_t{1}, order);
         c.r[1] = A::load(&c.x, order == MemoryOrder::seq_cst ? order : MemoryOrder::relaxed);
       }},
      [](Cells const& c, auto const&) {
        return c.r[0] == 0 && c.r[1] == 0 ? "SB: both loads read 0" : "";
      });
}

// Release sequence: data = 1; flag = 1 (release) || flag += 1 (relaxed RMW), or flag = 2 (a
// relaxed store, which ends the release sequence) || r0 = flag (acquire); r1 = data.
explore::Program release_sequence(bool middle_is_rmw) {
  return litmus({[](Cells& c) {
                   A::store(&c.data, std::uint64_t{1}, MemoryOrder::relaxed);
                   A::store(&c.flag, std::uint64_t{1}, MemoryOrder::release);
                 },
                 [middle_is_rmw](Cells& c) {
                   if (middle_is_rmw)
                     c.r[2] = A::fetch_add(&c.flag, std::uint64_t{1}, MemoryOrder::relaxed);
                   else if (A::load(&c.flag, MemoryOrder::relaxed) == 1)
                     A::store(&c.flag, std::uint64_t{2}, MemoryOrder::relaxed);
                 },
                 [](Cells& c) {
                   c.r[0] = A::load(&c.flag, MemoryOrder::acquire);
                   c.r[1] = A::load(&c.data, MemoryOrder::relaxed);
                 }},
                [middle_is_rmw](Cells const& c, auto const&) {
                  // flag == 2 was written after flag == 1 (the RMW read 1, or the store's load
                  // read 1), so the acquire load of 2 must see data == 1 iff 2 continues the
                  // release sequence headed by flag = 1.
                  bool const after_head = middle_is_rmw ? c.r[2] == 1 : true;
                  return after_head && c.r[0] == 2 && c.r[1] == 0
                             ? "release sequence: flag read 2 but data read 0"
                             : "";
                });
}

}  // namespace

TEST(WeakMemory, ModelNamesRoundTrip) {
  for (auto m :
       {explore::MemoryModel::sequential_consistency, explore::MemoryModel::release_acquire})
    EXPECT_EQ(explore::memory_model_from_string(explore::to_string(m)), m);
  EXPECT_EQ(explore::memory_model_from_string("ra"), explore::MemoryModel::release_acquire);
  EXPECT_EQ(explore::memory_model_from_string("sc"), explore::MemoryModel::sequential_consistency);
  EXPECT_THROW((void)explore::memory_model_from_string("tso"), std::invalid_argument);
}

TEST(WeakMemory, MessagePassingWithReleaseAcquireNeverReadsStaleData) {
  auto const r = search([] { return message_passing(MemoryOrder::release, MemoryOrder::acquire); });
  EXPECT_FALSE(r.failure.has_value()) << r.failure_report;
  EXPECT_TRUE(r.exhausted);
  std::printf("MP release/acquire: exhaustive (stale-read bound 2) %llu schedules, no stale data\n",
              static_cast<unsigned long long>(r.runs));
}

TEST(WeakMemory, MessagePassingWithARelaxedSideReadsStaleData) {
  for (auto [store, load] : {std::pair{MemoryOrder::relaxed, MemoryOrder::acquire},
                             std::pair{MemoryOrder::release, MemoryOrder::relaxed}}) {
    auto const make = [store = store, load = load] { return message_passing(store, load); };
    auto const r    = search(make);
    ASSERT_TRUE(r.failure.has_value())
        << "store " << core::to_string(store) << ", load " << core::to_string(load);
    EXPECT_NE(r.failure_report.find("MP: flag read 1 but data read 0"), std::string::npos);
    EXPECT_NE(r.failure_report.find("(stale: 1 newer store)"), std::string::npos)
        << r.failure_report;
    // The sequentially consistent machine never shows it.
    EXPECT_FALSE(search(make, explore::MemoryModel::sequential_consistency).failure.has_value());
  }
}

TEST(WeakMemory, StoreBufferingWithRelaxedShowsBothZeroButSeqCstDoesNot) {
  auto const relaxed = search([] { return store_buffering(MemoryOrder::relaxed); });
  ASSERT_TRUE(relaxed.failure.has_value());
  EXPECT_NE(relaxed.failure_report.find("SB: both loads read 0"), std::string::npos);
  EXPECT_FALSE(search([] { return store_buffering(MemoryOrder::relaxed); },
                      explore::MemoryModel::sequential_consistency)
                   .failure.has_value());
  // seq_cst loads read the latest store (docs/explorer.md): SB's both-zero is impossible.
  auto const sc = search([] { return store_buffering(MemoryOrder::seq_cst); });
  EXPECT_FALSE(sc.failure.has_value()) << sc.failure_report;
}

TEST(WeakMemory, ReadModifyWritesNeverLoseAnUpdate) {
  // Each thread first loads x (possibly stale), then increments it twice with relaxed RMWs; the
  // RMWs read the latest value, so they return 0..3 exactly once each and x ends at 4.
  auto const make = [] {
    explore::Program p =
        litmus({[](Cells& c) {
                  c.r[4] = A::load(&c.x, MemoryOrder::relaxed);
                  c.r[0] = A::fetch_add(&c.x, std::uint64_t{1}, MemoryOrder::relaxed);
                  c.r[1] = A::fetch_add(&c.x, std::uint64_t{1}, MemoryOrder::relaxed);
                },
                [](Cells& c) {
                  c.r[5] = A::load(&c.x, MemoryOrder::relaxed);
                  c.r[2] = A::fetch_add(&c.x, std::uint64_t{1}, MemoryOrder::relaxed);
                  c.r[3] = A::fetch_add(&c.x, std::uint64_t{1}, MemoryOrder::relaxed);
                }},
               [](Cells const& c, auto const&) -> std::string {
                 std::uint64_t seen = 0;
                 for (int i = 0; i < 4; ++i) seen |= std::uint64_t{1} << c.r[i];
                 if (c.x != 4 || seen != 0xF) return "RMW atomicity: an update was lost";
                 return "";
               });
    return p;
  };
  auto const r = search(make);
  EXPECT_FALSE(r.failure.has_value()) << r.failure_report;
  // The check has teeth: a load + store increment (not an RMW) loses updates in this model.
  auto const lossy = search([] {
    auto inc = [](Cells& c) {
      std::uint64_t const v = A::load(&c.x, MemoryOrder::relaxed);
      A::store(&c.x, v + 1, MemoryOrder::relaxed);
    };
    return litmus({inc, inc}, [](Cells const& c, auto const&) -> std::string {
      return c.x != 2 ? "lost update: x == " + std::to_string(c.x) : "";
    });
  });
  EXPECT_TRUE(lossy.failure.has_value());
}

TEST(WeakMemory, CoherenceNeverReadsOlderAfterNewer) {
  // T0 stores 1, 2, 3 to x; T1 stores 10 to y, then loads x four times and y once. Per location
  // a thread's reads never go back in modification order (the values of x are increasing), and
  // it reads its own store or a newer one (y == 10: nobody else writes y).
  auto const make = [](bool check_coherence) {
    return litmus({[](Cells& c) {
                     for (std::uint64_t v = 1; v <= 3; ++v) A::store(&c.x, v, MemoryOrder::relaxed);
                   },
                   [](Cells& c) {
                     A::store(&c.y, std::uint64_t{10}, MemoryOrder::relaxed);
                     for (int i = 0; i < 4; ++i) c.r[i] = A::load(&c.x, MemoryOrder::relaxed);
                     c.r[4] = A::load(&c.y, MemoryOrder::relaxed);
                   }},
                  [check_coherence](Cells const& c,
                                    std::vector<explore::Event> const& events) -> std::string {
                    if (check_coherence) {
                      for (int i = 0; i + 1 < 4; ++i)
                        if (c.r[i + 1] < c.r[i])
                          return "coherence: x read " + std::to_string(c.r[i]) + " then " +
                                 std::to_string(c.r[i + 1]);
                      if (c.r[4] != 10) return "coherence: T1 did not read its own store to y";
                      return "";
                    }
                    // The coherence check above is not vacuous: loads of x do read older stores.
                    for (auto const& e : events)
                      if (e.op == core::AtomicOp::load && e.address == &c.x && e.stale > 0)
                        return "x read " + std::to_string(e.stale) + " store(s) behind the latest";
                    return "";
                  });
  };
  auto const r = search([&] { return make(true); });
  EXPECT_FALSE(r.failure.has_value()) << r.failure_report;
  EXPECT_TRUE(search([&] { return make(false); }).failure.has_value());
}

TEST(WeakMemory, ReleaseSequenceContinuesThroughAnRmw) {
  auto const through_rmw = search([] { return release_sequence(true); });
  EXPECT_FALSE(through_rmw.failure.has_value()) << through_rmw.failure_report;
  auto const broken = search([] { return release_sequence(false); });
  ASSERT_TRUE(broken.failure.has_value());
  EXPECT_NE(broken.failure_report.find("release sequence: flag read 2 but data read 0"),
            std::string::npos);
}

TEST(WeakMemory, SpinWaitOnAFlagNeverReportsAFalseDeadlock) {
  // The waiter may read the stale 0 after the flag was set; backing off shows it the latest
  // store, so it is never left waiting for a change that already happened.
  auto const make = [] {
    return litmus(
        {[](Cells& c) {
           while (A::load(&c.flag, MemoryOrder::acquire) == 0)
             A::backoff(core::Backoff::until_memory_changes);
           c.r[0] = A::load(&c.data, MemoryOrder::relaxed);
         },
         [](Cells& c) {
           A::store(&c.data, std::uint64_t{7}, MemoryOrder::relaxed);
           A::store(&c.flag, std::uint64_t{1}, MemoryOrder::release);
         }},
        [](Cells const& c, auto const&) { return c.r[0] != 7 ? "waiter read stale data" : ""; });
  };
  auto const r = search(make);
  EXPECT_FALSE(r.failure.has_value()) << r.failure_report;
}

TEST(WeakMemory, SameSeedSameTraceAndStaleReadsAreShown) {
  explore::ExploreOptions o = weak(explore::StrategyKind::random, 2000);
  auto const factory        = [](std::uint64_t) {
    return message_passing(MemoryOrder::relaxed, MemoryOrder::relaxed);
  };
  auto const r = explore::explore(factory, o);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_NE(r.failure_report.find("memory:   release_acquire"), std::string::npos);
  EXPECT_NE(r.failure_report.find("--memory-model release_acquire"), std::string::npos);
  for (int i = 0; i < 2; ++i) {
    auto const again = explore::replay(factory, o.strategy, r.failing_seed, o);
    EXPECT_EQ(again.outcome, r.failure->outcome);
    EXPECT_EQ(again.trace_text, r.failure->trace_text);
    EXPECT_EQ(again.stale_reads, r.failure->stale_reads);
  }
  // Replayed under the sequentially consistent model the same seed passes.
  explore::ExploreOptions sc = o;
  sc.run.memory_model        = explore::MemoryModel::sequential_consistency;
  EXPECT_TRUE(explore::replay(factory, o.strategy, r.failing_seed, sc).passed());
}

TEST(WeakMemory, ExhaustiveFailureReplaysFromItsSchedule) {
  explore::ExploreOptions o = weak(explore::StrategyKind::exhaustive, 100'000);
  auto const factory        = [](std::uint64_t) {
    return message_passing(MemoryOrder::release, MemoryOrder::relaxed);
  };
  auto const r = explore::explore(factory, o);
  ASSERT_TRUE(r.failure.has_value());
  std::string const text = explore::format_schedule(r.failing_schedule);
  EXPECT_NE(text.find("r1*1"), std::string::npos) << text;
  EXPECT_EQ(explore::parse_schedule(text), r.failing_schedule);
  auto const again = explore::replay_schedule(factory, explore::parse_schedule(text), o);
  EXPECT_EQ(again.outcome, explore::Outcome::check_failed);
  EXPECT_EQ(again.trace_text, r.failure->trace_text);
  // Stale-read bound 0: the search is the sequentially consistent one and finds nothing.
  o.stale_read_bound = 0;
  auto const none    = explore::explore(factory, o);
  EXPECT_FALSE(none.failure.has_value());
  EXPECT_TRUE(none.exhausted);
}
