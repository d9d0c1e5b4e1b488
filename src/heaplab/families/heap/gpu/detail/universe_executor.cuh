// UniverseExecutorOf<Types>: the GPU executor for one type list (docs/gpu-runner.md "Steps on the
// GPU"). Included by the universe_*.cu files only. nvcc only.
//
// Per step: the host turns the StepPlan into device arrays (ids resolved to the objects'
// current encoded pointers through the id map), launches the step's kernels on the heap's own
// stream, waits for them with the watchdog (never blocking on a stuck kernel), checks the
// device's error reports, reads what the kernels observed (new pointers, visit counts; their
// copies were ordered after the kernels, so the one wait covers them), takes
// Heap::snapshot_with_payloads(), rebuilds the id map from it (ids are in the objects, so the map
// follows objects that CompactGpu moves) and translates the snapshot to the schedule config
// (TypeMap).
//
// A step's argument and result arrays live in the worker's step arena (cuda/step_arena.hpp,
// UniverseOptions::arena): page-locked host mirrors copied with one asynchronous copy per
// launch, no allocation, no synchronizing copy per array. 16 workers share one CUDA context, and
// ~20 allocating and synchronizing calls per step made them wait for each other (docs/results.md
// "The GPU stress rate"). The heap's own memory and the arena are freed with cudaFree, which waits
// for the device: after a hang they are leaked on purpose (the process must end anyway,
// runner.hpp).
#pragma once

#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <future>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "heaplab/compact/compactor.cuh"
#include "heaplab/core/cookie.hpp"
#include "heaplab/core/hex.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/core/perturb.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/cuda/step_arena.hpp"
#include "heaplab/cuda/watchdog.hpp"
#include "heaplab/families/heap/gpu/detail/step_kernels.cuh"
#include "heaplab/families/heap/gpu/detail/universe_executor.hpp"
#include "heaplab/model/interpreter.hpp"
#include "heaplab/schedule/plan.hpp"

namespace heaplab::heap_family::gpu::detail {

/// A device array from the stream-ordered allocator, freed (asynchronously) on the same stream.
template <class T>
using StreamBuffer = cudart::device_buffer<T>;

/// A stream-ordered buffer of `count` zero-initialized elements (the roots array).
template <class T>
StreamBuffer<T> zeros(std::size_t count, cudaStream_t stream) {
  auto b = StreamBuffer<T>::stream_ordered(count, stream, "root array");
  b.set_zero_async(stream);
  return b;
}

/// A CUDA stream owned by the universe executor (non-blocking with respect to the legacy default
/// stream).
class OwnedStream {
 public:
  OwnedStream() { HEAPLAB_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~OwnedStream() {
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);  // returns at once; work drains
  }
  OwnedStream(OwnedStream const&)            = delete;
  OwnedStream& operator=(OwnedStream const&) = delete;
  [[nodiscard]] cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

inline unsigned blocks_for(std::uint64_t threads, unsigned block_size) {
  return static_cast<unsigned>(cudart::ceil_div(threads, block_size));
}

template <class Types>
class UniverseExecutorOf final : public UniverseExecutor {
 public:
  using Ref = soa::HeapRef<Types>;

  UniverseExecutorOf(TypeMap map, UniverseOptions const& options)
      : map_(std::move(map)), options_(options), dog_(options.watchdog_budget) {
    HEAPLAB_EXPECTS(options_.arena != nullptr, "UniverseExecutorOf needs a step arena");
    soa::HeapOptions heap_options;
    heap_options.defrag_factor = map_.gpu().defrag_factor;
    heap_options.k1            = map_.gpu().k1;
    heap_options.stream        = stream_.get();
    heap_                      = std::make_unique<soa::Heap<Types>>(
        soa::Heap<Types>::with_blocks(map_.gpu().num_blocks, heap_options));
  }

  ~UniverseExecutorOf() override {
    // After a hang the stream still runs the stuck kernel (or a defragmentation thread still
    // uses the heap) and cudaFree would wait forever: leak the heap, in place (the process is
    // about to end, runner.hpp "hang").
    if (hung_) (void)heap_.release();
  }

