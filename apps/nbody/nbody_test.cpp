// CPU tests of nbody / collision's physics, reference and checker (docs/apps.md "nbody",
// "collision"): the seeded initial bodies, pair forces (antisymmetric bitwise), merges (mass,
// momentum, centre of mass, who absorbs, mutual pairs only), conservation in the reference, and
// that check_state / compare_states report broken states (lost mass, momentum drift, a count
// mismatch, a heap count mismatch, bad masses, NaN) and the planted bug.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "physics.hpp"
#include "reference.hpp"

namespace nb = heaplab::apps::nbody;

namespace {

nb::BodyRecord body(double x, double y, double vx, double vy, double m) {
  return {{x, y}, {vx, vy}, m, true};
}

nb::Expected expected_for(nb::State const& initial, bool collision) {
  nb::Expected e;
  e.initial   = nb::totals(initial);
  e.collision = collision;
  return e;
}

void expect_violation(nb::State const& s, nb::Expected const& e, std::string const& fragment) {
  auto const v = nb::check_state(s, e);
  ASSERT_TRUE(v.has_value()) << "no violation reported, expected one with '" << fragment << "'";
  EXPECT_NE(v->find(fragment), std::string::npos) << *v;
}

}  // namespace

TEST(NbodyInitial, SeededDeterministicAndInRange) {
  auto const a = nb::initial_bodies(1000, 7, 0.1);
  auto const b = nb::initial_bodies(1000, 7, 0.1);
  auto const c = nb::initial_bodies(1000, 8, 0.1);
  ASSERT_EQ(a.size(), 1000u);
  double mass = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].pos.x, b[i].pos.x);
    EXPECT_TRUE(a[i].alive);
    EXPECT_LE(std::fabs(a[i].pos.x), 1.0);
    EXPECT_LE(std::fabs(a[i].pos.y), 1.0);
    EXPECT_LE(std::fabs(a[i].vel.x), 0.1);
    EXPECT_GT(a[i].mass, 0.0);
    mass += a[i].mass;
  }
  EXPECT_NEAR(mass, 1.0, 0.05);
  EXPECT_NE(a[0].pos.x, c[0].pos.x);
  EXPECT_THROW(nb::initial_bodies(0, 1, 0.1), std::invalid_argument);
  EXPECT_THROW(nb::initial_bodies(4, 1, -1.0), std::invalid_argument);
}

TEST(NbodyPhysics, PairForceIsAntisymmetricBitwiseAndAttractive) {
  nb::Vec2 const a{0.1234567, -0.7654321};
  nb::Vec2 const b{-0.333, 0.4441};
  auto const fab = nb::pair_force(a, 0.0031, b, 0.0017, 1e-4);
  auto const fba = nb::pair_force(b, 0.0017, a, 0.0031, 1e-4);
  EXPECT_EQ(fab.x, -fba.x);
  EXPECT_EQ(fab.y, -fba.y);
  EXPECT_LT(fab.x, 0.0);  // b is left of a: a is pulled left
  EXPECT_GT(fab.y, 0.0);
}

TEST(NbodyPhysics, MergeConservesMassAndMomentumAtTheCentreOfMass) {
  auto const m = nb::merge<false>({0, 0}, {1, 0}, 3.0, {4, 0}, {0, 2}, 1.0);
  EXPECT_DOUBLE_EQ(m.mass, 4.0);
  EXPECT_DOUBLE_EQ(m.pos.x, 1.0);
  EXPECT_DOUBLE_EQ(m.vel.x * m.mass, 3.0);
  EXPECT_DOUBLE_EQ(m.vel.y * m.mass, 2.0);
  auto const bug = nb::merge<true>({0, 0}, {1, 0}, 3.0, {4, 0}, {0, 2}, 1.0);
  EXPECT_DOUBLE_EQ(bug.mass, 3.0);  // the planted bug loses the absorbed mass
  EXPECT_TRUE(nb::absorbs(2.0, 5, 1.0, 1));
  EXPECT_FALSE(nb::absorbs(1.0, 1, 2.0, 5));
  EXPECT_TRUE(nb::absorbs(1.0, 1, 1.0, 5));  // equal masses: lower id
  EXPECT_FALSE(nb::absorbs(1.0, 5, 1.0, 1));
}

TEST(NbodyReference, TwoBodiesAttractAndConserve) {
  nb::State s{body(-0.5, 0, 0, 0, 1.0), body(0.5, 0, 0, 0, 2.0)};
  nb::Reference ref(s, {0.01, 0.01, 0.0});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ref.step(), 0u);
  auto const& r = ref.state();
  EXPECT_GT(r[0].pos.x, -0.5);
  EXPECT_LT(r[1].pos.x, 0.5);
  EXPECT_FALSE(nb::check_state(r, expected_for(s, false)).has_value());
}

