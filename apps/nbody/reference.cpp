#include "reference.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "heaplab/core/mix.hpp"

namespace heaplab::apps::nbody {

using core::splitmix64;  // heaplab's one 64-bit mixer (core/mix.hpp)

namespace {

/// Uniform in [0, 1) from the top 53 bits.
double unit(std::uint64_t seed, std::uint32_t id, std::uint32_t k) {
  std::uint64_t const h = splitmix64(splitmix64(seed) ^ (std::uint64_t{id} << 3 | k));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

std::string fmt(char const* format, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

bool finite(BodyRecord const& b) {
  return std::isfinite(b.pos.x) && std::isfinite(b.pos.y) && std::isfinite(b.vel.x) &&
         std::isfinite(b.vel.y) && std::isfinite(b.mass);
}

}  // namespace

State initial_bodies(std::uint32_t n, std::uint64_t seed, double v) {
  if (n == 0) throw std::invalid_argument("nbody: at least one body");
  if (!(v >= 0)) throw std::invalid_argument("nbody: the initial speed must be >= 0");
  State s(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    BodyRecord& b = s[i];
    b.pos         = {2 * unit(seed, i, 0) - 1, 2 * unit(seed, i, 1) - 1};
    b.vel         = {v * (2 * unit(seed, i, 2) - 1), v * (2 * unit(seed, i, 3) - 1)};
    b.mass        = (0.5 + unit(seed, i, 4)) / n;
    b.alive       = true;
  }
  return s;
}

std::uint64_t Reference::step() {
  std::size_t const n = s_.size();
  double const eps2   = p_.softening * p_.softening;
  std::vector<Vec2> force(n);
  for (std::size_t i = 0; i < n; ++i) {  // force: index order
    if (!s_[i].alive) continue;
    Vec2 f;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i || !s_[j].alive) continue;
      Vec2 const d = pair_force(s_[i].pos, s_[i].mass, s_[j].pos, s_[j].mass, eps2);
      f.x += d.x;
      f.y += d.y;
    }
    force[i] = f;
  }
  for (std::size_t i = 0; i < n; ++i)  // move
    if (s_[i].alive) nbody::move(s_[i].pos, s_[i].vel, force[i], s_[i].mass, p_.dt);
  if (!p_.collision()) return 0;
  // pick: the nearest other body within the merge radius (ties: lower id)
  double const r2 = p_.merge_radius * p_.merge_radius;
  std::vector<std::int64_t> target(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    if (!s_[i].alive) continue;
    double best_d2        = r2;
    std::uint32_t best_id = std::numeric_limits<std::uint32_t>::max();
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i || !s_[j].alive) continue;
      double const d2 = distance2(s_[i].pos, s_[j].pos);
      if (d2 < r2 && better_partner(d2, static_cast<std::uint32_t>(j), best_d2, best_id)) {
        best_d2 = d2;
        best_id = static_cast<std::uint32_t>(j);
      }
    }
    if (best_id != std::numeric_limits<std::uint32_t>::max()) target[i] = best_id;
  }
  // merge: mutual pairs; the heavier (equal: lower id) absorbs the other. Absorbers only write
  // themselves and read their partner, who is absorbed and writes nothing: order-free.
  std::vector<bool> absorbed(n, false);
  std::uint64_t merges = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (target[i] < 0) continue;
    auto const j = static_cast<std::size_t>(target[i]);
    if (target[j] != static_cast<std::int64_t>(i)) continue;
    BodyRecord& a       = s_[i];
    BodyRecord const& b = s_[j];
    if (!absorbs(a.mass, static_cast<std::uint32_t>(i), b.mass, static_cast<std::uint32_t>(j)))
      continue;
    Merged const m = merge<false>(a.pos, a.vel, a.mass, b.pos, b.vel, b.mass);
    a.pos          = m.pos;
    a.vel          = m.vel;
    a.mass         = m.mass;
    absorbed[j]    = true;
    ++merges;
  }
  for (std::size_t i = 0; i < n; ++i)  // reap
    if (absorbed[i]) s_[i].alive = false;
  return merges;
}

