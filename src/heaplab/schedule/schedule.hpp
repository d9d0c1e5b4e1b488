// Schedules: a heap configuration plus a list of steps that every heaplab implementation (the
// sequential model, the GPU allocator, the portable core on CPU threads) can run
// (docs/schedules.md).
//
// A schedule speaks only of object *ids*, never of addresses: which objects are created, which are
// freed, which pointer slot refers to which object. Ids are assigned by the interpreter from a
// running counter in a documented order (docs/schedules.md "Object ids"), so every implementation
// agrees on the id graph; where an object is placed is the only freedom an implementation has.
//
// Type indices below refer to config.types; pointer slots are indices into
// config.pointer_slots(type) (inherited slots first, arrays expanded element by element).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/core/heap_config.hpp"

namespace heaplab::schedule {

inline constexpr char const* kFormatName      = "heaplab-schedule";
inline constexpr std::uint32_t kFormatVersion = 1;

/// Threads per warp: divergence patterns are defined per lane (thread index % kWarpSize).
inline constexpr std::uint32_t kWarpSize = 32;
/// Limits of the file format, so that a malformed or hostile file cannot exhaust memory.
inline constexpr std::uint32_t kMaxThreads      = 1u << 20;
inline constexpr std::uint32_t kMaxPerThread    = 64;
inline constexpr std::uint32_t kMaxLaneCount    = 63;  // per_lane_counts entries: 0..63
inline constexpr std::uint32_t kMaxBlocks       = 1u << 16;
inline constexpr std::uint32_t kMaxTypeSize     = 1u << 20;
inline constexpr std::uint32_t kMaxPointerArray = 64;
inline constexpr std::uint32_t kMaxStepsInFile  = 1u << 20;
/// Work budget (docs/schedules.md "Limits"), so that a short valid file cannot ask for minutes of
/// work and gigabytes on the model (issue 36, finding 4: one wave of 2^20 threads x 64 took 59 s
/// and 7.7 GB): the requests of one alloc wave (wave_requests), and the work of the whole
/// schedule (schedule_work). The generators stay within both (largest seen: a wave of 3 x 2^20,
/// a schedule of 1.4 x 10^8 for the profile "large" on 2^16 blocks).
inline constexpr std::uint64_t kMaxWaveRequests = std::uint64_t{1} << 22;
inline constexpr std::uint64_t kMaxScheduleWork = std::uint64_t{1} << 28;

// ---------------------------------------------------------------------------------- alloc wave

enum class Divergence {
  all,              // every thread allocates `count` objects of `type`
  alternate,        // threads on even lanes allocate `count`, odd lanes allocate nothing
  random_mask,      // lane l of warp w allocates `count` iff bit l of mix(seed, w) is set
  per_lane_counts,  // lane l allocates lane_counts[l] objects of `type` (32 entries, 0..63)
  mixed_types,      // lane l allocates `count` objects of lane_types[l % lane_types.size()]
};

/// For each new object of `type`, pointer slot `slot` is set to an object chosen by id among the
/// objects live before the step whose type is a subtype of the slot's pointee (docs/schedules.md).
struct LinkRule {
  std::uint32_t type   = 0;  // applies to new objects of exactly this type
  std::uint32_t slot   = 0;  // index into config.pointer_slots(type)
  std::uint64_t seed   = 0;
  double null_fraction = 0;  // probability that the slot stays null
  friend bool operator==(LinkRule const& a, LinkRule const& b) {
    return a.type == b.type && a.slot == b.slot && a.seed == b.seed &&
           a.null_fraction == b.null_fraction;
  }
};

struct AllocWave {
  std::optional<std::uint32_t> type;  // absent exactly for mixed_types
  std::uint32_t threads = 1;
  std::optional<std::uint32_t> count;  // per thread; absent exactly for per_lane_counts
  Divergence divergence   = Divergence::all;
  std::uint64_t mask_seed = 0;             // random_mask only
  std::vector<std::uint32_t> lane_counts;  // per_lane_counts only: kWarpSize entries
  std::vector<std::uint32_t> lane_types;   // mixed_types only: at least one type
  std::vector<LinkRule> links;
  bool roots = false;  // append every new object (null if its allocation failed) to the roots
  friend bool operator==(AllocWave const& a, AllocWave const& b) {
    return a.type == b.type && a.threads == b.threads && a.count == b.count &&
           a.divergence == b.divergence && a.mask_seed == b.mask_seed &&
           a.lane_counts == b.lane_counts && a.lane_types == b.lane_types && a.links == b.links &&
           a.roots == b.roots;
  }
};

/// The most allocation requests `wave` can make: threads x the largest count one thread asks
/// for (its count, or the largest entry of per_lane_counts). Divergence only lowers it.
std::uint64_t wave_requests(AllocWave const& wave);

// ----------------------------------------------------------------------------------- free wave

enum class SelectPattern {
  all,        // every candidate
  fraction,   // candidate id selected iff unit(seed, id) < fraction
  every_kth,  // the i-th candidate in ascending id order, iff i % k == offset
};

struct Selector {
  std::optional<std::uint32_t> type;  // candidates: live objects whose type is a subtype of this
  SelectPattern pattern = SelectPattern::all;
  double fraction       = 0;  // fraction only
  std::uint64_t seed    = 0;  // fraction only
  std::uint32_t k       = 1;  // every_kth only (>= 1)
  std::uint32_t offset  = 0;  // every_kth only (< k)
  friend bool operator==(Selector const& a, Selector const& b) {
    return a.type == b.type && a.pattern == b.pattern && a.fraction == b.fraction &&
           a.seed == b.seed && a.k == b.k && a.offset == b.offset;
  }
};

struct FreeWave {
  Selector select;
  friend bool operator==(FreeWave const& a, FreeWave const& b) { return a.select == b.select; }
};

// --------------------------------------------------------------------------------- parallel_do

enum class Action {
  allocate_child,     // parent.slot[parent_slot] = new child_type (null if out of memory)
  delete_self,        // the object deletes itself
  delete_other_type,  // deleter i deletes victim i (both in ascending id order)
  relink,             // self.slot[slot] = an object chosen by id among those live at launch
};

struct ParallelDo {
  std::uint32_t type = 0;  // visits live objects whose type is a subtype of this, at launch
  Action action      = Action::delete_self;
  /// Which visited objects act: those with unit(seed, id) < fraction (every kind of action).
  double fraction    = 1;
  std::uint64_t seed = 0;
  // allocate_child
  std::uint32_t child_type  = 0;
  std::uint32_t parent_slot = 0;            // index into pointer_slots(type)
  std::optional<std::uint32_t> child_slot;  // index into pointer_slots(child_type): -> parent
  // delete_other_type
  std::uint32_t victim_type = 0;  // must not be a subtype of `type`
  // relink
  std::uint32_t slot   = 0;  // index into pointer_slots(type)
  double null_fraction = 0;
  friend bool operator==(ParallelDo const& a, ParallelDo const& b) {
    return a.type == b.type && a.action == b.action && a.fraction == b.fraction &&
           a.seed == b.seed && a.child_type == b.child_type && a.parent_slot == b.parent_slot &&
           a.child_slot == b.child_slot && a.victim_type == b.victim_type && a.slot == b.slot &&
           a.null_fraction == b.null_fraction;
  }
};

// -------------------------------------------------------------------------------------- defrag

/// A defragmentation of one type. `variant`: CompactGpu sec. 3.3 (forwarding pointers) or sec. 3.8
/// (the two recompute alternatives); the resulting heap is the same for all three, only the
/// GPU's mechanism differs. Schedule files name the variants forwarding, recompute_global,
/// recompute_shared (variant_name). `order`: every pass's candidate order (core::CandidateOrder:
/// CompactGpu sec. 3.2's by block id, or heaplab's by fill); files name it "block-id" or "fill"
/// and may leave it out (block-id).

struct Defrag {
  std::uint32_t type = 0;
  std::optional<std::uint32_t> n;   // default: config.defrag_factor
  std::optional<std::uint32_t> k1;  // default: config.k1
  core::RewriteVariant variant = core::RewriteVariant::forwarding;
  core::CandidateOrder order   = core::CandidateOrder::block_id;
  friend bool operator==(Defrag const& a, Defrag const& b) {
    return a.type == b.type && a.n == b.n && a.k1 == b.k1 && a.variant == b.variant &&
           a.order == b.order;
  }
};

/// A defrag step as the request of one CompactGpu call (the GPU compactor and the model take the
/// same request): its n, k1, variant and candidate order; unset n and k1 mean the config's. The
/// variant sets the cap on sources per pass (core::effective_source_cap, core/defrag_limits.hpp),
/// so that the model mirrors the GPU variant pass by pass (docs/compaction.md "Variants and their
/// caps"). The caps bind only when a pass could use more sources than the variant's records allow
/// (more than 4096 / (n + 1) sources for Recompute-Shared, 12288 for Recompute-Global).
inline core::DefragOptions defrag_options(Defrag const& step) {
  core::DefragOptions options;
  options.n       = step.n;
  options.k1      = step.k1;
  options.variant = step.variant;  // sets the cap on sources per pass, as on the GPU
  options.order   = step.order;
  return options;
}

// --------------------------------------------------------------------------------------- check

/// Runs the invariant catalog (every interpreter also does so after every step) and, when given,
/// compares digests (docs/schedules.md "Digests").
struct Check {
  std::optional<std::uint64_t> graph_digest;     // of the id graph: placement-independent
  std::optional<std::uint64_t> snapshot_digest;  // of the whole snapshot: model placement only
  friend bool operator==(Check const& a, Check const& b) {
    return a.graph_digest == b.graph_digest && a.snapshot_digest == b.snapshot_digest;
  }
};

using Step = std::variant<AllocWave, FreeWave, ParallelDo, Defrag, Check>;

struct Schedule {
  core::HeapConfig config;
  std::vector<Step> steps;
  std::string description;  // free text; optional in the file
};

// -------------------------------------------------------------------------------------- errors

/// A malformed or invalid schedule. `path()` names the offending field ("steps[3].action.slot",
/// "config.types[1].size"; empty for the document as a whole); line and column are known for
/// errors found in JSON text (1-based; 0 when unknown); source is the file name when read from a
/// file. what() reads "FILE:LINE:COLUMN: PATH: REASON", leaving out what is unknown.
class schedule_error : public core::precondition_error {
 public:
  schedule_error(std::string path,
                 std::string reason,
                 std::size_t line   = 0,
                 std::size_t column = 0,
                 std::string source = {});
  [[nodiscard]] std::string const& path() const { return path_; }
  [[nodiscard]] std::string const& reason() const { return reason_; }
  [[nodiscard]] std::size_t line() const { return line_; }
  [[nodiscard]] std::size_t column() const { return column_; }
  [[nodiscard]] std::string const& source() const { return source_; }

