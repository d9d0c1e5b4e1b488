// `heaplab_apps traffic` (traffic.hpp; docs/apps.md "traffic"): the variants measured in one
// process, each checked against the CPU reference (reference.hpp):
//
//   heap:      every vehicle is a Car on soa::Heap, made at a producer cell (a kernel over the
//              producers) and destroyed at the end of its trip (by itself, in parallel_do<Car>);
//              the cells are the network's arrays plus a Car* per cell (the compactor's root
//              array).
//   baseline:  the static SOA baseline (DynaSOAr sec. 6, category 3): the vehicles' fields merged
//              into per-cell arrays (dense.hpp), one kernel per phase, one thread per cell.
//   <allocator> (--allocators): the heap variant's code (CarCells, Car) on another allocator
//              (common/any_heap.cuh; DynaSOAr Fig. 10): Car objects from its malloc, AOS, with the
//              standalone do-all, whose enumeration time is reported apart; its final state is
//              compared with the heap variant's (the same world: the run is deterministic).
//
// One iteration (rules.hpp): claims reset (cudaMemsetAsync), parallel_do<Car> decide (plan; a
// relaxed atomicMin of its key on the claim of the street it enters), parallel_do<Car> move
// (resolve the claim; the car writes its target's pointer and clears its old one, or leaves), the
// spawn kernel over the producers. Within a phase every car writes only its own fields, its own
// cell's pointer and its target's pointer, and targets are distinct (rules.hpp says why); reads of
// other cells see only what no thread of the phase writes (decide reads pointers, move writes
// them). Phases are separate kernels on one stream: a kernel boundary orders every write of a
// phase before the next reads it (linearization point of an iteration: the end of its spawn
// kernel). Hence the heap variant computes exactly the reference's world.
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
#include "traffic.hpp"

namespace heaplab::apps::traffic {

struct Types;
struct Board;

/// A vehicle (DynaSOAr Table 1 "traffic": the one dynamic class).
class Car {
 public:
  HEAPLAB_SOA_FIELDS(Car,
                     (std::uint64_t, id_),
                     (std::uint32_t, cell_),
                     (std::uint32_t, velocity_),
                     (std::uint32_t, max_velocity_),
                     (std::uint32_t, trip_),
                     (std::uint32_t, target_),  // decide's plan (rules.hpp Plan)
                     (std::uint32_t, next_velocity_),
                     (std::uint32_t, claim_),
                     (std::uint32_t, stop_),
                     (std::uint32_t, stop_velocity_));

  HEAPLAB_HD Car(std::uint32_t cell, Vehicle const& v)
      : id_(v.id),
        cell_(cell),
        velocity_(v.velocity),
        max_velocity_(v.max_velocity),
        trip_(v.trip),
        target_(std::uint32_t{kNone}),
        next_velocity_(0u),
        claim_(std::uint32_t{kNone}),
        stop_(std::uint32_t{kNone}),
        stop_velocity_(0u) {}

