// `heaplab_apps wa-tor` (wa_tor.hpp; docs/apps.md "wa-tor"): Dewdney's wa-tor as DynaSOAr (Table 1,
// sec. 6.3) and SoaAlloc (sec. 3, Fig. 5) run it, in three variants measured in one process:
//
//   heap:        Fish and Shark (subclasses of the abstract Agent) are soa::Heap objects; the
//                cells are a dense array of Agent* (an external root array for compact::Compactor,
//                docs/compaction.md) plus the per-cell request/accept words. Births: heap.make
//                inside parallel_do; deaths: heap.destroy (a starving shark of itself, an eaten
//                fish by the shark: another type, allowed in parallel_do<Shark>, DynaSOAr
//                sec. 2.1).
//   baseline:    the static SOA baseline (DynaSOAr's "baseline" column): agent fields stored in
//                dense per-cell arrays, one agent slot per cell, no allocation.
//   cuda-malloc: the same app with AoS agent structs from device malloc/free (SoaAlloc Fig. 5).
//   --allocators (DynaSOAr Fig. 10; AnyVariant): the heap variant's code, cells and phases with
//                its Fish and Shark objects from another allocator's malloc/free (AOS) and
//                AnyHeap's standalone do-all (common/any_heap.cuh), whose enumeration time is
//                reported apart. Separate from the cuda-malloc variant above.
//
// One iteration = fish round + shark round, each prepare / decide / move (rules.hpp):
//   prepare: the request words of all cells are zeroed (cudaMemsetAsync).
//   decide:  every agent of the round picks its target from the state at the start of the phase
//            and ORs its direction bit into the target's request word (relaxed atomicOr: OR is
//            commutative, the result does not depend on thread order); then one kernel over the
//            cells applies the per-cell priority rule (accept_request).
//   move:    every agent of the round whose target accepted it moves. Only the accepted agent
//            writes its target cell and only the agent of a cell writes that cell (the cell it
//            leaves, where a child may be born), so the writes of one move phase are disjoint.
// Phases are separate kernels on one stream: a kernel boundary orders every write of a phase
// before the next reads it (the linearization point of a round is the end of its move kernel).
// Hence every variant computes exactly the CPU reference's populations (reference.hpp).
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "common/allocators.cuh"
#include "common/allocators.hpp"
#include "common/any_heap.cuh"
#include "common/defrag_loop.cuh"
#include "common/grid.cuh"
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
#include "rules.hpp"
#include "wa_tor.hpp"

namespace heaplab::apps::wa_tor {

struct Types;
class Agent;

/// Device counters of one iteration, in Counters' order, plus failed allocations.
enum Counter : int { kFishBirths, kFishEaten, kSharkBirths, kSharkStarved, kFailedAllocs, kLive };

/// The device view of the heap variant's cells (trivially copyable, passed by value).
struct Cells {
  Params p;
  std::uint32_t iteration      = 0;
  std::uint32_t round          = 0;
  Agent** agent                = nullptr;  // W * H; nullptr: empty
  std::uint32_t* requests      = nullptr;  // bit d: the agent in neighbour d asks for this cell
  std::uint32_t* accepted      = nullptr;  // the cell whose agent this cell accepted, or kNone
  unsigned long long* counters = nullptr;
};

/// An agent (DynaSOAr Table 1: abstract Agent, concrete Fish and Shark).
class Agent {
 public:
  HEAPLAB_SOA_ABSTRACT(Agent);
  HEAPLAB_SOA_FIELDS(Agent,
                     (std::uint32_t, cell_),    // the cell it is in
                     (std::uint32_t, target_),  // decide's choice, or kNone
                     (std::uint32_t, timer_));  // breeding timer

  HEAPLAB_HD Agent(std::uint32_t cell, std::uint32_t timer)
      : cell_(cell), target_(kNone), timer_(timer) {}

  __device__ void export_view(AgentView* out, unsigned long long* n);
  __device__ void noop() {}
};

class Fish : public Agent {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Fish, Agent);
  HEAPLAB_HD Fish(std::uint32_t cell, std::uint32_t timer) : Agent(cell, timer) {}
  __device__ void decide(Cells w);
  /// Ref: soa::HeapRef<Types>, or AnyHeapRef<Types, Allocator> on another allocator.
  template <class Ref>
  __device__ void move(Ref heap, Cells w);
};

class Shark : public Agent {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Shark, Agent, (std::uint32_t, energy_));
  HEAPLAB_HD Shark(std::uint32_t cell, std::uint32_t timer, std::uint32_t energy)
      : Agent(cell, timer), energy_(energy) {}
  __device__ void decide(Cells w);
  template <class Ref>
  __device__ void move(Ref heap, Cells w);
};

struct Types : soa::HeapTypes<Agent, Fish, Shark> {};

namespace {

__device__ Kind kind_of(Agent* a) {
  if (a == nullptr) return kEmpty;
  auto const t = core::pointer_type(reinterpret_cast<std::uint64_t>(a));
  return t == Types::type_id<Fish> ? kFish : kShark;
}

/// The cell an agent in cell c looks at, asks for and moves to in direction d: rules.hpp's
/// neighbour (the accept phase's neighbour too), or the planted bug wa_tor_north_wrap_uses_width.
__device__ std::uint32_t toward(Params const& p, std::uint32_t c, std::uint32_t d) {
  return neighbour<kMutantNorthWrapUsesWidth>(p, c, d);
}

/// Bit d: neighbour d holds `k`.
template <class KindAt>
__device__ std::uint32_t mask_of(Params const& p, std::uint32_t c, Kind k, KindAt kind_at) {
  std::uint32_t m = 0;
  for (std::uint32_t d = 0; d < 4; ++d) m |= (kind_at(toward(p, c, d)) == k ? 1u : 0u) << d;
  return m;
}

}  // namespace

__device__ void Agent::export_view(AgentView* out, unsigned long long* n) {
  AgentView v;
  v.handle = reinterpret_cast<std::uint64_t>(this);
  v.kind   = kind_of(this);
  v.cell   = cell_;
  v.timer  = timer_;
  v.energy = v.kind == kShark ? static_cast<std::uint32_t>(static_cast<Shark*>(this)->energy_) : 0u;
  // order: relaxed (a unique output index; the output is read after the kernel)
  out[atomicAdd(n, 1ull)] = v;
}

__device__ void Fish::decide(Cells w) {
  std::uint32_t const c = cell_;
  auto const at         = [&](std::uint32_t j) { return kind_of(w.agent[j]); };
  std::uint32_t const d =
      agent_choice(w.p, w.iteration, kFishRound, c, mask_of(w.p, c, kEmpty, at));
  target_ = d == kNone ? kNone : toward(w.p, c, d);
  // order: relaxed (request bits, read by the next kernel)
  if (d != kNone) atomicOr(&w.requests[toward(w.p, c, d)], 1u << opposite(d));
}

