// The street network of traffic (rules.hpp): built on the host from (width, height, seed), the
// same on every machine; the GPU variants copy its arrays. Plain C++17.
#pragma once

#include <cstdint>
#include <vector>

#include "rules.hpp"

namespace heaplab::apps::traffic {

class Network {
 public:
  /// Intersections on a width x height torus, 4 one-way streets out of each (rules.hpp). Throws
  /// std::invalid_argument for an empty or too large grid.
  explicit Network(Params const& p);

  [[nodiscard]] Net view() const;  // pointers into this object's vectors
  [[nodiscard]] std::uint32_t cells() const {
    return static_cast<std::uint32_t>(cell_street.size());
  }
  [[nodiscard]] std::uint32_t streets() const {
    return static_cast<std::uint32_t>(street_first.size());
  }

  std::vector<std::uint32_t> cell_street, cell_next;
  std::vector<std::uint8_t> cell_producer;
  std::vector<std::uint32_t> street_first, street_limit, street_turns;
  std::vector<std::uint32_t> producers;  // the producer cells, in order
};

}  // namespace heaplab::apps::traffic
