// ModelExecutor (model_executor.hpp).
#include "heaplab/families/heap/model_executor.hpp"

#include <stdexcept>
#include <utility>

#include "heaplab/core/cookie.hpp"
#include "heaplab/model/interpreter.hpp"

namespace heaplab::heap_family {

namespace {

/// splitmix64 (core::cookie_of) over a counter: the same sequence with every standard library.
std::uint64_t next_random(std::uint64_t& state) { return core::cookie_of(++state); }

std::size_t below(std::size_t n, std::uint64_t& state) {
  return static_cast<std::size_t>(next_random(state) % n);
}

}  // namespace

ModelExecutor::ModelExecutor(PlacementPolicy policy, std::uint64_t seed)
    : policy_(policy), seed_(seed), rng_state_(seed) {}

Support ModelExecutor::supports(core::HeapConfig const& config) const {
  try {
    config.validate();
  } catch (std::exception const& e) {
    return {false, e.what()};
  }
  return {};
}

void ModelExecutor::reset(core::HeapConfig const& config) {
  model_.emplace(config);
  rng_state_ = seed_;
}

std::vector<model::ObservedAllocation> ModelExecutor::place(model::HeapModel const& m,
                                                            schedule::StepPlan const& plan,
                                                            PlacementPolicy policy,
                                                            std::uint64_t& rng_state) {
  std::vector<model::ObservedAllocation> out;
  if (policy == PlacementPolicy::lowest) {
    model::HeapModel scratch = m;
    for (auto const& a : plan.allocations)
      if (auto where = scratch.allocate(a.type, a.id))
        out.push_back({a.id, a.type, where->block, where->slot, {}});
    return out;
  }
  auto const& config    = m.config();
  std::uint32_t const M = config.num_blocks;
  std::vector<std::optional<model::TypeId>> type(M);
  std::vector<std::vector<bool>> used(M, std::vector<bool>(core::kMaxCapacity, false));
  for (std::uint32_t b = 0; b < M; ++b) {
    type[b] = m.block(b).type;
    for (std::uint32_t s = 0; s < core::kMaxCapacity; ++s)
      used[b][s] = m.block(b).slots[s].has_value();
  }
  std::vector<std::size_t> order(plan.allocations.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[below(i, rng_state)]);
  for (std::size_t i : order) {
    auto const& a           = plan.allocations[i];
    std::uint32_t const cap = config.capacity(a.type);
    std::vector<std::uint32_t> active, free;
    for (std::uint32_t b = 0; b < M; ++b) {
      if (!type[b]) free.push_back(b);
      if (type[b] == a.type) {
        for (std::uint32_t s = 0; s < cap; ++s)
          if (!used[b][s]) {
            active.push_back(b);
            break;
          }
      }
    }
    auto const& blocks = active.empty() ? free : active;
    if (blocks.empty()) continue;  // out of memory
    std::uint32_t const b = blocks[below(blocks.size(), rng_state)];
    std::vector<std::uint32_t> slots;
    for (std::uint32_t s = 0; s < cap; ++s)
      if (!used[b][s]) slots.push_back(s);
    std::uint32_t const slot = slots[below(slots.size(), rng_state)];
    type[b]                  = a.type;
    used[b][slot]            = true;
    out.push_back({a.id, a.type, b, slot, {}});
  }
  return out;
}

ExecutedStep ModelExecutor::execute(schedule::Step const& step, schedule::StepPlan const& plan) {
  if (!model_) throw std::logic_error("ModelExecutor::execute before reset");
  model::HeapModel& m = *model_;
  ExecutedStep out;
  if (auto const* d = std::get_if<schedule::Defrag>(&step)) {
    out.defrag_passes =
        static_cast<std::uint32_t>(m.defrag(d->type, schedule::defrag_options(*d)).passes.size());
  } else if (!std::holds_alternative<schedule::Check>(step)) {
    model::apply_nulling(m, plan);
    model::apply_deletes(m, plan);
    if (!plan.allocations.empty() || std::holds_alternative<schedule::AllocWave>(step) ||
        std::holds_alternative<schedule::ParallelDo>(step)) {
      out.placements = place(m, plan, policy_, rng_state_);
      if (auto error = model::apply_placements(m, plan, out.placements))
        throw std::logic_error("ModelExecutor made an illegal placement: " + error->to_string());
    }
  }
  out.snapshot = m.snapshot();
  out.roots    = m.root_locations();
  return out;
}

}  // namespace heaplab::heap_family
