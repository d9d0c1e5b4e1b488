// CPU tests of traffic's network, rules, reference and checker (docs/apps.md "traffic"): the
// network as documented; every phase gives the same world whichever order its cells run in (what
// makes the GPU's threads equal the reference); cars appear, drive exactly their velocity along
// their path, enter a street at most one per iteration and leave at the end of their trip; the
// checker passes the reference's own state and reports each kind of broken state and the planted
// bug's world.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference.hpp"

namespace tr = heaplab::apps::traffic;

namespace {

tr::Params params(std::uint32_t w, std::uint32_t h, std::uint64_t seed, std::uint32_t spawn = 300) {
  tr::Params p;
  p.width           = w;
  p.height          = h;
  p.seed            = seed;
  p.spawn_per_mille = spawn;
  return p;
}

void step_reversed(tr::World& w, std::uint32_t it) {
  tr::Dense const d = w.dense();
  auto const n      = w.network->cells();
  std::fill(w.claims.begin(), w.claims.end(), tr::kNoKey);
  std::fill(w.incoming.begin(), w.incoming.end(), tr::kNone);
  auto each = [&](auto f) {
    for (std::uint32_t c = n; c-- > 0;) f(c);
  };
  each([&](std::uint32_t c) { d.decide(it, c); });
  each([&](std::uint32_t c) { d.resolve_move(it, c); });
  each([&](std::uint32_t c) { d.pull(c); });
  each([&](std::uint32_t c) { d.leave(c); });
  each([&](std::uint32_t c) { d.spawn(it, c); });
}

void expect_report(tr::StateView const& s, tr::World const& w, std::string const& fragment) {
  auto const v = tr::check_state(s, w);
  ASSERT_TRUE(v.has_value()) << "the broken state passed the checker";
  EXPECT_NE(v->find(fragment), std::string::npos) << *v;
}

}  // namespace

TEST(TrafficNetwork, StreetsTurnsAndProducersAreAsDocumented) {
  for (auto const& p : {params(1, 1, 1), params(3, 2, 2), params(17, 11, 3)}) {
    tr::Network const net(p);
    ASSERT_EQ(net.streets(), 4 * p.width * p.height);
    for (std::uint32_t s = 0; s < net.streets(); ++s) {
      std::uint32_t length = 0;
      for (std::uint32_t c = net.street_first[s]; c != tr::kNone; c = net.cell_next[c]) {
        ASSERT_EQ(net.cell_street[c], s);
        if (net.cell_producer[c] != 0) {
          ASSERT_EQ(c, net.street_first[s]) << "a producer inside a street";
        }
        ++length;
      }
      ASSERT_GE(length, tr::kMinStreet);
      ASSERT_LE(length, tr::kMaxStreet);
      ASSERT_GE(net.street_limit[s], tr::kMinLimit);
      ASSERT_LE(net.street_limit[s], tr::kMaxLimit);
      std::set<std::uint32_t> turns;
      for (std::uint32_t k = 0; k < 3; ++k) turns.insert(net.street_turns[3 * s + k]);
      ASSERT_EQ(turns.size(), 3u);
      ASSERT_EQ(turns.count(4 * (s / 4) + (s % 4 + 2) % 4) + 0,
                turns.count(4 * (s / 4) + (s % 4 + 2) % 4));
    }
    EXPECT_FALSE(net.producers.empty());
  }
  EXPECT_THROW(tr::Network(params(0, 4, 1)), std::invalid_argument);
}

TEST(TrafficRules, EveryPhaseGivesTheSameWorldInAnyOrderOfItsCells) {
  for (auto const& p :
       {params(1, 1, 1, 900), params(3, 2, 2), params(8, 8, 3, 600), params(13, 5, 4)}) {
    tr::Network const net(p);
    tr::World a = tr::initial_world(p, net), b = tr::initial_world(p, net);
    for (std::uint32_t it = 1; it <= 80; ++it) {
      tr::step(a, it);
      step_reversed(b, it);
      ASSERT_EQ(a.present, b.present) << p.width << "x" << p.height << " iteration " << it;
      ASSERT_EQ(a.id, b.id);
      ASSERT_EQ(a.velocity, b.velocity);
      ASSERT_EQ(a.trip, b.trip);
    }
  }
}