TEST(NbodyReference, MutualNearestPairMergesHeavierAbsorbs) {
  // 0 and 1 are mutual nearest (0.01 apart); 2 is 0.015 from 1: its nearest is 1, but 1's is 0,
  // so only (0, 1) merges in the first iteration; 1 is heavier and absorbs 0.
  nb::State s{body(0, 0, 0.1, 0, 1.0), body(0.01, 0, -0.1, 0, 2.0), body(0.025, 0, 0, 0, 1.0)};
  nb::Reference ref(s, {1e-9, 0.01, 0.02});
  EXPECT_EQ(ref.step(), 1u);
  auto const& r = ref.state();
  EXPECT_FALSE(r[0].alive);
  EXPECT_TRUE(r[1].alive);
  EXPECT_TRUE(r[2].alive);
  EXPECT_DOUBLE_EQ(r[1].mass, 3.0);
  auto e   = expected_for(s, true);
  e.merges = 1;
  EXPECT_FALSE(nb::check_state(r, e).has_value()) << *nb::check_state(r, e);
  EXPECT_EQ(ref.step(), 1u);  // now 1 and 2 are mutual
  EXPECT_FALSE(ref.state()[2].alive);
  EXPECT_DOUBLE_EQ(ref.state()[1].mass, 4.0);
}

TEST(NbodyReference, SmallCollisionMergesAtOnce) {
  // The planted-bug test's run (planted_bug_test.sh): merges in iteration 1.
  auto const s = nb::initial_bodies(512, 1, 0.1);
  nb::Reference ref(s, {0.001, 0.01, 0.01});
  EXPECT_GT(ref.step(), 0u);
}

TEST(NbodyReference, ConservesOverManyStepsWithinTheDefaultTolerances) {
  for (bool collision : {false, true}) {
    auto const s = nb::initial_bodies(256, 3, 0.1);
    nb::Reference ref(s, {0.002, 0.01, collision ? 0.02 : 0.0});
    std::uint64_t merges = 0;
    for (int i = 0; i < 200; ++i) merges += ref.step();
    auto e   = expected_for(s, collision);
    e.merges = merges;
    if (collision) {
      EXPECT_GT(merges, 10u);
    }
    auto const v = nb::check_state(ref.state(), e);
    EXPECT_FALSE(v.has_value()) << *v;
  }
}

TEST(NbodyCheck, ReportsBrokenStates) {
  auto const s = nb::initial_bodies(64, 5, 0.1);
  nb::Reference ref(s, {0.001, 0.01, 0.05});
  std::uint64_t merges = 0;
  for (int i = 0; i < 5; ++i) merges += ref.step();
  ASSERT_GT(merges, 0u);
  auto e               = expected_for(s, true);
  e.merges             = merges;
  nb::State const good = ref.state();
  ASSERT_FALSE(nb::check_state(good, e).has_value());

  std::size_t live = 0;
  while (!good[live].alive) ++live;

  nb::State lost = good;  // mass lost (the planted bug's symptom)
  lost[live].mass *= 0.5;
  expect_violation(lost, e, "total mass");

  nb::State drift = good;  // momentum drift beyond the tolerance, mass unchanged
  drift[live].vel.x += 1e-3;
  expect_violation(drift, e, "total momentum drifted");

  auto counted   = e;  // count mismatch: one merge more than bodies gone
  counted.merges = merges + 1;
  expect_violation(good, counted, "live bodies, expected");

  nb::State vanished   = good;  // a body gone without a merge
  vanished[live].alive = false;
  expect_violation(vanished, e, "live bodies, expected");

  auto heap              = e;
  heap.heap_live_objects = e.initial.bodies - merges + 1;  // a leaked object
  expect_violation(good, heap, "the heap holds");

  nb::State nan   = good;
  nan[live].pos.y = std::nan("");
  expect_violation(nan, e, "NaN");

  nb::State zero  = good;
  zero[live].mass = 0;
  expect_violation(zero, e, "<= 0");
}

TEST(NbodyCheck, NbodyMassMustBeExact) {
  auto const s = nb::initial_bodies(64, 5, 0.1);
  nb::State t  = s;
  t[3].mass *= 1 + 1e-12;  // changes the sum (one ulp of a body's mass may round away)
  expect_violation(t, expected_for(s, false), "must be equal exactly");
  // the same change is within the collision's relative mass tolerance
  EXPECT_FALSE(nb::check_state(t, expected_for(s, true)).has_value());
}

