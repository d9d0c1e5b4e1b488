// `heaplab_apps game-of-life` (game_of_life.hpp; docs/apps.md "game-of-life"): Conway's Game of
// Life in DynaSOAr's form (Table 1 "game-of-life"): a cell is dead, alive or an alive-candidate
// (a dead cell that may be born next); alive cells (Alive) and candidates (Candidate), both
// subclasses of the abstract Agent, are soa::Heap objects, and a dense grid holds every cell's
// object pointer (nullptr: a dead cell that is no candidate; the external root array for
// compact::Compactor). Only objects are visited, so a generation costs O(alive cells). One
// generation is four parallel do-alls on the heap's stream (Table 1: "4 / iteration"):
//
//   Alive::prepare       every alive cell counts its alive neighbours and marks itself to die
//                        when the rule does not let it survive;
//   Candidate::prepare   every candidate counts its alive neighbours: none, it is dropped
//                        (destroys itself, its cell becomes empty); a count in the birth set
//                        marks it to be born;
//   Candidate::update    a candidate marked to be born becomes a new Alive (heap.make, the grid
//                        pointer replaced, the candidate destroyed);
//   Alive::update        an alive cell marked to die becomes a Candidate (it may be born again);
//                        a new alive cell gives each empty neighbour a Candidate.
//
// The invariants this keeps (reference.hpp I1-I4; --check tests them on the GPU's state) and a
// sequential model of the same phases (reference.hpp Model, tested on the CPU) are in
// reference.hpp. Why the result equals the dense reference: the two prepare phases read only the
// state S_g (the grid's Alive pointers, which neither prepare phase changes; Candidate::prepare
// only turns Candidate pointers into nullptr, and both read as "not alive"), so every decision is
// the rule applied to S_g; by I2 every cell that the rule lets be born holds a candidate.
//
// Memory orders. Within a phase: Alive::prepare and Candidate::prepare read neighbours' pointers
// with plain aligned 64-bit loads (a concurrent write in Candidate::prepare changes a Candidate
// pointer to nullptr; either value reads as "not alive"); Alive::update claims an empty cell for
// a candidate with a relaxed device-scope compare-and-swap from nullptr to kClaimed (the one
// claimant makes the object), then stores the object's pointer with a relaxed exchange; no thread
// reads a pointer's target in that phase. Between phases: separate kernels on one stream, so a
// kernel boundary orders every write of a phase before the next phase reads it (linearization
// point of generation g: the end of its Alive::update).
//
// The baseline: the dense grid of states, double-buffered, one thread per cell
// (gen_ca/dense_step.cuh), no allocation; --check compares both with gen-ca's CPU reference.
//
// Other allocators (--allocators; common/any_heap.cuh, DynaSOAr Fig. 10): the same classes, the
// same populate and the same four do-alls (populate, step_phases) on AnyHeap<Types, Allocator>
// (AnyApp), the methods that allocate being templates over the heap's device view. --check runs
// the same checker (check_world, I1-I4) on each; the final alive cells must equal the heap
// variant's exactly (the rule is deterministic: every variant computes the reference's state).
//
// The same memory for every variant (--memory-mib, common/memory_budget.hpp; DynaSOAr Fig. 11):
// the heap's blocks, each allocator's pool, the baseline's two state grids. A make that answers
// nullptr leaves its cell empty (no make site reads through the pointer it got) and is counted;
// the counts, read after set-up and after every generation (before its --check), end the run with
// OutOfMemory.
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
#include "gen_ca/dense_step.cuh"
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "game_of_life.hpp"
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

namespace heaplab::apps::game_of_life {

/// The app's planted bugs (docs/mutants.md "Applications", docs/apps.md "game-of-life"): a new
/// alive cell gives candidates only to its four orthogonal neighbours (a diagonal neighbour that
/// no other new cell touches is never a candidate, so it can never be born); a new alive cell
/// tests a neighbour for emptiness and then stores its candidate without a compare-and-swap (two
/// new cells that see the same empty cell both make one; the later store hides the other, a
/// leaked object).
inline constexpr bool kMutantOrthogonalCandidates =
    core::mutant::game_of_life_orthogonal_candidates;
inline constexpr bool kMutantCandidateWithoutCas = core::mutant::game_of_life_candidate_without_cas;

struct Types;
struct Board;

/// A cell with an object: alive, or an alive-candidate.
class Agent {
 public:
  HEAPLAB_SOA_ABSTRACT(Agent);
  HEAPLAB_SOA_FIELDS(Agent,
                     (std::uint32_t, cell_),  // the cell it is in
                     (std::uint8_t, acts_));  // prepare's decision: Alive dies, Candidate is born

  HEAPLAB_HD explicit Agent(std::uint32_t cell) : cell_(cell), acts_(std::uint8_t{0}) {}