template <class Ref>
__device__ void Fish::move(Ref heap, Cells w) {
  std::uint32_t const c = cell_;
  std::uint32_t const t = target_;
  std::uint32_t timer   = next_timer(timer_, w.p.fish_spawn);
  if (t != kNone && w.accepted[t] == c) {
    w.agent[t]   = this;
    cell_        = t;
    Agent* child = nullptr;
    if (timer >= w.p.fish_spawn) {
      timer = 0;
      child = heap.template make<Fish>(c, 0u);
      // order: relaxed (a count, read by the host after the kernel)
      atomicAdd(&w.counters[child != nullptr ? kFishBirths : kFailedAllocs], 1ull);
    }
    w.agent[c] = child;
  }
  timer_ = timer;
}

__device__ void Shark::decide(Cells w) {
  std::uint32_t const c    = cell_;
  auto const at            = [&](std::uint32_t j) { return kind_of(w.agent[j]); };
  std::uint32_t const fish = mask_of(w.p, c, kFish, at);
  std::uint32_t const cand = fish != 0 ? fish : mask_of(w.p, c, kEmpty, at);
  std::uint32_t const d    = agent_choice(w.p, w.iteration, kSharkRound, c, cand);
  target_                  = d == kNone ? kNone : toward(w.p, c, d);
  // order: relaxed (request bits, read by the next kernel)
  if (d != kNone) atomicOr(&w.requests[toward(w.p, c, d)], 1u << opposite(d));
}

template <class Ref>
__device__ void Shark::move(Ref heap, Cells w) {
  std::uint32_t const c = cell_;
  std::uint32_t const t = target_;
  std::uint32_t timer   = next_timer(timer_, w.p.shark_spawn);
  std::uint32_t energy  = energy_ - 1u;
  bool const moved      = t != kNone && w.accepted[t] == c;
  std::uint32_t at      = c;
  if (moved) {
    Agent* const prey = w.agent[t];  // only this shark touches cell t in this phase
    if (prey != nullptr) {
      energy = fed(w.p, energy);
      // order: relaxed (a count, read by the host after the kernel)
      atomicAdd(&w.counters[kFishEaten], 1ull);
      // MUTANT wa_tor_shark_eats_without_free: the eaten fish's object stays allocated.
      if constexpr (!kMutantEatWithoutFree) heap.destroy(static_cast<Fish*>(prey));
    }
    w.agent[t] = this;
    w.agent[c] = nullptr;
    cell_      = t;
    at         = t;
  }
  if (energy == 0) {  // starved
    w.agent[at] = nullptr;
    // order: relaxed (a count, read by the host after the kernel)
    atomicAdd(&w.counters[kSharkStarved], 1ull);
    heap.destroy(this);
    return;
  }
  if (moved && timer >= w.p.shark_spawn) {
    timer              = 0;
    Shark* const child = heap.template make<Shark>(c, 0u, w.p.shark_energy);
    // order: relaxed (a count, read by the host after the kernel)
    atomicAdd(&w.counters[child != nullptr ? kSharkBirths : kFailedAllocs], 1ull);
    w.agent[c] = child;
  }
  timer_  = timer;
  energy_ = energy;
}

