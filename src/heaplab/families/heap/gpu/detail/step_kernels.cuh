// Device side of the GPU executor: the argument blocks and kernels of one schedule step, and the
// parallel_do action every universe type runs (docs/gpu-runner.md "Steps on the GPU"). nvcc only.
//
// Everything here works on encoded object pointers and runtime type ids through the heap's
// generic access (HeapRef::allocate_raw, initialize_tracked, pointer_slot_address, destroy_raw,
// tracked_id; docs/allocator.md "Generic access for interpreters"). The host side
// (universe_executor.cuh) turns a StepPlan into these arrays: every id the plan names is already
// resolved to the object's current encoded pointer, so kernels never look up ids except in the
// parallel_do action table, which is keyed by the visited object's own id.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "heaplab/core/cookie.hpp"
#include "heaplab/core/perturb.hpp"
#include "heaplab/soa/detail/warp.cuh"
#include "heaplab/soa/heap_ref.cuh"

namespace heaplab::heap_family::gpu::detail {

inline constexpr std::uint32_t kNone = 0xFFFFFFFFu;

// ---------------------------------------------------------------------------------- field bytes

/// Whether field j of type t is a data field: neither the tracked root's id nor its cookie nor a
/// heap pointer (those the differential checks compare already). The executor writes every byte
/// of a new object's data fields with core::field_byte and checks them all after every step
/// (docs/gpu-runner.md "Field bytes"), so that a copy that drops, shifts or misplaces part of
/// any field, whatever the layout, is seen, not only copies of the id and the cookie.
template <class Types>
__device__ bool is_data_field(std::uint32_t t, std::uint32_t j) {
  constexpr soa::TrackedFields tracked = soa::tracked_fields_of<Types>();
  return j != tracked.id && j != tracked.cookie &&
         !soa::HeapRef<Types>::layout().field(t, j).is_heap_pointer();
}

/// Writes the data fields of the new object p (id `id`), after initialize_tracked.
template <class Types>
__device__ void stamp_data_fields(soa::HeapRef<Types> const& heap,
                                  std::uint64_t p,
                                  std::uint64_t id) {
  std::uint32_t const t = core::pointer_type(p);
  for (std::uint32_t j = 0; j < soa::HeapRef<Types>::layout().types[t].num_fields; ++j) {
    if (!is_data_field<Types>(t, j)) continue;
    soa::FieldLayout const& f = soa::HeapRef<Types>::layout().field(t, j);
    for (std::uint32_t e = 0; e < f.elements; ++e) {
      auto* const at = static_cast<unsigned char*>(heap.field_address(p, j, e));
      for (std::uint32_t i = 0; i < f.element_bytes; ++i)
        at[i] = core::field_byte(id, j, e * f.element_bytes + i);
    }
  }
}

/// The first data byte of object p that is not core::field_byte of its id, as
/// (field << 32) | byte index, or kNoBadByte.
inline constexpr std::uint64_t kNoBadByte = ~std::uint64_t{0};
template <class Types>
__device__ std::uint64_t first_bad_byte(soa::HeapRef<Types> const& heap, std::uint64_t p) {
  std::uint32_t const t  = core::pointer_type(p);
  std::uint64_t const id = heap.tracked_id(p);
  for (std::uint32_t j = 0; j < soa::HeapRef<Types>::layout().types[t].num_fields; ++j) {
    if (!is_data_field<Types>(t, j)) continue;
    soa::FieldLayout const& f = soa::HeapRef<Types>::layout().field(t, j);
    for (std::uint32_t e = 0; e < f.elements; ++e) {
      auto const* const at = static_cast<unsigned char const*>(heap.field_address(p, j, e));
      for (std::uint32_t i = 0; i < f.element_bytes; ++i) {
        std::uint32_t const k = e * f.element_bytes + i;
        if (at[i] != core::field_byte(id, j, k)) return (std::uint64_t{j} << 32) | k;
      }
    }
  }
  return kNoBadByte;
}

/// The field-bytes check: one thread per (block, slot) of the quiescent heap after a step; every
/// live object of a tracked type compares its data fields with core::field_byte of its id.
/// bad[0] counts the objects with a wrong byte; the first of them writes bad[1] = block << 32 |
/// type << 16 | slot and bad[2] = its first_bad_byte. Read by the host after the kernel.
struct FieldCheckArgs {
  std::uint32_t num_blocks = 0;
  unsigned long long* bad  = nullptr;  // 3 entries, zeroed
};

template <class Types>
__global__ void field_check_kernel(soa::HeapRef<Types> heap, FieldCheckArgs args) {
  using Ref             = soa::HeapRef<Types>;
  std::uint64_t const i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  auto const b          = static_cast<std::uint32_t>(i / 64u);
  auto const s          = static_cast<std::uint32_t>(i % 64u);
  if (b >= args.num_blocks) return;
  std::uint32_t const t = heap.core().blocks().load_type(b);
  if (!Ref::is_tracked_type(t) || s >= Ref::layout().types[t].capacity) return;
  if (!heap.core().allocated(t).get(b, core::MemoryOrder::relaxed)) return;
  std::uint64_t const slots = heap.core().blocks().load_alloc_bitmap(b, core::MemoryOrder::relaxed);
  if (((slots >> s) & 1u) == 0) return;
  std::uint64_t const bad = first_bad_byte(heap, heap.object_pointer(b, s, t));
  if (bad == kNoBadByte) return;
  // order: relaxed (a count and the first witness, read by the host after the kernel)
  if (atomicAdd(&args.bad[0], 1ull) == 0ull) {
    args.bad[1] = (std::uint64_t{b} << 32) | (std::uint64_t{t} << 16) | s;
    args.bad[2] = bad;
  }
}

/// InjectedFault::corrupt_field_byte (tests): flips byte 0 of the first data field of the first
/// object of `result` (an alloc wave's results) that has one.
template <class Types>
__global__ void corrupt_field_byte_kernel(soa::HeapRef<Types> heap,
                                          std::uint64_t const* result,
                                          std::uint32_t count) {
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint64_t const p = result[i];
    if (p == 0) continue;
    std::uint32_t const t = core::pointer_type(p);
    for (std::uint32_t j = 0; j < soa::HeapRef<Types>::layout().types[t].num_fields; ++j)
      if (is_data_field<Types>(t, j)) {
        *static_cast<unsigned char*>(heap.field_address(p, j, 0)) ^= 0x5Au;
        return;
      }
  }
}