  __device__ Vehicle vehicle() {
    Vehicle v;
    v.present      = true;
    v.id           = id_;
    v.velocity     = velocity_;
    v.max_velocity = max_velocity_;
    v.trip         = trip_;
    return v;
  }
  __device__ void decide(Board b);
  /// Ref: soa::HeapRef<Types>, or AnyHeapRef<Types, Allocator> on another allocator.
  template <class Ref>
  __device__ void move(Ref heap, Board b);
  __device__ void export_view(ExportSink<CarView> out);
  __device__ void count_moving(unsigned long long* moving);
};

struct Types : soa::HeapTypes<Car> {};

/// The device view of the heap variant (trivially copyable, passed by value).
struct Board {
  Params p;
  Net net;  // device pointers
  std::uint32_t it                  = 0;
  Car** cells                       = nullptr;
  std::uint64_t* claims             = nullptr;  // per street
  std::uint32_t const* producers    = nullptr;
  std::uint32_t num_producers       = 0;
  unsigned long long* failed_allocs = nullptr;
};

__device__ void Car::decide(Board b) {
  std::uint32_t const c = cell_;
  Plan const plan       = plan_move(
      b.p, b.net, b.it, c, vehicle(), [&](std::uint32_t j) { return b.cells[j] != nullptr; });
  target_        = plan.target;
  next_velocity_ = plan.velocity;
  claim_         = plan.claim;
  stop_          = plan.stop;
  stop_velocity_ = plan.stop_velocity;
  if (plan.claim != kNone) min_into(&b.claims[plan.claim], key(b.p, b.it, c));
}

template <class Ref>
__device__ void Car::move(Ref heap, Board b) {
  std::uint32_t const c = cell_;
  Plan plan;
  plan.target        = target_;
  plan.velocity      = next_velocity_;
  plan.claim         = claim_;
  plan.stop          = stop_;
  plan.stop_velocity = stop_velocity_;
  // MUTANT traffic_merge_without_claim: a car that lost its street's claim enters anyway.
  Plan const r = resolve(plan,
                         plan.claim == kNone ? kNoKey : b.claims[plan.claim],
                         key(b.p, b.it, c),
                         kMutantMergeWithoutClaim);
  if (r.target == kGone) {  // the end of its trip: it leaves the network
    b.cells[c] = nullptr;   // only this car writes its cell in this phase
    heap.destroy(this);
    return;
  }
  if (r.target != c) {
    b.cells[r.target] = this;  // its target is no other car's (rules.hpp)
    b.cells[c]        = nullptr;
    cell_             = r.target;
  }
  velocity_ = r.velocity;
  trip_     = trip_ - r.velocity;
}

__device__ void Car::export_view(ExportSink<CarView> out) {
  if (CarView* v = out.slot()) {
    v->handle  = reinterpret_cast<std::uint64_t>(this);
    v->cell    = cell_;
    v->vehicle = vehicle();
  }
}

__device__ void Car::count_moving(unsigned long long* moving) {
  // order: relaxed (a count, read by the host after the kernel)
  if (velocity_ > 0) atomicAdd(moving, 1ull);
}

namespace {

using Heap = soa::Heap<Types>;

/// Ref: soa::HeapRef<Types> or AnyHeapRef<Types, Allocator>.
template <class Ref>
__global__ void spawn_kernel(Ref heap, Board b) {
  for (std::uint64_t i = thread_index(); i < b.num_producers; i += thread_stride()) {
    std::uint32_t const c = b.producers[i];
    if (b.cells[c] != nullptr) continue;
    Vehicle const v = spawned(b.p, b.net.cells, b.it, c);
    if (!v.present) continue;
    Car* const car = heap.template make<Car>(c, v);
    // order: relaxed (a count, read by the host after the kernel)
    if (car == nullptr) atomicAdd(b.failed_allocs, 1ull);
    b.cells[c] = car;
  }
}

__global__ void grid_view_kernel(Board b, std::uint64_t* handles, std::uint8_t* is_car) {
  for (std::uint64_t i = thread_index(); i < b.net.cells; i += thread_stride()) {
    Car* const a = b.cells[i];
    handles[i]   = reinterpret_cast<std::uint64_t>(a);
    is_car[i]    = a != nullptr &&
                core::pointer_type(reinterpret_cast<std::uint64_t>(a)) == Types::type_id<Car>;
  }
}

enum DensePhase : int { kDecide, kResolve, kPull, kLeave, kSpawnPhase };
__global__ void dense_kernel(Dense d, std::uint32_t it, int phase) {
  for (std::uint64_t i = thread_index(); i < d.net.cells; i += thread_stride()) {
    auto const c = static_cast<std::uint32_t>(i);
    switch (phase) {
      case kDecide:
        d.decide(it, c);
        break;
      case kResolve:
        d.resolve_move(it, c);
        break;
      case kPull:
        d.pull(c);
        break;
      case kLeave:
        d.leave(c);
        break;
      default:
        d.spawn(it, c);
        break;
    }
  }
}

template <class T>
using Buffer = cudart::device_buffer<T>;

/// The network's arrays on the device.
class DeviceNet {
 public:
  explicit DeviceNet(Network const& n)
      : cell_street_(n.cells(), "traffic cell streets"),
        cell_next_(n.cells(), "traffic cell successors"),
        cell_producer_(n.cells(), "traffic producer flags"),
        street_first_(n.streets(), "traffic street starts"),
        street_limit_(n.streets(), "traffic speed limits"),
        street_turns_(3 * std::size_t{n.streets()}, "traffic turns"),
        producers_(std::max<std::size_t>(n.producers.size(), 1), "traffic producers"),
        num_producers_(static_cast<std::uint32_t>(n.producers.size())) {
    cudart::copy_to_device_async(cell_street_.data(), n.cell_street.data(), n.cells(), nullptr);
    cudart::copy_to_device_async(cell_next_.data(), n.cell_next.data(), n.cells(), nullptr);
    cudart::copy_to_device_async(cell_producer_.data(), n.cell_producer.data(), n.cells(), nullptr);
    cudart::copy_to_device_async(street_first_.data(), n.street_first.data(), n.streets(), nullptr);
    cudart::copy_to_device_async(street_limit_.data(), n.street_limit.data(), n.streets(), nullptr);
    cudart::copy_to_device_async(
        street_turns_.data(), n.street_turns.data(), n.street_turns.size(), nullptr);
    cudart::copy_to_device_async(
        producers_.data(), n.producers.data(), n.producers.size(), nullptr);
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
    net_.cells         = n.cells();
    net_.streets       = n.streets();
    net_.cell_street   = cell_street_.data();
    net_.cell_next     = cell_next_.data();
    net_.cell_producer = cell_producer_.data();
    net_.street_first  = street_first_.data();
    net_.street_limit  = street_limit_.data();
    net_.street_turns  = street_turns_.data();
  }
  [[nodiscard]] Net const& net() const { return net_; }
  [[nodiscard]] std::uint32_t const* producers() const { return producers_.data(); }
  [[nodiscard]] std::uint32_t num_producers() const { return num_producers_; }