namespace {

using Heap = soa::Heap<Types>;

enum : std::uint32_t { kStay = 0xFFFFFFFEu };  // dense variants: a mover without a target

__global__ void accept_kernel(Params p,
                              std::uint32_t it,
                              std::uint32_t round,
                              std::uint32_t const* requests,
                              std::uint32_t* accepted) {
  for (std::uint64_t i = thread_index(); i < p.cells(); i += thread_stride()) {
    auto const c = static_cast<std::uint32_t>(i);
    accepted[c]  = accept_request(p, it, round, c, requests[c]);
  }
}

/// Ref: soa::HeapRef<Types> or AnyHeapRef<Types, Allocator>.
template <class Ref>
__global__ void heap_populate_kernel(Ref heap, Cells w, double fd, double sd) {
  for (std::uint64_t i = thread_index(); i < w.p.cells(); i += thread_stride()) {
    auto const c = static_cast<std::uint32_t>(i);
    Kind const k = initial_kind(w.p, fd, sd, c);
    Agent* a     = nullptr;
    if (k == kFish) a = heap.template make<Fish>(c, initial_timer(w.p, k, c));
    if (k == kShark) a = heap.template make<Shark>(c, initial_timer(w.p, k, c), w.p.shark_energy);
    // order: relaxed (a count, read by the host after the kernel)
    if (k != kEmpty && a == nullptr) atomicAdd(&w.counters[kFailedAllocs], 1ull);
    w.agent[c] = a;
  }
}

__global__ void heap_cells_view_kernel(Cells w, CellView* out) {
  for (std::uint64_t i = thread_index(); i < w.p.cells(); i += thread_stride()) {
    Agent* const a = w.agent[i];
    out[i] = CellView{reinterpret_cast<std::uint64_t>(a), static_cast<std::uint8_t>(kind_of(a))};
  }
}

// ---- the dense variants (baseline, cuda-malloc): one kernel set over a storage policy ----------

/// The static SOA baseline: agent fields in per-cell arrays.
struct DenseStore {
  std::uint8_t* kind;
  std::uint32_t* timer;
  std::uint32_t* energy;
  __device__ Kind kind_at(std::uint32_t c) const { return static_cast<Kind>(kind[c]); }
  __device__ void load(std::uint32_t c, std::uint32_t& t, std::uint32_t& e) const {
    t = timer[c];
    e = energy[c];
  }
  __device__ void store(std::uint32_t c, std::uint32_t t, std::uint32_t e) const {
    timer[c]  = t;
    energy[c] = e;
  }
  __device__ void eat(std::uint32_t, unsigned long long*) const {}
  __device__ void move(std::uint32_t from, std::uint32_t to) const {
    kind[to]    = kind[from];
    kind[from]  = kEmpty;
    timer[from] = energy[from] = 0;
  }
  __device__ bool spawn(
      std::uint32_t c, Kind k, std::uint32_t t, std::uint32_t e, unsigned long long*) const {
    kind[c] = k;
    store(c, t, e);
    return true;
  }
  __device__ void kill(std::uint32_t c, unsigned long long*) const {
    kind[c]  = kEmpty;
    timer[c] = energy[c] = 0;
  }
  __device__ void view(std::uint32_t c, CellView& cv, AgentView& av) const {
    if (kind[c] == kEmpty) return;
    cv = CellView{std::uint64_t{c} + 1, kind[c]};
    av = AgentView{std::uint64_t{c} + 1, kind[c], c, timer[c], energy[c]};
  }
};

/// The CUDA malloc variant's agent: one AoS struct per agent from device malloc.
struct MallocAgent {
  std::uint32_t cell;
  std::uint32_t timer;
  std::uint32_t energy;
  std::uint8_t kind;
};

struct MallocStore {
  MallocAgent** agent;
  __device__ Kind kind_at(std::uint32_t c) const {
    MallocAgent* const a = agent[c];
    return a == nullptr ? kEmpty : static_cast<Kind>(a->kind);
  }
  __device__ void load(std::uint32_t c, std::uint32_t& t, std::uint32_t& e) const {
    t = agent[c]->timer;
    e = agent[c]->energy;
  }
  __device__ void store(std::uint32_t c, std::uint32_t t, std::uint32_t e) const {
    agent[c]->timer  = t;
    agent[c]->energy = e;
  }
  __device__ void eat(std::uint32_t c, unsigned long long* counters) const {
    // MUTANT wa_tor_shark_eats_without_free: the eaten fish's struct is not freed.
    if constexpr (!kMutantEatWithoutFree) {
      free(agent[c]);
      // order: relaxed (a count, read by the host after the kernel)
      atomicAdd(&counters[kLive], ~0ull);  // -1
    }
  }
  __device__ void move(std::uint32_t from, std::uint32_t to) const {
    agent[to]       = agent[from];
    agent[to]->cell = to;
    agent[from]     = nullptr;
  }
  __device__ bool spawn(std::uint32_t c,
                        Kind k,
                        std::uint32_t t,
                        std::uint32_t e,
                        unsigned long long* counters) const {
    auto* const a = static_cast<MallocAgent*>(malloc(sizeof(MallocAgent)));
    agent[c]      = a;
    if (a == nullptr) return false;
    *a = MallocAgent{c, t, e, static_cast<std::uint8_t>(k)};
    // order: relaxed (a count, read by the host after the kernel)
    atomicAdd(&counters[kLive], 1ull);
    return true;
  }
  __device__ void kill(std::uint32_t c, unsigned long long* counters) const {
    free(agent[c]);
    agent[c] = nullptr;
    // order: relaxed (a count, read by the host after the kernel)
    atomicAdd(&counters[kLive], ~0ull);
  }
  __device__ void view(std::uint32_t c, CellView& cv, AgentView& av) const {
    MallocAgent* const a = agent[c];
    if (a == nullptr) return;
    auto const h = reinterpret_cast<std::uint64_t>(a);
    cv           = CellView{h, a->kind};
    av           = AgentView{h, a->kind, a->cell, a->timer, a->energy};
  }
};

template <class S>
__global__ void dense_populate_kernel(
    S s, Params p, double fd, double sd, unsigned long long* counters) {
  for (std::uint64_t i = thread_index(); i < p.cells(); i += thread_stride()) {
    auto const c = static_cast<std::uint32_t>(i);
    Kind const k = initial_kind(p, fd, sd, c);
    if (k == kEmpty) continue;
    // order: relaxed (a count, read by the host after the kernel)
    if (!s.spawn(c, k, initial_timer(p, k, c), k == kShark ? p.shark_energy : 0u, counters))
      atomicAdd(&counters[kFailedAllocs], 1ull);
  }
}

/// decide: target[c] is kNone unless cell c holds an agent of the round (kStay: no choice).
template <class S>
__global__ void dense_decide_kernel(S s,
                                    Params p,
                                    std::uint32_t it,
                                    std::uint32_t round,
                                    std::uint32_t* target,
                                    std::uint32_t* requests) {
  Kind const mover = round == kFishRound ? kFish : kShark;
  auto const at    = [&](std::uint32_t j) { return s.kind_at(j); };
  for (std::uint64_t i = thread_index(); i < p.cells(); i += thread_stride()) {
    auto const c = static_cast<std::uint32_t>(i);
    if (s.kind_at(c) != mover) {
      target[c] = kNone;
      continue;
    }
    std::uint32_t cand = 0;
    if (mover == kShark) cand = mask_of(p, c, kFish, at);
    if (cand == 0) cand = mask_of(p, c, kEmpty, at);
    std::uint32_t const d = agent_choice(p, it, round, c, cand);
    target[c]             = d == kNone ? kStay : toward(p, c, d);
    // order: relaxed (request bits, read by the next kernel)
    if (d != kNone) atomicOr(&requests[toward(p, c, d)], 1u << opposite(d));
  }
}

/// move: the thread of cell c acts iff decide gave c a target (c held a mover then), so an agent
/// that moved into a later cell is not moved twice; the same rules as Fish::move / Shark::move.
template <class S>
__global__ void dense_move_kernel(S s,
                                  Params p,
                                  std::uint32_t round,
                                  std::uint32_t const* target,
                                  std::uint32_t const* accepted,
                                  unsigned long long* counters) {
  bool const shark          = round == kSharkRound;
  Kind const mover          = shark ? kShark : kFish;
  std::uint32_t const spawn = shark ? p.shark_spawn : p.fish_spawn;
  for (std::uint64_t i = thread_index(); i < p.cells(); i += thread_stride()) {
    auto const c          = static_cast<std::uint32_t>(i);
    std::uint32_t const t = target[c];
    if (t == kNone) continue;
    std::uint32_t timer = 0, energy = 0;
    s.load(c, timer, energy);
    timer = next_timer(timer, spawn);
    if (shark) --energy;
    bool const moved = t != kStay && accepted[t] == c;
    std::uint32_t at = c;
    if (moved) {
      if (s.kind_at(t) == kFish) {
        energy = fed(p, energy);
        // order: relaxed (a count, read by the host after the kernel)
        atomicAdd(&counters[kFishEaten], 1ull);
        s.eat(t, counters);
      }
      s.move(c, t);
      at = t;
    }
    if (shark && energy == 0) {
      s.kill(at, counters);
      // order: relaxed (a count, read by the host after the kernel)
      atomicAdd(&counters[kSharkStarved], 1ull);
      continue;
    }
    if (moved && timer >= spawn) {
      timer         = 0;
      bool const ok = s.spawn(c, mover, 0u, shark ? p.shark_energy : 0u, counters);
      // order: relaxed (a count, read by the host after the kernel)
      atomicAdd(&counters[!ok ? kFailedAllocs : shark ? kSharkBirths : kFishBirths], 1ull);
    }
    s.store(at, timer, energy);
  }
}

template <class S>
__global__ void dense_view_kernel(
    S s, Params p, CellView* cells, AgentView* agents, unsigned long long* n) {
  for (std::uint64_t i = thread_index(); i < p.cells(); i += thread_stride()) {
    auto const c = static_cast<std::uint32_t>(i);
    CellView cv;
    AgentView av;
    s.view(c, cv, av);
    cells[c] = cv;
    // order: relaxed (a unique output index; the output is read after the kernel)
    if (cv.agent != 0) agents[atomicAdd(n, 1ull)] = av;
  }
}

__global__ void malloc_free_all_kernel(MallocStore s, Params p) {
  for (std::uint64_t i = thread_index(); i < p.cells(); i += thread_stride()) {
    free(s.agent[i]);
    s.agent[i] = nullptr;
  }
}

struct Phases {
  double prepare_ms = 0;
  double decide_ms  = 0;
  double move_ms    = 0;
  [[nodiscard]] double total() const { return prepare_ms + decide_ms + move_ms; }
  void add(Phases const& o) {
    prepare_ms += o.prepare_ms;
    decide_ms += o.decide_ms;
    move_ms += o.move_ms;
  }
  /// From a PhaseClock's times of one iteration: prepare, decide, move per round.
  static Phases of_rounds(std::vector<float> const& ms) {
    Phases ph;
    for (std::size_t i = 0; i + 2 < ms.size(); i += 3) {
      ph.prepare_ms += ms[i];
      ph.decide_ms += ms[i + 1];
      ph.move_ms += ms[i + 2];
    }
    return ph;
  }
};

/// The per-type memory profile of one iteration (heap variant; zeros elsewhere).
struct Profile {
  std::uint64_t live_objects = 0;
  std::uint64_t fish_blocks  = 0;
  std::uint64_t shark_blocks = 0;
  double fish_f              = 0;
  double shark_f             = 0;
  double heap_f              = 0;
};

/// What every variant offers the driver.
class Variant {
 public:
  virtual ~Variant()                           = default;
  virtual char const* name() const             = 0;
  virtual Phases step(std::uint32_t iteration) = 0;  // one iteration, timed
  virtual StateView view()                     = 0;  // for --check
  virtual std::optional<Violation> extra_checks() { return std::nullopt; }
  virtual Profile profile() { return {}; }
  /// The heap's end of iteration: the defragmentation policy (CompactGpu sec. 3.7) and the
  /// memory profile row; no-ops in the dense variants.
  virtual void end_of_iteration(std::uint32_t, IterationCost&, ProfileCsv&) {}
  virtual IterationCost defrag_total() const { return {}; }
  virtual std::string defrag_summary() const { return {}; }

