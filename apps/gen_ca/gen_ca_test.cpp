// CPU tests of the generational CA's rule library and reference (docs/apps.md "gen-ca"): rule
// parsing and its errors, Life's still lifes and oscillators, the generations countdown, the
// seeded initial grid, and that the exact comparison `--check` uses catches the planted bug.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference.hpp"
#include "rule.hpp"

namespace ga = heaplab::apps::gen_ca;

namespace {

ga::Grid with_cells(std::uint32_t w,
                    std::uint32_t h,
                    std::initializer_list<std::pair<int, int>> xy) {
  ga::Grid g(w, h);
  for (auto [x, y] : xy)
    g.set(static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y), ga::kAlive);
  return g;
}

/// One generation with the GPU app's transition (app_next<SkipDying>), for the planted-bug test.
template <bool SkipDying>
ga::Grid app_step(ga::Grid const& g, ga::Rule const& rule) {
  ga::Grid next(g.width, g.height);
  for (std::uint32_t y = 0; y < g.height; ++y)
    for (std::uint32_t x = 0; x < g.width; ++x)
      next.set(x, y, ga::app_next<SkipDying>(rule, g.at(x, y), ga::alive_neighbours(g, x, y)));
  return next;
}

void expect_parse_error(std::string const& text, std::string const& fragment) {
  try {
    (void)ga::parse_rule(text);
    ADD_FAILURE() << "parse_rule(\"" << text << "\") accepted";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(GenCaRule, ParsesNamesAndNotation) {
  auto const life = ga::parse_rule("life");
  EXPECT_EQ(life.survive, (1u << 2) | (1u << 3));
  EXPECT_EQ(life.birth, 1u << 3);
  EXPECT_EQ(life.generations, 2u);
  auto const burst = ga::parse_rule("burst");
  EXPECT_EQ(burst.survive, 0b111101101u);  // 0 2 3 5 6 7 8
  EXPECT_EQ(burst.birth, 0b101011000u);    // 3 4 6 8
  EXPECT_EQ(burst.generations, 255u);
  auto const brain = ga::parse_rule("/2/3");  // Brian's Brain: empty survive set
  EXPECT_EQ(brain.survive, 0u);
  EXPECT_EQ(brain.birth, 1u << 2);
  EXPECT_EQ(brain.generations, 3u);
}

TEST(GenCaRule, ParseErrorsNameTheProblem) {
  expect_parse_error("23/3", "exactly two '/'");
  expect_parse_error("23/3/2/1", "exactly two '/'");
  expect_parse_error("29/3/2", "survive set has '9'");
  expect_parse_error("23/3x/2", "birth set has 'x'");
  expect_parse_error("233/3/2", "lists '3' twice");
  expect_parse_error("23/3/1", "outside 2..256");
  expect_parse_error("23/3/257", "outside 2..256");
  expect_parse_error("23/3/", "not an integer");
  expect_parse_error("23/3/-4", "not an integer");
  expect_parse_error("23/03/2", "0 neighbours");
  expect_parse_error("", "exactly two '/'");
}

TEST(GenCaRule, GenerationsCountDown) {
  auto const r = ga::parse_rule("2/3/5");  // states 0, 1, 2, 3, 4
  EXPECT_EQ(r.next(ga::kAlive, 2), ga::kAlive);
  EXPECT_EQ(r.next(ga::kAlive, 3), 2);  // starts dying
  EXPECT_EQ(r.next(2, 2), 3);           // dying cells ignore their neighbours
  EXPECT_EQ(r.next(3, 3), 4);
  EXPECT_EQ(r.next(4, 0), ga::kDead);  // dead after state C-1
  EXPECT_EQ(r.next(ga::kDead, 3), ga::kAlive);
  EXPECT_EQ(r.next(ga::kDead, 2), ga::kDead);
  // C = 2 (Life): an alive cell that does not survive is dead at once.
  EXPECT_EQ(ga::parse_rule("life").next(ga::kAlive, 4), ga::kDead);
  // C = 256: the last dying state is 255.
  auto const r256 = ga::parse_rule("/3/256");
  EXPECT_EQ(r256.next(254, 0), 255);
  EXPECT_EQ(r256.next(255, 0), ga::kDead);
}

TEST(GenCaReference, LifeBlockIsStill) {
  auto const life  = ga::parse_rule("life");
  auto const block = with_cells(6, 6, {{1, 1}, {2, 1}, {1, 2}, {2, 2}});
  EXPECT_EQ(ga::step(block, life).cells, block.cells);
}

TEST(GenCaReference, LifeBlinkerHasPeriodTwo) {
  auto const life       = ga::parse_rule("life");
  auto const horizontal = with_cells(5, 5, {{1, 2}, {2, 2}, {3, 2}});
  auto const vertical   = with_cells(5, 5, {{2, 1}, {2, 2}, {2, 3}});
  auto const one        = ga::step(horizontal, life);
  EXPECT_EQ(one.cells, vertical.cells);
  EXPECT_EQ(ga::step(one, life).cells, horizontal.cells);
}

TEST(GenCaReference, GliderWrapsAroundTheTorus) {
  auto const life  = ga::parse_rule("life");
  auto g           = with_cells(8, 8, {{1, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}});
  auto const start = g;
  for (int i = 0; i < 32; ++i) g = ga::step(g, life);  // 4 generations per cell, 8 cells
  EXPECT_EQ(g.cells, start.cells);
  EXPECT_EQ(ga::population(g).alive, 5u);
}

TEST(GenCaReference, DyingCellsBlockBirthAndCountDown) {
  auto const r = ga::parse_rule("/2/4");  // nothing survives; birth on 2
  auto g       = with_cells(6, 6, {{1, 1}, {2, 1}});
  g            = ga::step(g, r);
  EXPECT_EQ(g.at(1, 1), 2);
  EXPECT_EQ(g.at(2, 1), 2);
  EXPECT_EQ(ga::population(g).dying, 2u);
  EXPECT_EQ(ga::population(g).alive, 4u);  // (1,0), (2,0), (1,2), (2,2) have 2 alive neighbours
  g = ga::step(g, r);
  EXPECT_EQ(g.at(1, 1), 3);
  g = ga::step(g, r);
  EXPECT_EQ(g.at(1, 1), ga::kDead);
}

TEST(GenCaReference, InitialGridIsSeededAndValidated) {
  auto const a = ga::initial_grid(64, 32, 7, 0.3);
  auto const b = ga::initial_grid(64, 32, 7, 0.3);
  auto const c = ga::initial_grid(64, 32, 8, 0.3);
  EXPECT_EQ(a.cells, b.cells);
  EXPECT_NE(a.cells, c.cells);
  auto const alive = ga::population(a).alive;
  EXPECT_GT(alive, 64u * 32u / 5u);
  EXPECT_LT(alive, 64u * 32u * 2u / 5u);
  EXPECT_EQ(ga::population(ga::initial_grid(8, 8, 1, 1.0)).alive, 64u);
  EXPECT_EQ(ga::population(ga::initial_grid(8, 8, 1, 0.0)).alive, 0u);
  EXPECT_THROW((void)ga::initial_grid(0, 8, 1, 0.5), std::invalid_argument);
  EXPECT_THROW((void)ga::initial_grid(8, 8, 1, 1.5), std::invalid_argument);
}

TEST(GenCaCheck, FirstDifferenceIsRowMajor) {
  ga::Grid a(4, 3);
  ga::Grid b(4, 3);
  EXPECT_FALSE(ga::first_difference(a, b).has_value());
  b.set(3, 2, 7);
  b.set(2, 1, ga::kAlive);
  auto const d = ga::first_difference(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->x, 2u);
  EXPECT_EQ(d->y, 1u);
  EXPECT_EQ(d->expected, ga::kDead);
  EXPECT_EQ(d->actual, ga::kAlive);
  EXPECT_EQ(d->to_string(), "cell (2, 1): reference state 0, app state 1");
  EXPECT_THROW((void)ga::first_difference(a, ga::Grid(3, 4)), std::invalid_argument);
}

// The planted bug gen_ca_skip_dying (src/heaplab/core/mutants.hpp) kills a dying cell one
// generation early; the comparison against the reference must catch it in the first generation
// where a cell reaches its last dying state, and the correct transition must never differ.
TEST(GenCaCheck, CatchesThePlantedSkipDyingBug) {
  for (char const* text : {"burst", "/2/3", "2/3/5", "life"}) {
    auto const rule = ga::parse_rule(text);
    auto ref        = ga::initial_grid(48, 40, 12, 0.35);
    auto good       = ref;
    auto bad        = ref;
    int caught      = -1;
    for (int gen = 1; gen <= 300 && caught < 0; ++gen) {
      ref  = ga::step(ref, rule);
      good = app_step<false>(good, rule);
      bad  = app_step<true>(bad, rule);
      ASSERT_FALSE(ga::first_difference(ref, good).has_value()) << text << " generation " << gen;
      if (auto d = ga::first_difference(ref, bad)) {
        caught = gen;
        EXPECT_EQ(d->actual, ga::kDead) << d->to_string();
        EXPECT_EQ(std::uint32_t{d->expected} + 1u, rule.generations) << d->to_string();
      }
    }
    // A cell that starts dying in generation 1 reaches state C-1 in generation C-2.
    int const expected = rule.generations == 2 ? -1 : static_cast<int>(rule.generations) - 2;
    EXPECT_EQ(caught, expected) << text;
  }
}

namespace {

/// One generation as the GPU app computes it (gen_ca.cu: every alive cell adds 1 to the counter
/// of each of its 8 neighbours, found with app_neighbour<PowerOfTwoMask>; then Rule::next). A
/// count above 8 (the mask can send several adds to one cell) is passed as 9: no rule set has
/// that bit, as no shift of the device's 16-bit masks has.
template <bool PowerOfTwoMask>
ga::Grid scatter_step(ga::Grid const& g, ga::Rule const& rule) {
  std::vector<std::uint32_t> count(g.cells.size(), 0);
  for (std::uint32_t i = 0; i < g.cells.size(); ++i) {
    if (g.cells[i] != ga::kAlive) continue;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        if (dx != 0 || dy != 0)
          ++count[ga::app_neighbour<PowerOfTwoMask>(g.width, g.height, i, dx, dy)];
  }
  ga::Grid next(g.width, g.height);
  for (std::size_t i = 0; i < g.cells.size(); ++i)
    next.cells[i] = rule.next(g.cells[i], std::min(count[i], 9u));
  return next;
}

/// The first generation (1..generations) where the scatter step with PowerOfTwoMask differs from
/// the reference; -1 when none does. The correct scatter step must never differ.
template <bool PowerOfTwoMask>
int first_wrong_generation(std::uint32_t w, std::uint32_t h, char const* rule_text, int gens) {
  auto const rule = ga::parse_rule(rule_text);
  auto ref        = ga::initial_grid(w, h, 5, 0.3);
  auto good       = ref;
  auto app        = ref;
  for (int gen = 1; gen <= gens; ++gen) {
    ref  = ga::step(ref, rule);
    good = scatter_step<false>(good, rule);
    app  = scatter_step<PowerOfTwoMask>(app, rule);
    EXPECT_FALSE(ga::first_difference(ref, good).has_value()) << w << "x" << h << " gen " << gen;
    if (ga::first_difference(ref, app).has_value()) return gen;
  }
  return -1;
}

}  // namespace

// The planted bug gen_ca_wrap_assumes_pow2 wraps the torus with `& (side - 1)`: exact on
// power-of-two sides (the old fixed shapes, 128 x 128 and 64 x 32 here), wrong on any other side,
// where the comparison `--check` makes catches it in generation 1 (odd, prime, non-square and a
// square non-power-of-two shape).
TEST(GenCaCheck, CatchesThePlantedPowerOfTwoWrapBugOnOtherSides) {
  for (char const* rule : {"life", "/2/3", "burst"}) {
    EXPECT_EQ(first_wrong_generation<true>(128, 128, rule, 30), -1) << rule;
    EXPECT_EQ(first_wrong_generation<true>(64, 32, rule, 30), -1) << rule;
    EXPECT_EQ(first_wrong_generation<true>(67, 17, rule, 30), 1) << rule;
    EXPECT_EQ(first_wrong_generation<true>(64, 48, rule, 30), 1) << rule;
    EXPECT_EQ(first_wrong_generation<true>(5, 7, rule, 30), 1) << rule;
    EXPECT_EQ(first_wrong_generation<true>(96, 96, rule, 30), 1) << rule;
  }
}
