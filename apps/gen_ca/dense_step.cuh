// One generation of a dense grid of cell states on a torus (gen-ca's and game-of-life's static
// baseline, docs/apps.md): one thread per cell, double-buffered, no allocation. nvcc only.
#pragma once

#include <cstdint>

#include "common/grid.cuh"
#include "rule.hpp"

namespace heaplab::apps::gen_ca {

/// next[i] = the rule's transition of cur[i] (with SkipDying: gen-ca's planted bug, rule.hpp).
template <bool SkipDying>
__global__ void dense_step_kernel(Rule rule,
                                  std::uint32_t width,
                                  std::uint32_t height,
                                  std::uint8_t const* cur,
                                  std::uint8_t* next) {
  std::uint64_t const n = std::uint64_t{width} * height;
  for (std::uint64_t i = thread_index(); i < n; i += thread_stride()) {
    std::uint32_t const x = static_cast<std::uint32_t>(i % width);
    std::uint32_t const y = static_cast<std::uint32_t>(i / width);
    std::uint32_t alive   = 0;
    for (std::uint32_t dy = 0; dy < 3; ++dy)
      for (std::uint32_t dx = 0; dx < 3; ++dx) {
        if (dx == 1 && dy == 1) continue;
        std::uint32_t const nx = (x + width + dx - 1u) % width;
        std::uint32_t const ny = (y + height + dy - 1u) % height;
        alive += cur[std::size_t{ny} * width + nx] == kAlive ? 1u : 0u;
      }
    next[i] = app_next<SkipDying>(rule, cur[i], alive);
  }
}

}  // namespace heaplab::apps::gen_ca
