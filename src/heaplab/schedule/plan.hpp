// Planning a step at the level of object ids (docs/schedules.md "Step semantics").
//
// plan_step() turns one schedule step and the current id graph (live objects by id, their types
// and pointer targets by id, the external roots) into a StepPlan: the ids to create, with their
// types and initial pointers; the ids to delete; the pointer writes. It decides everything a step
// decides except *where* new objects are placed, which is the one thing left to the
// implementation (the model places deterministically, the GPU nondeterministically). Both the
// model interpreter and the host side of the GPU interpreter execute the same plan, so they agree
// on the id graph by construction.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/core/heap_config.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace heaplab::schedule {

using ObjectId = std::uint64_t;

/// The first id a schedule assigns; 0 is never an object id.
inline constexpr ObjectId kFirstObjectId = 1;

/// A live object as a schedule sees it: its type and one target per config.pointer_slots(type).
struct GraphObject {
  std::uint32_t type = 0;
  std::vector<std::optional<ObjectId>> refs;
  friend bool operator==(GraphObject const& a, GraphObject const& b) {
    return a.type == b.type && a.refs == b.refs;
  }
};

/// The heap as a graph of ids: what every implementation must agree on.
struct IdGraph {
  std::map<ObjectId, GraphObject> objects;     // live objects, ascending id
  std::vector<std::optional<ObjectId>> roots;  // external roots (null: cleared or failed)
  friend bool operator==(IdGraph const& a, IdGraph const& b) {
    return a.objects == b.objects && a.roots == b.roots;
  }
};

/// An object the step creates. Its id is fixed by the plan; its placement is not.
struct NewObject {
  ObjectId id        = 0;
  std::uint32_t type = 0;
  std::vector<std::optional<ObjectId>> refs;  // initial pointers (to objects live before the step)
  std::uint32_t thread = 0;                   // alloc wave: the allocating thread's global index
  std::optional<ObjectId> parent;             // allocate_child: the visited object that creates it
  bool root = false;                          // append to the roots (null if allocation fails)
};

/// pointer slot `slot` of object `object` := target.
struct SlotWrite {
  ObjectId object    = 0;
  std::uint32_t slot = 0;
  std::optional<ObjectId> target;
};

/// What one visited object of a parallel_do does (at most one of child/victim/relink is set).
struct Visit {
  ObjectId self = 0;
  bool acts     = false;
  std::optional<std::size_t> child;  // index into StepPlan::allocations; parent_slot := child
  bool delete_self = false;
  std::optional<ObjectId> victim;                    // delete_other_type
  std::optional<std::optional<ObjectId>> relink_to;  // relink: slot := this (maybe null)
};

struct StepPlan {
  /// Phase 1: every pointer slot and root that refers to an object this step deletes is set to
  /// null before anything else happens, so that no dangling pointer ever exists.
  std::vector<SlotWrite> null_refs;
  std::vector<std::size_t> null_roots;
  /// Every object this step deletes, ascending (free wave; parallel_do delete actions).
  std::vector<ObjectId> deletes;
  /// Every object this step creates, in id order (= allocation order of the model).
  std::vector<NewObject> allocations;
  /// parallel_do only: the object set fixed at launch, ascending id, with each one's action.
  std::vector<Visit> visits;
  /// parallel_do allocate_child: the parent's slot that receives the child.
  std::uint32_t parent_slot = 0;
  /// parallel_do relink: the slot rewritten.
  std::uint32_t relink_slot = 0;
  ObjectId next_id          = kFirstObjectId;  // the id counter after this step
};

/// Plans `step` on `graph`; ids of new objects start at `next_id`. The step must be valid for
/// `config` (schedule::validate); defrag and check steps give an empty plan.
StepPlan plan_step(core::HeapConfig const& config,
                   IdGraph const& graph,
                   Step const& step,
                   ObjectId next_id);

/// Whether plan_step(config, graph, step, ...) reads `graph`: free waves and parallel_dos do, and
/// alloc waves with link rules (their targets are live objects). The others' plans (alloc waves
/// without links, defrag, check) are the same on any graph, so a caller may pass an empty one
/// and skip building it (the differential runner copies the model's whole graph otherwise).
bool plan_reads_graph(Step const& step);

/// (type, count) that global thread `thread` of an alloc wave allocates.
struct LaneWork {
  std::uint32_t type  = 0;
  std::uint32_t count = 0;
};
LaneWork lane_work(AllocWave const& wave, std::uint32_t thread);

/// A 64-bit digest of the id graph (ids, types, pointer targets by id, roots) that does not
/// depend on placement: equal for the model and a GPU that ran the same schedule correctly.
std::uint64_t graph_digest(IdGraph const& graph);

/// "0x0123456789abcdef" and back (nullopt for anything else).
std::string format_digest(std::uint64_t digest);
std::optional<std::uint64_t> parse_digest(std::string const& text);

}  // namespace heaplab::schedule
