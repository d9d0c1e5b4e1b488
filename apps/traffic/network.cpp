#include "network.hpp"

#include <stdexcept>

namespace heaplab::apps::traffic {

namespace {
enum NetSalt : std::uint32_t { kLength = 100, kLimit = 101, kProducer = 102 };
}

Network::Network(Params const& p) {
  if (p.width < 1 || p.height < 1)
    throw std::invalid_argument("traffic: --width and --height must be >= 1");
  std::uint64_t const intersections = std::uint64_t{p.width} * p.height;
  if (intersections > (std::uint64_t{1} << 22))
    throw std::invalid_argument("traffic: at most 2^22 intersections");
  auto const n_streets = static_cast<std::uint32_t>(4 * intersections);
  // Street s = 4 * i + d leaves intersection i in direction d (0 north, 1 east, 2 south, 3 west).
  auto neighbour = [&](std::uint32_t i, std::uint32_t d) {
    std::uint32_t const x = i % p.width, y = i / p.width;
    switch (d) {
      case 0:
        return ((y + p.height - 1) % p.height) * p.width + x;
      case 1:
        return y * p.width + (x + 1) % p.width;
      case 2:
        return ((y + 1) % p.height) * p.width + x;
      default:
        return y * p.width + (x + p.width - 1) % p.width;
    }
  };
  street_first.resize(n_streets);
  street_limit.resize(n_streets);
  street_turns.resize(3 * std::size_t{n_streets});
  for (std::uint32_t s = 0; s < n_streets; ++s) {
    std::uint32_t const length = uniform(random(p.seed, s, 0, kLength), kMinStreet, kMaxStreet);
    street_first[s]            = static_cast<std::uint32_t>(cell_street.size());
    street_limit[s]            = uniform(random(p.seed, s, 0, kLimit), kMinLimit, kMaxLimit);
    for (std::uint32_t k = 0; k < length; ++k) {
      cell_street.push_back(s);
      cell_next.push_back(k + 1 < length ? street_first[s] + k + 1 : kNone);
      bool const producer = k == 0 && random(p.seed, s, 0, kProducer) % 4u == 0;
      cell_producer.push_back(producer ? 1 : 0);
      if (producer) producers.push_back(street_first[s]);
    }
    // The end intersection's streets, but the one straight back.
    std::uint32_t const d = s % 4, end = neighbour(s / 4, d), back = (d + 2) % 4;
    std::uint32_t k = 0;
    for (std::uint32_t e = 0; e < 4; ++e)
      if (e != back) street_turns[3 * std::size_t{s} + k++] = 4 * end + e;
  }
}

Net Network::view() const {
  Net n;
  n.cells         = cells();
  n.streets       = streets();
  n.cell_street   = cell_street.data();
  n.cell_next     = cell_next.data();
  n.cell_producer = cell_producer.data();
  n.street_first  = street_first.data();
  n.street_limit  = street_limit.data();
  n.street_turns  = street_turns.data();
  return n;
}

}  // namespace heaplab::apps::traffic
