#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "alloc_bench.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/host_config.hpp"
#include "heaplab/soa/storage_plan.hpp"
#include "object_check.cuh"
#include "warp_rounds.hpp"

namespace heaplab::bench {

// One type per object size of the size rows (kAllocSizes): `words_` of 8-byte words, or of one
// 4-byte word for the 4-byte type. Object64 and Object16 are linux-scalability's and the wave's.
#define HEAPLAB_BENCH_OBJECT(BYTES, WORD, COUNT)              \
  class Object##BYTES {                                       \
   public:                                                    \
    HEAPLAB_SOA_FIELDS(Object##BYTES, (WORD[COUNT], words_)); \
  };                                                          \
  using Types##BYTES = soa::HeapTypes<Object##BYTES>;
HEAPLAB_BENCH_OBJECT(4, std::uint32_t, 1)
HEAPLAB_BENCH_OBJECT(16, std::uint64_t, 2)
HEAPLAB_BENCH_OBJECT(64, std::uint64_t, 8)
HEAPLAB_BENCH_OBJECT(256, std::uint64_t, 32)
HEAPLAB_BENCH_OBJECT(1024, std::uint64_t, 128)
HEAPLAB_BENCH_OBJECT(4096, std::uint64_t, 512)
#undef HEAPLAB_BENCH_OBJECT
// The mixed row's heap: kMixedSizes' three types in one heap (DynaSOAr sec. 3.2: a block holds
// 64 of the 16-byte type, 16 of the 64-byte one, 4 of the 256-byte one).
using TypesMixed = soa::HeapTypes<Object16, Object64, Object256>;

namespace {

/// The object check's Access (object_check.cuh) for heaplab's SOA objects of the types Ts (one,
/// or the mixed row's three, which share their word type): an object's first and last word are
/// words_[0] and words_[size - 1] of its type (from the pointer's type bits), reached through the
/// field DSL from the encoded pointer; it is owned when HeapRef::contains says it is a
/// well-formed pointer into this heap; its key is its block address and slot (the pointer without
/// type and capacity bits), so that distinct keys are distinct slots (min_distance 1).
template <class Types, class T0, class... Ts>
struct HeapObjectAccess {
  soa::HeapRef<Types> heap;
  std::uint64_t min_distance = 1;
  using Word                 = std::remove_reference_t<decltype(std::declval<T0&>().words_[0])>;

