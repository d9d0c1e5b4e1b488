// `heaplab_apps nbody` and `heaplab_apps collision` (nbody.hpp; docs/apps.md "nbody",
// "collision"): DynaSOAr Table 1's n-body simulation and its variant with merging bodies
// (DynaSOAr Table 1 "collision", Listing 1; CompactGpu Fig. 11) on soa::Heap. Every body is one
// `Body` heap object, all made up front with parallel_new; collision destroys the absorbed ones,
// which empties slots all over the heap's blocks (the fragmentation of CompactGpu Fig. 11).
// One iteration is a sequence of do-alls on the heap's stream (DynaSOAr Fig. 1):
//
//   force: parallel_do<Body, &Body::compute_force>: every body sums the force of every other body
//          over a device_do<Body, &Body::add_force_to> (DynaSOAr sec. 2.1 device_do; reads every
//          body's position and mass, writes only its own force).
//   move:  parallel_do<Body, &Body::move>: v += F / m dt, x += v dt (its own fields only).
//   collision only:
//   pick:  parallel_do<Body, &Body::pick>: a device_do over all bodies finds the nearest other
//          body closer than the merge radius (ties: lower id; physics.hpp better_partner) and
//          stores it in merge_target_, and whether this body would absorb it (absorbs_: heavier,
//          equal masses: lower id). Reads positions, masses, ids; writes only its own fields.
//   merge: parallel_do<Body, &Body::merge>: a body whose target names it back (a mutual pair)
//          and that absorbs_ its target takes the target's mass and momentum (centre of mass
//          position) and sets the target's absorbed_ flag; the device merge counter counts it.
//   reap:  parallel_do<Body, &Body::reap>: an absorbed body destroys itself (DynaSOAr Listing 1
//          step_6_delete_merged); every other clears merge_target_.
//
// Memory orders: every phase is its own kernel on one stream, so the kernel boundary orders all
// writes of a phase before the next phase's reads (linearization point of iteration g: the end of
// its last kernel). Within a phase no field is both written and read by different threads: force
// and pick write only the calling body's force_ / merge_target_ / absorbs_, which no thread reads
// in that phase; in merge an absorber writes its own position, velocity and mass, which only its
// partner could read, and the partner (absorbs_ false, decided in pick from masses pick did not
// change) returns without reading anything; the absorber also reads the partner's fields, which
// nobody writes in merge, and writes the partner's absorbed_, read only in reap. The merge counter
// is a relaxed device-scope atomicAdd (a count, read after the kernel). Each mutual pair has
// exactly one absorber (absorbs is a strict total order), so each merge is counted once and every
// absorbed body is destroyed exactly once, by itself (parallel_do allows deleting `this`).
//
// The baseline (DynaSOAr's "baseline" column, category 2: "every object has a boolean active
// flag"): static SOA arrays with an alive flag, one thread per index, the same phases and the
// same physics.hpp arithmetic, forces summed in index order (the heap sums in heap order: the
// results agree within rounding, not bitwise; docs/apps.md "nbody").
//
// --memory-mib / --only (memory_budget.hpp; DynaSOAr Fig. 11): the heap's blocks, the
// allocators' pool and the baseline's object arrays (BaselineApp::object_bytes) get the same
// bytes. Bodies are made only at set-up, so a null there ends the variant with OutOfMemory
// (exit 5); the cumulative counts are read again at every --check point and at the end.
#include "common/allocators.cuh"
#include "common/allocators.hpp"
#include "common/any_heap.cuh"
#include "common/defrag_loop.cuh"
#include "common/grid.cuh"
#include "common/memory_budget.hpp"
#include "common/no_device.hpp"
#include "common/phase_clock.cuh"
#include "common/result_line.hpp"
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "heaplab/check/invariants.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/device_info.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "nbody.hpp"
#include "physics.hpp"
#include "reference.hpp"

namespace heaplab::apps::nbody {

struct Types;

/// The best merge partner seen so far by one body's pick loop (thread-local).
struct Partner;

/// The per-body arrays the checks download (indexed by id).
struct Export {
  double* pos_x       = nullptr;
  double* pos_y       = nullptr;
  double* vel_x       = nullptr;
  double* vel_y       = nullptr;
  double* mass        = nullptr;
  std::uint8_t* alive = nullptr;
};

/// One body (DynaSOAr Table 1 "collision": position, velocity, force, mass, merge target, flags).
/// nbody uses the same type and leaves the merge fields alone.
class Body {
 public:
  HEAPLAB_SOA_FIELDS(Body,
                     (double, pos_x_),
                     (double, pos_y_),
                     (double, vel_x_),
                     (double, vel_y_),
                     (double, force_x_),
                     (double, force_y_),
                     (double, mass_),
                     (std::uint32_t, id_),
                     (Body*, merge_target_),  // a heap pointer: compact::Compactor rewrites it
                     (std::uint8_t, absorbs_),
                     (std::uint8_t, absorbed_));

  /// parallel_new: body i from the host-made initial arrays.
  HEAPLAB_HD Body(std::uint64_t i, Export init)
      : pos_x_(init.pos_x[i]),
        pos_y_(init.pos_y[i]),
        vel_x_(init.vel_x[i]),
        vel_y_(init.vel_y[i]),
        force_x_(0.0),
        force_y_(0.0),
        mass_(init.mass[i]),
        id_(static_cast<std::uint32_t>(i)),
        merge_target_(nullptr),
        absorbs_(std::uint8_t{0}),
        absorbed_(std::uint8_t{0}) {}