Totals totals(State const& s) {
  Totals t;
  for (BodyRecord const& b : s) {
    if (!b.alive) continue;
    ++t.bodies;
    t.mass += b.mass;
    t.momentum.x += b.mass * b.vel.x;
    t.momentum.y += b.mass * b.vel.y;
    t.momentum_scale += b.mass * std::sqrt(b.vel.x * b.vel.x + b.vel.y * b.vel.y);
  }
  return t;
}

std::optional<std::string> check_state(State const& s, Expected const& e) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    BodyRecord const& b = s[i];
    if (!b.alive) continue;
    if (!finite(b)) return "body " + std::to_string(i) + " has a NaN or infinite field";
    if (!(b.mass > 0)) return "body " + std::to_string(i) + fmt(" has mass %.17g <= 0", b.mass);
  }
  Totals const t = totals(s);
  if (e.merges > e.initial.bodies)
    return "the merge counter (" + std::to_string(e.merges) + ") exceeds the initial bodies (" +
           std::to_string(e.initial.bodies) + ")";
  std::uint64_t const expected_bodies = e.initial.bodies - e.merges;
  if (t.bodies != expected_bodies)
    return std::to_string(t.bodies) + " live bodies, expected initial " +
           std::to_string(e.initial.bodies) + " - merges " + std::to_string(e.merges) + " = " +
           std::to_string(expected_bodies);
  if (e.heap_live_objects && *e.heap_live_objects != t.bodies)
    return "the heap holds " + std::to_string(*e.heap_live_objects) + " live objects, " +
           std::to_string(t.bodies) + " live bodies";
  if (!e.collision) {
    if (t.mass != e.initial.mass)
      return fmt(
          "total mass %.17g, initial %.17g (nbody: must be equal exactly)", t.mass, e.initial.mass);
  } else if (std::fabs(t.mass - e.initial.mass) > e.mass_tolerance * e.initial.mass) {
    return fmt("total mass %.17g, initial %.17g: relative difference %.3g",
               t.mass,
               e.initial.mass,
               std::fabs(t.mass - e.initial.mass) / e.initial.mass) +
           fmt(" > tolerance %.3g", e.mass_tolerance);
  }
  double const dpx   = t.momentum.x - e.initial.momentum.x;
  double const dpy   = t.momentum.y - e.initial.momentum.y;
  double const drift = std::sqrt(dpx * dpx + dpy * dpy);
  double const scale = std::max(e.initial.momentum_scale, t.momentum_scale);
  if (!(drift <= e.momentum_tolerance * scale))
    return fmt("total momentum drifted by %.3g, %.3g of the momentum scale sum m|v|",
               drift,
               scale > 0 ? drift / scale : drift) +
           fmt(" (tolerance %.3g)", e.momentum_tolerance);
  return std::nullopt;
}

std::optional<std::string> compare_states(State const& expected,
                                          State const& actual,
                                          double tolerance) {
  if (expected.size() != actual.size())
    return "states of " + std::to_string(expected.size()) + " and " +
           std::to_string(actual.size()) + " bodies";
  auto const close = [&](double want, double got) {
    return std::fabs(want - got) <= tolerance * (1 + std::fabs(want));
  };
  for (std::size_t i = 0; i < expected.size(); ++i) {
    BodyRecord const& a   = expected[i];
    BodyRecord const& b   = actual[i];
    std::string const who = "body " + std::to_string(i);
    if (a.alive != b.alive)
      return who + (a.alive ? " is alive in the reference, absorbed in the app"
                            : " is absorbed in the reference, alive in the app");
    if (!a.alive) continue;
    if (!close(a.pos.x, b.pos.x) || !close(a.pos.y, b.pos.y))
      return who + fmt(": position (%.17g, %.17g)", b.pos.x, b.pos.y) +
             fmt(", reference (%.17g, %.17g)", a.pos.x, a.pos.y);
    if (!close(a.vel.x, b.vel.x) || !close(a.vel.y, b.vel.y))
      return who + fmt(": velocity (%.17g, %.17g)", b.vel.x, b.vel.y) +
             fmt(", reference (%.17g, %.17g)", a.vel.x, a.vel.y);
    if (!close(a.mass, b.mass)) return who + fmt(": mass %.17g, reference %.17g", b.mass, a.mass);
  }
  return std::nullopt;
}

}  // namespace heaplab::apps::nbody
