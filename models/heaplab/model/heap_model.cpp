// The reference model: allocation, refinement of GPU placements, pointers, roots, free and
// parallel_do (docs/model.md). Defragmentation is in defrag.cpp, snapshots in snapshot.cpp.
#include "heaplab/model/heap_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "heaplab/check/diff.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/cookie.hpp"

namespace heaplab::model {

namespace {

[[noreturn]] void fail(std::string const& message) {
  throw core::precondition_error("HeapModel: " + message);
}

std::string id_str(ObjectId id) { return "object " + std::to_string(id); }

}  // namespace

std::string PlacementError::to_string() const {
  return "illegal placement #" + std::to_string(index) + " (object " +
         std::to_string(placement.id) + " of type " + std::to_string(placement.type) +
         " at block " + std::to_string(placement.block) + ", slot " +
         std::to_string(placement.slot) + "): " + reason;
}

HeapModel::HeapModel(core::HeapConfig config) : config_(std::move(config)) {
  config_.validate();
  blocks_.resize(config_.num_blocks);
  allocated_.resize(config_.num_types());
  active_.resize(config_.num_types());
  defrag_.resize(config_.num_types());
  std::size_t const words = (std::size_t{config_.num_blocks} + 63) / 64;
  free_words_.assign(words, 0);
  allocated_words_.assign(config_.num_types(), std::vector<std::uint64_t>(words, 0));
  active_words_ = allocated_words_;
  defrag_words_ = allocated_words_;
  for (std::uint32_t b = 0; b < config_.num_blocks; ++b) {
    free_.insert(free_.end(), b);
    free_words_[b / 64] |= std::uint64_t{1} << (b % 64);
  }
}

HeapModel HeapModel::from_snapshot(check::HeapSnapshot const& snapshot,
                                   std::vector<std::optional<Location>> const& roots) {
  if (!snapshot.has_payloads)
    fail("from_snapshot: the snapshot has no payloads (ids, cookies and pointers are needed)");
  std::vector<check::Violation> const violations = check::check_all(snapshot);
  if (!violations.empty())
    fail("from_snapshot: the snapshot violates the invariant catalog (" +
         std::to_string(violations.size()) +
         " violations), first: " + violations.front().to_string());
  HeapModel model(snapshot.config);

  // Every live object by location first, so that pointers (stored as locations) become ids.
  struct Found {
    ObjectId id;
    TypeId type;
    check::ObjectRecord const* record;
  };
  std::map<Location, Found> at;
  for (std::uint32_t b = 0; b < snapshot.blocks.size(); ++b) {
    std::optional<std::uint32_t> const type = check::allocated_type(snapshot, b);
    if (!type) continue;
    for (auto const& [slot, record] : snapshot.blocks[b].objects.entries())
      if (record) at.emplace(Location{b, slot}, Found{record->id, *type, &*record});
  }
  auto const id_at = [&](Location where, std::string const& what) {
    auto it = at.find(where);
    if (it == at.end())
      fail("from_snapshot: " + what + " refers to block " + std::to_string(where.block) +
           ", slot " + std::to_string(where.slot) + ", which holds no object");
    return it->second.id;
  };
  for (auto const& [where, found] : at) {
    std::vector<std::optional<ObjectId>> refs;
    for (auto const& r : found.record->refs)
      refs.push_back(r ? std::optional<ObjectId>(id_at(*r, id_str(found.id))) : std::nullopt);
    model.place(found.id, found.type, where, std::move(refs));
  }
  for (std::size_t i = 0; i < roots.size(); ++i)
    model.add_root(roots[i] ? std::optional<ObjectId>(id_at(*roots[i], "root " + std::to_string(i)))
                            : std::nullopt);

  // The catalog ties every state bitmap to the fills, which is what the model's sets are made
  // of; a difference here would be a gap in the catalog.
  check::SnapshotDiff const d = check::diff(snapshot, model.snapshot());
  if (!d.empty())
    fail("from_snapshot: the model built from the snapshot differs from it: " + d.to_string());
  return model;
}

// ---------------------------------------------------------------------------------- queries

Object const& HeapModel::object(ObjectId id) const {
  auto it = objects_.find(id);
  if (it == objects_.end()) fail(id_str(id) + " is not live");
  return it->second;
}

std::vector<ObjectId> HeapModel::live_ids_of(TypeId type) const {
  std::vector<ObjectId> out;
  for (auto const& [id, obj] : objects_)
    if (config_.is_subtype(obj.type, type)) out.push_back(id);
  return out;
}

std::uint32_t HeapModel::fill(std::uint32_t b) const {
  std::uint32_t used = 0;
  for (auto const& slot : blocks_.at(b).slots)
    if (slot) ++used;
  return used;
}

std::uint32_t HeapModel::block_capacity(std::uint32_t b) const {
  auto const& type = blocks_.at(b).type;
  return type ? config_.capacity(*type) : 0;
}

double HeapModel::fragmentation(TypeId t) const {
  auto const& blocks = allocated_.at(t);
  if (blocks.empty()) return 0.0;
  double sum = 0.0;
  for (std::uint32_t b : blocks)
    sum += static_cast<double>(block_capacity(b) - fill(b)) / block_capacity(b);
  return sum / static_cast<double>(blocks.size());
}

double HeapModel::fragmentation() const {
  double sum          = 0.0;
  std::size_t counted = 0;
  for (std::uint32_t b = 0; b < config_.num_blocks; ++b) {
    if (!blocks_[b].type) continue;
    sum += static_cast<double>(block_capacity(b) - fill(b)) / block_capacity(b);
    ++counted;
  }
  return counted == 0 ? 0.0 : sum / static_cast<double>(counted);
}

std::vector<std::uint32_t> HeapModel::candidates(TypeId t, std::uint32_t n) const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t b : allocated_.at(t))
    if (core::is_defrag_fill(fill(b), config_.capacity(t), n)) out.push_back(b);
  return out;  // std::set iterates in ascending block order
}