  /// The counters of the last step (zeroed at each step). Throws OutOfMemory when an allocation
  /// answered null (require_allocations): run_variant reads them right after each step, so a run
  /// that does not fit ends with exit 5 before any --check comparison sees its state.
  Counters counters(std::uint32_t iteration) {
    std::vector<unsigned long long> h(6);
    cudart::copy_to_host(h.data(), counters_.data(), 6);
    require_allocations(iteration, h[kFailedAllocs]);
    live_ = h[kLive];
    return {h[kFishBirths], h[kFishEaten], h[kSharkBirths], h[kSharkStarved]};
  }

 protected:
  explicit Variant(std::uint64_t cells) : counters_(6, "wa-tor counters"), cells_(cells) {
    counters_.set_zero_async(nullptr);  // legacy default stream: the heap's stream too
  }
  /// Throws OutOfMemory when allocations of this variant answered null by `iteration` (0: its
  /// set-up); `failed`: the makes of the last step that got no agent. Here every such make is
  /// the allocator's null (cuda-malloc; the baseline allocates nothing); the object variants
  /// read their allocator's own cumulative count.
  virtual void require_allocations(std::uint32_t iteration, unsigned long long failed) {
    require_no_failed_allocations(
        "wa-tor", name(), failed, at_step(iteration), failed_allocs_hint());
  }
  /// What the variant's allocator had (OutOfMemory's detail).
  virtual std::string failed_allocs_hint() const { return ""; }
  void zero_iteration_counters(cudaStream_t s) {  // all but kLive
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(counters_.data(), 0, 5 * sizeof(unsigned long long), s));
  }
  StateView download(CellView const* cells,
                     AgentView const* agents,
                     unsigned long long const* n,
                     cudaStream_t s) {
    StateView v;
    v.cells.resize(cells_);
    cudart::copy_to_host(v.cells.data(), cells, cells_, s);
    auto const count = cudart::value_to_host(n, s);
    v.agents.resize(count);
    cudart::copy_to_host(v.agents.data(), agents, count, s);
    return v;
  }
  /// An object variant's state on H (soa::Heap<Types> or AnyHeap<Types, Allocator>): the cells
  /// and every Fish and Shark object H holds (a leaked object too); live_objects unset.
  template <class H>
  StateView view_objects(H& heap, Cells const& w) {
    auto const s = heap.stream();
    cudart::device_buffer<CellView> cells(cells_, "wa-tor cell view");
    cudart::device_buffer<AgentView> agents(cells_, "wa-tor agent view");
    cudart::device_buffer<unsigned long long> n(1, "wa-tor agent count");
    n.set_zero_async(s);
    heap_cells_view_kernel<<<blocks_for(cells_), kThreads, 0, s>>>(w, cells.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    heap.template parallel_do<Agent, &Agent::export_view>(agents.data(), n.data());
    return download(cells.data(), agents.data(), n.data(), s);
  }
  cudart::device_buffer<unsigned long long> counters_;
  std::uint64_t cells_;
  unsigned long long live_ = 0;
};

// ---- the object variants (heap, other allocators): cells of Agent* over a heap of objects -------

/// The cells' device arrays of an object variant.
struct CellBuffers {
  explicit CellBuffers(std::uint64_t cells)
      : agent(cells, "wa-tor cell agents"),
        requests(cells, "wa-tor requests"),
        accepted(cells, "wa-tor accepted") {}
  /// Their device view (iteration and round 0).
  Cells view(Params const& p, unsigned long long* counters) {
    Cells w;
    w.p        = p;
    w.agent    = agent.data();
    w.requests = requests.data();
    w.accepted = accepted.data();
    w.counters = counters;
    return w;
  }
  cudart::device_buffer<Agent*> agent;
  cudart::device_buffer<std::uint32_t> requests;
  cudart::device_buffer<std::uint32_t> accepted;
};

/// The initial agents on H (soa::Heap<Types> or AnyHeap<Types, Allocator>) and the cells'
/// pointers to them; asynchronous on H's stream.
template <class H>
void populate(H& heap, Cells const& w, WaTorOptions const& o) {
  using R = std::decay_t<decltype(heap.ref())>;
  heap_populate_kernel<R><<<blocks_for(w.p.cells()), kThreads, 0, heap.stream()>>>(
      heap.ref(), w, o.fish_density, o.shark_density);
  HEAPLAB_CUDA_TRY(cudaGetLastError());
}

/// One iteration on H (the top of this file): per round prepare, decide, move, timed by `clock`.
template <class H>
Phases step_phases(H& heap, Cells const& cells, std::uint32_t it, PhaseClock& clock) {
  using R               = std::decay_t<decltype(heap.ref())>;
  auto const s          = heap.stream();
  std::uint64_t const n = cells.p.cells();
  clock.start();
  for (std::uint32_t round : {std::uint32_t{kFishRound}, std::uint32_t{kSharkRound}}) {
    Cells w     = cells;
    w.iteration = it;
    w.round     = round;
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(w.requests, 0, n * sizeof(std::uint32_t), s));
    clock.mark();  // prepare
    auto const accept = [&] {
      accept_kernel<<<blocks_for(n), kThreads, 0, s>>>(w.p, it, round, w.requests, w.accepted);
      HEAPLAB_CUDA_TRY(cudaGetLastError());
      clock.mark();  // decide
    };
    // decide creates and destroys no agent: move, the round's last do-all (births, deaths),
    // runs on decide's enumeration (Heap::Enumeration).
    if (round == kFishRound) {
      auto fish = heap.template enumerate<Fish>();
      fish.template parallel_do<&Fish::decide>(w);
      accept();
      fish.template last_parallel_do<&Fish::move<R>>(heap.ref(), w);
    } else {
      auto sharks = heap.template enumerate<Shark>();
      sharks.template parallel_do<&Shark::decide>(w);
      accept();
      sharks.template last_parallel_do<&Shark::move<R>>(heap.ref(), w);
    }
    clock.mark();  // move
  }
  return Phases::of_rounds(clock.phases_ms());
}