  [[nodiscard]] __device__ Vec2 pos() const { return {pos_x_, pos_y_}; }

  /// Ref: soa::HeapRef<Types>, or AnyHeapRef<Types, Allocator> on another allocator.
  template <class Ref>
  __device__ void compute_force(Ref heap, double eps2);
  /// device_do body of compute_force: `this` is the other body.
  __device__ void add_force_to(Body const* self, Vec2 pos, double mass, double eps2, Vec2* f) {
    if (this == self) return;
    Vec2 const d = pair_force(pos, mass, {pos_x_, pos_y_}, mass_, eps2);
    f->x += d.x;
    f->y += d.y;
  }
  __device__ void move(double dt) {
    Vec2 p{pos_x_, pos_y_};
    Vec2 v{vel_x_, vel_y_};
    nbody::move(p, v, {force_x_, force_y_}, mass_, dt);
    pos_x_ = p.x;
    pos_y_ = p.y;
    vel_x_ = v.x;
    vel_y_ = v.y;
  }
  template <class Ref>
  __device__ void pick(Ref heap, double r2);
  /// device_do body of pick: `this` is the candidate.
  __device__ void offer(Body const* self, Vec2 pos, double r2, Partner* best);
  __device__ void merge(unsigned long long* merges) {
    Body* const t = merge_target_;
    if (t == nullptr || absorbs_ == 0 || t->merge_target_.get() != this) return;
    Merged const m = nbody::merge<kMutantDropsMass>(
        {pos_x_, pos_y_}, {vel_x_, vel_y_}, mass_, t->pos(), {t->vel_x_, t->vel_y_}, t->mass_);
    pos_x_       = m.pos.x;
    pos_y_       = m.pos.y;
    vel_x_       = m.vel.x;
    vel_y_       = m.vel.y;
    mass_        = m.mass;
    t->absorbed_ = std::uint8_t{1};
    // order: relaxed (a count, read by the host after the kernel)
    atomicAdd(merges, 1ull);
  }
  template <class Ref>
  __device__ void reap(Ref heap);
  __device__ void export_to(Export e) {
    std::uint32_t const i = id_;
    e.pos_x[i]            = pos_x_;
    e.pos_y[i]            = pos_y_;
    e.vel_x[i]            = vel_x_;
    e.vel_y[i]            = vel_y_;
    e.mass[i]             = mass_;
    e.alive[i]            = 1;
  }
};

struct Partner {
  double d2        = 0;
  std::uint32_t id = 0;
  Body* body       = nullptr;
};

struct Types : soa::HeapTypes<Body> {};

template <class Ref>
__device__ void Body::compute_force(Ref heap, double eps2) {
  Vec2 f;
  heap.template device_do<Body, &Body::add_force_to>(
      static_cast<Body const*>(this), pos(), static_cast<double>(mass_), eps2, &f);
  force_x_ = f.x;
  force_y_ = f.y;
}

__device__ void Body::offer(Body const* self, Vec2 pos, double r2, Partner* best) {
  if (this == self) return;
  double const d2 = distance2(pos, {pos_x_, pos_y_});
  if (d2 < r2 && better_partner(d2, id_, best->d2, best->id)) {
    best->d2   = d2;
    best->id   = id_;
    best->body = this;
  }
}

template <class Ref>
__device__ void Body::pick(Ref heap, double r2) {
  Partner best{r2, std::numeric_limits<std::uint32_t>::max(), nullptr};
  heap.template device_do<Body, &Body::offer>(static_cast<Body const*>(this), pos(), r2, &best);
  merge_target_       = best.body;
  bool const absorber = best.body != nullptr && absorbs(mass_, id_, best.body->mass_, best.id);
  absorbs_            = static_cast<std::uint8_t>(absorber ? 1 : 0);
}

template <class Ref>
__device__ void Body::reap(Ref heap) {
  if (absorbed_ != 0) {
    heap.destroy(this);
    return;
  }
  merge_target_ = nullptr;
  absorbs_      = std::uint8_t{0};
}

namespace {

using Heap = soa::Heap<Types>;
using Ref  = soa::HeapRef<Types>;

char const* app_name(NbodyOptions const& o) { return o.collision ? "collision" : "nbody"; }

struct Phases {
  double force_ms = 0;
  double move_ms  = 0;
  double pick_ms  = 0;
  double merge_ms = 0;
  double reap_ms  = 0;
  [[nodiscard]] double total() const { return force_ms + move_ms + pick_ms + merge_ms + reap_ms; }
  void add(Phases const& p) {
    force_ms += p.force_ms;
    move_ms += p.move_ms;
    pick_ms += p.pick_ms;
    merge_ms += p.merge_ms;
    reap_ms += p.reap_ms;
  }
};

/// A PhaseClock's times of one iteration: force, move, and with collision pick, merge, reap.
Phases phases_from(std::vector<float> const& ms) {
  Phases p;
  double* const slot[] = {&p.force_ms, &p.move_ms, &p.pick_ms, &p.merge_ms, &p.reap_ms};
  for (std::size_t i = 0; i < ms.size() && i < 5; ++i) *slot[i] = ms[i];
  return p;
}

/// Device arrays of N doubles/flags for the initial state, the baseline and the exports.
struct Arrays {
  explicit Arrays(std::size_t n)
      : pos_x(n, "nbody arrays"),
        pos_y(n, "nbody arrays"),
        vel_x(n, "nbody arrays"),
        vel_y(n, "nbody arrays"),
        mass(n, "nbody arrays"),
        alive(n, "nbody arrays") {}
  [[nodiscard]] Export view() const {
    return {pos_x.data(), pos_y.data(), vel_x.data(), vel_y.data(), mass.data(), alive.data()};
  }
  void upload(State const& s, cudaStream_t stream) {
    std::size_t const n = s.size();
    std::vector<double> px(n), py(n), vx(n), vy(n), m(n);
    std::vector<std::uint8_t> a(n);
    for (std::size_t i = 0; i < n; ++i) {
      px[i] = s[i].pos.x;
      py[i] = s[i].pos.y;
      vx[i] = s[i].vel.x;
      vy[i] = s[i].vel.y;
      m[i]  = s[i].mass;
      a[i]  = s[i].alive ? 1 : 0;
    }
    cudart::copy_to_device_async(pos_x.data(), px.data(), n, stream);
    cudart::copy_to_device_async(pos_y.data(), py.data(), n, stream);
    cudart::copy_to_device_async(vel_x.data(), vx.data(), n, stream);
    cudart::copy_to_device_async(vel_y.data(), vy.data(), n, stream);
    cudart::copy_to_device_async(mass.data(), m.data(), n, stream);
    cudart::copy_to_device_async(alive.data(), a.data(), n, stream);
    HEAPLAB_CUDA_TRY(cudaStreamSynchronize(stream));  // the host vectors die here
  }
  [[nodiscard]] State download(cudaStream_t stream) const {
    std::size_t const n = pos_x.size();
    std::vector<double> px(n), py(n), vx(n), vy(n), m(n);
    std::vector<std::uint8_t> a(n);
    cudart::copy_to_host(px.data(), pos_x.data(), n, stream);
    cudart::copy_to_host(py.data(), pos_y.data(), n, stream);
    cudart::copy_to_host(vx.data(), vel_x.data(), n, stream);
    cudart::copy_to_host(vy.data(), vel_y.data(), n, stream);
    cudart::copy_to_host(m.data(), mass.data(), n, stream);
    cudart::copy_to_host(a.data(), alive.data(), n, stream);
    State s(n);
    for (std::size_t i = 0; i < n; ++i) s[i] = {{px[i], py[i]}, {vx[i], vy[i]}, m[i], a[i] != 0};
    return s;
  }
  cudart::device_buffer<double> pos_x, pos_y, vel_x, vel_y, mass;
  cudart::device_buffer<std::uint8_t> alive;
};

// ------------------------------------------------------------------------------------- heap

/// One iteration's do-alls (the top of this file) on H: soa::Heap<Types> or AnyHeap<Types, A>.
/// Phase times from events recorded between the phases on the heap's stream and read once at the
/// end (common/phase_clock.cuh: no synchronize per phase, docs/apps.md "Timing").
template <class H>
Phases step_phases(H& heap, NbodyOptions const& o, unsigned long long* merges, PhaseClock& clock) {
  using Ref         = std::decay_t<decltype(heap.ref())>;
  double const eps2 = o.softening * o.softening;
  clock.start();
  // Only reap destroys bodies (and nothing creates them): one enumeration of Body serves the
  // iteration (Heap::Enumeration), reap being its last do-all.
  auto bodies = heap.template enumerate<Body>();
  bodies.template parallel_do<&Body::compute_force<Ref>>(heap.ref(), eps2);
  clock.mark();
  bodies.template parallel_do<&Body::move>(o.dt);
  clock.mark();
  if (o.collision) {
    double const r2 = o.merge_radius * o.merge_radius;
    bodies.template parallel_do<&Body::pick<Ref>>(heap.ref(), r2);
    clock.mark();
    bodies.template parallel_do<&Body::merge>(merges);
    clock.mark();
    bodies.template last_parallel_do<&Body::reap<Ref>>(heap.ref());
    clock.mark();
  }
  return phases_from(clock.phases_ms());
}

/// The bodies as H's objects say (each writes itself at its id).
template <class H>
State download_bodies(H& heap, Arrays& io) {
  auto const s = heap.stream();
  HEAPLAB_CUDA_TRY(cudaMemsetAsync(io.alive.data(), 0, io.alive.size(), s));
  heap.template parallel_do<Body, &Body::export_to>(io.view());
  return io.download(s);
}

/// The heap app: all bodies on the heap.
class HeapApp {
 public:
  HeapApp(NbodyOptions const& o, State const& initial)
      : o_(o),
        n_(initial.size()),
        io_(initial.size()),
        merges_(1, "nbody merge counter"),
        heap_(Heap::with_blocks(heap_blocks(o), heap_options(o.heap))),
        defrag_(heap_, o.heap, {Types::type_id<Body>}) {
    auto const s = heap_.stream();
    merges_.set_zero_async(s);
    io_.upload(initial, s);
    heap_.parallel_new<Body>(n_, io_.view());
    HEAPLAB_CUDA_TRY(cudaStreamSynchronize(s));
    require_fits("at set-up");  // before anything reads the bodies
    // No roots: the only pointer into the heap is Body::merge_target_, a declared pointer field
    // that the compactor rewrites (and that is nullptr between iterations anyway).
    (void)download();  // untimed: the first parallel_do allocates its scratch (R, CUB storage)
  }

