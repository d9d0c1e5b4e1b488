// AnyHeap<Types, Allocator>: heaplab's applications on ANY device allocator with malloc/free, for
// DynaSOAr's per-application allocator comparison (DynaSOAr sec. 6, Fig. 10; docs/apps.md "Other
// allocators"). nvcc-only header.
//
// Allocators other than DynaSOAr's have no do-all, which SMMO applications need. DynaSOAr sec. 6
// ("Parallel do-all in Custom Allocators") built standalone parallel_do / device_do for them: per
// type, an array of the allocated objects' pointers, filled with atomics; at a do-all, deleted
// pointers are removed and the array is compacted with a prefix sum. This is heaplab's version:
//
//   objects[U][0 .. count)   encoded pointers of U's objects, 0 where one was deleted
//   make<T>(args)            Allocator::malloc, then i = atomicAdd(count), objects[i] = pointer,
//                            and the object's record (below) remembers i
//   destroy(p)               objects[record.index] = 0, dirty = 1, Allocator::free
//   parallel_do<T, &T::m>    per concrete subtype U of T: if dirty, compact objects[U] (CUB's
//                            DeviceSelect, a prefix sum; each moved object's record gets its new
//                            index); then one thread per entry runs m on every nonzero entry
//   device_do<T, &T::m>      every nonzero entry of objects[U][0 .. count), in the calling thread
//
// The time of the compaction (and of the count it reads back) is "enumeration", reported apart, as
// the paper does: a better allocator-specific mechanism could likely replace it.
//
// Object layout: AOS. The application's classes are written once, with the field DSL of
// soa/field.hpp, whose proxies find a field at block + offset(field, capacity) + slot x size
// from an encoded object pointer (core/object_pointer.hpp). An object of capacity 1 is one
// naturally aligned struct (soa/layout.hpp with capacity 1): so an object here is a grant of the
// allocator, encoded as (address, slot 0, capacity 1, type id), and the same class code runs
// unchanged. The encoding needs a 64-byte aligned address: the request is rounded up to a multiple
// of 64 bytes, and when a grant is not 64-byte aligned it is given back and a request 63 bytes
// larger is aligned inside (counted: realigned()). After the object's fields comes its record:
//   { index in objects[type], bytes from the grant's start to the object }.
// Costs against the soa heap, by design of this comparison and not of the allocator: 8 bytes of
// record and the rounding to 64 bytes per object, the 8-byte pointer per object in objects[], and
// the enumeration.
//
// Semantics as soa::Heap's (heap.cuh parallel_do): parallel_do visits the objects of T and of its
// concrete subtypes that exist when it is called (the counts are read before any method runs);
// objects created by the methods are not visited; a method may delete its own object and objects
// of types that are not T or a subtype of T, and allocate any type. device_do visits the entries
// as they are when the loop reaches them (meant for types that do not change during the loop).
// make returns nullptr when the allocator returns null (counted: nulls()); a type with more than
// `max_objects` creations between two compactions is an error the next parallel_do throws (never a
// silent loss).
//
// Memory orders. Every entry of objects[] and every record is written by plain stores, each by the
// one thread that owns the slot (make: the index from its atomicAdd; destroy: the index in its own
// object's record), and read in LATER kernels (the next parallel_do's compaction and method kernel)
// or by the host after the stream synchronized: the kernel boundary orders them. The counters are
// relaxed atomics (an index claim and statistics). The allocator's own ordering makes a grant's
// bytes the calling thread's (adapter.cuh "Ordering").
#pragma once

#include <cuda_runtime_api.h>
#include <cub/device/device_select.cuh>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "common/any_heap_check.hpp"
#include "common/result_line.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/device_info.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/soa/heap_ref.cuh"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/layout.hpp"

