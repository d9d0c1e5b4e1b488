// HeapModel: the sequential reference model of a DynaSOAr heap with CompactGpu defragmentation
// (docs/model.md).
//
// Written to read like the papers, not to be fast: a block is an optional type and 64 slots each
// holding an optional object id; block states are std::sets of block indices; objects are kept by
// id with their type, cookie and pointer targets (by id). There are no bit tricks and no
// concurrency. The model produces check::HeapSnapshot, the one representation every checker and
// diff understands.
//
// Allocation. The model has its own deterministic placement (allocate: lowest active block of the
// type, else lowest free block; lowest free slot). A GPU allocator is nondeterministic, so the
// model checks it by refinement: accept_allocations() takes the placements a GPU chose, checks
// each is one the allocator may legally make and applies them; afterwards the id graph must match
// exactly. Free, parallel_do and defragmentation are deterministic given the heap, so for those
// the model predicts the exact post-state.
//
// One rewrite per call. A defragmentation call moves objects pass by pass but rewrites pointers
// once, after its last pass (CompactGpu sec. 3.4's scan, run once per call instead of once per
// pass: beyond the paper, docs/model.md). So while the call runs, i.e. when its PassObserver
// sees the model between passes, every pointer field and every root still holds the location
// its object had when the call began: snapshot() and root_locations() report that stale view
// then (objects themselves are at their new locations). After the call they report the final
// locations again.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "heaplab/check/snapshot.hpp"
#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/core/heap_config.hpp"
#include "heaplab/model/defrag_result.hpp"

namespace heaplab::model {

using ObjectId = std::uint64_t;
using TypeId   = std::uint32_t;
/// Where an object lives: (block, slot), the same as in a snapshot.
using Location = core::SlotRef;

/// One live object.
struct Object {
  ObjectId id          = 0;
  TypeId type          = 0;
  std::uint64_t cookie = 0;  // core::cookie_of(id)
  Location where;
  /// One target per config.pointer_slots(type), by object id; nullopt is a null pointer.
  std::vector<std::optional<ObjectId>> refs;
};

/// One block container (DynaSOAr sec. 3.1): free (no type) or allocated for one type.
struct Block {
  std::optional<TypeId> type;
  std::array<std::optional<ObjectId>, core::kMaxCapacity> slots;
};

/// An allocation a GPU made: object `id` of `type` at (block, slot) with initial pointers by id.
struct ObservedAllocation {
  ObjectId id         = 0;
  TypeId type         = 0;
  std::uint32_t block = 0;
  std::uint32_t slot  = 0;
  std::vector<std::optional<ObjectId>> refs;  // one per pointer slot of `type` (or empty: all null)
};

/// The first illegal placement of a batch, and why.
struct PlacementError {
  std::size_t index = 0;  // position in the batch
  ObservedAllocation placement;
  std::string reason;
  [[nodiscard]] std::string to_string() const;
};

class HeapModel;

/// Called after every pass of HeapModel::defrag with the model in its state after that pass
/// (sources free, targets' states updated with the config's n) and the pass's statistics: the
/// per-pass observation point of the exact GPU differential (docs/compaction.md). Pointers are
/// not rewritten yet (one rewrite per call, after the last pass): the model's snapshot() and
/// root_locations() show every pointer and root at its object's location at the call's start.
using PassObserver = std::function<void(HeapModel const&, DefragPassStats const&)>;

/// A defragmentation request (CompactGpu sec. 3): the GPU compactor's options
/// (core/defrag_limits.hpp); the model derives the same cap on sources per pass.
using core::DefragOptions;

/// What the body of a parallel_do may do for the object it is bound to (DynaSOAr sec. 2.1).
class ParallelDoContext {
 public:
  [[nodiscard]] ObjectId self() const { return self_; }
  [[nodiscard]] TypeId self_type() const;
  /// A new object; never visited by this parallel_do. nullopt when out of memory.
  std::optional<Location> allocate(TypeId type, ObjectId id);
  /// self.slot := target (self must not have deleted itself).
  void set_ref(std::uint32_t slot, std::optional<ObjectId> target);
  /// `this` deletes itself. Nothing may refer to it any more (null the references first).
  void delete_self();
  /// Deletes an object the parallel_do does not iterate (its type is not a subtype of the
  /// iterated type); deleting any other object of the iterated types is an error.
  void delete_object(ObjectId other);
  [[nodiscard]] bool deleted_self() const { return deleted_self_; }