  template <class T>
  __device__ static T* object(std::uint64_t p) {
    return reinterpret_cast<T*>(static_cast<std::uintptr_t>(p));
  }
  /// &words_[first ? 0 : size - 1] of p's type.
  __device__ static Word* word(std::uint64_t p, bool first) {
    Word* w             = nullptr;
    auto const try_type = [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      if (w != nullptr || core::pointer_type(p) != Types::template type_id<T>) return;
      auto& words = object<T>(p)->words_;
      w           = &words[first ? 0 : words.size() - 1];
    };
    try_type(static_cast<T0*>(nullptr));
    (try_type(static_cast<Ts*>(nullptr)), ...);
    return w;
  }
  __device__ bool owns(std::uint64_t p) const {
    return heap.contains(p) && word(p, true) != nullptr;
  }
  __device__ Word& first(std::uint64_t p) const { return *word(p, true); }
  __device__ Word& last(std::uint64_t p) const { return *word(p, false); }
  __device__ std::uint64_t key(std::uint64_t p) const {
    return core::pointer_block_address(p) | core::pointer_slot(p);
  }
};

template <class T0, class...>
struct detail_first {
  using type = T0;
};

/// The heap options a benchmark's knobs stand for.
soa::HeapOptions heap_options(HeapKnobs const& knobs) {
  soa::HeapOptions options;
  options.claim_wait_rounds = knobs.claim_wait_rounds;
  options.coalesce_frees    = knobs.coalesce_frees;
  options.coalesce_requests = knobs.coalesce_requests;
  options.rotate_bitmaps    = knobs.rotate_bitmaps;
  options.active_lookups    = knobs.active_lookups;
  options.block_hints       = knobs.block_hints;
  return options;
}

/// What an allocation kernel makes and how the free kernel frees it: one type T for every object.
template <class T>
struct OneType {
  template <class Types>
  __device__ static T* make(soa::HeapRef<Types> const& heap, std::uint64_t, int) {
    return heap.template make<T>();
  }
  template <class Types>
  __device__ static void destroy(soa::HeapRef<Types> const& heap, std::uint64_t p) {
    heap.destroy(reinterpret_cast<T*>(static_cast<std::uintptr_t>(p)));
  }
  /// Heap blocks `objects` of them need when every block is full.
  template <class Types>
  static std::uint64_t full_blocks(std::uint64_t objects) {
    constexpr std::uint32_t cap = Types::template capacity<T>;
    return (objects + cap - 1) / cap;
  }
};

/// The mixed row: object i of thread tid is of type (tid + i) % 3 of TypesMixed (kMixedSizes), so
/// that every warp asks for all three types in every round; freed by the type in its pointer.
struct MixedTypes {
  __device__ static void* make(soa::HeapRef<TypesMixed> const& heap, std::uint64_t tid, int i) {
    switch ((tid + static_cast<std::uint64_t>(i)) % 3) {
      case 0:
        return heap.make<Object16>();
      case 1:
        return heap.make<Object64>();
      default:
        return heap.make<Object256>();
    }
  }
  __device__ static void destroy(soa::HeapRef<TypesMixed> const& heap, std::uint64_t p) {
    heap.destroy_raw(p);
  }
  template <class Types>
  static std::uint64_t full_blocks(std::uint64_t objects) {
    std::uint64_t const each = objects / 3 + 1;  // of each type, at most
    return OneType<Object16>::full_blocks<Types>(each) +
           OneType<Object64>::full_blocks<Types>(each) +
           OneType<Object256>::full_blocks<Types>(each);
  }
};

/// Heap blocks for `objects` objects made by Make: every object fits with 25% + 256 blocks to
/// spare (concurrent block initialization leaves some blocks partly filled).
template <class Types, class Make>
std::uint64_t heap_blocks(std::uint64_t objects) {
  return Make::template full_blocks<Types>(objects) * 5 / 4 + 256;
}

template <class Types, class Make>
std::uint64_t run_bytes(std::uint64_t objects) {
  std::uint64_t const blocks = heap_blocks<Types, Make>(objects);
  // The metadata region is a few words per block (bitmaps, types): 64 bytes per block is ample.
  return blocks * (Types::block_bytes + 64) + 8 * objects + object_check_bytes(objects);
}

template <class Types, class Make>
__global__ void make_objects(soa::HeapRef<Types> heap,
                             std::uint64_t* slots,
                             std::uint64_t threads,
                             int per_thread) {
  std::uint64_t const tid = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (tid >= threads) return;
  for (int i = 0; i < per_thread; ++i)
    slots[tid * per_thread + i] =
        static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(Make::make(heap, tid, i)));
}

template <class Types, class Make>
__global__ void destroy_objects(soa::HeapRef<Types> heap,
                                std::uint64_t const* slots,
                                std::uint64_t threads,
                                int per_thread) {
  std::uint64_t const tid = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (tid >= threads) return;
  for (int i = 0; i < per_thread; ++i) Make::destroy(heap, slots[tid * per_thread + i]);
}

/// What every allocation row measures on `heap`: the allocation kernel (threads x per_thread
/// objects made by Make, the heap reset before each timed run), the nullptr answers and the
/// object check of the last timed run (untimed, through `access`), then the free kernel (each
/// timed run after an untimed allocation); the heap must be empty after it (else
/// std::runtime_error naming `what`).
struct AllocFreeRun {
  Sample alloc;
  Sample free;
  std::uint64_t failed = 0;
  ObjectCheck check;
  double one_block_rounds = 1;  // warp_rounds.hpp, of the last timed allocation run
};

template <class Types, class Make, class Access>
AllocFreeRun time_alloc_free(soa::Heap<Types>& heap,
                             std::uint64_t* slots,
                             std::uint64_t threads,
                             int per_thread,
                             int warmup,
                             int repeats,
                             std::string const& what,
                             Access const& access) {
  unsigned const block = kAllocBlockThreads;
  auto const grid      = static_cast<unsigned>(cudart::ceil_div(threads, block));
  auto alloc           = [&] {
    make_objects<Types, Make><<<grid, block>>>(heap.ref(), slots, threads, per_thread);
    HEAPLAB_CHECK_LAUNCH();
  };
  AllocFreeRun r;
  r.alloc = time_repeated(
      warmup, repeats, [&] { heap.reset(); }, alloc);
  r.failed = heap.oom_count();
  r.check  = check_objects(slots, threads * static_cast<std::uint64_t>(per_thread), access);
  std::vector<std::uint64_t> pointers(threads * static_cast<std::uint64_t>(per_thread));
  cudart::copy_to_host(pointers.data(), slots, pointers.size());
  r.one_block_rounds = one_block_rounds(pointers, threads, per_thread);
  r.free             = time_repeated(
      warmup,
      repeats,
      [&] {
        heap.reset();
        alloc();
      },
      [&] {
        destroy_objects<Types, Make><<<grid, block>>>(heap.ref(), slots, threads, per_thread);
        HEAPLAB_CHECK_LAUNCH();
      });
  heap.synchronize();
  if (heap.statistics().used_slots != 0)
    throw std::runtime_error(what + ": objects left after the free kernel");
  return r;
}

/// One row in a heap of its own that holds every object with room to spare.
template <class Types, class Make, class... Ts>
HeapAllocResult run(
    std::uint64_t threads, int per_thread, int warmup, int repeats, HeapKnobs const& knobs) {
  std::uint64_t const objects = threads * static_cast<std::uint64_t>(per_thread);
  std::uint64_t const blocks  = heap_blocks<Types, Make>(objects);
  if (blocks > 0xFFFFFFFFull)
    throw std::runtime_error("alloc bench: too many objects for one heap");
  soa::HeapOptions const options = heap_options(knobs);
  auto heap = soa::Heap<Types>::with_blocks(static_cast<std::uint32_t>(blocks), options);
  cudart::device_buffer<std::uint64_t> slots(objects, "object pointer slots");
  AllocFreeRun const t = time_alloc_free<Types, Make>(heap,
                                                      slots.data(),
                                                      threads,
                                                      per_thread,
                                                      warmup,
                                                      repeats,
                                                      "alloc bench",
                                                      HeapObjectAccess<Types, Ts...>{heap.ref()});
  HeapAllocResult r;
  r.blocks           = static_cast<std::uint32_t>(blocks);
  r.block_bytes      = Types::block_bytes;
  r.capacity         = Types::template capacity<typename detail_first<Ts...>::type>;
  r.alloc            = t.alloc;
  r.free             = t.free;
  r.failed           = t.failed;
  r.check            = t.check;
  r.one_block_rounds = t.one_block_rounds;
  return r;
}

/// Fig. 14A's maximum utilization: each thread allocates until its first nullptr or `cap`
/// objects; slot tid * cap + i holds its i-th answer (0 from the first nullptr on, which the
/// caller pre-zeroes). Threads that got `cap` objects are counted in *capped.
template <class Types, class T>
__global__ void make_until_null(soa::HeapRef<Types> heap,
                                std::uint64_t* slots,
                                std::uint64_t threads,
                                int cap,
                                unsigned long long* capped) {
  std::uint64_t const tid = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (tid >= threads) return;
  for (int i = 0; i < cap; ++i) {
    T* const p = heap.template make<T>();
    if (p == nullptr) return;
    slots[tid * cap + i] = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
  }
  atomicAdd(capped, 1ull);
}

/// Moves the non-zero entries of in[0 .. n) to out[0 .. *count) (in no particular order).
__global__ void compact_non_null(std::uint64_t const* in,
                                 std::uint64_t n,
                                 std::uint64_t* out,
                                 unsigned long long* count) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    if (in[i] != 0) out[atomicAdd(count, 1ull)] = in[i];
}

}  // namespace