namespace heaplab::apps {

namespace any_heap_detail {

inline constexpr std::uint64_t kEncodingAlign = core::kBlockAlign;  // 64 (object_pointer.hpp)
inline constexpr unsigned kThreads            = 256;

/// What follows an object's fields.
struct Record {
  std::uint32_t index;  // the object's entry in objects[its type]
  std::uint32_t pad;    // bytes from the allocator's grant to the object
};

/// The control words of one type (device).
enum ControlWord : unsigned { kCount = 0, kDirty = 1, kOverflow = 2, kControlWords = 4 };

/// The counters of one heap (device).
enum Counter : unsigned { kNulls = 0, kRealigned = 1, kUnencodable = 2, kCounters = 4 };

/// Bytes of T's fields laid out for capacity 1 (one naturally aligned struct, soa/layout.hpp).
template <class T>
constexpr std::uint64_t object_bytes() {
  using fields = typename soa::detail::chain<T>::all;
  using layout = soa::detail::field_list_layout<fields>;
  return layout::template end_of_first<layout::count>(1);
}

/// Where T's record starts, and the bytes an object of T asks for (a multiple of 64).
template <class T>
constexpr std::uint64_t record_offset() {
  return soa::align_up(object_bytes<T>(), alignof(Record));
}
template <class T>
constexpr std::uint64_t request_bytes() {
  return soa::align_up(record_offset<T>() + sizeof(Record), kEncodingAlign);
}

__device__ __forceinline__ std::uint64_t global_thread() {
  return std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::uint64_t grid_stride() {
  return std::uint64_t{gridDim.x} * blockDim.x;
}

}  // namespace any_heap_detail

/// One concrete type's array of object pointers (device memory).
struct AnyTypeArrays {
  std::uint64_t* objects = nullptr;  // capacity entries
  unsigned* control      = nullptr;  // any_heap_detail::kControlWords words
  std::uint32_t capacity = 0;
};

/// The device side of an AnyHeap, passed to kernels by value.
template <class Types, class Allocator>
class AnyHeapRef {
 public:
  using State = typename Allocator::State;

  /// A new T constructed with args (as soa::HeapRef::make), or nullptr when the allocator returned
  /// null or T's array is full (the next parallel_do throws for the latter).
  template <class T, class... Args>
  __device__ T* make(Args&&... args) const {
    namespace d = any_heap_detail;
    static_assert(Types::template contains<T> && !Types::template is_abstract<T>,
                  "make<T>: T must be a concrete type of this heap");
    constexpr std::uint32_t t = Types::template type_id<T>;
    std::uint64_t object      = 0;
    std::uint32_t pad         = 0;
    if (!grant(d::request_bytes<T>(), object, pad)) return nullptr;
    AnyTypeArrays const& a = arrays[t];
    // order: relaxed (claims entry i for this thread alone; the entry and the record are read in
    // later kernels, after the kernel boundary)
    unsigned const i = atomicAdd(&a.control[d::kCount], 1u);
    if (i >= a.capacity) {
      a.control[d::kOverflow] = 1;  // plain store: read by the host after the kernel
      Allocator::free(state, reinterpret_cast<void*>(static_cast<std::uintptr_t>(object - pad)));
      return nullptr;
    }
    *reinterpret_cast<d::Record*>(static_cast<std::uintptr_t>(object + d::record_offset<T>())) =
        d::Record{i, pad};
    std::uint64_t const p = core::encode_object_pointer(object, 0, 1, t);
    a.objects[i]          = p;
    T* const obj          = reinterpret_cast<T*>(static_cast<std::uintptr_t>(p));
    soa::HeapRef<Types>::construct(obj, std::forward<Args>(args)...);
    return obj;
  }

  /// Frees p (its runtime type from the pointer); nullptr is ignored. The types' destructors are
  /// trivial (AnyHeap checks).
  template <class T>
  __device__ void destroy(T* p) const {
    namespace d = any_heap_detail;
    if (p == nullptr) return;
    auto const bits            = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
    std::uint32_t const t      = core::pointer_type(bits);
    std::uint64_t const object = core::pointer_block_address(bits);
    d::Record const r =
        *reinterpret_cast<d::Record const*>(static_cast<std::uintptr_t>(object + record_offset(t)));
    AnyTypeArrays const& a = arrays[t];
    a.objects[r.index]     = 0;  // plain stores: read by the next compaction (a later kernel)
    a.control[d::kDirty]   = 1;
    Allocator::free(state, reinterpret_cast<void*>(static_cast<std::uintptr_t>(object - r.pad)));
  }