// ------------------------------------------------------------------------ state maintenance

void HeapModel::update_block_state(std::uint32_t b) {
  Block& block             = blocks_[b];
  std::uint32_t const used = fill(b);
  // DynaSOAr sec. 3.4: a block whose last object is deleted is deleted (becomes free).
  if (used == 0) block.type.reset();
  // Each set gets b iff the block is in that state (a set that already agrees is left alone),
  // and so does its word mirror.
  std::uint64_t const bit = std::uint64_t{1} << (b % 64);
  auto const member =
      [b, bit](std::set<std::uint32_t>& set, std::vector<std::uint64_t>& words, bool in) {
        if (in) {
          set.insert(b);
          words[b / 64] |= bit;
        } else {
          set.erase(b);
          words[b / 64] &= ~bit;
        }
      };
  member(free_, free_words_, used == 0);
  for (TypeId t = 0; t < config_.num_types(); ++t) {
    bool const mine         = used > 0 && *block.type == t;
    std::uint32_t const cap = mine ? config_.capacity(t) : 0;
    member(allocated_[t], allocated_words_[t], mine);
    member(active_[t], active_words_[t], mine && used < cap);  // active[T]: a free slot
    member(defrag_[t],
           defrag_words_[t],
           mine && core::is_defrag_fill(used, cap, config_.defrag_factor));
  }
}

void HeapModel::add_incoming(std::optional<ObjectId> target) {
  if (target) ++incoming_[*target];
}

void HeapModel::drop_incoming(std::optional<ObjectId> target) {
  if (!target) return;
  auto it = incoming_.find(*target);
  if (it == incoming_.end() || it->second == 0)
    throw std::logic_error("HeapModel: reference count of " + id_str(*target) + " underflows");
  if (--it->second == 0) incoming_.erase(it);
}

void HeapModel::require_live(ObjectId id, char const* what) const {
  if (!is_live(id)) fail(std::string(what) + ": " + id_str(id) + " is not live");
}

void HeapModel::require_not_in_parallel_do(char const* what) const {
  if (running_parallel_do_)
    fail(std::string(what) + " is not allowed inside a parallel_do (use its context)");
}

