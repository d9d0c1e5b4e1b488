// RapidCheck properties of the model over random configs and schedules (>= 200 cases each).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "heaplab/check/defrag_obligations.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/model/interpreter.hpp"
#include "heaplab/schedule/generators.hpp"
#include "heaplab/schedule/plan.hpp"
#include "model_test_support.hpp"

namespace heaplab::model {
namespace {

using testing::check_property;

std::string violations_text(std::vector<check::Violation> const& vs) {
  std::string out;
  for (auto const& v : vs) out += "  " + v.to_string() + "\n";
  return out;
}

/// Runs a schedule on a model and returns it (failing the property on any violation).
ModelInterpreter run_all(schedule::Schedule const& s) {
  ModelInterpreter in(s);
  while (!in.finished()) {
    StepOutcome const out = in.step();
    if (!out.ok()) RC_FAIL("step " + std::to_string(out.index) + " failed: " + out.summary());
  }
  return in;
}

/// What defragmentation must preserve: per id, the type, the cookie and the pointer targets by
/// id (CompactGpu sec. 3: objects move, the graph does not change).
struct Payload {
  TypeId type;
  std::uint64_t cookie;
  std::vector<std::optional<ObjectId>> refs;
  bool operator==(Payload const& o) const {
    return type == o.type && cookie == o.cookie && refs == o.refs;
  }
};

/// The id graph read back from a snapshot: every record's refs resolved through the snapshot's
/// own (block, slot) -> id map. Fails the property if an id appears twice or a ref dangles.
std::map<ObjectId, Payload> payloads_from_snapshot(check::HeapSnapshot const& s,
                                                   HeapModel const& m) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, ObjectId> id_at;
  for (std::uint32_t b = 0; b < s.blocks.size(); ++b)
    for (std::uint32_t slot = 0; slot < s.blocks[b].objects.size(); ++slot)
      if (auto const& rec = s.blocks[b].objects[slot]) id_at[{b, slot}] = rec->id;
  std::map<ObjectId, Payload> out;
  for (std::uint32_t b = 0; b < s.blocks.size(); ++b) {
    for (auto const& rec : s.blocks[b].objects) {
      if (!rec) continue;
      Payload p{s.blocks[b].type, rec->cookie, {}};
      for (auto const& r : rec->refs) {
        if (!r) {
          p.refs.push_back(std::nullopt);
          continue;
        }
        auto it = id_at.find({r->block, r->slot});
        RC_ASSERT(it != id_at.end());  // no dangling pointer
        p.refs.push_back(it->second);
      }
      RC_ASSERT(out.emplace(rec->id, p).second);  // no id twice
      RC_ASSERT(m.is_live(rec->id));
    }
  }
  return out;
}

/// A model after a random schedule, and a defrag request (type, n, k1) for it.
struct DefragCase {
  schedule::Schedule schedule;
  TypeId type;
  std::uint32_t n;
  std::uint32_t k1;
};

rc::Gen<DefragCase> defrag_case() {
  return rc::gen::exec([] {
    DefragCase c;
    c.schedule         = *schedule::gen::schedule();
    auto const& config = c.schedule.config;
    std::vector<TypeId> concrete;
    for (TypeId t = 0; t < config.num_types(); ++t)
      if (!config.types[t].is_abstract) concrete.push_back(t);
    c.type = *rc::gen::elementOf(concrete);
    // Fragment the heap in T: a wave of T objects, then free a fraction of them (and of
    // whatever else is of type T), so that most cases have candidates for several passes.
    schedule::AllocWave fill;
    fill.type                 = c.type;
    std::uint32_t const slots = config.num_blocks * config.capacity(c.type);  // the whole heap
    fill.threads = std::max<std::uint32_t>(1, slots * *rc::gen::inRange<std::uint32_t>(2, 5) / 4);
    fill.count   = 1;
    schedule::FreeWave thin;
    thin.select.type     = c.type;
    thin.select.pattern  = schedule::SelectPattern::fraction;
    thin.select.fraction = *rc::gen::inRange(3, 8) / 8.0;
    thin.select.seed     = *rc::gen::inRange<std::uint64_t>(0, 1000);
    c.schedule.steps.push_back(fill);
    c.schedule.steps.push_back(thin);
    std::uint32_t const cap = config.capacity(c.type);
    c.n                     = *rc::gen::weightedOneOf<std::uint32_t>(
        {{3, rc::gen::just(config.defrag_factor)},
                             {1, rc::gen::inRange<std::uint32_t>(1, std::min<std::uint32_t>(cap - 1, 8) + 1)}});
    c.k1 = *rc::gen::weightedOneOf<std::uint32_t>(
        {{2, rc::gen::just<std::uint32_t>(0)}, {1, rc::gen::inRange<std::uint32_t>(1, 5)}});
    return c;
  });
}

// The whole catalog holds after every step of random schedules (the interpreter runs
// check::check_all after each step and CompactGpu's obligations after each defrag), and the
// interpreter is deterministic: the same schedule gives the same snapshot.
TEST(ModelProperties, CatalogHoldsAfterEveryStepOfRandomSchedules) {
  check_property(200, [] {
    schedule::Schedule const s = *schedule::gen::schedule();
    ModelInterpreter in(s);
    std::uint64_t moved_by_defrag = 0;
    while (!in.finished()) {
      StepOutcome const out = in.step();
      if (out.defrag)
        for (auto const& p : out.defrag->passes) moved_by_defrag += p.objects_moved;
      if (!out.ok())
        RC_FAIL("step " + std::to_string(out.index) + " (" + out.description + "): " + out.error +
                "\n" + violations_text(out.violations));
    }
    RC_TAG(in.model().num_live() > 0 ? "objects remain" : "heap empty");
    RC_TAG(moved_by_defrag > 0 ? "a defrag step moved objects" : "no defrag moved objects");
    ModelInterpreter again(s);
    while (!again.finished()) again.step();
    RC_ASSERT(snapshot_digest(again.model().snapshot()) == snapshot_digest(in.model().snapshot()));
  });
}

// The snapshot's state bitmaps come from word mirrors of the model's state sets (snapshot.cpp):
// after every step each bitmap holds exactly its set's blocks, at every level.
TEST(ModelProperties, SnapshotBitmapsAreTheStateSetsAfterEveryStep) {
  check_property(150, [] {
    schedule::Schedule const s = *schedule::gen::schedule();
    ModelInterpreter in(s);
    auto const same = [](check::BitmapSnapshot const& bitmap,
                         std::set<std::uint32_t> const& set,
                         std::string const& what) {
      std::vector<std::uint32_t> const want(set.begin(), set.end());
      RC_ASSERT(check::set_bits(bitmap) == want);
      check::BitmapSnapshot derived = bitmap;  // the upper levels summarize level 0
      check::recompute_levels(derived);
      if (derived.levels != bitmap.levels) RC_FAIL(what + ": an upper level is stale");
    };
    while (!in.finished()) {
      (void)in.step();
      HeapModel const& m             = in.model();
      check::HeapSnapshot const snap = m.snapshot();
      same(snap.free_blocks, m.free_blocks(), "free");
      for (TypeId t = 0; t < m.config().num_types(); ++t) {
        if (m.config().types[t].is_abstract) continue;
        same(snap.allocated[t], m.allocated(t), "allocated");
        same(snap.active[t], m.active(t), "active");
        same(snap.defrag[t], m.defrag_candidates(t), "defrag");
      }
    }
  });
}

/// Every field of two plans equal (StepPlan has no operator==).
bool same_plan(schedule::StepPlan const& a, schedule::StepPlan const& b) {
  auto same_writes = [](auto const& x, auto const& y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](auto const& p, auto const& q) {
      return p.object == q.object && p.slot == q.slot && p.target == q.target;
    });
  };
  auto same_objects = [](auto const& x, auto const& y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](auto const& p, auto const& q) {
      return p.id == q.id && p.type == q.type && p.refs == q.refs && p.thread == q.thread &&
             p.parent == q.parent && p.root == q.root;
    });
  };
  auto same_visits = [](auto const& x, auto const& y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](auto const& p, auto const& q) {
      return p.self == q.self && p.acts == q.acts && p.child == q.child &&
             p.delete_self == q.delete_self && p.victim == q.victim && p.relink_to == q.relink_to;
    });
  };
  return same_writes(a.null_refs, b.null_refs) && a.null_roots == b.null_roots &&
         a.deletes == b.deletes && same_objects(a.allocations, b.allocations) &&
         same_visits(a.visits, b.visits) && a.parent_slot == b.parent_slot &&
         a.relink_slot == b.relink_slot && a.next_id == b.next_id;
}