 private:
  Buffer<std::uint32_t> cell_street_, cell_next_;
  Buffer<std::uint8_t> cell_producer_;
  Buffer<std::uint32_t> street_first_, street_limit_, street_turns_, producers_;
  std::uint32_t num_producers_;
  Net net_;
};

struct Phases {
  double decide_ms = 0, move_ms = 0, spawn_ms = 0;
  [[nodiscard]] double total() const { return decide_ms + move_ms + spawn_ms; }
  void add(Phases const& o) {
    decide_ms += o.decide_ms;
    move_ms += o.move_ms;
    spawn_ms += o.spawn_ms;
  }
};

/// A PhaseClock's times of one iteration: decide, move, spawn.
Phases phases_from(std::vector<float> const& ms) {
  Phases p;
  p.decide_ms = ms.at(0);
  p.move_ms   = ms.at(1);
  p.spawn_ms  = ms.at(2);
  return p;
}

struct CsvRow {
  char const* variant;
  int iteration;
  std::uint64_t cars, moving, live_objects, allocated_blocks;
  double fragmentation;
  Phases phases;
};

/// What the heap variant and the variants on other allocators share beside their heap: a Car* per
/// cell (the compactor's root array in the heap variant), the claims, the counters and the Board
/// over them, and the iteration's phases on either heap.
class CarCells {
 public:
  CarCells(Params const& p, Network const& network, DeviceNet const& dn)
      : n_(network.cells()),
        cells_(n_, "traffic car pointers"),
        claims_(network.streets(), "traffic claims"),
        failed_(1, "traffic failed allocations"),
        counts_(1, "traffic census") {
    b_.p             = p;
    b_.net           = dn.net();
    b_.cells         = cells_.data();
    b_.claims        = claims_.data();
    b_.producers     = dn.producers();
    b_.num_producers = dn.num_producers();
    b_.failed_allocs = failed_.data();
  }

  /// No car in any cell and no failed allocation (asynchronous on s).
  void clear(cudaStream_t s) {
    cells_.set_zero_async(s);
    failed_.set_zero_async(s);
  }

  [[nodiscard]] std::size_t size() const { return n_; }
  [[nodiscard]] Car** cells() const { return cells_.data(); }
  [[nodiscard]] unsigned long long* counts() const { return counts_.data(); }

  /// Iteration `it`'s phases (the top of this file) on H: soa::Heap<Types> or AnyHeap<Types, A>,
  /// timed by events between the phases on H's stream, read once at the end (PhaseClock).
  template <class H>
  Phases step(H& heap, std::uint32_t it, PhaseClock& clock) {
    using Ref    = std::decay_t<decltype(heap.ref())>;
    b_.it        = it;
    auto const s = heap.stream();
    clock.start();
    HEAPLAB_CUDA_TRY(
        cudaMemsetAsync(claims_.data(), 0xFF, claims_.size() * sizeof(std::uint64_t), s));
    // decide creates and destroys no car: move (arrivals destroy themselves) runs on its
    // enumeration as the last do-all (Heap::Enumeration).
    auto cars = heap.template enumerate<Car>();
    cars.template parallel_do<&Car::decide>(b_);
    clock.mark();
    cars.template last_parallel_do<&Car::move<Ref>>(heap.ref(), b_);
    clock.mark();
    spawn_kernel<<<blocks_for(b_.num_producers), kThreads, 0, s>>>(heap.ref(), b_);
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    clock.mark();
    return phases_from(clock.phases_ms());
  }

  /// New cars that got no object so far (synchronizes s).
  std::uint64_t failed(cudaStream_t s) const { return cudart::value_to_host(failed_.data(), s); }

  /// The cars with a nonzero velocity (a parallel_do<Car>; synchronizes).
  template <class H>
  std::uint64_t moving(H& heap) {
    counts_.set_zero_async(heap.stream());
    heap.template parallel_do<Car, &Car::count_moving>(counts_.data());
    return cudart::value_to_host(counts_.data(), heap.stream());
  }

