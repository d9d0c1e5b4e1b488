// The device view of a GPU heap: a trivially copyable HeapRef<Types> that kernels take by value
// (cuCollections style; the owning host object is Heap<Types>, heap.cuh). docs/allocator.md.
//
//   __global__ void spawn(soa::HeapRef<Types> heap, Node** out) {
//     Node* n = heap.make<Node>(id, 1.5f);      // nullptr when the heap is out of memory
//     ...
//     heap.destroy(n);                          // runtime type from the pointer bits
//   }
//
// Methods of heap types reach the heap through a HeapRef argument (168 bytes, passed by
// value): `void Node::split(soa::HeapRef<Types> heap)` is run with
// `heap.parallel_do<Node, &Node::split>(heap.ref())`, and may call heap.make / heap.destroy(this).
//
// Allocation goes through the portable core (core/heap_protocol.hpp: find_or_claim_block,
// try_reserve, commit_reservation) with DynaSOAr's request coalescing (sec. 4.2), written for
// independent thread scheduling: see allocate_raw below and docs/allocator.md "Coalescing under
// independent thread scheduling".
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/block_headers.hpp"
#include "heaplab/core/cookie.hpp"
#include "heaplab/core/detail/seed.hpp"
#include "heaplab/core/heap_protocol.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/soa/detail/device_control.hpp"
#include "heaplab/soa/detail/warp.cuh"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/tracked.hpp"

namespace heaplab::soa {

/// Extra rounds an allocation makes after the core reported "no block" before it answers
/// nullptr (see allocate_raw).
inline constexpr std::uint32_t kDefaultOomRetries = 2;

namespace detail {

/// The layout table of a type list in constant memory: constant-initialized at compile time in
/// every translation unit that uses it (no host copy), read with uniform constant-cache loads.
template <class Types>
__constant__ typename Types::Table device_layout = Types::layout_table();

template <class Types>
struct host_layout {
  static constexpr typename Types::Table value = Types::layout_table();
};

}  // namespace detail

template <class Types>
class HeapRef {
 public:
  using types      = Types;
  using table_type = typename Types::Table;
  using core_ref   = core::HeapProtocol<core::DeviceAtomics>;

  HeapRef() = default;
  /// Built by Heap<Types> (host); `storage` points to device memory.
  __host__ HeapRef(core::HeapStorage const& storage,
                   std::uint64_t block_base,
                   detail::DeviceControl* control,
                   std::uint32_t oom_retries,
                   bool coalesce_frees    = true,
                   bool coalesce_requests = true)
      : core_(storage),
        block_base_(block_base),
        control_(control),
        oom_retries_(oom_retries),
        coalesce_frees_(coalesce_frees),
        coalesce_requests_(coalesce_requests) {}

  // ---------------------------------------------------------------- queries (host and device)

  /// The portable core's view of the same storage (state bitmaps, headers, protocol steps).
  __host__ __device__ core_ref const& core() const { return core_; }
  __host__ __device__ std::uint32_t num_blocks() const { return core_.num_blocks(); }
  __host__ __device__ static constexpr std::uint32_t block_bytes() { return Types::block_bytes; }
  /// Device address of block 0; block b starts at block_base() + b * block_bytes().
  __host__ __device__ std::uint64_t block_base() const { return block_base_; }
  /// The layout table (heap_types.hpp): in device code the copy in constant memory.
  __host__ __device__ static table_type const& layout() {
#if HEAPLAB_DEVICE_CODE
    return detail::device_layout<Types>;
#else
    return detail::host_layout<Types>::value;
#endif
  }

