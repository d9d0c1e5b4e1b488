// structure_test (cpu): the seeded mesh, the CPU simulation (pull: springs break and the pulled
// column is cut off; shrink, the default scenario: islands are cut off and removed progressively;
// every state passes the checker) and the checker on broken states: an unreachable node alive, a
// spring to a dead node, a broken spring alive, wrong counts.
#include <gtest/gtest.h>

#include <algorithm>

#include "reference.hpp"

namespace hs = heaplab::apps::structure;

namespace {

hs::Loading pull() {
  hs::Loading l;
  l.scenario = hs::Scenario::pull;
  return l;
}

hs::Mesh pull_mesh(std::uint32_t w, std::uint32_t h, std::uint64_t seed, float t, float j) {
  return hs::build_mesh(w, h, seed, t, j, hs::Scenario::pull);
}

hs::HostSimulation run(std::uint32_t w, std::uint32_t h, int iterations, bool* removed_any) {
  hs::HostSimulation sim(pull_mesh(w, h, 1, 0.05f, 0.5f), hs::Physics{}, pull());
  *removed_any = false;
  for (int i = 0; i < iterations; ++i) {
    auto const c = sim.step();
    *removed_any = *removed_any || c.removed > 0;
    auto const g = sim.graph();
    EXPECT_EQ(hs::check_graph(g), std::nullopt) << "iteration " << i + 1;
    EXPECT_EQ(hs::check_counts(sim.mesh(), g, sim.counters()), std::nullopt);
  }
  return sim;
}

}  // namespace

TEST(StructureMesh, ShapeAndSeededThresholds) {
  auto const m = pull_mesh(4, 3, 7, 0.1f, 0.5f);
  EXPECT_EQ(m.num_nodes(), 12u);
  EXPECT_EQ(m.num_springs(), 3u * 3u + 4u * 2u + 3u * 2u);
  EXPECT_EQ(m.kind[0], hs::kAnchor);
  EXPECT_EQ(m.kind[3], hs::kPulled);
  EXPECT_EQ(m.kind[5], hs::kFree);
  for (float t : m.threshold) {
    EXPECT_GE(t, 0.05f);
    EXPECT_LE(t, 0.15f);
  }
  EXPECT_EQ(pull_mesh(4, 3, 7, 0.1f, 0.5f).threshold, m.threshold);
  EXPECT_NE(pull_mesh(4, 3, 8, 0.1f, 0.5f).threshold, m.threshold);
  EXPECT_THROW(pull_mesh(1, 3, 7, 0.1f, 0.5f), std::invalid_argument);
  EXPECT_THROW(pull_mesh(4, 3, 7, 0.0f, 0.5f), std::invalid_argument);
  EXPECT_THROW(pull_mesh(4, 3, 7, 0.1f, 1.0f), std::invalid_argument);
}

TEST(StructureSimulation, ShrinkStatesPassTheCheckerEveryIteration) {
  hs::Loading loading;
  loading.shrink = 0.005f;  // fast: islands within 20 iterations on 24 x 12
  hs::HostSimulation sim(
      hs::build_mesh(24, 12, 1, 0.05f, 0.5f, loading.scenario), hs::Physics{}, loading);
  for (int i = 1; i <= 60; ++i) {
    (void)sim.step();
    auto const g = sim.graph();
    ASSERT_EQ(hs::check_graph(g), std::nullopt) << "iteration " << i;
    ASSERT_EQ(hs::check_counts(sim.mesh(), g, sim.counters()), std::nullopt);
  }
  EXPECT_GT(sim.counters().removed_nodes, 24u * 12u / 2u);
}

TEST(StructureSimulation, PullBreaksSpringsAndRemovesCutOffNodes) {
  bool removed_any = false;
  auto sim         = run(24, 12, 120, &removed_any);
  EXPECT_GT(sim.counters().broken_springs, 0u);
  EXPECT_TRUE(removed_any);
  EXPECT_EQ(sim.graph().nodes.size(), sim.mesh().num_nodes() - sim.counters().removed_nodes);
}

TEST(StructureMesh, ShrinkAnchorsTheFourBorders) {
  auto const m = hs::build_mesh(4, 3, 7, 0.1f, 0.5f, hs::Scenario::shrink);
  for (std::uint32_t j = 0; j < 3; ++j)
    for (std::uint32_t i = 0; i < 4; ++i)
      EXPECT_EQ(m.kind[j * 4 + i],
                (i == 0 || i == 3 || j == 0 || j == 2) ? hs::kAnchor : hs::kFree);
  EXPECT_EQ(m.threshold, pull_mesh(4, 3, 7, 0.1f, 0.5f).threshold);
}

TEST(StructureLoading, RestScaleShrinksLinearlyDownToTheFloor) {
  hs::Loading l;  // the default: shrink 0.0005 per iteration down to 0.3
  EXPECT_EQ(l.scenario, hs::Scenario::shrink);
  EXPECT_FLOAT_EQ(hs::physics_at(hs::Physics{}, l, 0).rest_scale, 1.0f);
  EXPECT_FLOAT_EQ(hs::physics_at(hs::Physics{}, l, 100).rest_scale, 0.95f);
  EXPECT_FLOAT_EQ(hs::physics_at(hs::Physics{}, l, 5000).rest_scale, 0.3f);
  EXPECT_EQ(hs::physics_at(hs::Physics{}, pull(), 5000).rest_scale, 1.0f);
}