TEST(TrafficRules, CarsDriveTheirVelocityAlongTheirPathAndEnterAStreetOneAtATime) {
  tr::Params const p = params(10, 10, 7, 100);
  tr::Network const net(p);
  tr::Net const view    = net.view();
  tr::World w           = tr::initial_world(p, net);
  std::uint64_t spawned = 0, left = 0, crossings = 0;
  for (std::uint32_t it = 1; it <= 400; ++it) {
    std::map<std::uint64_t, std::uint32_t> before;  // id -> cell
    for (std::uint32_t c = 0; c < net.cells(); ++c)
      if (w.present[c] != 0) before[w.id[c]] = c;
    tr::step(w, it);
    std::set<std::uint64_t> ids;
    std::map<std::uint32_t, int> entered;  // street -> cars that came from another street
    for (std::uint32_t c = 0; c < net.cells(); ++c) {
      if (w.present[c] == 0) continue;
      ASSERT_TRUE(ids.insert(w.id[c]).second) << "car " << w.id[c] << " twice";
      ASSERT_LE(w.velocity[c], w.max_velocity[c]);
      ASSERT_GT(w.trip[c], 0u);
      auto const b = before.find(w.id[c]);
      if (b == before.end()) {
        ASSERT_NE(net.cell_producer[c], 0) << "a new car outside a producer";
        ++spawned;
        continue;
      }
      std::uint32_t at = b->second;
      for (std::uint32_t k = 0; k < w.velocity[c]; ++k) at = view.next(p, at, w.id[c]);
      ASSERT_EQ(at, c) << "car " << w.id[c] << " did not drive its velocity along its path";
      ASSERT_LE(w.velocity[c], net.street_limit[net.cell_street[b->second]]);
      bool crossed = false;  // did it leave a street's last cell on the way?
      for (std::uint32_t k = 0, x = b->second; k < w.velocity[c]; ++k, x = view.next(p, x, w.id[c]))
        crossed = crossed || net.cell_next[x] == tr::kNone;
      if (crossed) {
        ++crossings;
        ASSERT_EQ(++entered[net.cell_street[c]], 1)
            << "two cars entered street " << net.cell_street[c];
      }
    }
    for (auto const& [id, cell] : before) left += ids.count(id) == 0;
  }
  EXPECT_GT(spawned, 100u);
  EXPECT_GT(left, 50u);
  EXPECT_GT(crossings, 100u);
}

TEST(TrafficCheck, AcceptsTheReferencesOwnStateAndReportsBrokenOnes) {
  tr::Params const p = params(6, 5, 5, 800);
  tr::Network const net(p);
  tr::World w = tr::initial_world(p, net);
  for (std::uint32_t it = 1; it <= 30; ++it) tr::step(w, it);
  tr::StateView const good = tr::view_of(w);
  ASSERT_GE(good.cars.size(), 2u);
  EXPECT_FALSE(tr::check_state(good, w).has_value());
  std::uint32_t const c = good.cars.front().cell;

  tr::StateView s = good;
  s.cars.front().vehicle.trip += 1;
  expect_report(s, w, ": reference car");

  s           = good;
  s.handle[c] = 0;
  s.is_car[c] = 0;
  s.cars.erase(s.cars.begin());
  expect_report(s, w, ", app empty");

  s = good;
  s.cars.push_back({0xABCDEFull, 0, s.cars.front().vehicle});
  expect_report(s, w, "a leaked object");

  s = good;
  s.cars.erase(s.cars.begin());
  expect_report(s, w, "which is no live Car object");

  s = good;
  s.cars.push_back(s.cars.front());
  expect_report(s, w, "reported twice");
}

TEST(TrafficCheck, CatchesTheWorldOfCarsThatIgnoreTheirClaims) {
  // traffic_merge_without_claim's rule: cars that lose a street's claim enter it anyway.
  tr::Params const p = params(6, 6, 9, 900);
  tr::Network const net(p);
  tr::World good = tr::initial_world(p, net), bad = tr::initial_world(p, net);
  for (std::uint32_t it = 1; it <= 100; ++it) {
    tr::step(good, it);
    tr::Dense d     = bad.dense();
    d.ignore_claims = true;
    auto const n    = net.cells();
    std::fill(bad.claims.begin(), bad.claims.end(), tr::kNoKey);
    std::fill(bad.incoming.begin(), bad.incoming.end(), tr::kNone);
    for (std::uint32_t c = 0; c < n; ++c) d.decide(it, c);
    for (std::uint32_t c = 0; c < n; ++c) d.resolve_move(it, c);
    for (std::uint32_t c = 0; c < n; ++c) d.pull(c);
    for (std::uint32_t c = 0; c < n; ++c) d.leave(c);
    for (std::uint32_t c = 0; c < n; ++c) d.spawn(it, c);
    if (auto v = tr::check_state(tr::view_of(bad), good)) {
      SUCCEED() << "iteration " << it << ": " << *v;
      return;
    }
  }
  FAIL() << "ignoring the claims changed nothing in 100 iterations";
}

TEST(TrafficCheck, TheWorldOfAStateHasItsCarsAndTellsAnotherStateApart) {
  // world_of: how the variants on other allocators are compared with the heap variant's state.
  tr::Params const p = params(5, 4, 11);
  tr::Network const net(p);
  tr::World w = tr::initial_world(p, net);
  for (std::uint32_t it = 1; it <= 40; ++it) tr::step(w, it);
  tr::StateView const s = tr::view_of(w);
  ASSERT_FALSE(s.cars.empty());
  tr::World const back = tr::world_of(s, p, net);
  EXPECT_EQ(back.present, w.present);
  EXPECT_EQ(tr::population(back).cars, tr::population(w).cars);
  EXPECT_EQ(tr::population(back).moving, tr::population(w).moving);
  EXPECT_FALSE(tr::check_state(s, back).has_value());

  tr::StateView other = s;
  other.cars.front().vehicle.velocity += 1;
  expect_report(other, back, ": reference car");

  tr::StateView outside     = s;
  outside.cars.front().cell = net.cells();
  EXPECT_THROW((void)tr::world_of(outside, p, net), std::invalid_argument);
}