// The runners skip building the id graph for steps whose plan does not read it
// (schedule::plan_reads_graph): for those the plan on the model's graph is the plan on no graph.
// And the predicate is not vacuous: steps that read the graph get other plans on no graph.
TEST(ModelProperties, PlansOfStepsThatDoNotReadTheGraphDoNotDependOnIt) {
  bool differed = false;
  check_property(150, [&] {
    schedule::Schedule const s = *schedule::gen::schedule();
    ModelInterpreter in(s);
    while (!in.finished()) {
      schedule::Step const& step    = s.steps[in.next_step()];
      schedule::IdGraph const graph = id_graph(in.model());
      auto const with               = schedule::plan_step(s.config, graph, step, in.next_id());
      auto const without = schedule::plan_step(s.config, schedule::IdGraph{}, step, in.next_id());
      if (!schedule::plan_reads_graph(step))
        RC_ASSERT(same_plan(with, without));
      else if (!same_plan(with, without))
        differed = true;
      (void)in.step();
    }
  });
  EXPECT_TRUE(differed) << "no step that reads the graph ever planned differently without it";
}

// No object is lost or duplicated by any step: after each step the live ids are exactly the ids
// live before, minus the step's deletes, plus the objects it created (one per allocation that
// found memory), and the snapshot holds each live id exactly once.
TEST(ModelProperties, NoObjectIsLostOrDuplicated) {
  check_property(200, [] {
    schedule::Schedule const s = *schedule::gen::schedule();
    ModelInterpreter in(s);
    while (!in.finished()) {
      auto const& step = s.steps[in.next_step()];
      schedule::StepPlan const plan =
          schedule::plan_step(s.config, id_graph(in.model()), step, in.next_id());
      std::set<ObjectId> before;
      for (auto const& [id, obj] : in.model().objects()) before.insert(id);
      StepOutcome const out = in.step();
      RC_ASSERT(out.ok());
      std::set<ObjectId> after;
      for (auto const& [id, obj] : in.model().objects()) after.insert(id);
      std::set<ObjectId> expected_survivors = before;
      for (auto id : plan.deletes) RC_ASSERT(expected_survivors.erase(id) == 1u);
      std::set<ObjectId> created;
      std::set_difference(after.begin(),
                          after.end(),
                          expected_survivors.begin(),
                          expected_survivors.end(),
                          std::inserter(created, created.end()));
      for (auto id : expected_survivors) RC_ASSERT(after.count(id) == 1u);  // none lost
      std::set<ObjectId> planned;
      for (auto const& a : plan.allocations) planned.insert(a.id);
      for (auto id : created) RC_ASSERT(planned.count(id) == 1u);  // nothing unexpected
      RC_ASSERT(created.size() == out.created);
      RC_ASSERT(created.size() + out.failed == plan.allocations.size());
      auto const snap     = in.model().snapshot();
      std::size_t records = 0;
      std::set<ObjectId> in_snapshot;
      for (auto const& b : snap.blocks)
        for (auto const& rec : b.objects)
          if (rec) ++records, in_snapshot.insert(rec->id);
      RC_ASSERT(records == after.size());  // each id once
      RC_ASSERT(in_snapshot == after);
    }
  });
}

