// Host logic of CompactGpu (g++, label cpu): the pass decision and geometry, Alg. 1's destination
// of every object against the model's plan, the variants' caps and the capped pass bound, the
// sec. 3.7 policies, the call plan's validation, the type reflection of the pointer scan, and the
// pass loop itself with a scripted driver. docs/compaction.md.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compact_test_types.hpp"
#include "heaplab/check/defrag_obligations.hpp"
#include "heaplab/compact/detail/call_plan.hpp"
#include "heaplab/compact/detail/engine.hpp"
#include "heaplab/compact/detail/reflection.hpp"
#include "heaplab/compact/options.hpp"
#include "heaplab/compact/pass_plan.hpp"
#include "heaplab/compact/policy.hpp"
#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/model/heap_model.hpp"
#include "heaplab/soa/host_config.hpp"

namespace compact = heaplab::compact;
namespace core    = heaplab::core;
namespace model   = heaplab::model;
using compact::DefragStop;

// ------------------------------------------------------------------------- pass decision

TEST(CompactPassPlan, StopsAtK1BeforeLookingAtB) {
  compact::PassDecision const d = compact::decide_pass(16, 1, 16, core::kUnlimitedSources);
  EXPECT_FALSE(d.run);
  EXPECT_EQ(d.stop, DefragStop::k1_reached);
  EXPECT_EQ(d.sources_allowed, 8u);
}

TEST(CompactPassPlan, FewerThanNPlusOneCandidatesCannotMakeProgress) {
  compact::PassDecision const d = compact::decide_pass(3, 3, 0, core::kUnlimitedSources);
  EXPECT_FALSE(d.run);
  EXPECT_EQ(d.stop, DefragStop::no_progress);
  EXPECT_EQ(d.sources_allowed, 0u);
}

TEST(CompactPassPlan, SourcesAreTheFloorCappedByTheVariant) {
  compact::PassDecision const d = compact::decide_pass(1000, 3, 0, core::kUnlimitedSources);
  EXPECT_TRUE(d.run);
  EXPECT_EQ(d.sources_allowed, 250u);
  EXPECT_EQ(d.sources, 250u);
  compact::PassDecision const capped = compact::decide_pass(1000, 3, 0, 7);
  EXPECT_EQ(capped.sources_allowed, 250u);
  EXPECT_EQ(capped.sources, 7u);
}

TEST(CompactPassPlan, TargetsAreStridedByTheSourcesOfThePass) {
  // Fig. 5 (n = 2, B = 2): source R[1] has targets R[3] and R[5].
  EXPECT_EQ(compact::pass_block_index(1, 0, 2), 1u);
  EXPECT_EQ(compact::pass_block_index(1, 1, 2), 3u);
  EXPECT_EQ(compact::pass_block_index(1, 2, 2), 5u);
  // With B' = 3 sources, target 2 of source 0 is R[6].
  EXPECT_EQ(compact::pass_block_index(0, 2, 3), 6u);
}

TEST(CompactPassPlan, Figure6FillsTheFirstTargetThenTheSecond) {
  // Fig. 6 (n = 3, capacity 32): 18 objects; the first target has 12 free slots, the second 8.
  std::uint64_t const pad        = ~core::low_bits(32);
  std::uint64_t const targets[4] = {0, pad | core::low_bits(20), pad | core::low_bits(24), pad};
  auto const bitmap              = [&](std::uint32_t i) { return targets[i]; };
  for (std::uint32_t j = 0; j < 18; ++j) {
    compact::Destination const d = compact::destination_of(j, 3, bitmap);
    if (j < 12) {
      EXPECT_EQ(d.target, 1u);
      EXPECT_EQ(d.slot, 20 + j);
    } else {
      EXPECT_EQ(d.target, 2u);
      EXPECT_EQ(d.slot, 24 + (j - 12));
    }
  }
  EXPECT_EQ(compact::destination_of(12 + 8 + 32, 3, bitmap).target, 0u) << "beyond every free slot";
  EXPECT_EQ(compact::received_slots(targets[1], 12), core::low_bits(32) & ~core::low_bits(20));
  EXPECT_EQ(compact::received_slots(targets[2], 6), core::low_bits(30) & ~core::low_bits(24));
  EXPECT_EQ(compact::received_slots(targets[3], 0), 0u);
}