  [[nodiscard]] TypeMap const& map() const override { return map_; }
  [[nodiscard]] bool hung() const override { return hung_; }

  void reset() override {
    expect_usable();
    heap_->reset();
    num_roots_   = 0;
    step_number_ = 0;
    pointer_of_.clear();
    heap_->synchronize();
  }

  ExecutedStep execute(schedule::Step const& step, schedule::StepPlan const& plan) override {
    expect_usable();
    ++step_number_;
    arena().reset();  // the previous step's kernels and copies have completed
    Pending pending;
    std::visit([&](auto const& s) { launch(s, plan, pending); }, step);

    cudart::WaitResult waited;
    if (pending.defrag) {
      // CompactGpu synchronizes inside the call (once per pass), so it runs on its own thread
      // and the watchdog bounds the whole call here.
      if (pending.defrag->wait_for(dog_.budget()) != std::future_status::ready) {
        waited.status = cudart::WaitStatus::timed_out;
      } else {
        pending.defrag_passes = pending.defrag->get();  // rethrows the call's exception
      }
    }
    if (!waited.timed_out()) waited = dog_.wait(stream_.get());
    if (waited.timed_out()) {
      hung_ = true;
      ExecutedStep out;
      char budget[64];
      std::snprintf(budget, sizeof budget, "%.1f s", dog_.budget().count() / 1000.0);
      out.hang = std::string("the kernels of this ") + schedule::step_name(step) +
                 " step did not finish within the watchdog budget of " + budget +
                 " (cuda/watchdog.hpp); the GPU is still running them";
      return out;
    }
    if (!waited.completed())
      throw std::runtime_error(std::string("CUDA error while the ") + schedule::step_name(step) +
                               " step's kernels ran: " + waited.error);
    heap_->check_device_errors();  // debug checks: double free, foreign pointer

    ExecutedStep out;
    finish(pending, out);
    auto const read_from = std::chrono::steady_clock::now();
    // The field check's and the roots' copies are ordered before the snapshot's, which waits
    // for the stream.
    unsigned long long const* const bad_fields = launch_field_check();
    std::uint64_t const* roots                 = arena().fetch(roots_.data(), num_roots_, stream());
    check::HeapSnapshot raw                    = heap_->snapshot_with_payloads(options_.staging);
    expect_field_bytes(bad_fields);
    rebuild_id_map(raw);
    out.snapshot = map_.to_schedule_snapshot(std::move(raw));
    out.roots    = read_roots(roots);
    out.readback_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - read_from).count();
    return out;
  }

 private:
  /// What the step's kernels will report, read after the wait (host copies in the arena, their
  /// copies ordered after the kernels).
  struct Pending {
    // Allocations (alloc wave or parallel_do children): planned objects and their results.
    std::vector<schedule::ObjectId> ids;
    std::vector<std::uint32_t> schedule_types;
    std::uint64_t const* results = nullptr;
    // parallel_do
    bool parallel_do           = false;
    std::uint32_t visited_type = 0;  // schedule type
    std::vector<schedule::ObjectId> visit_ids;
    std::uint32_t const* visit_count  = nullptr;
    unsigned long long const* unknown = nullptr;
    std::optional<std::future<std::uint32_t>> defrag;  // the CompactGpu call's pass count
    std::optional<std::uint32_t> defrag_passes;
  };

  void expect_usable() const {
    if (hung_)
      throw std::logic_error("GPU executor used after a hang: the device still runs the kernel");
  }

  [[nodiscard]] cudaStream_t stream() const { return stream_.get(); }
  /// This step's warp-order perturbation seed (core/perturb.hpp): from shape_seed and the step
  /// number, so a replay of the schedule draws the same delays; 0 when perturbation is off.
  [[nodiscard]] std::uint64_t perturb_seed() const {
    return options_.perturb ? core::perturb_seed_for(options_.shape_seed, step_number_) : 0;
  }
  [[nodiscard]] Ref ref() const { return heap_->ref(); }
  [[nodiscard]] cudart::step_arena& arena() const { return *options_.arena; }

  /// *at := a device copy of `v` (in the arena; flushed before the launch). Returns v.size().
  template <class T>
  std::uint32_t upload(std::vector<T> const& v, T const** at) {
    *at = arena().put(v);
    return static_cast<std::uint32_t>(v.size());
  }