  [[nodiscard]] std::uint32_t num_blocks() const { return heap_.num_blocks(); }

  /// OutOfMemory when a request found the heap full since its construction (oom_count is
  /// cumulative; synchronizes). Only set-up makes bodies, so `where` is any later point as well.
  void require_fits(std::string const& where) const {
    require_no_failed_allocations(
        app_name(o_),
        "heap",
        heap_.oom_count(),
        where,
        std::to_string(n_) + " bodies, " + std::to_string(heap_.num_blocks()) + " blocks of " +
            std::to_string(Types::block_bytes) + " bytes; raise --heap-blocks or --memory-mib");
  }

  Phases step() { return step_phases(heap_, o_, merges_.data(), clock_); }

  std::uint64_t merges() { return cudart::value_to_host(merges_.data(), heap_.stream()); }

  /// The defragmentation policy's turn after an iteration (CompactGpu sec. 3.7).
  void end_of_iteration(IterationCost& cost) { (void)defrag_.end_of_iteration(cost); }
  [[nodiscard]] IterationCost const& defrag_total() const { return defrag_.total(); }
  [[nodiscard]] std::string defrag_summary() const { return defrag_.summary(); }

  /// The bodies as the heap's objects say (each writes itself at its id).
  State download() { return download_bodies(heap_, io_); }