  /// The grid: per cell its pointer and whether that is a Car (StateView's cars left empty).
  StateView grid_view(cudaStream_t s) const {
    StateView out;
    Buffer<std::uint64_t> handles(n_, "traffic check: grid pointers");
    Buffer<std::uint8_t> is_car(n_, "traffic check: grid kinds");
    grid_view_kernel<<<blocks_for(n_), kThreads, 0, s>>>(b_, handles.data(), is_car.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    out.handle.resize(n_);
    out.is_car.resize(n_);
    cudart::copy_to_host(out.handle.data(), handles.data(), n_, s);
    cudart::copy_to_host(out.is_car.data(), is_car.data(), n_, s);
    return out;
  }

 private:
  std::size_t n_;
  Buffer<Car*> cells_;
  Buffer<std::uint64_t> claims_;
  Buffer<unsigned long long> failed_, counts_;
  Board b_;
};

class HeapApp {
 public:
  HeapApp(TrafficOptions const& o, Params const& p, Network const& network, DeviceNet const& dn)
      : cars_(p, network, dn),
        heap_(Heap::with_blocks(heap_blocks(o, network.cells()), heap_options(o.heap))),
        defrag_(heap_, o.heap, {Types::type_id<Car>}) {
    auto const s = heap_.stream();
    cars_.clear(s);
    defrag_.compactor().add_roots(
        {reinterpret_cast<std::uint64_t*>(cars_.cells()), cars_.size(), Types::type_id<Car>});
    heap_.parallel_do<Car, &Car::count_moving>(cars_.counts());  // untimed: parallel_do scratch
    HEAPLAB_CUDA_TRY(cudaStreamSynchronize(s));
  }

  [[nodiscard]] std::uint32_t num_blocks() const { return heap_.config().num_blocks; }

  Phases step(std::uint32_t it) { return cars_.step(heap_, it, clock_); }

  /// Throws OutOfMemory when a make answered null so far (the heap's count, then the app's own:
  /// both are cumulative, so a check after every step sees every null before any --check). The
  /// set-up makes no car: the first check is after iteration 1's spawn.
  void throw_on_failed_allocations(int iteration) {
    std::string const detail =
        "new cars found the heap full; raise --heap-blocks or --memory-mib (now " +
        std::to_string(num_blocks()) + " blocks)";
    require_no_failed_allocations("traffic", "heap", heap_.oom_count(), at_step(iteration), detail);
    require_no_failed_allocations(
        "traffic", "heap", cars_.failed(heap_.stream()), at_step(iteration), detail);
  }

  std::uint64_t moving() { return cars_.moving(heap_); }

  StateView view() {
    StateView out = cars_.grid_view(heap_.stream());
    out.cars      = export_objects<Car, &Car::export_view, CarView>(heap_, "traffic");
    return out;
  }

  /// The heap's own checks after check_state (heap_check.cuh).
  std::optional<std::string> heap_problem(std::size_t enumerated) const {
    return apps::heap_problem(heap_, enumerated);
  }

  CsvRow csv_row(char const* variant, int it, Phases const& ph) {
    auto const stats = statistics();
    return {variant,
            it,
            stats.used_slots,
            moving(),
            stats.used_slots,
            stats.allocated_blocks,
            stats.fragmentation,
            ph};
  }

  /// After the summary: the defragmentation and the final cars; label "heap:".
  void print_final(std::string const& label, Phases const& total) {
    if (auto const& d = defrag_total(); d.defrag_calls > 0)
      std::printf("%-9s defragmentation %s, %.1f%% of the iterations' time\n",
                  label.c_str(),
                  defrag_summary().c_str(),
                  100.0 * d.defrag_ms / std::max(total.total(), 1e-9));
    auto const stats = statistics();
    std::printf("%-9s final %llu cars (%llu moving) in %llu blocks, F %.4f\n",
                label.c_str(),
                static_cast<unsigned long long>(stats.used_slots),
                static_cast<unsigned long long>(moving()),
                static_cast<unsigned long long>(stats.allocated_blocks),
                stats.fragmentation);
  }

  void end_of_iteration(IterationCost& cost) { (void)defrag_.end_of_iteration(cost); }
  [[nodiscard]] IterationCost const& defrag_total() const { return defrag_.total(); }
  [[nodiscard]] std::string defrag_summary() const { return defrag_.summary(); }
  soa::HeapStatistics statistics() const { return heap_.statistics(); }

 private:
  /// --heap-blocks, else --memory-mib's blocks, else the default (traffic.hpp).
  static std::uint32_t heap_blocks(TrafficOptions const& o, std::uint64_t n) {
    std::uint64_t const b = 2 * ((n + Types::capacity<Car> - 1) / Types::capacity<Car>)+64;
    return heap_blocks_for(o.heap, Types::block_bytes, b, "traffic");
  }

  CarCells cars_;
  Heap heap_;
  DefragLoop<Types> defrag_;
  PhaseClock clock_{heap_.stream(), 3};
};

// ------------------------------------------------------------------------ other allocators

/// The same app on another allocator (common/any_heap.cuh; DynaSOAr Fig. 10): Car objects from
/// Allocator's malloc, AOS, with the standalone do-all; the phases and cells are the heap
/// variant's (CarCells).
template <class Allocator>
class AnyApp {
 public:
  using AnyCars = AnyHeap<Types, Allocator>;