// Defragmentation preserves payloads and the id graph: every object keeps its id, type, cookie
// and pointer targets (read back from the snapshot by location); objects of other types do not
// move; roots still denote the same objects.
TEST(ModelProperties, DefragPreservesPayloadsAndTheIdGraph) {
  check_property(200, [] {
    DefragCase const c  = *defrag_case();
    ModelInterpreter in = run_all(c.schedule);
    HeapModel m         = in.model();
    auto const before   = payloads_from_snapshot(m.snapshot(), m);
    auto const graph    = id_graph(m);
    std::map<ObjectId, Location> others;
    for (auto const& [id, obj] : m.objects())
      if (obj.type != c.type) others[id] = obj.where;
    auto const roots_before = m.roots();

    DefragResult const r = m.defrag(c.type, c.n, c.k1);
    RC_TAG(r.passes.empty() ? "no pass" : "passes");

    auto const snap = m.snapshot();
    RC_ASSERT(payloads_from_snapshot(snap, m) == before);
    RC_ASSERT(id_graph(m) == graph);
    for (auto const& [id, where] : others) RC_ASSERT(m.object(id).where == where);
    RC_ASSERT(m.roots() == roots_before);
    auto const locations = m.root_locations();
    for (std::size_t i = 0; i < locations.size(); ++i) {
      if (!roots_before[i]) continue;
      auto const& rec = snap.blocks[locations[i]->block].objects[locations[i]->slot];
      RC_ASSERT(rec.has_value());
      RC_ASSERT(rec->id == *roots_before[i]);
    }
    std::uint64_t moved = 0;
    for (auto const& p : r.passes) moved += p.objects_moved;
    std::uint64_t counted = 0;
    for (auto const& [id, k] : r.relocations) counted += k;
    RC_ASSERT(moved == counted);
    RC_ASSERT(check::check_all(snap).empty());
  });
}

