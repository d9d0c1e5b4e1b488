// CPU tests of barnes-hut's checker (docs/apps.md "barnes-hut"): a tree built here by the app's
// rules (top-down splits of leaves above kLeafCapacity, the bodies' lists, the bottom-up sums)
// passes check_tree and, with forces from a walk of it, check_forces, whose direct-sum bound holds
// at theta 0.5 and is exact at theta 0; each kind of broken tree is reported, the planted bug's
// (quadrants with the axes swapped) among them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reference.hpp"

namespace bh = heaplab::apps::barnes_hut;

namespace {

struct Tree {
  std::vector<bh::BodyView> bodies;
  std::vector<bh::NodeView> nodes;
};

/// The app's tree, built sequentially; handles: bodies 1..N, nodes 1000001.. .
template <bool SwapAxes = false>
Tree build(std::vector<bh::BodyInit> const& init) {
  Tree t;
  for (std::size_t i = 0; i < init.size(); ++i) {
    bh::BodyView b;
    b.handle = i + 1;
    b.x = init[i].x, b.y = init[i].y, b.mass = init[i].mass;
    t.bodies.push_back(b);
  }
  auto node = [&](float cx, float cy, float half, std::uint64_t parent, std::uint32_t depth) {
    bh::NodeView n;
    n.handle = 1000001 + t.nodes.size();
    n.cx = cx, n.cy = cy, n.half = half, n.parent = parent, n.depth = depth;
    t.nodes.push_back(n);
    return t.nodes.size() - 1;
  };
  std::vector<std::size_t> leaf_of(t.bodies.size(), node(0, 0, bh::kHalf, 0, 0));
  for (bool split = true; split;) {
    split = false;
    std::vector<std::uint32_t> count(t.nodes.size(), 0);
    for (std::size_t l : leaf_of) ++count[l];
    std::size_t const before = t.nodes.size();
    for (std::size_t k = 0; k < before; ++k) {
      if (t.nodes[k].child[0] != 0 || count[k] <= bh::kLeafCapacity ||
          t.nodes[k].depth >= bh::kMaxDepth)
        continue;
      for (std::uint32_t q = 0; q < 4; ++q) {
        bh::NodeView const n = t.nodes[k];
        std::size_t const c  = node(bh::child_cx(n.cx, n.half, q),
                                   bh::child_cy(n.cy, n.half, q),
                                   0.5f * n.half,
                                   n.handle,
                                   n.depth + 1);
        t.nodes[k].child[q]  = t.nodes[c].handle;
      }
      split = true;
    }
    if (!split) break;
    for (std::size_t i = 0; i < leaf_of.size(); ++i) {
      bh::NodeView const& l = t.nodes[leaf_of[i]];
      if (l.child[0] == 0) continue;
      std::uint32_t const q = bh::quadrant<SwapAxes>(l.cx, l.cy, t.bodies[i].x, t.bodies[i].y);
      leaf_of[i]            = l.child[q] - 1000001;
    }
  }
  for (std::size_t i = 0; i < t.bodies.size(); ++i) {  // lists and leaf sums
    bh::NodeView& l = t.nodes[leaf_of[i]];
    bh::BodyView& b = t.bodies[i];
    b.leaf          = l.handle;
    b.next          = l.first;
    l.first         = b.handle;
    l.count += 1;
    l.mass += b.mass;
    l.mx += b.mass * b.x;
    l.my += b.mass * b.y;
  }
  for (std::size_t k = t.nodes.size(); k-- > 1;) {  // children come after their parents
    bh::NodeView const& n = t.nodes[k];
    bh::NodeView& p       = t.nodes[n.parent - 1000001];
    p.count += n.count;
    p.mass += n.mass;
    p.mx += n.mx;
    p.my += n.my;
  }
  return t;
}

/// Forces from a walk of the tree (what the GPU's Body::force computes).
void walk_forces(Tree& t, bh::Params const& p) {
  for (bh::BodyView& b : t.bodies) {
    float fx = 0, fy = 0;
    std::vector<std::size_t> stack{0};
    while (!stack.empty()) {
      bh::NodeView const& n = t.nodes[stack.back()];
      stack.pop_back();
      if (n.count == 0) continue;
      if (n.child[0] == 0) {
        for (std::uint64_t h = n.first; h != 0; h = t.bodies[h - 1].next)
          if (h != b.handle)
            bh::add_pull<float>(b.x,
                                b.y,
                                t.bodies[h - 1].x,
                                t.bodies[h - 1].y,
                                t.bodies[h - 1].mass,
                                p.softening,
                                fx,
                                fy);
        continue;
      }
      float const cx = n.mx / n.mass, cy = n.my / n.mass;
      float const d2 = (cx - b.x) * (cx - b.x) + (cy - b.y) * (cy - b.y);
      if (bh::far_enough<float>(n.half, d2, p.theta)) {
        bh::add_pull<float>(b.x, b.y, cx, cy, n.mass, p.softening, fx, fy);
      } else {
        for (std::uint64_t c : n.child) stack.push_back(c - 1000001);
      }
    }
    b.fx = p.gravity * b.mass * fx;
    b.fy = p.gravity * b.mass * fy;
  }
}

bh::Params params(std::uint32_t n, float theta) {
  bh::Params p;
  p.bodies = n;
  p.theta  = theta;
  p.seed   = 5;
  return p;
}

void expect_tree_report(Tree const& t, std::string const& fragment) {
  auto const v = bh::check_tree(t.bodies, t.nodes);
  ASSERT_TRUE(v.has_value()) << "the broken tree passed the checker";
  EXPECT_NE(v->find(fragment), std::string::npos) << *v;
}

}  // namespace