  /// The encoded pointer of a live object, as the heap's snapshot after the previous step showed
  /// it. A plan never names an object that is not live (plan_step works on the accepted id
  /// graph, which equals the GPU's once the previous step passed the snapshot diff).
  [[nodiscard]] std::uint64_t pointer_of(schedule::ObjectId id) const {
    auto const it = pointer_of_.find(id);
    if (it == pointer_of_.end())
      throw std::logic_error("the plan names object " + std::to_string(id) +
                             ", which the GPU heap does not hold");
    return it->second;
  }

  void check_slot(std::uint64_t object, std::uint32_t slot) const {
    std::uint32_t const t = core::pointer_type(object);
    if (slot >= Ref::num_pointer_slots(t))
      throw std::logic_error("pointer slot " + std::to_string(slot) + " of a '" +
                             map_.gpu().types[t].name + "' object does not exist");
  }

  // -------------------------------------------------------------------------------- alloc wave

  void launch(schedule::AllocWave const& wave, schedule::StepPlan const& plan, Pending& p) {
    auto const& allocs  = plan.allocations;
    std::size_t const n = allocs.size();
    std::vector<std::uint32_t> first(std::size_t{wave.threads} + 1, 0);
    std::size_t i = 0;
    for (std::uint32_t t = 0; t < wave.threads; ++t) {
      first[t] = static_cast<std::uint32_t>(i);
      while (i < n && allocs[i].thread == t) ++i;
      if (i - first[t] != schedule::lane_work(wave, t).count)
        throw std::logic_error("the plan gives wave thread " + std::to_string(t) + " " +
                               std::to_string(i - first[t]) + " allocations, lane_work " +
                               std::to_string(schedule::lane_work(wave, t).count));
    }
    first[wave.threads] = static_cast<std::uint32_t>(i);
    if (i != n) throw std::logic_error("the plan's allocations are not in thread order");
    if (n == 0) return;

    std::vector<std::uint32_t> type(n), link_first(n + 1), link_slot;
    std::vector<std::uint64_t> id(n), link_target;
    bool drop_link = options_.fault == InjectedFault::drop_first_link;
    for (std::size_t k = 0; k < n; ++k) {
      auto const& a = allocs[k];
      if (a.root != wave.roots) throw std::logic_error("a wave's objects differ in `root`");
      type[k]       = map_.to_gpu(a.type);
      id[k]         = a.id;
      link_first[k] = static_cast<std::uint32_t>(link_slot.size());
      if (a.refs.size() != Ref::num_pointer_slots(type[k]))
        throw std::logic_error("the plan gives object " + std::to_string(a.id) + " " +
                               std::to_string(a.refs.size()) + " pointer slots");
      for (std::uint32_t s = 0; s < a.refs.size(); ++s) {
        if (!a.refs[s]) continue;
        if (drop_link) {  // InjectedFault::drop_first_link
          drop_link = false;
          continue;
        }
        link_slot.push_back(s);
        link_target.push_back(pointer_of(*a.refs[s]));
      }
      p.ids.push_back(a.id);
      p.schedule_types.push_back(a.type);
    }
    link_first[n] = static_cast<std::uint32_t>(link_slot.size());

    AllocWaveArgs args;
    args.threads = wave.threads;
    upload(first, &args.first);
    upload(type, &args.type);
    upload(id, &args.id);
    upload(link_first, &args.link_first);
    upload(link_slot, &args.link_slot);
    upload(link_target, &args.link_target);
    std::uint64_t* const results = arena().template zeroed<std::uint64_t>(n);
    args.result                  = results;
    args.perturb_seed            = perturb_seed();
    arena().flush(stream());
    constexpr unsigned kBlock = 128;
    alloc_wave_kernel<Types>
        <<<blocks_for(wave.threads, kBlock), kBlock, 0, stream()>>>(ref(), args);
    HEAPLAB_CHECK_LAUNCH();
    if (options_.fault == InjectedFault::corrupt_field_byte) {
      corrupt_field_byte_kernel<Types><<<1, 1, 0, stream()>>>(ref(), results, n);
      HEAPLAB_CHECK_LAUNCH();
    }
    p.results = arena().fetch(results, n, stream());
    if (wave.roots) {  // every attempt appends a root: the new object or null (0)
      ensure_root_capacity(num_roots_ + n);
      cudart::copy_on_device_async(roots_.data() + num_roots_, results, n, stream());
      num_roots_ += n;
    }
  }

