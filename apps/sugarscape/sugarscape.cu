// `heaplab_apps sugarscape` (sugarscape.hpp; docs/apps.md "sugarscape"): the variants measured in
// one process, each checked against the CPU reference (reference.hpp):
//
//   heap:      Male and Female (subclasses of the abstract Agent) are soa::Heap objects; the cells
//              are dense arrays of sugar and capacity plus an Agent* per cell (the compactor's
//              root array). Deaths: heap.destroy of itself in parallel_do<Agent>; births:
//              heap.make in parallel_do<Female> (another type, DynaSOAr sec. 2.1).
//   baseline:  the static SOA baseline (DynaSOAr sec. 6, category 3): the agents' fields merged
//              into per-cell arrays (dense.hpp), one kernel per phase, one thread per cell.
//   <allocator> (--allocators; DynaSOAr Fig. 10): the heap variant's code (the same classes, cells
//              and do-alls, step_phases) on AnyHeap (common/any_heap.cuh): Male and Female objects
//              from that allocator's malloc, AOS, with the standalone do-all, whose enumeration
//              time is reported apart. Its final world is compared with the heap variant's.
//
// One iteration is rules.hpp's nine phases. The heap variant runs them as
//   live      a kernel over the cells (regrow sugar, clear the minima) and parallel_do<Agent>
//             (age, burn metabolism, die: the cell's pointer cleared, the object destroyed);
//   move      parallel_do<Agent> decide (relaxed atomicMin of its key on the target's request),
//             then parallel_do<Agent> move (the winner writes the target's pointer and clears its
//             old one: phases 3 and 4 at once, since an object moves instead of being copied);
//   harvest   parallel_do<Agent>;
//   mate      parallel_do<Male> propose, parallel_do<Female> choose, parallel_do<Female> birth
//             (the mother makes the child, writes the child cell's pointer and takes kMateCost
//             from herself and from the father: phases 8 and 9 at once).
// Within a phase every object writes only its own fields, its own cell's pointer, or a pointer or
// father that one winner owns (the minimum of the keys decides; relaxed atomicMin, whose result
// does not depend on order); reads of other cells and objects see only what no thread of the phase
// writes. Phases are separate kernels on one stream: a kernel boundary orders every write of a
// phase before the next reads it (linearization point of an iteration: the end of its birth
// kernel). Hence the heap variant computes exactly the reference's world (same rules.hpp code).
// AnyHeap's do-alls have the same semantics (the objects that exist at the call; a method may
// destroy itself and make any type) and are kernels on one stream too, so the argument and the
// result are the same on every allocator.
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/allocators.cuh"
#include "common/allocators.hpp"
#include "common/any_heap.cuh"
#include "common/defrag_loop.cuh"
#include "common/grid.cuh"
#include "common/heap_check.cuh"
#include "common/memory_budget.hpp"
#include "common/no_device.hpp"
#include "common/phase_clock.cuh"
#include "common/result_line.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/device_info.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "reference.hpp"
#include "sugarscape.hpp"

namespace heaplab::apps::sugarscape {

struct Types;
struct Board;

/// An agent (DynaSOAr Table 1: the abstract Agent with the concrete Male and Female).
class Agent {
 public:
  HEAPLAB_SOA_ABSTRACT(Agent);
  HEAPLAB_SOA_FIELDS(Agent,
                     (std::uint32_t, cell_),
                     (std::uint32_t, sugar_),
                     (std::uint32_t, age_),
                     (std::uint32_t, max_age_),
                     (std::uint32_t, metabolism_),
                     (std::uint32_t, vision_),
                     (std::uint32_t, target_));  // this iteration's choice, or kNone

  HEAPLAB_HD Agent(std::uint32_t cell, Traits const& t)
      : cell_(cell),
        sugar_(t.sugar),
        age_(t.age),
        max_age_(t.max_age),
        metabolism_(t.metabolism),
        vision_(t.vision),
        target_(std::uint32_t{kNone}) {}

  __device__ Traits traits();
  /// Ref: soa::HeapRef<Types>, or AnyHeapRef<Types, Allocator> on another allocator.
  template <class Ref>
  __device__ void live(Ref heap, Board b);
  __device__ void decide(Board b);
  __device__ void move(Board b);
  __device__ void harvest(Board b);
  __device__ void export_view(ExportSink<AgentView> out);
  __device__ void census(unsigned long long* counts);
};

class Male : public Agent {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Male, Agent);
  HEAPLAB_HD Male(std::uint32_t cell, Traits const& t) : Agent(cell, t) {}
  __device__ void propose(Board b);
};

class Female : public Agent {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Female, Agent);
  HEAPLAB_HD Female(std::uint32_t cell, Traits const& t) : Agent(cell, t) {}
  __device__ void choose(Board b);
  template <class Ref>
  __device__ void give_birth(Ref heap, Board b);
};

struct Types : soa::HeapTypes<Agent, Male, Female> {};

namespace {
__device__ std::uint8_t kind_of(Agent const* a) {
  if (a == nullptr) return kEmpty;
  auto const t = core::pointer_type(reinterpret_cast<std::uint64_t>(a));
  if (t == Types::type_id<Male>) return kMale;
  if (t == Types::type_id<Female>) return kFemale;
  return 0xFF;  // no object of this heap: the checker reports it
}
}  // namespace

/// The device view of the heap variant's cells (trivially copyable, passed by value).
struct Board {
  Params p;
  std::uint32_t it                  = 0;
  Agent** cells                     = nullptr;  // W * H; nullptr: no agent
  std::uint32_t* sugar              = nullptr;
  std::uint32_t const* capacity     = nullptr;
  std::uint64_t* requests           = nullptr;  // the phases' minima (dense.hpp)
  std::uint64_t* proposals          = nullptr;
  std::uint64_t* births             = nullptr;
  unsigned long long* failed_allocs = nullptr;