  /// Car's object array: entries between two compactions. It is compacted at every
  /// parallel_do<Car> (decide, move; the census and --check's export); between move's and the
  /// next decide's, only spawn creates. At a compaction at most one car per cell lives, move only
  /// destroys (its entries stay until the next compaction), and spawn adds at most one car per
  /// producer: at most cells + producers entries, at any size and spawn rate (128 x 128: 574,508;
  /// the largest 2048 x 2048 grid: below 2.1e8 < 2^31).
  static std::uint32_t max_objects(Network const& network) {
    return network.cells() + static_cast<std::uint32_t>(network.producers.size());
  }

  /// The pool: at most one car per cell lives at any time (move frees, in an earlier kernel than
  /// spawn's mallocs), each a grant of request_bytes<Car>() (64) or, realigned, 63 more; twice 128
  /// bytes per cell and 64 MiB leave the allocator room for its headers and fragmentation even in
  /// a gridlock that fills every cell (128 x 128: 200 MiB). rw-malloc's pool is at most 2^30 pages
  /// of 16 bytes (16 GiB): it refuses grids above 66.8 million cells (about 1,400 x 1,400
  /// intersections) with its own error. --memory-mib replaces it (memory_budget.hpp).
  static std::uint64_t pool_bytes(HeapFlags const& flags, std::uint64_t cells) {
    return pool_bytes_for(
        flags, 2 * cells * (AnyCars::template request_bytes<Car>() + 64) + (64ull << 20));
  }

  AnyApp(TrafficOptions const& o, Params const& p, Network const& network, DeviceNet const& dn)
      : cars_(p, network, dn),
        pool_bytes_(pool_bytes(o.heap, network.cells())),
        heap_(pool_bytes_, max_objects(network)) {
    cars_.clear(heap_.stream());
    // untimed, as the heap variant's
    heap_.template parallel_do<Car, &Car::count_moving>(cars_.counts());
    HEAPLAB_CUDA_TRY(cudaStreamSynchronize(heap_.stream()));
  }

  /// One iteration; its do-alls' enumeration time is added to enumeration_ms_ (not the census's
  /// or --check's, which are not timed).
  Phases step(std::uint32_t it) {
    double const before = heap_.enumeration_ms();
    Phases const p      = cars_.step(heap_, it, clock_);
    enumeration_ms_ += heap_.enumeration_ms() - before;
    return p;
  }

  /// Throws when a new car got no object so far (cumulative: a check after every step sees it
  /// before any --check): OutOfMemory when the allocator returned null (nulls()), else
  /// std::runtime_error (Car's array was full; max_objects says why it cannot be).
  void throw_on_failed_allocations(int iteration) {
    auto const failed        = cars_.failed(heap_.stream());
    std::string const name   = AnyCars::allocator_name();
    std::string const detail = std::to_string(failed) + " new cars got no object (" +
                               std::to_string(heap_.nulls()) +
                               " nulls from the allocator, pool of " + std::to_string(pool_bytes_) +
                               " bytes; else Car's array was full)";
    require_no_failed_allocations(
        "traffic", name.c_str(), heap_.nulls(), at_step(iteration), detail);
    if (failed != 0)
      throw std::runtime_error("traffic " + name + ": iteration " + std::to_string(iteration) +
                               ": " + detail);
  }

  std::uint64_t moving() { return cars_.moving(heap_); }

  StateView view() {
    StateView out = cars_.grid_view(heap_.stream());
    out.cars      = export_objects<Car, &Car::export_view, CarView>(heap_, "traffic");
    return out;
  }

  /// The heap's live count equals what the enumeration found.
  std::optional<std::string> heap_problem(std::size_t enumerated) {
    std::uint64_t const live = heap_.template live<Car>();
    if (live == enumerated) return std::nullopt;
    return "the " + AnyCars::allocator_name() + " heap counts " + std::to_string(live) +
           " live cars, its enumeration " + std::to_string(enumerated);
  }

  CsvRow csv_row(char const* variant, int it, Phases const& ph) {
    std::uint64_t const live = heap_.template live<Car>();
    return {variant, it, live, moving(), live, 0, 0.0, ph};
  }

  /// After the summary: the enumeration time (DynaSOAr Fig. 10's hatched part) and the final cars.
  void print_final(std::string const& label, Phases const& total) {
    std::string const variant = label.substr(0, label.size() - 1);  // "<name>:"
    heap_.print_enumeration("traffic", variant.c_str(), enumeration_ms_, total.total());
    std::uint64_t const live = heap_.template live<Car>();
    std::printf("%-9s final %llu cars (%llu moving)\n",
                label.c_str(),
                static_cast<unsigned long long>(live),
                static_cast<unsigned long long>(moving()));
  }

 private:
  CarCells cars_;
  std::uint64_t pool_bytes_;
  AnyCars heap_;
  double enumeration_ms_ = 0;  // the timed iterations' (step)
  PhaseClock clock_{heap_.stream(), 3};
};

/// The baseline's device arrays (dense.hpp's layout).
class BaselineApp {
 public:
  /// The car fields per cell besides presence and id: velocity, max_velocity, trip, target,
  /// next_velocity, claim, stop, stop_velocity.
  static constexpr std::uint64_t kCarFields = 8;