// After defrag: at most max(k1, n) candidates remain (for the n of the call), and every allocated
// block of T that is not in defrag[T] has fill > n/(n+1) (check::check_defrag_postconditions,
// evaluated when the call used the config's n: with another n the defrag sets follow the config's
// n by the n-override rule, docs/model.md, and the catalog's defrag-iff-low-fill checks them).
TEST(ModelProperties, AfterDefragOnlyFewCandidatesRemainAndTheRestIsWellFilled) {
  check_property(200, [] {
    DefragCase const c      = *defrag_case();
    HeapModel m             = run_all(c.schedule).model();
    DefragResult const r    = m.defrag(c.type, c.n, c.k1);
    auto const snap         = m.snapshot();
    std::uint32_t const cap = c.schedule.config.capacity(c.type);
    std::uint32_t low       = 0;
    for (std::uint32_t b : m.allocated(c.type)) {
      bool const candidate = core::is_defrag_fill(m.fill(b), cap, c.n);
      if (candidate) ++low;
      if (c.n == c.schedule.config.defrag_factor)
        RC_ASSERT(candidate == (m.defrag_candidates(c.type).count(b) == 1));
    }
    RC_ASSERT(low <= std::max(c.k1, c.n));
    RC_ASSERT(low == r.candidates_after);
    if (c.n == c.schedule.config.defrag_factor) {
      auto const vs = check::check_defrag_postconditions(snap, c.type, c.n, c.k1);
      if (!vs.empty()) RC_FAIL(violations_text(vs));
      // With no candidate left, F <= 1/(n+1) (CompactGpu sec. 3).
      if (low == 0) RC_ASSERT(r.fragmentation_after <= 1.0 / (c.n + 1) + 1e-12);
    }
    RC_TAG(c.n == c.schedule.config.defrag_factor ? "config n" : "overridden n");
  });
}

// The exact worst-case number of passes, floor effects included. A pass runs while r > k1 and
// B = floor(r / (n + 1)) >= 1 (i.e. r > max(k1, n)); it frees its B sources and blocks only
// gain objects during defragmentation, so no block becomes a candidate: the next r is at most
// r - B. The worst case removes exactly B, so the bound is
//     W(d) = 0 if d <= max(k1, n), else 1 + W(d - floor(d / (n + 1))),
// which is what check::worst_case_passes computes (we recompute it here independently). Because
// f(r) = r - floor(r / (n + 1)) is nondecreasing, removing more candidates never needs more
// passes, so passes <= W(d). The paper's real-valued log_{(n+1)/n}(d / k1) ignores the floor and
// can be exceeded for small r (n = 2, k1 = 2, d = 10: 5 passes, log_{1.5} 5 = 3.97), so it is
// not the bound we check.
std::uint32_t worst_case(std::uint32_t d, std::uint32_t n, std::uint32_t k1) {
  std::uint32_t passes = 0;
  for (std::uint32_t r = d; r > std::max(k1, n); r -= r / (n + 1)) ++passes;
  return passes;
}

