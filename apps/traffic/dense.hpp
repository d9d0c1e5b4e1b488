// The dense world of traffic (rules.hpp): per-cell arrays of the cars' fields, at most one car per
// cell, and the phases as per-cell functions. The CPU reference runs each over all cells in
// order; the static baseline (DynaSOAr sec. 6, category 3: vehicles merged into the cells) runs
// each as one kernel, one thread per cell. Each writes only its own cell, or takes a minimum, or
// writes the one cell it alone targets (`incoming`). Host and device (HEAPLAB_HD).
#pragma once

#include <cstdint>

#include "rules.hpp"

namespace heaplab::apps::traffic {

enum : std::uint32_t { kArrived = 0xFFFFFFFDu };  // pull's mark: this cell's car just moved in

HEAPLAB_HD inline void min_into(std::uint64_t* at, std::uint64_t value) {
#if defined(__CUDA_ARCH__)
  // order: relaxed (a minimum; read by the next phase's kernel only)
  atomicMin(reinterpret_cast<unsigned long long*>(at), static_cast<unsigned long long>(value));
#else
  if (value < *at) *at = value;
#endif
}

struct Dense {
  Params p;
  Net net;
  std::uint8_t* present        = nullptr;  // per cell
  std::uint64_t* id            = nullptr;
  std::uint32_t* velocity      = nullptr;
  std::uint32_t* max_velocity  = nullptr;
  std::uint32_t* trip          = nullptr;
  std::uint32_t* target        = nullptr;  // decide's plan and move's result
  std::uint32_t* next_velocity = nullptr;
  std::uint32_t* claim         = nullptr;
  std::uint32_t* stop          = nullptr;
  std::uint32_t* stop_velocity = nullptr;
  std::uint32_t* incoming      = nullptr;  // per cell: the cell whose car moves in (kNone)
  std::uint64_t* claims        = nullptr;  // per street (kNoKey)
  bool ignore_claims           = false;    // tests only: the planted bug's rule (rules.hpp)

  [[nodiscard]] HEAPLAB_HD Vehicle vehicle(std::uint32_t c) const {
    Vehicle v;
    v.present      = present[c] != 0;
    v.id           = id[c];
    v.velocity     = velocity[c];
    v.max_velocity = max_velocity[c];
    v.trip         = trip[c];
    return v;
  }
  HEAPLAB_HD void store(std::uint32_t c, Vehicle const& v) const {
    present[c]      = v.present ? 1 : 0;
    id[c]           = v.id;
    velocity[c]     = v.velocity;
    max_velocity[c] = v.max_velocity;
    trip[c]         = v.trip;
    target[c]       = kNone;
  }

  // ---- the phases; the caller resets claims (kNoKey) and incoming (kNone) before decide
  HEAPLAB_HD void decide(std::uint32_t it, std::uint32_t c) const {
    if (present[c] == 0) return;
    Plan const plan =
        plan_move(p, net, it, c, vehicle(c), [&](std::uint32_t j) { return present[j] != 0; });
    target[c]        = plan.target;
    next_velocity[c] = plan.velocity;
    claim[c]         = plan.claim;
    stop[c]          = plan.stop;
    stop_velocity[c] = plan.stop_velocity;
    if (plan.claim != kNone) min_into(&claims[plan.claim], key(p, it, c));
  }
  HEAPLAB_HD void resolve_move(std::uint32_t it, std::uint32_t c) const {
    if (present[c] == 0) return;
    Plan plan;
    plan.target        = target[c];
    plan.velocity      = next_velocity[c];
    plan.claim         = claim[c];
    plan.stop          = stop[c];
    plan.stop_velocity = stop_velocity[c];
    Plan const r       = resolve(
        plan, plan.claim == kNone ? kNoKey : claims[plan.claim], key(p, it, c), ignore_claims);
    target[c]        = r.target;
    next_velocity[c] = r.velocity;
    if (r.target != kGone && r.target != c) incoming[r.target] = c;  // its one mover
  }
  HEAPLAB_HD void pull(std::uint32_t c) const {
    if (present[c] != 0 || incoming[c] == kNone) return;
    std::uint32_t const o = incoming[c];
    Vehicle v             = vehicle(o);
    v.velocity            = next_velocity[o];
    v.trip -= next_velocity[o];
    store(c, v);
    target[c] = kArrived;
  }
  HEAPLAB_HD void leave(std::uint32_t c) const {
    if (present[c] == 0) return;
    if (target[c] == kArrived) {
      target[c] = kNone;
    } else if (target[c] == c) {  // stays: its velocity is 0
      velocity[c] = 0;
      target[c]   = kNone;
    } else {  // moved on, or left the network
      store(c, Vehicle{});
    }
  }
  HEAPLAB_HD void spawn(std::uint32_t it, std::uint32_t c) const {
    if (net.cell_producer[c] == 0 || present[c] != 0) return;
    Vehicle const v = spawned(p, net.cells, it, c);
    if (v.present) store(c, v);
  }
};

}  // namespace heaplab::apps::traffic
