// The model-side additions for the exact differential (label cpu): a model built from a snapshot
// with payloads, the per-pass observer, the source cap of the recompute variants, the cap a
// schedule's defrag step gets from its variant, and (on the model only) that the grid's
// multi-move cases do move objects 2+ times in one call. docs/model.md, docs/compaction.md.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "case_grid.hpp"
#include "differential.hpp"
#include "heaplab/check/diff.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/model/heap_model.hpp"
#include "heaplab/model/interpreter.hpp"
#include "heaplab/soa/host_config.hpp"

namespace check    = heaplab::check;
namespace core     = heaplab::core;
namespace model    = heaplab::model;
namespace schedule = heaplab::schedule;

namespace {

constexpr std::uint32_t kT    = 0;
constexpr std::uint32_t kCell = 1;

core::HeapConfig config(std::uint32_t blocks = 40, std::uint32_t n = 1) {
  core::HeapConfig c;
  c.types.push_back({"T", 8, std::nullopt, false, {{"next", kT, 1}}});
  c.types.push_back({"Cell", 8, std::nullopt, false, {{"objects", kT, 2}}});
  c.num_blocks    = blocks;
  c.defrag_factor = n;
  return c;
}

/// Blocks 0..k-1 of T each hold `fill` objects (ids from 1), every object points to the next,
/// one Cell points to two of them, and a root to the last.
model::HeapModel fragmented(std::uint32_t k, std::uint32_t fill, std::uint32_t blocks = 40) {
  model::HeapModel m(config(blocks));
  std::vector<model::ObservedAllocation> placed;
  std::uint64_t id = 1;
  for (std::uint32_t b = 0; b < k; ++b)
    for (std::uint32_t s = 0; s < fill; ++s) placed.push_back({id++, kT, b, 2 * s + 1, {}});
  placed.push_back({id, kCell, k, 0, {}});
  EXPECT_FALSE(m.accept_allocations(placed).has_value());
  for (std::uint64_t i = 1; i + 1 < id; ++i) m.set_ref(i, 0, i + 1);
  m.set_ref(id, 0, 1);
  m.set_ref(id, 1, id - 1);
  m.add_root(id - 1);
  m.add_root(std::nullopt);
  return m;
}

}  // namespace

TEST(ModelFromSnapshot, RebuildsTheSameHeapWithRoots) {
  model::HeapModel const m    = fragmented(10, 20);
  check::HeapSnapshot const s = m.snapshot();
  model::HeapModel const copy = model::HeapModel::from_snapshot(s, m.root_locations());
  check::SnapshotDiff const d = check::diff(s, copy.snapshot());
  EXPECT_TRUE(d.empty()) << d.to_string();
  EXPECT_EQ(copy.roots(), m.roots());
  EXPECT_EQ(copy.num_live(), m.num_live());
  EXPECT_EQ(copy.next_unused_id(), m.next_unused_id());
  EXPECT_EQ(copy.incoming_refs(1), m.incoming_refs(1));
  for (auto const& [id, obj] : m.objects()) EXPECT_EQ(copy.object(id).refs, obj.refs) << id;
}

