// The CPU side of `heaplab_apps structure` (reference.hpp).
#include "reference.hpp"

#include <cmath>
#include <deque>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "heaplab/core/mix.hpp"

namespace heaplab::apps::structure {

using core::splitmix64;  // heaplab's one 64-bit mixer (core/mix.hpp)
Physics physics_at(Physics base, Loading const& loading, int iteration) {
  base.rest_scale = loading.scenario == Scenario::shrink
                        ? rest_scale_at(loading.shrink, loading.shrink_floor, iteration)
                        : 1.0f;
  return base;
}

Mesh build_mesh(std::uint32_t width,
                std::uint32_t height,
                std::uint64_t seed,
                float threshold,
                float jitter,
                Scenario scenario) {
  if (width < 2 || height < 2) throw std::invalid_argument("structure: mesh must be >= 2 x 2");
  if (std::uint64_t{width} * height > (std::uint64_t{1} << 26))
    throw std::invalid_argument("structure: at most 2^26 nodes");
  if (!(threshold > 0.0f)) throw std::invalid_argument("structure: --threshold must be > 0");
  if (!(jitter >= 0.0f && jitter < 1.0f))
    throw std::invalid_argument("structure: --jitter must be in [0, 1)");
  Mesh m;
  m.width             = width;
  m.height            = height;
  std::size_t const n = std::size_t{width} * height;
  m.x.resize(n);
  m.y.resize(n);
  m.mass.assign(n, 1.0f);
  m.kind.resize(n);
  m.slots.assign(n, {-1, -1, -1, -1, -1, -1});
  auto add = [&](std::uint32_t from, std::uint32_t to, int slot_from, int slot_to, float rest) {
    auto const s = static_cast<std::int32_t>(m.a.size());
    m.a.push_back(from);
    m.b.push_back(to);
    m.slot_a.push_back(static_cast<std::uint8_t>(slot_from));
    m.slot_b.push_back(static_cast<std::uint8_t>(slot_to));
    m.rest.push_back(rest);
    double const u = static_cast<double>(splitmix64(seed ^ static_cast<std::uint64_t>(s)) >> 11) /
                     9007199254740992.0;
    m.threshold.push_back(static_cast<float>(threshold * (1.0 + jitter * (2.0 * u - 1.0))));
    m.slots[from][slot_from] = s;
    m.slots[to][slot_to]     = s;
  };
  for (std::uint32_t j = 0; j < height; ++j)
    for (std::uint32_t i = 0; i < width; ++i) {
      std::uint32_t const id = j * width + i;
      m.x[id]                = static_cast<float>(i);
      m.y[id]                = static_cast<float>(j);
      bool const border      = i == 0 || i == width - 1 || j == 0 || j == height - 1;
      if (scenario == Scenario::shrink)
        m.kind[id] = border ? kAnchor : kFree;
      else
        m.kind[id] = i == 0 ? kAnchor : i == width - 1 ? kPulled : kFree;
    }
  for (std::uint32_t j = 0; j < height; ++j)
    for (std::uint32_t i = 0; i < width; ++i) {
      std::uint32_t const id = j * width + i;
      if (i + 1 < width) add(id, id + 1, 0, 1, 1.0f);
      if (j + 1 < height) add(id, id + width, 2, 3, 1.0f);
      if (i + 1 < width && j + 1 < height) add(id, id + width + 1, 4, 5, std::sqrt(2.0f));
    }
  return m;
}

std::optional<std::string> check_graph(Graph const& g) {
  std::unordered_map<std::uint64_t, std::size_t> node_at, spring_at;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].self == 0 || !node_at.emplace(g.nodes[i].self, i).second)
      return "node " + std::to_string(g.nodes[i].id) + " has a null or duplicate name";
  for (std::size_t i = 0; i < g.springs.size(); ++i)
    if (g.springs[i].self == 0 || !spring_at.emplace(g.springs[i].self, i).second)
      return "spring " + std::to_string(g.springs[i].id) + " has a null or duplicate name";
  for (auto const& s : g.springs)
    for (std::uint64_t e : {s.a, s.b})
      if (node_at.count(e) == 0)
        return "live spring " + std::to_string(s.id) + " names an endpoint that is not a live node";
  for (auto const& s : g.springs) {
    auto const& na  = g.nodes[node_at[s.a]];
    auto const& nb  = g.nodes[node_at[s.b]];
    float const str = strain(na.x, na.y, nb.x, nb.y, exact::mul(s.rest, g.rest_scale));
    if (str > s.threshold + kStrainTolerance)
      return "broken spring " + std::to_string(s.id) + " survives: strain " + std::to_string(str) +
             " > threshold " + std::to_string(s.threshold);
  }
  for (auto const& n : g.nodes)
    for (std::uint64_t r : n.springs) {
      if (r == 0) continue;
      auto const it = spring_at.find(r);
      if (it == spring_at.end())
        return "node " + std::to_string(n.id) + " lists a spring that is not live";
      auto const& s = g.springs[it->second];
      if (s.a != n.self && s.b != n.self)
        return "node " + std::to_string(n.id) + " lists spring " + std::to_string(s.id) +
               " that does not end at it";
    }
  for (auto const& s : g.springs)
    for (std::uint64_t e : {s.a, s.b}) {
      auto const& n = g.nodes[node_at[e]];
      bool listed   = false;
      for (std::uint64_t r : n.springs) listed = listed || r == s.self;
      if (!listed)
        return "spring " + std::to_string(s.id) + " is missing from node " + std::to_string(n.id) +
               "'s spring list";
    }
  // BFS from the anchors over live springs.
  std::vector<char> reached(g.nodes.size(), 0);
  std::deque<std::size_t> frontier;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == kAnchor) {
      reached[i] = 1;
      frontier.push_back(i);
    }
  while (!frontier.empty()) {
    auto const i = frontier.front();
    frontier.pop_front();
    for (std::uint64_t r : g.nodes[i].springs) {
      if (r == 0) continue;
      auto const& s       = g.springs[spring_at[r]];
      std::size_t const o = node_at[s.a == g.nodes[i].self ? s.b : s.a];
      if (!reached[o]) {
        reached[o] = 1;
        frontier.push_back(o);
      }
    }
  }
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (!reached[i])
      return "isolated node " + std::to_string(g.nodes[i].id) + " at (" +
             std::to_string(g.nodes[i].x) + ", " + std::to_string(g.nodes[i].y) +
             ") survived: no anchor reaches it over live springs";
  return std::nullopt;
}