  /// (obj->*Method)(args...) for every object of T and its concrete subtypes, in the calling
  /// thread (soa::HeapRef::device_do's semantics; see the top of this file).
  template <class T, auto Method, class... Args>
  __device__ void device_do(Args const&... args) const {
    device_do_types<T, Method>(std::make_index_sequence<Types::num_types>{}, args...);
  }

  AnyTypeArrays arrays[Types::num_types];
  State state{};
  unsigned long long* counters = nullptr;  // any_heap_detail::kCounters

 private:
  /// A 64-byte aligned object of `bytes` from the allocator: `object` and the bytes `pad` from
  /// the grant to it; false on a null (counted).
  __device__ bool grant(std::uint64_t bytes, std::uint64_t& object, std::uint32_t& pad) const {
    namespace d = any_heap_detail;
    void* raw   = Allocator::malloc(state, bytes);
    if (raw != nullptr && reinterpret_cast<std::uintptr_t>(raw) % d::kEncodingAlign != 0) {
      // Not 64-byte aligned: give it back and align inside a larger grant.
      Allocator::free(state, raw);
      raw = Allocator::malloc(state, bytes + d::kEncodingAlign - 1);
      // order: relaxed (a statistic, read by the host after the kernel)
      atomicAdd(&counters[d::kRealigned], 1ull);
    }
    if (raw == nullptr) {
      // order: relaxed (a statistic, read by the host after the kernel)
      atomicAdd(&counters[d::kNulls], 1ull);
      return false;
    }
    auto const a          = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(raw));
    std::uint64_t const o = soa::align_up(a, d::kEncodingAlign);
    if (o + bytes > (std::uint64_t{1} << core::kAddressBits)) {
      Allocator::free(state, raw);
      // order: relaxed (a statistic, read by the host after the kernel)
      atomicAdd(&counters[d::kUnencodable], 1ull);
      return false;
    }
    object = o;
    pad    = static_cast<std::uint32_t>(o - a);
    return true;
  }

  /// record_offset of the type with runtime id t.
  __device__ static std::uint64_t record_offset(std::uint32_t t) {
    return record_offset_of(t, std::make_index_sequence<Types::num_types>{});
  }
  template <std::size_t... I>
  __device__ static std::uint64_t record_offset_of(std::uint32_t t, std::index_sequence<I...>) {
    std::uint64_t r = 0;
    ((t == I ? (r = any_heap_detail::record_offset<typename Types::template type<I>>()) : 0), ...);
    return r;
  }