TEST(ModelFromSnapshot, RejectsSnapshotsItCannotTrust) {
  model::HeapModel const m = fragmented(4, 10);
  check::HeapSnapshot s    = m.snapshot();
  auto const error_of      = [](check::HeapSnapshot const& snap,
                           std::vector<std::optional<core::SlotRef>> roots) {
    try {
      (void)model::HeapModel::from_snapshot(snap, roots);
    } catch (core::precondition_error const& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  check::HeapSnapshot no_payloads = s;
  no_payloads.has_payloads        = false;
  EXPECT_NE(error_of(no_payloads, {}).find("no payloads"), std::string::npos);
  check::HeapSnapshot torn = s;
  torn.blocks[0].objects[1]->cookie ^= 1;
  EXPECT_NE(error_of(torn, {}).find("cookie-matches-id"), std::string::npos);
  EXPECT_NE(error_of(s, {core::SlotRef{0, 0}}).find("root 0"), std::string::npos);  // empty slot
  EXPECT_EQ(error_of(s, {core::SlotRef{0, 1}}), "accepted");
}

/// `s` with every pointer value nulled: what a snapshot says apart from pointer values.
check::HeapSnapshot without_pointer_values(check::HeapSnapshot s) {
  for (auto& block : s.blocks)
    for (auto& record : block.objects)
      if (record)
        for (auto& ref : record->refs) ref.reset();
  return s;
}

/// The pointer targets of every object of `s`, by id.
std::map<std::uint64_t, std::vector<std::optional<core::SlotRef>>> pointers_by_id(
    check::HeapSnapshot const& s) {
  std::map<std::uint64_t, std::vector<std::optional<core::SlotRef>>> out;
  for (auto const& block : s.blocks)
    for (auto const& record : block.objects)
      if (record) out[record->id] = record->refs;
  return out;
}

TEST(ModelDefragHooks, TheObserverSeesTheStateAfterEveryPassWithPointersNotYetRewritten) {
  model::HeapModel m                 = fragmented(16, 20);  // 16 candidates for n = 1 (20/64 full)
  check::HeapSnapshot const at_start = m.snapshot();
  std::vector<check::HeapSnapshot> seen;
  std::vector<model::DefragPassStats> stats;
  model::DefragResult const r =
      m.defrag(kT, {}, [&](model::HeapModel const& at, model::DefragPassStats const& p) {
        seen.push_back(at.snapshot());
        stats.push_back(p);
      });
  ASSERT_EQ(seen.size(), r.passes.size());
  ASSERT_FALSE(seen.empty());
  // The last pass is the end state, except that the call rewrites pointers after it.
  check::SnapshotDiff const d =
      check::diff(without_pointer_values(m.snapshot()), without_pointer_values(seen.back()));
  EXPECT_TRUE(d.empty()) << d.to_string();
  EXPECT_FALSE(check::diff(m.snapshot(), seen.back()).empty());  // every T points to a moved one
  for (std::size_t i = 0; i < stats.size(); ++i) {
    EXPECT_EQ(stats[i].candidates, r.passes[i].candidates);
    EXPECT_EQ(stats[i].sources, r.passes[i].sources);
    // One rewrite per call: between passes every pointer holds its target's call-start location.
    EXPECT_EQ(pointers_by_id(seen[i]), pointers_by_id(at_start)) << "after pass " << i;
    // The catalog holds, except that stale pointers refer to released sources.
    for (check::Invariant const& inv : check::catalog()) {
      if (inv.name == "pointers-valid") continue;
      std::vector<check::Violation> v;
      inv.check(seen[i], v);
      EXPECT_TRUE(v.empty()) << inv.name << " after pass " << i << ": " << v.front().to_string();
    }
  }
  EXPECT_TRUE(check::check_all(m.snapshot()).empty());
  // 16 -> 8 sources, 8 targets of 40 objects (still <= 1/2 full? no: 40/64 > 1/2) -> done.
  EXPECT_EQ(r.passes.size(), 1u);
  EXPECT_EQ(r.passes[0].sources, 8u);
  // The one scan: 320 T's (one next slot each) and one Cell (two slots). Ids 1..160 (sources
  // 0..7) moved: ids 2..160 are referred to by the next slots of 1..159, id 1 by the cell; the
  // cell's other slot and the root refer to 320 (block 15, a target: never moved).
  EXPECT_EQ(r.pointers_scanned, 322u);
  EXPECT_EQ(r.pointers_rewritten, 160u);
  EXPECT_EQ(r.roots_rewritten, 0u);
}

TEST(ModelDefragHooks, TheSourceCapLimitsEveryPassAndStridesTheTargets) {
  model::HeapModel m               = fragmented(16, 10);  // 16 blocks with 10 of 64
  model::DefragPassPlan const plan = m.plan_defrag_pass(kT, 1, 3);
  EXPECT_EQ(plan.sources_allowed, 8u);
  EXPECT_EQ(plan.B, 3u);
  ASSERT_EQ(plan.sources.size(), 3u);
  for (std::uint32_t s = 0; s < 3; ++s) {
    EXPECT_EQ(plan.sources[s].source, plan.R[s]);
    EXPECT_EQ(plan.sources[s].targets, (std::vector<std::uint32_t>{plan.R[s + 3]}));
  }
  model::DefragOptions o;
  o.source_cap                = 3;
  model::DefragResult const r = m.defrag(kT, o);
  EXPECT_EQ(r.source_cap, 3u);
  for (auto const& p : r.passes) EXPECT_LE(p.sources, 3u);
  EXPECT_LE(r.passes.size(), core::worst_case_passes_with_cap(16, 1, 0, 3));
  EXPECT_GT(r.passes.size(), 1u);
  EXPECT_LE(m.candidates(kT, 1).size(), 1u);
  EXPECT_THROW((void)m.plan_defrag_pass(kT, 1, 0), core::precondition_error);
}

TEST(ModelDefragHooks, AScheduleStepGetsTheCapOfItsVariant) {
  heaplab::schedule::Defrag step;
  step.type    = kT;
  step.variant = heaplab::core::RewriteVariant::recompute_shared;
  // The model derives the cap from the step's variant and the effective n, as the GPU does
  // (48 KiB of records: 48 * 1024 / (12 (n + 1)) for Recompute-Shared, / 4 for -Global).
  auto cap_of = [&](std::uint32_t defrag_factor) {
    model::HeapModel m(config(40, defrag_factor));
    return m.defrag(kT, schedule::defrag_options(step)).source_cap;
  };
  EXPECT_EQ(cap_of(3), 1024u);  // the heap's n = 3
  step.n = 1;
  EXPECT_EQ(cap_of(3), 2048u);  // the step's n = 1 wins
  step.variant = heaplab::core::RewriteVariant::recompute_global;
  EXPECT_EQ(cap_of(3), 12288u);
  step.variant = heaplab::core::RewriteVariant::forwarding;
  EXPECT_EQ(cap_of(3), core::kUnlimitedSources);
  EXPECT_EQ(schedule::defrag_options(step).n, std::optional<std::uint32_t>(1));
  // A forced cap lowers the variant's, never raises it.
  step.variant               = heaplab::core::RewriteVariant::recompute_shared;
  core::DefragOptions forced = schedule::defrag_options(step);
  forced.source_cap          = 5000;
  EXPECT_EQ(core::effective_source_cap(forced, 1), 2048u);
  forced.source_cap = 3;
  EXPECT_EQ(core::effective_source_cap(forced, 1), 3u);
}

TEST(ModelDefragHooks, TheRecordBudgetSetsTheCapsOnBothSides) {
  // Hopper's 227 KiB = 232448 bytes: / 4 = 58112 sources for Recompute-Global; / (12 * 4) =
  // 4842 (rounded down) for Recompute-Shared with n = 3.
  core::DefragOptions o;
  o.record_budget_bytes = core::kHopperRecordBudgetBytes;
  o.variant             = core::RewriteVariant::recompute_global;
  EXPECT_EQ(core::effective_source_cap(o, 3), 58112u);
  o.variant = core::RewriteVariant::recompute_shared;
  EXPECT_EQ(core::effective_source_cap(o, 3), 4842u);
  // A budget of 72 bytes holds 72 / (12 * 2) = 3 records for n = 1: the model's passes use 3.
  model::HeapModel m          = fragmented(16, 10);
  o.record_budget_bytes       = 72;
  o.n                         = 1;
  model::DefragResult const r = m.defrag(kT, o);
  EXPECT_EQ(r.source_cap, 3u);
  for (auto const& p : r.passes) EXPECT_LE(p.sources, 3u);
  EXPECT_EQ(r.passes.front().sources, 3u);
  // 23 bytes hold no record for n = 1 (24 bytes each): refused before anything changes.
  model::HeapModel untouched = fragmented(16, 10);
  o.record_budget_bytes      = 23;
  EXPECT_THROW((void)untouched.defrag(kT, o), core::precondition_error);
  EXPECT_EQ(untouched.candidates(kT, 1).size(), 16u);
}

// ------------------------------------------------------------------ the multi-move cases

namespace {

/// The differential's driver interface (support/differential.hpp) over the model itself, to
/// build a case's heap without a GPU or the emulation. Its placement is the model's (lowest
/// block), not the GPU's; the multi-move shape's point (every block of T keeps 1 or 2 objects)
/// does not depend on placement.
class ModelDriver {
 public:
  explicit ModelDriver(compact_test::CaseParams const& c)
      : model_(heaplab::soa::heap_config<compact_test::Types>(c.num_blocks, c.defrag_factor, 0)) {}
  [[nodiscard]] core::HeapConfig const& config() const { return model_.config(); }
  void allocate(std::vector<compact_test::NewObject> const& objects) {
    for (auto const& o : objects) ASSERT_TRUE(model_.allocate(o.type, o.id)) << "full at " << o.id;
  }
  check::HeapSnapshot snapshot() const { return model_.snapshot(); }
  void link(std::vector<compact_test::Link> const& links) {
    for (auto const& l : links) model_.set_ref(l.from, l.slot, l.to);
  }
  void destroy(std::vector<std::uint64_t> const& ids) {
    for (std::uint64_t id : ids) model_.free(id);
  }
  void add_root_array(compact_test::RootArray const& r) {
    for (std::uint64_t id : r.targets)
      model_.add_root(id == 0 ? std::nullopt : std::optional<std::uint64_t>(id));
  }
  [[nodiscard]] std::vector<std::optional<core::SlotRef>> root_locations() const {
    return model_.root_locations();
  }
  model::HeapModel& model() { return model_; }

 private:
  model::HeapModel model_;
};

}  // namespace

TEST(MultiMoveCases, EveryCaseRelocatesObjectsTwiceAndPointsToThem) {
  using compact_test::CaseParams;
  for (auto variant : {core::RewriteVariant::forwarding,
                       core::RewriteVariant::recompute_global,
                       core::RewriteVariant::recompute_shared}) {
    std::vector<CaseParams> const cases = compact_test::multi_move_cases(variant, 320);
    ASSERT_EQ(cases.size(), 4u);
    std::vector<CaseParams> const grid = compact_test::case_grid(variant, 320);
    for (CaseParams const& c : cases) {
      SCOPED_TRACE(c.describe());
      // The grid's runners (emulation_test, compact_gpu_test) run these cases.
      EXPECT_TRUE(std::any_of(grid.begin(), grid.end(), [&](CaseParams const& g) {
        return g.describe() == c.describe();
      }));
      ModelDriver driver(c);
      std::mt19937_64 rng(c.seed);
      (void)compact_test::populate(driver, c, rng);
      model::HeapModel& m = driver.model();
      // By id, before the call: every pointer (holder, slot target) and every root.
      std::vector<std::pair<std::uint64_t, std::uint64_t>> pointers;
      for (auto const& [id, obj] : m.objects())
        for (auto const& r : obj.refs)
          if (r) pointers.emplace_back(id, *r);
      std::vector<std::optional<std::uint64_t>> const roots = m.roots();

      core::DefragOptions o;
      o.n                         = c.n;
      o.k1                        = c.k1;
      o.variant                   = c.variant;
      o.source_cap                = c.forced_cap;
      model::DefragResult const r = m.defrag(c.type, o);
      auto const& histogram       = r.objects_by_relocation_count;
      ASSERT_GE(histogram.size(), 3u) << "no object of the type moved twice";
      EXPECT_GT(histogram.back(), 0u);
      EXPECT_GE(r.passes.size(), 2u);
      auto const twice = [&](std::uint64_t id) {
        auto const it = r.relocations.find(id);
        return it != r.relocations.end() && it->second >= 2;
      };
      std::size_t to_twice = 0, chained = 0, roots_to_twice = 0;
      for (auto const& [from, to] : pointers) {
        to_twice += twice(to) ? 1 : 0;
        chained += twice(from) && twice(to) ? 1 : 0;
      }
      for (auto const& root : roots) roots_to_twice += root && twice(*root) ? 1 : 0;
      EXPECT_GT(to_twice + roots_to_twice, 0u) << "nothing points to an object moved twice";
      // Node and Fat point to their own kind: a pointer held by an object moved 2+ times to an
      // object moved 2+ times is carried stale through several passes.
      if (c.type == compact_test::kNode || c.type == compact_test::kFat) {
        EXPECT_GT(chained, 0u) << "no pointer between two objects moved twice";
      }
      if (::testing::Test::HasFailure()) return;
      if (compact_test::verbose())
        std::printf(
            "[multi-move] %s: %zu passes, moved at most %zu times, %zu pointers and %zu "
            "roots to objects moved twice, %zu chained\n",
            c.describe().c_str(),
            r.passes.size(),
            histogram.size() - 1,
            to_twice,
            roots_to_twice,
            chained);
    }
  }
}
