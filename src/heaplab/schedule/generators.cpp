// RapidCheck generators of configs and schedules (generators.hpp).
#include "heaplab/schedule/generators.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "heaplab/schedule/json.hpp"

namespace heaplab::schedule::gen {

namespace {

/// k/8 for k in [lo, hi]: fractions that are exact in binary and shrink towards lo.
double eighths(int lo, int hi) { return *rc::gen::inRange(lo, hi + 1) / 8.0; }

std::uint64_t seed() { return *rc::gen::inRange<std::uint64_t>(0, 1000); }

/// A defragmentation factor for capacity cap, usually small (small n needs few candidates for a
/// pass: r >= n + 1), up to min(cap - 1, 6).
std::uint32_t small_factor(std::uint32_t cap) {
  std::uint32_t const max_n = std::min<std::uint32_t>(cap - 1, 6);
  return *rc::gen::weightedOneOf<std::uint32_t>(
      {{4, rc::gen::just<std::uint32_t>(1)},
       {2, rc::gen::just(std::min<std::uint32_t>(2, max_n))},
       {1, rc::gen::inRange<std::uint32_t>(1, max_n + 1)}});
}

/// k1 in [0, 4], usually 0 or 1.
std::uint32_t small_k1() {
  return *rc::gen::weightedOneOf<std::uint32_t>({{3, rc::gen::just<std::uint32_t>(0)},
                                                 {2, rc::gen::just<std::uint32_t>(1)},
                                                 {1, rc::gen::inRange<std::uint32_t>(2, 5)}});
}

std::vector<std::uint32_t> concrete_types(core::HeapConfig const& config) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t t = 0; t < config.num_types(); ++t)
    if (!config.types[t].is_abstract) out.push_back(t);
  return out;
}

template <class T>
T one_of(std::vector<T> const& items) {
  return items[static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, items.size()))];
}

AllocWave gen_alloc(core::HeapConfig const& config) {
  auto const concrete = concrete_types(config);
  AllocWave a;
  a.threads        = *rc::gen::inRange<std::uint32_t>(1, 129);
  int const choice = *rc::gen::inRange(0, 5);
  a.divergence     = static_cast<Divergence>(choice);
  if (a.divergence == Divergence::mixed_types) {
    std::size_t const k = *rc::gen::inRange<std::size_t>(1, 4);
    for (std::size_t i = 0; i < k; ++i) a.lane_types.push_back(one_of(concrete));
  } else {
    a.type = one_of(concrete);
  }
  if (a.divergence == Divergence::per_lane_counts) {
    for (std::uint32_t l = 0; l < kWarpSize; ++l)
      a.lane_counts.push_back(*rc::gen::inRange<std::uint32_t>(0, 4));
  } else {
    a.count = *rc::gen::inRange<std::uint32_t>(0, 4);
  }
  if (a.divergence == Divergence::random_mask) a.mask_seed = seed();
  std::vector<std::uint32_t> types = a.lane_types;
  if (a.type) types.push_back(*a.type);
  std::sort(types.begin(), types.end());
  types.erase(std::unique(types.begin(), types.end()), types.end());
  for (std::uint32_t t : types) {
    auto const slots = config.pointer_slots(t);
    for (std::uint32_t s = 0; s < slots.size(); ++s) {
      if (!*rc::gen::inRange(0, 2)) continue;
      LinkRule rule;
      rule.type          = t;
      rule.slot          = s;
      rule.seed          = seed();
      rule.null_fraction = eighths(0, 4);
      a.links.push_back(rule);
    }
  }
  a.roots = *rc::gen::inRange(0, 4) == 0;
  return a;
}

FreeWave gen_free(core::HeapConfig const& config) {
  FreeWave f;
  if (*rc::gen::inRange(0, 3) != 0)
    f.select.type = *rc::gen::inRange<std::uint32_t>(0, config.num_types());
  switch (*rc::gen::inRange(0, 5)) {
    case 0:
      f.select.pattern = SelectPattern::all;
      break;
    case 1:
    case 2:
      f.select.pattern  = SelectPattern::fraction;
      f.select.fraction = eighths(0, 8);
      f.select.seed     = seed();
      break;
    default:
      f.select.pattern = SelectPattern::every_kth;
      f.select.k       = *rc::gen::inRange<std::uint32_t>(1, 5);
      f.select.offset  = *rc::gen::inRange<std::uint32_t>(0, f.select.k);
      break;
  }
  return f;
}