class HeapVariant final : public Variant {
 public:
  HeapVariant(WaTorOptions const& o, Params const& p)
      : Variant(p.cells()),
        buffers_(p.cells()),
        heap_(Heap::with_blocks(heap_blocks(o, p), heap_options(o.heap))),
        defrag_(heap_, o.heap, {Types::type_id<Fish>, Types::type_id<Shark>}) {
    w_ = buffers_.view(p, counters_.data());
    populate(heap_, w_, o);
    (void)counters(0);
    // The cells' pointers are the only pointers to agents: a defragmentation rewrites them.
    defrag_.compactor().add_roots(
        {reinterpret_cast<std::uint64_t*>(buffers_.agent.data()), cells_, Types::type_id<Agent>});
    // Untimed: the first parallel_do allocates its scratch.
    heap_.parallel_do<Agent, &Agent::noop>();
    HEAPLAB_CUDA_TRY(cudaStreamSynchronize(heap_.stream()));
  }
  char const* name() const override { return "heap"; }
  std::uint32_t num_blocks() const { return heap_.config().num_blocks; }

  Phases step(std::uint32_t it) override {
    zero_iteration_counters(heap_.stream());
    return step_phases(heap_, w_, it, clock_);
  }

  StateView view() override {
    auto v         = view_objects(heap_, w_);
    v.live_objects = profile().live_objects;
    return v;
  }

  std::optional<Violation> extra_checks() override {
    auto const violations = check::check_all(heap_.snapshot());
    if (violations.empty()) return std::nullopt;
    return Violation{kNone,
                     "invariant catalog: " + std::to_string(violations.size()) +
                         " violations, first: " + violations.front().to_string()};
  }

  void end_of_iteration(std::uint32_t it, IterationCost& cost, ProfileCsv& prof) override {
    (void)defrag_.end_of_iteration(cost);
    if (prof.enabled()) prof.write("heap", it, heap_.statistics(), cost);
  }
  IterationCost defrag_total() const override { return defrag_.total(); }
  std::string defrag_summary() const override { return defrag_.summary(); }

  Profile profile() override {
    auto const st = heap_.statistics();
    auto const& f = st.types[Types::type_id<Fish>];
    auto const& k = st.types[Types::type_id<Shark>];
    return {f.used_slots + k.used_slots,
            f.allocated_blocks,
            k.allocated_blocks,
            f.fragmentation,
            k.fragmentation,
            st.fragmentation};
  }

 protected:
  /// heap.oom_count() counts every make that found no free slot since construction, the app's
  /// failed makes among them (the larger of the two, should a make fail for another reason).
  void require_allocations(std::uint32_t iteration, unsigned long long failed) override {
    require_no_failed_allocations("wa-tor",
                                  name(),
                                  std::max<std::uint64_t>(heap_.oom_count(), failed),
                                  at_step(iteration),
                                  failed_allocs_hint());
  }
  std::string failed_allocs_hint() const override {
    return "a heap of " + std::to_string(num_blocks()) + " blocks of " +
           std::to_string(Types::block_bytes) + " bytes; raise --heap-blocks or --memory-mib";
  }

 private:
  /// --heap-blocks, else --memory-mib's blocks, else 2 * (ceil(W*H / N_Fish) + ceil(W*H /
  /// N_Shark)) + 64.
  static std::uint32_t heap_blocks(WaTorOptions const& o, Params const& p) {
    std::uint64_t const n = p.cells();
    std::uint64_t const b = 2 * ((n + Types::capacity<Fish> - 1) / Types::capacity<Fish> +
                                 (n + Types::capacity<Shark> - 1) / Types::capacity<Shark>)+64;
    return heap_blocks_for(o.heap, Types::block_bytes, b, "wa-tor");
  }

  CellBuffers buffers_;
  Heap heap_;
  DefragLoop<Types> defrag_;
  PhaseClock clock_{heap_.stream(), 6};
  Cells w_;
};

// ---- other allocators (--allocators; common/any_heap.cuh, DynaSOAr Fig. 10) --------------------

/// The pool of an AnyVariant: --memory-mib, else 2 x W*H objects, each of the larger request (64
/// bytes for Fish and Shark) plus 64 bytes for a realigned grant (any_heap.cuh asks request + 63
/// when a grant is not 64-byte aligned), and 64 MiB for the allocator's own overhead. At most W*H
/// agents live at the end of every phase (one cell each); within one move kernel the objects alive
/// at its start plus its children are at most 2 x W*H (a child per agent that moved into a cell its
/// kind did not hold: fish into empty cells, sharks into fish or empty ones), even if the allocator
/// reused no byte freed in the same kernel.
std::uint64_t any_pool_bytes(WaTorOptions const& o, Params const& p) {
  std::uint64_t const request =
      std::max(any_heap_detail::request_bytes<Fish>(), any_heap_detail::request_bytes<Shark>());
  return pool_bytes_for(o.heap, 2 * p.cells() * (request + 64) + (std::uint64_t{64} << 20));
}

/// wa-tor on another allocator: Fish and Shark objects from Allocator's malloc, AOS, with
/// AnyHeap's standalone do-all; the cells, phases and checks are the heap variant's (CellBuffers,
/// populate, step_phases, view_objects). No defragmentation and no memory profile (the CSV's
/// live_objects and block columns are 0); --check's live objects are AnyHeap::live<Agent>().
///
/// max_objects (AnyHeap: objects of one concrete type created between two compactions) = W*H.
/// AnyHeap compacts Fish at every parallel_do<Fish> and Shark at every parallel_do<Shark>, so a
/// type's entries grow only in its own move kernel (the initial grid: at most W*H of each). Fish
/// are created only in Fish::move: the F fish at its start plus one child per fish that moved into
/// a cell that was empty, so F + births <= W*H. Sharks only in Shark::move: the S sharks at its
/// start (a starving shark's zeroed entry stays until the next compaction: it is among S) plus one
/// child per shark that moved into a cell that held no shark, so S + births <= W*H. (With the
/// planted bug wa_tor_shark_eats_without_free, leaked fish stay: AnyHeap then stops the run with
/// its overflow error instead of losing an object.)
template <class Allocator>
class AnyVariant final : public Variant {
 public:
  using AnyAgents = AnyHeap<Types, Allocator>;

  AnyVariant(WaTorOptions const& o, Params const& p, std::uint64_t pool_bytes)
      : Variant(p.cells()),
        name_(AnyAgents::allocator_name()),
        pool_bytes_(pool_bytes),
        buffers_(p.cells()),
        heap_(pool_bytes, static_cast<std::uint32_t>(p.cells())) {
    w_ = buffers_.view(p, counters_.data());
    populate(heap_, w_, o);
    (void)counters(0);
    // Untimed, as in the heap variant: the first do-all (AnyHeap's CUB storage exists already).
    heap_.template parallel_do<Agent, &Agent::noop>();
    HEAPLAB_CUDA_TRY(cudaStreamSynchronize(heap_.stream()));
  }
  char const* name() const override { return name_.c_str(); }

  Phases step(std::uint32_t it) override {
    zero_iteration_counters(heap_.stream());
    double const before = heap_.enumeration_ms();
    Phases const ph     = step_phases(heap_, w_, it, clock_);
    enumeration_ms_ += heap_.enumeration_ms() - before;  // not --check's
    return ph;
  }