void HeapModel::place(ObjectId id,
                      TypeId type,
                      Location where,
                      std::vector<std::optional<ObjectId>> refs) {
  Block& block            = blocks_[where.block];
  block.type              = type;
  block.slots[where.slot] = id;
  Object obj;
  obj.id     = id;
  obj.type   = type;
  obj.cookie = core::cookie_of(id);
  obj.where  = where;
  obj.refs   = std::move(refs);
  obj.refs.resize(config_.pointer_slots(type).size());
  for (auto const& r : obj.refs) add_incoming(r);
  objects_.emplace_hint(objects_.end(), id, std::move(obj));  // new ids are mostly ascending
  next_unused_id_ = std::max(next_unused_id_, id + 1);
  update_block_state(where.block);
}

void HeapModel::remove(ObjectId id) {
  Object const obj = objects_.at(id);
  for (auto const& r : obj.refs) drop_incoming(r);
  blocks_[obj.where.block].slots[obj.where.slot].reset();
  objects_.erase(id);
  update_block_state(obj.where.block);
}

void HeapModel::move(ObjectId id, Location to) {
  Object& obj = objects_.at(id);
  blocks_[obj.where.block].slots[obj.where.slot].reset();
  blocks_[to.block].type           = obj.type;
  blocks_[to.block].slots[to.slot] = id;
  obj.where                        = to;
}

// ------------------------------------------------------------------------------- allocation

std::optional<Location> HeapModel::allocate(TypeId type, ObjectId id) {
  if (type >= config_.num_types()) fail("allocate: unknown type " + std::to_string(type));
  if (config_.types[type].is_abstract)
    fail("allocate: type '" + config_.types[type].name + "' is abstract");
  if (is_live(id)) fail("allocate: " + id_str(id) + " is already live");
  // DynaSOAr sec. 3.2 / CompactGpu sec. 2.2: allocate in an active[T] block; only if there is
  // none, initialize a free block for T.
  std::optional<std::uint32_t> chosen;
  if (!active_[type].empty())
    chosen = *active_[type].begin();
  else if (!free_.empty())
    chosen = *free_.begin();
  if (!chosen) return std::nullopt;  // out of memory
  std::uint32_t const cap = config_.capacity(type);
  for (std::uint32_t s = 0; s < cap; ++s) {
    if (blocks_[*chosen].slots[s]) continue;
    Location const where{*chosen, s};
    place(id, type, where, {});
    return where;
  }
  throw std::logic_error("HeapModel: active block " + std::to_string(*chosen) +
                         " has no free slot");
}

std::optional<ObjectId> HeapModel::allocate(TypeId type) {
  ObjectId const id = next_unused_id_;
  if (!allocate(type, id)) return std::nullopt;
  return id;
}