ParallelDo gen_parallel_do(core::HeapConfig const& config) {
  ParallelDo d;
  d.type           = *rc::gen::inRange<std::uint32_t>(0, config.num_types());
  d.fraction       = eighths(0, 8);
  d.seed           = seed();
  d.action         = Action::delete_self;
  auto const slots = config.pointer_slots(d.type);
  switch (*rc::gen::inRange(0, 4)) {
    case 0: {  // allocate_child: a slot of `type` and a concrete child type it may point to
      std::vector<std::pair<std::uint32_t, std::uint32_t>> options;
      for (std::uint32_t s = 0; s < slots.size(); ++s)
        for (std::uint32_t c : concrete_types(config))
          if (config.is_subtype(c, slots[s].pointee)) options.push_back({s, c});
      if (options.empty()) break;
      auto const [slot, child] = one_of(options);
      d.action                 = Action::allocate_child;
      d.parent_slot            = slot;
      d.child_type             = child;
      std::vector<std::uint32_t> back;
      auto const child_slots = config.pointer_slots(child);
      for (std::uint32_t s = 0; s < child_slots.size(); ++s)
        if (config.is_subtype(d.type, child_slots[s].pointee)) back.push_back(s);
      if (!back.empty() && *rc::gen::inRange(0, 2)) d.child_slot = one_of(back);
      break;
    }
    case 1:
      break;   // delete_self
    case 2: {  // delete_other_type
      std::vector<std::uint32_t> victims;
      for (std::uint32_t v = 0; v < config.num_types(); ++v)
        if (!config.is_subtype(v, d.type)) victims.push_back(v);
      if (victims.empty()) break;
      d.action      = Action::delete_other_type;
      d.victim_type = one_of(victims);
      break;
    }
    default: {  // relink
      if (slots.empty()) break;
      d.action = Action::relink;
      d.slot   = *rc::gen::inRange<std::uint32_t>(0, static_cast<std::uint32_t>(slots.size()));
      d.null_fraction = eighths(0, 4);
      break;
    }
  }
  return d;
}

Defrag gen_defrag(core::HeapConfig const& config) {
  Defrag d;
  d.type = one_of(concrete_types(config));
  if (*rc::gen::inRange(0, 3) == 0) d.n = small_factor(config.capacity(d.type));
  if (*rc::gen::inRange(0, 2)) d.k1 = small_k1();
  d.variant = static_cast<core::RewriteVariant>(*rc::gen::inRange(0, 3));
  d.order   = static_cast<core::CandidateOrder>(*rc::gen::inRange(0, 2));
  return d;
}

}  // namespace

rc::Gen<core::HeapConfig> config() {
  return rc::gen::exec([] {
    core::HeapConfig c;
    std::uint32_t const num_types = *rc::gen::inRange<std::uint32_t>(1, 5);
    bool const abstract_base      = num_types >= 2 && *rc::gen::inRange(0, 3) == 0;
    std::uint32_t const smallest  = *rc::gen::element<std::uint32_t>(4, 8, 16);
    for (std::uint32_t t = 0; t < num_types; ++t) {
      core::TypeSpec ty;
      ty.name       = std::string(1, static_cast<char>('A' + t));
      ty.size_bytes = smallest * *rc::gen::inRange<std::uint32_t>(1, 17);
      if (abstract_base && t == 0) {
        ty.name        = "Base";
        ty.is_abstract = true;
      } else if (t > 0 && *rc::gen::inRange(0, 3) == 0) {
        ty.base = abstract_base ? 0u : *rc::gen::inRange<std::uint32_t>(0, t);
      } else if (abstract_base && *rc::gen::inRange(0, 3) != 0) {
        ty.base = 0u;
      }
      if (ty.base) ty.size_bytes = std::max(ty.size_bytes, c.types[*ty.base].size_bytes);
      c.types.push_back(ty);
    }
    // Every size is smallest * [1, 16] (bases included), so every capacity is >= 4.
    for (std::uint32_t t = 0; t < num_types; ++t) {
      std::uint32_t const fields = *rc::gen::inRange<std::uint32_t>(0, 3);
      for (std::uint32_t f = 0; f < fields; ++f) {
        core::PointerFieldSpec field;
        field.name    = "p" + std::to_string(f);
        field.pointee = *rc::gen::inRange<std::uint32_t>(0, num_types);
        field.count   = *rc::gen::element<std::uint32_t>(1, 1, 2, 3);
        c.types[t].pointer_fields.push_back(field);
      }
    }
    c.num_blocks            = *rc::gen::inRange<std::uint32_t>(2, 33);
    std::uint32_t const cap = c.min_defrag_capacity();
    c.defrag_factor         = small_factor(cap);
    c.k1                    = small_k1();
    c.validate();
    return c;
  });
}