TEST(BarnesHutBodies, StartInsideTheBoxWithPositiveMasses) {
  auto const init = bh::initial_bodies(params(5000, 0.5f));
  double mass     = 0;
  for (auto const& b : init) {
    ASSERT_TRUE(b.x >= -1 && b.x < 1 && b.y >= -1 && b.y < 1);
    ASSERT_GT(b.mass, 0.0f);
    mass += b.mass;
  }
  EXPECT_NEAR(mass, 1.0, 0.05);
  EXPECT_THROW(bh::initial_bodies(params(0, 0.5f)), std::invalid_argument);
}

TEST(BarnesHutCheck, AcceptsTheAppsTreeAndItsForces) {
  for (std::uint32_t n : {1u, 9u, 100u, 3000u}) {
    bh::Params const p = params(n, 0.5f);
    Tree t             = build(bh::initial_bodies(p));
    walk_forces(t, p);
    EXPECT_FALSE(bh::check_tree(t.bodies, t.nodes).has_value())
        << n << ": " << *bh::check_tree(t.bodies, t.nodes);
    std::string report;
    auto const v = bh::check_forces(t.bodies, t.nodes, p, 512, 0.05, &report);
    EXPECT_FALSE(v.has_value()) << n << ": " << *v;
    EXPECT_NE(report.find("mean error"), std::string::npos);
  }
}

TEST(BarnesHutCheck, ThetaZeroIsTheDirectSum) {
  bh::Params const p = params(2000, 0.0f);
  Tree t             = build(bh::initial_bodies(p));
  walk_forces(t, p);
  EXPECT_FALSE(bh::check_forces(t.bodies, t.nodes, p, 2000, 1e-4, nullptr).has_value());
}

TEST(BarnesHutCheck, ReportsABodyOutsideItsLeaf) {  // the planted bug's tree
  Tree const t = build<true>(bh::initial_bodies(params(1000, 0.5f)));
  expect_tree_report(t, "is outside its leaf's box");
}

TEST(BarnesHutCheck, ReportsEachKindOfBrokenTree) {
  Tree const good = build(bh::initial_bodies(params(500, 0.5f)));
  ASSERT_FALSE(bh::check_tree(good.bodies, good.nodes).has_value());

  Tree t = good;  // a node nobody points at
  t.nodes.push_back(t.nodes.back());
  t.nodes.back().handle = 9999999;
  t.nodes.back().parent = 0;
  t.nodes.back().depth  = 3;
  expect_tree_report(t, "not reachable from the root");

  t = good;  // a leaf's count off by one
  for (auto& n : t.nodes)
    if (n.child[0] == 0 && n.count > 0) {
      n.count += 1;
      break;
    }
  expect_tree_report(t, "counts");  // the parent's sum or the leaf's list, whichever comes first

  t = good;  // a body left out of every list
  for (auto& n : t.nodes)
    if (n.child[0] == 0 && n.count > 0) {
      n.first = t.bodies[n.first - 1].next;
      n.count -= 1;
      break;
    }
  expect_tree_report(t, "");

  t = good;  // a mass that does not sum up
  t.nodes[0].mass *= 1.01f;
  expect_tree_report(t, "holds mass");

  t                   = good;  // a child missing
  t.nodes[0].child[3] = 0;
  expect_tree_report(t, "'s child 3 0x0 is no node");

  t = good;  // a leaf with some children
  for (auto& n : t.nodes)
    if (n.child[0] == 0) {
      n.child[2] = t.nodes[0].handle;
      break;
    }
  expect_tree_report(t, "some children but not all four");

  t                = good;  // two roots
  t.nodes[1].depth = 0;
  expect_tree_report(t, "two roots");
}

TEST(BarnesHutCheck, ReportsForcesThatAreNotTheTreesOrTooFarFromTheDirectSum) {
  bh::Params const p = params(1000, 0.5f);
  Tree t             = build(bh::initial_bodies(p));
  walk_forces(t, p);
  Tree off = t;
  off.bodies[7].fx *= 2;
  auto v = bh::check_forces(off.bodies, off.nodes, p, 256, 0.05, nullptr);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("the CPU's walk of the same tree"), std::string::npos) << *v;
  // The walk at theta 0.5 is not the direct sum: a bound of 1e-6 reports it.
  v = bh::check_forces(t.bodies, t.nodes, p, 256, 1e-6, nullptr);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("direct sum"), std::string::npos) << *v;
}