  soa::HeapStatistics statistics() const { return heap_.statistics(); }
  check::HeapSnapshot snapshot() const { return heap_.snapshot(); }

 private:
  /// --heap-blocks, else --memory-mib's blocks, else room for every body twice over and 64.
  static std::uint32_t heap_blocks(NbodyOptions const& o) {
    constexpr std::uint64_t cap = Types::capacity<Body>;
    return heap_blocks_for(
        o.heap, Types::block_bytes, 2 * ((o.bodies + cap - 1) / cap) + 64, app_name(o));
  }

  NbodyOptions o_;
  std::size_t n_;
  Arrays io_;
  cudart::device_buffer<unsigned long long> merges_;
  Heap heap_;
  DefragLoop<Types> defrag_;
  PhaseClock clock_{heap_.stream(), 5};
};

// ------------------------------------------------------------------------ other allocators

/// The same app on another allocator (common/any_heap.cuh; DynaSOAr Fig. 10): Body objects from
/// Allocator's malloc, AOS, with the standalone do-all.
template <class Allocator>
class AnyApp {
 public:
  using AnyBodies = AnyHeap<Types, Allocator>;

  /// The pool: --memory-mib's bytes, else room for every body twice over (request rounding
  /// included) and 64 MiB. reserve_cuda_malloc reserves this too (CUDA's heap is the pool).
  static std::uint64_t pool_bytes(NbodyOptions const& o) {
    std::uint64_t const bodies = o.bodies;
    return pool_bytes_for(
        o.heap, 2 * bodies * (AnyBodies::template request_bytes<Body>() + 64) + (64ull << 20));
  }

  /// `variant`: the allocator's name in --allocators / --only (the result lines').
  AnyApp(NbodyOptions const& o, State const& initial, std::string variant)
      : o_(o),
        variant_(std::move(variant)),
        io_(initial.size()),
        merges_(1, "nbody merge counter"),
        heap_(pool_bytes(o), static_cast<std::uint32_t>(initial.size())) {
    merges_.set_zero_async(heap_.stream());
    io_.upload(initial, heap_.stream());
    heap_.template parallel_new<Body>(initial.size(), io_.view());
    require_fits("at set-up");  // before anything reads the bodies
    (void)download();           // untimed: the first do-all allocates CUB's storage
  }

  /// OutOfMemory when the allocator answered null since the heap's construction (nulls() is
  /// cumulative; synchronizes). Only set-up makes bodies (never more than max_objects).
  void require_fits(std::string const& where) const {
    require_no_failed_allocations(app_name(o_),
                                  variant_.c_str(),
                                  heap_.nulls(),
                                  where,
                                  AnyBodies::allocator_name() + ", " + std::to_string(o_.bodies) +
                                      " bodies, a " + std::to_string(pool_bytes(o_)) +
                                      "-byte pool");
  }

  Phases step() { return step_phases(heap_, o_, merges_.data(), clock_); }
  std::uint64_t merges() { return cudart::value_to_host(merges_.data(), heap_.stream()); }
  State download() { return download_bodies(heap_, io_); }
  AnyBodies& heap() { return heap_; }