  template <class T, auto Method, std::size_t... I, class... Args>
  __device__ void device_do_types(std::index_sequence<I...>, Args const&... args) const {
    (device_do_if_subtype<T, typename Types::template type<static_cast<std::uint32_t>(I)>, Method>(
         args...),
     ...);
  }
  template <class T, class U, auto Method, class... Args>
  __device__ void device_do_if_subtype(Args const&... args) const {
    if constexpr (std::is_base_of_v<T, U> && !Types::template is_abstract<U>) {
      AnyTypeArrays const& a = arrays[Types::template type_id<U>];
      // order: relaxed (entries below the count were written in earlier kernels; see the top)
      unsigned n = atomicAdd(&a.control[any_heap_detail::kCount], 0u);
      if (n > a.capacity) n = a.capacity;
      for (unsigned j = 0; j < n; ++j) {
        std::uint64_t const p = a.objects[j];
        if (p != 0) (reinterpret_cast<U*>(static_cast<std::uintptr_t>(p))->*Method)(args...);
      }
    }
  }
};

namespace any_heap_detail {

template <class Types, class Allocator, class T, class... Args>
__global__ void any_new_kernel(AnyHeapRef<Types, Allocator> heap, std::uint64_t n, Args... args) {
  for (std::uint64_t i = global_thread(); i < n; i += grid_stride())
    heap.template make<T>(i, args...);
}

/// The method kernel of parallel_do for concrete type U: entries 0 .. n - 1 of objects[U].
template <class Types, class Allocator, class U, auto Method, class... Args>
__global__ void any_do_kernel(AnyHeapRef<Types, Allocator> heap,
                              std::uint64_t const* objects,
                              std::uint32_t n,
                              Args... args) {
  for (std::uint64_t i = global_thread(); i < n; i += grid_stride()) {
    std::uint64_t const p = objects[i];
    if (p != 0) (reinterpret_cast<U*>(static_cast<std::uintptr_t>(p))->*Method)(args...);
  }
}

/// After DeviceSelect wrote the nonzero entries to `selected`: copies them back to objects[U],
/// gives each object its new index, and sets count = *kept, dirty = 0.
template <class Types, class Allocator, class U>
__global__ void any_compact_kernel(AnyTypeArrays a,
                                   std::uint64_t const* selected,
                                   int const* kept) {
  auto const n = static_cast<std::uint64_t>(*kept);
  for (std::uint64_t i = global_thread(); i < n; i += grid_stride()) {
    std::uint64_t const p = selected[i];
    a.objects[i]          = p;
    std::uint64_t const o = core::pointer_block_address(p);
    reinterpret_cast<Record*>(static_cast<std::uintptr_t>(o + record_offset<U>()))->index =
        static_cast<std::uint32_t>(i);
  }
  if (global_thread() == 0) {
    a.control[kCount] = static_cast<unsigned>(n);
    a.control[kDirty] = 0;
  }
}

/// Frees every object of objects[U] (AnyHeap's destructor, for allocators whose heap outlives
/// it). The count and entries were written by earlier kernels.
template <class Types, class Allocator, class U>
__global__ void any_free_all_kernel(typename Allocator::State state, AnyTypeArrays a) {
  std::uint64_t const n = a.control[kCount] < a.capacity ? a.control[kCount] : a.capacity;
  for (std::uint64_t i = global_thread(); i < n; i += grid_stride()) {
    std::uint64_t const p = a.objects[i];
    if (p == 0) continue;
    std::uint64_t const o = core::pointer_block_address(p);
    Record const r =
        *reinterpret_cast<Record const*>(static_cast<std::uintptr_t>(o + record_offset<U>()));
    Allocator::free(state, reinterpret_cast<void*>(static_cast<std::uintptr_t>(o - r.pad)));
  }
}

/// record_index[i]: the record index of the object at objects[i] (0 for an empty entry).
template <class U>
__global__ void any_record_index_kernel(std::uint64_t const* objects,
                                        std::uint32_t n,
                                        std::uint32_t* record_index) {
  for (std::uint64_t i = global_thread(); i < n; i += grid_stride()) {
    std::uint64_t const p = objects[i];
    record_index[i] =
        p == 0
            ? 0u
            : reinterpret_cast<Record const*>(
                  static_cast<std::uintptr_t>(core::pointer_block_address(p) + record_offset<U>()))
                  ->index;
  }
}

/// A type as a value (AnyHeap's per-type loops).
template <class U>
struct TypeTag {
  using type = U;
};

struct NonZero {
  __host__ __device__ bool operator()(std::uint64_t p) const { return p != 0; }
};

}  // namespace any_heap_detail

/// The host side: owns the allocator's pool (Allocator::Pool) and the per-type arrays.
template <class Types, class Allocator>
class AnyHeap {
 public:
  using Ref = AnyHeapRef<Types, Allocator>;