// ---------------------------------------------------------------------------------- alloc wave

/// One alloc wave: thread t (one GPU thread per wave thread, so lane = t % 32 as in
/// schedule::lane_work) allocates objects first[t] .. first[t + 1] - 1 of the plan, in order.
/// Object i has GPU type type[i] and id id[i]; its initial pointers are the writes
/// link_first[i] .. link_first[i + 1] - 1 (slot link_slot[w] := link_target[w], pointers of
/// objects live before the wave). result[i] receives the new encoded pointer, or 0 when the heap
/// was out of memory.
struct AllocWaveArgs {
  std::uint32_t threads            = 0;
  std::uint32_t const* first       = nullptr;  // threads + 1 entries
  std::uint32_t const* type        = nullptr;
  std::uint64_t const* id          = nullptr;
  std::uint32_t const* link_first  = nullptr;  // objects + 1 entries
  std::uint32_t const* link_slot   = nullptr;
  std::uint64_t const* link_target = nullptr;
  std::uint64_t* result            = nullptr;
  std::uint64_t perturb_seed       = 0;  // core/perturb.hpp; 0: off
};

/// The lanes of a warp run their own trip counts and types, so the warp really diverges inside
/// allocate_raw (per-lane counts 0..63, alternating lanes, random masks, mixed types) and lanes
/// past `threads` in the last warp have exited: allocate_raw's coalescing must cope with all of
/// it (docs/allocator.md "Coalescing under independent thread scheduling").
template <class Types>
__global__ void alloc_wave_kernel(soa::HeapRef<Types> heap, AllocWaveArgs args) {
  std::uint64_t const t = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (t >= args.threads) return;
  soa::detail::perturb_warp(args.perturb_seed, t / 32u, core::PerturbPoint::allocate);
  for (std::uint32_t i = args.first[t]; i < args.first[t + 1]; ++i) {
    std::uint64_t const p = heap.allocate_raw(args.type[i]);
    args.result[i]        = p;
    if (p == 0) continue;  // out of memory: this attempt creates nothing (docs/schedules.md)
    heap.initialize_tracked(p, args.id[i]);
    stamp_data_fields(heap, p, args.id[i]);
    for (std::uint32_t w = args.link_first[i]; w < args.link_first[i + 1]; ++w)
      *heap.pointer_slot_address(p, args.link_slot[w]) = args.link_target[w];
  }
}

// ------------------------------------------------------------------------------ pointer nulling

/// Phase 1 of deleting steps (docs/schedules.md "No dangling pointers"): pointer slot slot[i] of
/// object object[i] := null for i < writes; then roots[root_index[j]] := 0 for j < num_roots.
struct NullingArgs {
  std::uint32_t writes            = 0;
  std::uint64_t const* object     = nullptr;
  std::uint32_t const* slot       = nullptr;
  std::uint32_t num_roots         = 0;
  std::uint32_t const* root_index = nullptr;
  std::uint64_t* roots            = nullptr;
};

template <class Types>
__global__ void nulling_kernel(soa::HeapRef<Types> heap, NullingArgs args) {
  std::uint64_t const i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < args.writes) {
    *heap.pointer_slot_address(args.object[i], args.slot[i]) = 0;
  } else if (i - args.writes < args.num_roots) {
    args.roots[args.root_index[i - args.writes]] = 0;
  }
}

// ------------------------------------------------------------------------------------ free wave