Fig14aHeap fig14a_heap(std::uint64_t heap_bytes, bool block_hints) {
  Fig14aHeap h;
  h.heap_bytes        = heap_bytes;
  h.block_bytes       = Types64::block_bytes;
  h.capacity          = Types64::capacity<Object64>;
  auto const metadata = [block_hints](std::uint64_t m) {
    auto const config = soa::heap_config<Types64>(static_cast<std::uint32_t>(m), 1, 0);
    return soa::StoragePlan::make(config, Types64::block_bytes, block_hints).metadata_bytes;
  };
  std::uint64_t m = std::min<std::uint64_t>(heap_bytes / h.block_bytes, 0xFFFFFFFFull);
  // The metadata grows with M: take blocks off until metadata + blocks fit the budget.
  while (m > 0 && metadata(m) + m * h.block_bytes > heap_bytes) {
    std::uint64_t const over = metadata(m) + m * h.block_bytes - heap_bytes;
    m -= std::min(m, (over + h.block_bytes - 1) / h.block_bytes);
  }
  if (m == 0)
    throw std::invalid_argument("utilization: a heap of " + std::to_string(heap_bytes) +
                                " bytes holds no block of " + std::to_string(h.block_bytes) +
                                " bytes beside its metadata");
  h.blocks         = static_cast<std::uint32_t>(m);
  h.metadata_bytes = metadata(m);
  return h;
}