namespace {

core::HeapConfig one_type(std::uint32_t size, std::uint32_t blocks, std::uint32_t n) {
  core::HeapConfig c;
  c.types.push_back({"T", size, std::nullopt, false, {}});
  c.num_blocks    = blocks;
  c.defrag_factor = n;
  return c;
}

}  // namespace

TEST(CompactPassPlan, DestinationOfEveryObjectIsTheModelsMove) {
  // Random heaps of one type (capacity 64, 40 or 21): the GPU's Alg. 1 arithmetic on the
  // targets' allocation bitmaps must put the j-th object exactly where the model's plan does.
  std::mt19937_64 rng(4242);
  for (std::uint32_t size : {8u, 13u, 24u}) {
    for (std::uint32_t n : {1u, 2u, 3u, 5u, 7u}) {
      for (int round = 0; round < 8; ++round) {
        core::HeapConfig const config = one_type(size, 48, n);
        std::uint32_t const cap       = config.capacity(0);
        model::HeapModel m(config);
        std::vector<model::ObservedAllocation> placed;
        std::uint64_t id = 1;
        for (std::uint32_t b = 0; b < 48; ++b) {
          std::uint32_t const fill = std::uniform_int_distribution<std::uint32_t>(1, cap)(rng);
          std::vector<std::uint32_t> slots(cap);
          for (std::uint32_t s = 0; s < cap; ++s) slots[s] = s;
          std::shuffle(slots.begin(), slots.end(), rng);
          for (std::uint32_t k = 0; k < fill; ++k) placed.push_back({id++, 0, b, slots[k], {}});
        }
        ASSERT_FALSE(m.accept_allocations(placed).has_value());
        std::uint32_t const cap_sources  = round % 2 == 0 ? core::kUnlimitedSources : 1 + round;
        model::DefragPassPlan const plan = m.plan_defrag_pass(0, n, cap_sources);
        auto const bitmap_of             = [&](std::uint32_t b) {
          std::uint64_t bits = ~core::low_bits(cap);
          for (std::uint32_t s = 0; s < cap; ++s)
            if (m.block(b).slots[s]) bits |= std::uint64_t{1} << s;
          return bits;
        };
        for (std::uint32_t s = 0; s < plan.B; ++s) {
          auto const& a = plan.sources[s];
          EXPECT_EQ(a.source, plan.R[compact::pass_block_index(s, 0, plan.B)]);
          for (std::uint32_t j = 0; j < a.moves.size(); ++j) {
            compact::Destination const d = compact::destination_of(j, n, [&](std::uint32_t i) {
              return bitmap_of(plan.R[compact::pass_block_index(s, i, plan.B)]);
            });
            ASSERT_NE(d.target, 0u);
            EXPECT_EQ(plan.R[compact::pass_block_index(s, d.target, plan.B)], a.moves[j].to.block);
            EXPECT_EQ(d.slot, a.moves[j].to.slot);
          }
        }
      }
    }
  }
}

// ------------------------------------------------------------------------------- caps

TEST(CompactCaps, TheRecordBudgetIs48KiBAsInThePaper) {
  EXPECT_EQ(core::kDefragRecordBudgetBytes, 49152u);
  EXPECT_EQ(core::recompute_global_sources_per_pass(), 12288u);  // sec. 3.8: 12288 records
  EXPECT_EQ(core::recompute_shared_sources_per_pass(1), 2048u);  // sec. 3.8: 2048 for n = 1
  EXPECT_EQ(core::recompute_shared_sources_per_pass(3), 1024u);
  EXPECT_EQ(core::recompute_shared_sources_per_pass(7), 512u);
  EXPECT_EQ(core::sources_per_pass(core::RewriteVariant::forwarding, 5), core::kUnlimitedSources);
  EXPECT_EQ(core::sources_per_pass(core::RewriteVariant::recompute_global, 5), 12288u);
  EXPECT_EQ(core::sources_per_pass(core::RewriteVariant::recompute_shared, 5), 682u);
  for (std::uint32_t n = 1; n < 64; ++n)  // whole records of a full pass fit into 48 KiB
    EXPECT_LE(12u * (n + 1) * core::recompute_shared_sources_per_pass(n), 49152u) << n;
}

