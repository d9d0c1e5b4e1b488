// Random heap states for the compaction tests (plain C++, host): which objects to allocate, and
// (once their placement is known from a snapshot) which to free, how the survivors point to each
// other, and which external roots refer to them. Placement-independent choices come from the
// seed; placement-dependent ones (the per-block shape) from the seed and the snapshot, so a case
// replays exactly on a heap that places the same way, and on any heap checks the same properties.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "heaplab/check/snapshot.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/core/enum_names.hpp"
#include "heaplab/core/heap_config.hpp"

namespace compact_test {

namespace check = heaplab::check;
namespace core  = heaplab::core;

/// How objects are freed after allocation (the initial fragmentation).
enum class Shape : std::uint8_t {
  uniform,     // every object independently, with a per-case probability in [0.3, 0.8]
  per_block,   // every block drops to a random fill in [0, its fill] (many fills near n/(n+1))
  sparse,      // every object with probability 0.92 (few objects, many nearly empty blocks)
  multi_move,  // every block keeps 1 or 2 objects: a pass's targets stay candidates and become
               // sources of later passes, so objects move 2+ times in one call; pointers form
               // chains (slot k of an object -> the (k+1)-th next survivor its pointee admits)
};

inline char const* to_string(Shape s) {
  static constexpr core::EnumName<Shape> kNames[] = {{Shape::uniform, "uniform"},
                                                     {Shape::per_block, "per-block"},
                                                     {Shape::sparse, "sparse"},
                                                     {Shape::multi_move, "multi-move"}};
  return core::name_of(kNames, s);
}

/// One differential case. `seed` determines everything else that is random.
struct CaseParams {
  std::uint64_t seed           = 1;
  std::uint32_t num_blocks     = 256;
  std::uint32_t defrag_factor  = 1;  // the heap's defragmentation factor
  std::uint32_t n              = 1;  // the call's
  std::uint32_t k1             = 0;
  core::RewriteVariant variant = core::RewriteVariant::forwarding;
  core::CandidateOrder order   = core::CandidateOrder::block_id;
  Shape shape                  = Shape::uniform;
  std::uint32_t type           = 0;  // defragmented type
  std::optional<std::uint32_t> forced_cap;
  /// Population: fraction of the blocks the allocations fill, and optionally a single type.
  double load = 0.75;
  std::optional<std::uint32_t> only_type;
  /// Compare the snapshot after the first `compared_passes` passes (all by default; the final
  /// state is always compared).
  std::size_t compared_passes = ~std::size_t{0};

