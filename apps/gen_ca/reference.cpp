#include "reference.hpp"

#include <stdexcept>

#include "heaplab/core/mix.hpp"

namespace heaplab::apps::gen_ca {

using core::splitmix64;  // heaplab's one 64-bit mixer (core/mix.hpp)

Grid initial_grid(std::uint32_t width, std::uint32_t height, std::uint64_t seed, double density) {
  if (width == 0 || height == 0) throw std::invalid_argument("gen-ca: the grid must not be empty");
  if (!(density >= 0.0 && density <= 1.0))
    throw std::invalid_argument("gen-ca: density must be in [0, 1]");
  Grid g(width, height);
  // 2^64 * density, saturated: density 1 makes every cell alive.
  double const scaled = density * 18446744073709551616.0;
  for (std::size_t i = 0; i < g.cells.size(); ++i) {
    bool const alive = density >= 1.0 || static_cast<double>(splitmix64(seed ^ i)) < scaled;
    g.cells[i]       = alive ? kAlive : kDead;
  }
  return g;
}

std::uint32_t alive_neighbours(Grid const& g, std::uint32_t x, std::uint32_t y) {
  std::uint32_t n = 0;
  for (std::uint32_t dy = 0; dy < 3; ++dy)
    for (std::uint32_t dx = 0; dx < 3; ++dx) {
      if (dx == 1 && dy == 1) continue;
      std::uint32_t const nx = (x + g.width + dx - 1) % g.width;
      std::uint32_t const ny = (y + g.height + dy - 1) % g.height;
      n += g.at(nx, ny) == kAlive ? 1u : 0u;
    }
  return n;
}

Grid step(Grid const& g, Rule const& rule) {
  Grid next(g.width, g.height);
  for (std::uint32_t y = 0; y < g.height; ++y)
    for (std::uint32_t x = 0; x < g.width; ++x)
      next.set(x, y, rule.next(g.at(x, y), alive_neighbours(g, x, y)));
  return next;
}

Population population(Grid const& g) {
  Population p;
  for (auto s : g.cells) {
    p.alive += s == kAlive ? 1u : 0u;
    p.dying += s > kAlive ? 1u : 0u;
  }
  return p;
}

std::string Difference::to_string() const {
  return "cell (" + std::to_string(x) + ", " + std::to_string(y) + "): reference state " +
         std::to_string(expected) + ", app state " + std::to_string(actual);
}

std::optional<Difference> first_difference(Grid const& reference, Grid const& actual) {
  if (reference.width != actual.width || reference.height != actual.height ||
      reference.cells.size() != actual.cells.size())
    throw std::invalid_argument("gen-ca: grids of different sizes compared");
  for (std::size_t i = 0; i < reference.cells.size(); ++i)
    if (reference.cells[i] != actual.cells[i])
      return Difference{static_cast<std::uint32_t>(i % reference.width),
                        static_cast<std::uint32_t>(i / reference.width),
                        reference.cells[i],
                        actual.cells[i]};
  return std::nullopt;
}

}  // namespace heaplab::apps::gen_ca
