// CPU reference and checker of sugarscape (reference.hpp).
#include "reference.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace heaplab::apps::sugarscape {

Dense World::dense() {
  Dense d;
  d.p          = params;
  d.sugar      = sugar.data();
  d.kind       = kind.data();
  d.a_sugar    = a_sugar.data();
  d.age        = age.data();
  d.max_age    = max_age.data();
  d.metabolism = metabolism.data();
  d.vision     = vision.data();
  d.target     = target.data();
  d.requests   = requests.data();
  d.proposals  = proposals.data();
  d.births     = births.data();
  return d;
}

void validate(Params const& p) {
  if (p.width < 3 || p.height < 3)
    throw std::invalid_argument("sugarscape: --width and --height must be >= 3");
  if (p.cells() > (std::uint64_t{1} << 30))
    throw std::invalid_argument("sugarscape: at most 2^30 cells");
  if (!(p.density >= 0.0 && p.density <= 1.0))
    throw std::invalid_argument("sugarscape: --density must be in [0, 1]");
}

World initial_world(Params const& p) {
  validate(p);
  World w;
  w.params     = p;
  auto const n = static_cast<std::size_t>(p.cells());
  w.capacity.resize(n);
  w.sugar.resize(n);
  for (auto* v : {&w.a_sugar, &w.age, &w.max_age, &w.metabolism, &w.vision}) v->assign(n, 0);
  w.kind.assign(n, kEmpty);
  w.target.assign(n, kNone);
  for (auto* v : {&w.requests, &w.proposals, &w.births}) v->assign(n, kNoKey);
  Dense const d = w.dense();
  for (std::uint32_t c = 0; c < n; ++c) {
    w.capacity[c]  = capacity(p, c);
    w.sugar[c]     = w.capacity[c];
    Traits const t = initial_agent(p, c);
    if (t.kind != kEmpty) d.store(c, t);
  }
  return w;
}

void step(World& w, std::uint32_t it) {
  Dense const d = w.dense();
  auto const n  = static_cast<std::uint32_t>(w.params.cells());
  for (std::uint32_t c = 0; c < n; ++c) d.live(c, w.capacity[c]);
  for (std::uint32_t c = 0; c < n; ++c) d.decide(it, c);
  for (std::uint32_t c = 0; c < n; ++c) d.pull(c);
  for (std::uint32_t c = 0; c < n; ++c) d.leave(it, c);
  for (std::uint32_t c = 0; c < n; ++c) d.harvest(c);
  for (std::uint32_t c = 0; c < n; ++c) d.propose(it, c);
  for (std::uint32_t c = 0; c < n; ++c) d.choose(it, c);
  for (std::uint32_t c = 0; c < n; ++c) d.born(it, c);
  for (std::uint32_t c = 0; c < n; ++c) d.pay(it, c);
}

Population population(World const& w) {
  Population p;
  for (std::size_t c = 0; c < w.kind.size(); ++c) {
    p.males += w.kind[c] == kMale;
    p.females += w.kind[c] == kFemale;
    p.sugar_in_cells += w.sugar[c];
    if (w.kind[c] != kEmpty) p.sugar_in_agents += w.a_sugar[c];
  }
  return p;
}

namespace {

std::string at(Params const& p, std::size_t c) {
  return "cell (" + std::to_string(c % p.width) + ", " + std::to_string(c / p.width) + ")";
}
std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}
char const* kind_name(std::uint8_t k) {
  return k == kEmpty ? "empty" : k == kMale ? "Male" : k == kFemale ? "Female" : "unknown";
}
std::string fields(Traits const& t) {
  return std::string(kind_name(t.kind)) + " sugar " + std::to_string(t.sugar) + " age " +
         std::to_string(t.age) + "/" + std::to_string(t.max_age) + " metabolism " +
         std::to_string(t.metabolism) + " vision " + std::to_string(t.vision);
}
Traits traits_at(World const& w, std::size_t c) {
  Traits t;
  if (w.kind[c] == kEmpty) return t;
  t.kind       = w.kind[c];
  t.sugar      = w.a_sugar[c];
  t.age        = w.age[c];
  t.max_age    = w.max_age[c];
  t.metabolism = w.metabolism[c];
  t.vision     = w.vision[c];
  return t;
}
bool same(Traits const& a, Traits const& b) {
  return a.kind == b.kind && a.sugar == b.sugar && a.age == b.age && a.max_age == b.max_age &&
         a.metabolism == b.metabolism && a.vision == b.vision;
}