  StateView view() override {
    auto v         = view_objects(heap_, w_);
    v.live_objects = heap_.template live<Agent>();
    return v;
  }

  /// `wa-tor <allocator>: enumeration E ms of T ms ...`: the iterations' enumeration (the
  /// compactions and counts of their do-alls, part of their phase times).
  void print_enumeration(double total_ms) const {
    heap_.print_enumeration("wa-tor", name(), enumeration_ms_, total_ms);
  }

 protected:
  /// The allocator's nulls (cumulative) end the run as OutOfMemory; a make that failed otherwise
  /// (an object array of W*H entries full, a grant beyond the pointer encoding) is a bug of
  /// AnyVariant's sizes, not a run that does not fit.
  void require_allocations(std::uint32_t iteration, unsigned long long failed) override {
    std::uint64_t const nulls = heap_.nulls();
    require_no_failed_allocations(
        "wa-tor", name(), nulls, at_step(iteration), failed_allocs_hint());
    if (failed != 0)
      throw std::runtime_error("wa-tor " + name_ + ": " + at_step(iteration) + ": " +
                               std::to_string(failed) + " allocations failed without a null: an " +
                               "object array of " + std::to_string(cells_) +
                               " entries was full (AnyVariant's max_objects)");
  }
  std::string failed_allocs_hint() const override {
    return "a pool of " + std::to_string(pool_bytes_) + " bytes";
  }

 private:
  std::string name_;
  std::uint64_t pool_bytes_;
  CellBuffers buffers_;
  AnyAgents heap_;
  PhaseClock clock_{heap_.stream(), 6};
  Cells w_;
  double enumeration_ms_ = 0;
};