std::optional<std::string> check_counts(Mesh const& initial, Graph const& g, Counters const& c) {
  std::uint64_t const nodes   = initial.num_nodes() - c.removed_nodes;
  std::uint64_t const springs = initial.num_springs() - c.broken_springs - c.removed_springs;
  if (g.nodes.size() != nodes)
    return std::to_string(g.nodes.size()) +
           " live nodes, initial - removed = " + std::to_string(nodes);
  if (g.springs.size() != springs)
    return std::to_string(g.springs.size()) +
           " live springs, initial - broken - removed = " + std::to_string(springs);
  return std::nullopt;
}

HostSimulation::HostSimulation(Mesh mesh, Physics physics, Loading loading)
    : m_(std::move(mesh)),
      base_(physics),
      p_(physics_at(physics, loading, 0)),
      loading_(loading),
      vx_(m_.num_nodes(), 0.0f),
      vy_(m_.num_nodes(), 0.0f),
      fx_(m_.num_nodes(), 0.0f),
      fy_(m_.num_nodes(), 0.0f),
      distance_(m_.num_nodes(), kUnreached),
      node_alive_(m_.num_nodes(), 1),
      spring_alive_(m_.num_springs(), 1),
      nodes_(m_.num_nodes()),
      springs_(m_.num_springs()) {}