  [[nodiscard]] __device__ bool empty(std::uint32_t j) const { return cells[j] == nullptr; }
  [[nodiscard]] __device__ Traits traits_at(std::uint32_t j) const {
    Agent* const a = cells[j];
    return a == nullptr ? Traits{} : a->traits();
  }
};

__device__ Traits Agent::traits() {
  Traits t;
  t.kind       = kind_of(this);
  t.sugar      = sugar_;
  t.age        = age_;
  t.max_age    = max_age_;
  t.metabolism = metabolism_;
  t.vision     = vision_;
  return t;
}

template <class Ref>
__device__ void Agent::live(Ref heap, Board b) {
  Traits t = traits();
  target_  = kNone;
  if (!live_agent(t)) {
    b.cells[cell_] = nullptr;  // only this agent writes its cell in this phase
    heap.destroy(this);
    return;
  }
  age_   = t.age;
  sugar_ = t.sugar;
}

__device__ void Agent::decide(Board b) {
  std::uint32_t const c = cell_;
  std::uint32_t const t = choose_move(
      b.p,
      b.it,
      c,
      vision_,
      [&](std::uint32_t j) { return b.empty(j); },
      [&](std::uint32_t j) { return b.sugar[j]; });
  target_ = t;
  if (t != kNone) min_into(&b.requests[t], key(b.p, b.it, c, kMovePriority));
}

__device__ void Agent::move(Board b) {
  std::uint32_t const c = cell_;
  std::uint32_t const t = target_;
  if (t == kNone || b.requests[t] != key(b.p, b.it, c, kMovePriority)) return;
  b.cells[t] = this;  // the one winner of t writes it; nobody asked for c (it was occupied)
  b.cells[c] = nullptr;
  cell_      = t;
}

__device__ void Agent::harvest(Board b) {
  std::uint32_t const c = cell_;
  sugar_                = sugar_ + b.sugar[c];
  b.sugar[c]            = 0;
  target_               = kNone;
}

__device__ void Male::propose(Board b) {
  if (!fertile(traits())) return;
  std::uint32_t const c = cell_;
  std::uint32_t const f =
      choose_partner(b.p, b.it, c, [&](std::uint32_t j) { return b.traits_at(j); });
  target_ = f;
  if (f != kNone) min_into(&b.proposals[f], key(b.p, b.it, c, kProposePriority));
}

__device__ void Female::choose(Board b) {
  std::uint32_t const c = cell_;
  if (b.proposals[c] == kNoKey || !fertile(traits())) return;
  std::uint32_t const e =
      choose_child_cell(b.p, b.it, c, [&](std::uint32_t j) { return b.empty(j); });
  target_ = e;
  if (e != kNone) min_into(&b.births[e], key(b.p, b.it, c, kBirthPriority));
}

template <class Ref>
__device__ void Female::give_birth(Ref heap, Board b) {
  std::uint32_t const c = cell_;
  std::uint32_t const e = target_;
  if (e == kNone || b.births[e] != key(b.p, b.it, c, kBirthPriority)) return;
  // The father won this mother's proposal; he proposed to her alone, so only this thread
  // touches him in this phase.
  Agent* const father = b.cells[key_cell(b.proposals[c])];
  Traits const t      = child(b.p, b.it, e, traits(), father->traits());
  Agent* a            = nullptr;
  if (t.kind == kMale)
    a = heap.template make<Male>(e, t);
  else
    a = heap.template make<Female>(e, t);
  if (a == nullptr) {
    // order: relaxed (a count, read by the host after the kernel)
    atomicAdd(b.failed_allocs, 1ull);
  }
  b.cells[e] = a;  // the one winner of e writes it
  sugar_     = sugar_ - kMateCost;
  // MUTANT sugarscape_father_does_not_pay: the father keeps his share of the endowment.
  if constexpr (!kMutantFatherDoesNotPay) father->sugar_ = father->sugar_ - kMateCost;
}

__device__ void Agent::export_view(ExportSink<AgentView> out) {
  if (AgentView* v = out.slot()) {
    v->handle = reinterpret_cast<std::uint64_t>(this);
    v->cell   = cell_;
    v->traits = traits();
  }
}

__device__ void Agent::census(unsigned long long* counts) {
  // order: relaxed (a count, read by the host after the kernel)
  atomicAdd(&counts[kind_of(this) == kMale ? 0 : 1], 1ull);
}