 private:
  std::string path_;
  std::string reason_;
  std::size_t line_   = 0;
  std::size_t column_ = 0;
  std::string source_;
};

// ------------------------------------------------------------------------------------- helpers

char const* to_string(Divergence d);
char const* to_string(SelectPattern p);
char const* to_string(Action a);
/// The schedule format's name of a rewriting variant: forwarding, recompute_global,
/// recompute_shared.
char const* variant_name(core::RewriteVariant v);
std::optional<Divergence> divergence_from_string(std::string const& s);
std::optional<SelectPattern> select_pattern_from_string(std::string const& s);
std::optional<Action> action_from_string(std::string const& s);
std::optional<core::RewriteVariant> rewrite_variant_from_string(std::string const& s);

/// "alloc", "free", "parallel_do", "defrag", "check".
char const* step_name(Step const& step);

/// One line describing a step, with type and slot names resolved through the config.
std::string describe(core::HeapConfig const& config, Step const& step);

/// "Cell.agent[0]" for pointer slot `slot` of type t (declaring type, field, element).
std::string slot_name(core::HeapConfig const& config, std::uint32_t t, std::uint32_t slot);

/// Field-wise equality of two configurations (HeapConfig has no operator==).
bool same_config(core::HeapConfig const& a, core::HeapConfig const& b);

bool operator==(Schedule const& a, Schedule const& b);
inline bool operator!=(Schedule const& a, Schedule const& b) { return !(a == b); }

/// Checks everything about a schedule that does not depend on the heap's contents: the config
/// (HeapConfig::validate), type and slot indices, type compatibility of links, ranges and the
/// pattern-specific fields. Throws schedule_error naming the step and field
/// ("steps[3].action.parent_slot: ..."). The JSON reader calls it; so should code that builds
/// schedules by hand. It also holds the work budget: every wave at most kMaxWaveRequests
/// requests, the schedule at most kMaxScheduleWork (schedule_work).
void validate(Schedule const& schedule);

/// An upper bound on the objects the model touches running `schedule`, known before it runs: an
/// alloc wave counts its requests (wave_requests); every other step counts the most objects that
/// can be live before it (allocations so far, at most the heap's capacity M x the largest block
/// capacity; a parallel_do allocate_child can double it).
std::uint64_t schedule_work(Schedule const& schedule);

}  // namespace heaplab::schedule
