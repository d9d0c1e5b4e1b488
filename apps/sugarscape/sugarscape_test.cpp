// CPU tests of sugarscape's rules, reference and checker (docs/apps.md "sugarscape"): the initial
// world within its ranges; every phase gives the same result whichever order its cells run in
// (what makes the GPU's threads equal the reference); births and deaths happen and the parents pay
// the child's endowment; the checker passes the reference's own state and reports each kind of
// broken state, a father who did not pay among them; two states (two heaps' final worlds) compare
// cell by cell whatever their handles.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reference.hpp"

namespace ss = heaplab::apps::sugarscape;

namespace {

ss::Params params(std::uint32_t w, std::uint32_t h, double density, std::uint64_t seed) {
  ss::Params p;
  p.width   = w;
  p.height  = h;
  p.density = density;
  p.seed    = seed;
  return p;
}

/// One iteration with each phase's cells in reverse order.
void step_reversed(ss::World& w, std::uint32_t it) {
  ss::Dense const d = w.dense();
  auto const n      = static_cast<std::uint32_t>(w.params.cells());
  auto each         = [&](auto f) {
    for (std::uint32_t c = n; c-- > 0;) f(c);
  };
  each([&](std::uint32_t c) { d.live(c, w.capacity[c]); });
  each([&](std::uint32_t c) { d.decide(it, c); });
  each([&](std::uint32_t c) { d.pull(c); });
  each([&](std::uint32_t c) { d.leave(it, c); });
  each([&](std::uint32_t c) { d.harvest(c); });
  each([&](std::uint32_t c) { d.propose(it, c); });
  each([&](std::uint32_t c) { d.choose(it, c); });
  each([&](std::uint32_t c) { d.born(it, c); });
  each([&](std::uint32_t c) { d.pay(it, c); });
}

bool same_world(ss::World const& a, ss::World const& b) {
  return a.sugar == b.sugar && a.kind == b.kind && a.a_sugar == b.a_sugar && a.age == b.age &&
         a.max_age == b.max_age && a.metabolism == b.metabolism && a.vision == b.vision;
}

void expect_report(ss::StateView const& s, ss::World const& w, std::string const& fragment) {
  auto const v = ss::check_state(s, w);
  ASSERT_TRUE(v.has_value()) << "the broken state passed the checker";
  EXPECT_NE(v->find(fragment), std::string::npos) << *v;
}

}  // namespace

TEST(SugarscapeRules, TheInitialWorldIsWithinItsRanges) {
  ss::World const w = ss::initial_world(params(97, 61, 0.2, 3));
  auto const pop    = ss::population(w);
  double const frac = double(pop.males + pop.females) / double(w.kind.size());
  EXPECT_GT(frac, 0.15);
  EXPECT_LT(frac, 0.25);
  EXPECT_GT(pop.males, 0u);
  EXPECT_GT(pop.females, 0u);
  for (std::size_t c = 0; c < w.kind.size(); ++c) {
    ASSERT_LE(w.sugar[c], w.capacity[c]);
    ASSERT_LE(w.capacity[c], ss::kMaxCapacity);
    if (w.kind[c] == ss::kEmpty) continue;
    ASSERT_GE(w.a_sugar[c], ss::kMinEndowment);
    ASSERT_LE(w.a_sugar[c], ss::kMaxEndowment);
    ASSERT_GE(w.metabolism[c], 1u);
    ASSERT_LE(w.metabolism[c], ss::kMaxMetabolism);
    ASSERT_GE(w.vision[c], 1u);
    ASSERT_LE(w.vision[c], ss::kMaxVision);
    ASSERT_LE(w.age[c], w.max_age[c]);
  }
}

TEST(SugarscapeRules, EveryPhaseGivesTheSameWorldInAnyOrderOfItsCells) {
  for (auto const& p : {params(3, 3, 0.5, 1),
                        params(7, 5, 0.3, 2),
                        params(64, 48, 0.2, 3),
                        params(31, 101, 0.6, 4),
                        params(128, 3, 0.9, 5)}) {
    ss::World a = ss::initial_world(p), b = a;
    for (std::uint32_t it = 1; it <= 60; ++it) {
      ss::step(a, it);
      step_reversed(b, it);
      ASSERT_TRUE(same_world(a, b)) << p.width << "x" << p.height << " iteration " << it;
    }
  }
}