  /// Bytes of the arrays that hold what the heap variant keeps in Car objects (memory_budget.hpp):
  /// per cell a presence byte, the id (u64) and kCarFields u32. Not counted: the per-street claims
  /// and the network, which the heap variant has alike, and `incoming`, the cell-to-cell link the
  /// heap variant keeps in its Car* per cell (not counted there either).
  static std::uint64_t object_bytes(std::uint64_t cells) {
    return cells *
           (sizeof(std::uint8_t) + sizeof(std::uint64_t) + kCarFields * sizeof(std::uint32_t));
  }

  BaselineApp(Params const& p, Network const& network, DeviceNet const& dn)
      : n_(network.cells()),
        streets_(network.streets()),
        present_(n_, "traffic baseline presence"),
        u64_(n_, "traffic baseline ids"),
        u32_(kCarFields * n_, "traffic baseline fields"),
        incoming_(n_, "traffic baseline incoming"),
        claims_(streets_, "traffic baseline claims") {
    d_.p             = p;
    d_.net           = dn.net();
    d_.present       = present_.data();
    d_.id            = u64_.data();
    d_.velocity      = u32_.data();
    d_.max_velocity  = u32_.data() + n_;
    d_.trip          = u32_.data() + 2 * n_;
    d_.target        = u32_.data() + 3 * n_;
    d_.next_velocity = u32_.data() + 4 * n_;
    d_.claim         = u32_.data() + 5 * n_;
    d_.stop          = u32_.data() + 6 * n_;
    d_.stop_velocity = u32_.data() + 7 * n_;
    d_.incoming      = incoming_.data();
    d_.claims        = claims_.data();
    present_.set_zero_async(nullptr);
    u64_.set_zero_async(nullptr);
    u32_.set_zero_async(nullptr);
    incoming_.set_zero_async(nullptr);
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  }

  Phases step(std::uint32_t it) {
    auto run = [&](std::initializer_list<DensePhase> phases) {
      for (DensePhase ph : phases) {
        dense_kernel<<<blocks_for(n_), kThreads>>>(d_, it, ph);
        HEAPLAB_CUDA_TRY(cudaGetLastError());
      }
      clock_.mark();
    };
    clock_.start();
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(d_.claims, 0xFF, streets_ * sizeof(std::uint64_t), nullptr));
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(d_.incoming, 0xFF, n_ * sizeof(std::uint32_t), nullptr));
    run({kDecide});
    run({kResolve, kPull, kLeave});
    run({kSpawnPhase});
    return phases_from(clock_.phases_ms());
  }

  World download(Params const& p, Network const& network) {
    World w = initial_world(p, network);
    cudart::copy_to_host(w.present.data(), d_.present, n_);
    cudart::copy_to_host(w.id.data(), d_.id, n_);
    cudart::copy_to_host(w.velocity.data(), d_.velocity, n_);
    cudart::copy_to_host(w.max_velocity.data(), d_.max_velocity, n_);
    cudart::copy_to_host(w.trip.data(), d_.trip, n_);
    return w;
  }