 private:
  NbodyOptions o_;
  std::string variant_;
  Arrays io_;
  cudart::device_buffer<unsigned long long> merges_;
  AnyBodies heap_;
  PhaseClock clock_{heap_.stream(), 5};
};

template <class App>
struct is_any_app : std::false_type {};
template <class A>
struct is_any_app<AnyApp<A>> : std::true_type {};

// --------------------------------------------------------------------------------- baseline

struct BaselineView {
  Export b;  // positions, velocities, masses, alive flags
  double* force_x        = nullptr;
  double* force_y        = nullptr;
  std::int32_t* target   = nullptr;  // merge target index, -1: none
  std::uint8_t* absorbs  = nullptr;
  std::uint8_t* absorbed = nullptr;
  std::uint32_t n        = 0;
};

__global__ void baseline_force_kernel(BaselineView v, double eps2) {
  for (std::uint64_t i = thread_index(); i < v.n; i += thread_stride()) {
    if (v.b.alive[i] == 0) continue;
    Vec2 const pos{v.b.pos_x[i], v.b.pos_y[i]};
    double const m = v.b.mass[i];
    Vec2 f;
    std::uint32_t const sources = force_sources<kMutantSkipsTailTile>(v.n);
    for (std::uint32_t j = 0; j < sources; ++j) {
      if (j == i || v.b.alive[j] == 0) continue;
      Vec2 const d = pair_force(pos, m, {v.b.pos_x[j], v.b.pos_y[j]}, v.b.mass[j], eps2);
      f.x += d.x;
      f.y += d.y;
    }
    v.force_x[i] = f.x;
    v.force_y[i] = f.y;
  }
}

__global__ void baseline_move_kernel(BaselineView v, double dt) {
  for (std::uint64_t i = thread_index(); i < v.n; i += thread_stride()) {
    if (v.b.alive[i] == 0) continue;
    Vec2 p{v.b.pos_x[i], v.b.pos_y[i]};
    Vec2 u{v.b.vel_x[i], v.b.vel_y[i]};
    move(p, u, {v.force_x[i], v.force_y[i]}, v.b.mass[i], dt);
    v.b.pos_x[i] = p.x;
    v.b.pos_y[i] = p.y;
    v.b.vel_x[i] = u.x;
    v.b.vel_y[i] = u.y;
  }
}

__global__ void baseline_pick_kernel(BaselineView v, double r2) {
  for (std::uint64_t i = thread_index(); i < v.n; i += thread_stride()) {
    if (v.b.alive[i] == 0) continue;
    Vec2 const pos{v.b.pos_x[i], v.b.pos_y[i]};
    double best_d2        = r2;
    std::uint32_t best_id = std::numeric_limits<std::uint32_t>::max();
    for (std::uint32_t j = 0; j < v.n; ++j) {
      if (j == i || v.b.alive[j] == 0) continue;
      double const d2 = distance2(pos, {v.b.pos_x[j], v.b.pos_y[j]});
      if (d2 < r2 && better_partner(d2, j, best_d2, best_id)) {
        best_d2 = d2;
        best_id = j;
      }
    }
    bool const found = best_id != std::numeric_limits<std::uint32_t>::max();
    v.target[i]      = found ? static_cast<std::int32_t>(best_id) : -1;
    v.absorbs[i] =
        found && absorbs(v.b.mass[i], static_cast<std::uint32_t>(i), v.b.mass[best_id], best_id)
            ? 1
            : 0;
  }
}

__global__ void baseline_merge_kernel(BaselineView v, unsigned long long* merges) {
  for (std::uint64_t i = thread_index(); i < v.n; i += thread_stride()) {
    if (v.b.alive[i] == 0 || v.absorbs[i] == 0) continue;
    std::int32_t const t = v.target[i];
    if (t < 0 || v.target[t] != static_cast<std::int32_t>(i)) continue;
    Merged const m = merge<kMutantDropsMass>({v.b.pos_x[i], v.b.pos_y[i]},
                                             {v.b.vel_x[i], v.b.vel_y[i]},
                                             v.b.mass[i],
                                             {v.b.pos_x[t], v.b.pos_y[t]},
                                             {v.b.vel_x[t], v.b.vel_y[t]},
                                             v.b.mass[t]);
    v.b.pos_x[i]   = m.pos.x;
    v.b.pos_y[i]   = m.pos.y;
    v.b.vel_x[i]   = m.vel.x;
    v.b.vel_y[i]   = m.vel.y;
    v.b.mass[i]    = m.mass;
    v.absorbed[t]  = 1;
    // order: relaxed (a count, read by the host after the kernel)
    atomicAdd(merges, 1ull);
  }
}

__global__ void baseline_reap_kernel(BaselineView v) {
  for (std::uint64_t i = thread_index(); i < v.n; i += thread_stride()) {
    if (v.absorbed[i] != 0) {
      v.b.alive[i]  = 0;  // the active flag: never enumerated again (DynaSOAr sec. 6)
      v.absorbed[i] = 0;
    }
    v.target[i]  = -1;
    v.absorbs[i] = 0;
  }
}

class BaselineApp {
 public:
  /// The bytes of the arrays that hold what a Body object holds (--memory-mib counts them,
  /// memory_budget.hpp): per body position, velocity, force and mass (7 doubles), the merge
  /// target (int32), the alive, absorbs and absorbed flags (3 bytes): 63 bytes.
  static std::uint64_t object_bytes(std::uint64_t bodies) {
    return bodies * (7 * sizeof(double) + sizeof(std::int32_t) + 3 * sizeof(std::uint8_t));
  }

  BaselineApp(NbodyOptions const& o, State const& initial)
      : o_(o),
        a_(initial.size()),
        force_x_(initial.size(), "baseline force"),
        force_y_(initial.size(), "baseline force"),
        target_(initial.size(), "baseline targets"),
        absorbs_(initial.size(), "baseline flags"),
        absorbed_(initial.size(), "baseline flags"),
        merges_(1, "baseline merge counter") {
    a_.upload(initial, nullptr);
    absorbs_.set_zero_async(nullptr);
    absorbed_.set_zero_async(nullptr);
    merges_.set_zero_async(nullptr);
    HEAPLAB_CUDA_TRY(cudaMemset(target_.data(), 0xFF, target_.size() * sizeof(std::int32_t)));
    v_ = {a_.view(),
          force_x_.data(),
          force_y_.data(),
          target_.data(),
          absorbs_.data(),
          absorbed_.data(),
          static_cast<std::uint32_t>(initial.size())};
  }