  __device__ void export_view(ExportSink<ObjectView> out);
  __device__ void census(unsigned long long* counts);
};

class Alive : public Agent {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Alive, Agent, (std::uint8_t, is_new_));  // born this generation
  HEAPLAB_HD explicit Alive(std::uint32_t cell) : Agent(cell), is_new_(std::uint8_t{1}) {}
  __device__ void prepare(Board w);
  /// Ref: soa::HeapRef<Types>, or AnyHeapRef<Types, Allocator> on another allocator.
  template <class Ref>
  __device__ void update(Ref heap, Board w);
};

class Candidate : public Agent {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Candidate, Agent);
  HEAPLAB_HD explicit Candidate(std::uint32_t cell) : Agent(cell) {}
  template <class Ref>
  __device__ void prepare(Ref heap, Board w);
  template <class Ref>
  __device__ void update(Ref heap, Board w);
};

struct Types : soa::HeapTypes<Agent, Alive, Candidate> {};

namespace {
/// A grid entry claimed by Alive::update for the candidate it is about to make (never a valid
/// object pointer: its type bits name no type; it does not outlive the kernel).
constexpr unsigned long long kClaimed = ~0ull;

__device__ Kind kind_of(Agent const* a) {
  if (a == nullptr) return Kind::kEmpty;
  auto const t = core::pointer_type(reinterpret_cast<std::uint64_t>(a));
  if (t == Types::type_id<Alive>) return Kind::kAlive;
  if (t == Types::type_id<Candidate>) return Kind::kCandidate;
  return static_cast<Kind>(0xFF);  // no object of this heap: the checker reports it
}
}  // namespace

/// The device view of the board (trivially copyable, passed by value).
struct Board {
  std::uint32_t width  = 0;
  std::uint32_t height = 0;
  Rule rule;
  Agent** cells                     = nullptr;  // W * H object pointers; nullptr: empty
  unsigned long long* failed_allocs = nullptr;  // heap.make answered nullptr

  [[nodiscard]] __device__ std::uint32_t neighbour(std::uint32_t index, int dx, int dy) const {
    return gen_ca::app_neighbour<false>(width, height, index, dx, dy);
  }
  [[nodiscard]] __device__ std::uint32_t alive_neighbours(std::uint32_t self) const {
    std::uint32_t n = 0;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        if (dx != 0 || dy != 0) n += kind_of(cells[neighbour(self, dx, dy)]) == Kind::kAlive;
    return n;
  }
  __device__ void failed() const {
    // order: relaxed (a count, read by the host after the kernel)
    atomicAdd(failed_allocs, 1ull);
  }
  /// A Candidate for the empty cell j, made by the one thread that claims it.
  template <class Ref>
  __device__ void give_candidate(Ref heap, std::uint32_t j) const {
    auto* const slot = reinterpret_cast<unsigned long long*>(&cells[j]);
    if constexpr (kMutantCandidateWithoutCas) {
      // MUTANT game_of_life_candidate_without_cas: test, then store; two threads can both pass.
      // order: relaxed (the planted bug's test of the cell; a plain load would do the same)
      if (*reinterpret_cast<unsigned long long volatile*>(slot) != 0ull) return;
    } else {
      // order: relaxed (the claim decides the one maker of cell j's candidate; nothing is read
      // through the pointer in this kernel)
      if (atomicCAS(slot, 0ull, kClaimed) != 0ull) return;
    }
    Candidate* const c = heap.template make<Candidate>(j);
    if (c == nullptr) failed();
    // order: relaxed (replaces the claim; read by later kernels only)
    atomicExch(slot, static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(c)));
  }
};

__device__ void Agent::export_view(ExportSink<ObjectView> out) {
  if (ObjectView* v = out.slot()) {
    v->handle = reinterpret_cast<std::uint64_t>(this);
    v->kind   = kind_of(this);
    v->cell   = cell_;
  }
}

__device__ void Agent::census(unsigned long long* counts) {
  // order: relaxed (a count, read by the host after the kernel)
  atomicAdd(&counts[kind_of(this) == Kind::kAlive ? 0 : 1], 1ull);
}

__device__ void Alive::prepare(Board w) {
  acts_ = w.rule.next(kAlive, w.alive_neighbours(cell_)) != kAlive ? 1 : 0;
}

template <class Ref>
__device__ void Alive::update(Ref heap, Board w) {
  std::uint32_t const self = cell_;
  if (acts_ != 0) {  // dies; its cell stays a candidate (I3: it was alive a generation ago)
    Candidate* const c = heap.template make<Candidate>(self);
    if (c == nullptr) w.failed();
    w.cells[self] = c;  // only this thread writes an alive cell's entry in this phase
    heap.destroy(this);
    return;
  }
  if (is_new_ == 0) return;  // an old cell's empty neighbours got candidates when it was new
  is_new_ = std::uint8_t{0};
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      if (dx == 0 && dy == 0) continue;
      // MUTANT game_of_life_orthogonal_candidates: the diagonal neighbours are skipped.
      if (kMutantOrthogonalCandidates && dx != 0 && dy != 0) continue;
      std::uint32_t const j = w.neighbour(self, dx, dy);
      if (w.cells[j] == nullptr) w.give_candidate(heap, j);  // a hint; the claim decides
    }
}

