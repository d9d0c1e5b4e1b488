// The random problem shapes (shapes.hpp): deterministic per seed, within the documented ranges,
// every kind of shape the issue asks for drawn (non-square, odd, prime sides; sparse and dense;
// body counts that are not powers of two), options the command line gave kept, and the printed
// words naming exactly the values set.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gen_ca/rule.hpp"
#include "shapes.hpp"

namespace heaplab::apps {
namespace {

Given const kNothingGiven = [](std::string const&) { return false; };

bool is_prime(std::uint32_t n) {
  if (n < 2) return false;
  for (std::uint32_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

bool has_word(std::string const& words, std::string const& option, std::string const& value) {
  return (" " + words + " ").find(" " + option + " " + value + " ") != std::string::npos;
}

TEST(AppShapes, TheSameSeedDrawsTheSameShape) {
  gen_ca::GenCaOptions a, b;
  EXPECT_EQ(draw_gen_ca_shape(7, kNothingGiven, a), draw_gen_ca_shape(7, kNothingGiven, b));
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  EXPECT_EQ(a.rule, b.rule);
  gen_ca::GenCaOptions c;
  EXPECT_NE(draw_gen_ca_shape(7, kNothingGiven, a), draw_gen_ca_shape(8, kNothingGiven, c));
}

TEST(AppShapes, GridSidesCoverOddPrimeAndNonSquareWithinTheRange) {
  std::set<std::string> rules;
  int odd = 0, prime = 0, non_square = 0, sparse = 0, dense = 0;
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
    gen_ca::GenCaOptions o;
    std::string const words = draw_gen_ca_shape(seed, kNothingGiven, o);
    for (std::uint32_t side : {o.width, o.height}) {
      ASSERT_GE(side, ShapeRanges::kMinSide);
      ASSERT_LE(side, ShapeRanges::kMaxSide);
      odd += side % 2;
      prime += is_prime(side);
    }
    non_square += o.width != o.height;
    ASSERT_GE(o.density, ShapeRanges::kMinDensity);
    ASSERT_LE(o.density, ShapeRanges::kMaxDensity);
    sparse += o.density < 0.05;
    dense += o.density > 0.5;
    rules.insert(o.rule);
    ASSERT_TRUE(has_word(words, "--width", std::to_string(o.width))) << words;
    ASSERT_TRUE(has_word(words, "--rule", o.rule)) << words;
  }
  EXPECT_GT(odd, 1000);
  EXPECT_GT(prime, 800);  // a quarter of the sides are primes, plus the uniform ones
  EXPECT_GT(non_square, 1900);
  EXPECT_GT(sparse, 100);
  EXPECT_GT(dense, 100);
  EXPECT_EQ(rules.size(), 6u);
}

TEST(AppShapes, OptionsGivenOnTheCommandLineKeepTheirValues) {
  gen_ca::GenCaOptions o;
  o.rule                  = "/2/3";
  o.density               = 0.3;
  Given const rule_given  = [](std::string const& s) { return s == "--rule" || s == "--density"; };
  std::string const words = draw_gen_ca_shape(3, rule_given, o);
  EXPECT_EQ(o.rule, "/2/3");
  EXPECT_EQ(o.density, 0.3);
  EXPECT_EQ(words.find("--rule"), std::string::npos) << words;
  EXPECT_EQ(words.find("--density"), std::string::npos) << words;
  EXPECT_NE(words.find("--width"), std::string::npos) << words;
}

TEST(AppShapes, BodyCountsAreNotOnlyPowersOfTwoAndOnlyCollisionMerges) {
  int not_power = 0;
  for (std::uint64_t seed = 1; seed <= 500; ++seed) {
    nbody::NbodyOptions o;
    o.collision             = seed % 2 == 0;
    std::string const words = draw_nbody_shape(seed, kNothingGiven, o);
    ASSERT_GE(o.bodies, ShapeRanges::kMinBodies);
    ASSERT_LE(o.bodies, ShapeRanges::kMaxBodies);
    not_power += (o.bodies & (o.bodies - 1)) != 0;
    ASSERT_EQ(words.find("--merge-radius") != std::string::npos, o.collision) << words;
    if (o.collision) {
      ASSERT_GE(o.merge_radius, ShapeRanges::kMinMergeRadius);
      ASSERT_LE(o.merge_radius, ShapeRanges::kMaxMergeRadius);
    }
  }
  EXPECT_GT(not_power, 490);
}

TEST(AppShapes, WaTorDensitiesLeaveRoomForEveryAgent) {
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
    wa_tor::WaTorOptions o;
    draw_wa_tor_shape(seed, kNothingGiven, o);
    ASSERT_GE(o.width, 3u);  // the app's own minimum
    ASSERT_GE(o.height, 3u);
    ASSERT_GT(o.fish_density, 0.0);
    ASSERT_GT(o.shark_density, 0.0);
    ASSERT_LE(o.fish_density + o.shark_density, 1.0) << "seed " << seed;
  }
}

TEST(AppShapes, StructureDrawsBothScenariosWithTheirOwnParameters) {
  int pull = 0, shrink = 0;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    structure::StructureOptions o;
    std::string const words = draw_structure_shape(seed, kNothingGiven, o);
    ASSERT_GE(o.width, ShapeRanges::kMinMeshSide);
    ASSERT_LE(o.height, ShapeRanges::kMaxMeshSide);
    ASSERT_GT(o.threshold, 0.0f);
    bool const is_pull = o.scenario == "pull";
    pull += is_pull;
    shrink += !is_pull;
    ASSERT_EQ(words.find("--load") != std::string::npos, is_pull) << words;
    ASSERT_EQ(words.find("--shrink") != std::string::npos, !is_pull) << words;
  }
  EXPECT_GT(pull, 100);
  EXPECT_GT(shrink, 100);
}

TEST(AppShapes, GameOfLifeDrawsEveryTwoStateRuleAndNoOther) {
  std::set<std::string> rules;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    game_of_life::GameOfLifeOptions o;
    std::string const words = draw_game_of_life_shape(seed, kNothingGiven, o);
    ASSERT_GE(o.width, ShapeRanges::kMinSide);
    ASSERT_LE(o.height, ShapeRanges::kMaxSide);
    ASSERT_GE(o.density, ShapeRanges::kMinDensity);
    ASSERT_LE(o.density, ShapeRanges::kMaxDensity);
    ASSERT_EQ(gen_ca::parse_rule(o.rule).generations, 2u) << words;  // the app refuses others
    ASSERT_TRUE(has_word(words, "--rule", o.rule)) << words;
    rules.insert(o.rule);
  }
  EXPECT_EQ(rules.size(), 5u);
}