TEST(CompactCaps, TheCappedPassBoundIsThePapersRecurrenceWithoutACap) {
  for (std::uint32_t d = 0; d < 300; d += 7)
    for (std::uint32_t n : {1u, 2u, 3u, 5u, 7u})
      for (std::uint32_t k1 : {0u, 1u, 16u})
        EXPECT_EQ(core::worst_case_passes_with_cap(d, n, k1, core::kUnlimitedSources),
                  heaplab::check::worst_case_passes(d, n, k1));
  // d = 10, n = 1, cap 2: 10 -> 8 -> 6 -> 4 -> 2 -> 1 (B = 1) -> stop at r = 1: 5 passes.
  EXPECT_EQ(core::worst_case_passes_with_cap(10, 1, 0, 2), 5u);
  // cap 1 removes one candidate per pass: d - max(k1, n) passes.
  EXPECT_EQ(core::worst_case_passes_with_cap(20, 3, 5, 1), 15u);
}

// ---------------------------------------------------------------------------- policies

TEST(CompactPolicy, EveryMTriggersOnMultiplesOfM) {
  compact::PolicyClock clock(compact::DefragPolicy::every(4));
  std::vector<std::uint64_t> fired;
  for (int i = 0; i < 12; ++i)
    if (clock.end_iteration(1, 100, [] { return std::uint64_t{0}; }))
      fired.push_back(clock.iterations());
  EXPECT_EQ(fired, (std::vector<std::uint64_t>{4, 8, 12}));
}

TEST(CompactPolicy, EveryMNeverCountsCandidates) {
  compact::PolicyClock clock(compact::DefragPolicy::every(1));
  bool counted = false;
  EXPECT_TRUE(clock.end_iteration(1, 10, [&] {
    counted = true;
    return std::uint64_t{0};
  }));
  EXPECT_FALSE(counted);
}

TEST(CompactPolicy, MassiveDeallocationScalesK2ByNOverNPlusOne) {
  auto const p = compact::DefragPolicy::after_massive_deallocation(1000);
  EXPECT_EQ(p.candidate_threshold(1, 1), 500u);
  EXPECT_EQ(p.candidate_threshold(2, 1), 667u);  // ceil(2000 / 3)
  EXPECT_EQ(p.candidate_threshold(3, 1), 750u);
  EXPECT_FALSE(p.triggers_on_candidates(499, 1, 1));
  EXPECT_TRUE(p.triggers_on_candidates(500, 1, 1));
  compact::PolicyClock clock(p);
  EXPECT_FALSE(clock.end_iteration(2, 1, [] { return std::uint64_t{666}; }));
  EXPECT_TRUE(clock.end_iteration(2, 1, [] { return std::uint64_t{667}; }));
}

TEST(CompactPolicy, AFractionOfTheHeapCountsBlocks) {
  auto const p = compact::DefragPolicy::after_massive_deallocation_fraction(0.05);
  EXPECT_EQ(p.k2(10000), 500u);
  EXPECT_EQ(p.k2(10), 1u);  // ceil(0.5)
  EXPECT_EQ(p.candidate_threshold(1, 10000), 250u);
  EXPECT_EQ(p.candidate_threshold(1, 1), 1u);  // never below one candidate
}

TEST(CompactPolicy, RejectsMeaninglessParameters) {
  EXPECT_THROW(compact::DefragPolicy::every(0), core::precondition_error);
  EXPECT_THROW(compact::DefragPolicy::after_massive_deallocation(0), core::precondition_error);
  EXPECT_THROW(compact::DefragPolicy::after_massive_deallocation_fraction(0.0),
               core::precondition_error);
  EXPECT_THROW(compact::DefragPolicy::after_massive_deallocation_fraction(1.5),
               core::precondition_error);
}