rc::Gen<Step> step(core::HeapConfig const& config) {
  return rc::gen::exec([config]() -> Step {
    int const kind = *rc::gen::inRange(0, 20);
    if (kind < 7) return gen_alloc(config);
    if (kind < 11) return gen_free(config);
    if (kind < 15) return gen_parallel_do(config);
    if (kind < 18) return gen_defrag(config);
    return Check{};
  });
}

rc::Gen<std::vector<Step>> fragment_and_defrag(core::HeapConfig const& config) {
  return rc::gen::exec([config] {
    // A wave of one type, a free wave thinning it out, and a defragmentation of it: most
    // random steps leave few candidates, this episode makes passes likely.
    std::vector<Step> out;
    AllocWave fill;
    fill.type    = one_of(concrete_types(config));
    fill.threads = std::max<std::uint32_t>(1, config.num_blocks * config.capacity(*fill.type) / 2);
    fill.count   = 1;
    FreeWave thin;
    thin.select.type     = *fill.type;
    thin.select.pattern  = SelectPattern::fraction;
    thin.select.fraction = eighths(3, 7);
    thin.select.seed     = seed();
    Defrag defrag        = gen_defrag(config);
    defrag.type          = *fill.type;
    if (defrag.n) defrag.n = small_factor(config.capacity(defrag.type));
    out.push_back(fill);
    out.push_back(thin);
    out.push_back(defrag);
    return out;
  });
}

rc::Gen<std::vector<Step>> steps(core::HeapConfig const& config) {
  // Episodes: mostly single random steps, sometimes a fragment-then-defragment episode.
  auto const episode = rc::gen::weightedOneOf<std::vector<Step>>(
      {{9, rc::gen::map(step(config), [](Step s) { return std::vector<Step>{std::move(s)}; })},
       {1, fragment_and_defrag(config)}});
  return rc::gen::map(rc::gen::container<std::vector<std::vector<Step>>>(episode),
                      [](std::vector<std::vector<Step>> episodes) {
                        std::vector<Step> out;
                        for (auto& e : episodes)
                          for (auto& s : e) out.push_back(std::move(s));
                        return out;
                      });
}

rc::Gen<Schedule> schedule_for(core::HeapConfig const& config) {
  return rc::gen::map(steps(config), [config](std::vector<Step> s) {
    Schedule out;
    out.config = config;
    out.steps  = std::move(s);
    return out;
  });
}

rc::Gen<Schedule> schedule() {
  return rc::gen::mapcat(config(), [](core::HeapConfig const& c) { return schedule_for(c); });
}

}  // namespace heaplab::schedule::gen

namespace heaplab::schedule {
void showValue(Schedule const& schedule, std::ostream& os) {
  os << "(save as a file and run `heaplab replay --model FILE`)\n" << dump(schedule);
}
}  // namespace heaplab::schedule

namespace heaplab::core {
void showValue(HeapConfig const& config, std::ostream& os) {
  os << schedule::config_to_json(config).dump(2);
}
}  // namespace heaplab::core