TEST(AppShapes, SugarscapeDrawsSidesAndDensitiesWithinTheRanges) {
  int non_square = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    sugarscape::SugarscapeOptions o;
    std::string const words = draw_sugarscape_shape(seed, kNothingGiven, o);
    ASSERT_GE(o.width, ShapeRanges::kMinSide) << words;
    ASSERT_LE(o.height, ShapeRanges::kMaxSide) << words;
    ASSERT_GE(o.density, ShapeRanges::kMinDensity) << words;
    ASSERT_LE(o.density, ShapeRanges::kMaxDensity) << words;
    non_square += o.width != o.height;
  }
  EXPECT_GT(non_square, 150);
}

TEST(AppShapes, TrafficDrawsNetworksFromOneJunctionAndSparseToJammedRates) {
  int tiny = 0, jammed = 0, sparse = 0;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    traffic::TrafficOptions o;
    std::string const words = draw_traffic_shape(seed, kNothingGiven, o);
    ASSERT_GE(o.width, ShapeRanges::kMinJunctions) << words;
    ASSERT_LE(o.height, ShapeRanges::kMaxJunctions) << words;
    ASSERT_GE(o.spawn_rate, ShapeRanges::kMinSpawnRate) << words;
    ASSERT_LE(o.spawn_rate, ShapeRanges::kMaxSpawnRate) << words;
    ASSERT_TRUE(o.slow > 0.0 && o.slow < 1.0) << words;
    tiny += o.width <= 2 || o.height <= 2;
    jammed += o.spawn_rate > 0.15;
    sparse += o.spawn_rate < 0.02;
  }
  EXPECT_GT(tiny, 5);
  EXPECT_GT(jammed, 20);
  EXPECT_GT(sparse, 20);
}

TEST(AppShapes, BarnesHutDrawsBodyCountsAndThetasFromTheDirectSumUp) {
  std::set<double> thetas;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    barnes_hut::BarnesHutOptions o;
    std::string const words = draw_barnes_hut_shape(seed, kNothingGiven, o);
    ASSERT_GE(o.bodies, ShapeRanges::kMinBodies) << words;
    ASSERT_LE(o.bodies, ShapeRanges::kMaxBodies) << words;
    ASSERT_GE(o.theta, 0.0f) << words;
    ASSERT_LE(o.theta, 0.8f + 1e-6f) << words;
    thetas.insert(static_cast<int>(o.theta * 10 + 0.5) / 10.0);
  }
  EXPECT_EQ(thetas.size(), 9u);  // 0, 0.1, ..., 0.8: theta 0 (the direct sum) among them
}

}  // namespace
}  // namespace heaplab::apps
