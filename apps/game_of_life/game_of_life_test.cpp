// CPU tests of game-of-life's checker and of the sequential model of its GPU phases
// (docs/apps.md "game-of-life"): the model of the correct app keeps every invariant and the
// reference's alive cells for many generations on many shapes; each kind of broken state is
// reported; the model with either planted bug is caught by the checker.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference.hpp"

namespace gl = heaplab::apps::game_of_life;
namespace ga = heaplab::apps::gen_ca;

namespace {

/// Runs the model and the dense reference side by side for `generations`; returns the first
/// checker report (with the generation), or nullopt.
std::optional<std::string> run(ga::Grid const& initial, int generations, gl::Bugs bugs = {}) {
  ga::Rule const life = ga::parse_rule("life");
  gl::Model model(initial, life, bugs);
  ga::Grid previous = initial, current = initial;
  if (auto v = gl::check_world(model.world(), current, previous)) return "generation 0: " + *v;
  for (int g = 1; g <= generations; ++g) {
    model.step();
    previous = current;
    current  = ga::step(current, life);
    if (auto v = gl::check_world(model.world(), current, previous))
      return "generation " + std::to_string(g) + ": " + *v;
  }
  return std::nullopt;
}

ga::Grid glider(std::uint32_t w, std::uint32_t h) {
  ga::Grid g(w, h);
  g.set(1, 0, ga::kAlive);
  g.set(2, 1, ga::kAlive);
  g.set(0, 2, ga::kAlive);
  g.set(1, 2, ga::kAlive);
  g.set(2, 2, ga::kAlive);
  return g;
}

/// A consistent world for tests to break: the model's after `generations`.
struct Fixture {
  ga::Grid previous, current;
  gl::World world;
};
Fixture settled(std::uint32_t w, std::uint32_t h, int generations) {
  ga::Rule const life    = ga::parse_rule("life");
  ga::Grid const initial = ga::initial_grid(w, h, 5, 0.35);
  gl::Model model(initial, life);
  Fixture f{initial, initial, {}};
  for (int g = 0; g < generations; ++g) {
    model.step();
    f.previous = f.current;
    f.current  = ga::step(f.current, life);
  }
  f.world = model.world();
  return f;
}

void drop(std::vector<gl::ObjectView>& objects, std::uint64_t handle) {
  objects.erase(std::remove_if(objects.begin(),
                               objects.end(),
                               [&](gl::ObjectView const& o) { return o.handle == handle; }),
                objects.end());
}

/// The alive cells of a world.
std::vector<bool> alive_cells(gl::World const& w) {
  std::vector<bool> out(w.kind.size());
  for (std::size_t i = 0; i < w.kind.size(); ++i) out[i] = w.kind[i] == gl::Kind::kAlive;
  return out;
}

void expect_report(Fixture const& f, std::string const& fragment) {
  auto const v = gl::check_world(f.world, f.current, f.previous);
  ASSERT_TRUE(v.has_value()) << "the broken state passed the checker";
  EXPECT_NE(v->find(fragment), std::string::npos) << *v;
}

}  // namespace

TEST(GameOfLifeModel, FollowsTheDenseReferenceOnManyShapes) {
  // Non-square, odd, prime and tiny tori (3 x 3: every cell is every other's neighbour),
  // sparse to dense.
  struct Shape {
    std::uint32_t w, h;
    double density;
  };
  for (Shape s : {Shape{3, 3, 0.5},
                  Shape{5, 7, 0.3},
                  Shape{64, 48, 0.3},
                  Shape{67, 17, 0.1},
                  Shape{31, 101, 0.6},
                  Shape{1, 9, 0.5},
                  Shape{128, 1, 0.5}})
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      auto const v = run(ga::initial_grid(s.w, s.h, seed, s.density), 40);
      EXPECT_FALSE(v.has_value()) << s.w << "x" << s.h << " density " << s.density << " seed "
                                  << seed << ": " << *v;
    }
}

TEST(GameOfLifeModel, AGliderCrossesTheTorus) {
  ga::Rule const life = ga::parse_rule("life");
  gl::Model model(glider(12, 9), life);
  for (int g = 0; g < 4 * 12 * 9; ++g) model.step();
  // A glider moves one cell diagonally every 4 generations: after 4 * lcm-free 108 steps it has
  // moved (108, 108) = (0, 0) mod (12, 9): back where it started, still five cells (the
  // candidates around it may differ: they are dropped one generation late).
  std::uint32_t alive = 0;
  for (gl::ObjectView const& o : model.world().objects) alive += o.kind == gl::Kind::kAlive;
  EXPECT_EQ(alive, 5u);
  EXPECT_EQ(alive_cells(model.world()), alive_cells(gl::Model(glider(12, 9), life).world()));
}

