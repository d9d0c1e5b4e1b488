// The CPU side of `heaplab_apps structure` (docs/apps.md "structure"): the seeded initial mesh
// every variant starts from, the graph a variant downloads for `--check`, the checker, and a CPU
// simulation with the same arithmetic (model.hpp) that the tests step to produce correct states.
// Plain C++17, host only.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model.hpp"

namespace heaplab::apps::structure {

/// How a run loads the mesh (model.hpp Scenario): the scenario, the pull speed (Physics::load)
/// and the shrink rate. Host only; physics_at turns it into the Physics of one iteration.
struct Loading {
  Scenario scenario  = Scenario::shrink;
  float shrink       = 0.0005f;  // shrink: rest lengths lose this fraction per iteration
  float shrink_floor = 0.3f;     // shrink: rest_scale stops here
};

/// The Physics of iteration `iteration` (1-based): `base` with rest_scale =
/// rest_scale_at(shrink, shrink_floor, iteration) for the shrink scenario, 1 for pull.
Physics physics_at(Physics base, Loading const& loading, int iteration);

/// The initial mesh: node (i, j) has id j * width + i at position (i, j); springs join (i, j) to
/// (i+1, j), (i, j+1) and (i+1, j+1) (rest lengths 1, 1, sqrt 2), ids in that order per node in
/// id order. pull: column 0 is anchored, column width-1 is pulled; shrink: the four borders
/// (columns 0 and width-1, rows 0 and height-1) are anchored. Spring s breaks at strain
/// threshold * (1 + jitter * (2u - 1)) with u = splitmix64(seed ^ s) / 2^64.
struct Mesh {
  std::uint32_t width  = 0;
  std::uint32_t height = 0;
  // nodes
  std::vector<float> x, y, mass;
  std::vector<std::uint8_t> kind;
  std::vector<std::array<std::int32_t, kMaxDegree>> slots;  // spring id per slot, -1: none
  // springs
  std::vector<std::uint32_t> a, b;           // endpoint node ids
  std::vector<std::uint8_t> slot_a, slot_b;  // the spring's slot in a's and in b's list
  std::vector<float> rest, threshold;

  [[nodiscard]] std::uint32_t num_nodes() const { return static_cast<std::uint32_t>(x.size()); }
  [[nodiscard]] std::uint32_t num_springs() const { return static_cast<std::uint32_t>(a.size()); }
};

/// Throws std::invalid_argument for width or height < 2, more than 2^26 nodes, threshold <= 0
/// or jitter outside [0, 1).
Mesh build_mesh(std::uint32_t width,
                std::uint32_t height,
                std::uint64_t seed,
                float threshold,
                float jitter,
                Scenario scenario);

/// A live node as a variant reports it. `self` and the spring references are the variant's own
/// object names (the heap: encoded object pointers; the baseline: index + 1); 0 is null.
struct NodeRecord {
  std::uint64_t self = 0;
  std::uint32_t id   = 0;
  std::uint8_t kind  = kFree;
  float x = 0, y = 0;
  std::uint32_t distance            = kUnreached;
  std::uint64_t springs[kMaxDegree] = {};
};

/// A live spring as a variant reports it.
struct SpringRecord {
  std::uint64_t self = 0;
  std::uint32_t id   = 0;
  std::uint64_t a = 0, b = 0;  // endpoint node names
  float rest = 1, threshold = 0;
};

struct Graph {
  std::vector<NodeRecord> nodes;  // the live nodes, any order
  std::vector<SpringRecord> springs;
  float rest_scale = 1.0f;  // the Physics::rest_scale of the iteration the graph is from
};

/// Device counters of a variant: what it removed since the initial mesh.
struct Counters {
  std::uint64_t broken_springs  = 0;  // destroyed because strain > threshold
  std::uint64_t removed_springs = 0;  // destroyed with a removed node
  std::uint64_t removed_nodes   = 0;  // destroyed because no anchor reaches them
};

/// Strain tolerance of the CPU's "no broken spring survives" check: the device decided with its
/// own rounding; a surviving spring may exceed its threshold by at most this.
inline constexpr float kStrainTolerance = 1e-5f;

/// The structural invariants of a graph after an iteration (docs/apps.md "Invariants"), checked
/// in this order: object names unique and not null; every live spring's two endpoints are live
/// nodes; no live spring's strain (against its current rest length) exceeds its threshold (+
/// kStrainTolerance); every node's spring list names live springs that have the node as an
/// endpoint, and every spring is in both its endpoints' lists; every live node is reachable from an
/// anchor over live springs (a BFS on the CPU: no isolated node survived the removal). Returns the
/// first violation, nullopt if none.
std::optional<std::string> check_graph(Graph const& g);

/// Live counts = initial - removed: nodes = initial nodes - removed nodes, springs = initial
/// springs - broken - removed springs. Returns the first violation, nullopt if none.
std::optional<std::string> check_counts(Mesh const& initial, Graph const& g, Counters const& c);

/// Per-iteration result of a variant.
struct StepCounts {
  std::uint64_t nodes      = 0;  // live after the iteration
  std::uint64_t springs    = 0;
  std::uint64_t broken     = 0;  // springs broken in this iteration
  std::uint64_t removed    = 0;  // nodes removed in this iteration
  std::uint32_t bfs_rounds = 0;
};

/// The CPU simulation: the static-array baseline's phases on the host, in the same order and with
/// the same arithmetic. Iteration k (1-based) runs with physics_at(physics, loading, k). One
/// iteration: force (every live node sums its springs' forces in slot
/// order), move (integrate), break (every live spring over its threshold is destroyed and leaves
/// its endpoints' lists), BFS from the anchors over live springs, remove (the springs of
/// unreached nodes, then the nodes).
class HostSimulation {
 public:
  HostSimulation(Mesh mesh, Physics physics, Loading loading);
  StepCounts step();
  [[nodiscard]] Graph graph() const;  // names: index + 1
  [[nodiscard]] Counters counters() const { return counters_; }
  [[nodiscard]] Mesh const& mesh() const { return m_; }

 private:
  Mesh m_;
  Physics base_, p_;
  Loading loading_;
  int iteration_ = 0;
  std::vector<float> vx_, vy_, fx_, fy_;
  std::vector<std::uint32_t> distance_;
  std::vector<std::uint8_t> node_alive_, spring_alive_;
  Counters counters_;
  std::uint64_t nodes_ = 0, springs_ = 0;
};

}  // namespace heaplab::apps::structure