  // ----------------------------------------------------------------------------- nulling, free

  void launch_nulling(schedule::StepPlan const& plan) {
    std::vector<std::uint64_t> object;
    std::vector<std::uint32_t> slot, root_index;
    for (auto const& w : plan.null_refs) {
      if (w.target) throw std::logic_error("a nulling write with a target");
      std::uint64_t const o = pointer_of(w.object);
      check_slot(o, w.slot);
      object.push_back(o);
      slot.push_back(w.slot);
    }
    for (std::size_t r : plan.null_roots) {
      if (r >= num_roots_)
        throw std::logic_error("the plan nulls root " + std::to_string(r) + " of " +
                               std::to_string(num_roots_));
      root_index.push_back(static_cast<std::uint32_t>(r));
    }
    if (object.empty() && root_index.empty()) return;
    NullingArgs args;
    args.writes = upload(object, &args.object);
    upload(slot, &args.slot);
    args.num_roots              = upload(root_index, &args.root_index);
    args.roots                  = roots_.data();
    std::uint64_t const threads = std::uint64_t{args.writes} + args.num_roots;
    arena().flush(stream());
    constexpr unsigned kBlock = 128;
    nulling_kernel<Types><<<blocks_for(threads, kBlock), kBlock, 0, stream()>>>(ref(), args);
    HEAPLAB_CHECK_LAUNCH();
  }

  void launch(schedule::FreeWave const&, schedule::StepPlan const& plan, Pending&) {
    launch_nulling(plan);
    std::vector<std::uint64_t> objects;
    for (schedule::ObjectId id : plan.deletes) objects.push_back(pointer_of(id));
    if (options_.fault == InjectedFault::skip_last_free && !objects.empty()) objects.pop_back();
    launch_frees(objects);
  }

  /// Frees `objects` with one thread each, in a warp shape that changes from step to step
  /// (seeded by shape_seed and the step number): the order (ascending id, descending, a strided
  /// permutation, a shuffle), idle lanes between working ones (spacing 1..3) and the block size.
  void launch_frees(std::vector<std::uint64_t> objects) {
    std::size_t const n = objects.size();
    if (n == 0) return;
    std::uint64_t const r =
        core::cookie_of(options_.shape_seed * 0x9E3779B97F4A7C15ull + step_number_);
    std::uint32_t spacing = 1;
    unsigned block        = 128;
    switch (r % 4) {
      case 0:  // ascending id (the plan's order), dense
        break;
      case 1:  // descending, every other lane idle
        std::reverse(objects.begin(), objects.end());
        spacing = 2;
        block   = 64;
        break;
      case 2: {  // a strided permutation: neighbouring lanes free objects far apart
        std::size_t stride = 7;
        while (std::gcd(stride, n) != 1) stride += 2;
        std::vector<std::uint64_t> permuted(n);
        for (std::size_t i = 0; i < n; ++i) permuted[i] = objects[(i * stride) % n];
        objects = std::move(permuted);
        block   = 256;
        break;
      }
      default: {  // a seeded shuffle, two of every three lanes idle, one warp per block
        std::uint64_t state = r;
        for (std::size_t i = n; i > 1; --i)
          std::swap(objects[i - 1], objects[core::cookie_of(++state) % i]);
        spacing = 3;
        block   = 32;
        break;
      }
    }
    std::uint64_t const* d_objects = nullptr;
    upload(objects, &d_objects);
    arena().flush(stream());
    std::uint64_t const threads = std::uint64_t{n} * spacing;
    free_kernel<Types><<<blocks_for(threads, block), block, 0, stream()>>>(
        ref(), d_objects, static_cast<std::uint32_t>(n), spacing, perturb_seed());
    HEAPLAB_CHECK_LAUNCH();
  }

  // ------------------------------------------------------------------------------ parallel_do