TEST(ModelProperties, PassesNeverExceedTheExactWorstCaseBound) {
  EXPECT_EQ(worst_case(10, 2, 2), 5u);  // 10 -> 7 -> 5 -> 4 -> 3 -> 2
  EXPECT_EQ(worst_case(8, 1, 0), 3u);   // 8 -> 4 -> 2 -> 1
  for (std::uint32_t d = 0; d < 300; ++d)
    for (std::uint32_t n = 1; n < 8; ++n)
      for (std::uint32_t k1 = 0; k1 < 6; ++k1)
        ASSERT_EQ(check::worst_case_passes(d, n, k1), worst_case(d, n, k1))
            << d << " " << n << " " << k1;
  check_property(200, [] {
    DefragCase const c    = *defrag_case();
    HeapModel m           = run_all(c.schedule).model();
    DefragResult const r  = m.defrag(c.type, c.n, c.k1);
    std::uint32_t const d = r.candidates_before;
    RC_ASSERT(r.passes.size() <= worst_case(d, c.n, c.k1));
    // Every pass makes the progress the bound assumes, and a call stops only when it must.
    for (std::size_t i = 0; i < r.passes.size(); ++i) {
      RC_ASSERT(r.passes[i].sources == r.passes[i].candidates / (c.n + 1));
      RC_ASSERT(r.passes[i].sources >= 1u);
      std::uint32_t const next =
          i + 1 < r.passes.size() ? r.passes[i + 1].candidates : r.candidates_after;
      RC_ASSERT(next <= r.passes[i].candidates - r.passes[i].sources);
    }
    RC_ASSERT(r.candidates_after <= std::max(c.k1, c.n));
    RC_ASSERT((d > std::max(c.k1, c.n)) == !r.passes.empty());
    RC_TAG(r.passes.size() >= 2 ? "several passes" : r.passes.size() == 1 ? "one pass" : "none");
  });
}

}  // namespace
}  // namespace heaplab::model