TEST(GameOfLifeModel, RefusesADyingCell) {
  ga::Grid g(4, 4);
  g.set(1, 1, 2);
  EXPECT_THROW(gl::Model(g, ga::parse_rule("life")), std::invalid_argument);
}

TEST(GameOfLifeCheck, AcceptsTheModelsState) {
  Fixture const f = settled(40, 30, 6);
  EXPECT_FALSE(gl::check_world(f.world, f.current, f.previous).has_value());
}

TEST(GameOfLifeCheck, ReportsACellAliveOnlyInTheReference) {
  Fixture f          = settled(40, 30, 6);
  f.current.cells[0] = f.current.cells[0] == ga::kAlive ? ga::kDead : ga::kAlive;
  expect_report(f, "cell (0, 0): reference");
}

TEST(GameOfLifeCheck, ReportsAMissingCandidate) {
  Fixture f = settled(40, 30, 6);
  for (std::size_t i = 0; i < f.world.kind.size(); ++i)
    if (f.world.kind[i] == gl::Kind::kCandidate &&
        ga::alive_neighbours(f.current,
                             static_cast<std::uint32_t>(i % 40),
                             static_cast<std::uint32_t>(i / 40)) > 0) {
      // Drop the object and the grid entry together: only I2 can see it.
      std::uint64_t const h = f.world.handle[i];
      f.world.handle[i]     = 0;
      f.world.kind[i]       = gl::Kind::kEmpty;
      drop(f.world.objects, h);
      break;
    }
  expect_report(f, "holds no Candidate");
}

TEST(GameOfLifeCheck, ReportsAStaleCandidate) {
  Fixture f = settled(40, 30, 6);
  ga::Grid const empty(40, 30);
  f.current = f.previous = empty;
  // Every alive cell is gone from both generations: the alive cells are reported first, so
  // keep only candidates in the world.
  std::vector<gl::ObjectView> kept;
  for (std::size_t i = 0; i < f.world.kind.size(); ++i)
    if (f.world.kind[i] == gl::Kind::kAlive) {
      f.world.handle[i] = 0;
      f.world.kind[i]   = gl::Kind::kEmpty;
    }
  for (auto const& o : f.world.objects)
    if (o.kind == gl::Kind::kCandidate) kept.push_back(o);
  f.world.objects = kept;
  expect_report(f, "a stale candidate");
}

TEST(GameOfLifeCheck, ReportsALeakedObject) {
  Fixture f = settled(40, 30, 6);
  f.world.objects.push_back({0xFFFF0000ull, gl::Kind::kCandidate, 3});
  expect_report(f, "is not in the grid");
}

TEST(GameOfLifeCheck, ReportsAGridPointerToNoObject) {
  Fixture f = settled(40, 30, 6);
  for (std::size_t i = 0; i < f.world.kind.size(); ++i)
    if (f.world.kind[i] == gl::Kind::kCandidate) {
      std::uint64_t const h = f.world.handle[i];
      drop(f.world.objects, h);
      break;
    }
  expect_report(f, "which is no live object");
}

TEST(GameOfLifeCheck, ReportsAnObjectTwiceAndAWrongCell) {
  Fixture f = settled(40, 30, 6);
  Fixture g = f;
  f.world.objects.push_back(f.world.objects.front());
  expect_report(f, "reported twice");
  g.world.objects.front().cell += 1;
  expect_report(g, "is not in the grid");
}

TEST(GameOfLifeCheck, ReportsAPointerOfTheWrongKind) {
  Fixture f = settled(40, 30, 6);
  for (std::size_t i = 0; i < f.world.kind.size(); ++i)
    if (f.world.kind[i] == gl::Kind::kAlive) {
      f.world.kind[i] = gl::Kind::kCandidate;
      break;
    }
  expect_report(f, "holds a pointer of kind Candidate to a Alive object");
}

TEST(GameOfLifeCheck, CatchesThePlantedOrthogonalCandidatesBug) {
  // A glider's new cells have diagonal neighbours that only they touch.
  auto const v = run(glider(16, 16), 8, {true, false});
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("holds no Candidate"), std::string::npos) << *v;
  // A random grid too: its initial cells already spread their candidates with the bug, so the
  // check of generation 0 (before any step) reports it.
  auto const w = run(ga::initial_grid(64, 48, 3, 0.3), 2, {true, false});
  ASSERT_TRUE(w.has_value());
  EXPECT_NE(w->find("generation 0: "), std::string::npos) << *w;
}

TEST(GameOfLifeCheck, CatchesThePlantedCandidateWithoutCasBug) {
  auto const v = run(ga::initial_grid(64, 48, 3, 0.3), 2, {false, true});
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("a leaked object"), std::string::npos) << *v;
}

TEST(GameOfLifeCheck, RefusesGridsOfOtherSizes) {
  Fixture const f = settled(10, 10, 1);
  EXPECT_THROW((void)gl::check_world(f.world, ga::Grid(10, 11), f.previous), std::invalid_argument);
}