  /// A heap over a fresh pool of pool_bytes (Allocator::Pool) with room for max_objects objects of
  /// each concrete type between two compactions. Throws std::invalid_argument for max_objects 0 or
  /// 2^31 and above (CUB's item counts are int), cudart::out_of_memory, and what the pool throws.
  AnyHeap(std::uint64_t pool_bytes, std::uint32_t max_objects, cudaStream_t stream = nullptr)
      : pool_(pool_bytes, current_device()), stream_(stream) {
    namespace d = any_heap_detail;
    static_assert(all_trivially_destructible(std::make_index_sequence<Types::num_types>{}),
                  "AnyHeap: every type's destructor must be trivial (destroy runs none)");
    if (max_objects == 0 || max_objects >= (1u << 31))
      throw std::invalid_argument("AnyHeap: max_objects must be in 1 .. 2^31 - 1");
    objects_  = cudart::device_buffer<std::uint64_t>(std::uint64_t{max_objects} * Types::num_types,
                                                    "any-heap object arrays");
    control_  = cudart::device_buffer<unsigned>(d::kControlWords * Types::num_types,
                                               "any-heap control words");
    counters_ = cudart::device_buffer<unsigned long long>(d::kCounters, "any-heap counters");
    selected_ = cudart::device_buffer<std::uint64_t>(max_objects, "any-heap compaction");
    kept_     = cudart::device_buffer<int>(1, "any-heap compaction count");
    control_.set_zero_async(stream_);
    counters_.set_zero_async(stream_);
    HEAPLAB_CUDA_TRY(cub::DeviceSelect::If(nullptr,
                                           cub_bytes_,
                                           objects_.data(),
                                           selected_.data(),
                                           kept_.data(),
                                           static_cast<int>(max_objects),
                                           d::NonZero{},
                                           stream_));
    cub_temp_ = cudart::device_buffer<std::uint8_t>(cub_bytes_ + 1, "any-heap CUB storage");
    for (std::uint32_t t = 0; t < Types::num_types; ++t)
      ref_.arrays[t] = {objects_.data() + std::uint64_t{t} * max_objects,
                        control_.data() + t * d::kControlWords,
                        max_objects};
    ref_.state    = pool_.state(/*seed=*/1);
    ref_.counters = counters_.data();
    HEAPLAB_CUDA_TRY(cudaStreamSynchronize(stream_));
  }
  AnyHeap(AnyHeap const&)            = delete;
  AnyHeap& operator=(AnyHeap const&) = delete;
  ~AnyHeap() {
    // An allocator whose heap outlives this object (CUDA's) gets every live object back.
    if constexpr (Allocator::kFreeLiveOnReset) {
      for_subtypes<void>([this](auto u) {
        using U = typename decltype(u)::type;
        any_heap_detail::any_free_all_kernel<Types, Allocator, U>
            <<<grid_for(ref_.arrays[0].capacity), any_heap_detail::kThreads, 0, stream_>>>(
                ref_.state, ref_.arrays[Types::template type_id<U>]);
      });
      (void)cudaStreamSynchronize(stream_);  // errors: a lost context, the memory goes with it
    }
  }

  [[nodiscard]] Ref const& ref() const { return ref_; }
  [[nodiscard]] cudaStream_t stream() const { return stream_; }
  [[nodiscard]] static std::string allocator_name() { return Allocator::info().name; }

  /// Creates n objects of T, object i as T(i, args...); asynchronous.
  template <class T, class... Args>
  void parallel_new(std::uint64_t n, Args const&... args) {
    if (n == 0) return;
    any_heap_detail::any_new_kernel<Types, Allocator, T, std::decay_t<Args>...>
        <<<grid_for(n), any_heap_detail::kThreads, 0, stream_>>>(ref_, n, args...);
    HEAPLAB_CUDA_TRY(cudaGetLastError());
  }

  /// (obj->*Method)(args...) for every object of T and T's concrete subtypes that exists now
  /// (see the top of this file); the enumeration (reading the counts, compacting) synchronizes the
  /// stream and is timed into enumeration_ms().
  template <class T, auto Method, class... Args>
  void parallel_do(Args const&... args) {
    static_assert(Types::template contains<T>, "parallel_do<T>: T is not in this heap's type list");
    std::uint32_t n[Types::num_types] = {};
    HEAPLAB_CUDA_TRY(cudaStreamSynchronize(stream_));  // earlier work is not enumeration
    auto const start = std::chrono::steady_clock::now();
    for_subtypes<T>([&](auto u) {
      using U                       = typename decltype(u)::type;
      n[Types::template type_id<U>] = compact_objects<U>();
    });
    enumeration_ms_ +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    for_subtypes<T>([&](auto u) {
      using U               = typename decltype(u)::type;
      std::uint32_t const t = Types::template type_id<U>;
      if (n[t] == 0) return;
      any_heap_detail::any_do_kernel<Types, Allocator, U, Method, std::decay_t<Args>...>
          <<<grid_for(n[t]), any_heap_detail::kThreads, 0, stream_>>>(
              ref_, ref_.arrays[t].objects, n[t], args...);
      HEAPLAB_CUDA_TRY(cudaGetLastError());
    });
  }