  void launch(schedule::ParallelDo const& pdo, schedule::StepPlan const& plan, Pending& p) {
    launch_nulling(plan);
    std::size_t const v_count = plan.visits.size();
    std::vector<std::uint64_t> ids(v_count), victim(v_count, 0), relink_to(v_count, 0);
    std::vector<std::uint32_t> flags(v_count, 0), child(v_count, kNone);
    std::vector<std::uint32_t> child_type, child_back_slot;
    std::vector<std::uint64_t> child_id;
    for (std::size_t v = 0; v < v_count; ++v) {
      auto const& visit = plan.visits[v];
      if (v > 0 && visit.self <= ids[v - 1])
        throw std::logic_error("the plan's visits are not in ascending id order");
      ids[v] = visit.self;
      (void)pointer_of(visit.self);  // every visited object must be live
      if (visit.child) {
        auto const& a = plan.allocations.at(*visit.child);
        if (a.parent != visit.self)
          throw std::logic_error("child " + std::to_string(a.id) + " has another parent");
        std::uint32_t back = kNone;
        for (std::uint32_t s = 0; s < a.refs.size(); ++s) {
          if (!a.refs[s]) continue;
          if (*a.refs[s] != visit.self || back != kNone)
            throw std::logic_error("child " + std::to_string(a.id) +
                                   " has initial pointers other than one to its parent");
          back = s;
        }
        child[v] = static_cast<std::uint32_t>(child_id.size());
        child_type.push_back(map_.to_gpu(a.type));
        child_id.push_back(a.id);
        child_back_slot.push_back(back);
        p.ids.push_back(a.id);
        p.schedule_types.push_back(a.type);
      }
      if (visit.delete_self) flags[v] |= kActDeleteSelf;
      if (visit.victim) victim[v] = pointer_of(*visit.victim);
      if (visit.relink_to) {
        flags[v] |= kActRelink;
        relink_to[v] = *visit.relink_to ? pointer_of(**visit.relink_to) : 0;
      }
    }

    ActionTable table;
    table.visits      = upload(ids, &table.ids);
    table.parent_slot = plan.parent_slot;
    table.relink_slot = plan.relink_slot;
    upload(flags, &table.flags);
    upload(child, &table.child);
    upload(victim, &table.victim);
    upload(relink_to, &table.relink_to);
    upload(child_type, &table.child_type);
    upload(child_id, &table.child_id);
    upload(child_back_slot, &table.child_back_slot);
    table.child_result = arena().template zeroed<std::uint64_t>(child_id.size());
    table.visit_count  = arena().template zeroed<std::uint32_t>(v_count);
    table.unknown      = arena().template zeroed<unsigned long long>(2);
    table.perturb_seed = perturb_seed();
    p.parallel_do      = true;
    p.visited_type     = pdo.type;
    p.visit_ids        = std::move(ids);
    arena().flush(stream());
    dispatch_parallel_do(
        map_.to_gpu(pdo.type), table, std::make_index_sequence<Types::num_types>{});
    p.results     = arena().fetch(table.child_result, child_id.size(), stream());
    p.visit_count = arena().fetch(table.visit_count, v_count, stream());
    p.unknown     = arena().fetch(table.unknown, 2, stream());
  }

  template <std::size_t... I>
  void dispatch_parallel_do(std::uint32_t gpu_type,
                            ActionTable const& table,
                            std::index_sequence<I...>) {
    bool launched = false;
    ((gpu_type == I ? (launched = parallel_do_of<static_cast<std::uint32_t>(I)>(table)) : false),
     ...);
    if (!launched)
      throw std::logic_error("parallel_do over GPU type " + std::to_string(gpu_type) +
                             ", which has no schedule action");
  }

  template <std::uint32_t I>
  bool parallel_do_of(ActionTable const& table) {
    using U = typename Types::template type<I>;
    if constexpr (I == soa::tracked_root_of<Types>(Types::num_types)) {
      return false;  // the tracked root is hidden: schedules never name it
    } else {
      heap_->template parallel_do<U, &U::template heaplab_schedule_action<Ref>>(heap_->ref(),
                                                                                table);
      return true;
    }
  }