 private:
  std::size_t n_, streets_;
  Buffer<std::uint8_t> present_;
  Buffer<std::uint64_t> u64_;
  Buffer<std::uint32_t> u32_;  // kCarFields arrays of n_
  Buffer<std::uint32_t> incoming_;
  Buffer<std::uint64_t> claims_;
  Dense d_;
  PhaseClock clock_{nullptr, 3};
};

void write_row(std::FILE* csv, CsvRow const& r) {
  if (csv == nullptr) return;
  std::fprintf(csv,
               "%s,%d,%llu,%llu,%llu,%llu,%.6f,%.4f,%.4f,%.4f\n",
               r.variant,
               r.iteration,
               static_cast<unsigned long long>(r.cars),
               static_cast<unsigned long long>(r.moving),
               static_cast<unsigned long long>(r.live_objects),
               static_cast<unsigned long long>(r.allocated_blocks),
               r.fragmentation,
               r.phases.decide_ms,
               r.phases.move_ms,
               r.phases.spawn_ms);
}

bool check_due(TrafficOptions const& o, int it) {
  return o.check && (it % o.check_every == 0 || it == o.iterations);
}

/// --check of one variant after iteration `it` against the reference: prints the first problem,
/// false when there is one.
template <class App>
bool check_variant(char const* variant, App& app, World const& reference, int it) {
  auto const fail = [&](std::string const& what) {
    std::printf("traffic --check FAILED at iteration %d (%s): %s\n", it, variant, what.c_str());
    return false;
  };
  StateView const s = app.view();
  if (auto v = check_state(s, reference)) return fail(*v);
  if (auto v = app.heap_problem(s.cars.size())) return fail(*v);
  return true;
}

void print_summary(char const* variant, int iterations, Phases const& t) {
  std::printf("%-9s %d iterations, decide %.3f ms, move %.3f ms, spawn %.3f ms, total %.3f ms\n",
              variant,
              iterations,
              t.decide_ms,
              t.move_ms,
              t.spawn_ms,
              t.total());
}

/// Runs one variant (HeapApp or AnyApp); returns its total time (ms), negative when --check
/// failed. `final_view`, when not null, gets the state after the last iteration (untimed).
template <class App>
double run_variant(TrafficOptions const& o,
                   char const* variant,
                   App& app,
                   Params const& p,
                   Network const& network,
                   std::FILE* csv,
                   ProfileCsv& profile,
                   StateView* final_view) {
  constexpr bool is_heap = std::is_same_v<App, HeapApp>;
  World reference        = initial_world(p, network);
  Phases total;
  for (int it = 1; it <= o.iterations; ++it) {
    Phases const ph = app.step(static_cast<std::uint32_t>(it));
    app.throw_on_failed_allocations(it);
    IterationCost cost;
    cost.app_ms = ph.total();
    if constexpr (is_heap) app.end_of_iteration(cost);
    total.add(ph);
    if (o.check) step(reference, static_cast<std::uint32_t>(it));
    if (check_due(o, it) && !check_variant(variant, app, reference, it)) return -1;
    if constexpr (is_heap) {
      if (profile.enabled()) profile.write(variant, it, app.statistics(), cost);
    }
    if (csv != nullptr) write_row(csv, app.csv_row(variant, it, ph));
  }
  std::string const label = std::string(variant) + ":";
  print_summary(label.c_str(), o.iterations, total);
  app.print_final(label, total);
  if (final_view != nullptr) *final_view = app.view();
  if constexpr (is_heap) {
    return total.total() + app.defrag_total().defrag_ms;
  } else {
    return total.total();
  }
}

double run_heap(TrafficOptions const& o,
                Params const& p,
                Network const& network,
                DeviceNet const& dn,
                std::FILE* csv,
                ProfileCsv& profile,
                StateView* final_view) {
  HeapApp app(o, p, network, dn);
  std::printf("heap: %u blocks of %u bytes, %u Car objects per block\n",
              app.num_blocks(),
              static_cast<unsigned>(Types::block_bytes),
              static_cast<unsigned>(Types::capacity<Car>));
  return run_variant(o, "heap", app, p, network, csv, profile, final_view);
}

double run_baseline(TrafficOptions const& o,
                    Params const& p,
                    Network const& network,
                    DeviceNet const& dn,
                    std::FILE* csv) {
  std::uint64_t const cells = network.cells();
  std::uint64_t const bytes = BaselineApp::object_bytes(cells);
  std::printf(
      "baseline: object arrays %llu bytes (%llu cells x %llu: the cars' fields and presence)\n",
      static_cast<unsigned long long>(bytes),
      static_cast<unsigned long long>(cells),
      static_cast<unsigned long long>(BaselineApp::object_bytes(1)));
  require_baseline_fits(o.heap, "traffic", bytes);
  BaselineApp app(p, network, dn);
  World reference = initial_world(p, network);
  Phases total;
  for (int it = 1; it <= o.iterations; ++it) {
    Phases const ph = app.step(static_cast<std::uint32_t>(it));
    total.add(ph);
    if (o.check) step(reference, static_cast<std::uint32_t>(it));
    bool const need_host = check_due(o, it) || csv != nullptr || it == o.iterations;
    if (!need_host) continue;
    World const w = app.download(p, network);
    if (check_due(o, it))
      if (auto v = check_state(view_of(w), reference)) {
        std::printf("traffic --check FAILED at iteration %d (baseline): %s\n", it, v->c_str());
        return -1;
      }
    auto const pop = population(w);
    write_row(csv, {"baseline", it, pop.cars, pop.moving, 0, 0, 0.0, ph});
    if (it == o.iterations) {
      print_summary("baseline:", o.iterations, total);
      std::printf("baseline: final %llu cars (%llu moving)\n",
                  static_cast<unsigned long long>(pop.cars),
                  static_cast<unsigned long long>(pop.moving));
    }
  }
  return total.total();
}

/// `traffic heap / <variant>: R x (same run)` and whether the variant's final state is the heap
/// variant's: the same cars (id, velocity, speed limit, trip) in the same cells, as it must be (the
/// run is deterministic: the top of this file); a difference is reported, --check fails it.
void compare_with_heap(char const* variant,
                       int iterations,
                       double heap_ms,
                       double ms,
                       World const& heap_final,
                       StateView const& final_view) {
  print_heap_ratio("traffic", variant, heap_ms, ms);
  auto const diff = check_state(final_view, heap_final);
  std::printf("traffic heap vs %s after %d iterations: %s\n",
              variant,
              iterations,
              diff ? ("DIFFER (\"reference\" is the heap variant): " + *diff).c_str()
                   : "the same cars in the same cells");
}

/// Each --allocators variant after the heap's (and the baseline's), compared with the heap's
/// final state when the heap ran (heap_ms given); false when its --check failed.
bool run_allocators(TrafficOptions const& o,
                    Params const& p,
                    Network const& network,
                    DeviceNet const& dn,
                    std::FILE* csv,
                    ProfileCsv& profile,
                    std::optional<double> heap_ms,
                    StateView const& heap_view) {
  std::optional<World> heap_final;
  if (heap_ms) heap_final = world_of(heap_view, p, network);
  for (auto const& name : o.allocators) {
    StateView final_view;
    double ms = 0;
    with_allocator(name, [&](auto tag) {
      using App = AnyApp<typename decltype(tag)::type>;
      App app(o, p, network, dn);
      std::printf(
          "%s: Car objects of %llu bytes (AOS), room for %u between compactions, pool "
          "of %llu bytes\n",
          name.c_str(),
          static_cast<unsigned long long>(App::AnyCars::template request_bytes<Car>()),
          App::max_objects(network),
          static_cast<unsigned long long>(App::pool_bytes(o.heap, network.cells())));
      ms = run_variant(
          o, name.c_str(), app, p, network, csv, profile, heap_ms ? &final_view : nullptr);
    });
    if (ms < 0) return false;
    if (heap_ms)
      compare_with_heap(name.c_str(), o.iterations, *heap_ms, ms, *heap_final, final_view);
  }
  return true;
}

std::uint32_t per_mille(double rate, char const* option) {
  if (!(rate >= 0.0 && rate <= 1.0))
    throw std::invalid_argument(std::string("traffic: ") + option + " must be in [0, 1]");
  return static_cast<std::uint32_t>(rate * 1000.0 + 0.5);
}

}  // namespace