  /// soa::Heap::Enumeration's counterpart, so that one app code path runs on both heaps: here a
  /// do-all compacts a type's object array only when objects were created or destroyed since
  /// the last one, so keeping an enumeration needs nothing more and freezes nothing.
  template <class T>
  class Enumeration {
   public:
    template <auto Method, class... Args>
    void parallel_do(Args const&... args) {
      heap_->template parallel_do<soa::do_all_target_t<T, Method>, Method>(args...);
    }
    template <auto Method, class... Args>
    void last_parallel_do(Args const&... args) {
      heap_->template parallel_do<soa::do_all_target_t<T, Method>, Method>(args...);
    }
    void thaw() {}

   private:
    friend class AnyHeap;
    explicit Enumeration(AnyHeap* heap) : heap_(heap) {}
    AnyHeap* heap_ = nullptr;
  };
  template <class T>
  [[nodiscard]] Enumeration<T> enumerate() {
    return Enumeration<T>(this);
  }

  /// Live objects of T and its concrete subtypes (compacts; synchronizes; not timed).
  template <class T>
  std::uint64_t live() {
    std::uint64_t total = 0;
    for_subtypes<T>([&](auto u) { total += compact_objects<typename decltype(u)::type>(); });
    return total;
  }

  /// The arrays' invariants (any_heap_check.hpp) for every concrete type: the first violation,
  /// or nullopt. Synchronizes; compacts nothing.
  std::optional<std::string> verify() {
    std::optional<std::string> problem;
    for_subtypes<void>([&](auto u) {
      if (!problem) problem = check_any_type(state_of<typename decltype(u)::type>());
    });
    return problem;
  }

  /// `<app> <variant>: enumeration E ms of T ms (P%, ...); bytes requested per object: Fish 64,
  /// Shark 64; R grants realigned, N nulls` and the variant's result line (result_line.hpp;
  /// synchronizes). `enumeration_ms`: the part of the
  /// variant's timed work (`total_ms`) spent enumerating, which an app may take from
  /// enumeration_ms() differences around its timed phases.
  void print_enumeration(char const* app,
                         char const* variant,
                         double enumeration_ms,
                         double total_ms) const {
    std::string per_type;
    for_subtypes<void>([&](auto u) {
      using U = typename decltype(u)::type;
      per_type += (per_type.empty() ? "" : ", ") + std::string(U::heaplab_type_name) + " " +
                  std::to_string(request_bytes<U>());
    });
    std::printf(
        "%s %s: enumeration %.3f ms of %.3f ms (%.1f%%, DynaSOAr Fig. 10's hatched part); bytes "
        "requested per object: %s; %llu grants realigned, %llu nulls\n",
        app,
        variant,
        enumeration_ms,
        total_ms,
        100.0 * enumeration_ms / (total_ms > 1e-9 ? total_ms : 1e-9),
        per_type.c_str(),
        static_cast<unsigned long long>(realigned()),
        static_cast<unsigned long long>(nulls()));
    print_result_line(app, variant, total_ms, enumeration_ms);
  }

  /// Milliseconds spent enumerating (compaction and the counts it reads) since construction.
  [[nodiscard]] double enumeration_ms() const { return enumeration_ms_; }
  /// Requests the allocator answered with null (synchronizes).
  std::uint64_t nulls() const { return counter(any_heap_detail::kNulls); }
  /// Grants that were not 64-byte aligned and were asked again 63 bytes larger (synchronizes).
  std::uint64_t realigned() const { return counter(any_heap_detail::kRealigned); }
  /// Bytes one object of T asks the allocator for (without realignment).
  template <class T>
  static constexpr std::uint64_t request_bytes() {
    return any_heap_detail::request_bytes<T>();
  }

 private:
  template <std::size_t... I>
  static constexpr bool all_trivially_destructible(std::index_sequence<I...>) {
    return (std::is_trivially_destructible_v<typename Types::template type<I>> && ...);
  }