std::vector<AgentView> sorted_by_handle(std::vector<AgentView> agents) {
  std::sort(agents.begin(), agents.end(), [](AgentView const& a, AgentView const& b) {
    return a.handle < b.handle;
  });
  return agents;
}
/// The agent with handle h in `sorted` (sorted_by_handle), or nullptr.
AgentView const* find_agent(std::vector<AgentView> const& sorted, std::uint64_t h) {
  auto const it =
      std::lower_bound(sorted.begin(), sorted.end(), h, [](AgentView const& a, std::uint64_t v) {
        return a.handle < v;
      });
  return it == sorted.end() || it->handle != h ? nullptr : &*it;
}
std::string describe(Traits const& t) { return t.kind == kEmpty ? "empty" : fields(t); }

/// Per cell the traits of the agent its grid pointer names (kind 0xFF: a pointer to no object).
std::vector<Traits> cell_traits(StateView const& s) {
  std::vector<AgentView> const agents = sorted_by_handle(s.agents);
  std::vector<Traits> t(s.handle.size());
  for (std::size_t c = 0; c < s.handle.size(); ++c) {
    if (s.handle[c] == 0) continue;
    AgentView const* a = find_agent(agents, s.handle[c]);
    if (a != nullptr) t[c] = a->traits;
    if (a == nullptr) t[c].kind = 0xFF;
  }
  return t;
}

}  // namespace

std::optional<std::string> check_state(StateView const& s, World const& w) {
  Params const& p     = w.params;
  std::size_t const n = w.kind.size();
  if (s.sugar.size() != n || s.handle.size() != n || s.kind.size() != n)
    throw std::invalid_argument("sugarscape: a state and a world of different sizes checked");
  std::vector<AgentView> const agents = sorted_by_handle(s.agents);
  for (std::size_t k = 0; k < agents.size(); ++k) {
    AgentView const& a = agents[k];
    if (k > 0 && agents[k - 1].handle == a.handle)
      return "object " + hex(a.handle) + " is reported twice by the heap";
    if (a.cell >= n || s.handle[a.cell] != a.handle)
      return std::string(kind_name(a.traits.kind)) + " object " + hex(a.handle) + " of cell " +
             std::to_string(a.cell) + " is not in the grid at its cell: a leaked object";
  }
  for (std::size_t c = 0; c < n; ++c) {
    if (s.sugar[c] != w.sugar[c])
      return at(p, c) + " holds " + std::to_string(s.sugar[c]) + " sugar, the reference " +
             std::to_string(w.sugar[c]);
    Traits const expected = traits_at(w, c);
    if (s.handle[c] == 0) {
      if (expected.kind != kEmpty)
        return at(p, c) + ": reference " + fields(expected) + ", app empty";
      continue;
    }
    AgentView const* const a = find_agent(agents, s.handle[c]);
    if (a == nullptr)
      return at(p, c) + " points at " + hex(s.handle[c]) + ", which is no live object";
    if (a->traits.kind != s.kind[c])
      return at(p, c) + " holds a pointer of kind " + kind_name(s.kind[c]) + " to a " +
             kind_name(a->traits.kind) + " object";
    if (!same(a->traits, expected))
      return at(p, c) + ": reference " + describe(expected) + ", app " + fields(a->traits);
  }
  return std::nullopt;
}

std::optional<std::string> compare_views(StateView const& a, StateView const& b, Params const& p) {
  std::size_t const n = a.handle.size();
  if (a.sugar.size() != n || b.sugar.size() != n || b.handle.size() != n)
    throw std::invalid_argument("sugarscape: states of different sizes compared");
  std::vector<Traits> const ta = cell_traits(a);
  std::vector<Traits> const tb = cell_traits(b);
  for (std::size_t c = 0; c < n; ++c) {
    if (a.sugar[c] != b.sugar[c])
      return at(p, c) + " holds " + std::to_string(a.sugar[c]) + " sugar vs " +
             std::to_string(b.sugar[c]);
    bool const dangling = ta[c].kind == 0xFF || tb[c].kind == 0xFF;  // never equal
    if (dangling || !same(ta[c], tb[c]))
      return at(p, c) + ": " + describe(ta[c]) + " vs " + describe(tb[c]);
  }
  return std::nullopt;
}

StateView view_of(World const& w) {
  StateView s;
  s.sugar       = w.sugar;
  std::size_t n = w.kind.size();
  s.handle.assign(n, 0);
  s.kind = w.kind;
  for (std::size_t c = 0; c < n; ++c) {
    if (w.kind[c] == kEmpty) continue;
    s.handle[c] = c + 1;
    s.agents.push_back({c + 1, static_cast<std::uint32_t>(c), traits_at(w, c)});
  }
  return s;
}

}  // namespace heaplab::apps::sugarscape