namespace {

/// One n of Fig. 14A on `heap` (built once for every n).
Fig14aRow fig14a_row(soa::Heap<Types64>& heap,
                     cudart::device_buffer<std::uint64_t>& slots,
                     std::uint64_t threads,
                     int n,
                     int warmup,
                     int repeats) {
  AllocFreeRun const t =
      time_alloc_free<Types64, OneType<Object64>>(heap,
                                                  slots.data(),
                                                  threads,
                                                  n,
                                                  warmup,
                                                  repeats,
                                                  "utilization at n = " + std::to_string(n),
                                                  HeapObjectAccess<Types64, Object64>{heap.ref()});
  Fig14aRow row;
  row.n      = n;
  row.alloc  = t.alloc;
  row.free   = t.free;
  row.failed = t.failed;
  row.check  = t.check;
  return row;
}

/// Fig. 14A's maximum utilization on `heap` (Fig14aMax).
Fig14aMax fig14a_max(soa::Heap<Types64>& heap,
                     cudart::device_buffer<std::uint64_t>& slots,
                     std::uint64_t threads,
                     int cap) {
  unsigned const block          = kAllocBlockThreads;
  auto const grid               = static_cast<unsigned>(cudart::ceil_div(threads, block));
  std::uint64_t const all_slots = threads * static_cast<std::uint64_t>(cap);
  Fig14aMax max;
  heap.reset();
  HEAPLAB_CUDA_TRY(cudaMemsetAsync(slots.data(), 0, all_slots * sizeof(std::uint64_t), nullptr));
  cudart::device_buffer<unsigned long long> counters(2, "utilization counters");
  counters.set_zero_async(nullptr);
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  max.alloc_ms = time_once_ms([&] {
    make_until_null<Types64, Object64>
        <<<grid, block>>>(heap.ref(), slots.data(), threads, cap, counters.data());
    HEAPLAB_CHECK_LAUNCH();
  });
  cudart::device_buffer<std::uint64_t> dense(all_slots, "non-null objects");
  compact_non_null<<<1024, 256>>>(slots.data(), all_slots, dense.data(), counters.data() + 1);
  HEAPLAB_CHECK_LAUNCH();
  std::vector<unsigned long long> const c = cudart::to_host(counters.data(), 2, nullptr);
  max.threads_capped                      = c[0];
  max.objects                             = c[1];
  max.check =
      check_objects(dense.data(), max.objects, HeapObjectAccess<Types64, Object64>{heap.ref()});
  if (max.objects > 0) {
    auto const g = static_cast<unsigned>(cudart::ceil_div(max.objects, std::uint64_t{block}));
    destroy_objects<Types64, OneType<Object64>>
        <<<g, block>>>(heap.ref(), dense.data(), max.objects, 1);
    HEAPLAB_CHECK_LAUNCH();
  }
  heap.synchronize();
  max.empty_after_free = heap.statistics().used_slots == 0;
  return max;
}

}  // namespace

