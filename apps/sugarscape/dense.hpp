// The dense world of sugarscape (rules.hpp): per-cell arrays of the cells' sugar and of the
// agents' fields, one agent slot per cell, and the nine phases as per-cell functions. The CPU
// reference runs each phase over all cells in order; the static baseline (DynaSOAr sec. 6,
// category 3) runs each phase as one kernel, one thread per cell. Host and device (HEAPLAB_HD).
#pragma once

#include <cstdint>

#include "rules.hpp"

namespace heaplab::apps::sugarscape {

/// A minimum taken by many cells in one phase: the result does not depend on the order.
HEAPLAB_HD inline void min_into(std::uint64_t* at, std::uint64_t value) {
#if defined(__CUDA_ARCH__)
  // order: relaxed (a minimum; read by the next phase's kernel only)
  atomicMin(reinterpret_cast<unsigned long long*>(at), static_cast<unsigned long long>(value));
#else
  if (value < *at) *at = value;
#endif
}

/// Pointers to the dense world's arrays (W * H each).
struct Dense {
  Params p;
  std::uint32_t* sugar      = nullptr;  // the cell's sugar
  std::uint8_t* kind        = nullptr;  // Kind of the cell's agent
  std::uint32_t* a_sugar    = nullptr;  // the agent's fields
  std::uint32_t* age        = nullptr;
  std::uint32_t* max_age    = nullptr;
  std::uint32_t* metabolism = nullptr;
  std::uint32_t* vision     = nullptr;
  std::uint32_t* target     = nullptr;  // the agent's choice of this iteration, or kNone
  std::uint64_t* requests   = nullptr;  // minima of the phases (kNoKey: none), reset every
  std::uint64_t* proposals  = nullptr;  // iteration
  std::uint64_t* births     = nullptr;

  [[nodiscard]] HEAPLAB_HD Traits traits(std::uint32_t c) const {
    Traits t;
    t.kind       = kind[c];
    t.sugar      = a_sugar[c];
    t.age        = age[c];
    t.max_age    = max_age[c];
    t.metabolism = metabolism[c];
    t.vision     = vision[c];
    return t;
  }
  HEAPLAB_HD void store(std::uint32_t c, Traits const& t) const {
    kind[c]       = t.kind;
    a_sugar[c]    = t.sugar;
    age[c]        = t.age;
    max_age[c]    = t.max_age;
    metabolism[c] = t.metabolism;
    vision[c]     = t.vision;
    target[c]     = kNone;
  }
  [[nodiscard]] HEAPLAB_HD bool empty(std::uint32_t c) const { return kind[c] == kEmpty; }

  // ---- the phases (rules.hpp), for cell c of iteration `it`
  HEAPLAB_HD void live(std::uint32_t c, std::uint32_t capacity) const {
    sugar[c]    = regrown(sugar[c], capacity);
    requests[c] = proposals[c] = births[c] = kNoKey;
    if (empty(c)) return;
    Traits t = traits(c);
    store(c, live_agent(t) ? t : Traits{});
  }
  HEAPLAB_HD void decide(std::uint32_t it, std::uint32_t c) const {
    if (empty(c)) return;
    std::uint32_t const t = choose_move(
        p,
        it,
        c,
        vision[c],
        [&](std::uint32_t j) { return empty(j); },
        [&](std::uint32_t j) { return sugar[j]; });
    target[c] = t;
    if (t != kNone) min_into(&requests[t], key(p, it, c, kMovePriority));
  }
  HEAPLAB_HD void pull(std::uint32_t c) const {
    if (!empty(c) || requests[c] == kNoKey) return;
    store(c, traits(key_cell(requests[c])));
  }
  HEAPLAB_HD void leave(std::uint32_t it, std::uint32_t c) const {
    if (empty(c) || target[c] == kNone) return;
    if (requests[target[c]] == key(p, it, c, kMovePriority)) store(c, Traits{});
  }
  HEAPLAB_HD void harvest(std::uint32_t c) const {
    target[c] = kNone;
    if (empty(c)) return;
    a_sugar[c] += sugar[c];
    sugar[c] = 0;
  }
  HEAPLAB_HD void propose(std::uint32_t it, std::uint32_t c) const {
    if (kind[c] != kMale || !fertile(traits(c))) return;
    std::uint32_t const f = choose_partner(p, it, c, [&](std::uint32_t j) { return traits(j); });
    target[c]             = f;
    if (f != kNone) min_into(&proposals[f], key(p, it, c, kProposePriority));
  }
  HEAPLAB_HD void choose(std::uint32_t it, std::uint32_t c) const {
    if (kind[c] != kFemale || proposals[c] == kNoKey || !fertile(traits(c))) return;
    std::uint32_t const e = choose_child_cell(p, it, c, [&](std::uint32_t j) { return empty(j); });
    target[c]             = e;
    if (e != kNone) min_into(&births[e], key(p, it, c, kBirthPriority));
  }
  HEAPLAB_HD void born(std::uint32_t it, std::uint32_t c) const {
    if (!empty(c) || births[c] == kNoKey) return;
    std::uint32_t const mother = key_cell(births[c]);
    std::uint32_t const father = key_cell(proposals[mother]);
    store(c, child(p, it, c, traits(mother), traits(father)));
  }
  HEAPLAB_HD void pay(std::uint32_t it, std::uint32_t c) const {
    if (target[c] == kNone) return;
    if (kind[c] == kFemale && births[target[c]] == key(p, it, c, kBirthPriority)) {
      a_sugar[c] -= kMateCost;
    } else if (kind[c] == kMale) {
      std::uint32_t const f = target[c];
      if (proposals[f] == key(p, it, c, kProposePriority) && target[f] != kNone &&
          births[target[f]] == key(p, it, f, kBirthPriority))
        a_sugar[c] -= kMateCost;
    }
  }
};

}  // namespace heaplab::apps::sugarscape