  // ----------------------------------------------------------------------------- defrag, check

  void launch(schedule::Defrag const& d, schedule::StepPlan const&, Pending& p) {
    p.defrag = start_defrag(d);
  }

  // ========================= CompactGpu hook =========================
  // The one place a defrag step reaches the GPU: compact::defragment (src/heaplab/compact) on the
  // schedule's type (GPU id), with the step's n, k1 and variant, and the root array registered
  // (pointee the tracked root: every root may point to any type). It runs on a thread of its own
  // because it synchronizes once per pass; execute() waits for it with the watchdog.
  std::future<std::uint32_t> start_defrag(schedule::Defrag const& d) {
    compact::DefragOptions options = schedule::defrag_options(d);  // the model's request too
    options.perturb_seed           = perturb_seed();
    std::vector<compact::ExternalRoots> roots;
    if (num_roots_ != 0)
      roots.push_back({roots_.data(), num_roots_, soa::tracked_root_of<Types>(Types::num_types)});
    int device = 0;
    HEAPLAB_CUDA_TRY(cudaGetDevice(&device));
    std::promise<std::uint32_t> done;
    std::future<std::uint32_t> passes = done.get_future();
    soa::Heap<Types>* const heap      = heap_.get();  // stays at this address, even after a hang
    std::uint32_t const type          = map_.to_gpu(d.type);
    std::thread([heap, type, options, roots, device, done = std::move(done)]() mutable {
      try {
        HEAPLAB_CUDA_TRY(cudaSetDevice(device));
        compact::DefragStats const stats = compact::defragment(*heap, type, options, roots);
        done.set_value(static_cast<std::uint32_t>(stats.passes.size()));
      } catch (...) {
        done.set_exception(std::current_exception());
      }
    }).detach();
    return passes;
  }
  // ===================================================================

  void launch(schedule::Check const&, schedule::StepPlan const&, Pending&) {}

  // ----------------------------------------------------------------------------- after the wait

  void finish(Pending& p, ExecutedStep& out) {
    Ref const heap = ref();
    if (!p.ids.empty()) {
      for (std::size_t i = 0; i < p.ids.size(); ++i) {
        std::uint64_t const ptr = p.results[i];
        if (ptr == 0) continue;  // out of memory
        std::uint32_t const want = map_.to_gpu(p.schedule_types[i]);
        if (!heap.contains(ptr) || core::pointer_type(ptr) != want) {
          throw execution_check_failed(checks::kAllocationResult,
                                       "allocate_raw returned " + core::hex64(ptr) +
                                           " for object " + std::to_string(p.ids[i]) +
                                           " of type '" + map_.gpu().types[want].name +
                                           "': not a pointer to a slot of that type in this heap");
        }
        core::SlotRef const at = heap.locate(ptr);
        out.placements.push_back({p.ids[i], p.schedule_types[i], at.block, at.slot, {}});
      }
    }
    if (p.parallel_do) {
      std::string const type =
          "parallel_do over '" + map_.schedule().types[p.visited_type].name + "'";
      unsigned long long const* const unknown = p.unknown;
      if (unknown[0] != 0)
        throw execution_check_failed(checks::kParallelDoVisits,
                                     type + " visited " + std::to_string(unknown[0]) +
                                         " objects that were not live at launch (first: id " +
                                         std::to_string(unknown[1]) + "); DynaSOAr sec. 2.1");
      std::uint32_t const* const counts = p.visit_count;
      for (std::size_t v = 0; v < p.visit_ids.size(); ++v)
        if (counts[v] != 1)
          throw execution_check_failed(
              checks::kParallelDoVisits,
              type + " visited object " + std::to_string(p.visit_ids[v]) + " " +
                  std::to_string(counts[v]) +
                  " times; every object live at launch must be visited exactly "
                  "once (DynaSOAr sec. 2.1)");
    }
    out.defrag_passes = p.defrag_passes;
  }