namespace {

using Heap = soa::Heap<Types>;

/// HeapRef: soa::HeapRef<Types>, or AnyHeapRef<Types, Allocator>.
template <class HeapRef>
__global__ void populate_kernel(HeapRef heap, Board b) {
  for (std::uint64_t i = thread_index(); i < b.p.cells(); i += thread_stride()) {
    auto const c   = static_cast<std::uint32_t>(i);
    Traits const t = initial_agent(b.p, c);
    Agent* a       = nullptr;
    if (t.kind == kMale) a = heap.template make<Male>(c, t);
    if (t.kind == kFemale) a = heap.template make<Female>(c, t);
    // order: relaxed (a count, read by the host after the kernel)
    if (t.kind != kEmpty && a == nullptr) atomicAdd(b.failed_allocs, 1ull);
    b.cells[c] = a;
  }
}

/// Phase 1's cell part: regrow, clear the minima.
__global__ void regrow_kernel(Board b) {
  for (std::uint64_t i = thread_index(); i < b.p.cells(); i += thread_stride()) {
    b.sugar[i]    = regrown(b.sugar[i], b.capacity[i]);
    b.requests[i] = b.proposals[i] = b.births[i] = kNoKey;
  }
}

__global__ void grid_view_kernel(Board b, std::uint64_t* handles, std::uint8_t* kinds) {
  for (std::uint64_t i = thread_index(); i < b.p.cells(); i += thread_stride()) {
    Agent* const a = b.cells[i];
    handles[i]     = reinterpret_cast<std::uint64_t>(a);
    kinds[i]       = kind_of(a);
  }
}

/// The baseline: one dense.hpp phase over every cell.
enum DensePhase : int { kLive, kDecide, kPull, kLeave, kHarvest, kPropose, kChoose, kBorn, kPay };
__global__ void dense_kernel(Dense d, std::uint32_t const* capacity, std::uint32_t it, int phase) {
  for (std::uint64_t i = thread_index(); i < d.p.cells(); i += thread_stride()) {
    auto const c = static_cast<std::uint32_t>(i);
    switch (phase) {
      case kLive:
        d.live(c, capacity[c]);
        break;
      case kDecide:
        d.decide(it, c);
        break;
      case kPull:
        d.pull(c);
        break;
      case kLeave:
        d.leave(it, c);
        break;
      case kHarvest:
        d.harvest(c);
        break;
      case kPropose:
        d.propose(it, c);
        break;
      case kChoose:
        d.choose(it, c);
        break;
      case kBorn:
        d.born(it, c);
        break;
      default:
        d.pay(it, c);
        break;
    }
  }
}

struct Phases {
  double live_ms = 0, move_ms = 0, harvest_ms = 0, mate_ms = 0;
  [[nodiscard]] double total() const { return live_ms + move_ms + harvest_ms + mate_ms; }
  void add(Phases const& o) {
    live_ms += o.live_ms;
    move_ms += o.move_ms;
    harvest_ms += o.harvest_ms;
    mate_ms += o.mate_ms;
  }
};

/// A PhaseClock's times of one iteration: live, move, harvest, mate.
Phases phases_from(std::vector<float> const& ms) {
  Phases p;
  p.live_ms    = ms.at(0);
  p.move_ms    = ms.at(1);
  p.harvest_ms = ms.at(2);
  p.mate_ms    = ms.at(3);
  return p;
}

template <class T>
using Buffer = cudart::device_buffer<T>;

/// The cells' device arrays and the Board over them, the same for the heap variant and AnyApp.
class Grid {
 public:
  explicit Grid(World const& initial)
      : n_(initial.kind.size()),
        cells_(n_, "sugarscape agent pointers"),
        sugar_(n_, "sugarscape sugar"),
        capacity_(n_, "sugarscape capacity"),
        requests_(n_, "sugarscape requests"),
        proposals_(n_, "sugarscape proposals"),
        births_(n_, "sugarscape births"),
        failed_(1, "sugarscape failed allocations"),
        counts_(2, "sugarscape census") {
    b_.p             = initial.params;
    b_.cells         = cells_.data();
    b_.sugar         = sugar_.data();
    b_.capacity      = capacity_.data();
    b_.requests      = requests_.data();
    b_.proposals     = proposals_.data();
    b_.births        = births_.data();
    b_.failed_allocs = failed_.data();
  }

  /// The initial sugar and capacity, and no failed allocations, on stream s (asynchronous).
  void upload(World const& initial, cudaStream_t s) {
    failed_.set_zero_async(s);
    cudart::copy_to_device_async(sugar_.data(), initial.sugar.data(), n_, s);
    cudart::copy_to_device_async(capacity_.data(), initial.capacity.data(), n_, s);
  }

  [[nodiscard]] std::size_t size() const { return n_; }
  [[nodiscard]] Board& board() { return b_; }
  [[nodiscard]] Agent** cells() const { return cells_.data(); }
  [[nodiscard]] unsigned long long* counts() const { return counts_.data(); }
  void zero_counts(cudaStream_t s) { counts_.set_zero_async(s); }
  /// Births (and initial agents) whose allocation returned null so far (synchronizes s).
  [[nodiscard]] unsigned long long failed(cudaStream_t s) const {
    return cudart::value_to_host(failed_.data(), s);
  }

