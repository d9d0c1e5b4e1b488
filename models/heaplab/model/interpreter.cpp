// The model interpreter of schedules (interpreter.hpp, docs/schedules.md).
#include "heaplab/model/interpreter.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <new>
#include <set>
#include <sstream>
#include <stdexcept>

#include "heaplab/check/defrag_obligations.hpp"
#include "heaplab/check/oom_obligations.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/expects.hpp"

namespace heaplab::model {

namespace {

check::Violation violation(std::string invariant, std::string message) {
  check::Violation v;
  v.invariant = std::move(invariant);
  v.message   = std::move(message);
  return v;
}

struct Fnv {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void add(std::uint64_t word) {
    for (int i = 0; i < 8; ++i) {
      h ^= (word >> (8 * i)) & 0xFF;
      h *= 0x100000001b3ull;
    }
  }
  void add(std::string const& s) {
    add(s.size());
    for (unsigned char c : s) add(c);
  }
  void add(check::BitmapSnapshot const& b) {
    add(b.num_bits);
    if (!b.levels.empty())
      for (auto c : b.levels[0]) add(c);
  }
};

}  // namespace

schedule::IdGraph id_graph(HeapModel const& model) {
  schedule::IdGraph g;
  for (auto const& [id, obj] : model.objects())  // ascending ids: each goes at the end
    g.objects.emplace_hint(g.objects.end(), id, schedule::GraphObject{obj.type, obj.refs});
  g.roots = model.roots();
  return g;
}

std::uint64_t snapshot_digest(check::HeapSnapshot const& s) {
  Fnv f;
  auto const& c = s.config;
  f.add(c.num_blocks);
  f.add(c.defrag_factor);
  f.add(c.k1);
  f.add(c.types.size());
  for (auto const& t : c.types) {
    f.add(t.name);
    f.add(t.size_bytes);
    f.add(t.base ? *t.base + 1 : 0);
    f.add(t.is_abstract ? 1 : 0);
    f.add(t.pointer_fields.size());
    for (auto const& p : t.pointer_fields) {
      f.add(p.name);
      f.add(p.pointee);
      f.add(p.count);
    }
  }
  for (std::uint32_t b = 0; b < s.blocks.size(); ++b) {
    auto const& block    = s.blocks[b];
    bool const allocated = !check::allocated_types(s, b).empty();
    f.add(allocated ? block.type : core::kNoType);
    f.add(block.alloc_bitmap);
    for (auto const& [slot, rec] : block.objects.entries()) {
      if (!rec) continue;
      f.add(std::size_t{slot});
      f.add(rec->id);
      f.add(rec->cookie);
      f.add(rec->refs.size());
      for (auto const& r : rec->refs) {
        f.add(r ? 1 : 0);
        f.add(r ? (std::uint64_t{r->block} << 32 | r->slot) : 0);
      }
    }
  }
  f.add(s.free_blocks);
  for (auto const* states : {&s.allocated, &s.active, &s.defrag})
    for (auto const& b : *states) f.add(b);
  return f.h;
}

void apply_nulling(HeapModel& model, schedule::StepPlan const& plan) {
  for (auto const& w : plan.null_refs) model.set_ref(w.object, w.slot, std::nullopt);
  for (std::size_t r : plan.null_roots) model.set_root(r, std::nullopt);
}

void apply_deletes(HeapModel& model, schedule::StepPlan const& plan) {
  for (auto id : plan.deletes) model.free(id);
}

std::optional<PlacementError> apply_placements(HeapModel& model,
                                               schedule::StepPlan const& plan,
                                               std::vector<ObservedAllocation> observed) {
  // The plan's allocations are in id order (plan.hpp), so an id is found by binary search and
  // "placed" is one flag per planned allocation (no map or set of every new object per step).
  auto const& planned = plan.allocations;
  HEAPLAB_EXPECTS(
      std::is_sorted(
          planned.begin(), planned.end(), [](auto const& x, auto const& y) { return x.id < y.id; }),
      "apply_placements: the plan's allocations are not in id order");
  auto const index_of = [&](ObjectId id) -> std::optional<std::size_t> {
    auto const it = std::lower_bound(
        planned.begin(), planned.end(), id, [](auto const& a, ObjectId x) { return a.id < x; });
    if (it == planned.end() || it->id != id) return std::nullopt;
    return static_cast<std::size_t>(it - planned.begin());
  };
  std::vector<char> placed(planned.size(), 0);
  for (std::size_t i = 0; i < observed.size(); ++i) {
    auto& p      = observed[i];
    auto const k = index_of(p.id);
    if (!k)
      return PlacementError{
          i, p, "object " + std::to_string(p.id) + " is not created by this step"};
    schedule::NewObject const& want = planned[*k];
    if (p.type != want.type)
      return PlacementError{i,
                            p,
                            "the step creates object " + std::to_string(p.id) + " with type " +
                                std::to_string(want.type)};
    if (p.refs.empty()) p.refs = want.refs;
    if (p.refs != want.refs) return PlacementError{i, p, "initial pointers differ from the plan's"};
    placed[*k] = 1;
  }
  if (auto error = model.accept_allocations(observed)) return error;
  auto const placed_or_null = [&](std::size_t k) {
    return placed[k] != 0 ? std::optional<ObjectId>(planned[k].id) : std::nullopt;
  };
  for (auto const& v : plan.visits) {
    if (v.child) model.set_ref(v.self, plan.parent_slot, placed_or_null(*v.child));
    if (v.relink_to) model.set_ref(v.self, plan.relink_slot, *v.relink_to);
  }
  for (std::size_t k = 0; k < planned.size(); ++k)
    if (planned[k].root) model.add_root(placed_or_null(k));
  return std::nullopt;
}

std::string StepOutcome::summary() const {
  char stats[160];
  std::snprintf(stats,
                sizeof stats,
                "live %zu, blocks %zu, F %.4f",
                live_objects,
                blocks_in_use,
                fragmentation);
  std::ostringstream out;
  out << "step " << index << ": " << description << " | " << stats;
  if (op == "alloc" || (op == "parallel_do" && (created || failed)))
    out << " | created " << created << (failed ? ", out of memory " + std::to_string(failed) : "");
  if (deleted) out << " | deleted " << deleted;
  if (relinked) out << " | relinked " << relinked;
  if (defrag) {
    std::uint64_t moved = 0;
    for (auto const& p : defrag->passes) moved += p.objects_moved;
    char buf[200];
    std::snprintf(buf,
                  sizeof buf,
                  " | passes %zu, moved %llu, candidates %u -> %u, F(T) %.4f -> %.4f",
                  defrag->passes.size(),
                  static_cast<unsigned long long>(moved),
                  defrag->candidates_before,
                  defrag->candidates_after,
                  defrag->fragmentation_before,
                  defrag->fragmentation_after);
    out << buf;
  }
  out << (ok() ? " | ok" : " | FAILED");
  return out.str();
}

namespace {

schedule::Schedule validated(schedule::Schedule s) {
  schedule::validate(s);
  return s;
}

}  // namespace

ModelInterpreter::ModelInterpreter(schedule::Schedule s)
    : schedule_(validated(std::move(s))), model_(schedule_.config) {}

void ModelInterpreter::execute(schedule::Step const& step, StepOutcome& out) {
  auto const& config = schedule_.config;
  static schedule::IdGraph const kNoGraph;  // for the steps whose plan does not read the graph
  schedule::StepPlan const plan = plan_step(
      config, schedule::plan_reads_graph(step) ? id_graph(model_) : kNoGraph, step, next_id_);
  next_id_ = plan.next_id;

  if (std::holds_alternative<schedule::AllocWave>(step)) {
    for (auto const& obj : plan.allocations) {
      bool const placed = model_.allocate(obj.type, obj.id).has_value();
      if (placed) {
        for (std::uint32_t s = 0; s < obj.refs.size(); ++s)
          if (obj.refs[s]) model_.set_ref(obj.id, s, obj.refs[s]);
        ++out.created;
      } else {
        ++out.failed;
        out.failed_by_type.resize(config.num_types(), 0);
        ++out.failed_by_type.at(obj.type);
      }
      if (obj.root) model_.add_root(placed ? std::optional<ObjectId>(obj.id) : std::nullopt);
    }
  } else if (std::holds_alternative<schedule::FreeWave>(step)) {
    apply_nulling(model_, plan);
    apply_deletes(model_, plan);
    out.deleted = plan.deletes.size();
  } else if (auto const* pdo = std::get_if<schedule::ParallelDo>(&step)) {
    apply_nulling(model_, plan);
    std::map<ObjectId, schedule::Visit const*> visit_of;
    for (auto const& v : plan.visits) visit_of[v.self] = &v;
    if (model_.iteration_set(pdo->type).size() != plan.visits.size())
      throw std::logic_error("the model's launch set differs from the plan's visits");
    model_.parallel_do(pdo->type, [&](ParallelDoContext& ctx) {
      auto it = visit_of.find(ctx.self());
      if (it == visit_of.end())
        throw std::logic_error("parallel_do visited object " + std::to_string(ctx.self()) +
                               ", which the plan does not list");
      schedule::Visit const& v = *it->second;
      if (v.child) {
        auto const& child = plan.allocations.at(*v.child);
        bool const placed = ctx.allocate(child.type, child.id).has_value();
        if (placed) {
          for (std::uint32_t s = 0; s < child.refs.size(); ++s)
            if (child.refs[s]) model_.set_ref(child.id, s, child.refs[s]);
          ++out.created;
        } else {
          ++out.failed;
          out.failed_by_type.resize(config.num_types(), 0);
          ++out.failed_by_type.at(child.type);
        }
        ctx.set_ref(plan.parent_slot, placed ? std::optional<ObjectId>(child.id) : std::nullopt);
      }
      if (v.victim) {
        ctx.delete_object(*v.victim);
        ++out.deleted;
      }
      if (v.relink_to) {
        ctx.set_ref(plan.relink_slot, *v.relink_to);
        ++out.relinked;
      }
      if (v.delete_self) {
        ctx.delete_self();
        ++out.deleted;
      }
    });
  } else if (auto const* d = std::get_if<schedule::Defrag>(&step)) {
    out.defrag = model_.defrag(d->type, schedule::defrag_options(*d));
  }
}

check::DefragCall defrag_call(std::uint32_t type,
                              DefragResult const& r,
                              std::optional<std::uint32_t> passes) {
  check::DefragCall call;
  call.type              = type;
  call.n                 = r.n;
  call.k1                = r.k1;
  call.source_cap        = r.source_cap;
  call.candidates_before = r.candidates_before;
  call.passes            = passes.value_or(static_cast<std::uint32_t>(r.passes.size()));
  return call;
}

void ModelInterpreter::check_defrag(schedule::Defrag const& d,
                                    DefragResult const& r,
                                    check::HeapSnapshot const& after,
                                    StepOutcome& out) const {
  for (auto& v : check::check_defrag_obligations(after, defrag_call(d.type, r)))
    out.violations.push_back(std::move(v));
}

StepOutcome ModelInterpreter::step() {
  if (finished())
    throw core::precondition_error("ModelInterpreter::step: the schedule is finished");
  StepOutcome out;
  out.index                  = next_step_;
  schedule::Step const& step = schedule_.steps[next_step_++];
  out.op                     = schedule::step_name(step);
  out.description            = schedule::describe(schedule_.config, step);
  if (!last_snapshot_) last_snapshot_ = model_.snapshot();
  try {
    execute(step, out);
  } catch (std::bad_alloc const&) {
    throw;  // resource exhaustion of this process, not a failure of the step (callers report it)
  } catch (std::exception const& e) {
    out.error = e.what();
  }
  check::HeapSnapshot snap = model_.snapshot();
  out.live_objects         = model_.num_live();
  out.blocks_in_use        = model_.blocks_in_use();
  out.fragmentation        = model_.fragmentation();
  out.violations           = check::check_all(snap);
  if (out.error.empty()) {
    if (auto const* d = std::get_if<schedule::Defrag>(&step))
      check_defrag(*d, *out.defrag, snap, out);
    // oom-justified (check/oom_obligations.hpp) after an allocation-only wave: the model's own
    // policy (lowest active block, else lowest free block) never fails while either exists, so
    // this documents and enforces the rule rather than expecting to find anything.
    auto const* pdo            = std::get_if<schedule::ParallelDo>(&step);
    bool const allocation_only = std::holds_alternative<schedule::AllocWave>(step) ||
                                 (pdo && pdo->action == schedule::Action::allocate_child);
    if (allocation_only && out.failed > 0)
      for (auto& v : check::check_oom_justified(*last_snapshot_, snap, out.failed_by_type))
        out.violations.push_back(std::move(v));
    if (auto const* c = std::get_if<schedule::Check>(&step)) {
      if (c->graph_digest) {
        std::uint64_t const actual = schedule::graph_digest(id_graph(model_));
        if (actual != *c->graph_digest)
          out.violations.push_back(violation("graph-digest",
                                             "expected " +
                                                 schedule::format_digest(*c->graph_digest) +
                                                 ", got " + schedule::format_digest(actual)));
      }
      if (c->snapshot_digest) {
        std::uint64_t const actual = snapshot_digest(snap);
        if (actual != *c->snapshot_digest)
          out.violations.push_back(violation("snapshot-digest",
                                             "expected " +
                                                 schedule::format_digest(*c->snapshot_digest) +
                                                 ", got " + schedule::format_digest(actual)));
      }
    }
  }
  last_snapshot_ = std::move(snap);
  return out;
}

std::optional<std::size_t> RunResult::failed_step() const {
  if (ok()) return std::nullopt;
  return steps.back().index;
}

RunResult run_on_model(schedule::Schedule const& schedule,
                       std::function<void(StepOutcome const&, HeapModel const&)> const& on_step) {
  ModelInterpreter interpreter(schedule);
  RunResult result;
  while (!interpreter.finished()) {
    result.steps.push_back(interpreter.step());
    if (on_step) on_step(result.steps.back(), interpreter.model());
    if (!result.steps.back().ok()) break;
  }
  return result;
}

}  // namespace heaplab::model