template <class Ref>
__device__ void Candidate::prepare(Ref heap, Board w) {
  std::uint32_t const self = cell_;
  std::uint32_t const n    = w.alive_neighbours(self);
  if (n == 0) {  // no reason to stay a candidate (dropped one generation late, I3)
    w.cells[self] = nullptr;
    heap.destroy(this);
    return;
  }
  acts_ = w.rule.next(kDead, n) == kAlive ? 1 : 0;
}

template <class Ref>
__device__ void Candidate::update(Ref heap, Board w) {
  if (acts_ == 0) return;
  std::uint32_t const self = cell_;
  Alive* const a           = heap.template make<Alive>(self);
  if (a == nullptr) w.failed();
  w.cells[self] = a;
  heap.destroy(this);
}

namespace {

using Heap = soa::Heap<Types>;

/// The initial population: an Alive (new) for every alive cell of `initial`.
template <class Ref>
__global__ void populate_kernel(Ref heap, Board w, std::uint8_t const* initial) {
  std::uint64_t const n = std::uint64_t{w.width} * w.height;
  for (std::uint64_t i = thread_index(); i < n; i += thread_stride()) {
    Agent* p = nullptr;
    if (initial[i] == kAlive) {
      p = heap.template make<Alive>(static_cast<std::uint32_t>(i));
      if (p == nullptr) w.failed();
    }
    w.cells[i] = p;
  }
}

/// The grid as the checker sees it: per cell the pointer and the kind its type bits name.
__global__ void grid_view_kernel(Board w, std::uint64_t* handles, std::uint8_t* kinds) {
  std::uint64_t const n = std::uint64_t{w.width} * w.height;
  for (std::uint64_t i = thread_index(); i < n; i += thread_stride()) {
    Agent* const p = w.cells[i];
    handles[i]     = reinterpret_cast<std::uint64_t>(p);
    kinds[i]       = static_cast<std::uint8_t>(kind_of(p));
  }
}

struct Phases {
  double prepare_ms = 0;  // Alive::prepare + Candidate::prepare
  double update_ms  = 0;  // Candidate::update + Alive::update
  [[nodiscard]] double total() const { return prepare_ms + update_ms; }
};

struct Census {
  std::uint64_t alive      = 0;
  std::uint64_t candidates = 0;
};

/// The device state of the board that every variant on objects has: the grid of object pointers
/// (Board), the failed-allocation and census counters, the initial states.
class BoardState {
 public:
  BoardState(Rule const& rule, Grid const& initial)
      : cells_(initial.cells.size(), "game-of-life cell pointers"),
        failed_(1, "game-of-life failed allocations"),
        counts_(2, "game-of-life census"),
        states_(initial.cells.size(), "game-of-life initial states") {
    w_.width         = initial.width;
    w_.height        = initial.height;
    w_.rule          = rule;
    w_.cells         = cells_.data();
    w_.failed_allocs = failed_.data();
  }

  [[nodiscard]] Board const& board() const { return w_; }
  [[nodiscard]] std::size_t size() const { return cells_.size(); }
  [[nodiscard]] Agent** cells() const { return cells_.data(); }