  /// The cells' part of a StateView: sugar, grid pointers and their kinds (synchronizes s).
  StateView view(cudaStream_t s) const {
    StateView out;
    out.sugar.resize(n_);
    cudart::copy_to_host(out.sugar.data(), sugar_.data(), n_, s);
    Buffer<std::uint64_t> handles(n_, "sugarscape check: grid pointers");
    Buffer<std::uint8_t> kinds(n_, "sugarscape check: grid kinds");
    grid_view_kernel<<<blocks_for(n_), kThreads, 0, s>>>(b_, handles.data(), kinds.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    out.handle.resize(n_);
    out.kind.resize(n_);
    cudart::copy_to_host(out.handle.data(), handles.data(), n_, s);
    cudart::copy_to_host(out.kind.data(), kinds.data(), n_, s);
    return out;
  }

 private:
  std::size_t n_;
  Buffer<Agent*> cells_;
  Buffer<std::uint32_t> sugar_, capacity_;
  Buffer<std::uint64_t> requests_, proposals_, births_;
  Buffer<unsigned long long> failed_, counts_;
  Board b_;
};

// The code below runs on H: soa::Heap<Types> (the heap variant) or AnyHeap<Types, A> (AnyApp).

/// The initial agents on H (every cell of rules.hpp initial_agent), on H's stream.
template <class H>
void populate(H& heap, Grid& g) {
  populate_kernel<<<blocks_for(g.size()), kThreads, 0, heap.stream()>>>(heap.ref(), g.board());
  HEAPLAB_CUDA_TRY(cudaGetLastError());
}

/// One iteration's kernels and do-alls (the top of this file) on H, timed by events between the
/// phases on H's stream, read once at the end (common/phase_clock.cuh).
template <class H>
Phases step_phases(H& heap, Grid& g, std::uint32_t it, PhaseClock& clock) {
  using Ref    = std::decay_t<decltype(heap.ref())>;
  Board& b     = g.board();
  b.it         = it;
  auto const s = heap.stream();
  auto const n = g.size();
  clock.start();
  regrow_kernel<<<blocks_for(n), kThreads, 0, s>>>(b);
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  heap.template parallel_do<Agent, &Agent::live<Ref>>(heap.ref(), b);
  clock.mark();
  // After live's deaths nothing creates or destroys an agent until the births: one enumeration
  // of Male and Female serves decide, move, harvest, propose, choose and, as the last do-all,
  // give_birth (Heap::Enumeration).
  auto agents = heap.template enumerate<Agent>();
  agents.template parallel_do<&Agent::decide>(b);
  agents.template parallel_do<&Agent::move>(b);
  clock.mark();
  agents.template parallel_do<&Agent::harvest>(b);
  clock.mark();
  agents.template parallel_do<&Male::propose>(b);
  agents.template parallel_do<&Female::choose>(b);
  agents.template last_parallel_do<&Female::give_birth<Ref>>(heap.ref(), b);
  clock.mark();
  return phases_from(clock.phases_ms());
}

/// (males, females) on H.
template <class H>
std::pair<std::uint64_t, std::uint64_t> census_of(H& heap, Grid& g) {
  auto const s = heap.stream();
  g.zero_counts(s);
  heap.template parallel_do<Agent, &Agent::census>(g.counts());
  std::vector<unsigned long long> c(2);
  cudart::copy_to_host(c.data(), g.counts(), 2, s);
  return {c[0], c[1]};
}

/// The live agents on H (soa::Heap or AnyHeap; heap_check.cuh export_objects).
template <class H>
std::vector<AgentView> export_agents(H& heap) {
  return export_objects<Agent, &Agent::export_view, AgentView>(heap, "sugarscape");
}

/// The state for check_state: the cells and the live agents on H.
template <class H>
StateView view_on(H& heap, Grid const& g) {
  StateView out = g.view(heap.stream());
  out.agents    = export_agents(heap);
  return out;
}

// ------------------------------------------------------------------------------------- heap

class HeapApp {
 public:
  HeapApp(SugarscapeOptions const& o, World const& initial)
      : grid_(initial),
        heap_(Heap::with_blocks(heap_blocks(o, grid_.size()), heap_options(o.heap))),
        defrag_(heap_, o.heap, {Types::type_id<Male>, Types::type_id<Female>}) {
    grid_.upload(initial, heap_.stream());
    populate(heap_, grid_);
    throw_on_failed_allocations(0);
    defrag_.compactor().add_roots(
        {reinterpret_cast<std::uint64_t*>(grid_.cells()), grid_.size(), Types::type_id<Agent>});
    (void)census();  // untimed: the first parallel_do allocates its scratch
  }

  [[nodiscard]] std::uint32_t num_blocks() const { return heap_.config().num_blocks; }

  Phases step(std::uint32_t it) { return step_phases(heap_, grid_, it, clock_); }

  /// Throws OutOfMemory when a make answered null so far (the heap's count, then the app's own:
  /// both are cumulative, so a check after every step sees every null before any --check).
  void throw_on_failed_allocations(int iteration) {
    std::string const detail = "the heap is full; raise --heap-blocks or --memory-mib (now " +
                               std::to_string(num_blocks()) + " blocks)";
    require_no_failed_allocations(
        "sugarscape", "heap", heap_.oom_count(), at_step(iteration), detail);
    require_no_failed_allocations(
        "sugarscape", "heap", grid_.failed(heap_.stream()), at_step(iteration), detail);
  }

  std::pair<std::uint64_t, std::uint64_t> census() { return census_of(heap_, grid_); }

  /// The state for check_state.
  StateView view() { return view_on(heap_, grid_); }

  /// The heap's own checks (heap_check.cuh), after view() enumerated `enumerated` agents.
  std::optional<std::string> heap_problem(std::size_t enumerated) const {
    return apps::heap_problem(heap_, enumerated);
  }

  void end_of_iteration(IterationCost& cost) { (void)defrag_.end_of_iteration(cost); }
  [[nodiscard]] IterationCost const& defrag_total() const { return defrag_.total(); }
  [[nodiscard]] std::string defrag_summary() const { return defrag_.summary(); }
  soa::HeapStatistics statistics() const { return heap_.statistics(); }

 private:
  /// --heap-blocks, else --memory-mib's blocks, else the default (sugarscape.hpp).
  static std::uint32_t heap_blocks(SugarscapeOptions const& o, std::uint64_t n) {
    std::uint64_t const b = 2 * ((n + Types::capacity<Male> - 1) / Types::capacity<Male> +
                                 (n + Types::capacity<Female> - 1) / Types::capacity<Female>)+64;
    return heap_blocks_for(o.heap, Types::block_bytes, b, "sugarscape");
  }