TEST(SugarscapeRules, AgentsMoveAgeDieAndAreBorn) {
  ss::World w          = ss::initial_world(params(64, 64, 0.2, 7));
  auto const pop0      = ss::population(w);
  std::uint64_t births = 0, deaths = 0;
  for (std::uint32_t it = 1; it <= 100; ++it) {
    std::vector<std::uint32_t> age_before(w.age);
    std::vector<std::uint8_t> kind_before(w.kind);
    ss::step(w, it);
    // Births: agents of age 0 now; an agent never holds an age above its maximum.
    for (std::size_t c = 0; c < w.kind.size(); ++c) {
      if (w.kind[c] == ss::kEmpty) continue;
      ASSERT_LE(w.age[c], w.max_age[c]);
      births += w.age[c] == 0;
    }
    auto const before = std::count_if(
        kind_before.begin(), kind_before.end(), [](std::uint8_t k) { return k != ss::kEmpty; });
    auto const after =
        std::count_if(w.kind.begin(), w.kind.end(), [](std::uint8_t k) { return k != ss::kEmpty; });
    std::uint64_t born_now = 0;
    for (std::size_t c = 0; c < w.kind.size(); ++c)
      born_now += w.kind[c] != ss::kEmpty && w.age[c] == 0;
    deaths += static_cast<std::uint64_t>(before + static_cast<long>(born_now) - after);
  }
  EXPECT_GT(births, 50u);
  EXPECT_GT(deaths, 50u);
  EXPECT_GT(pop0.males + pop0.females, 0u);
}

TEST(SugarscapeRules, ParentsPayTheChildsEndowment) {
  // Phases 8 and 9 together move 2 * kMateCost from the parents to each child: the agents' sugar
  // is unchanged by them.
  ss::World w            = ss::initial_world(params(48, 48, 0.4, 11));
  std::uint64_t children = 0;
  for (std::uint32_t it = 1; it <= 40; ++it) {
    ss::Dense const d = w.dense();
    auto const n      = static_cast<std::uint32_t>(w.params.cells());
    for (std::uint32_t c = 0; c < n; ++c) d.live(c, w.capacity[c]);
    for (std::uint32_t c = 0; c < n; ++c) d.decide(it, c);
    for (std::uint32_t c = 0; c < n; ++c) d.pull(c);
    for (std::uint32_t c = 0; c < n; ++c) d.leave(it, c);
    for (std::uint32_t c = 0; c < n; ++c) d.harvest(c);
    for (std::uint32_t c = 0; c < n; ++c) d.propose(it, c);
    for (std::uint32_t c = 0; c < n; ++c) d.choose(it, c);
    auto const before = ss::population(w);
    for (std::uint32_t c = 0; c < n; ++c) d.born(it, c);
    for (std::uint32_t c = 0; c < n; ++c) d.pay(it, c);
    auto const after = ss::population(w);
    ASSERT_EQ(after.sugar_in_agents, before.sugar_in_agents) << "iteration " << it;
    children += (after.males + after.females) - (before.males + before.females);
  }
  EXPECT_GT(children, 20u);
}

TEST(SugarscapeRules, RefusesBadParameters) {
  EXPECT_THROW(ss::initial_world(params(2, 9, 0.2, 1)), std::invalid_argument);
  EXPECT_THROW(ss::initial_world(params(9, 9, 1.5, 1)), std::invalid_argument);
}

TEST(SugarscapeCheck, AcceptsTheReferencesOwnState) {
  ss::World w = ss::initial_world(params(40, 30, 0.3, 5));
  for (std::uint32_t it = 1; it <= 10; ++it) ss::step(w, it);
  EXPECT_FALSE(ss::check_state(ss::view_of(w), w).has_value());
}

