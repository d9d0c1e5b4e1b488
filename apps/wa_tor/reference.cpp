// CPU reference and checker of wa-tor (reference.hpp).
#include "reference.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <unordered_map>

namespace heaplab::apps::wa_tor {

void validate(Params const& p, double fish_density, double shark_density) {
  if (p.width < 3 || p.height < 3)
    throw std::invalid_argument("wa-tor: --width and --height must be >= 3");
  if (p.cells() > (std::uint64_t{1} << 30))
    throw std::invalid_argument("wa-tor: at most 2^30 cells");
  if (!(fish_density >= 0.0 && shark_density >= 0.0 && fish_density + shark_density <= 1.0))
    throw std::invalid_argument(
        "wa-tor: --fish-density and --shark-density must be >= 0 with a sum <= 1");
  if (p.fish_spawn < 1 || p.shark_spawn < 1)
    throw std::invalid_argument("wa-tor: --fish-spawn and --shark-spawn must be >= 1");
  if (p.shark_energy < 1 || p.max_energy < p.shark_energy)
    throw std::invalid_argument("wa-tor: need 1 <= --shark-energy <= --max-energy");
}

World initial_world(Params const& p, double fish_density, double shark_density) {
  validate(p, fish_density, shark_density);
  World w;
  w.params     = p;
  auto const n = static_cast<std::size_t>(p.cells());
  w.kind.assign(n, kEmpty);
  w.timer.assign(n, 0);
  w.energy.assign(n, 0);
  for (std::uint32_t c = 0; c < n; ++c) {
    Kind const k = initial_kind(p, fish_density, shark_density, c);
    w.kind[c]    = k;
    if (k == kEmpty) continue;
    w.timer[c] = initial_timer(p, k, c);
    if (k == kShark) w.energy[c] = p.shark_energy;
  }
  return w;
}

namespace {

/// One round of the reference: decide (targets and requests), accept, move.
void round(World& w, std::uint32_t iteration, Round r, Counters& counters) {
  Params const& p  = w.params;
  auto const n     = static_cast<std::uint32_t>(p.cells());
  Kind const mover = r == kFishRound ? kFish : kShark;
  std::vector<std::uint32_t> target(n, kNone);
  std::vector<std::uint32_t> requests(n, 0);
  for (std::uint32_t c = 0; c < n; ++c) {  // decide
    if (w.kind[c] != mover) continue;
    std::uint32_t fish = 0, empty = 0;
    for (std::uint32_t d = 0; d < 4; ++d) {
      std::uint8_t const k = w.kind[neighbour(p, c, d)];
      fish |= (k == kFish ? 1u : 0u) << d;
      empty |= (k == kEmpty ? 1u : 0u) << d;
    }
    std::uint32_t const cand = mover == kShark && fish != 0 ? fish : empty;
    std::uint32_t const d    = agent_choice(p, iteration, r, c, cand);
    if (d == kNone) continue;
    target[c] = neighbour(p, c, d);
    requests[target[c]] |= 1u << opposite(d);
  }
  std::vector<std::uint32_t> accepted(n, kNone);
  for (std::uint32_t c = 0; c < n; ++c)
    accepted[c] = accept_request(p, iteration, r, c, requests[c]);
  std::vector<std::uint8_t> const movers = w.kind;  // the agents that exist when move starts
  for (std::uint32_t c = 0; c < n; ++c) {           // move
    if (movers[c] != mover) continue;
    std::uint32_t const t     = target[c];
    bool const moved          = t != kNone && accepted[t] == c;
    std::uint32_t const spawn = mover == kFish ? p.fish_spawn : p.shark_spawn;
    std::uint32_t timer       = next_timer(w.timer[c], spawn);
    std::uint32_t energy      = w.energy[c];
    std::uint32_t at          = c;
    if (mover == kShark) --energy;
    if (moved) {
      if (w.kind[t] == kFish) {  // only sharks target fish
        energy = fed(p, energy);
        ++counters.fish_eaten;
      }
      w.kind[c]  = kEmpty;
      w.timer[c] = w.energy[c] = 0;
      at                       = t;
    }
    if (mover == kShark && energy == 0) {
      w.kind[at]  = kEmpty;
      w.timer[at] = w.energy[at] = 0;
      ++counters.shark_starved;
      continue;
    }
    if (moved && timer >= spawn) {
      timer       = 0;
      w.kind[c]   = mover;
      w.timer[c]  = 0;
      w.energy[c] = mover == kShark ? p.shark_energy : 0;
      ++(mover == kFish ? counters.fish_births : counters.shark_births);
    }
    w.kind[at]   = mover;
    w.timer[at]  = timer;
    w.energy[at] = energy;
  }
}

}  // namespace

Counters step(World& w, std::uint32_t iteration) {
  Counters c;
  round(w, iteration, kFishRound, c);
  round(w, iteration, kSharkRound, c);
  return c;
}

Population population(World const& w) {
  Population pop;
  for (auto k : w.kind) {
    pop.fish += k == kFish ? 1 : 0;
    pop.sharks += k == kShark ? 1 : 0;
  }
  return pop;
}

std::string Violation::to_string(Params const& p) const {
  if (cell == kNone) return what;
  return what + " at cell (" + std::to_string(cell % p.width) + ", " +
         std::to_string(cell / p.width) + ")";
}

StateView view_of(World const& w) {
  StateView s;
  s.cells.resize(w.kind.size());
  for (std::uint32_t c = 0; c < w.kind.size(); ++c) {
    if (w.kind[c] == kEmpty) continue;
    s.cells[c] = {std::uint64_t{c} + 1, w.kind[c]};
    s.agents.push_back({std::uint64_t{c} + 1, w.kind[c], c, w.timer[c], w.energy[c]});
  }
  return s;
}

namespace {

/// The kind, timer and energy of one agent object in range, or the violation.
std::optional<Violation> agent_fields_violation(Params const& p, AgentView const& a) {
  auto const out = [&](char const* what, std::uint32_t v, std::uint32_t lo, std::uint32_t hi) {
    return Violation{a.cell,
                     std::string(what) + " " + std::to_string(v) + " outside [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]"};
  };
  if (a.kind == kFish) {
    if (a.timer > p.fish_spawn) return out("fish timer", a.timer, 0, p.fish_spawn);
  } else if (a.kind == kShark) {
    if (a.timer > p.shark_spawn) return out("shark timer", a.timer, 0, p.shark_spawn);
    if (a.energy < 1 || a.energy > p.max_energy)
      return out("shark energy", a.energy, 1, p.max_energy);
  } else {
    return Violation{a.cell, "an agent object of kind " + std::to_string(a.kind)};
  }
  return std::nullopt;
}

}  // namespace

CheckResult check_state(Params const& p,
                        StateView const& s,
                        Population const& previous,
                        Counters const& counters) {
  CheckResult r;
  auto fail = [&](std::uint32_t cell, std::string what) {
    r.violation = Violation{cell, std::move(what)};
    return r;
  };
  if (s.cells.size() != p.cells())
    return fail(kNone,
                "the state has " + std::to_string(s.cells.size()) + " cells, expected " +
                    std::to_string(p.cells()));
  std::unordered_map<std::uint64_t, std::size_t> by_handle;  // handle -> index in agents
  by_handle.reserve(s.agents.size());
  Population objects;
  for (std::size_t i = 0; i < s.agents.size(); ++i) {
    AgentView const& a = s.agents[i];
    if (a.handle == 0) return fail(a.cell, "an agent object has the null handle");
    if (!by_handle.emplace(a.handle, i).second)
      return fail(a.cell, "an agent object is enumerated twice");
    if (a.cell >= p.cells())
      return fail(kNone,
                  "an agent object names cell " + std::to_string(a.cell) + " outside the grid");
    if (auto v = agent_fields_violation(p, a)) return fail(v->cell, v->what);
    ++(a.kind == kFish ? objects.fish : objects.sharks);
    // Every object's cell points back at it (catches leaked objects: an eaten fish not freed).
    CellView const& home = s.cells[a.cell];
    if (home.agent != a.handle)
      return fail(a.cell,
                  std::string(a.kind == kFish ? "fish" : "shark") +
                      " object is not in the cell it names (the cell holds " +
                      (home.agent == 0 ? std::string("no agent") : "another agent") +
                      "): a leaked or misplaced object");
  }
  for (std::uint32_t c = 0; c < s.cells.size(); ++c) {
    CellView const& cv = s.cells[c];
    if (cv.agent == 0) {
      if (cv.kind != kEmpty) return fail(c, "an empty cell says kind " + std::to_string(cv.kind));
      continue;
    }
    auto const it = by_handle.find(cv.agent);
    if (it == by_handle.end())
      return fail(c, "the cell's agent pointer names no live agent (dangling pointer)");
    AgentView const& a = s.agents[it->second];
    if (a.cell != c)
      return fail(c,
                  "the cell's agent says it is in cell (" + std::to_string(a.cell % p.width) +
                      ", " + std::to_string(a.cell / p.width) +
                      "): an agent in two cells or a stale pointer");
    if (a.kind != cv.kind) return fail(c, "the cell's kind differs from its agent's kind");
    ++(cv.kind == kFish ? r.population.fish : r.population.sharks);
  }
  if (r.population != objects)
    return fail(kNone,
                "cells hold " + std::to_string(r.population.fish) + " fish and " +
                    std::to_string(r.population.sharks) + " sharks, the objects are " +
                    std::to_string(objects.fish) + " fish and " + std::to_string(objects.sharks) +
                    " sharks");
  if (s.live_objects && *s.live_objects != objects.fish + objects.sharks)
    return fail(kNone,
                "the allocator holds " + std::to_string(*s.live_objects) +
                    " live agent objects, the cells " +
                    std::to_string(objects.fish + objects.sharks) + " agents (leak)");
  auto const expect_fish   = previous.fish + counters.fish_births - counters.fish_eaten;
  auto const expect_sharks = previous.sharks + counters.shark_births - counters.shark_starved;
  if (r.population.fish != expect_fish || r.population.sharks != expect_sharks)
    return fail(kNone,
                "population fish " + std::to_string(r.population.fish) + ", sharks " +
                    std::to_string(r.population.sharks) + " but previous + births - deaths " +
                    "gives fish " + std::to_string(expect_fish) + ", sharks " +
                    std::to_string(expect_sharks));
  return r;
}

}  // namespace heaplab::apps::wa_tor
