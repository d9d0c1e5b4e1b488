// The CPU reference of the generational CA (docs/apps.md "gen-ca"): a dense W x H torus of cell
// states stepped with Rule::next, the seeded initial grid the GPU app starts from, and the exact
// comparison `--check` uses. Plain C++17, host only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rule.hpp"

namespace heaplab::apps::gen_ca {

struct Grid {
  std::uint32_t width  = 0;
  std::uint32_t height = 0;
  std::vector<std::uint8_t> cells;  // row-major: cell (x, y) at y * width + x

  Grid() = default;
  Grid(std::uint32_t w, std::uint32_t h) : width(w), height(h), cells(std::size_t{w} * h, kDead) {}
  [[nodiscard]] std::uint8_t at(std::uint32_t x, std::uint32_t y) const {
    return cells[std::size_t{y} * width + x];
  }
  void set(std::uint32_t x, std::uint32_t y, std::uint8_t s) {
    cells[std::size_t{y} * width + x] = s;
  }
};

/// The initial grid: cell i is alive iff splitmix64(seed ^ i) < density * 2^64, else dead (no
/// dying cells). The same on every platform. Throws std::invalid_argument for an empty grid or a
/// density outside [0, 1].
Grid initial_grid(std::uint32_t width, std::uint32_t height, std::uint64_t seed, double density);

/// Alive neighbours of (x, y) on the torus (Moore neighbourhood).
std::uint32_t alive_neighbours(Grid const& g, std::uint32_t x, std::uint32_t y);

/// One generation: every cell's Rule::next from the current grid.
Grid step(Grid const& g, Rule const& rule);

struct Population {
  std::uint64_t alive = 0;
  std::uint64_t dying = 0;
};
Population population(Grid const& g);

struct Difference {
  std::uint32_t x       = 0;
  std::uint32_t y       = 0;
  std::uint8_t expected = 0;  // the reference's state
  std::uint8_t actual   = 0;  // the app's state
  [[nodiscard]] std::string to_string() const;
};

/// The first cell (row-major) whose state differs; nullopt when equal. Throws
/// std::invalid_argument when the sizes differ.
std::optional<Difference> first_difference(Grid const& reference, Grid const& actual);

}  // namespace heaplab::apps::gen_ca