  /// f(any_heap_detail::TypeTag<U>{}) for every concrete subtype U of T (T void: every concrete
  /// type).
  template <class T, class F>
  static void for_subtypes(F&& f) {
    for_subtypes_impl<T>(f, std::make_index_sequence<Types::num_types>{});
  }
  template <class T, class F, std::size_t... I>
  static void for_subtypes_impl(F& f, std::index_sequence<I...>) {
    (call_if_subtype<T, typename Types::template type<I>>(f), ...);
  }
  template <class T, class U, class F>
  static void call_if_subtype(F& f) {
    if constexpr ((std::is_void_v<T> || std::is_base_of_v<T, U>)&&!Types::template is_abstract<U>)
      f(any_heap_detail::TypeTag<U>{});
  }

  /// U's arrays as the device holds them (verify()).
  template <class U>
  AnyTypeState state_of() {
    namespace d                  = any_heap_detail;
    AnyTypeArrays const& a       = ref_.arrays[Types::template type_id<U>];
    unsigned c[d::kControlWords] = {};
    cudart::copy_to_host(c, a.control, d::kControlWords, stream_);
    AnyTypeState s;
    s.type_name           = U::heaplab_type_name;
    s.type_id             = Types::template type_id<U>;
    s.capacity            = a.capacity;
    s.count               = c[d::kCount];
    s.overflow            = c[d::kOverflow] != 0;
    std::uint32_t const n = s.count < a.capacity ? s.count : a.capacity;
    if (n == 0) return s;
    cudart::device_buffer<std::uint32_t> index(n, "any-heap record indices");
    d::any_record_index_kernel<U>
        <<<grid_for(n), d::kThreads, 0, stream_>>>(a.objects, n, index.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    s.entries      = cudart::to_host(a.objects, n, stream_);
    s.record_index = cudart::to_host(index.data(), n, stream_);
    return s;
  }

  std::uint64_t counter(unsigned k) const {
    return cudart::value_to_host(counters_.data() + k, stream_);
  }

  /// objects[U]'s live entries: compacted when dirty; returns their number. Throws when U's
  /// array overflowed.
  template <class U>
  std::uint32_t compact_objects() {
    namespace d                  = any_heap_detail;
    std::uint32_t const t        = Types::template type_id<U>;
    AnyTypeArrays const& a       = ref_.arrays[t];
    unsigned c[d::kControlWords] = {};
    cudart::copy_to_host(c, a.control, d::kControlWords, stream_);
    if (c[d::kOverflow] != 0)
      throw std::runtime_error(allocator_name() + " heap: more than " + std::to_string(a.capacity) +
                               " objects of " + U::heaplab_type_name +
                               " were created between two do-alls; raise the app's object "
                               "capacity");
    std::uint32_t const count = c[d::kCount] < a.capacity ? c[d::kCount] : a.capacity;
    if (c[d::kDirty] == 0 || count == 0) return count;
    std::size_t bytes = cub_bytes_;
    HEAPLAB_CUDA_TRY(cub::DeviceSelect::If(cub_temp_.data(),
                                           bytes,
                                           a.objects,
                                           selected_.data(),
                                           kept_.data(),
                                           static_cast<int>(count),
                                           d::NonZero{},
                                           stream_));
    d::any_compact_kernel<Types, Allocator, U>
        <<<grid_for(count), d::kThreads, 0, stream_>>>(a, selected_.data(), kept_.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    return static_cast<std::uint32_t>(cudart::value_to_host(kept_.data(), stream_));
  }

  static unsigned grid_for(std::uint64_t n) {
    std::uint64_t const blocks = (n + any_heap_detail::kThreads - 1) / any_heap_detail::kThreads;
    return static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16);
  }

  static int current_device() {
    int d = 0;
    HEAPLAB_CUDA_TRY(cudaGetDevice(&d));
    return d;
  }

  typename Allocator::Pool pool_;
  cudaStream_t stream_ = nullptr;
  Ref ref_{};
  cudart::device_buffer<std::uint64_t> objects_;
  cudart::device_buffer<unsigned> control_;
  cudart::device_buffer<unsigned long long> counters_;
  cudart::device_buffer<std::uint64_t> selected_;
  cudart::device_buffer<int> kept_;
  cudart::device_buffer<std::uint8_t> cub_temp_;
  std::size_t cub_bytes_ = 0;
  double enumeration_ms_ = 0;
};

}  // namespace heaplab::apps