  Grid grid_;
  Heap heap_;
  DefragLoop<Types> defrag_;
  PhaseClock clock_{heap_.stream(), 4};
};

// ------------------------------------------------------------------------ other allocators

/// The same app on another allocator (common/any_heap.cuh; DynaSOAr Fig. 10): the heap variant's
/// cells, classes and phases, Male and Female objects from Allocator's malloc, AOS, with the
/// standalone do-all.
template <class Allocator>
class AnyApp {
 public:
  using AnyAgents = AnyHeap<Types, Allocator>;

  /// Objects per concrete type between two compactions: the cells. Every agent holds a cell of
  /// its own (a birth fills an empty cell), so Males + Females <= cells at all times. Male's and
  /// Female's arrays grow only by births (parallel_do<Female>) and are compacted at the next
  /// parallel_do<Agent> that finds them dirty (decide, after live's deaths): between two
  /// compactions an array holds the live objects of the last compaction plus the births since,
  /// i.e. the objects of that type alive after those births, at most the cells.
  static std::uint32_t max_objects(std::uint64_t cells) {
    return static_cast<std::uint32_t>(cells);  // <= 2^30 (reference.cpp validate)
  }
  /// The pool: room for an agent in every cell twice over (the worst case of max_objects; a
  /// realigned request is up to 63 bytes larger) and 64 MiB for the allocator's own overhead.
  /// At the default 1024 x 1024 (density 0.2, about 0.2 agents per cell) that is 320 MiB.
  /// --memory-mib replaces it (memory_budget.hpp).
  static std::uint64_t pool_bytes(HeapFlags const& flags, std::uint64_t cells) {
    std::uint64_t const object = std::max(AnyAgents::template request_bytes<Male>(),
                                          AnyAgents::template request_bytes<Female>());
    return pool_bytes_for(flags, 2 * cells * (object + 64) + (64ull << 20));
  }

  AnyApp(SugarscapeOptions const& o, World const& initial)
      : grid_(initial),
        pool_bytes_(pool_bytes(o.heap, grid_.size())),
        heap_(pool_bytes_, max_objects(grid_.size())) {
    grid_.upload(initial, heap_.stream());
    populate(heap_, grid_);
    throw_on_failed_allocations(0);
    (void)census();
  }

  Phases step(std::uint32_t it) { return step_phases(heap_, grid_, it, clock_); }

  /// Throws OutOfMemory when the allocator answered null so far (cumulative: a check after every
  /// step sees every null before any --check), std::runtime_error when a make failed otherwise (a
  /// type's array was full, which max_objects says cannot happen).
  void throw_on_failed_allocations(int iteration) {
    auto const failed        = grid_.failed(heap_.stream());
    std::string const name   = AnyAgents::allocator_name();
    std::string const detail = std::to_string(failed) + " allocations failed (" +
                               std::to_string(heap_.nulls()) + " nulls from the allocator, pool " +
                               std::to_string(pool_bytes_) + " bytes; else more than " +
                               std::to_string(max_objects(grid_.size())) + " objects of a type)";
    require_no_failed_allocations(
        "sugarscape", name.c_str(), heap_.nulls(), at_step(iteration), detail);
    if (failed != 0)
      throw std::runtime_error("sugarscape " + name + ": iteration " + std::to_string(iteration) +
                               ": " + detail);
  }

  // The do-alls of the census and of the check are not the app's: their enumeration time is
  // kept out of enumeration_ms().
  std::pair<std::uint64_t, std::uint64_t> census() {
    return untimed([&] { return census_of(heap_, grid_); });
  }
  StateView view() {
    return untimed([&] { return view_on(heap_, grid_); });
  }

  /// heap_problem's count check: the enumeration's live objects against the do-all's.
  std::optional<std::string> heap_problem(std::size_t enumerated) {
    std::uint64_t const live = heap_.template live<Agent>();
    if (live == enumerated) return std::nullopt;
    return "the enumeration counts " + std::to_string(live) + " live objects, the do-all visited " +
           std::to_string(enumerated);
  }

  /// The iterations' enumeration time (AnyHeap::enumeration_ms without the census and checks).
  [[nodiscard]] double enumeration_ms() const { return heap_.enumeration_ms() - untimed_ms_; }
  AnyAgents& heap() { return heap_; }

 private:
  template <class F>
  auto untimed(F&& f) {
    double const before = heap_.enumeration_ms();
    auto result         = f();
    untimed_ms_ += heap_.enumeration_ms() - before;
    return result;
  }

  Grid grid_;
  std::uint64_t pool_bytes_;
  AnyAgents heap_;
  double untimed_ms_ = 0;
  PhaseClock clock_{heap_.stream(), 4};
};

// --------------------------------------------------------------------------------- baseline

/// The baseline's device arrays (dense.hpp's layout).
class BaselineApp {
 public:
  /// The agent fields per cell: its sugar, age, max_age, metabolism, vision, target.
  static constexpr std::uint64_t kAgentFields = 6;

  /// Bytes of the arrays that hold what the heap variant keeps in Male and Female objects (the
  /// agents' fields and kinds; memory_budget.hpp): per cell kAgentFields u32 and a kind byte. The
  /// cells' sugar and capacity and the phases' minima, which the heap variant has alike, are not
  /// counted.
  static std::uint64_t object_bytes(std::uint64_t cells) {
    return cells * (kAgentFields * sizeof(std::uint32_t) + sizeof(std::uint8_t));
  }