std::optional<PlacementError> HeapModel::accept_allocations(
    std::vector<ObservedAllocation> const& observed) {
  // Replay the batch on scratch copies of what the checks read, then apply it for real.
  std::vector<std::optional<TypeId>> block_type(config_.num_blocks);
  for (std::uint32_t b = 0; b < config_.num_blocks; ++b) block_type[b] = blocks_[b].type;
  // Slots the batch took so far, per block (the heap's own slots are blocks_[b].slots).
  std::unordered_map<std::uint32_t, std::uint64_t> batch_slots;
  std::unordered_map<ObjectId, TypeId> batch_types;
  batch_types.reserve(observed.size());
  for (std::size_t i = 0; i < observed.size(); ++i) {
    auto const& p    = observed[i];
    auto const error = [&](std::string reason) { return PlacementError{i, p, std::move(reason)}; };
    if (p.type >= config_.num_types())
      return error("type " + std::to_string(p.type) + " does not exist");
    auto const tn = [&] { return "'" + config_.types[p.type].name + "'"; };
    if (config_.types[p.type].is_abstract) return error("type " + tn() + " is abstract");
    if (is_live(p.id)) return error(id_str(p.id) + " is already live: ids must be new");
    if (batch_types.count(p.id)) return error(id_str(p.id) + " appears twice in the batch");
    if (p.block >= config_.num_blocks)
      return error("block " + std::to_string(p.block) +
                   " does not exist (M = " + std::to_string(config_.num_blocks) + ")");
    std::uint32_t const cap = config_.capacity(p.type);
    if (p.slot >= cap)
      return error("slot " + std::to_string(p.slot) + " is at or above the capacity " +
                   std::to_string(cap) + " of " + tn());
    auto const& bt = block_type[p.block];
    if (bt && *bt != p.type)
      return error("block " + std::to_string(p.block) + " is allocated for type '" +
                   config_.types[*bt].name + "', not " + tn());
    std::uint64_t& batch_mask = batch_slots[p.block];
    if (blocks_[p.block].slots[p.slot] || ((batch_mask >> p.slot) & 1u) != 0)
      return error("slot " + std::to_string(p.slot) + " of block " + std::to_string(p.block) +
                   " is already occupied");
    if (!p.refs.empty() && p.refs.size() != config_.pointer_slots(p.type).size())
      return error("has " + std::to_string(p.refs.size()) + " pointers, type " + tn() + " has " +
                   std::to_string(config_.pointer_slots(p.type).size()) + " pointer slots");
    block_type[p.block] = p.type;
    batch_mask |= std::uint64_t{1} << p.slot;
    batch_types[p.id] = p.type;
  }
  // Pointers may refer to objects live before the batch or created by it.
  for (std::size_t i = 0; i < observed.size(); ++i) {
    auto const& p    = observed[i];
    auto const slots = config_.pointer_slots(p.type);
    for (std::size_t s = 0; s < p.refs.size(); ++s) {
      if (!p.refs[s]) continue;
      ObjectId const target = *p.refs[s];
      std::optional<TypeId> target_type;
      if (auto it = objects_.find(target); it != objects_.end()) target_type = it->second.type;
      if (auto it = batch_types.find(target); it != batch_types.end()) target_type = it->second;
      if (!target_type)
        return PlacementError{i,
                              p,
                              "pointer slot " + std::to_string(s) + " refers to " + id_str(target) +
                                  ", which is not live"};
      if (!config_.slot_may_point_to(slots[s], *target_type))
        return PlacementError{i,
                              p,
                              "pointer slot " + std::to_string(s) + " (to '" +
                                  config_.types[slots[s].pointee].name + "') refers to " +
                                  id_str(target) + " of type '" + config_.types[*target_type].name +
                                  "'"};
    }
  }
  for (auto const& p : observed) place(p.id, p.type, {p.block, p.slot}, p.refs);
  return std::nullopt;
}

// --------------------------------------------------------------------------------- pointers

void HeapModel::set_ref(ObjectId from, std::uint32_t slot, std::optional<ObjectId> to) {
  require_live(from, "set_ref");
  Object& obj      = objects_.at(from);
  auto const slots = config_.pointer_slots(obj.type);
  if (slot >= slots.size())
    fail("set_ref: " + id_str(from) + " has " + std::to_string(slots.size()) +
         " pointer slots, not slot " + std::to_string(slot));
  if (to) {
    require_live(*to, "set_ref target");
    if (!config_.slot_may_point_to(slots[slot], objects_.at(*to).type))
      fail("set_ref: slot " + std::to_string(slot) + " of " + id_str(from) + " points to '" +
           config_.types[slots[slot].pointee].name + "', not to '" +
           config_.types[objects_.at(*to).type].name + "'");
  }
  drop_incoming(obj.refs[slot]);
  obj.refs[slot] = to;
  add_incoming(to);
}

std::uint32_t HeapModel::incoming_refs(ObjectId id) const {
  auto it = incoming_.find(id);
  return it == incoming_.end() ? 0 : it->second;
}

void HeapModel::null_references_to(std::set<ObjectId> const& ids) {
  for (auto& [id, obj] : objects_) {
    for (auto& r : obj.refs) {
      if (r && ids.count(*r)) {
        drop_incoming(r);
        r.reset();
      }
    }
  }
  for (auto& r : roots_) {
    if (r && ids.count(*r)) {
      drop_incoming(r);
      r.reset();
    }
  }
}

// ------------------------------------------------------------------------------------ roots

std::size_t HeapModel::add_root(std::optional<ObjectId> target) {
  if (target) require_live(*target, "add_root");
  roots_.push_back(target);
  add_incoming(target);
  return roots_.size() - 1;
}

