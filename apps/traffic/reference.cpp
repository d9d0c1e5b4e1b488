// CPU reference and checker of traffic (reference.hpp).
#include "reference.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace heaplab::apps::traffic {

Dense World::dense() {
  Dense d;
  d.p             = params;
  d.net           = network->view();
  d.present       = present.data();
  d.id            = id.data();
  d.velocity      = velocity.data();
  d.max_velocity  = max_velocity.data();
  d.trip          = trip.data();
  d.target        = target.data();
  d.next_velocity = next_velocity.data();
  d.claim         = claim.data();
  d.stop          = stop.data();
  d.stop_velocity = stop_velocity.data();
  d.incoming      = incoming.data();
  d.claims        = claims.data();
  return d;
}

World initial_world(Params const& p, Network const& network) {
  if (p.slow_per_mille > 1000 || p.spawn_per_mille > 1000)
    throw std::invalid_argument("traffic: --slow and --spawn-rate must be in [0, 1]");
  World w;
  w.params     = p;
  w.network    = &network;
  auto const n = network.cells();
  w.present.assign(n, 0);
  w.id.assign(n, 0);
  for (auto* v : {&w.velocity, &w.max_velocity, &w.trip, &w.next_velocity, &w.stop_velocity})
    v->assign(n, 0);
  for (auto* v : {&w.target, &w.claim, &w.stop, &w.incoming}) v->assign(n, kNone);
  w.claims.assign(network.streets(), kNoKey);
  return w;
}

void step(World& w, std::uint32_t it) {
  Dense const d = w.dense();
  auto const n  = w.network->cells();
  std::fill(w.claims.begin(), w.claims.end(), kNoKey);
  std::fill(w.incoming.begin(), w.incoming.end(), kNone);
  for (std::uint32_t c = 0; c < n; ++c) d.decide(it, c);
  for (std::uint32_t c = 0; c < n; ++c) d.resolve_move(it, c);
  for (std::uint32_t c = 0; c < n; ++c) d.pull(c);
  for (std::uint32_t c = 0; c < n; ++c) d.leave(c);
  for (std::uint32_t c = 0; c < n; ++c) d.spawn(it, c);
}

Population population(World const& w) {
  Population p;
  for (std::size_t c = 0; c < w.present.size(); ++c)
    if (w.present[c] != 0) {
      ++p.cars;
      p.moving += w.velocity[c] > 0;
    }
  return p;
}

namespace {

std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}
std::string fields(Vehicle const& v) {
  return "car " + std::to_string(v.id) + " velocity " + std::to_string(v.velocity) + "/" +
         std::to_string(v.max_velocity) + " trip " + std::to_string(v.trip);
}
std::string at(World const& w, std::size_t c) {
  std::uint32_t const s = w.network->cell_street[c];
  return "cell " + std::to_string(c) + " (street " + std::to_string(s) + ", position " +
         std::to_string(c - w.network->street_first[s]) + ")";
}
Vehicle vehicle_at(World const& w, std::size_t c) {
  Vehicle v;
  if (w.present[c] == 0) return v;
  v.present      = true;
  v.id           = w.id[c];
  v.velocity     = w.velocity[c];
  v.max_velocity = w.max_velocity[c];
  v.trip         = w.trip[c];
  return v;
}
bool same(Vehicle const& a, Vehicle const& b) {
  return a.id == b.id && a.velocity == b.velocity && a.max_velocity == b.max_velocity &&
         a.trip == b.trip;
}

}  // namespace

std::optional<std::string> check_state(StateView const& s, World const& w) {
  std::size_t const n = w.present.size();
  if (s.handle.size() != n || s.is_car.size() != n)
    throw std::invalid_argument("traffic: a state and a world of different sizes checked");
  std::vector<CarView> cars = s.cars;
  std::sort(cars.begin(), cars.end(), [](CarView const& a, CarView const& b) {
    return a.handle < b.handle;
  });
  for (std::size_t k = 0; k < cars.size(); ++k) {
    CarView const& a = cars[k];
    if (k > 0 && cars[k - 1].handle == a.handle)
      return "object " + hex(a.handle) + " is reported twice by the heap";
    if (a.cell >= n || s.handle[a.cell] != a.handle)
      return "Car object " + hex(a.handle) + " (" + fields(a.vehicle) + ") of cell " +
             std::to_string(a.cell) + " is not in the grid at its cell: a leaked object";
  }
  for (std::size_t c = 0; c < n; ++c) {
    Vehicle const expected = vehicle_at(w, c);
    if (s.handle[c] == 0) {
      if (expected.present) return at(w, c) + ": reference " + fields(expected) + ", app empty";
      continue;
    }
    auto const it = std::lower_bound(
        cars.begin(), cars.end(), s.handle[c], [](CarView const& a, std::uint64_t h) {
          return a.handle < h;
        });
    if (it == cars.end() || it->handle != s.handle[c] || s.is_car[c] == 0)
      return at(w, c) + " points at " + hex(s.handle[c]) + ", which is no live Car object";
    if (!expected.present) return at(w, c) + ": reference empty, app " + fields(it->vehicle);
    if (!same(it->vehicle, expected))
      return at(w, c) + ": reference " + fields(expected) + ", app " + fields(it->vehicle);
  }
  return std::nullopt;
}

StateView view_of(World const& w) {
  StateView s;
  std::size_t const n = w.present.size();
  s.handle.assign(n, 0);
  s.is_car.assign(n, 0);
  for (std::size_t c = 0; c < n; ++c) {
    if (w.present[c] == 0) continue;
    s.handle[c] = c + 1;
    s.is_car[c] = 1;
    s.cars.push_back({c + 1, static_cast<std::uint32_t>(c), vehicle_at(w, c)});
  }
  return s;
}

World world_of(StateView const& s, Params const& p, Network const& network) {
  World w = initial_world(p, network);
  for (CarView const& a : s.cars) {
    if (a.cell >= w.present.size())
      throw std::invalid_argument("traffic: a car in cell " + std::to_string(a.cell) +
                                  " of a network of " + std::to_string(w.present.size()));
    w.present[a.cell]      = 1;
    w.id[a.cell]           = a.vehicle.id;
    w.velocity[a.cell]     = a.vehicle.velocity;
    w.max_velocity[a.cell] = a.vehicle.max_velocity;
    w.trip[a.cell]         = a.vehicle.trip;
  }
  return w;
}

}  // namespace heaplab::apps::traffic