  explicit BaselineApp(World const& w)
      : n_(w.kind.size()),
        capacity_(n_, "sugarscape baseline capacity"),
        sugar_(n_, "sugarscape baseline sugar"),
        agent_(kAgentFields * n_, "sugarscape baseline agent fields"),
        kind_(n_, "sugarscape baseline kinds"),
        u64_(3 * n_, "sugarscape baseline minima") {
    d_.p          = w.params;
    d_.sugar      = sugar_.data();
    d_.a_sugar    = agent_.data();
    d_.age        = agent_.data() + n_;
    d_.max_age    = agent_.data() + 2 * n_;
    d_.metabolism = agent_.data() + 3 * n_;
    d_.vision     = agent_.data() + 4 * n_;
    d_.target     = agent_.data() + 5 * n_;
    d_.kind       = kind_.data();
    d_.requests   = u64_.data();
    d_.proposals  = u64_.data() + n_;
    d_.births     = u64_.data() + 2 * n_;
    upload(w);
  }

  Phases step(std::uint32_t it) {
    auto run = [&](std::initializer_list<DensePhase> phases) {
      for (DensePhase ph : phases) {
        dense_kernel<<<blocks_for(n_), kThreads>>>(d_, capacity_.data(), it, ph);
        HEAPLAB_CUDA_TRY(cudaGetLastError());
      }
      clock_.mark();
    };
    clock_.start();
    run({kLive});
    run({kDecide, kPull, kLeave});
    run({kHarvest});
    run({kPropose, kChoose, kBorn, kPay});
    return phases_from(clock_.phases_ms());
  }

  World download(Params const& p) {
    World w;
    w.params = p;
    auto get = [&](std::vector<std::uint32_t>& v, std::uint32_t const* from) {
      v.resize(n_);
      cudart::copy_to_host(v.data(), from, n_);
    };
    get(w.sugar, d_.sugar);
    get(w.a_sugar, d_.a_sugar);
    get(w.age, d_.age);
    get(w.max_age, d_.max_age);
    get(w.metabolism, d_.metabolism);
    get(w.vision, d_.vision);
    get(w.target, d_.target);
    w.kind.resize(n_);
    cudart::copy_to_host(w.kind.data(), d_.kind, n_);
    return w;
  }

 private:
  void upload(World const& w) {
    auto put = [&](std::uint32_t* to, std::vector<std::uint32_t> const& v) {
      cudart::copy_to_device_async(to, v.data(), n_, nullptr);
    };
    put(capacity_.data(), w.capacity);
    put(d_.sugar, w.sugar);
    put(d_.a_sugar, w.a_sugar);
    put(d_.age, w.age);
    put(d_.max_age, w.max_age);
    put(d_.metabolism, w.metabolism);
    put(d_.vision, w.vision);
    put(d_.target, w.target);
    cudart::copy_to_device_async(d_.kind, w.kind.data(), n_, nullptr);
    cudart::copy_to_device_async(d_.requests, w.requests.data(), n_, nullptr);
    cudart::copy_to_device_async(d_.proposals, w.proposals.data(), n_, nullptr);
    cudart::copy_to_device_async(d_.births, w.births.data(), n_, nullptr);
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  }