  Phases step() {
    unsigned const g  = blocks_for(v_.n);
    auto const launch = [&](auto&& k) {
      k();
      HEAPLAB_CUDA_TRY(cudaGetLastError());
      clock_.mark();
    };
    double const eps2 = o_.softening * o_.softening;
    clock_.start();
    launch([&] { baseline_force_kernel<<<g, kThreads>>>(v_, eps2); });
    launch([&] { baseline_move_kernel<<<g, kThreads>>>(v_, o_.dt); });
    if (o_.collision) {
      double const r2 = o_.merge_radius * o_.merge_radius;
      launch([&] { baseline_pick_kernel<<<g, kThreads>>>(v_, r2); });
      launch([&] { baseline_merge_kernel<<<g, kThreads>>>(v_, merges_.data()); });
      launch([&] { baseline_reap_kernel<<<g, kThreads>>>(v_); });
    }
    return phases_from(clock_.phases_ms());
  }

  std::uint64_t merges() { return cudart::value_to_host(merges_.data(), nullptr); }
  State download() { return a_.download(nullptr); }
  /// Nothing to check: the baseline allocates nothing after its arrays (object_bytes).
  void require_fits(std::string const& /*where*/) const {}

 private:
  NbodyOptions o_;
  Arrays a_;
  cudart::device_buffer<double> force_x_, force_y_;
  cudart::device_buffer<std::int32_t> target_;
  cudart::device_buffer<std::uint8_t> absorbs_, absorbed_;
  cudart::device_buffer<unsigned long long> merges_;
  BaselineView v_;
  PhaseClock clock_{nullptr, 5};
};

// ------------------------------------------------------------------------------------ driver

struct CsvRow {
  char const* variant;
  int iteration;
  std::uint64_t bodies;
  std::uint64_t merges;
  std::uint64_t live_objects;
  std::uint64_t allocated_blocks;
  double fragmentation;
  Phases phases;
};

void write_row(std::FILE* csv, CsvRow const& r) {
  if (csv == nullptr) return;
  std::fprintf(csv,
               "%s,%d,%llu,%llu,%llu,%llu,%.6f,%.4f,%.4f,%.4f,%.4f,%.4f\n",
               r.variant,
               r.iteration,
               static_cast<unsigned long long>(r.bodies),
               static_cast<unsigned long long>(r.merges),
               static_cast<unsigned long long>(r.live_objects),
               static_cast<unsigned long long>(r.allocated_blocks),
               r.fragmentation,
               r.phases.force_ms,
               r.phases.move_ms,
               r.phases.pick_ms,
               r.phases.merge_ms,
               r.phases.reap_ms);
}

bool check_due(NbodyOptions const& o, int g) {
  return o.check && (g % o.check_every == 0 || g == o.iterations);
}

/// The CPU reference of the first reference_steps iterations (small runs only).
struct ReferenceRun {
  ReferenceRun(NbodyOptions const& o, State const& initial)
      : enabled(o.check && o.reference_steps > 0 && o.bodies <= kReferenceMaxBodies),
        steps(std::min(o.reference_steps, o.iterations)),
        ref(initial, {o.dt, o.softening, o.collision ? o.merge_radius : 0.0}) {}
  /// Advances the reference to iteration g (while g <= steps).
  void advance_to(int g) {
    while (enabled && done < g && done < steps) {
      ref.step();
      ++done;
    }
  }
  [[nodiscard]] bool covers(int g) const { return enabled && g <= steps; }
  bool enabled;
  int steps;
  int done = 0;
  Reference ref;
};

/// --check of one variant after iteration g (any_problem: AnyHeap::verify()'s); prints the first
/// problem, false when there is one.
template <class App>
bool check_variant(NbodyOptions const& o,
                   char const* variant,
                   App& app,
                   Totals const& initial,
                   ReferenceRun& ref,
                   int g,
                   std::optional<std::uint64_t> heap_live,
                   check::HeapSnapshot const* snapshot,
                   std::optional<std::string> const& any_problem = std::nullopt) {
  auto const fail = [&](std::string const& what) {
    std::printf(
        "%s --check FAILED at iteration %d (%s): %s\n", app_name(o), g, variant, what.c_str());
    return false;
  };
  if (any_problem) return fail(*any_problem);  // AnyHeap's array invariants
  State const s = app.download();
  Expected e;
  e.initial            = initial;
  e.collision          = o.collision;
  e.merges             = app.merges();
  e.heap_live_objects  = heap_live;
  e.mass_tolerance     = o.mass_tolerance;
  e.momentum_tolerance = o.momentum_tolerance;
  if (auto v = check_state(s, e)) return fail(*v);
  if (snapshot != nullptr) {
    auto const violations = check::check_all(*snapshot);
    if (!violations.empty())
      return fail("invariant catalog: " + std::to_string(violations.size()) +
                  " violations, first: " + violations.front().to_string());
  }
  if (ref.covers(g)) {
    ref.advance_to(g);
    if (auto d = compare_states(ref.ref.state(), s, o.reference_tolerance))
      return fail("differs from the CPU reference: " + *d);
  }
  return true;
}

/// `<app> <variant>: <iterations> iterations, <ms> ms (phases)`; ms includes defragmentation.
void print_summary(NbodyOptions const& o, char const* variant, Phases const& t, double defrag_ms) {
  std::printf("%s %s: %d iterations, %.3f ms (force %.3f, move %.3f",
              app_name(o),
              variant,
              o.iterations,
              t.total() + defrag_ms,
              t.force_ms,
              t.move_ms);
  if (o.collision)
    std::printf(", pick %.3f, merge %.3f, reap %.3f", t.pick_ms, t.merge_ms, t.reap_ms);
  if (defrag_ms > 0) std::printf(", defragmentation %.3f", defrag_ms);
  std::printf(")\n");
}

/// Runs one variant; returns the total time (ms), negative when --check failed. `final` gets the
/// last state.
template <class App>
double run_variant(NbodyOptions const& o,
                   char const* variant,
                   App& app,
                   State const& initial,
                   std::FILE* csv,
                   ProfileCsv& profile,
                   State& final_state) {
  constexpr bool is_heap = std::is_same_v<App, HeapApp>;
  Totals const t0        = totals(initial);
  ReferenceRun ref(o, initial);
  auto const check = [&](int g) {
    // A failed allocation is an OutOfMemory (exit 5), never a --check failure.
    app.require_fits("by iteration " + std::to_string(g));
    if constexpr (is_heap) {
      auto const stats = app.statistics();
      auto const snap  = app.snapshot();
      return check_variant(o, variant, app, t0, ref, g, stats.used_slots, &snap);
    } else if constexpr (is_any_app<App>::value) {
      return check_variant(o, variant, app, t0, ref, g, std::nullopt, nullptr, app.heap().verify());
    } else {
      return check_variant(o, variant, app, t0, ref, g, std::nullopt, nullptr);
    }
  };
  if (o.check && !check(0)) return -1;
  Phases total;
  for (int g = 1; g <= o.iterations; ++g) {
    Phases const p = app.step();
    total.add(p);
    IterationCost cost;
    cost.app_ms = p.total();
    if constexpr (is_heap) {
      app.end_of_iteration(cost);
      if (profile.enabled()) profile.write(variant, g, app.statistics(), cost);
    }
    if (check_due(o, g) && !check(g)) return -1;
    if (ref.covers(g) && g == ref.steps && !check_due(o, g) && !check(g)) return -1;
    if (csv != nullptr) {
      std::uint64_t const merges = app.merges();
      CsvRow row{variant, g, initial.size() - merges, merges, 0, 0, 0.0, p};
      if constexpr (is_heap) {
        auto const stats     = app.statistics();
        row.live_objects     = stats.used_slots;
        row.allocated_blocks = stats.allocated_blocks;
        row.fragmentation    = stats.fragmentation;
      }
      write_row(csv, row);
    }
  }
  app.require_fits("by the end of the run");  // before its result line
  double defrag_ms = 0;
  if constexpr (is_heap) defrag_ms = app.defrag_total().defrag_ms;
  print_summary(o, variant, total, defrag_ms);
  if constexpr (is_heap) {
    if (auto const& d = app.defrag_total(); d.defrag_calls > 0)
      std::printf("%s %s: defragmentation %s, %.1f%% of the iterations' time\n",
                  app_name(o),
                  variant,
                  app.defrag_summary().c_str(),
                  100.0 * d.defrag_ms / std::max(total.total(), 1e-9));
  }
  if constexpr (is_any_app<App>::value)
    app.heap().print_enumeration(app_name(o), variant, app.heap().enumeration_ms(), total.total());
  else
    print_result_line(app_name(o), variant, total.total() + defrag_ms, std::nullopt);
  final_state              = app.download();
  std::uint64_t const left = totals(final_state).bodies;
  if constexpr (is_heap) {
    auto const stats = app.statistics();
    std::printf("%s %s: %llu bodies left, %llu merges; live objects %llu in %llu blocks, F %.4f\n",
                app_name(o),
                variant,
                static_cast<unsigned long long>(left),
                static_cast<unsigned long long>(app.merges()),
                static_cast<unsigned long long>(stats.used_slots),
                static_cast<unsigned long long>(stats.allocated_blocks),
                stats.fragmentation);
  } else {
    std::printf("%s %s: %llu bodies left, %llu merges\n",
                app_name(o),
                variant,
                static_cast<unsigned long long>(left),
                static_cast<unsigned long long>(app.merges()));
  }
  return total.total() + defrag_ms;
}

/// `<app> heap / <variant>: R x` and whether the final states agree. Not order-identical (heap
/// order vs index or array order in the force sums): reported, not failed. Nothing when the heap
/// variant did not run (heap_ms nullopt: --only).
void compare_with_heap(NbodyOptions const& o,
                       char const* variant,
                       std::optional<double> heap_ms,
                       double ms,
                       State const& heap_final,
                       State const& final_state) {
  if (!heap_ms) return;
  print_heap_ratio(app_name(o), variant, *heap_ms, ms);
  std::uint64_t const hb = totals(heap_final).bodies;
  std::uint64_t const vb = totals(final_state).bodies;
  auto const diff        = compare_states(final_state, heap_final, o.reference_tolerance);
  std::printf(
      "%s heap vs %s after %d iterations: bodies %llu / %llu, %s\n",
      app_name(o),
      variant,
      o.iterations,
      static_cast<unsigned long long>(hb),
      static_cast<unsigned long long>(vb),
      diff ? ("differ (expected after many iterations: not order-identical): " + *diff).c_str()
           : "equal within the reference tolerance");
}

void validate(NbodyOptions const& o) {
  std::string const a = app_name(o);
  if (o.bodies == 0 || o.bodies > (1u << 24))
    throw std::invalid_argument(a + ": --bodies must be in 1 .. 2^24");
  if (o.iterations < 0) throw std::invalid_argument(a + ": --iterations must be >= 0");
  if (o.check_every < 1) throw std::invalid_argument(a + ": --check-every must be >= 1");
  if (!(o.dt > 0) || !std::isfinite(o.dt)) throw std::invalid_argument(a + ": --dt must be > 0");
  if (!(o.softening >= 0) || !std::isfinite(o.softening))
    throw std::invalid_argument(a + ": --softening must be >= 0");
  if (o.collision && (!(o.merge_radius > 0) || !std::isfinite(o.merge_radius)))
    throw std::invalid_argument(a + ": --merge-radius must be > 0");
  if (!(o.initial_speed >= 0) || !std::isfinite(o.initial_speed))
    throw std::invalid_argument(a + ": --initial-speed must be >= 0");
  if (o.reference_steps < 0) throw std::invalid_argument(a + ": --reference-steps must be >= 0");
  if (!(o.reference_tolerance >= 0) || !(o.momentum_tolerance >= 0) || !(o.mass_tolerance >= 0))
    throw std::invalid_argument(a + ": tolerances must be >= 0");
  apps::validate(o.heap);
  apps::validate_allocators(o.allocators);
  if (o.softening == 0 && !o.collision)
    std::fprintf(stderr, "%s: warning: --softening 0: close encounters may give NaN\n", a.c_str());
}

/// The run's header lines: the bodies and steps, the heap's flags, the CPU reference of --check.
void print_header(NbodyOptions const& o) {
  std::printf(
      "%s: %u bodies, %d iterations, seed %llu, dt %g, softening %g, initial speed %g%s%s%s\n",
      app_name(o),
      o.bodies,
      o.iterations,
      static_cast<unsigned long long>(o.seed),
      o.dt,
      o.softening,
      o.initial_speed,
      o.collision ? (", merge radius " + std::to_string(o.merge_radius)).c_str() : "",
      o.check ? (", --check every " + std::to_string(o.check_every)).c_str() : "",
      planted_bug_note(core::mutant::kPlanted).c_str());
  std::printf("%s: heap: %s\n", app_name(o), describe(o.heap).c_str());
  if (!o.check) return;
  bool const ref = o.reference_steps > 0 && o.bodies <= kReferenceMaxBodies;
  std::printf("%s --check: CPU reference %s\n",
              app_name(o),
              ref ? ("for the first " + std::to_string(std::min(o.reference_steps, o.iterations)) +
                     " iterations")
                        .c_str()
                  : ("off (--reference-steps 0 or more than " +
                     std::to_string(kReferenceMaxBodies) + " bodies)")
                        .c_str());
}

/// The heap variant; its total ms (negative when --check failed).
double run_heap_variant(NbodyOptions const& o,
                        State const& initial,
                        std::FILE* csv,
                        ProfileCsv& profile,
                        State& final_state) {
  HeapApp app(o, initial);
  std::printf("heap: %u blocks of %u bytes, %u bodies per block\n",
              app.num_blocks(),
              static_cast<unsigned>(Types::block_bytes),
              static_cast<unsigned>(Types::capacity<Body>));
  return run_variant(o, "heap", app, initial, csv, profile, final_state);
}

/// The baseline: its object arrays against --memory-mib first (OutOfMemory when they exceed it),
/// then the run; its total ms (negative when --check failed).
double run_baseline(NbodyOptions const& o,
                    State const& initial,
                    std::FILE* csv,
                    ProfileCsv& profile,
                    State& final_state) {
  std::uint64_t const bytes = BaselineApp::object_bytes(initial.size());
  std::printf("%s baseline: object arrays %llu bytes (%llu per body)\n",
              app_name(o),
              static_cast<unsigned long long>(bytes),
              static_cast<unsigned long long>(BaselineApp::object_bytes(1)));
  require_baseline_fits(o.heap, app_name(o), bytes);
  BaselineApp app(o, initial);
  return run_variant(o, "baseline", app, initial, csv, profile, final_state);
}

}  // namespace

int run_nbody(NbodyOptions const& o) {
  validate(o);
  State const initial = initial_bodies(o.bodies, o.seed, o.initial_speed);
  auto const d        = cudart::probe_device();
  if (!d.available) throw NoDevice(d.reason);
  std::printf("%s\n", cudart::device_line(d).c_str());
  print_header(o);
  CsvFile const csv = open_csv(o.csv,
                               app_name(o),
                               "variant,iteration,bodies,merges,live_objects,allocated_blocks,"
                               "fragmentation,force_ms,move_ms,pick_ms,merge_ms,reap_ms");
  ProfileCsv profile;
  if (!o.profile.empty()) profile = ProfileCsv(o.profile, app_name(o), Types::block_bytes);
  // Before any kernel of this file runs (allocators.cuh): CUDA's heap is cuda-malloc's pool.
  reserve_cuda_malloc(o.allocators, AnyApp<malloc_family::CudaMallocAdapter>::pool_bytes(o));
  State heap_final;
  std::optional<double> heap_ms;  // nullopt: --only another variant
  if (o.heap.run_heap) {
    heap_ms = run_heap_variant(o, initial, csv.get(), profile, heap_final);
    if (*heap_ms < 0) return 1;
  }
  if (o.baseline) {
    State base_final;
    double const base_ms = run_baseline(o, initial, csv.get(), profile, base_final);
    if (base_ms < 0) return 1;
    compare_with_heap(o, "baseline", heap_ms, base_ms, heap_final, base_final);
  }
  for (auto const& name : o.allocators) {
    State final_state;
    double ms = 0;
    with_allocator(name, [&](auto tag) {
      AnyApp<typename decltype(tag)::type> app(o, initial, name);
      ms = run_variant(o, name.c_str(), app, initial, csv.get(), profile, final_state);
    });
    if (ms < 0) return 1;
    compare_with_heap(o, name.c_str(), heap_ms, ms, heap_final, final_state);
  }
  if (o.check) std::printf("%s --check passed\n", app_name(o));
  return 0;
}

}  // namespace heaplab::apps::nbody