 private:
  friend class HeapModel;
  ParallelDoContext(HeapModel& model, TypeId iterated, ObjectId self)
      : model_(model), iterated_(iterated), self_(self) {}
  HeapModel& model_;
  TypeId iterated_;
  ObjectId self_;
  bool deleted_self_ = false;
};

class HeapModel {
 public:
  /// Throws core::precondition_error if the config is invalid (HeapConfig::validate).
  explicit HeapModel(core::HeapConfig config);

  /// The heap a snapshot with payloads describes (e.g. a GPU heap's, to predict what the GPU
  /// does next from exactly its state): its config, every live object with its id, cookie,
  /// location and pointer targets, and `roots` (locations of the objects external roots refer
  /// to; nullopt for a null root). Block states follow from the fills as after every model
  /// operation. Throws core::precondition_error naming the problem if the snapshot has no
  /// payloads, violates the invariant catalog (check::check_all), or a root names an empty slot.
  static HeapModel from_snapshot(check::HeapSnapshot const& snapshot,
                                 std::vector<std::optional<Location>> const& roots = {});

  [[nodiscard]] core::HeapConfig const& config() const { return config_; }

  // ------------------------------------------------------------------------------- queries
  [[nodiscard]] bool is_live(ObjectId id) const { return objects_.count(id) != 0; }
  /// Throws core::precondition_error for an id that is not live.
  [[nodiscard]] Object const& object(ObjectId id) const;
  [[nodiscard]] std::map<ObjectId, Object> const& objects() const { return objects_; }
  [[nodiscard]] std::size_t num_live() const { return objects_.size(); }
  /// Live ids whose type is `type` or a subtype of it, ascending.
  [[nodiscard]] std::vector<ObjectId> live_ids_of(TypeId type) const;
  [[nodiscard]] Block const& block(std::uint32_t b) const { return blocks_.at(b); }
  [[nodiscard]] std::uint32_t num_blocks() const { return config_.num_blocks; }
  /// Objects in block b.
  [[nodiscard]] std::uint32_t fill(std::uint32_t b) const;
  /// Capacity of block b's type (0 for a free block).
  [[nodiscard]] std::uint32_t block_capacity(std::uint32_t b) const;
  [[nodiscard]] std::size_t blocks_in_use() const { return config_.num_blocks - free_.size(); }

  // The block state sets (CompactGpu sec. 2.2, Fig. 3), maintained exactly as the allocator's
  // bitmaps are at quiescence.
  [[nodiscard]] std::set<std::uint32_t> const& free_blocks() const { return free_; }
  [[nodiscard]] std::set<std::uint32_t> const& allocated(TypeId t) const {
    return allocated_.at(t);
  }
  [[nodiscard]] std::set<std::uint32_t> const& active(TypeId t) const { return active_.at(t); }
  [[nodiscard]] std::set<std::uint32_t> const& defrag_candidates(TypeId t) const {
    return defrag_.at(t);
  }

  /// F of CompactGpu sec. 2.2: the average fraction of free slots over allocated blocks (of
  /// type t, or of every type); 0 when no block is allocated.
  [[nodiscard]] double fragmentation(TypeId t) const;
  [[nodiscard]] double fragmentation() const;

  /// Allocated blocks of exactly t whose fill is <= n/(n+1) (core::is_defrag_fill), ascending:
  /// the defragmentation candidates for factor n (CompactGpu sec. 3).
  [[nodiscard]] std::vector<std::uint32_t> candidates(TypeId t, std::uint32_t n) const;

