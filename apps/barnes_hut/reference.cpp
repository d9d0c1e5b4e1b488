// CPU side of barnes-hut (reference.hpp).
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>

#include "heaplab/core/mix.hpp"

namespace heaplab::apps::barnes_hut {

namespace {
double unit(std::uint64_t seed, std::uint64_t i, std::uint64_t salt) {
  return static_cast<double>(core::splitmix64(seed ^ (i * 8 + salt) * 0x9E3779B97F4A7C15ull) >>
                             11) *
         (1.0 / 9007199254740992.0);
}
std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}
bool near(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * (std::fabs(a) + std::fabs(b)) + 1e-12;
}
}  // namespace

std::vector<BodyInit> initial_bodies(Params const& p) {
  if (p.bodies == 0) throw std::invalid_argument("barnes-hut: --bodies must be >= 1");
  std::vector<BodyInit> out(p.bodies);
  for (std::uint32_t i = 0; i < p.bodies; ++i) {
    BodyInit& b = out[i];
    if (i % 2 == 0) {
      b.x = static_cast<float>(-0.8 + 1.6 * unit(p.seed, i, 0));
      b.y = static_cast<float>(-0.8 + 1.6 * unit(p.seed, i, 1));
    } else {  // Box-Muller around (0.3, 0.3), sigma 0.05
      double const r = std::sqrt(-2.0 * std::log(1.0 - unit(p.seed, i, 0)));
      double const a = 6.283185307179586 * unit(p.seed, i, 1);
      b.x            = static_cast<float>(std::clamp(0.3 + 0.05 * r * std::cos(a), -0.99, 0.99));
      b.y            = static_cast<float>(std::clamp(0.3 + 0.05 * r * std::sin(a), -0.99, 0.99));
    }
    b.vx   = static_cast<float>(0.1 * (unit(p.seed, i, 2) - 0.5));
    b.vy   = static_cast<float>(0.1 * (unit(p.seed, i, 3) - 0.5));
    b.mass = static_cast<float>((0.5 + unit(p.seed, i, 4)) / p.bodies);
  }
  return out;
}