  /// The encoded object pointer of slot `slot` of block `block` for an object of type `type`.
  __host__ __device__ std::uint64_t object_pointer(std::uint32_t block,
                                                   std::uint32_t slot,
                                                   std::uint32_t type) const {
    return core::encode_object_pointer(block_base_ + std::uint64_t{block} * Types::block_bytes,
                                       slot,
                                       layout().types[type].capacity,
                                       type);
  }
  /// object_pointer for a concrete type U known at compile time: the capacity and the type id
  /// are constants instead of a read of the layout table (in constant memory on the GPU). The
  /// do-alls build their objects' pointers with it.
  template <class U>
  __host__ __device__ std::uint64_t object_pointer_of(std::uint32_t block,
                                                      std::uint32_t slot) const {
    return core::encode_object_pointer(block_base_ + std::uint64_t{block} * Types::block_bytes,
                                       slot,
                                       Types::template capacity<U>,
                                       Types::template type_id<U>);
  }
  /// Block and slot of an object pointer of this heap (no validity check; see contains()).
  __host__ __device__ core::SlotRef locate(std::uint64_t p) const {
    return core::SlotRef{static_cast<std::uint32_t>((core::pointer_block_address(p) - block_base_) /
                                                    Types::block_bytes),
                         core::pointer_slot(p)};
  }
  template <class T>
  __host__ __device__ core::SlotRef locate(T const* p) const {
    return locate(bits_of(p));
  }
  /// Whether p is a well-formed object pointer into this heap: block address inside the block
  /// area and on a block boundary, a concrete type id, its capacity bits, slot below capacity.
  /// Says nothing about whether the object is live.
  __host__ __device__ bool contains(std::uint64_t p) const {
    std::uint64_t const address = core::pointer_block_address(p);
    std::uint32_t const t       = core::pointer_type(p);
    if (address < block_base_ || (address - block_base_) % Types::block_bytes != 0) return false;
    if ((address - block_base_) / Types::block_bytes >= num_blocks()) return false;
    if (t >= Types::num_types) return false;
    std::uint32_t const cap = layout().types[t].capacity;
    return cap >= 2 && core::pointer_capacity(p) == cap && core::pointer_slot(p) < cap;
  }

  /// Address of unit `element` of field `field` (inherited first) of the object p, for the
  /// object's runtime type (from the pointer). For generic code that writes fields by index
  /// (e.g. a schedule interpreter); typed code uses the field DSL.
  __host__ __device__ void* field_address(std::uint64_t p,
                                          std::uint32_t field,
                                          std::uint32_t element = 0) const {
    std::uint32_t const t = core::pointer_type(p);
#if defined(HEAPLAB_DEBUG_CHECKS)
    HEAPLAB_EXPECTS(t < Types::num_types && field < layout().types[t].num_fields &&
                        element < layout().field(t, field).elements,
                    "field_address: type, field or element index out of range");
#endif
    FieldLayout const& f = layout().field(t, field);
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(
        core::pointer_block_address(p) + layout().unit_offset(t, field, element) +
        std::uint64_t{core::pointer_slot(p)} * f.element_bytes));
  }
  /// Number of pointer slots of type t (HeapConfig::pointer_slots(t).size()).
  __host__ __device__ static std::uint32_t num_pointer_slots(std::uint32_t t) {
    return layout().pointer_slots_before(t, layout().types[t].num_fields);
  }
  /// Address of pointer slot k of object p, numbered as HeapConfig::pointer_slots(type) numbers
  /// them (inherited fields first, array elements in order); nullptr if k is out of range.
  __host__ __device__ std::uint64_t* pointer_slot_address(std::uint64_t p, std::uint32_t k) const {
    std::uint32_t const t = core::pointer_type(p);
    for (std::uint32_t j = 0; j < layout().types[t].num_fields; ++j) {
      FieldLayout const& f = layout().field(t, j);
      if (!f.is_heap_pointer()) continue;
      if (k < f.elements) return static_cast<std::uint64_t*>(field_address(p, j, k));
      k -= f.elements;
    }
    return nullptr;
  }

  /// For object pointers whose runtime type derives from Tracked (tracked.hpp): writes the id
  /// and its cookie and sets every pointer slot to null, i.e. what a constructor must do for a
  /// payload snapshot to see a well-formed object. The raw counterpart of construct() for code
  /// that allocates by runtime type id (allocate_raw). Other fields are left as they are.
  __host__ __device__ void initialize_tracked(std::uint64_t p, std::uint64_t id) const {
#if defined(HEAPLAB_DEBUG_CHECKS)
    HEAPLAB_EXPECTS(is_tracked_type(core::pointer_type(p)),
                    "initialize_tracked: the object's type does not derive from Tracked");
#endif
    constexpr TrackedFields fields                                = tracked_fields_of<Types>();
    *static_cast<std::uint64_t*>(field_address(p, fields.id))     = id;
    *static_cast<std::uint64_t*>(field_address(p, fields.cookie)) = core::cookie_of(id);
    for (std::uint32_t k = 0, n = num_pointer_slots(core::pointer_type(p)); k < n; ++k)
      *pointer_slot_address(p, k) = 0;
  }
  /// The id of a Tracked object (see initialize_tracked).
  __host__ __device__ std::uint64_t tracked_id(std::uint64_t p) const {
    return *static_cast<std::uint64_t const*>(field_address(p, tracked_fields_of<Types>().id));
  }
  /// Whether type t derives from the list's tracked root (Tracked or its own root, tracked.hpp;
  /// false if the list has none).
  __host__ __device__ static bool is_tracked_type(std::uint32_t t) {
    constexpr std::uint32_t root = tracked_root();
    return root != kNoType && t < Types::num_types && layout().is_subtype(t, root);
  }