int run_traffic(TrafficOptions const& o) {
  if (o.iterations < 0) throw std::invalid_argument("traffic: --iterations must be >= 0");
  if (o.check_every < 1) throw std::invalid_argument("traffic: --check-every must be >= 1");
  apps::validate(o.heap);
  apps::validate_allocators(o.allocators);
  Params p;
  p.width           = o.width;
  p.height          = o.height;
  p.seed            = o.seed;
  p.spawn_per_mille = per_mille(o.spawn_rate, "--spawn-rate");
  p.slow_per_mille  = per_mille(o.slow, "--slow");
  Network const network(p);
  auto const d = cudart::probe_device();
  if (!d.available) throw NoDevice(d.reason);
  std::printf("%s\n", cudart::device_line(d).c_str());
  std::printf(
      "traffic: %ux%u intersections, %u streets, %u cells, %zu producers, spawn rate %.3f, slow "
      "%.3f, seed %llu, %d iterations%s%s\n"
      "traffic: heap: %s\n",
      o.width,
      o.height,
      network.streets(),
      network.cells(),
      network.producers.size(),
      p.spawn_per_mille / 1000.0,
      p.slow_per_mille / 1000.0,
      static_cast<unsigned long long>(o.seed),
      o.iterations,
      o.check ? (", --check every " + std::to_string(o.check_every)).c_str() : "",
      planted_bug_note(core::mutant::kPlanted).c_str(),
      describe(o.heap).c_str());
  // Before any kernel of this file runs (allocators.cuh): the cuda-malloc variant's pool.
  reserve_cuda_malloc(
      o.allocators, AnyApp<malloc_family::CudaMallocAdapter>::pool_bytes(o.heap, network.cells()));
  DeviceNet const dn(network);
  CsvFile const csv = open_csv(o.csv,
                               "traffic",
                               "variant,iteration,cars,moving,live_objects,allocated_blocks,"
                               "fragmentation,decide_ms,move_ms,spawn_ms");
  ProfileCsv profile;
  if (!o.profile.empty()) profile = ProfileCsv(o.profile, "traffic", Types::block_bytes);
  StateView heap_view;  // the heap's final state, for the other allocators' comparison
  bool const others = !o.allocators.empty();
  std::optional<double> heap_ms;  // nullopt: --only another variant
  if (o.heap.run_heap) {
    heap_ms = run_heap(o, p, network, dn, csv.get(), profile, others ? &heap_view : nullptr);
    if (*heap_ms < 0) return 1;
  }
  std::optional<double> base_ms;
  if (o.baseline) {
    base_ms = run_baseline(o, p, network, dn, csv.get());
    if (*base_ms < 0) return 1;
  }
  if (heap_ms)
    report_heap_and_baseline("traffic", *heap_ms, base_ms);
  else if (base_ms)
    print_result_line("traffic", "baseline", *base_ms, std::nullopt);
  if (others && !run_allocators(o, p, network, dn, csv.get(), profile, heap_ms, heap_view))
    return 1;
  if (o.check) std::printf("traffic --check passed\n");
  return 0;
}

}  // namespace heaplab::apps::traffic
