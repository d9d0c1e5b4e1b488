// plan_step: the id-level semantics of every schedule step (docs/schedules.md).
#include "heaplab/schedule/plan.hpp"

#include <cstdio>
#include <set>

#include "heaplab/core/hex.hpp"
#include "heaplab/schedule/choice.hpp"

namespace heaplab::schedule {

namespace {

/// Live ids whose type is a subtype of `base`, ascending.
std::vector<ObjectId> ids_of_subtypes(core::HeapConfig const& config,
                                      IdGraph const& graph,
                                      std::uint32_t base) {
  std::vector<ObjectId> out;
  for (auto const& [id, obj] : graph.objects)
    if (config.is_subtype(obj.type, base)) out.push_back(id);
  return out;
}

/// Phase 1 of every deleting step: every slot and root that refers to a doomed id becomes null.
void null_references(IdGraph const& graph, std::set<ObjectId> const& doomed, StepPlan& plan) {
  for (auto const& [id, obj] : graph.objects)
    for (std::uint32_t s = 0; s < obj.refs.size(); ++s)
      if (obj.refs[s] && doomed.count(*obj.refs[s]))
        plan.null_refs.push_back({id, s, std::nullopt});
  for (std::size_t r = 0; r < graph.roots.size(); ++r)
    if (graph.roots[r] && doomed.count(*graph.roots[r])) plan.null_roots.push_back(r);
}

void plan_alloc(core::HeapConfig const& config,
                IdGraph const& graph,
                AllocWave const& wave,
                StepPlan& plan) {
  // Link targets are chosen among the objects live before the wave, per pointee type.
  std::map<std::uint32_t, std::vector<ObjectId>> targets_by_pointee;
  auto const targets = [&](std::uint32_t pointee) -> std::vector<ObjectId> const& {
    auto it = targets_by_pointee.find(pointee);
    if (it == targets_by_pointee.end())
      it = targets_by_pointee.emplace(pointee, ids_of_subtypes(config, graph, pointee)).first;
    return it->second;
  };
  // Ids in (thread, k) order: thread 0's allocations first, then thread 1's, ...
  for (std::uint32_t t = 0; t < wave.threads; ++t) {
    LaneWork const work = lane_work(wave, t);
    auto const slots    = config.pointer_slots(work.type);
    for (std::uint32_t k = 0; k < work.count; ++k) {
      NewObject obj;
      obj.id     = plan.next_id++;
      obj.type   = work.type;
      obj.thread = t;
      obj.root   = wave.roots;
      obj.refs.assign(slots.size(), std::nullopt);
      for (auto const& rule : wave.links) {
        if (rule.type != work.type) continue;
        auto const& candidates = targets(slots[rule.slot].pointee);
        if (candidates.empty()) continue;
        if (selected(rule.null_fraction, rule.seed, obj.id, link_null_salt(rule.slot))) continue;
        obj.refs[rule.slot] =
            candidates[pick(candidates.size(), rule.seed, obj.id, link_target_salt(rule.slot))];
      }
      plan.allocations.push_back(std::move(obj));
    }
  }
}

void plan_free(core::HeapConfig const& config,
               IdGraph const& graph,
               FreeWave const& wave,
               StepPlan& plan) {
  auto const& sel = wave.select;
  std::size_t i   = 0;  // position among the candidates, ascending id
  for (auto const& [id, obj] : graph.objects) {
    if (sel.type && !config.is_subtype(obj.type, *sel.type)) continue;
    bool take = false;
    switch (sel.pattern) {
      case SelectPattern::all:
        take = true;
        break;
      case SelectPattern::fraction:
        take = selected(sel.fraction, sel.seed, id, kSaltSelect);
        break;
      case SelectPattern::every_kth:
        take = i % sel.k == sel.offset;
        break;
    }
    ++i;
    if (take) plan.deletes.push_back(id);
  }
  null_references(graph, std::set<ObjectId>(plan.deletes.begin(), plan.deletes.end()), plan);
}

void plan_parallel_do(core::HeapConfig const& config,
                      IdGraph const& graph,
                      ParallelDo const& pdo,
                      StepPlan& plan) {
  plan.parent_slot = pdo.parent_slot;
  plan.relink_slot = pdo.slot;
  // The object set is fixed at launch (DynaSOAr sec. 2.1, sec. 3.1 iteration bitmap).
  for (ObjectId id : ids_of_subtypes(config, graph, pdo.type)) {
    Visit v;
    v.self = id;
    v.acts = selected(pdo.fraction, pdo.seed, id, kSaltSelect);
    plan.visits.push_back(v);
  }
  std::set<ObjectId> doomed;
  switch (pdo.action) {
    case Action::allocate_child: {
      auto const child_slots = config.pointer_slots(pdo.child_type);
      for (auto& v : plan.visits) {
        if (!v.acts) continue;
        NewObject child;
        child.id     = plan.next_id++;
        child.type   = pdo.child_type;
        child.parent = v.self;
        child.refs.assign(child_slots.size(), std::nullopt);
        if (pdo.child_slot) child.refs[*pdo.child_slot] = v.self;
        v.child = plan.allocations.size();
        plan.allocations.push_back(std::move(child));
      }
      break;
    }
    case Action::delete_self:
      for (auto& v : plan.visits) {
        if (!v.acts) continue;
        v.delete_self = true;
        doomed.insert(v.self);
      }
      break;
    case Action::delete_other_type: {
      // Victims: objects of the victim type that this parallel_do does not iterate. Deleter i
      // (ascending id among acting objects) deletes victim i, so no object is deleted twice.
      std::vector<ObjectId> victims;
      for (auto const& [id, obj] : graph.objects)
        if (config.is_subtype(obj.type, pdo.victim_type) && !config.is_subtype(obj.type, pdo.type))
          victims.push_back(id);
      std::size_t next_victim = 0;
      for (auto& v : plan.visits) {
        if (!v.acts || next_victim == victims.size()) continue;
        v.victim = victims[next_victim++];
        doomed.insert(*v.victim);
      }
      break;
    }
    case Action::relink: {
      auto const pointee    = config.pointer_slots(pdo.type).at(pdo.slot).pointee;
      auto const candidates = ids_of_subtypes(config, graph, pointee);
      for (auto& v : plan.visits) {
        if (!v.acts) continue;
        std::optional<ObjectId> target;
        if (!candidates.empty() && !selected(pdo.null_fraction, pdo.seed, v.self, kSaltRelinkNull))
          target = candidates[pick(candidates.size(), pdo.seed, v.self, kSaltRelinkTarget)];
        v.relink_to = target;
      }
      break;
    }
  }
  plan.deletes.assign(doomed.begin(), doomed.end());
  null_references(graph, doomed, plan);
}

}  // namespace

LaneWork lane_work(AllocWave const& wave, std::uint32_t thread) {
  std::uint32_t const lane  = thread % kWarpSize;
  std::uint32_t const warp  = thread / kWarpSize;
  std::uint32_t const count = wave.count.value_or(0);
  switch (wave.divergence) {
    case Divergence::all:
      return {*wave.type, count};
    case Divergence::alternate:
      return {*wave.type, lane % 2 == 0 ? count : 0};
    case Divergence::random_mask: {
      auto const mask = static_cast<std::uint32_t>(mix(wave.mask_seed, warp, kSaltSelect));
      return {*wave.type, ((mask >> lane) & 1u) != 0 ? count : 0};
    }
    case Divergence::per_lane_counts:
      return {*wave.type, wave.lane_counts.at(lane)};
    case Divergence::mixed_types:
      return {wave.lane_types.at(lane % wave.lane_types.size()), count};
  }
  return {};
}

bool plan_reads_graph(Step const& step) {
  if (auto const* a = std::get_if<AllocWave>(&step)) return !a->links.empty();
  return std::holds_alternative<FreeWave>(step) || std::holds_alternative<ParallelDo>(step);
}

StepPlan plan_step(core::HeapConfig const& config,
                   IdGraph const& graph,
                   Step const& step,
                   ObjectId next_id) {
  StepPlan plan;
  plan.next_id = next_id;
  if (auto const* a = std::get_if<AllocWave>(&step)) plan_alloc(config, graph, *a, plan);
  if (auto const* f = std::get_if<FreeWave>(&step)) plan_free(config, graph, *f, plan);
  if (auto const* p = std::get_if<ParallelDo>(&step)) plan_parallel_do(config, graph, *p, plan);
  return plan;
}

namespace {

/// FNV-1a over 64-bit words.
struct Fnv {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void add(std::uint64_t word) {
    for (int i = 0; i < 8; ++i) {
      h ^= (word >> (8 * i)) & 0xFF;
      h *= 0x100000001b3ull;
    }
  }
  void add(std::optional<ObjectId> const& ref) {
    add(ref ? 1 : 0);
    add(ref.value_or(0));
  }
};

}  // namespace

std::uint64_t graph_digest(IdGraph const& graph) {
  Fnv f;
  f.add(graph.objects.size());
  for (auto const& [id, obj] : graph.objects) {
    f.add(id);
    f.add(obj.type);
    f.add(obj.refs.size());
    for (auto const& r : obj.refs) f.add(r);
  }
  f.add(graph.roots.size());
  for (auto const& r : graph.roots) f.add(r);
  return f.h;
}

std::string format_digest(std::uint64_t digest) { return core::hex64(digest); }

std::optional<std::uint64_t> parse_digest(std::string const& text) {
  if (text.size() != 18 || text[0] != '0' || text[1] != 'x') return std::nullopt;
  std::uint64_t v = 0;
  for (std::size_t i = 2; i < text.size(); ++i) {
    char const c = text[i];
    std::uint64_t d;
    if (c >= '0' && c <= '9')
      d = static_cast<std::uint64_t>(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = static_cast<std::uint64_t>(c - 'a' + 10);
    else
      return std::nullopt;
    v = v * 16 + d;
  }
  return v;
}

}  // namespace heaplab::schedule
