// HeapModel::defrag: CompactGpu defragmentation by block merging (CompactGpu sec. 3), one pass at
// a time, written step by step as the paper describes it.
#include <algorithm>
#include <stdexcept>

#include "heaplab/model/heap_model.hpp"

namespace heaplab::model {

namespace {

[[noreturn]] void fail(std::string const& message) {
  throw core::precondition_error("HeapModel::defrag: " + message);
}

}  // namespace

DefragPassPlan HeapModel::plan_defrag_pass(TypeId type,
                                           std::uint32_t n,
                                           std::uint32_t source_cap,
                                           CandidateOrder order) const {
  if (type >= config_.num_types()) fail("unknown type " + std::to_string(type));
  if (config_.types[type].is_abstract)
    fail("type '" + config_.types[type].name + "' is abstract and has no blocks");
  std::uint32_t const cap = config_.capacity(type);
  if (n < 1 || n >= cap)
    fail("factor n=" + std::to_string(n) + " must satisfy 1 <= n < " + std::to_string(cap) +
         " (the capacity of '" + config_.types[type].name + "'; CompactGpu sec. 3)");
  if (source_cap < 1) fail("the source cap must be at least 1");

  DefragPassPlan plan;
  plan.type = type;
  plan.n    = n;
  // Sec. 3.2 "Choosing Source/Target Blocks": R = the candidate blocks in ascending index order
  // (the stream compaction of the defrag[T] bitmap); floor(r / (n + 1)) sources are allowed.
  // A variant that keeps records in shared memory (sec. 3.8) uses at most source_cap of them:
  // B = min(floor(r / (n + 1)), source_cap), sources R[0..B-1] (core/defrag_limits.hpp).
  plan.R = candidates(type, n);
  if (order == CandidateOrder::by_fill)  // beyond the paper (core::CandidateOrder); the GPU too
    std::stable_sort(plan.R.begin(), plan.R.end(), [&](std::uint32_t x, std::uint32_t y) {
      return fill(x) < fill(y);
    });
  std::uint32_t const r = static_cast<std::uint32_t>(plan.R.size());
  plan.sources_allowed  = r / (n + 1);
  plan.B                = core::capped_sources(plan.sources_allowed, source_cap);
  for (std::uint32_t s = 0; s < plan.B; ++s) {
    SourceAssignment a;
    a.source = plan.R[s];
    // The targets of source R[s] are R[s + i*B], i = 1..n.
    for (std::uint32_t i = 1; i <= n; ++i) a.targets.push_back(plan.R[s + i * plan.B]);
    // CompactGpu Alg. 1: the free slots of the targets, target by target, each in slot order ...
    std::vector<Location> free_slots;
    for (std::uint32_t t : a.targets)
      for (std::uint32_t slot = 0; slot < cap; ++slot)
        if (!blocks_[t].slots[slot]) free_slots.push_back({t, slot});
    // ... and the j-th live object of the source (slot order) goes to the j-th free slot.
    std::size_t j = 0;
    for (std::uint32_t slot = 0; slot < cap; ++slot) {
      auto const id = blocks_[a.source].slots[slot];
      if (!id) continue;
      // Sec. 3: none of the n + 1 blocks is more than n/(n+1) full, so the source's objects
      // always fit into the targets' free slots.
      if (j == free_slots.size())
        throw std::logic_error("HeapModel::defrag: source block " + std::to_string(a.source) +
                               " does not fit into its targets");
      a.moves.push_back({*id, Location{a.source, slot}, free_slots[j++]});
    }
    plan.sources.push_back(std::move(a));
  }
  return plan;
}

void HeapModel::apply_defrag_pass(DefragPassPlan const& plan,
                                  DefragPassStats& stats,
                                  std::map<ObjectId, std::uint32_t>& relocations,
                                  std::vector<std::uint64_t>& relocations_by_ordinal) {
  stats.candidates      = static_cast<std::uint32_t>(plan.R.size());
  stats.sources_allowed = plan.sources_allowed;
  stats.sources         = plan.B;

  // Sec. 3.2 copy objects (and sec. 3.3 forwarding: old location -> new location, kept by id).
  for (auto const& a : plan.sources) {
    for (auto const& m : a.moves) {
      move(m.id, m.to);
      std::uint32_t const k = ++relocations[m.id];
      if (relocations_by_ordinal.size() < k) relocations_by_ordinal.resize(k, 0);
      ++relocations_by_ordinal[k - 1];
      ++stats.objects_moved;
    }
  }

  // Sec. 3.4 rewrite pointers: not here. A pass only moves objects (and writes forwarding
  // pointers or records); the call rewrites every pointer once, after its last pass
  // (count_call_rewrites). Until then pointers and roots refer to the locations at the call's
  // start (call_start_locations_).

  // Sec. 3.5 update block states: sources become free; targets may lose active and defrag.
  for (auto const& a : plan.sources) {
    update_block_state(a.source);
    if (!free_.count(a.source))
      throw std::logic_error("HeapModel::defrag: source block " + std::to_string(a.source) +
                             " is not empty after the pass");
    for (std::uint32_t t : a.targets) update_block_state(t);
  }
}

DefragResult HeapModel::defrag(TypeId type,
                               std::optional<std::uint32_t> requested_n,
                               std::optional<std::uint32_t> requested_k1) {
  DefragOptions options;
  options.n  = requested_n;
  options.k1 = requested_k1;
  return defrag(type, options);
}

void HeapModel::count_call_rewrites(TypeId type, DefragResult& result) const {
  if (result.passes.empty()) return;  // nothing moved: no rewrite scan
  auto const moved = [&](std::optional<ObjectId> const& r) {
    return r && result.relocations.count(*r) != 0;
  };
  // Sec. 3.4 rewrite pointers, once per call after the last pass, limiting the scan to the
  // pointer slots of the types U that may point to T (a slot whose pointee S satisfies T <: S).
  // The model refers to objects by id, so a rewritten pointer keeps its id and now denotes the
  // final location; the counts show what the GPU must rewrite: every slot whose object moved at
  // least once in this call, however many times it moved.
  for (TypeId U : config_.types_pointing_to(type)) {
    auto const slots = config_.pointer_slots(U);
    for (std::uint32_t b : allocated_[U]) {
      for (auto const& id : blocks_[b].slots) {
        if (!id) continue;
        Object const& obj = objects_.at(*id);
        for (std::size_t k = 0; k < slots.size(); ++k) {
          if (!config_.slot_may_point_to(slots[k], type)) continue;
          ++result.pointers_scanned;
          if (moved(obj.refs[k])) ++result.pointers_rewritten;
        }
      }
    }
  }
  // Every reference to a moved object must be found by this limited scan.
  std::uint64_t references_to_moved = 0;
  for (auto const& [id, obj] : objects_)
    for (auto const& r : obj.refs)
      if (moved(r)) ++references_to_moved;
  if (references_to_moved != result.pointers_rewritten)
    throw std::logic_error(
        "HeapModel::defrag: the type-limited pointer scan (CompactGpu sec. 3.4) "
        "found " +
        std::to_string(result.pointers_rewritten) + " of " + std::to_string(references_to_moved) +
        " references to moved objects");
  for (auto const& r : roots_)
    if (moved(r)) ++result.roots_rewritten;
}

void HeapModel::run_defrag_passes(TypeId type,
                                  std::uint32_t n,
                                  std::uint32_t k1,
                                  DefragResult& result,
                                  PassObserver const& on_pass,
                                  CandidateOrder order) {
  // Sec. 3.6 multiple passes: until at most k1 candidates remain. A pass with B = 0 (fewer than
  // n + 1 candidates) could not move anything, so it ends the call.
  while (true) {
    std::vector<std::uint32_t> const R = candidates(type, n);
    if (n == config_.defrag_factor && std::set<std::uint32_t>(R.begin(), R.end()) != defrag_[type])
      throw std::logic_error("HeapModel::defrag: defrag[T] differs from the blocks with low fill");
    if (R.size() <= k1) {
      result.stop = DefragStop::k1_reached;
      return;
    }
    DefragPassPlan const plan = plan_defrag_pass(type, n, result.source_cap, order);
    if (plan.B == 0) {
      result.stop = DefragStop::no_progress;
      return;
    }
    DefragPassStats stats;
    apply_defrag_pass(plan, stats, result.relocations, result.relocations_by_ordinal);
    result.passes.push_back(stats);
    if (on_pass) on_pass(*this, stats);
  }
}

DefragResult HeapModel::defrag(TypeId type,
                               DefragOptions const& options,
                               PassObserver const& on_pass) {
  require_not_in_parallel_do("defrag");
  std::uint32_t const n   = options.n.value_or(config_.defrag_factor);
  std::uint32_t const k1  = options.k1.value_or(config_.k1);
  std::uint32_t const cap = core::effective_source_cap(options, n);
  if (cap == 0 && !options.source_cap)
    fail("a record budget of " + std::to_string(options.record_budget_bytes) +
         " bytes leaves no source per pass for " + core::to_string(options.variant) +
         " with n=" + std::to_string(n) + " (CompactGpu sec. 3.8: 12 (n + 1) bytes per record)");
  DefragResult result;
  result.type       = type;
  result.n          = n;
  result.k1         = k1;
  result.source_cap = cap;
  // Validates type, n and the cap before anything changes.
  (void)plan_defrag_pass(type, n, cap);

  std::vector<ObjectId> objects_of_T;
  for (auto const& [id, obj] : objects_)
    if (obj.type == type) objects_of_T.push_back(id);
  result.candidates_before         = static_cast<std::uint32_t>(candidates(type, n).size());
  result.fragmentation_before      = fragmentation(type);
  result.heap_fragmentation_before = fragmentation();
  result.blocks_before             = static_cast<std::uint32_t>(allocated_[type].size());

  // One rewrite per call (docs/model.md): until the passes end, pointers and roots refer to the
  // locations the objects of T (the only ones that move) had at the call's start.
  for (ObjectId id : objects_of_T) call_start_locations_[id] = objects_.at(id).where;
  try {
    run_defrag_passes(type, n, k1, result, on_pass, options.order);
  } catch (...) {
    call_start_locations_.clear();
    throw;
  }
  call_start_locations_.clear();
  count_call_rewrites(type, result);

  // n-override rule (docs/model.md): this call used factor n for its candidates; the defrag[T]
  // sets always follow the config's factor. update_block_state already applies the config's n
  // to every block it touches; recompute all blocks of T so that the rule is stated in one place.
  std::set<std::uint32_t> const blocks_of_T = allocated_[type];
  for (std::uint32_t b : blocks_of_T) update_block_state(b);

  result.candidates_after         = static_cast<std::uint32_t>(candidates(type, n).size());
  result.fragmentation_after      = fragmentation(type);
  result.heap_fragmentation_after = fragmentation();
  result.blocks_after             = static_cast<std::uint32_t>(allocated_[type].size());
  for (ObjectId id : objects_of_T) {
    auto it               = result.relocations.find(id);
    std::uint32_t const c = it == result.relocations.end() ? 0 : it->second;
    if (result.objects_by_relocation_count.size() <= c)
      result.objects_by_relocation_count.resize(c + 1, 0);
    ++result.objects_by_relocation_count[c];
  }
  return result;
}

}  // namespace heaplab::model