  /// The initial population on H (soa::Heap<Types> or AnyHeap<Types, A>): an Alive (new) for
  /// every alive cell of `initial`, then the first candidates (Alive::update).
  template <class H>
  void populate(H& heap, Grid const& initial) {
    using Ref    = std::decay_t<decltype(heap.ref())>;
    auto const s = heap.stream();
    failed_.set_zero_async(s);
    cudart::copy_to_device_async(states_.data(), initial.cells.data(), initial.cells.size(), s);
    populate_kernel<Ref>
        <<<blocks_for(initial.cells.size()), kThreads, 0, s>>>(heap.ref(), w_, states_.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    heap.template parallel_do<Alive, &Alive::update<Ref>>(heap.ref(), w_);
  }

  /// Allocations that answered nullptr so far (synchronizes s).
  std::uint64_t failed(cudaStream_t s) const { return cudart::value_to_host(failed_.data(), s); }

  /// Alive cells and candidates, counted by a parallel_do<Agent> on H.
  template <class H>
  Census census(H& heap) {
    counts_.set_zero_async(heap.stream());
    heap.template parallel_do<Agent, &Agent::census>(counts_.data());
    std::vector<unsigned long long> c(2);
    cudart::copy_to_host(c.data(), counts_.data(), 2, heap.stream());
    return {c[0], c[1]};
  }

  /// The grid for check_world: per cell the pointer and the kind its type bits name (the
  /// objects are the variant's to add).
  World grid_world(cudaStream_t s) const {
    std::size_t const n = cells_.size();
    World out;
    out.width  = w_.width;
    out.height = w_.height;
    cudart::device_buffer<std::uint64_t> handles(n, "game-of-life check: grid pointers");
    cudart::device_buffer<std::uint8_t> kinds(n, "game-of-life check: grid kinds");
    grid_view_kernel<<<blocks_for(n), kThreads, 0, s>>>(w_, handles.data(), kinds.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    out.handle.resize(n);
    cudart::copy_to_host(out.handle.data(), handles.data(), n, s);
    std::vector<std::uint8_t> k(n);
    cudart::copy_to_host(k.data(), kinds.data(), n, s);
    out.kind.resize(n);
    for (std::size_t i = 0; i < n; ++i) out.kind[i] = static_cast<Kind>(k[i]);
    return out;
  }

  /// The grid's alive cells as a state grid (kAlive / kDead), for the comparison of variants.
  Grid alive_cells(cudaStream_t s) const {
    World const world = grid_world(s);
    Grid g(w_.width, w_.height);
    for (std::size_t i = 0; i < g.cells.size(); ++i)
      g.cells[i] = world.kind[i] == Kind::kAlive ? kAlive : kDead;
    return g;
  }

 private:
  cudart::device_buffer<Agent*> cells_;
  cudart::device_buffer<unsigned long long> failed_;
  cudart::device_buffer<unsigned long long> counts_;
  cudart::device_buffer<std::uint8_t> states_;
  Board w_;
};

/// One generation's four do-alls (the top of this file) on H: soa::Heap<Types> or
/// AnyHeap<Types, A>. Phase times from events recorded between the phases on the heap's stream and
/// read once at the end (common/phase_clock.cuh: no synchronize per phase, docs/apps.md).
template <class H>
Phases step_phases(H& heap, Board const& w, PhaseClock& clock) {
  using Ref = std::decay_t<decltype(heap.ref())>;
  clock.start();
  heap.template parallel_do<Alive, &Alive::prepare>(w);
  heap.template parallel_do<Candidate, &Candidate::prepare<Ref>>(heap.ref(), w);
  clock.mark();
  heap.template parallel_do<Candidate, &Candidate::update<Ref>>(heap.ref(), w);
  heap.template parallel_do<Alive, &Alive::update<Ref>>(heap.ref(), w);
  clock.mark();
  auto const ms = clock.phases_ms();
  Phases p;
  p.prepare_ms = ms.at(0);
  p.update_ms  = ms.at(1);
  return p;
}

struct CsvRow {
  char const* variant;
  int iteration;
  Census census;
  std::uint64_t live_objects;
  std::uint64_t allocated_blocks;
  double fragmentation;
  Phases phases;
};

class HeapApp {
 public:
  HeapApp(GameOfLifeOptions const& o, Rule const& rule, Grid const& initial)
      : board_(rule, initial),
        heap_(Heap::with_blocks(heap_blocks(o, initial), heap_options(o.heap))),
        defrag_(heap_, o.heap, {Types::type_id<Alive>, Types::type_id<Candidate>}) {
    board_.populate(heap_, initial);
    throw_on_failed_allocations(0);
    // The grid is the only place that points at objects: a defragmentation rewrites it.
    defrag_.compactor().add_roots(
        {reinterpret_cast<std::uint64_t*>(board_.cells()), board_.size(), Types::type_id<Agent>});
  }

  [[nodiscard]] std::uint32_t num_blocks() const { return heap_.config().num_blocks; }

  Phases step() { return step_phases(heap_, board_.board(), clock_); }

  /// OutOfMemory when a make answered nullptr so far: the board's count (every make site counts
  /// its null) or the heap's own (cumulative; both synchronize).
  void throw_on_failed_allocations(int generation) {
    std::uint64_t const failed = std::max(board_.failed(heap_.stream()), heap_.oom_count());
    require_no_failed_allocations("game-of-life",
                                  "heap",
                                  failed,
                                  at_step(generation, "generation"),
                                  std::to_string(num_blocks()) + " blocks of " +
                                      std::to_string(Types::block_bytes) + " bytes");
  }

  Census census() { return board_.census(heap_); }

  /// The state for check_world: the grid's pointers and kinds, the heap's live objects.
  World world() {
    World out   = board_.grid_world(heap_.stream());
    out.objects = export_objects<Agent, &Agent::export_view, ObjectView>(heap_, "game-of-life");
    return out;
  }
  /// The heap's own checks (heap_check.cuh) after world() exported `enumerated` objects.
  std::optional<std::string> heap_problem(std::size_t enumerated) const {
    return apps::heap_problem(heap_, enumerated);
  }

  CsvRow csv_row(char const* variant, int generation, Phases const& p) {
    auto const stats = statistics();
    return {variant,
            generation,
            census(),
            stats.used_slots,
            stats.allocated_blocks,
            stats.fragmentation,
            p};
  }
  Grid alive_cells() const { return board_.alive_cells(heap_.stream()); }

  void end_of_generation(IterationCost& cost) { (void)defrag_.end_of_iteration(cost); }
  [[nodiscard]] IterationCost const& defrag_total() const { return defrag_.total(); }
  [[nodiscard]] std::string defrag_summary() const { return defrag_.summary(); }
  soa::HeapStatistics statistics() const { return heap_.statistics(); }

 private:
  /// --heap-blocks, else --memory-mib's blocks, else the default: 4 * ceil(cells / capacity) + 64
  /// (too large an error only where it is used).
  static std::uint32_t heap_blocks(GameOfLifeOptions const& o, Grid const& g) {
    constexpr std::uint64_t cap = std::min(Types::capacity<Alive>, Types::capacity<Candidate>);
    return heap_blocks_for(
        o.heap, Types::block_bytes, 4 * ((g.cells.size() + cap - 1) / cap) + 64, "game-of-life");
  }

  BoardState board_;
  Heap heap_;
  DefragLoop<Types> defrag_;
  PhaseClock clock_{heap_.stream(), 2};
};

// ------------------------------------------------------------------------ other allocators

/// The same app on another allocator (common/any_heap.cuh; DynaSOAr Fig. 10): Alive and
/// Candidate objects from Allocator's malloc, AOS, with the standalone do-all.
template <class Allocator>
class AnyApp {
 public:
  using AnyAgents = AnyHeap<Types, Allocator>;

  /// Room per concrete type between two compactions: the cell count. Each cell holds at most one
  /// object at a time (the CAS claim gives an empty cell one candidate). Alive: compacted at
  /// Alive::prepare to the alive cells A; until Alive::update only Candidate::update adds Alives,
  /// at most one per dead cell: A + births <= cells; Alive::update destroys, it makes none.
  /// Candidate: compacted at Candidate::update to C candidates (dead cells); Alive::update adds
  /// one per dying cell (alive, so not among the C) and one per claimed empty cell (neither):
  /// C + made <= cells. (validate keeps cells <= 2^31; AnyHeap takes up to 2^31 - 1, and says so.)
  static std::uint32_t max_objects(std::uint64_t cells) {
    return static_cast<std::uint32_t>(cells);
  }
  /// The pool: room for two objects per cell (a phase makes the new object before it frees the
  /// old one: at most two per cell at any time), each one the larger request of Alive and
  /// Candidate plus 64 bytes (a realigned grant), and 64 MiB of slack for the allocator. 4096 x
  /// 4096 (docs/results.md's run): 4.4 GB; rw-malloc's 16 GiB limit is near 8100 x 8100.
  /// With --memory-mib: its bytes instead (the same for every allocator and for CUDA's device
  /// malloc heap, which run_game_of_life reserves before the first kernel).
  static std::uint64_t pool_bytes(GameOfLifeOptions const& o, std::uint64_t cells) {
    std::uint64_t const request = std::max(AnyAgents::template request_bytes<Alive>(),
                                           AnyAgents::template request_bytes<Candidate>());
    return pool_bytes_for(o.heap, 2 * cells * (request + 64) + (64ull << 20));
  }

  AnyApp(GameOfLifeOptions const& o, Rule const& rule, Grid const& initial)
      : board_(rule, initial),
        pool_bytes_(pool_bytes(o, board_.size())),
        heap_(pool_bytes_, max_objects(board_.size())) {
    board_.populate(heap_, initial);
    throw_on_failed_allocations(0);
  }

  /// The generation's do-alls; the enumeration inside them is added to enumeration_ms().
  Phases step() {
    double const before = heap_.enumeration_ms();
    Phases const p      = step_phases(heap_, board_.board(), clock_);
    enumeration_ms_ += heap_.enumeration_ms() - before;
    return p;
  }

  /// OutOfMemory when a make answered nullptr so far: the board's count or the allocator's
  /// nulls (cumulative; both synchronize). A full object array is no lack of memory: AnyHeap's
  /// own error says so first.
  void throw_on_failed_allocations(int generation) {
    std::uint64_t const failed = board_.failed(heap_.stream());
    std::uint64_t const nulls  = heap_.nulls();
    if (failed == 0 && nulls == 0) return;
    (void)heap_.template live<Agent>();  // throws AnyHeap's error if an object array overflowed
    std::string const name = AnyAgents::allocator_name();
    require_no_failed_allocations("game-of-life",
                                  name.c_str(),
                                  std::max(failed, nulls),
                                  at_step(generation, "generation"),
                                  "the allocator returned null " + std::to_string(nulls) +
                                      " times, pool " + std::to_string(pool_bytes_) + " bytes");
  }

  Census census() { return board_.census(heap_); }

  /// The state for check_world: the grid's pointers and kinds, the heap's live objects.
  World world() {
    World out   = board_.grid_world(heap_.stream());
    out.objects = export_objects<Agent, &Agent::export_view, ObjectView>(heap_, "game-of-life");
    return out;
  }
  /// The live count equals what world() exported.
  std::optional<std::string> heap_problem(std::size_t enumerated) {
    std::uint64_t const live = heap_.template live<Agent>();
    if (live == enumerated) return std::nullopt;
    return AnyAgents::allocator_name() + " heap: " + std::to_string(live) +
           " live objects, its enumeration " + std::to_string(enumerated);
  }

  CsvRow csv_row(char const* variant, int generation, Phases const& p) {
    return {variant, generation, census(), heap_.template live<Agent>(), 0, 0.0, p};
  }
  Grid alive_cells() const { return board_.alive_cells(heap_.stream()); }

  /// Milliseconds of enumeration inside step() (not the census', the check's or populate's).
  [[nodiscard]] double enumeration_ms() const { return enumeration_ms_; }
  AnyAgents& heap() { return heap_; }

 private:
  BoardState board_;
  std::uint64_t pool_bytes_ = 0;
  AnyAgents heap_;
  double enumeration_ms_ = 0;
  PhaseClock clock_{heap_.stream(), 2};
};

// ------------------------------------------------------------------------------ the runs

void write_row(std::FILE* csv, CsvRow const& r) {
  if (csv == nullptr) return;
  std::fprintf(csv,
               "%s,%d,%llu,%llu,%llu,%llu,%.6f,%.4f,%.4f\n",
               r.variant,
               r.iteration,
               static_cast<unsigned long long>(r.census.alive),
               static_cast<unsigned long long>(r.census.candidates),
               static_cast<unsigned long long>(r.live_objects),
               static_cast<unsigned long long>(r.allocated_blocks),
               r.fragmentation,
               r.phases.prepare_ms,
               r.phases.update_ms);
}

/// --check of a variant on objects after `generation`: I1-I4 (reference.hpp check_world) against
/// the reference's current and previous states, then the heap's own checks (the soa heap's: its
/// live-object count and the invariant catalog on a snapshot; another allocator's: its live
/// count). Prints the first problem; false when there is one.
template <class App>
bool check_objects(
    char const* variant, App& app, Grid const& current, Grid const& previous, int generation) {
  std::string const who =
      std::is_same_v<App, HeapApp> ? std::string() : std::string(variant) + ": ";
  auto const fail = [&](std::string const& what) {
    std::printf("game-of-life --check FAILED at generation %d: %s%s\n",
                generation,
                who.c_str(),
                what.c_str());
    return false;
  };
  World const world = app.world();
  if (auto v = check_world(world, current, previous)) return fail(*v);
  if (auto v = app.heap_problem(world.objects.size())) return fail(*v);
  return true;
}

bool check_due(GameOfLifeOptions const& o, int generation) {
  return o.check && (generation % o.check_every == 0 || generation == o.iterations);
}

/// The summary of a variant on objects: its times, defragmentation (soa heap) or enumeration
/// (another allocator), and the final population.
template <class App>
void print_summary(GameOfLifeOptions const& o, char const* variant, App& app, Phases const& t) {
  std::string const label = std::string(variant) + ":";
  char const* const l     = label.c_str();
  auto const c            = app.census();
  std::printf("%-9s %d generations, prepare %.3f ms, update %.3f ms, total %.3f ms\n",
              l,
              o.iterations,
              t.prepare_ms,
              t.update_ms,
              t.total());
  if constexpr (std::is_same_v<App, HeapApp>) {
    auto const stats = app.statistics();
    if (auto const& d = app.defrag_total(); d.defrag_calls > 0)
      std::printf("%-9s defragmentation %s, %.1f%% of the generations' time\n",
                  l,
                  app.defrag_summary().c_str(),
                  100.0 * d.defrag_ms / std::max(t.total(), 1e-9));
    std::printf(
        "%-9s final population alive %llu, candidates %llu; live objects %llu in %llu "
        "blocks, F %.4f\n",
        l,
        static_cast<unsigned long long>(c.alive),
        static_cast<unsigned long long>(c.candidates),
        static_cast<unsigned long long>(stats.used_slots),
        static_cast<unsigned long long>(stats.allocated_blocks),
        stats.fragmentation);
  } else {
    app.heap().print_enumeration("game-of-life", variant, app.enumeration_ms(), t.total());
    std::printf("%-9s final population alive %llu, candidates %llu; live objects %llu\n",
                l,
                static_cast<unsigned long long>(c.alive),
                static_cast<unsigned long long>(c.candidates),
                static_cast<unsigned long long>(app.heap().template live<Agent>()));
  }
}

/// Runs a variant on objects (HeapApp or AnyApp); returns the total step time (ms) or a negative
/// value when --check failed. With `final_alive`, downloads the final alive cells into it.
template <class App>
double run_variant(GameOfLifeOptions const& o,
                   char const* variant,
                   App& app,
                   Rule const& rule,
                   Grid const& initial,
                   std::FILE* csv,
                   ProfileCsv& profile,
                   Grid* final_alive) {
  constexpr bool is_heap = std::is_same_v<App, HeapApp>;
  Grid previous = initial, current = initial;
  if (o.check && !check_objects(variant, app, current, previous, 0)) return -1;
  (void)app.census();  // untimed: the first parallel_do of Agent allocates its scratch
  Phases total;
  for (int g = 1; g <= o.iterations; ++g) {
    Phases const p = app.step();
    app.throw_on_failed_allocations(g);
    IterationCost cost;
    cost.app_ms = p.total();
    if constexpr (is_heap) app.end_of_generation(cost);
    total.prepare_ms += p.prepare_ms;
    total.update_ms += p.update_ms;
    if (o.check) {
      previous = std::move(current);
      current  = gen_ca::step(previous, rule);
    }
    if (check_due(o, g) && !check_objects(variant, app, current, previous, g)) return -1;
    if constexpr (is_heap)
      if (profile.enabled()) profile.write(variant, g, app.statistics(), cost);
    if (csv != nullptr) write_row(csv, app.csv_row(variant, g, p));
  }
  print_summary(o, variant, app, total);
  if (final_alive != nullptr) *final_alive = app.alive_cells();
  double defrag_ms = 0;
  if constexpr (is_heap) defrag_ms = app.defrag_total().defrag_ms;
  return total.total() + defrag_ms;
}

/// The heap app; returns the total step time (ms) or a negative value when --check failed.
double run_heap(GameOfLifeOptions const& o,
                Rule const& rule,
                Grid const& initial,
                std::FILE* csv,
                ProfileCsv& profile,
                Grid* final_alive) {
  HeapApp app(o, rule, initial);
  std::printf("heap: %u blocks of %u bytes, %u Alive or %u Candidate objects per block\n",
              app.num_blocks(),
              static_cast<unsigned>(Types::block_bytes),
              static_cast<unsigned>(Types::capacity<Alive>),
              static_cast<unsigned>(Types::capacity<Candidate>));
  return run_variant(o, "heap", app, rule, initial, csv, profile, final_alive);
}

/// `game-of-life heap / <variant>: R x` and whether the final alive cells equal the heap's; the
/// rule is deterministic, so a difference is a failure (false).
bool compare_with_heap(GameOfLifeOptions const& o,
                       char const* variant,
                       double heap_ms,
                       double ms,
                       Grid const& heap_final,
                       Grid const& final_alive) {
  print_heap_ratio("game-of-life", variant, heap_ms, ms);
  auto const diff = gen_ca::first_difference(heap_final, final_alive);
  std::printf("game-of-life heap vs %s after %d generations: alive %llu / %llu, %s\n",
              variant,
              o.iterations,
              static_cast<unsigned long long>(gen_ca::population(heap_final).alive),
              static_cast<unsigned long long>(gen_ca::population(final_alive).alive),
              diff ? ("DIFFER at " + diff->to_string()).c_str() : "equal");
  return !diff;
}

/// The app on each allocator of --allocators after the heap; false when a --check or the
/// comparison with the heap failed. `heap_ms` nullopt: the heap did not run (--only), nothing is
/// compared with it.
bool run_allocators(GameOfLifeOptions const& o,
                    Rule const& rule,
                    Grid const& initial,
                    std::FILE* csv,
                    ProfileCsv& profile,
                    std::optional<double> heap_ms,
                    Grid const& heap_final) {
  for (auto const& name : o.allocators) {
    Grid final_alive;
    double ms = 0;
    with_allocator(name, [&](auto tag) {
      using App = AnyApp<typename decltype(tag)::type>;
      App app(o, rule, initial);
      std::printf("%s: pool %llu bytes, room for %u objects per type between two compactions\n",
                  name.c_str(),
                  static_cast<unsigned long long>(App::pool_bytes(o, initial.cells.size())),
                  static_cast<unsigned>(App::max_objects(initial.cells.size())));
      ms = run_variant(o, name.c_str(), app, rule, initial, csv, profile, &final_alive);
    });
    if (ms < 0) return false;
    if (heap_ms && !compare_with_heap(o, name.c_str(), *heap_ms, ms, heap_final, final_alive))
      return false;
  }
  return true;
}

/// The static dense-grid baseline; returns the total step time (ms), negative when --check failed.
double run_baseline(GameOfLifeOptions const& o,
                    Rule const& rule,
                    Grid const& initial,
                    std::FILE* csv) {
  std::size_t const n = initial.cells.size();
  // Its object arrays (--memory-mib): the two state grids, which hold what the heap variant's
  // Alive and Candidate objects stand for (the heap variant's pointer grid is outside its heap).
  std::uint64_t const object_bytes = 2 * std::uint64_t{n} * sizeof(std::uint8_t);
  require_baseline_fits(o.heap, "game-of-life", object_bytes);
  std::printf("baseline: dense grid of states, double-buffered; object arrays %llu bytes\n",
              static_cast<unsigned long long>(object_bytes));
  cudart::device_buffer<std::uint8_t> cur(n, "game-of-life baseline grid");
  cudart::device_buffer<std::uint8_t> next(n, "game-of-life baseline grid");
  cudart::copy_to_device_async(cur.data(), initial.cells.data(), n, nullptr);
  Grid reference = initial;
  Grid host(initial.width, initial.height);
  PhaseClock clock(nullptr, 1);  // the same clock as the heap variant's
  double total = 0;
  for (int g = 1; g <= o.iterations; ++g) {
    Phases p;
    clock.start();
    gen_ca::dense_step_kernel<false>
        <<<blocks_for(n), kThreads>>>(rule, initial.width, initial.height, cur.data(), next.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    clock.mark();
    p.update_ms = clock.phases_ms().at(0);
    total += p.update_ms;
    cur.swap(next);
    if (o.check) reference = gen_ca::step(reference, rule);
    bool const need_host = check_due(o, g) || csv != nullptr || g == o.iterations;
    if (!need_host) continue;
    cudart::copy_to_host(host.cells.data(), cur.data(), n);
    if (check_due(o, g))
      if (auto d = gen_ca::first_difference(reference, host)) {
        std::printf(
            "game-of-life --check FAILED at generation %d: baseline grid differs from the CPU "
            "reference at %s\n",
            g,
            d->to_string().c_str());
        return -1;
      }
    auto const pop = gen_ca::population(host);
    write_row(csv, {"baseline", g, {pop.alive, 0}, 0, 0, 0.0, p});
    if (g == o.iterations) {
      std::printf("baseline: %d generations, step %.3f ms\n", o.iterations, total);
      std::printf("baseline: final population alive %llu\n",
                  static_cast<unsigned long long>(pop.alive));
    }
  }
  return total;
}

void validate(GameOfLifeOptions const& o, Rule const& rule) {
  if (o.width == 0 || o.height == 0)
    throw std::invalid_argument("game-of-life: --width and --height must be >= 1");
  if (std::uint64_t{o.width} * o.height > (std::uint64_t{1} << 31))
    throw std::invalid_argument("game-of-life: at most 2^31 cells");
  if (o.iterations < 0) throw std::invalid_argument("game-of-life: --iterations must be >= 0");
  if (o.check_every < 1) throw std::invalid_argument("game-of-life: --check-every must be >= 1");
  if (rule.generations != 2)
    throw std::invalid_argument("game-of-life: rule '" + o.rule + "' has " +
                                std::to_string(rule.generations) +
                                " states; game-of-life takes two-state rules S/B/2 (gen-ca runs "
                                "rules with dying states)");
  apps::validate(o.heap);
  apps::validate_allocators(o.allocators);
}

}  // namespace

int run_game_of_life(GameOfLifeOptions const& o) {
  Rule const rule = gen_ca::parse_rule(o.rule);
  validate(o, rule);
  Grid const initial = gen_ca::initial_grid(o.width, o.height, o.seed, o.density);
  auto const d       = cudart::probe_device();
  if (!d.available) throw NoDevice(d.reason);
  std::printf("%s\n", cudart::device_line(d).c_str());
  std::printf(
      "game-of-life: %ux%u torus, rule %s (S mask 0x%x, B mask 0x%x), density %.3f, seed %llu, "
      "%d generations%s%s\n"
      "game-of-life: heap: %s\n",
      o.width,
      o.height,
      o.rule.c_str(),
      rule.survive,
      rule.birth,
      o.density,
      static_cast<unsigned long long>(o.seed),
      o.iterations,
      o.check ? (", --check every " + std::to_string(o.check_every)).c_str() : "",
      planted_bug_note(core::mutant::kPlanted).c_str(),
      describe(o.heap).c_str());
  CsvFile const csv = open_csv(o.csv,
                               "game-of-life",
                               "variant,iteration,alive,candidates,live_objects,allocated_blocks,"
                               "fragmentation,prepare_ms,update_ms");
  ProfileCsv profile;
  if (!o.profile.empty()) profile = ProfileCsv(o.profile, "game-of-life", Types::block_bytes);
  // Before any kernel of this file runs (allocators.cuh).
  reserve_cuda_malloc(
      o.allocators, AnyApp<malloc_family::CudaMallocAdapter>::pool_bytes(o, initial.cells.size()));
  Grid heap_final;  // downloaded only for the comparison with other allocators
  std::optional<double> heap_ms;
  if (o.heap.run_heap) {
    heap_ms = run_heap(
        o, rule, initial, csv.get(), profile, o.allocators.empty() ? nullptr : &heap_final);
    if (*heap_ms < 0) return 1;
  }
  std::optional<double> base_ms;
  if (o.baseline) {
    base_ms = run_baseline(o, rule, initial, csv.get());
    if (*base_ms < 0) return 1;
  }
  if (heap_ms)
    report_heap_and_baseline("game-of-life", *heap_ms, base_ms);
  else if (base_ms)
    print_result_line("game-of-life", "baseline", *base_ms, std::nullopt);
  if (!run_allocators(o, rule, initial, csv.get(), profile, heap_ms, heap_final)) return 1;
  if (o.check) std::printf("game-of-life --check passed\n");
  return 0;
}

}  // namespace heaplab::apps::game_of_life