  // ---------------------------------------------------------------------------- allocation
  /// Deterministic placement: the lowest-index active[T] block, else the lowest free block
  /// (which becomes allocated[T]); the lowest free slot in it. Every pointer starts null.
  /// nullopt (no object) when out of memory. `id` must not be live.
  std::optional<Location> allocate(TypeId type, ObjectId id);
  /// allocate(type, next_unused_id()).
  std::optional<ObjectId> allocate(TypeId type);
  /// 1 + the largest id ever used in this model (1 for a new model).
  [[nodiscard]] ObjectId next_unused_id() const { return next_unused_id_; }

  /// Refinement of the GPU's nondeterministic allocation: checks, in order, that each placement
  /// is one the allocator may make: the type is concrete; the id is new (not live, not earlier
  /// in the batch); block < M; slot < capacity(type); the block is free or allocated for exactly
  /// this type; the slot is free; the pointers have the right count, refer to objects live after
  /// the batch and respect the slots' pointee types. Either every placement is legal and all are
  /// applied, or nothing is applied and the first illegal one is returned.
  [[nodiscard]] std::optional<PlacementError> accept_allocations(
      std::vector<ObservedAllocation> const& observed);

  // ------------------------------------------------------------------------------ pointers
  /// Pointer slot `slot` of object `from` := `to` (null, or a live object whose type is a
  /// subtype of the slot's pointee).
  void set_ref(ObjectId from, std::uint32_t slot, std::optional<ObjectId> to);
  /// Number of pointer slots and roots that refer to id.
  [[nodiscard]] std::uint32_t incoming_refs(ObjectId id) const;
  /// Sets every pointer slot and root that refers to one of `ids` to null.
  void null_references_to(std::set<ObjectId> const& ids);

  // --------------------------------------------------------------------------------- roots
  /// External roots: id references held outside the heap (the GPU registers root arrays).
  /// Defragmentation keeps them pointing at their objects, as it does pointer fields.
  std::size_t add_root(std::optional<ObjectId> target);
  void set_root(std::size_t index, std::optional<ObjectId> target);
  [[nodiscard]] std::vector<std::optional<ObjectId>> const& roots() const { return roots_; }
  /// The roots as locations (what a GPU root array must hold after any step). During a
  /// defragmentation call (in its PassObserver), the locations the objects had when the call
  /// began: roots are rewritten once, after the last pass.
  [[nodiscard]] std::vector<std::optional<Location>> root_locations() const;

  // ---------------------------------------------------------------------------------- free
  /// Deletes a live object that nothing refers to any more. The block's state follows its new
  /// fill exactly as the allocator's does at quiescence: free when empty, active when not full,
  /// defrag candidate by fill (DynaSOAr sec. 3.4, CompactGpu sec. 3).
  void free(ObjectId id);

  // --------------------------------------------------------------------------- parallel_do
  /// parallel_do<T> (DynaSOAr sec. 2.1): runs body once for every object whose type is a
  /// subtype of T and that is live at launch, in ascending id order (one legal interleaving of
  /// the GPU's parallel execution). Objects created during it are not visited; the body may
  /// delete its own object and objects of types outside the iterated ones, nothing else.
  void parallel_do(TypeId type, std::function<void(ParallelDoContext&)> const& body);
  /// The ids a parallel_do<T> launched now would visit, ascending.
  [[nodiscard]] std::vector<ObjectId> iteration_set(TypeId type) const { return live_ids_of(type); }

  // -------------------------------------------------------------------------------- defrag
  /// CompactGpu sec. 3: the plan of one pass over candidates computed with factor n (without
  /// changing the heap), using at most `source_cap` sources (core/defrag_limits.hpp). Empty
  /// (B = 0) when fewer than n + 1 candidates exist.
  /// `order` is R's order (core::CandidateOrder: the paper's by block id unless asked).
  [[nodiscard]] DefragPassPlan plan_defrag_pass(
      TypeId type,
      std::uint32_t n,
      std::uint32_t source_cap = core::kUnlimitedSources,
      CandidateOrder order     = CandidateOrder::block_id) const;
  /// Defragments type T with factor n (default: config n) until at most k1 (default: config
  /// k1) candidates remain or a pass cannot make progress (B = 0). See docs/model.md for the
  /// n-override rule: candidates of this call use n; afterwards the defrag sets follow config n.
  DefragResult defrag(TypeId type,
                      std::optional<std::uint32_t> n  = std::nullopt,
                      std::optional<std::uint32_t> k1 = std::nullopt);
  /// The same for a full request (n, k1, the variant and a forced cap, which set the cap on
  /// sources per pass as on the GPU: core::effective_source_cap) and a per-pass observer, which
  /// sees pointers and roots not yet rewritten (the call rewrites them once, after its last pass).
  /// Every pass's R is in options.order (core::CandidateOrder), as on the GPU.
  DefragResult defrag(TypeId type, DefragOptions const& options, PassObserver const& on_pass = {});

