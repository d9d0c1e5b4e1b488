// The CPU side of barnes-hut (docs/apps.md "barnes-hut"): the seeded initial bodies, the views of
// the GPU app's bodies and tree nodes, and the checks `--check` runs on them: the quad tree's
// invariants, the forces against a Barnes-Hut walk of the same tree on the CPU, and against the
// direct O(N^2) sum. Plain C++17, host only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "physics.hpp"

namespace heaplab::apps::barnes_hut {

struct BodyInit {
  float x = 0, y = 0, vx = 0, vy = 0, mass = 0;
};

/// Half the bodies uniform in [-0.8, 0.8)^2, half in a dense cluster around (0.3, 0.3) (deep
/// subtrees), small random velocities, masses 0.5..1.5 / N. Throws std::invalid_argument for 0
/// bodies.
std::vector<BodyInit> initial_bodies(Params const& p);

/// One body as the GPU app exports it (handles: object pointers, 0 for none).
struct BodyView {
  std::uint64_t handle = 0;
  float x = 0, y = 0, fx = 0, fy = 0, mass = 0;
  std::uint64_t leaf = 0;  // its leaf node
  std::uint64_t next = 0;  // the next body of its leaf's list
};

/// One tree node as the GPU app exports it.
struct NodeView {
  std::uint64_t handle = 0;
  float cx = 0, cy = 0, half = 0;
  std::uint64_t parent   = 0;
  std::uint64_t child[4] = {0, 0, 0, 0};  // all 0 (a leaf) or all set
  std::uint64_t first    = 0;             // a leaf's first body
  std::uint32_t count    = 0;             // bodies in the subtree
  std::uint32_t depth    = 0;
  float mass = 0, mx = 0, my = 0;  // sums of m, m x, m y over the subtree
};

/// The tree's invariants, the first violation or nullopt: one root (depth 0, the [-1, 1)^2 box, no
/// parent); a node's children all absent or all present, each the node's quadrant one level
/// deeper with the node as parent; every node reachable from the root (else a leaked node); every
/// body in exactly one leaf's list, inside the leaf's box, the list as long as the leaf's count;
/// an inner node holds no list, more than kLeafCapacity bodies and the sum of its children's
/// counts; a leaf at most kLeafCapacity bodies unless at kMaxDepth; masses and mass moments the
/// sums of the children's (or the list's) within a relative 1e-4.
std::optional<std::string> check_tree(std::vector<BodyView> const& bodies,
                                      std::vector<NodeView> const& nodes);

/// The forces: every body's force against a Barnes-Hut walk of the same tree on the CPU (same
/// theta; at most 1% of the bodies may differ by more than a relative 1e-3, a node opened on one
/// side of the criterion and not on the other, none by more than 0.1), and the mean relative error
/// against the direct sum over at most `direct_sample` bodies (<= max_direct_error). The first
/// problem or nullopt; `report` gets a line with the measured errors.
std::optional<std::string> check_forces(std::vector<BodyView> const& bodies,
                                        std::vector<NodeView> const& nodes,
                                        Params const& p,
                                        std::size_t direct_sample,
                                        double max_direct_error,
                                        std::string* report);

}  // namespace heaplab::apps::barnes_hut