TEST(NbodyCheck, CatchesThePlantedDropsMassBug) {
  // A state where one merge was done with merge<true> (the mutant's arithmetic).
  nb::State s{body(0, 0, 0.1, 0, 1.0), body(0.01, 0, -0.1, 0, 2.0)};
  auto e        = expected_for(s, true);
  e.merges      = 1;
  nb::State bug = s;
  auto const m  = nb::merge<true>(s[1].pos, s[1].vel, s[1].mass, s[0].pos, s[0].vel, s[0].mass);
  bug[1]        = {m.pos, m.vel, m.mass, true};
  bug[0].alive  = false;
  expect_violation(bug, e, "total mass");
  nb::State ok = s;
  auto const g = nb::merge<false>(s[1].pos, s[1].vel, s[1].mass, s[0].pos, s[0].vel, s[0].mass);
  ok[1]        = {g.pos, g.vel, g.mass, true};
  ok[0].alive  = false;
  EXPECT_FALSE(nb::check_state(ok, e).has_value());
}

TEST(NbodyCheck, CompareStatesNamesTheFirstDifference) {
  auto const s = nb::initial_bodies(16, 2, 0.1);
  EXPECT_FALSE(nb::compare_states(s, s, 0.0).has_value());
  nb::State t = s;
  t[4].pos.x += 1e-3;
  auto d = nb::compare_states(s, t, 1e-6);
  ASSERT_TRUE(d.has_value());
  EXPECT_NE(d->find("body 4: position"), std::string::npos) << *d;
  EXPECT_FALSE(nb::compare_states(s, t, 1e-2).has_value());
  nb::State u = s;
  u[9].alive  = false;
  d           = nb::compare_states(s, u, 1e-6);
  ASSERT_TRUE(d.has_value());
  EXPECT_NE(d->find("body 9 is alive in the reference"), std::string::npos) << *d;
  EXPECT_TRUE(nb::compare_states(s, nb::State(3), 1.0).has_value());
}

namespace {

/// One nbody iteration as the baseline computes it (nbody.cu baseline_force_kernel, then
/// baseline_move_kernel): forces in index order over force_sources<SkipsTailTile>(n) bodies.
template <bool SkipsTailTile>
nb::State baseline_step(nb::State s, double dt, double eps2) {
  auto const n               = static_cast<std::uint32_t>(s.size());
  std::uint32_t const others = nb::force_sources<SkipsTailTile>(n);
  std::vector<nb::Vec2> force(n);
  for (std::uint32_t i = 0; i < n; ++i)
    for (std::uint32_t j = 0; j < others; ++j) {
      if (j == i) continue;
      nb::Vec2 const d = nb::pair_force(s[i].pos, s[i].mass, s[j].pos, s[j].mass, eps2);
      force[i].x += d.x;
      force[i].y += d.y;
    }
  for (std::uint32_t i = 0; i < n; ++i) nb::move(s[i].pos, s[i].vel, force[i], s[i].mass, dt);
  return s;
}

}  // namespace

// The planted bug nbody_force_skips_tail_tile drops the last n % 32 bodies from every force sum:
// on a body count that is a multiple of the tile (the old fixed 1024, 512) the baseline is the
// reference bitwise; on any other count (1000, 33, the prime 997) the momentum check of --check
// catches the first iteration, and the correct loop passes the same run.
TEST(NbodyCheck, CatchesThePlantedTailTileBugOnCountsNotAMultipleOfTheTile) {
  nb::Physics const physics;  // NbodyOptions' defaults: dt 0.001, softening 0.01
  double const dt   = physics.dt;
  double const eps2 = physics.softening * physics.softening;
  for (std::uint32_t n : {1024u, 512u, 1000u, 33u, 997u}) {
    auto const initial = nb::initial_bodies(n, 1, 0.1);
    auto const e       = expected_for(initial, false);
    nb::Reference ref(initial, physics);
    ref.step();
    auto const good = baseline_step<false>(initial, dt, eps2);
    auto const bad  = baseline_step<true>(initial, dt, eps2);
    EXPECT_FALSE(nb::check_state(good, e).has_value()) << n;
    EXPECT_FALSE(nb::compare_states(ref.state(), good, 0.0).has_value()) << n;
    if (n % nb::kForceTile == 0) {
      EXPECT_FALSE(nb::compare_states(ref.state(), bad, 0.0).has_value()) << n;
    } else {
      expect_violation(bad, e, "total momentum drifted");
    }
  }
}