  /// The field-bytes check (step_kernels.cuh field_check_kernel) over the quiescent heap; its
  /// host copy, valid once the stream has been waited for.
  unsigned long long const* launch_field_check() {
    FieldCheckArgs args;
    args.num_blocks = heap_->ref().num_blocks();
    args.bad        = arena().template zeroed<unsigned long long>(3);
    arena().flush(stream());
    constexpr unsigned kBlock = 256;
    field_check_kernel<Types>
        <<<blocks_for(std::uint64_t{args.num_blocks} * 64u, kBlock), kBlock, 0, stream()>>>(ref(),
                                                                                            args);
    HEAPLAB_CHECK_LAUNCH();
    return arena().fetch(args.bad, 3, stream());
  }

  void expect_field_bytes(unsigned long long const* bad) const {
    if (bad[0] == 0) return;
    auto const block = static_cast<std::uint32_t>(bad[1] >> 32);
    auto const type  = static_cast<std::uint32_t>((bad[1] >> 16) & 0xFFFFu);
    auto const slot  = static_cast<std::uint32_t>(bad[1] & 0xFFFFu);
    auto const field = static_cast<std::uint32_t>(bad[2] >> 32);
    auto const byte  = static_cast<std::uint32_t>(bad[2] & 0xFFFFFFFFu);
    throw execution_check_failed(
        checks::kFieldsMatchId,
        std::to_string(bad[0]) + " live object(s) hold a data field byte that is not the one " +
            "stamped at their allocation (first: block " + std::to_string(block) + " slot " +
            std::to_string(slot) + ", a '" + map_.gpu().types.at(type).name + "', field " +
            std::to_string(field) + " byte " + std::to_string(byte) +
            "): a copy dropped, shifted or misplaced part of a field (docs/gpu-runner.md "
            "\"Field bytes\")");
  }

  /// The id map follows the heap: rebuilt from the payloads of every snapshot.
  void rebuild_id_map(check::HeapSnapshot const& raw) {
    Ref const heap = ref();
    pointer_of_.clear();
    for (std::uint32_t b = 0; b < raw.blocks.size(); ++b) {
      auto const& block = raw.blocks[b];
      if (block.objects.empty() || block.type >= Types::num_types ||
          map_.gpu().capacity(block.type) == 0)
        continue;
      for (auto const& [s, record] : block.objects.entries())
        if (record) pointer_of_[record->id] = heap.object_pointer(b, s, block.type);
    }
  }

  /// The roots as locations, from `roots`: the host copy of the root array (num_roots_ entries).
  std::vector<std::optional<core::SlotRef>> read_roots(std::uint64_t const* roots) const {
    std::vector<std::optional<core::SlotRef>> out;
    Ref const heap = ref();
    for (std::size_t r = 0; r < num_roots_; ++r) {
      std::uint64_t const p = roots[r];
      if (p == 0) {
        out.emplace_back();
      } else if (heap.contains(p)) {
        out.push_back(heap.locate(p));
      } else {
        out.push_back(core::SlotRef{core::kNotFound, 0});  // not a pointer into this heap
      }
    }
    return out;
  }

  void ensure_root_capacity(std::size_t wanted) {
    if (wanted <= roots_.size()) return;
    std::size_t capacity = std::max<std::size_t>(64, roots_.size());
    while (capacity < wanted) capacity *= 2;
    auto grown = zeros<std::uint64_t>(capacity, stream());
    if (num_roots_ != 0)
      cudart::copy_on_device_async(grown.data(), roots_.data(), num_roots_, stream());
    roots_ = std::move(grown);
  }

  TypeMap map_;
  UniverseOptions options_;
  OwnedStream stream_;  // declared before the heap: destroyed after it
  std::unique_ptr<soa::Heap<Types>> heap_;
  cudart::Watchdog dog_;
  StreamBuffer<std::uint64_t> roots_;  // external roots: encoded pointers, 0 = null
  std::size_t num_roots_ = 0;
  std::unordered_map<schedule::ObjectId, std::uint64_t> pointer_of_;
  std::uint64_t step_number_ = 0;
  bool hung_                 = false;
};

/// The factory a universe entry points to.
template <class Types>
std::unique_ptr<UniverseExecutor> make_executor(TypeMap const& map,
                                                UniverseOptions const& options) {
  return std::make_unique<UniverseExecutorOf<Types>>(map, options);
}

}  // namespace heaplab::heap_family::gpu::detail