namespace heaplab::model {
namespace {

/// Placements as a nondeterministic allocator might choose them (DynaSOAr sec. 3.2: any active
/// block of the type, else any free block; any free slot), for the plan's allocations in a random
/// order, made on a copy of the model after the step's deletions. Allocations that find no room
/// are left out (out of memory).
std::vector<ObservedAllocation> random_legal_placements(HeapModel const& m,
                                                        schedule::StepPlan const& plan) {
  auto const& config    = m.config();
  std::uint32_t const M = config.num_blocks;
  std::vector<std::optional<TypeId>> type(M);
  std::vector<std::vector<bool>> used(M, std::vector<bool>(core::kMaxCapacity, false));
  for (std::uint32_t b = 0; b < M; ++b) {
    type[b] = m.block(b).type;
    for (std::uint32_t s = 0; s < core::kMaxCapacity; ++s)
      used[b][s] = m.block(b).slots[s].has_value();
  }
  std::vector<std::size_t> order(plan.allocations.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[*rc::gen::inRange<std::size_t>(0, i)]);
  std::vector<ObservedAllocation> out;
  for (std::size_t i : order) {
    auto const& a           = plan.allocations[i];
    std::uint32_t const cap = config.capacity(a.type);
    std::vector<std::uint32_t> active, free;
    for (std::uint32_t b = 0; b < M; ++b) {
      if (!type[b]) free.push_back(b);
      if (type[b] == a.type && std::count(used[b].begin(), used[b].begin() + cap, false) > 0)
        active.push_back(b);
    }
    auto const& blocks = active.empty() ? free : active;
    if (blocks.empty()) continue;  // out of memory
    std::uint32_t const b = blocks[*rc::gen::inRange<std::size_t>(0, blocks.size())];
    std::vector<std::uint32_t> slots;
    for (std::uint32_t s = 0; s < cap; ++s)
      if (!used[b][s]) slots.push_back(s);
    std::uint32_t const slot = slots[*rc::gen::inRange<std::size_t>(0, slots.size())];
    type[b]                  = a.type;
    used[b][slot]            = true;
    out.push_back({a.id, a.type, b, slot, {}});
  }
  return out;
}

// Refinement (docs/model.md): whatever legal placement an allocator chooses, the id graph after
// every step equals the one the model predicts with its own placement, as long as neither ran out
// of memory (placement then decides which allocations fail). The nondeterministic side goes through
// the GPU path: apply_nulling, apply_deletes, apply_placements (accept_allocations).
TEST(ModelProperties, AnyLegalPlacementGivesTheSameIdGraph) {
  check_property(200, [] {
    schedule::Schedule const s = *schedule::gen::schedule();
    ModelInterpreter reference(s);
    HeapModel gpu(s.config);
    schedule::ObjectId next_id = schedule::kFirstObjectId;
    std::size_t compared       = 0;
    for (auto const& step : s.steps) {
      schedule::StepPlan const plan = schedule::plan_step(s.config, id_graph(gpu), step, next_id);
      next_id                       = plan.next_id;
      StepOutcome const out         = reference.step();
      RC_ASSERT(out.ok());
      if (auto const* d = std::get_if<schedule::Defrag>(&step)) {
        gpu.defrag(d->type, d->n, d->k1);
      } else {
        apply_nulling(gpu, plan);
        apply_deletes(gpu, plan);
        auto const observed = random_legal_placements(gpu, plan);
        auto const error    = apply_placements(gpu, plan, observed);
        if (error) RC_FAIL(error->to_string());
        if (out.failed > 0 || observed.size() < plan.allocations.size()) break;  // out of memory
      }
      auto const vs = check::check_all(gpu.snapshot());
      if (!vs.empty()) RC_FAIL(violations_text(vs));
      RC_ASSERT(id_graph(gpu) == id_graph(reference.model()));
      ++compared;
    }
    RC_TAG(compared == s.steps.size() ? "whole schedule" : "until out of memory");
  });
}

TEST(ModelRefinement, ApplyPlacementsRejectsIdsTypesAndPointersThePlanDoesNotHave) {
  core::HeapConfig c;
  c.types.push_back({"Node", 8, std::nullopt, false, {{"next", 0, 1}}});
  c.num_blocks    = 2;
  c.defrag_factor = 1;
  HeapModel m(c);
  m.allocate(0, 1);
  schedule::AllocWave wave;
  wave.type       = 0;
  wave.threads    = 2;
  wave.count      = 1;
  wave.links      = {{0, 0, 7, 0.0}};  // next := node 1, the only live node
  auto const plan = schedule::plan_step(c, id_graph(m), wave, 2);
  ASSERT_EQ(plan.allocations.size(), 2u);
  auto expect = [&](std::vector<ObservedAllocation> observed, std::string const& reason) {
    HeapModel copy = m;
    auto const e   = apply_placements(copy, plan, std::move(observed));
    ASSERT_TRUE(e.has_value()) << reason;
    EXPECT_NE(e->to_string().find(reason), std::string::npos) << e->to_string();
    EXPECT_EQ(copy.num_live(), 1u);
  };
  expect({{9, 0, 0, 5, {}}}, "object 9 is not created by this step");
  expect({{2, 0, 0, 5, {std::nullopt}}}, "initial pointers differ from the plan's");
  expect({{2, 0, 0, 0, {}}}, "slot 0 of block 0 is already occupied");
  // A legal placement, in another order and another block than the model's own: accepted, and
  // the plan's pointers are applied.
  HeapModel copy = m;
  auto const e   = apply_placements(copy, plan, {{3, 0, 1, 9, {}}, {2, 0, 0, 63, {}}});
  ASSERT_FALSE(e.has_value()) << e->to_string();
  EXPECT_EQ(copy.object(2).refs[0], std::optional<ObjectId>(1));
  EXPECT_EQ(copy.object(3).where, (Location{1, 9}));
}

}  // namespace
}  // namespace heaplab::model