  [[nodiscard]] std::string describe() const {
    return "seed=" + std::to_string(seed) + " M=" + std::to_string(num_blocks) +
           " defrag_factor=" + std::to_string(defrag_factor) + " n=" + std::to_string(n) +
           " k1=" + std::to_string(k1) + " variant=" + core::to_string(variant) +
           " order=" + core::to_string(order) + " shape=" + to_string(shape) +
           " type=" + std::to_string(type) +
           " forced_cap=" + (forced_cap ? std::to_string(*forced_cap) : std::string("none"));
  }
  /// The cap both sides apply (core/defrag_limits.hpp), computed here from the specification.
  [[nodiscard]] std::uint32_t effective_cap() const {
    return core::capped_sources(core::sources_per_pass(variant, n),
                                forced_cap.value_or(core::kUnlimitedSources));
  }
};

struct NewObject {
  std::uint64_t id   = 0;
  std::uint32_t type = 0;
};

/// Objects for about `load` of the heap's blocks, types mixed at random with random weights (or
/// only `only_type`), ids 1, 2, ..., in the order they are allocated.
inline std::vector<NewObject> make_population(core::HeapConfig const& config,
                                              std::mt19937_64& rng,
                                              double load                            = 0.75,
                                              std::optional<std::uint32_t> only_type = {}) {
  std::vector<std::uint32_t> concrete;
  for (std::uint32_t t = 0; t < config.num_types(); ++t)
    if (!config.types[t].is_abstract && (!only_type || *only_type == t)) concrete.push_back(t);
  std::vector<double> weight(concrete.size());
  std::uniform_real_distribution<double> unit(0.2, 1.0);
  double blocks_per_object = 0, total = 0;
  for (std::size_t i = 0; i < concrete.size(); ++i) total += weight[i] = unit(rng);
  for (std::size_t i = 0; i < concrete.size(); ++i)
    blocks_per_object += weight[i] / total / config.capacity(concrete[i]);
  auto const count = static_cast<std::uint64_t>(load * config.num_blocks / blocks_per_object);
  std::discrete_distribution<std::size_t> pick(weight.begin(), weight.end());
  std::vector<NewObject> out;
  for (std::uint64_t id = 1; id <= count; ++id) out.push_back({id, concrete[pick(rng)]});
  return out;
}

/// A pointer write: slot `slot` (HeapConfig::pointer_slots order) of object `from` := object `to`.
struct Link {
  std::uint64_t from = 0;
  std::uint32_t slot = 0;
  std::uint64_t to   = 0;
};

/// An external root array: declared pointee type and the ids its entries refer to (0 = null).
struct RootArray {
  std::uint32_t pointee = 0;
  std::vector<std::uint64_t> targets;
};

struct Mutation {
  std::vector<std::uint64_t> frees;
  std::vector<Link> links;  // among survivors only, so nothing dangles
  std::vector<RootArray> roots;
};

/// What to free (by shape), how survivors point to survivors (each pointer slot linked with
/// probability 0.7 to a random survivor of a type its pointee admits; in the multi-move shape
/// slot k to the (k+1)-th next such survivor by id, cyclically: chains), and four root arrays
/// (pointee = every non-leaf type of interest, 80% of entries non-null).
inline Mutation plan_mutation(check::HeapSnapshot const& allocated,
                              Shape shape,
                              std::mt19937_64& rng) {
  core::HeapConfig const& config = allocated.config;
  Mutation m;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> survivors;  // (id, type)
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  double const p = shape == Shape::sparse ? 0.92 : 0.3 + 0.5 * unit(rng);
  for (std::uint32_t b = 0; b < allocated.blocks.size(); ++b) {
    std::optional<std::uint32_t> const type = check::allocated_type(allocated, b);
    if (!type) continue;
    std::vector<std::uint64_t> ids;
    for (auto const& o : allocated.blocks[b].objects)
      if (o) ids.push_back(o->id);
    std::vector<bool> dies(ids.size(), false);
    if (shape == Shape::per_block || shape == Shape::multi_move) {
      std::uniform_int_distribution<std::size_t> fill(shape == Shape::multi_move ? 1 : 0,
                                                      shape == Shape::multi_move ? 2 : ids.size());
      std::size_t const keep = std::min(fill(rng), ids.size());
      std::vector<std::size_t> order(ids.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t i = keep; i < order.size(); ++i) dies[order[i]] = true;
    } else {
      for (std::size_t i = 0; i < ids.size(); ++i) dies[i] = unit(rng) < p;
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (dies[i])
        m.frees.push_back(ids[i]);
      else
        survivors.emplace_back(ids[i], *type);
    }
  }
  std::sort(survivors.begin(), survivors.end());
  // Survivors a pointer declared as `pointee` may refer to.
  std::map<std::uint32_t, std::vector<std::uint64_t>> admitted;
  for (std::uint32_t s = 0; s < config.num_types(); ++s)
    for (auto const& [id, t] : survivors)
      if (config.is_subtype(t, s)) admitted[s].push_back(id);
  auto random_of = [&](std::uint32_t pointee) -> std::uint64_t {
    auto const& v = admitted[pointee];
    if (v.empty()) return 0;
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  };
  // The (k+1)-th survivor after `id` that a pointer declared as `pointee` may refer to.
  auto chained_of = [&](std::uint32_t pointee, std::uint64_t id, std::uint32_t k) -> std::uint64_t {
    auto const& v = admitted[pointee];
    if (v.empty()) return 0;
    std::size_t const after = std::upper_bound(v.begin(), v.end(), id) - v.begin();
    return v[(after + k) % v.size()];
  };
  for (auto const& [id, t] : survivors) {
    auto const slots = config.pointer_slots(t);
    for (std::uint32_t k = 0; k < slots.size(); ++k) {
      if (shape == Shape::multi_move) {
        m.links.push_back({id, k, chained_of(slots[k].pointee, id, k)});
      } else if (unit(rng) < 0.7) {
        if (std::uint64_t const to = random_of(slots[k].pointee); to != 0)
          m.links.push_back({id, k, to});
      }
    }
  }
  std::vector<std::pair<std::uint32_t, std::size_t>> arrays;  // (pointee, entries)
  for (std::uint32_t s = 0; s < config.num_types(); ++s)
    arrays.emplace_back(s, config.types[s].is_abstract ? 64 : 24);
  for (auto const& [pointee, entries] : arrays) {
    RootArray r;
    r.pointee = pointee;
    for (std::size_t i = 0; i < entries; ++i)
      r.targets.push_back(unit(rng) < 0.8 ? random_of(pointee) : 0);
    m.roots.push_back(std::move(r));
  }
  return m;
}

/// The live-object graph of a snapshot with payloads plus roots: per id its type, cookie and
/// pointer targets by id; roots by id (0 = null). Defragmentation must preserve it exactly.
struct IdGraph {
  struct Node {
    std::uint32_t type   = 0;
    std::uint64_t cookie = 0;
    std::vector<std::uint64_t> refs;  // 0 = null; kDangling = a location without an object
    friend bool operator==(Node const& a, Node const& b) {
      return a.type == b.type && a.cookie == b.cookie && a.refs == b.refs;
    }
  };
  static constexpr std::uint64_t kDangling = ~std::uint64_t{0};
  std::map<std::uint64_t, Node> objects;
  std::vector<std::uint64_t> roots;
  friend bool operator==(IdGraph const& a, IdGraph const& b) {
    return a.objects == b.objects && a.roots == b.roots;
  }
};

inline IdGraph id_graph(check::HeapSnapshot const& s,
                        std::vector<std::optional<core::SlotRef>> const& roots) {
  std::map<core::SlotRef, std::uint64_t> at;
  for (std::uint32_t b = 0; b < s.blocks.size(); ++b)
    for (std::uint32_t slot = 0; slot < s.blocks[b].objects.size(); ++slot)
      if (s.blocks[b].objects[slot]) at[{b, slot}] = s.blocks[b].objects[slot]->id;
  auto id_of = [&](std::optional<core::SlotRef> const& r) -> std::uint64_t {
    if (!r) return 0;
    auto it = at.find(*r);
    return it == at.end() ? IdGraph::kDangling : it->second;
  };
  IdGraph g;
  for (std::uint32_t b = 0; b < s.blocks.size(); ++b) {
    for (auto const& o : s.blocks[b].objects) {
      if (!o) continue;
      IdGraph::Node node;
      node.type   = s.blocks[b].type;
      node.cookie = o->cookie;
      for (auto const& r : o->refs) node.refs.push_back(id_of(r));
      g.objects[o->id] = std::move(node);
    }
  }
  for (auto const& r : roots) g.roots.push_back(id_of(r));
  return g;
}

}  // namespace compact_test
