// CPU tests of wa-tor's rules, reference and checker (docs/apps.md "wa-tor"): the reference keeps
// every invariant, is reproducible, and the checker flags broken states (an agent in two cells, a
// dangling pointer, a leaked object, a population mismatch, out-of-range timers and energies).
#include <gtest/gtest.h>

#include <string>

#include "reference.hpp"

namespace wt = heaplab::apps::wa_tor;

namespace {

wt::Params small() {
  wt::Params p;
  p.width  = 32;
  p.height = 24;
  p.seed   = 5;
  return p;
}

std::string flagged(wt::Params const& p,
                    wt::StateView const& s,
                    wt::Population prev,
                    wt::Counters c = {}) {
  auto const r = wt::check_state(p, s, prev, c);
  return r.violation ? r.violation->to_string(p) : std::string();
}

}  // namespace

TEST(WaTorRules, NeighboursWrapAround) {
  auto const p = small();
  EXPECT_EQ(wt::neighbour(p, 0, 0), (p.height - 1) * p.width);
  EXPECT_EQ(wt::neighbour(p, 0, 3), p.width - 1);
  EXPECT_EQ(wt::neighbour(p, p.width - 1, 1), 0u);
  for (std::uint32_t d = 0; d < 4; ++d)
    EXPECT_EQ(wt::neighbour(p, wt::neighbour(p, 77, d), wt::opposite(d)), 77u);
}

TEST(WaTorRules, CellAcceptsExactlyOneRequester) {
  auto const p = small();
  EXPECT_EQ(wt::accept_request(p, 1, 0, 40, 0), wt::kNone);
  for (std::uint32_t m = 1; m < 16; ++m) {
    std::uint32_t const a = wt::accept_request(p, 3, 1, 40, m);
    bool found            = false;
    for (std::uint32_t d = 0; d < 4; ++d) found |= ((m >> d) & 1u) && wt::neighbour(p, 40, d) == a;
    EXPECT_TRUE(found) << m;
  }
}

TEST(WaTorReference, KeepsEveryInvariantAndIsReproducible) {
  auto const p = small();
  auto w       = wt::initial_world(p, 0.3, 0.05);
  auto w2      = w;
  auto prev    = wt::population(w);
  EXPECT_GT(prev.fish, 0u);
  EXPECT_GT(prev.sharks, 0u);
  bool births = false, eaten = false, starved = false;
  for (std::uint32_t it = 1; it <= 60; ++it) {
    auto const c = wt::step(w, it);
    EXPECT_EQ(wt::step(w2, it), c);
    births |= c.fish_births > 0 && c.shark_births > 0;
    eaten |= c.fish_eaten > 0;
    starved |= c.shark_starved > 0;
    auto const r = wt::check_state(p, wt::view_of(w), prev, c);
    ASSERT_FALSE(r.violation) << "iteration " << it << ": " << r.violation->to_string(p);
    prev = r.population;
  }
  EXPECT_EQ(w.kind, w2.kind);
  EXPECT_TRUE(births && eaten && starved);
}

TEST(WaTorReference, RejectsBadParameters) {
  auto p = small();
  EXPECT_THROW(wt::initial_world(p, 0.7, 0.4), std::invalid_argument);
  p.max_energy = 2;
  EXPECT_THROW(wt::initial_world(p, 0.3, 0.05), std::invalid_argument);
}

TEST(WaTorCheck, FlagsBrokenStates) {
  auto const p   = small();
  auto const w   = wt::initial_world(p, 0.3, 0.05);
  auto const pop = wt::population(w);
  auto const ok  = wt::view_of(w);
  EXPECT_EQ(flagged(p, ok, pop), "");
  std::uint32_t a = 0, e = 0;  // an occupied and an empty cell
  while (ok.cells[a].agent == 0) ++a;
  while (ok.cells[e].agent != 0) ++e;

  auto two     = ok;  // an agent in two cells
  two.cells[e] = two.cells[a];
  EXPECT_NE(flagged(p, two, pop).find("agent in two cells"), std::string::npos);

  auto dangling     = ok;  // a cell pointer to no live object
  dangling.cells[e] = {0xDEAD, wt::kFish};
  EXPECT_NE(flagged(p, dangling, pop).find("dangling pointer"), std::string::npos);

  auto leaked = ok;  // the planted bug: an eaten fish's object is still live
  leaked.agents.push_back({0xBEEF, wt::kFish, a, 0, 0});
  EXPECT_NE(flagged(p, leaked, pop).find("leaked"), std::string::npos);

  auto live         = ok;  // the allocator holds one object more than the cells
  live.live_objects = ok.agents.size() + 1;
  EXPECT_NE(flagged(p, live, pop).find("leak"), std::string::npos);

  auto mismatch = pop;  // population not previous + births - deaths
  EXPECT_NE(flagged(p, ok, pop, {0, 1, 0, 0}).find("previous + births - deaths"),
            std::string::npos);
  mismatch.sharks += 1;
  EXPECT_NE(flagged(p, ok, mismatch).find("previous + births - deaths"), std::string::npos);

  auto energy = ok;
  for (auto& ag : energy.agents)
    if (ag.kind == wt::kShark) {
      ag.energy = p.max_energy + 1;
      break;
    }
  EXPECT_NE(flagged(p, energy, pop).find("shark energy"), std::string::npos);

  auto timer                 = ok;
  timer.agents.front().timer = 1000;
  EXPECT_NE(flagged(p, timer, pop).find("timer"), std::string::npos);
}

// The planted bug wa_tor_north_wrap_uses_width (rules.hpp): the GPU app's agents take the row
// above as (y + width - 1) % height. That is the real north neighbour of every cell when the width
// is a multiple of the height (square grids, 64 x 32) and of no cell otherwise (64 x 48, odd and
// prime sides), so --check catches it on those shapes only; the other directions are unchanged.
TEST(WaTorRules, PlantedNorthWrapBugShowsOnlyWhenTheWidthIsNoMultipleOfTheHeight) {
  struct Shape {
    std::uint32_t w, h;
    bool same;
  };
  for (Shape const s : {Shape{48, 48, true},
                        Shape{64, 32, true},
                        Shape{97, 97, true},
                        Shape{64, 48, false},
                        Shape{67, 17, false},
                        Shape{13, 31, false}}) {
    wt::Params p;
    p.width              = s.w;
    p.height             = s.h;
    std::uint32_t differ = 0;
    auto const cells     = static_cast<std::uint32_t>(p.cells());
    for (std::uint32_t c = 0; c < cells; ++c) {
      differ += wt::neighbour<true>(p, c, 0) != wt::neighbour(p, c, 0) ? 1u : 0u;
      for (std::uint32_t d = 1; d < 4; ++d)
        EXPECT_EQ(wt::neighbour<true>(p, c, d), wt::neighbour(p, c, d)) << s.w << "x" << s.h;
    }
    EXPECT_EQ(differ, s.same ? 0u : cells) << s.w << "x" << s.h;
  }
}