void HeapModel::set_root(std::size_t index, std::optional<ObjectId> target) {
  if (index >= roots_.size())
    fail("set_root: root " + std::to_string(index) + " does not exist (" +
         std::to_string(roots_.size()) + " roots)");
  if (target) require_live(*target, "set_root");
  drop_incoming(roots_[index]);
  roots_[index] = target;
  add_incoming(target);
}

std::vector<std::optional<Location>> HeapModel::root_locations() const {
  std::vector<std::optional<Location>> out;
  out.reserve(roots_.size());
  bool const in_call = !call_start_locations_.empty();  // else referent_location is the object's
  for (auto const& r : roots_) {
    if (!r)
      out.emplace_back();
    else
      out.emplace_back(in_call ? referent_location(*r) : objects_.at(*r).where);
  }
  return out;
}

Location HeapModel::referent_location(ObjectId id) const {
  auto const it = call_start_locations_.find(id);
  return it != call_start_locations_.end() ? it->second : objects_.at(id).where;
}

// ------------------------------------------------------------------------------------- free

void HeapModel::free(ObjectId id) {
  require_not_in_parallel_do("free");
  require_live(id, "free");
  if (std::uint32_t const n = incoming_refs(id); n > 0)
    fail("free: " + id_str(id) + " is still referenced by " + std::to_string(n) +
         " pointer slot(s) or root(s); null them first (null_references_to)");
  remove(id);
}

// ------------------------------------------------------------------------------ parallel_do

TypeId ParallelDoContext::self_type() const { return model_.object(self_).type; }

std::optional<Location> ParallelDoContext::allocate(TypeId type, ObjectId id) {
  return model_.allocate(type, id);
}

void ParallelDoContext::set_ref(std::uint32_t slot, std::optional<ObjectId> target) {
  if (deleted_self_) fail("parallel_do: " + id_str(self_) + " set a pointer after deleting itself");
  model_.set_ref(self_, slot, target);
}

void ParallelDoContext::delete_self() {
  if (deleted_self_) fail("parallel_do: " + id_str(self_) + " deleted itself twice");
  if (std::uint32_t const n = model_.incoming_refs(self_); n > 0)
    fail("parallel_do: " + id_str(self_) + " deletes itself while " + std::to_string(n) +
         " pointer slot(s) or root(s) still refer to it");
  model_.remove(self_);
  deleted_self_ = true;
}

void ParallelDoContext::delete_object(ObjectId other) {
  if (other == self_) fail("parallel_do: use delete_self() to delete the object itself");
  model_.require_live(other, "parallel_do delete_object");
  TypeId const t     = model_.objects_.at(other).type;
  auto const& config = model_.config_;
  if (config.is_subtype(t, iterated_))
    fail("parallel_do<" + config.types[iterated_].name + ">: " + id_str(self_) +
         " may not delete " + id_str(other) + " of type '" + config.types[t].name +
         "': among the iterated objects only `this` may be deleted (DynaSOAr sec. 2.1)");
  if (std::uint32_t const n = model_.incoming_refs(other); n > 0)
    fail("parallel_do: " + id_str(other) + " is deleted while " + std::to_string(n) +
         " pointer slot(s) or root(s) still refer to it");
  model_.remove(other);
}

void HeapModel::parallel_do(TypeId type, std::function<void(ParallelDoContext&)> const& body) {
  require_not_in_parallel_do("a nested parallel_do");
  if (type >= config_.num_types()) fail("parallel_do: unknown type " + std::to_string(type));
  // The object set is fixed at launch (DynaSOAr sec. 3.1: the iteration bitmaps are copied from
  // the allocation bitmaps before the kernel starts).
  std::vector<ObjectId> const launch_set = iteration_set(type);
  running_parallel_do_                   = type;
  try {
    for (ObjectId id : launch_set) {
      // Only `this` may delete an iterated object, so every object of the launch set is still
      // live when its turn comes.
      if (!is_live(id))
        throw std::logic_error("HeapModel: iterated " + id_str(id) + " vanished before its visit");
      ParallelDoContext ctx(*this, type, id);
      body(ctx);
    }
  } catch (...) {
    running_parallel_do_.reset();
    throw;
  }
  running_parallel_do_.reset();
}

}  // namespace heaplab::model