  std::size_t n_;
  Buffer<std::uint32_t> capacity_;
  Buffer<std::uint32_t> sugar_;  // the cells'
  Buffer<std::uint32_t> agent_;  // kAgentFields arrays of n_
  Buffer<std::uint8_t> kind_;
  Buffer<std::uint64_t> u64_;
  Dense d_;
  PhaseClock clock_{nullptr, 4};
};

struct CsvRow {
  char const* variant;
  int iteration;
  std::uint64_t males, females, live_objects, allocated_blocks;
  double fragmentation;
  Phases phases;
};

void write_row(std::FILE* csv, CsvRow const& r) {
  if (csv == nullptr) return;
  std::fprintf(csv,
               "%s,%d,%llu,%llu,%llu,%llu,%.6f,%.4f,%.4f,%.4f,%.4f\n",
               r.variant,
               r.iteration,
               static_cast<unsigned long long>(r.males),
               static_cast<unsigned long long>(r.females),
               static_cast<unsigned long long>(r.live_objects),
               static_cast<unsigned long long>(r.allocated_blocks),
               r.fragmentation,
               r.phases.live_ms,
               r.phases.move_ms,
               r.phases.harvest_ms,
               r.phases.mate_ms);
}

bool check_due(SugarscapeOptions const& o, int it) {
  return o.check && (it % o.check_every == 0 || it == o.iterations);
}

template <class App>
inline constexpr bool kIsHeap = std::is_same_v<App, HeapApp>;

/// --check of one variant after iteration it; prints the first problem, false when there is one.
template <class App>
bool check_variant(App& app, char const* variant, World const& reference, int it) {
  auto const fail = [&](std::string const& what) {
    std::printf("sugarscape --check FAILED at iteration %d (%s): %s\n", it, variant, what.c_str());
    return false;
  };
  StateView const s = app.view();
  if (auto v = check_state(s, reference)) return fail(*v);
  if (auto v = app.heap_problem(s.agents.size())) return fail(*v);
  return true;
}

void print_summary(char const* variant, int iterations, Phases const& t) {
  std::printf(
      "%-9s %d iterations, live %.3f ms, move %.3f ms, harvest %.3f ms, mate %.3f ms, total %.3f "
      "ms\n",
      variant,
      iterations,
      t.live_ms,
      t.move_ms,
      t.harvest_ms,
      t.mate_ms,
      t.total());
}

/// The CSV row of iteration it (the heap's statistics only on the heap).
template <class App>
void write_iteration(std::FILE* csv, char const* variant, int it, App& app, Phases const& p) {
  if (csv == nullptr) return;
  auto const [m, f] = app.census();
  if constexpr (kIsHeap<App>) {
    auto const stats = app.statistics();
    write_row(
        csv, {variant, it, m, f, stats.used_slots, stats.allocated_blocks, stats.fragmentation, p});
  } else {
    write_row(csv, {variant, it, m, f, m + f, 0, 0.0, p});
  }
}

/// After the iterations: the defragmentation (heap) or the enumeration (other allocators), and
/// the final population.
template <class App>
void print_final(char const* variant, char const* label, App& app, Phases const& total) {
  if constexpr (kIsHeap<App>) {
    if (auto const& d = app.defrag_total(); d.defrag_calls > 0)
      std::printf("%-9s defragmentation %s, %.1f%% of the iterations' time\n",
                  label,
                  app.defrag_summary().c_str(),
                  100.0 * d.defrag_ms / std::max(total.total(), 1e-9));
  } else {
    app.heap().print_enumeration("sugarscape", variant, app.enumeration_ms(), total.total());
  }
  auto const [m, f] = app.census();
  std::printf("%-9s final population %llu males, %llu females",
              label,
              static_cast<unsigned long long>(m),
              static_cast<unsigned long long>(f));
  if constexpr (kIsHeap<App>) {
    auto const stats = app.statistics();
    std::printf("; live objects %llu in %llu blocks, F %.4f",
                static_cast<unsigned long long>(stats.used_slots),
                static_cast<unsigned long long>(stats.allocated_blocks),
                stats.fragmentation);
  }
  std::printf("\n");
}

/// Runs one variant (the heap, or AnyApp on an allocator); returns its total time (ms), negative
/// when --check failed. final_view (when not null) gets the final state, after the timing.
template <class App>
double run_variant(SugarscapeOptions const& o,
                   char const* variant,
                   App& app,
                   World const& initial,
                   std::FILE* csv,
                   ProfileCsv& profile,
                   StateView* final_view) {
  std::string const label = std::string(variant) + ":";
  World reference         = initial;
  if (o.check && !check_variant(app, variant, reference, 0)) return -1;
  Phases total;
  for (int it = 1; it <= o.iterations; ++it) {
    Phases const p = app.step(static_cast<std::uint32_t>(it));
    app.throw_on_failed_allocations(it);
    IterationCost cost;
    cost.app_ms = p.total();
    if constexpr (kIsHeap<App>) app.end_of_iteration(cost);
    total.add(p);
    if (o.check) step(reference, static_cast<std::uint32_t>(it));
    if (check_due(o, it) && !check_variant(app, variant, reference, it)) return -1;
    if constexpr (kIsHeap<App>)
      if (profile.enabled()) profile.write(variant, it, app.statistics(), cost);
    write_iteration(csv, variant, it, app, p);
  }
  print_summary(label.c_str(), o.iterations, total);
  print_final(variant, label.c_str(), app, total);
  if (final_view != nullptr) *final_view = app.view();
  double defrag_ms = 0;
  if constexpr (kIsHeap<App>) defrag_ms = app.defrag_total().defrag_ms;
  return total.total() + defrag_ms;
}

double run_heap(SugarscapeOptions const& o,
                World const& initial,
                std::FILE* csv,
                ProfileCsv& profile,
                StateView* final_view) {
  HeapApp app(o, initial);
  std::printf("heap: %u blocks of %u bytes, %u Male or %u Female objects per block\n",
              app.num_blocks(),
              static_cast<unsigned>(Types::block_bytes),
              static_cast<unsigned>(Types::capacity<Male>),
              static_cast<unsigned>(Types::capacity<Female>));
  return run_variant(o, "heap", app, initial, csv, profile, final_view);
}

double run_baseline(SugarscapeOptions const& o, World const& initial, std::FILE* csv) {
  std::uint64_t const cells = initial.kind.size();
  std::uint64_t const bytes = BaselineApp::object_bytes(cells);
  std::printf(
      "baseline: object arrays %llu bytes (%llu cells x %llu: the agents' fields and kinds)\n",
      static_cast<unsigned long long>(bytes),
      static_cast<unsigned long long>(cells),
      static_cast<unsigned long long>(BaselineApp::object_bytes(1)));
  require_baseline_fits(o.heap, "sugarscape", bytes);
  BaselineApp app(initial);
  World reference = initial;
  Phases total;
  for (int it = 1; it <= o.iterations; ++it) {
    Phases const p = app.step(static_cast<std::uint32_t>(it));
    total.add(p);
    if (o.check) step(reference, static_cast<std::uint32_t>(it));
    bool const need_host = check_due(o, it) || csv != nullptr || it == o.iterations;
    if (!need_host) continue;
    World const w = app.download(initial.params);
    if (check_due(o, it))
      if (auto v = check_state(view_of(w), reference)) {
        std::printf("sugarscape --check FAILED at iteration %d (baseline): %s\n", it, v->c_str());
        return -1;
      }
    auto const pop = population(w);
    write_row(csv, {"baseline", it, pop.males, pop.females, 0, 0, 0.0, p});
    if (it == o.iterations) {
      print_summary("baseline:", o.iterations, total);
      std::printf("baseline: final population %llu males, %llu females\n",
                  static_cast<unsigned long long>(pop.males),
                  static_cast<unsigned long long>(pop.females));
    }
  }
  return total.total();
}

void validate(SugarscapeOptions const& o) {
  Params p;
  p.width   = o.width;
  p.height  = o.height;
  p.density = o.density;
  sugarscape::validate(p);
  if (o.iterations < 0) throw std::invalid_argument("sugarscape: --iterations must be >= 0");
  if (o.check_every < 1) throw std::invalid_argument("sugarscape: --check-every must be >= 1");
  apps::validate(o.heap);
  apps::validate_allocators(o.allocators);
}

/// Males and females of a state (its grid's kinds).
std::pair<std::uint64_t, std::uint64_t> population_of(StateView const& s) {
  auto const males   = std::count(s.kind.begin(), s.kind.end(), std::uint8_t{kMale});
  auto const females = std::count(s.kind.begin(), s.kind.end(), std::uint8_t{kFemale});
  return {static_cast<std::uint64_t>(males), static_cast<std::uint64_t>(females)};
}

/// `sugarscape heap / <variant>: R x` and whether the final worlds are equal, cell by cell. The
/// app is deterministic (every variant computes the reference's world exactly): false when they
/// differ.
bool compare_with_heap(SugarscapeOptions const& o,
                       char const* variant,
                       double heap_ms,
                       double ms,
                       StateView const& heap_final,
                       StateView const& final_view,
                       Params const& p) {
  print_heap_ratio("sugarscape", variant, heap_ms, ms);
  auto const [hm, hf] = population_of(heap_final);
  auto const [vm, vf] = population_of(final_view);
  auto const diff     = compare_views(heap_final, final_view, p);
  std::printf(
      "sugarscape heap vs %s after %d iterations: males %llu / %llu, females %llu / %llu, %s\n",
      variant,
      o.iterations,
      static_cast<unsigned long long>(hm),
      static_cast<unsigned long long>(vm),
      static_cast<unsigned long long>(hf),
      static_cast<unsigned long long>(vf),
      diff ? ("DIFFER (heap vs " + std::string(variant) + "): " + *diff).c_str()
           : "equal (every cell's sugar and agent)");
  return !diff;
}

/// The --allocators variants, each after the heap's; false when one failed --check or its final
/// world differs from the heap's (compared only when the heap ran: heap_ms given).
bool run_allocators(SugarscapeOptions const& o,
                    World const& initial,
                    std::FILE* csv,
                    ProfileCsv& profile,
                    std::optional<double> heap_ms,
                    StateView const& heap_final) {
  for (auto const& name : o.allocators) {
    StateView final_view;
    double ms = 0;
    with_allocator(name, [&](auto tag) {
      using App = AnyApp<typename decltype(tag)::type>;
      App app(o, initial);
      std::printf(
          "%s: pool %llu bytes, room for %u Male and %u Female objects between two compactions, "
          "%llu bytes per object requested\n",
          name.c_str(),
          static_cast<unsigned long long>(App::pool_bytes(o.heap, initial.params.cells())),
          App::max_objects(initial.params.cells()),
          App::max_objects(initial.params.cells()),
          static_cast<unsigned long long>(App::AnyAgents::template request_bytes<Male>()));
      ms =
          run_variant(o, name.c_str(), app, initial, csv, profile, heap_ms ? &final_view : nullptr);
    });
    if (ms < 0) return false;
    if (heap_ms &&
        !compare_with_heap(o, name.c_str(), *heap_ms, ms, heap_final, final_view, initial.params))
      return false;
  }
  return true;
}

}  // namespace

int run_sugarscape(SugarscapeOptions const& o) {
  validate(o);
  Params p;
  p.width             = o.width;
  p.height            = o.height;
  p.seed              = o.seed;
  p.density           = o.density;
  World const initial = initial_world(p);
  auto const d        = cudart::probe_device();
  if (!d.available) throw NoDevice(d.reason);
  std::printf("%s\n", cudart::device_line(d).c_str());
  auto const pop0 = population(initial);
  std::printf(
      "sugarscape: %ux%u torus, density %.3f (%llu males, %llu females), seed %llu, %d "
      "iterations%s%s\n"
      "sugarscape: heap: %s\n",
      o.width,
      o.height,
      o.density,
      static_cast<unsigned long long>(pop0.males),
      static_cast<unsigned long long>(pop0.females),
      static_cast<unsigned long long>(o.seed),
      o.iterations,
      o.check ? (", --check every " + std::to_string(o.check_every)).c_str() : "",
      planted_bug_note(core::mutant::kPlanted).c_str(),
      describe(o.heap).c_str());
  CsvFile const csv = open_csv(o.csv,
                               "sugarscape",
                               "variant,iteration,males,females,live_objects,allocated_blocks,"
                               "fragmentation,live_ms,move_ms,harvest_ms,mate_ms");
  ProfileCsv profile;
  if (!o.profile.empty()) profile = ProfileCsv(o.profile, "sugarscape", Types::block_bytes);
  // Before any kernel of this file runs (allocators.cuh): the cuda-malloc variant's pool.
  reserve_cuda_malloc(o.allocators,
                      AnyApp<malloc_family::CudaMallocAdapter>::pool_bytes(o.heap, p.cells()));
  StateView heap_final;           // only for --allocators: the heap path does no more work without
  std::optional<double> heap_ms;  // nullopt: --only another variant
  if (o.heap.run_heap) {
    heap_ms =
        run_heap(o, initial, csv.get(), profile, o.allocators.empty() ? nullptr : &heap_final);
    if (*heap_ms < 0) return 1;
  }
  std::optional<double> base_ms;
  if (o.baseline) {
    base_ms = run_baseline(o, initial, csv.get());
    if (*base_ms < 0) return 1;
  }
  if (heap_ms)
    report_heap_and_baseline("sugarscape", *heap_ms, base_ms);
  else if (base_ms)
    print_result_line("sugarscape", "baseline", *base_ms, std::nullopt);
  if (!run_allocators(o, initial, csv.get(), profile, heap_ms, heap_final)) return 1;
  if (o.check) std::printf("sugarscape --check passed\n");
  return 0;
}

}  // namespace heaplab::apps::sugarscape