// The default scenario fractures progressively: on a 64 x 32 mesh over 1000 iterations (the
// default shrink), most nodes are removed, over many iterations, never most of them at once, and
// every checked state passes the checker.
TEST(StructureSimulation, ShrinkRemovesNodesProgressively) {
  hs::Loading const loading;
  hs::HostSimulation sim(
      hs::build_mesh(64, 32, 1, 0.05f, 0.5f, loading.scenario), hs::Physics{}, loading);
  std::uint64_t const n        = sim.mesh().num_nodes();
  int iterations_removing      = 0;
  std::uint64_t max_step       = 0;
  std::uint64_t removed_at_500 = 0;
  for (int i = 1; i <= 1000; ++i) {
    auto const c = sim.step();
    iterations_removing += c.removed > 0 ? 1 : 0;
    max_step = std::max<std::uint64_t>(max_step, c.removed);
    if (i == 500) removed_at_500 = sim.counters().removed_nodes;
    if (i % 50 == 0) {
      auto const g = sim.graph();
      ASSERT_EQ(hs::check_graph(g), std::nullopt) << "iteration " << i;
      ASSERT_EQ(hs::check_counts(sim.mesh(), g, sim.counters()), std::nullopt);
    }
  }
  std::uint64_t const removed = sim.counters().removed_nodes;
  EXPECT_GE(removed, n / 2) << "at least half the nodes removed";
  EXPECT_LT(removed_at_500, removed / 4) << "not all at the start";
  EXPECT_GE(iterations_removing, 20) << "removed over many iterations";
  EXPECT_LE(max_step, n / 4) << "never a quarter of the mesh in one iteration";
  EXPECT_GT(sim.counters().broken_springs, 0u);
}

TEST(StructureCheck, InitialMeshPasses) {
  hs::HostSimulation sim(pull_mesh(5, 4, 1, 0.1f, 0.5f), hs::Physics{}, pull());
  EXPECT_EQ(hs::check_graph(sim.graph()), std::nullopt);
  EXPECT_EQ(hs::check_counts(sim.mesh(), sim.graph(), sim.counters()), std::nullopt);
}

TEST(StructureCheck, CatchesAnUnreachableNodeAlive) {
  hs::HostSimulation sim(pull_mesh(5, 4, 1, 0.1f, 0.5f), hs::Physics{}, pull());
  auto g = sim.graph();
  // Cut node 12 (2, 2) off: drop every spring that ends at it, from the springs and the lists.
  std::uint64_t const self = 13;
  std::vector<std::uint64_t> cut;
  for (auto const& s : g.springs)
    if (s.a == self || s.b == self) cut.push_back(s.self);
  g.springs.erase(std::remove_if(g.springs.begin(),
                                 g.springs.end(),
                                 [&](auto const& s) { return s.a == self || s.b == self; }),
                  g.springs.end());
  for (auto& n : g.nodes)
    for (auto& r : n.springs)
      if (std::find(cut.begin(), cut.end(), r) != cut.end()) r = 0;
  auto const v = hs::check_graph(g);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("isolated node 12"), std::string::npos) << *v;
}

TEST(StructureCheck, CatchesASpringToADeadNode) {
  // What the planted bug structure_keep_orphan_springs leaves: a removed node's springs alive.
  hs::HostSimulation sim(pull_mesh(5, 4, 1, 0.1f, 0.5f), hs::Physics{}, pull());
  auto g = sim.graph();
  g.nodes.erase(g.nodes.begin() + 7);
  auto const v = hs::check_graph(g);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("names an endpoint that is not a live node"), std::string::npos) << *v;
}

TEST(StructureCheck, CatchesABrokenSpringAlive) {
  hs::HostSimulation sim(pull_mesh(5, 4, 1, 0.1f, 0.5f), hs::Physics{}, pull());
  auto g = sim.graph();
  for (auto& n : g.nodes)
    if (n.id == 4) n.x += 0.5f;  // (4, 0) pulled by half a rest length: strain 0.5 > 0.15
  auto const v = hs::check_graph(g);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("broken spring"), std::string::npos) << *v;
}

TEST(StructureCheck, CatchesASpringMissingFromItsNodesList) {
  hs::HostSimulation sim(pull_mesh(5, 4, 1, 0.1f, 0.5f), hs::Physics{}, pull());
  auto g                = sim.graph();
  g.nodes[6].springs[0] = 0;
  auto const v          = hs::check_graph(g);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("missing from node 6"), std::string::npos) << *v;
}

TEST(StructureCheck, CatchesWrongCounts) {
  hs::HostSimulation sim(pull_mesh(5, 4, 1, 0.1f, 0.5f), hs::Physics{}, pull());
  hs::Counters c;
  c.removed_nodes = 1;
  EXPECT_TRUE(hs::check_counts(sim.mesh(), sim.graph(), c).has_value());
  c                = {};
  c.broken_springs = 2;
  EXPECT_TRUE(hs::check_counts(sim.mesh(), sim.graph(), c).has_value());
}