Fig14aResult heap_fig14a(int threads,
                         std::vector<int> const& ns,
                         std::uint64_t heap_bytes,
                         int max_per_thread,
                         int warmup,
                         int repeats,
                         HeapKnobs const& knobs,
                         std::function<void(Fig14aRow const&)> const& on_row) {
  Fig14aResult result;
  result.heap = fig14a_heap(heap_bytes, knobs.block_hints);
  auto heap   = soa::Heap<Types64>::with_blocks(result.heap.blocks, heap_options(knobs));
  if (heap.device_bytes() > heap_bytes)
    throw std::logic_error("utilization: the heap takes more than its budget");
  auto const n_threads = static_cast<std::uint64_t>(threads);
  int const max_n      = ns.empty() ? 1 : *std::max_element(ns.begin(), ns.end());
  cudart::device_buffer<std::uint64_t> slots(
      n_threads * static_cast<std::uint64_t>(std::max(max_n, max_per_thread)),
      "object pointer slots");
  for (int n : ns) {
    result.rows.push_back(fig14a_row(heap, slots, n_threads, n, warmup, repeats));
    on_row(result.rows.back());
  }
  result.max = fig14a_max(heap, slots, n_threads, max_per_thread);
  return result;
}

HeapAllocResult heap_linux_scalability(
    int threads, int per_thread, int warmup, int repeats, HeapKnobs const& knobs) {
  static_assert(Types64::size_bytes<Object64> == 64);
  return run<Types64, OneType<Object64>, Object64>(
      static_cast<std::uint64_t>(threads), per_thread, warmup, repeats, knobs);
}

HeapAllocResult heap_allocation_wave(std::uint64_t threads,
                                     int warmup,
                                     int repeats,
                                     HeapKnobs const& knobs) {
  static_assert(Types16::size_bytes<Object16> == 16);
  return run<Types16, OneType<Object16>, Object16>(threads, 1, warmup, repeats, knobs);
}

std::uint64_t heap_linux_scalability_bytes(int threads, int per_thread) {
  return run_bytes<Types64, OneType<Object64>>(static_cast<std::uint64_t>(threads) *
                                               static_cast<std::uint64_t>(per_thread));
}

std::uint64_t heap_allocation_wave_bytes(std::uint64_t threads) {
  return run_bytes<Types16, OneType<Object16>>(threads);
}

// The size rows: one case per kAllocSizes entry (X(bytes)).
#define HEAPLAB_BENCH_SIZES(X) X(4) X(16) X(64) X(256) X(1024) X(4096)

HeapAllocResult heap_object_size(std::uint32_t bytes,
                                 int threads,
                                 int per_thread,
                                 int warmup,
                                 int repeats,
                                 HeapKnobs const& knobs) {
  auto const t = static_cast<std::uint64_t>(threads);
  switch (bytes) {
#define HEAPLAB_SIZE_CASE(B)                             \
  case B:                                                \
    static_assert(Types##B::size_bytes<Object##B> == B); \
    return run<Types##B, OneType<Object##B>, Object##B>(t, per_thread, warmup, repeats, knobs);
    HEAPLAB_BENCH_SIZES(HEAPLAB_SIZE_CASE)
#undef HEAPLAB_SIZE_CASE
  }
  throw std::invalid_argument("alloc bench: no object type of " + std::to_string(bytes) + " bytes");
}

std::uint64_t heap_object_size_bytes(std::uint32_t bytes, int threads, int per_thread) {
  std::uint64_t const objects =
      static_cast<std::uint64_t>(threads) * static_cast<std::uint64_t>(per_thread);
  switch (bytes) {
#define HEAPLAB_SIZE_CASE(B) \
  case B:                    \
    return run_bytes<Types##B, OneType<Object##B>>(objects);
    HEAPLAB_BENCH_SIZES(HEAPLAB_SIZE_CASE)
#undef HEAPLAB_SIZE_CASE
  }
  throw std::invalid_argument("alloc bench: no object type of " + std::to_string(bytes) + " bytes");
}
#undef HEAPLAB_BENCH_SIZES

HeapAllocResult heap_mixed(
    int threads, int per_thread, int warmup, int repeats, HeapKnobs const& knobs) {
  static_assert(TypesMixed::size_bytes<Object16> == kMixedSizes[0] &&
                TypesMixed::size_bytes<Object64> == kMixedSizes[1] &&
                TypesMixed::size_bytes<Object256> == kMixedSizes[2]);
  return run<TypesMixed, MixedTypes, Object16, Object64, Object256>(
      static_cast<std::uint64_t>(threads), per_thread, warmup, repeats, knobs);
}

std::uint64_t heap_mixed_bytes(int threads, int per_thread) {
  return run_bytes<TypesMixed, MixedTypes>(static_cast<std::uint64_t>(threads) *
                                           static_cast<std::uint64_t>(per_thread));
}

}  // namespace heaplab::bench