/// The baseline and the CUDA malloc variant: the same kernels over a storage policy.
template <class S>
class DenseVariant final : public Variant {
 public:
  DenseVariant(char const* name, S store, WaTorOptions const& o, Params const& p)
      : Variant(p.cells()),
        name_(name),
        s_(store),
        p_(p),
        target_(p.cells(), "wa-tor targets"),
        requests_(p.cells(), "wa-tor requests"),
        accepted_(p.cells(), "wa-tor accepted") {
    dense_populate_kernel<<<blocks_for(cells_), kThreads>>>(
        s_, p_, o.fish_density, o.shark_density, counters_.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    (void)counters(0);
  }
  char const* name() const override { return name_; }

  Phases step(std::uint32_t it) override {
    zero_iteration_counters(nullptr);
    clock_.start();
    for (std::uint32_t round : {std::uint32_t{kFishRound}, std::uint32_t{kSharkRound}}) {
      HEAPLAB_CUDA_TRY(cudaMemsetAsync(requests_.data(), 0, cells_ * sizeof(std::uint32_t)));
      clock_.mark();  // prepare
      dense_decide_kernel<<<blocks_for(cells_), kThreads>>>(
          s_, p_, it, round, target_.data(), requests_.data());
      accept_kernel<<<blocks_for(cells_), kThreads>>>(
          p_, it, round, requests_.data(), accepted_.data());
      HEAPLAB_CUDA_TRY(cudaGetLastError());
      clock_.mark();  // decide
      dense_move_kernel<<<blocks_for(cells_), kThreads>>>(
          s_, p_, round, target_.data(), accepted_.data(), counters_.data());
      HEAPLAB_CUDA_TRY(cudaGetLastError());
      clock_.mark();  // move
    }
    return Phases::of_rounds(clock_.phases_ms());
  }

  StateView view() override {
    cudart::device_buffer<CellView> cells(cells_, "wa-tor cell view");
    cudart::device_buffer<AgentView> agents(cells_, "wa-tor agent view");
    cudart::device_buffer<unsigned long long> n(1, "wa-tor agent count");
    n.set_zero_async(nullptr);
    dense_view_kernel<<<blocks_for(cells_), kThreads>>>(
        s_, p_, cells.data(), agents.data(), n.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    auto v = download(cells.data(), agents.data(), n.data(), nullptr);
    if (std::is_same_v<S, MallocStore>) {
      (void)counters(0);  // refreshes live_ (mallocs - frees)
      v.live_objects = live_;
    }
    return v;
  }

  Profile profile() override {
    Profile pr;
    if (std::is_same_v<S, MallocStore>) pr.live_objects = live_;
    return pr;
  }

 protected:
  /// Only cuda-malloc's mallocs can fail: the size CUDA gave its device malloc heap.
  std::string failed_allocs_hint() const override {
    std::size_t bytes = 0;
    HEAPLAB_CUDA_TRY(cudaDeviceGetLimit(&bytes, cudaLimitMallocHeapSize));
    return "CUDA's device malloc heap of " + std::to_string(bytes) + " bytes";
  }

 private:
  char const* name_;
  S s_;
  Params p_;
  cudart::device_buffer<std::uint32_t> target_;
  cudart::device_buffer<std::uint32_t> requests_;
  cudart::device_buffer<std::uint32_t> accepted_;
  PhaseClock clock_{nullptr, 6};
};

void write_row(std::FILE* csv,
               char const* variant,
               std::uint32_t it,
               Population const& pop,
               Profile const& pr,
               Phases const& ph) {
  if (csv == nullptr) return;
  std::fprintf(csv,
               "%s,%u,%llu,%llu,%llu,%llu,%llu,%.6f,%.6f,%.6f,%.4f,%.4f,%.4f\n",
               variant,
               it,
               static_cast<unsigned long long>(pop.fish),
               static_cast<unsigned long long>(pop.sharks),
               static_cast<unsigned long long>(pr.live_objects),
               static_cast<unsigned long long>(pr.fish_blocks),
               static_cast<unsigned long long>(pr.shark_blocks),
               pr.fish_f,
               pr.shark_f,
               pr.heap_f,
               ph.prepare_ms,
               ph.decide_ms,
               ph.move_ms);
}

struct RunResult {
  bool ok        = true;
  double ms      = 0;
  int iterations = 0;
};

/// A variant's summary lines: defragmentation, time per phase, final population and heap.
void print_variant_summary(Variant& v, int iterations, Phases const& total, Population const& pop) {
  auto const pr     = v.profile();
  auto const defrag = v.defrag_total();
  if (defrag.defrag_calls > 0)
    std::printf("wa-tor %s: defragmentation %s, %.1f%% of the iterations' time\n",
                v.name(),
                v.defrag_summary().c_str(),
                100.0 * defrag.defrag_ms / std::max(total.total(), 1e-9));
  std::printf(
      "wa-tor %s: %d iterations, %.3f ms (prepare %.3f, decide %.3f, move %.3f; %.4f ms "
      "per iteration)\n",
      v.name(),
      iterations,
      total.total(),
      total.prepare_ms,
      total.decide_ms,
      total.move_ms,
      iterations > 0 ? total.total() / iterations : 0.0);
  std::printf("wa-tor %s: final population fish %llu, sharks %llu",
              v.name(),
              static_cast<unsigned long long>(pop.fish),
              static_cast<unsigned long long>(pop.sharks));
  if (pr.fish_blocks + pr.shark_blocks != 0)
    std::printf("; live objects %llu, blocks Fish %llu Shark %llu, F %.4f",
                static_cast<unsigned long long>(pr.live_objects),
                static_cast<unsigned long long>(pr.fish_blocks),
                static_cast<unsigned long long>(pr.shark_blocks),
                pr.heap_f);
  std::printf("\n");
}

/// Runs one variant for `iterations`; with --check compares with the CPU reference's populations
/// every iteration and runs check_state (+ extra_checks) every K iterations and after the last.
/// `populations`: the first variant fills it, later ones must agree with it exactly.
RunResult run_variant(Variant& v,
                      WaTorOptions const& o,
                      Params const& p,
                      int iterations,
                      std::vector<Population>& populations,
                      bool& agree,
                      std::FILE* csv,
                      ProfileCsv& prof) {
  auto const fail = [&](int it, std::string const& what) {
    std::printf("wa-tor --check FAILED at iteration %d (%s): %s\n", it, v.name(), what.c_str());
    return RunResult{false, 0, it};
  };
  World reference;
  if (o.check) reference = initial_world(p, o.fish_density, o.shark_density);
  Population pop = population(initial_world(p, o.fish_density, o.shark_density));
  if (o.check) {
    auto const r = check_state(p, v.view(), pop, {});
    if (r.violation) return fail(0, r.violation->to_string(p));
    if (auto x = v.extra_checks()) return fail(0, x->to_string(p));
  }
  if (populations.empty()) populations.push_back(pop);
  Phases total;
  for (int it = 1; it <= iterations; ++it) {
    auto const u    = static_cast<std::uint32_t>(it);
    Phases const ph = v.step(u);
    total.add(ph);
    Counters const c = v.counters(u);
    IterationCost cost;
    cost.app_ms = ph.total();
    v.end_of_iteration(u, cost, prof);  // the policy runs at quiescence, after the counters
    Population const prev = pop;
    pop                   = {prev.fish + c.fish_births - c.fish_eaten,
                             prev.sharks + c.shark_births - c.shark_starved};
    if (o.check) {
      Counters const rc = step(reference, u);
      if (!(rc == c))
        return fail(it,
                    "births/deaths differ from the CPU reference (fish births " +
                        std::to_string(c.fish_births) + " vs " + std::to_string(rc.fish_births) +
                        ", eaten " + std::to_string(c.fish_eaten) + " vs " +
                        std::to_string(rc.fish_eaten) + ", shark births " +
                        std::to_string(c.shark_births) + " vs " + std::to_string(rc.shark_births) +
                        ", starved " + std::to_string(c.shark_starved) + " vs " +
                        std::to_string(rc.shark_starved) + ")");
      if (it % o.check_every == 0 || it == iterations) {
        auto const r = check_state(p, v.view(), prev, c);
        if (r.violation) return fail(it, r.violation->to_string(p));
        if (auto x = v.extra_checks()) return fail(it, x->to_string(p));
        if (r.population != population(reference))
          return fail(it, "population differs from the CPU reference");
      }
    }
    if (static_cast<std::size_t>(it) < populations.size()) {
      if (populations[it] != pop) agree = false;
      if (populations[it] != pop && o.check)
        return fail(it,
                    "population fish " + std::to_string(pop.fish) + ", sharks " +
                        std::to_string(pop.sharks) + " differs from the heap variant's fish " +
                        std::to_string(populations[it].fish) + ", sharks " +
                        std::to_string(populations[it].sharks));
    } else {
      populations.push_back(pop);
    }
    if (csv != nullptr) write_row(csv, v.name(), u, pop, v.profile(), ph);
  }
  print_variant_summary(v, iterations, total, pop);
  return {true, total.total() + v.defrag_total().defrag_ms, iterations};
}

/// The model parameters of the options, checked (std::invalid_argument).
Params validated_params(WaTorOptions const& o) {
  Params p;
  p.width        = o.width;
  p.height       = o.height;
  p.seed         = o.seed;
  p.fish_spawn   = o.fish_spawn;
  p.shark_spawn  = o.shark_spawn;
  p.shark_energy = o.shark_energy;
  p.fish_energy  = o.fish_energy;
  p.max_energy   = o.max_energy;
  validate(p, o.fish_density, o.shark_density);
  if (o.iterations < 0) throw std::invalid_argument("wa-tor: --iterations must be >= 0");
  if (o.check_every < 1) throw std::invalid_argument("wa-tor: --check-every must be >= 1");
  if (o.cuda_malloc_iterations < 0)
    throw std::invalid_argument("wa-tor: --cuda-malloc-iterations must be >= 0");
  apps::validate_allocators(o.allocators);
  return p;
}

void print_header(WaTorOptions const& o, Params const& p) {
  std::printf(
      "wa-tor: %ux%u torus, seed %llu, density fish %.3f sharks %.3f, spawn fish %u "
      "sharks %u, shark energy %u (+%u per fish, max %u), %d iterations%s%s\n",
      p.width,
      p.height,
      static_cast<unsigned long long>(p.seed),
      o.fish_density,
      o.shark_density,
      p.fish_spawn,
      p.shark_spawn,
      p.shark_energy,
      p.fish_energy,
      p.max_energy,
      o.iterations,
      o.check ? (", --check every " + std::to_string(o.check_every)).c_str() : "",
      planted_bug_note(core::mutant::kPlanted).c_str());
}

/// What the variants of one run share: the options, the output files, and the populations of the
/// first variant that ran, which every later one must reproduce (run_variant).
struct Run {
  WaTorOptions const& o;
  Params const& p;
  std::FILE* csv;
  ProfileCsv& prof;
  std::vector<Population> populations;
  bool agree = true;  // the heap, baseline and cuda-malloc variants agreed

  RunResult variant(Variant& v, int iterations, bool& agreed) {
    return run_variant(v, o, p, iterations, populations, agreed, csv, prof);
  }
  RunResult variant(Variant& v) { return variant(v, o.iterations, agree); }
};

/// The result lines, same-run ratios and agreement of the heap, baseline and cuda-malloc
/// variants that ran; without the heap variant (--only) nothing compares with it.
void print_ratios(WaTorOptions const& o,
                  RunResult const& heap,
                  RunResult const& base,
                  RunResult const& mal,
                  bool agree) {
  auto const per = [](RunResult const& r) { return r.iterations > 0 ? r.ms / r.iterations : 0.0; };
  std::optional<double> const base_ms = o.baseline ? std::optional<double>(base.ms) : std::nullopt;
  if (!o.heap.run_heap) {
    if (base_ms) print_result_line("wa-tor", "baseline", *base_ms, std::nullopt);
    return;
  }
  report_heap_and_baseline("wa-tor", heap.ms, base_ms);
  if (o.cuda_malloc && per(heap) > 0)
    std::printf(
        "cuda-malloc / heap: %.2fx per iteration (same run; cuda-malloc ran %d of %d "
        "iterations)\n",
        per(mal) / per(heap),
        mal.iterations,
        o.iterations);
  if (o.baseline || o.cuda_malloc)
    std::printf(agree ? "variants agree: populations identical after every iteration they share\n"
                      : "variants DISAGREE: populations differ (run with --check to see where)\n");
}

/// The --cuda-malloc variant's CUDA malloc heap: --memory-mib, else generous (16 x the agents'
/// bytes for a full grid, at least 256 MiB).
std::uint64_t malloc_variant_heap_bytes(WaTorOptions const& o, Params const& p) {
  return pool_bytes_for(
      o.heap,
      std::max<std::uint64_t>(std::uint64_t{256} << 20, 16 * p.cells() * sizeof(MallocAgent)));
}

/// Sizes CUDA's one device malloc heap before any kernel of this file runs (CUDA fixes it when
/// this file's module loads; allocators.cuh): the --cuda-malloc variant's size, and with
/// --allocators cuda-malloc the larger of it and any_pool_bytes (with --memory-mib both are its
/// bytes). Returns the pool the cuda-malloc AnyVariant asks for: the size set, so that its Pool
/// finds the heap as it needs it.
std::uint64_t reserve_malloc_heaps(WaTorOptions const& o, Params const& p) {
  std::uint64_t const legacy = o.cuda_malloc ? malloc_variant_heap_bytes(o, p) : 0;
  // Before any kernel that calls malloc.
  if (o.cuda_malloc) HEAPLAB_CUDA_TRY(cudaDeviceSetLimit(cudaLimitMallocHeapSize, legacy));
  std::uint64_t const pool = std::max(any_pool_bytes(o, p), legacy);
  reserve_cuda_malloc(o.allocators, pool);
  return pool;
}

/// The heap variant: its header line and its run.
RunResult run_heap_variant(Run& run) {
  HeapVariant v(run.o, run.p);
  std::printf("heap: %u blocks of %u bytes; N_Fish %u, N_Shark %u\n",
              v.num_blocks(),
              static_cast<unsigned>(Types::block_bytes),
              static_cast<unsigned>(Types::capacity<Fish>),
              static_cast<unsigned>(Types::capacity<Shark>));
  return run.variant(v);
}

/// The baseline's object arrays per cell: what the heap variant keeps in its Fish and Shark
/// objects, the kind (the object's type; 1 byte), timer, energy and decide's target (4 bytes
/// each; DenseVariant's target array is Agent::target_). The request and accepted words are
/// cells every variant has alike, and a cell index is implicit in a dense array (Agent::cell_).
constexpr std::uint64_t kBaselineBytesPerCell = sizeof(std::uint8_t) + 3 * sizeof(std::uint32_t);

/// The static SOA baseline: its object arrays' bytes, checked against --memory-mib before they
/// are allocated, and its run.
RunResult run_baseline(Run& run) {
  std::size_t const n       = run.p.cells();
  std::uint64_t const bytes = n * kBaselineBytesPerCell;
  std::printf("baseline: object arrays %llu bytes (kind 1, timer 4, energy 4, target 4 per cell)\n",
              static_cast<unsigned long long>(bytes));
  require_baseline_fits(run.o.heap, "wa-tor", bytes);
  cudart::device_buffer<std::uint8_t> kind(n, "wa-tor baseline kind");
  cudart::device_buffer<std::uint32_t> timer(n, "wa-tor baseline timer");
  cudart::device_buffer<std::uint32_t> energy(n, "wa-tor baseline energy");
  kind.set_zero_async(nullptr);
  timer.set_zero_async(nullptr);
  energy.set_zero_async(nullptr);
  DenseVariant<DenseStore> v(
      "baseline", DenseStore{kind.data(), timer.data(), energy.data()}, run.o, run.p);
  return run.variant(v);
}

/// The --cuda-malloc variant for at most --cuda-malloc-iterations; the agents it still holds
/// are freed after its run (CUDA's heap outlives it). A null malloc leaves its cell empty and
/// ends the run with OutOfMemory at the next counters().
RunResult run_cuda_malloc(Run& run) {
  WaTorOptions const& o = run.o;
  int const iters = o.cuda_malloc_iterations > 0 ? std::min(o.cuda_malloc_iterations, o.iterations)
                                                 : o.iterations;
  cudart::device_buffer<MallocAgent*> agent(run.p.cells(), "wa-tor cuda-malloc cells");
  agent.set_zero_async(nullptr);
  MallocStore const store{agent.data()};
  RunResult r;
  {
    DenseVariant<MallocStore> v("cuda-malloc", store, o, run.p);
    r = run.variant(v, iters, run.agree);
  }
  malloc_free_all_kernel<<<blocks_for(run.p.cells()), kThreads>>>(store, run.p);
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  return r;
}

/// Runs the app on each allocator of --allocators (AnyVariant), after the other variants: its
/// summary, its enumeration time and, when the heap variant ran, the same-run ratio to it and
/// whether its populations equal the heap variant's after every iteration (with --check a
/// difference fails the run, as for the other variants). false when --check failed.
bool run_allocators(Run& run, std::uint64_t cuda_pool, RunResult const& heap) {
  for (auto const& name : run.o.allocators) {
    RunResult r;
    bool agree = true;
    with_allocator(name, [&](auto tag) {
      using A                  = typename decltype(tag)::type;
      std::uint64_t const pool = std::is_same_v<A, malloc_family::CudaMallocAdapter>
                                     ? cuda_pool
                                     : any_pool_bytes(run.o, run.p);
      AnyVariant<A> v(run.o, run.p, pool);
      r = run.variant(v, run.o.iterations, agree);
      if (r.ok) v.print_enumeration(r.ms);
    });
    if (!r.ok) return false;
    if (!run.o.heap.run_heap) continue;  // --only: no heap variant to compare with
    print_heap_ratio("wa-tor", name.c_str(), heap.ms, r.ms);
    std::printf(agree ? "wa-tor heap vs %s: populations identical after every iteration\n"
                      : "wa-tor heap vs %s: populations DIFFER (run with --check to see where)\n",
                name.c_str());
  }
  return true;
}

}  // namespace

int run_wa_tor(WaTorOptions const& o) {
  Params const p = validated_params(o);
  auto const d   = cudart::probe_device();
  if (!d.available) throw NoDevice(d.reason);
  std::printf("%s\n", cudart::device_line(d).c_str());
  std::uint64_t const cuda_pool = reserve_malloc_heaps(o, p);
  print_header(o, p);
  CsvFile const csv =
      open_csv(o.csv,
               "wa-tor",
               "variant,iteration,fish,sharks,live_objects,fish_blocks,shark_blocks,fish_"
               "fragmentation,shark_fragmentation,fragmentation,prepare_ms,decide_ms,move_ms");
  ProfileCsv prof;
  if (!o.profile.empty()) prof = ProfileCsv(o.profile, "wa-tor", Types::block_bytes);
  Run run{o, p, csv.get(), prof, {}};
  RunResult heap, base, mal;
  if (o.heap.run_heap && !(heap = run_heap_variant(run)).ok) return 1;
  if (o.baseline && !(base = run_baseline(run)).ok) return 1;
  if (o.cuda_malloc && !(mal = run_cuda_malloc(run)).ok) return 1;
  print_ratios(o, heap, base, mal, run.agree);
  if (!run_allocators(run, cuda_pool, heap)) return 1;
  if (o.check) std::printf("wa-tor --check passed\n");
  return 0;
}

}  // namespace heaplab::apps::wa_tor