TEST(SugarscapeCheck, ReportsEachKindOfBrokenState) {
  ss::World w = ss::initial_world(params(40, 30, 0.3, 5));
  for (std::uint32_t it = 1; it <= 10; ++it) ss::step(w, it);
  ss::StateView const good = ss::view_of(w);
  ASSERT_FALSE(good.agents.empty());
  std::uint32_t const c = good.agents.front().cell;

  ss::StateView s = good;
  s.sugar[0] += 1;
  expect_report(s, w, "cell (0, 0) holds");

  s = good;
  s.agents.front().traits.age += 1;
  expect_report(s, w, ": reference");

  s           = good;  // an agent missing from the grid and the heap
  s.handle[c] = 0;
  s.kind[c]   = ss::kEmpty;
  s.agents.erase(s.agents.begin());
  expect_report(s, w, ", app empty");

  s = good;  // an object the grid does not hold
  s.agents.push_back({0xABCDEFull, 1, s.agents.front().traits});
  expect_report(s, w, "a leaked object");

  s = good;  // a grid pointer to no object
  s.agents.erase(s.agents.begin());
  expect_report(s, w, "which is no live object");

  s         = good;
  s.kind[c] = s.kind[c] == ss::kMale ? ss::kFemale : ss::kMale;
  expect_report(s, w, "holds a pointer of kind");

  s = good;
  s.agents.push_back(s.agents.front());
  expect_report(s, w, "reported twice");
}

TEST(SugarscapeCheck, ComparesTwoStatesCellByCellWhateverTheirHandles) {
  ss::World w = ss::initial_world(params(40, 30, 0.3, 5));
  for (std::uint32_t it = 1; it <= 10; ++it) ss::step(w, it);
  ss::StateView const a = ss::view_of(w);
  ASSERT_FALSE(a.agents.empty());
  ss::StateView b = a;  // the same world with other handles (another heap's objects)
  for (auto& h : b.handle)
    if (h != 0) h += 0x1000;
  for (auto& v : b.agents) v.handle += 0x1000;
  EXPECT_FALSE(ss::compare_views(a, b, w.params).has_value());

  std::uint32_t const c = a.agents.front().cell;
  ss::StateView s       = b;
  s.agents.front().traits.vision += 1;
  auto v = ss::compare_views(a, s, w.params);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("vision"), std::string::npos) << *v;

  s = b;
  s.sugar[c] += 1;
  v = ss::compare_views(a, s, w.params);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("sugar vs"), std::string::npos) << *v;

  s           = b;  // the agent gone
  s.handle[c] = 0;
  v           = ss::compare_views(a, s, w.params);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("vs empty"), std::string::npos) << *v;

  s = b;  // a grid pointer to no object, in both states
  s.agents.erase(s.agents.begin());
  ss::StateView t = s;
  EXPECT_TRUE(ss::compare_views(s, t, w.params).has_value());
}

TEST(SugarscapeCheck, CatchesAFatherWhoDidNotPay) {
  // The planted bug's effect (sugarscape_father_does_not_pay): after an iteration with births,
  // each father holds kMateCost more than the reference's.
  ss::World w = ss::initial_world(params(48, 48, 0.4, 11));
  for (std::uint32_t it = 1; it <= 5; ++it) {
    ss::step(w, it);
    ss::StateView s   = ss::view_of(w);
    ss::Dense const d = w.dense();
    bool any          = false;
    for (auto& a : s.agents) {
      std::uint32_t const f = w.target[a.cell];
      if (a.traits.kind != ss::kMale || f == ss::kNone) continue;
      if (w.proposals[f] == ss::key(w.params, it, a.cell, ss::kProposePriority) &&
          w.target[f] != ss::kNone &&
          w.births[w.target[f]] == ss::key(w.params, it, f, ss::kBirthPriority)) {
        a.traits.sugar += ss::kMateCost;
        any = true;
      }
    }
    (void)d;
    if (!any) continue;
    expect_report(s, w, "Male sugar");
    return;
  }
  FAIL() << "no birth in 5 iterations";
}
