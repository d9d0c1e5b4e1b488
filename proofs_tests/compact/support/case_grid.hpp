// The case grid of the per-pass differential (docs/compaction.md "What is checked"): for a
// variant, every n in {1, 2, 3, 5, 7}, k1 in {0, 1, 16} and three heap shapes, plus four
// multi-move cases (objects relocated 2+ times in one call), each with its own seed derived from
// a base seed (HEAPLAB_COMPACT_SEED overrides the default; failures print the case's seed and
// parameters).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "compact_test_types.hpp"
#include "population.hpp"

namespace compact_test {

inline std::uint64_t base_seed() {
  if (char const* s = std::getenv("HEAPLAB_COMPACT_SEED"); s != nullptr && *s != '\0')
    return std::strtoull(s, nullptr, 0);
  return 20261121;
}

inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 31);
}

/// Four cases per variant in which objects move 2+ times in one call and pointers to them (and
/// between them, for Node and Fat, which point to their own kind) stay stale through several
/// passes until the call's one rewrite: the multi-move shape (every block keeps 1 or 2 objects),
/// k1 = 0 or 1, n = 1 or 2 (the heap's), every concrete type once; the recompute variants get a
/// forced cap of 1..5 in two of them. model_hooks_test checks on the model that every such case
/// relocates some object at least twice and has a pointer to one.
inline std::vector<CaseParams> multi_move_cases(core::RewriteVariant variant,
                                                std::uint32_t num_blocks,
                                                std::uint64_t seed = base_seed()) {
  struct Spec {
    std::uint32_t type, n, k1;
    bool capped;
  };
  std::vector<CaseParams> out;
  for (Spec const s : {Spec{kNode, 1, 0, false},
                       Spec{kFat, 2, 0, true},
                       Spec{kLeaf, 1, 0, true},
                       Spec{kHolder, 2, 1, false}}) {
    CaseParams c;
    c.seed          = mix(mix(mix(seed, static_cast<std::uint64_t>(variant)), 1000 + s.type), s.n);
    c.num_blocks    = num_blocks + static_cast<std::uint32_t>(c.seed % 64);
    c.n             = s.n;
    c.defrag_factor = s.n;
    c.k1            = s.k1;
    c.variant       = variant;
    c.shape         = Shape::multi_move;
    c.type          = s.type;
    if (variant != core::RewriteVariant::forwarding && s.capped)
      c.forced_cap = 1 + static_cast<std::uint32_t>((c.seed >> 8) % 5);
    out.push_back(c);
  }
  return out;
}

/// The cases for one variant, half of them (by seed) with R in the order by fill. Shapes: uniform
/// frees with the heap's n equal to the call's; per-block fills with heap n = 1 (the n-override
/// rule for n > 1); sparse heaps with heap n = 3. The recompute variants get a forced small cap
/// (1..5 sources per pass) in the per-block and sparse shapes. The defragmented type rotates over
/// the concrete types. Then the multi-move cases (multi_move_cases). `num_blocks` is the heap size
/// (each case adds 0..63 blocks from its seed).
inline std::vector<CaseParams> case_grid(core::RewriteVariant variant,
                                         std::uint32_t num_blocks,
                                         std::uint64_t seed = base_seed()) {
  std::vector<CaseParams> out;
  std::uint32_t index = 0;
  for (std::uint32_t n : {1u, 2u, 3u, 5u, 7u}) {
    for (std::uint32_t k1 : {0u, 1u, 16u}) {
      for (Shape shape : {Shape::uniform, Shape::per_block, Shape::sparse}) {
        CaseParams c;
        c.seed          = mix(mix(mix(mix(seed, static_cast<std::uint64_t>(variant)), n), k1),
                     static_cast<std::uint64_t>(shape));
        c.num_blocks    = num_blocks + static_cast<std::uint32_t>(c.seed % 64);
        c.n             = n;
        c.k1            = k1;
        c.variant       = variant;
        c.shape         = shape;
        c.defrag_factor = shape == Shape::uniform ? n : shape == Shape::per_block ? 1 : 3;
        c.type          = kConcreteTypes[index++ % 4];
        // Half the cases (by the seed) take the order by fill (core::CandidateOrder).
        c.order = ((c.seed >> 16) & 1u) != 0 ? core::CandidateOrder::by_fill
                                             : core::CandidateOrder::block_id;
        if (variant != core::RewriteVariant::forwarding && shape != Shape::uniform)
          c.forced_cap = 1 + static_cast<std::uint32_t>((c.seed >> 8) % 5);
        out.push_back(c);
      }
    }
  }
  for (CaseParams const& c : multi_move_cases(variant, num_blocks, seed)) out.push_back(c);
  return out;
}

}  // namespace compact_test