  template <class T>
  __host__ __device__ static std::uint64_t bits_of(T const* p) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
  }

  // ---------------------------------------------------------------- allocation (device)

  /// A new object of type T constructed with args (DynaSOAr's `new (allocator) T(args...)`),
  /// or nullptr when the heap is out of memory (counted; Heap::oom_count()). With no arguments
  /// the object is default-initialized (`new (p) T`), never value-initialized (field.hpp).
  template <class T, class... Args>
  __device__ T* make(Args&&... args) const {
    T* const p = allocate<T>();
    if (p != nullptr) construct(p, std::forward<Args>(args)...);
    return p;
  }

  /// A slot for a T without running a constructor; follow it with `new (p) T(args...)`.
  template <class T>
  __device__ T* allocate() const {
    static_assert(Types::template contains<T>, "allocate<T>: T is not in this heap's type list");
    static_assert(!Types::template is_abstract<T>, "allocate<T>: T is abstract");
    static_assert(Types::template capacity<T> >= 2,
                  "allocate<T>: T's block capacity is 1 (T is more than 32x the smallest type); "
                  "the allocator protocol needs capacity >= 2");
    return reinterpret_cast<T*>(
        static_cast<std::uintptr_t>(allocate_raw(Types::template type_id<T>)));
  }

  /// Runs T's constructor on a slot from allocate<T>() (or re-initializes a live object).
  template <class T, class... Args>
  __device__ static void construct(T* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) {
      ::new (static_cast<void*>(p)) T;
    } else {
      ::new (static_cast<void*>(p)) T(std::forward<Args>(args)...);
    }
  }

  /// One object slot of concrete type `type` (runtime id), coalesced with the other lanes of
  /// the warp that request the same type at the same time. Returns the encoded object pointer,
  /// or 0 when the heap is out of memory.
  ///
  /// Coalescing under independent thread scheduling (DynaSOAr sec. 4.2; docs/allocator.md).
  /// Volta and later do not execute a warp in lock step: lanes that were together at one
  /// instruction need not be together at the next, and lanes can exit at any time. DynaSOAr's
  /// original leader path assumed otherwise and hangs on Hopper (ARCHITECTURE.md). Here:
  ///  (1) `active = __activemask()` is evaluated once; every lane in `active` executed that same
  ///      instance of the instruction, so all of them hold the same value.
  ///  (2) `group = __match_any_sync(active, type)`: legal because every lane named in `active`
  ///      reaches this call next (straight-line code, no exit in between) with the same mask,
  ///      and the intrinsic synchronizes them. Lanes of `group` all receive the same mask: the
  ///      lanes of that instance requesting `type`. Other groups (other types, or lanes that
  ///      reached __activemask in another instance) are disjoint and never named here.
  ///  (3) From here on only `group` is ever named, and every branch that contains a
  ///      synchronizing intrinsic depends only on values that are equal across the group: `count`
  ///      (popc of group), `served` (sum of broadcast counts), and the broadcast block. So every
  ///      lane of the group executes the same sequence of __shfl_sync(group, ...) calls, which is
  ///      what their contract requires; the leader's protocol work between them is divergent and
  ///      lanes simply wait at the next __shfl_sync (no lane spins on another lane's progress).
  ///  (4) No mask is reused at a point where it was not computed: `active` is used only by the
  ///      match that directly follows it; no __ballot/__syncwarp names lanes outside `group`.
  ///  (5) Termination: each round the leader either reserves >= 1 slot (served grows), or
  ///      observes out of memory (the group leaves the loop together), and its inner retry loop
  ///      is the core's lock-free allocate loop (a failed round means another thread completed an
  ///      operation) bounded on the out-of-memory side by oom_retries.
  /// Lanes are served in rank order (rank = lanes of the group below this one); slot i of a
  /// reservation goes to the i-th unserved lane. The leader's rotation seed derives from the
  /// global warp id and changes with every retry (sec. 4.2 "Bitmap Rotation").
  ///
  /// HeapOptions::coalesce_requests false (DynaSOAr-NoCoal, Fig. 12C): no match; every lane is
  /// a group of one (group = its own lane bit), its own leader, reserving one slot per round,
  /// with a seed that also mixes in the lane (lanes of one warp start their searches at different
  /// rotations, as the warps do). The same loop below then names only the lane itself.
  __device__ std::uint64_t allocate_raw(std::uint32_t type) const {
    // Always checked: an abstract type (capacity 0) would make the leader retry forever.
    HEAPLAB_EXPECTS(type < Types::num_types && layout().types[type].capacity >= 2,
                    "allocate_raw: type id out of range or not a concrete type");
    // Issued first, read after the rounds: the load's latency hides behind them.
    bool const frozen   = is_frozen(type);
    unsigned const lane = detail::lane_id();
    unsigned group      = 1u << lane;  // coalescing off: a group of one
    std::uint64_t seed  = core::detail::mix_seed(detail::global_warp_id(), type);
    if (coalesce_requests_) {
      unsigned const active = __activemask();                  // (1)
      group                 = __match_any_sync(active, type);  // (2)
    } else {
      seed = core::detail::mix_seed(seed, 0x200u + lane);
    }
    unsigned const leader = static_cast<unsigned>(__ffs(static_cast<int>(group))) - 1u;
    unsigned const rank   = static_cast<unsigned>(__popc(group & detail::lanemask_lt()));
    unsigned const count  = static_cast<unsigned>(__popc(group));

    std::uint64_t result = 0;
    unsigned served      = 0;  // equal across the group (3)
    std::uint64_t round  = 0;  // leader only
    while (served < count) {
      std::uint32_t block = core::kNotFound;
      std::uint64_t slots = 0;
      if (lane == leader) reserve_for_group(type, count - served, seed, round, block, slots);
      if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::coalesce_lockstep_mask) {
        // MUTANT coalesce_lockstep_mask: the original DynaSOAr's lock-step assumption, as its
        // debug build states it (assert(__activemask() == active) after the leader's work):
        // every lane of the group is taken to be converged with the others again here. Under
        // independent thread scheduling the lanes need not be (the leader may still be in
        // reserve_for_group); the shuffles below synchronize them, the assumption does not hold.
        if ((__activemask() & group) != group) __trap();
      }
      block = __shfl_sync(group, block, static_cast<int>(leader));
      slots = __shfl_sync(group, slots, static_cast<int>(leader));
      if (block == core::kNotFound) break;  // out of memory: the group leaves together
      unsigned const got = static_cast<unsigned>(__popcll(slots));
      if (rank >= served && rank < served + got) {
        int const slot = core::nth_set_bit(slots, static_cast<int>(rank - served));
        result         = object_pointer(block, static_cast<std::uint32_t>(slot), type);
      }
      served += got;
    }
    // order: relaxed (a statistic, read by the host after the kernel)
    if (lane == leader && served < count) atomicAdd(&control_->oom_count, 1ull * (count - served));
    if (frozen && lane == leader && served != 0) report_frozen_change(type, true);
    return result;
  }

  // ---------------------------------------------------------------- deallocation (device)

  /// Runs the destructor of p's runtime type (when it is not trivial) and frees the object
  /// (DynaSOAr's destroy(allocator, p)). nullptr is ignored. In the debug preset a pointer that
  /// is not from this heap, or whose object is not allocated (double free), is reported with the
  /// thread and the pointer and not freed (Heap::check_device_errors()).
  template <class T>
  __device__ void destroy(T* p) const {
    static_assert(Types::template contains<T>, "destroy<T>: T is not in this heap's type list");
    if (p == nullptr) return;
    std::uint64_t const bits = bits_of(p);
    if (!debug_check_free(bits)) return;
    destroy_as<T>(bits, std::make_index_sequence<Types::num_types>{});
    free_unchecked(bits);
  }

  /// Frees the object at encoded pointer p without running a destructor (type from the
  /// pointer). 0 is ignored. Debug checks as for destroy().
  __device__ void destroy_raw(std::uint64_t p) const {
    if (p == 0) return;
    if (!debug_check_free(p)) return;
    free_unchecked(p);
  }

  // ---------------------------------------------------------------- enumeration (device)

  /// Runs (obj->*Method)(args...) for every object of T and its concrete subtypes, sequentially
  /// in the calling thread (DynaSOAr sec. 2.1 device_do). Blocks are found through allocated[U]
  /// (level 1 skips empty level-0 containers), objects through their allocation bitmaps, both
  /// read as they are when the loop reaches them: meant for heaps whose T objects do not change
  /// during the loop (e.g. inside a parallel_do of another type); objects allocated or freed
  /// concurrently may or may not be visited.
  template <class T, auto Method, class... Args>
  __device__ void device_do(Args const&... args) const {
    device_do_types<T, Method>(std::make_index_sequence<Types::num_types>{}, args...);
  }

  /// Per-type body of device_do (U concrete).
  template <class U, auto Method, class... Args>
  __device__ void device_do_one_type(Args const&... args) const {
    constexpr std::uint32_t u                            = Types::template type_id<U>;
    constexpr std::uint32_t cap                          = Types::template capacity<U>;
    core::BitmapRef<core::DeviceAtomics> const allocated = core_.allocated(u);
    core::BitmapLayout const& bl                         = core_.storage().layout;
    auto visit_container                                 = [&](std::uint32_t c) {
      std::uint64_t word =
          core::DeviceAtomics::load(allocated.container(0, c), core::MemoryOrder::relaxed);
      while (word != 0) {
        std::uint32_t const b = c * 64u + static_cast<std::uint32_t>(core::find_first_set(word));
        word &= word - 1u;
        // order: acquire [block-init] (the block's initialization, type first, before its bitmap is
        // read)
        std::uint64_t const live =
            core_.blocks().load_alloc_bitmap(b, core::MemoryOrder::acquire) & core::low_bits(cap);
        if (live == core::low_bits(cap)) {
          // A full block (every block of a dense population): a counted loop over the slots, the
          // same objects in the same order without the bit scan (issue 31).
#pragma unroll 1
          for (std::uint32_t slot = 0; slot < cap; ++slot) {
            U* const object =
                reinterpret_cast<U*>(static_cast<std::uintptr_t>(object_pointer_of<U>(b, slot)));
            (object->*Method)(args...);
          }
          continue;
        }
        // The slots in two 32-bit halves: a 32-bit scan is a few instructions per object where
        // the 64-bit one is twice as many (issue 31); for cap <= 32 the upper half is 0 and
        // skipped at once.
#pragma unroll 1
        for (std::uint32_t half = 0; half < 2u; ++half) {
          std::uint32_t word32 = static_cast<std::uint32_t>(live >> (32u * half));
          while (word32 != 0) {
            std::uint32_t const slot =
                32u * half + static_cast<std::uint32_t>(core::find_first_set32(word32));
            word32 &= word32 - 1u;
            U* const object =
                reinterpret_cast<U*>(static_cast<std::uintptr_t>(object_pointer_of<U>(b, slot)));
            (object->*Method)(args...);
          }
        }
      }
    };
    if (bl.num_levels >= 2) {
      for (std::uint32_t c1 = 0; c1 < bl.containers(1); ++c1) {
        std::uint64_t summary =
            core::DeviceAtomics::load(allocated.container(1, c1), core::MemoryOrder::relaxed);
        while (summary != 0) {
          std::uint32_t const c0 =
              c1 * 64u + static_cast<std::uint32_t>(core::find_first_set(summary));
          summary &= summary - 1u;
          visit_container(c0);
        }
      }
    } else if (bl.num_levels == 1) {
      visit_container(0);
    }
  }

 private:
  __host__ __device__ static constexpr std::uint32_t tracked_root() {
    return tracked_root_of<Types>(kNoType);
  }

  /// The leader's part of one coalescing round: reserve up to `want` slots of `type` in one
  /// block through the core's k-slot reservation with out-of-memory retries
  /// (core::HeapProtocol::reserve_slots_or_oom, k = want: the rounds of find_or_claim_block,
  /// try_reserve, commit_reservation; the same code the CPU explorer runs), with the block hint
  /// of the warp's slot on its SM (detail::sm_warp_slot: the warps that run in that slot one after
  /// another share it; "Block hints" there). block = kNotFound
  /// after 1 + oom_retries_ consecutive "no block" answers, with a short, growing sleep between
  /// them.
  __device__ void reserve_for_group(std::uint32_t type,
                                    unsigned want,
                                    std::uint64_t seed,
                                    std::uint64_t& round,
                                    std::uint32_t& block,
                                    std::uint64_t& slots) const {
    std::uint32_t const k  = want < 64u ? want : 64u;
    core::SlotsRef const r = core_.reserve_slots_or_oom(
        type,
        k,
        seed,
        round,
        oom_retries_,
        [](std::uint32_t misses) { __nanosleep(256u << (misses < 4 ? misses : 4)); },
        core_.storage().hint_slots != 0 ? detail::sm_warp_slot() : core::kNoHint);
    block = r.block;
    slots = r.slots;
  }

  /// DynaSOAr Alg. 2 for object p. With HeapOptions::coalesce_frees, when every lane of the
  /// warp that frees at this instruction frees an object of the same block (the common case
  /// after a coalesced allocation), the warp frees them with one release_slots (one fetch_and,
  /// the coalesced form of Alg. 2 in the core); otherwise each lane frees its own object.
  /// Independent thread scheduling: `active` is evaluated once and used by the match that
  /// directly follows it; every branch after it depends only on values equal across `active`
  /// (the match's predicate, the reduced slots), so all its lanes make the same synchronizing
  /// calls. The slots are distinct unless a slot is freed twice in the warp (a double free):
  /// then every lane frees its own slot with the core's single-slot path, whose check reports
  /// the second free as without coalescing.
  /// Memory order: __syncwarp(active) orders every lane's accesses to its object (e.g. a
  /// destructor) before the leader's RELEASE fetch_and, which the next owner's acquire
  /// reservation reads (block_headers.hpp release_slots); the match / reduce intrinsics alone
  /// order nothing. Each lane's free linearizes at that fetch_and.
  __device__ void free_unchecked(std::uint64_t p) const {
    std::uint32_t const type = core::pointer_type(p);
    // Issued first, read after the free: the load's latency hides behind it.
    bool const frozen = is_frozen(type);
    free_slot(type, locate(p), p);
    if (frozen) report_frozen_change(type, false);
  }

  /// free_unchecked's body: the slot `at` of object p of type `type`.
  __device__ void free_slot(std::uint32_t type, core::SlotRef at, std::uint64_t p) const {
    if (!coalesce_frees_) {
      core_.deallocate(type, at);
      return;
    }
    unsigned const active = __activemask();
    int same_block        = 0;
    // The encoded pointer without its slot bits: block address, capacity and type.
    (void)__match_all_sync(active, p & ~core::kSlotMask, &same_block);
    if (!same_block) {
      core_.deallocate(type, at);
      return;
    }
    std::uint64_t const bit   = std::uint64_t{1} << at.slot;
    unsigned const low        = __reduce_or_sync(active, static_cast<unsigned>(bit));
    unsigned const high       = __reduce_or_sync(active, static_cast<unsigned>(bit >> 32));
    std::uint64_t const slots = (std::uint64_t{high} << 32) | low;
    if (__popcll(slots) != __popc(active)) {  // a slot freed twice in this warp: per lane
      core_.deallocate(type, at);
      return;
    }
    __syncwarp(active);
    unsigned const leader = static_cast<unsigned>(__ffs(static_cast<int>(active))) - 1u;
    if (detail::lane_id() == leader) core_.release_slots(type, at.block, slots);
  }

  template <class T, std::size_t... I>
  __device__ static void destroy_as(std::uint64_t p, std::index_sequence<I...>) {
    std::uint32_t const t = core::pointer_type(p);
    ((t == I ? run_destructor<T, typename Types::template type<static_cast<std::uint32_t>(I)>>(p)
             : void()),
     ...);
  }
  template <class T, class U>
  __device__ static void run_destructor(std::uint64_t p) {
    if constexpr ((std::is_same_v<T, U> ||
                   std::is_base_of_v<T, U>)&&!Types::template is_abstract<U> &&
                  !std::is_trivially_destructible_v<U>) {
      reinterpret_cast<U*>(static_cast<std::uintptr_t>(p))->~U();
    }
  }

  template <class T, auto Method, std::size_t... I, class... Args>
  __device__ void device_do_types(std::index_sequence<I...>, Args const&... args) const {
    (device_do_if_subtype<T, typename Types::template type<static_cast<std::uint32_t>(I)>, Method>(
         args...),
     ...);
  }
  template <class T, class U, auto Method, class... Args>
  __device__ void device_do_if_subtype(Args const&... args) const {
    if constexpr ((std::is_same_v<T, U> ||
                   std::is_base_of_v<T, U>)&&!Types::template is_abstract<U>)
      device_do_one_type<U, Method>(args...);
  }

  /// Debug preset: whether p may be freed; reports and returns false otherwise. Always true
  /// outside the debug preset (the core still traps on a slot that is not allocated).
  __device__ bool debug_check_free([[maybe_unused]] std::uint64_t p) const {
#if defined(HEAPLAB_DEBUG_CHECKS)
    if (!contains(p)) {
      report(detail::HeapErrorKind::foreign_pointer, p, core::kNotFound);
      return false;
    }
    core::SlotRef const at = locate(p);
    bool const block_free  = core_.free_blocks().get(at.block, core::MemoryOrder::relaxed);
    std::uint32_t const t  = core_.blocks().load_type(at.block);
    std::uint64_t const a  = core_.blocks().load_alloc_bitmap(at.block, core::MemoryOrder::relaxed);
    if (block_free || t != core::pointer_type(p) || ((a >> at.slot) & 1u) == 0) {
      report(detail::HeapErrorKind::double_free, p, at.block);
      return false;
    }
#endif
    return true;
  }

  /// Whether type t has a live Heap::Enumeration (DeviceControl::frozen_types). A plain load:
  /// the flag changes only between kernels (stream-ordered memsets), never during one.
  __device__ bool is_frozen(std::uint32_t t) const { return control_->frozen_types[t & 255u] != 0; }

  /// Records the first change of a frozen type (DeviceControl::frozen_change; the host reports
  /// it from check_device_errors / device_errors).
  __device__ void report_frozen_change(std::uint32_t type, bool created) const {
    // order: relaxed (only its atomicity matters: the first change is kept; the host reads it
    // after the kernel)
    atomicCAS(&control_->frozen_change, 0u, detail::frozen_change_code(type, created));
  }

  __device__ void report(detail::HeapErrorKind kind,
                         std::uint64_t p,
                         std::uint32_t heap_block) const {
    char const* const what = kind == detail::HeapErrorKind::double_free
                                 ? "double free (the object is not allocated)"
                                 : "pointer not from this heap";
    printf(
        "heaplab: %s: destroy(0x%016llx) by thread (%u,%u,%u) of block (%u,%u,%u), heap block %u\n",
        what,
        static_cast<unsigned long long>(p),
        threadIdx.x,
        threadIdx.y,
        threadIdx.z,
        blockIdx.x,
        blockIdx.y,
        blockIdx.z,
        heap_block);
    // order: relaxed (flags, read by the host after the kernel)
    atomicOr(&control_->error_kinds, 1u << static_cast<unsigned>(kind));
    // order: relaxed (only its atomicity matters: the thread that sees 0 writes the report)
    if (atomicAdd(&control_->error_count, 1u) == 0u) {
      detail::ErrorReport& r = control_->first;
      r.kind                 = static_cast<std::uint32_t>(kind);
      r.block_idx[0]         = blockIdx.x;
      r.block_idx[1]         = blockIdx.y;
      r.block_idx[2]         = blockIdx.z;
      r.thread_idx[0]        = threadIdx.x;
      r.thread_idx[1]        = threadIdx.y;
      r.thread_idx[2]        = threadIdx.z;
      r.heap_block           = heap_block;
      r.pointer              = p;
      // order: release [first-error-report] (the report's fields before first_ready)
      __threadfence();
      // order: relaxed (ordered by the release fence before it)
      atomicExch(&control_->first_ready, 1u);
    }
  }

  core_ref core_{};
  std::uint64_t block_base_       = 0;
  detail::DeviceControl* control_ = nullptr;
  std::uint32_t oom_retries_      = kDefaultOomRetries;
  bool coalesce_frees_            = true;  // HeapOptions::coalesce_frees
  bool coalesce_requests_         = true;  // HeapOptions::coalesce_requests
};

/// The by-value contract with kernels.
template <class Types>
inline constexpr bool heap_ref_is_trivially_copyable = std::is_trivially_copyable_v<HeapRef<Types>>;

}  // namespace heaplab::soa