namespace {

/// What check_tree's walk knows: the handles' indices and which bodies were seen in a list.
struct TreeIndex {
  std::vector<BodyView> const& bodies;
  std::vector<NodeView> const& nodes;
  std::unordered_map<std::uint64_t, std::size_t> node_at, body_at;
  std::vector<bool> seen_body;
};

/// The sums of a node's contents (its list's bodies or its children).
struct Contents {
  std::uint64_t count = 0;
  double mass = 0, mx = 0, my = 0;
};

std::string node_name(NodeView const& n) {
  return "node " + hex(n.handle) + " (depth " + std::to_string(n.depth) + ")";
}

/// A leaf: its list (each body once, naming the leaf, inside its box), count and capacity.
std::optional<std::string> check_leaf(NodeView const& n, TreeIndex& t, Contents& sum) {
  std::string const name = node_name(n);
  for (std::uint32_t q = 1; q < 4; ++q)
    if (n.child[q] != 0) return name + " has some children but not all four";
  for (std::uint64_t h = n.first; h != 0;) {
    auto const it = t.body_at.find(h);
    if (it == t.body_at.end()) return name + "'s list names " + hex(h) + ", which is no body";
    BodyView const& b = t.bodies[it->second];
    if (t.seen_body[it->second]) return "body " + hex(h) + " is in two lists (or a list loops)";
    t.seen_body[it->second] = true;
    if (b.leaf != n.handle)
      return "body " + hex(h) + " is in the list of " + name + " but names " + hex(b.leaf) +
             " as its leaf";
    float const e = 1e-6f;
    if (!(b.x >= n.cx - n.half - e && b.x < n.cx + n.half + e && b.y >= n.cy - n.half - e &&
          b.y < n.cy + n.half + e))
      return "body " + hex(h) + " at (" + std::to_string(b.x) + ", " + std::to_string(b.y) +
             ") is outside its leaf's box, " + name + " centred at (" + std::to_string(n.cx) +
             ", " + std::to_string(n.cy) + ") half " + std::to_string(n.half);
    ++sum.count;
    sum.mass += b.mass;
    sum.mx += double(b.mass) * b.x;
    sum.my += double(b.mass) * b.y;
    h = b.next;
  }
  if (sum.count != n.count)
    return name + " counts " + std::to_string(n.count) + " bodies, its list holds " +
           std::to_string(sum.count);
  if (n.count > kLeafCapacity && n.depth < kMaxDepth)
    return name + " is a leaf with " + std::to_string(n.count) + " bodies (more than " +
           std::to_string(kLeafCapacity) + ")";
  return std::nullopt;
}

/// An inner node: no list, four children that are its quadrants (queued in `todo`), its count.
std::optional<std::string> check_inner(NodeView const& n,
                                       TreeIndex const& t,
                                       Contents& sum,
                                       std::vector<std::size_t>& todo) {
  std::string const name = node_name(n);
  if (n.first != 0) return name + " has children and a list of bodies";
  for (std::uint32_t q = 0; q < 4; ++q) {
    auto const it = t.node_at.find(n.child[q]);
    if (it == t.node_at.end())
      return name + "'s child " + std::to_string(q) + " " + hex(n.child[q]) + " is no node";
    NodeView const& c = t.nodes[it->second];
    if (c.parent != n.handle || c.depth != n.depth + 1 || c.half != 0.5f * n.half ||
        c.cx != child_cx(n.cx, n.half, q) || c.cy != child_cy(n.cy, n.half, q))
      return name + "'s child " + std::to_string(q) + " is not its quadrant (parent, depth or box)";
    sum.count += c.count;
    sum.mass += c.mass;
    sum.mx += c.mx;
    sum.my += c.my;
    todo.push_back(it->second);
  }
  if (sum.count != n.count)
    return name + " counts " + std::to_string(n.count) + " bodies, its children " +
           std::to_string(sum.count);
  if (n.count <= kLeafCapacity)
    return name + " was split with only " + std::to_string(n.count) + " bodies";
  return std::nullopt;
}

/// The index of the one root, or a problem.
std::optional<std::string> find_root(std::vector<NodeView> const& nodes, std::size_t& root) {
  root = nodes.size();
  for (std::size_t k = 0; k < nodes.size(); ++k)
    if (nodes[k].depth == 0) {
      if (root != nodes.size())
        return "two roots: " + hex(nodes[root].handle) + " and " + hex(nodes[k].handle);
      root = k;
    }
  if (root == nodes.size()) return "no root (a node of depth 0)";
  NodeView const& r = nodes[root];
  if (r.parent != 0 || r.cx != 0.0f || r.cy != 0.0f || r.half != kHalf)
    return "the root " + hex(r.handle) + " is not the [-1, 1)^2 box without a parent";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_tree(std::vector<BodyView> const& bodies,
                                      std::vector<NodeView> const& nodes) {
  TreeIndex t{bodies, nodes, {}, {}, std::vector<bool>(bodies.size(), false)};
  for (std::size_t k = 0; k < nodes.size(); ++k)
    if (!t.node_at.emplace(nodes[k].handle, k).second)
      return "node " + hex(nodes[k].handle) + " is reported twice";
  for (std::size_t k = 0; k < bodies.size(); ++k)
    if (!t.body_at.emplace(bodies[k].handle, k).second)
      return "body " + hex(bodies[k].handle) + " is reported twice";
  std::size_t root = 0;
  if (auto v = find_root(nodes, root)) return v;
  std::vector<std::size_t> todo{root};
  std::size_t reached = 0;
  while (!todo.empty()) {
    NodeView const& n = nodes[todo.back()];
    todo.pop_back();
    ++reached;
    Contents sum;
    auto const v = n.child[0] == 0 ? check_leaf(n, t, sum) : check_inner(n, t, sum, todo);
    if (v) return v;
    // Moments are compared against the mass (|x|, |y| < 1), since they may cancel out to ~0.
    double const moment_tolerance = 1e-4 * (std::fabs(sum.mass) + std::fabs(n.mass)) + 1e-12;
    if (!near(sum.mass, n.mass, 1e-4) || std::fabs(sum.mx - n.mx) > moment_tolerance ||
        std::fabs(sum.my - n.my) > moment_tolerance)
      return node_name(n) + " holds mass " + std::to_string(n.mass) + ", moments (" +
             std::to_string(n.mx) + ", " + std::to_string(n.my) + "); its contents sum to " +
             std::to_string(sum.mass) + ", (" + std::to_string(sum.mx) + ", " +
             std::to_string(sum.my) + ")";
  }
  if (reached != nodes.size())
    return std::to_string(nodes.size() - reached) +
           " node(s) not reachable from the root: leaked nodes";
  for (std::size_t k = 0; k < bodies.size(); ++k)
    if (!t.seen_body[k]) return "body " + hex(bodies[k].handle) + " is in no leaf's list";
  return std::nullopt;
}

std::optional<std::string> check_forces(std::vector<BodyView> const& bodies,
                                        std::vector<NodeView> const& nodes,
                                        Params const& p,
                                        std::size_t direct_sample,
                                        double max_direct_error,
                                        std::string* report) {
  std::unordered_map<std::uint64_t, std::size_t> node_at, body_at;
  for (std::size_t k = 0; k < nodes.size(); ++k) node_at[nodes[k].handle] = k;
  for (std::size_t k = 0; k < bodies.size(); ++k) body_at[bodies[k].handle] = k;
  std::size_t root = 0;
  for (std::size_t k = 0; k < nodes.size(); ++k)
    if (nodes[k].depth == 0) root = k;
  double const eps = p.softening, theta = p.theta;
  std::size_t off = 0;
  double worst    = 0;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    BodyView const& b = bodies[i];
    double fx = 0, fy = 0;
    std::vector<std::size_t> stack{root};
    while (!stack.empty()) {
      NodeView const& n = nodes[stack.back()];
      stack.pop_back();
      if (n.count == 0) continue;
      if (n.child[0] == 0) {
        for (std::uint64_t h = n.first; h != 0;) {
          BodyView const& o = bodies[body_at.at(h)];
          if (h != b.handle) add_pull<double>(b.x, b.y, o.x, o.y, o.mass, eps, fx, fy);
          h = o.next;
        }
        continue;
      }
      double const cx = n.mx / n.mass, cy = n.my / n.mass;
      double const d2 = (cx - b.x) * (cx - b.x) + (cy - b.y) * (cy - b.y);
      if (far_enough<double>(n.half, d2, theta)) {
        add_pull<double>(b.x, b.y, cx, cy, n.mass, eps, fx, fy);
      } else {
        for (std::uint64_t c : n.child) stack.push_back(node_at.at(c));
      }
    }
    fx *= p.gravity * b.mass;
    fy *= p.gravity * b.mass;
    double const err = std::hypot(fx - b.fx, fy - b.fy) / (std::hypot(fx, fy) + 1e-30);
    worst            = std::max(worst, err);
    off += err > 1e-3;
    if (err > 0.1)
      return "body " + hex(b.handle) + ": GPU force (" + std::to_string(b.fx) + ", " +
             std::to_string(b.fy) + "), the CPU's walk of the same tree (" + std::to_string(fx) +
             ", " + std::to_string(fy) + ")";
  }
  if (off * 100 > bodies.size())
    return std::to_string(off) + " of " + std::to_string(bodies.size()) +
           " bodies' forces differ from the CPU's walk of the same tree by more than 1e-3";
  // The direct sum over a sample (every body when few).
  std::size_t const n    = bodies.size();
  std::size_t const step = std::max<std::size_t>(1, n / std::max<std::size_t>(1, direct_sample));
  double sum             = 0;
  std::size_t sampled    = 0;
  for (std::size_t i = 0; i < n; i += step) {
    BodyView const& b = bodies[i];
    double fx = 0, fy = 0;
    for (std::size_t j = 0; j < n; ++j)
      if (j != i) add_pull<double>(b.x, b.y, bodies[j].x, bodies[j].y, bodies[j].mass, eps, fx, fy);
    fx *= p.gravity * b.mass;
    fy *= p.gravity * b.mass;
    sum += std::hypot(fx - b.fx, fy - b.fy) / (std::hypot(fx, fy) + 1e-30);
    ++sampled;
  }
  double const mean = sampled == 0 ? 0 : sum / double(sampled);
  char line[200];
  std::snprintf(
      line,
      sizeof line,
      "forces: %zu of %zu bodies off the CPU walk by > 1e-3 (worst %.2e); mean error against "
      "the direct sum over %zu bodies %.2e (theta %.2f)",
      off,
      bodies.size(),
      worst,
      sampled,
      mean,
      theta);
  if (report != nullptr) *report = line;
  if (mean > max_direct_error)
    return std::string(line) + ": above " + std::to_string(max_direct_error);
  return std::nullopt;
}

}  // namespace heaplab::apps::barnes_hut