// --------------------------------------------------------------------------- call plan

TEST(CompactCallPlan, ValidatesTheRequest) {
  using compact_test::Types;
  core::HeapConfig const config = heaplab::soa::heap_config<Types>(64, 2, 5);
  auto const message = [&](std::uint32_t type, compact::DefragOptions const& o) -> std::string {
    try {
      (void)compact::detail::make_call_plan<Types>(config, type, o);
    } catch (core::precondition_error const& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(message(Types::num_types, {}).find("is not a type of the heap"), std::string::npos);
  EXPECT_NE(message(compact_test::kTracked, {}).find("is abstract"), std::string::npos);
  compact::DefragOptions o;
  o.n = 14;
  EXPECT_NE(message(compact_test::kFat, o).find("1 <= n < 14"), std::string::npos);
  o.n = 0;
  EXPECT_NE(message(compact_test::kLeaf, o).find("1 <= n < 64"), std::string::npos);
  compact::DefragOptions cap0;
  cap0.source_cap = 0;
  EXPECT_NE(message(compact_test::kLeaf, cap0).find("source cap"), std::string::npos);
}

TEST(CompactCallPlan, DefaultsComeFromTheHeapAndCapsCombine) {
  using compact_test::Types;
  core::HeapConfig const config = heaplab::soa::heap_config<Types>(64, 2, 5);
  compact::detail::CallPlan p =
      compact::detail::make_call_plan<Types>(config, compact_test::kNode, {});
  EXPECT_EQ(p.n, 2u);
  EXPECT_EQ(p.defrag_factor, 2u);
  EXPECT_EQ(p.k1, 5u);
  EXPECT_EQ(p.source_cap, core::kUnlimitedSources);
  EXPECT_EQ(p.capacity, 25u);
  EXPECT_EQ(p.object_bytes, 57u);
  compact::DefragOptions o;
  o.n       = 3;
  o.k1      = 0;
  o.variant = core::RewriteVariant::recompute_shared;
  p         = compact::detail::make_call_plan<Types>(config, compact_test::kLeaf, o);
  EXPECT_EQ(p.n, 3u);
  EXPECT_EQ(p.defrag_factor, 2u);
  EXPECT_EQ(p.source_cap, 1024u);
  o.source_cap = 3;
  EXPECT_EQ(compact::detail::make_call_plan<Types>(config, compact_test::kLeaf, o).source_cap, 3u);
  o.source_cap = 5000;  // a forced cap above the variant's does not raise it
  EXPECT_EQ(compact::detail::make_call_plan<Types>(config, compact_test::kLeaf, o).source_cap,
            1024u);
  o.source_cap          = std::nullopt;
  o.record_budget_bytes = core::kHopperRecordBudgetBytes;  // 232448 / (12 * 4) = 4842
  EXPECT_EQ(compact::detail::make_call_plan<Types>(config, compact_test::kLeaf, o).source_cap,
            4842u);
  o.record_budget_bytes = 47;  // < 48 bytes: no record of n = 3 fits
  EXPECT_THROW((void)compact::detail::make_call_plan<Types>(config, compact_test::kLeaf, o),
               core::precondition_error);
}

// --------------------------------------------------------------------------- reflection

TEST(CompactReflection, ScansExactlyTheArraysThatMayPointToT) {
  using namespace compact_test;
  constexpr auto table = Types::layout_table();
  auto const summary   = [&](std::uint32_t t) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> out;  // (holder, arrays)
    for (auto const& h : compact::detail::holder_arrays(table, t)) {
      EXPECT_EQ(h.capacity, table.types[h.holder].capacity);
      for (std::uint32_t i = h.first; i < h.first + h.count; ++i)
        EXPECT_EQ(table.incoming[i].type, h.holder);
      out.emplace_back(h.holder, h.count);
    }
    return out;
  };
  using V = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  // Leaf: Node.kids_[0..2]; Fat inherits them and adds any_ (Tracked*); Holder.leaf_.
  EXPECT_EQ(summary(kLeaf), (V{{kNode, 3}, {kFat, 4}, {kHolder, 1}}));
  // Node and Fat: Node.next_ (inherited by Fat), Fat.any_, Holder.nodes_[0..1].
  EXPECT_EQ(summary(kNode), (V{{kNode, 1}, {kFat, 2}, {kHolder, 2}}));
  EXPECT_EQ(summary(kFat), (V{{kNode, 1}, {kFat, 2}, {kHolder, 2}}));
  // Holder: only Fat.any_ (Tracked*) may point to one.
  EXPECT_EQ(summary(kHolder), (V{{kFat, 1}}));
  EXPECT_TRUE(summary(kTracked).empty());  // abstract: never moved
}

// ----------------------------------------------------------------------------- pass loop

namespace {

/// Candidate counts are scripted; records what the loop asked for. Device = true: a pass driver
/// with a device-side loop (enabled), whose end_call reports `loop`.
template <bool Device>
struct ScriptedPassDriver {
  static constexpr bool has_device_loop = Device;
  std::vector<std::uint32_t> r;  // scan results in order
  std::size_t scans = 0;
  std::vector<std::string> calls;
  compact::detail::CallPlan plan{};
  compact::detail::LoopReport loop;

  [[nodiscard]] bool device_loop() const { return true; }
  double prepare_device_loop(compact::detail::CallPlan const&) {
    calls.push_back("prepare");
    return 0.125;
  }
  void launch_passes() { calls.push_back("launch"); }
  void begin_call(compact::detail::CallPlan const& p) {
    plan = p;
    calls.push_back("begin");
  }
  compact::detail::ScanResult scan() {
    calls.push_back("scan");
    return {r.at(scans++), 0.5};
  }
  void copy(compact::PassDecision const& d) {
    calls.push_back("copy " + std::to_string(d.sources));
  }
  void update_block_states(compact::PassDecision const&) { calls.push_back("states"); }
  void rewrite() { calls.push_back("rewrite"); }
  compact::detail::PassReport end_pass() {
    calls.push_back("end_pass");
    compact::detail::PassReport p;
    p.objects_moved = 10;
    p.copy_ms       = 1;
    p.state_ms      = 0.25;
    return p;
  }
  compact::detail::CallReport end_call() {
    calls.push_back("end_call");
    compact::detail::CallReport c;
    c.pointers_rewritten = 9;
    c.rewrite_ms         = 2;
    c.total_ms           = 9.0;
    c.loop               = loop;
    return c;
  }
};

}  // namespace

TEST(CompactEngine, RunsPassesInOrderUntilAtMostK1CandidatesRemainThenRewritesOnce) {
  ScriptedPassDriver<false> b;
  b.r = {100, 60, 20, 9};
  compact::detail::CallPlan plan;
  plan.n            = 3;
  plan.k1           = 10;
  plan.object_bytes = 32;
  std::vector<std::uint32_t> observed;
  compact::DefragStats const s = compact::detail::run_defragmentation(
      b, plan, [&](compact::PassStats const& p) { observed.push_back(p.index); });
  EXPECT_EQ(b.calls,
            (std::vector<std::string>{"begin",
                                      "scan",
                                      "copy 25",
                                      "states",
                                      "end_pass",
                                      "scan",
                                      "copy 15",
                                      "states",
                                      "end_pass",
                                      "scan",
                                      "copy 5",
                                      "states",
                                      "end_pass",
                                      "scan",
                                      "rewrite",
                                      "end_call"}));
  EXPECT_EQ(observed, (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(s.stop, DefragStop::k1_reached);
  EXPECT_EQ(s.pass_loop, compact::PassLoop::host);
  EXPECT_EQ(s.candidates_before, 100u);
  EXPECT_EQ(s.candidates_after, 9u);
  EXPECT_EQ(s.objects_moved, 30u);
  EXPECT_EQ(s.object_bytes_moved, 960u);
  EXPECT_EQ(s.forwarding_bytes, 240u);
  EXPECT_EQ(s.pointers_rewritten, 9u);
  EXPECT_DOUBLE_EQ(s.times.scan_ms, 2.0);  // four scans
  EXPECT_DOUBLE_EQ(s.times.state_ms, 0.75);
  EXPECT_DOUBLE_EQ(s.times.rewrite_ms, 2.0);  // one rewrite
  EXPECT_DOUBLE_EQ(s.total_ms, 9.0);
  ASSERT_EQ(s.passes.size(), 3u);
  EXPECT_EQ(s.passes[1].candidates, 60u);
  EXPECT_EQ(s.passes[1].sources_allowed, 15u);
}

TEST(CompactEngine, WithoutAnObserverTheDeviceLoopRunsThePassesAndReportsThem) {
  ScriptedPassDriver<true> b;
  compact::PassStats p;
  p.candidates             = 100;
  p.sources_allowed        = 25;
  p.sources                = 25;
  p.objects_moved          = 7;
  b.loop.passes            = {p, p};
  b.loop.stop              = DefragStop::no_progress;
  b.loop.candidates_before = 100;
  b.loop.candidates_after  = 3;
  compact::detail::CallPlan plan;
  plan.n                       = 3;
  plan.object_bytes            = 16;
  compact::DefragStats const s = compact::detail::run_defragmentation(b, plan, {});
  EXPECT_EQ(b.calls,
            (std::vector<std::string>{"prepare", "begin", "launch", "rewrite", "end_call"}));
  EXPECT_EQ(s.pass_loop, compact::PassLoop::device);
  EXPECT_EQ(s.passes.size(), 2u);
  EXPECT_EQ(s.objects_moved, 14u);
  EXPECT_EQ(s.object_bytes_moved, 224u);
  EXPECT_EQ(s.stop, DefragStop::no_progress);
  EXPECT_EQ(s.candidates_before, 100u);
  EXPECT_EQ(s.candidates_after, 3u);
  EXPECT_DOUBLE_EQ(s.setup_ms, 0.125);
}

TEST(CompactEngine, AnObserverSendsTheDeviceLoopBackToTheHost) {
  ScriptedPassDriver<true> b;
  b.r = {2, 0};
  compact::detail::CallPlan plan;
  plan.n       = 1;
  int observed = 0;
  compact::DefragStats const s =
      compact::detail::run_defragmentation(b, plan, [&](compact::PassStats const&) { ++observed; });
  EXPECT_EQ(s.pass_loop, compact::PassLoop::host);
  EXPECT_EQ(b.calls.front(), "begin");
  EXPECT_EQ(observed, 1);  // r = 2, n = 1: one pass; then r = 0 ends the call
}

TEST(CompactEngine, APassWithoutSourcesEndsTheCall) {
  ScriptedPassDriver<false> b;
  b.r = {2};
  compact::detail::CallPlan plan;
  plan.n                       = 2;
  plan.variant                 = core::RewriteVariant::recompute_global;
  compact::DefragStats const s = compact::detail::run_defragmentation(b, plan, {});
  EXPECT_EQ(s.stop, DefragStop::no_progress);
  EXPECT_TRUE(s.passes.empty());
  EXPECT_EQ(b.calls, (std::vector<std::string>{"begin", "scan", "rewrite", "end_call"}));
  EXPECT_EQ(s.forwarding_bytes, 0u);
}

TEST(CompactEngine, TheCapLimitsEveryPass) {
  ScriptedPassDriver<false> b;
  b.r = {40, 37, 34, 0};
  compact::detail::CallPlan plan;
  plan.n                       = 1;
  plan.source_cap              = 3;
  compact::DefragStats const s = compact::detail::run_defragmentation(b, plan, {});
  ASSERT_EQ(s.passes.size(), 3u);
  for (auto const& p : s.passes) EXPECT_EQ(p.sources, 3u);
  EXPECT_EQ(s.passes[0].sources_allowed, 20u);
}