StepCounts HostSimulation::step() {
  StepCounts r;
  p_                    = physics_at(base_, loading_, ++iteration_);
  std::uint32_t const n = m_.num_nodes();
  std::uint32_t const s = m_.num_springs();
  for (std::uint32_t i = 0; i < n; ++i) {  // force
    if (!node_alive_[i]) continue;
    float fx = 0.0f, fy = 0.0f;
    for (int k = 0; k < kMaxDegree; ++k) {
      std::int32_t const sp = m_.slots[i][k];
      if (sp < 0) continue;
      std::uint32_t const o = m_.a[sp] == i ? m_.b[sp] : m_.a[sp];
      add_spring_force(p_, m_.x[i], m_.y[i], m_.x[o], m_.y[o], m_.rest[sp], fx, fy);
    }
    fx_[i] = fx;
    fy_[i] = fy;
  }
  for (std::uint32_t i = 0; i < n; ++i)  // move
    if (node_alive_[i])
      integrate(p_, m_.kind[i], m_.mass[i], fx_[i], fy_[i], m_.x[i], m_.y[i], vx_[i], vy_[i]);
  for (std::uint32_t k = 0; k < s; ++k) {  // break
    if (!spring_alive_[k]) continue;
    std::uint32_t const a = m_.a[k], b = m_.b[k];
    if (!spring_breaks(p_, m_.x[a], m_.y[a], m_.x[b], m_.y[b], m_.rest[k], m_.threshold[k]))
      continue;
    spring_alive_[k]          = 0;
    m_.slots[a][m_.slot_a[k]] = -1;
    m_.slots[b][m_.slot_b[k]] = -1;
    ++r.broken;
  }
  for (std::uint32_t i = 0; i < n; ++i)  // bfs
    distance_[i] = m_.kind[i] == kAnchor ? 0u : kUnreached;
  for (std::uint32_t d = 0;; ++d) {
    bool changed = false;
    for (std::uint32_t i = 0; i < n; ++i) {
      if (!node_alive_[i] || distance_[i] != d) continue;
      for (int k = 0; k < kMaxDegree; ++k) {
        std::int32_t const sp = m_.slots[i][k];
        if (sp < 0) continue;
        std::uint32_t const o = m_.a[sp] == i ? m_.b[sp] : m_.a[sp];
        if (distance_[o] == kUnreached) {
          distance_[o] = d + 1;
          changed      = true;
        }
      }
    }
    r.bfs_rounds = d + 1;
    if (!changed) break;
  }
  for (std::uint32_t k = 0; k < s; ++k)  // remove: springs of unreached nodes, then the nodes
    if (spring_alive_[k] &&
        (distance_[m_.a[k]] == kUnreached || distance_[m_.b[k]] == kUnreached)) {
      spring_alive_[k] = 0;
      ++counters_.removed_springs;
    }
  for (std::uint32_t i = 0; i < n; ++i)
    if (node_alive_[i] && distance_[i] == kUnreached) {
      node_alive_[i] = 0;
      ++r.removed;
    }
  counters_.broken_springs += r.broken;
  counters_.removed_nodes += r.removed;
  std::uint64_t removed_springs = 0;
  for (std::uint32_t k = 0; k < s; ++k) removed_springs += spring_alive_[k] ? 0 : 1;
  springs_ = s - removed_springs;
  nodes_ -= r.removed;
  r.nodes   = nodes_;
  r.springs = springs_;
  return r;
}

Graph HostSimulation::graph() const {
  Graph g;
  g.rest_scale = p_.rest_scale;
  for (std::uint32_t i = 0; i < m_.num_nodes(); ++i) {
    if (!node_alive_[i]) continue;
    NodeRecord r;
    r.self     = i + 1u;
    r.id       = i;
    r.kind     = m_.kind[i];
    r.x        = m_.x[i];
    r.y        = m_.y[i];
    r.distance = distance_[i];
    for (int k = 0; k < kMaxDegree; ++k)
      r.springs[k] = m_.slots[i][k] < 0 ? 0u : static_cast<std::uint64_t>(m_.slots[i][k]) + 1u;
    g.nodes.push_back(r);
  }
  for (std::uint32_t k = 0; k < m_.num_springs(); ++k) {
    if (!spring_alive_[k]) continue;
    SpringRecord r;
    r.self      = k + 1u;
    r.id        = k;
    r.a         = m_.a[k] + 1u;
    r.b         = m_.b[k] + 1u;
    r.rest      = m_.rest[k];
    r.threshold = m_.threshold[k];
    g.springs.push_back(r);
  }
  return g;
}

}  // namespace heaplab::apps::structure