  // ------------------------------------------------------------------------------ snapshot
  /// The heap as a HeapSnapshot with payloads (producer "model"): free blocks have type kNoType
  /// and an all-ones allocation bitmap; allocated blocks have the bits of their objects and the
  /// bits at or above the capacity set; every state bitmap has all hierarchy levels; pointer
  /// targets are the (block, slot) of the target's current location, except during a
  /// defragmentation call (in its PassObserver): then the location the target had when the call
  /// began, since pointers are rewritten once, after the last pass. The model does not track
  /// iteration bitmaps between kernels; it reports iter_bitmap == alloc_bitmap (the value the
  /// next parallel_do copies, DynaSOAr sec. 3.1).
  [[nodiscard]] check::HeapSnapshot snapshot() const;

 private:
  friend class ParallelDoContext;

  void place(ObjectId id, TypeId type, Location where, std::vector<std::optional<ObjectId>> refs);
  void remove(ObjectId id);
  void move(ObjectId id, Location to);
  /// Recomputes block b's membership in every state set from its fill (quiescent semantics).
  void update_block_state(std::uint32_t b);
  void add_incoming(std::optional<ObjectId> target);
  void drop_incoming(std::optional<ObjectId> target);
  void require_live(ObjectId id, char const* what) const;
  void require_not_in_parallel_do(char const* what) const;
  void apply_defrag_pass(DefragPassPlan const& plan,
                         DefragPassStats& stats,
                         std::map<ObjectId, std::uint32_t>& relocations,
                         std::vector<std::uint64_t>& relocations_by_ordinal);
  /// The passes of defrag(), with the pointer view of the call (call_start_locations_) set.
  void run_defrag_passes(TypeId type,
                         std::uint32_t n,
                         std::uint32_t k1,
                         DefragResult& result,
                         PassObserver const& on_pass,
                         CandidateOrder order);
  /// The one pointer rewrite of a call, after its last pass: fills result's pointer counts.
  void count_call_rewrites(TypeId type, DefragResult& result) const;
  /// Where a pointer or root that refers to `id` points: the object's location, or during a
  /// defragmentation call the location it had when the call began (call_start_locations_).
  [[nodiscard]] Location referent_location(ObjectId id) const;

  core::HeapConfig config_;
  std::vector<Block> blocks_;
  std::map<ObjectId, Object> objects_;
  std::set<std::uint32_t> free_;
  std::vector<std::set<std::uint32_t>> allocated_, active_, defrag_;  // per type id
  /// The same four sets as level-0 bitmap words (bit b of word b / 64), kept in step with them
  /// by update_block_state (their only writer after construction): snapshot() copies words
  /// instead of walking the sets (a heap of 2^16 blocks has up to 2^16 free blocks).
  std::vector<std::uint64_t> free_words_;
  std::vector<std::vector<std::uint64_t>> allocated_words_, active_words_, defrag_words_;
  std::vector<std::optional<ObjectId>> roots_;
  std::map<ObjectId, std::uint32_t> incoming_;  // slots and roots referring to each id (> 0)
  ObjectId next_unused_id_ = 1;
  std::optional<TypeId> running_parallel_do_;
  /// Only while defrag() runs: the location each object of the defragmented type had when the
  /// call began (only those objects move), where pointers to it still point until the call's one
  /// rewrite after its last pass. Empty otherwise.
  std::map<ObjectId, Location> call_start_locations_;
};

}  // namespace heaplab::model