/// Frees object[i] in thread i * spacing (the other lanes idle), one object per thread: with
/// spacing 2 only even lanes free, and the host varies the order of `object` and the block size
/// so that the warps of different steps free different mixes of blocks and types.
template <class Types>
__global__ void free_kernel(soa::HeapRef<Types> heap,
                            std::uint64_t const* object,
                            std::uint32_t count,
                            std::uint32_t spacing,
                            std::uint64_t perturb_seed) {
  std::uint64_t const t = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  soa::detail::perturb_warp(perturb_seed, t / 32u, core::PerturbPoint::free);
  if (t % spacing != 0) return;
  std::uint64_t const i = t / spacing;
  if (i < count) heap.destroy_raw(object[i]);
}

// ---------------------------------------------------------------------------------- parallel_do

/// What each visited object of a parallel_do does, keyed by its id (schedule::Visit). Visits are
/// sorted by id; a visited object finds its entry by binary search on its own id (the id field
/// of Tracked). Every entry counts its visits, and objects whose id has no entry are counted in
/// unknown[0] (the first such id in unknown[1]): the host checks that each planned object was
/// visited exactly once and no other (DynaSOAr sec. 2.1, parallel_do iterates the objects that
/// exist at launch).
struct ActionTable {
  std::uint32_t visits           = 0;
  std::uint64_t const* ids       = nullptr;  // ascending
  std::uint32_t const* flags     = nullptr;  // kAct* below
  std::uint32_t const* child     = nullptr;  // index into the child arrays, or kNone
  std::uint64_t const* victim    = nullptr;  // delete_other_type: encoded pointer, or 0
  std::uint64_t const* relink_to = nullptr;  // relink: encoded pointer, or 0 (null)
  std::uint32_t parent_slot      = 0;        // allocate_child: this.parent_slot := child
  std::uint32_t relink_slot      = 0;
  // allocate_child, one entry per planned child
  std::uint32_t const* child_type      = nullptr;  // GPU type id
  std::uint64_t const* child_id        = nullptr;
  std::uint32_t const* child_back_slot = nullptr;  // child.slot := this, or kNone
  std::uint64_t* child_result          = nullptr;  // new encoded pointer, or 0
  // observations
  std::uint32_t* visit_count  = nullptr;
  unsigned long long* unknown = nullptr;  // [0] count, [1] first unknown id
  std::uint64_t perturb_seed  = 0;        // core/perturb.hpp; 0: off
};

inline constexpr std::uint32_t kActDeleteSelf = 1u;
inline constexpr std::uint32_t kActRelink     = 2u;

/// The action of the visited object `self` (an encoded pointer of the runtime type). Runs inside
/// Heap::parallel_do's kernel, concurrently with the other visited objects: it may allocate any
/// type, delete itself and delete its planned victim (never a visited object, plan_step), which
/// is what DynaSOAr sec. 2.1 allows a parallel_do body to do.
template <class Ref>
__device__ void run_action(Ref const& heap, ActionTable const& table, std::uint64_t self) {
  soa::detail::perturb_warp(
      table.perturb_seed, soa::detail::global_warp_id(), core::PerturbPoint::parallel_do);
  std::uint64_t const id = heap.tracked_id(self);
  std::uint32_t lo = 0, hi = table.visits;
  while (lo < hi) {
    std::uint32_t const mid = lo + (hi - lo) / 2;
    if (table.ids[mid] < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == table.visits || table.ids[lo] != id) {
    // order: relaxed (only atomicity: the first unknown id; read after the kernel)
    if (atomicAdd(&table.unknown[0], 1ull) == 0ull) atomicExch(&table.unknown[1], id);
    return;
  }
  std::uint32_t const v = lo;
  // order: relaxed (a count, read by the host after the kernel)
  atomicAdd(&table.visit_count[v], 1u);
  std::uint32_t const flags = table.flags[v];
  if (table.child[v] != kNone) {
    std::uint32_t const c = table.child[v];
    std::uint64_t const p = heap.allocate_raw(table.child_type[c]);
    table.child_result[c] = p;
    if (p != 0) {
      heap.initialize_tracked(p, table.child_id[c]);
      stamp_data_fields(heap, p, table.child_id[c]);
      if (table.child_back_slot[c] != kNone)
        *heap.pointer_slot_address(p, table.child_back_slot[c]) = self;
    }
    *heap.pointer_slot_address(self, table.parent_slot) = p;
  }
  if ((flags & kActRelink) != 0)
    *heap.pointer_slot_address(self, table.relink_slot) = table.relink_to[v];
  if (table.victim[v] != 0) heap.destroy_raw(table.victim[v]);
  if ((flags & kActDeleteSelf) != 0) heap.destroy_raw(self);
}

}  // namespace heaplab::heap_family::gpu::detail

/// Declares the parallel_do body of the GPU runner inside a root class of a universe (a class
/// that derives directly from the tracked root); subclasses inherit it. The universe executor runs
/// it as heap.parallel_do<U, &U::template heaplab_schedule_action<soa::HeapRef<Types>>>(ref,
/// table).
#define HEAPLAB_GPU_RUNNER_SCHEDULE_ACTION()                                          \
  template <class Ref>                                                                \
  __device__ void heaplab_schedule_action(                                            \
      Ref heap, ::heaplab::heap_family::gpu::detail::ActionTable table) {             \
    ::heaplab::heap_family::gpu::detail::run_action(heap, table, Ref::bits_of(this)); \
  }
