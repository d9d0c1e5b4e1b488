#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "alloc_bench.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/host_config.hpp"
#include "heaplab/soa/storage_plan.hpp"
#include "object_check.cuh"

namespace heaplab::bench {

class Object64 {
 public:
  HEAPLAB_SOA_FIELDS(Object64, (std::uint64_t[8], words_));
};
class Object16 {
 public:
  HEAPLAB_SOA_FIELDS(Object16, (std::uint64_t[2], words_));
};
using Types64 = soa::HeapTypes<Object64>;
using Types16 = soa::HeapTypes<Object16>;

namespace {

/// The object check's Access (object_check.cuh) for heaplab's SOA objects: an object's first and
/// last word are words_[0] and words_[size - 1], reached through the field DSL from the encoded
/// pointer; it is owned when HeapRef::contains says it is a well-formed pointer into this heap;
/// its key is its block address and slot (the pointer without type and capacity bits), so that
/// distinct keys are distinct slots (min_distance 1).
template <class Types, class T>
struct HeapObjectAccess {
  soa::HeapRef<Types> heap;
  std::uint64_t min_distance = 1;

  __device__ static T* object(std::uint64_t p) {
    return reinterpret_cast<T*>(static_cast<std::uintptr_t>(p));
  }
  __device__ bool owns(std::uint64_t p) const { return heap.contains(p); }
  __device__ std::uint64_t& first(std::uint64_t p) const { return object(p)->words_[0]; }
  __device__ std::uint64_t& last(std::uint64_t p) const {
    auto& words = object(p)->words_;
    return words[words.size() - 1];
  }
  __device__ std::uint64_t key(std::uint64_t p) const {
    return core::pointer_block_address(p) | core::pointer_slot(p);
  }
};

/// The heap options a benchmark's knobs stand for.
soa::HeapOptions heap_options(HeapKnobs const& knobs) {
  soa::HeapOptions options;
  options.claim_wait_rounds = knobs.claim_wait_rounds;
  options.coalesce_frees    = knobs.coalesce_frees;
  options.coalesce_requests = knobs.coalesce_requests;
  options.rotate_bitmaps    = knobs.rotate_bitmaps;
  options.active_lookups    = knobs.active_lookups;
  return options;
}

/// Heap blocks for `objects` objects of capacity `cap`: every object fits with 25% + 256 blocks
/// to spare (concurrent block initialization leaves some blocks partly filled).
std::uint64_t heap_blocks(std::uint64_t objects, std::uint32_t cap) {
  return (objects + cap - 1) / cap * 5 / 4 + 256;
}

template <class Types, class T>
std::uint64_t run_bytes(std::uint64_t objects) {
  std::uint64_t const blocks = heap_blocks(objects, Types::template capacity<T>);
  // The metadata region is a few words per block (bitmaps, types): 64 bytes per block is ample.
  return blocks * (Types::block_bytes + 64) + 8 * objects + object_check_bytes(objects);
}

template <class Types, class T>
__global__ void make_objects(soa::HeapRef<Types> heap,
                             std::uint64_t* slots,
                             std::uint64_t threads,
                             int per_thread) {
  std::uint64_t const tid = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (tid >= threads) return;
  for (int i = 0; i < per_thread; ++i)
    slots[tid * per_thread + i] =
        static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(heap.template make<T>()));
}

template <class Types, class T>
__global__ void destroy_objects(soa::HeapRef<Types> heap,
                                std::uint64_t const* slots,
                                std::uint64_t threads,
                                int per_thread) {
  std::uint64_t const tid = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (tid >= threads) return;
  for (int i = 0; i < per_thread; ++i)
    heap.destroy(reinterpret_cast<T*>(static_cast<std::uintptr_t>(slots[tid * per_thread + i])));
}

/// What every allocation row measures on `heap`: the allocation kernel (threads x per_thread
/// objects of T, the heap reset before each timed run), the nullptr answers and the object check
/// of the last timed run (untimed), then the free kernel (each timed run after an untimed
/// allocation); the heap must be empty after it (else std::runtime_error naming `what`).
struct AllocFreeRun {
  Sample alloc;
  Sample free;
  std::uint64_t failed = 0;
  ObjectCheck check;
};

template <class Types, class T>
AllocFreeRun time_alloc_free(soa::Heap<Types>& heap,
                             std::uint64_t* slots,
                             std::uint64_t threads,
                             int per_thread,
                             int warmup,
                             int repeats,
                             std::string const& what) {
  unsigned const block = kAllocBlockThreads;
  auto const grid      = static_cast<unsigned>(cudart::ceil_div(threads, block));
  auto alloc           = [&] {
    make_objects<Types, T><<<grid, block>>>(heap.ref(), slots, threads, per_thread);
    HEAPLAB_CHECK_LAUNCH();
  };
  AllocFreeRun r;
  r.alloc = time_repeated(
      warmup, repeats, [&] { heap.reset(); }, alloc);
  r.failed = heap.oom_count();
  r.check  = check_objects(slots,
                          threads * static_cast<std::uint64_t>(per_thread),
                          HeapObjectAccess<Types, T>{heap.ref()});
  r.free   = time_repeated(
      warmup,
      repeats,
      [&] {
        heap.reset();
        alloc();
      },
      [&] {
        destroy_objects<Types, T><<<grid, block>>>(heap.ref(), slots, threads, per_thread);
        HEAPLAB_CHECK_LAUNCH();
      });
  heap.synchronize();
  if (heap.statistics().used_slots != 0)
    throw std::runtime_error(what + ": objects left after the free kernel");
  return r;
}

template <class Types, class T>
HeapAllocResult run(
    std::uint64_t threads, int per_thread, int warmup, int repeats, HeapKnobs const& knobs) {
  std::uint64_t const objects = threads * static_cast<std::uint64_t>(per_thread);
  constexpr std::uint32_t cap = Types::template capacity<T>;
  std::uint64_t const blocks  = heap_blocks(objects, cap);
  if (blocks > 0xFFFFFFFFull)
    throw std::runtime_error("alloc bench: too many objects for one heap");
  soa::HeapOptions const options = heap_options(knobs);
  auto heap = soa::Heap<Types>::with_blocks(static_cast<std::uint32_t>(blocks), options);
  cudart::device_buffer<std::uint64_t> slots(objects, "object pointer slots");
  AllocFreeRun const t = time_alloc_free<Types, T>(
      heap, slots.data(), threads, per_thread, warmup, repeats, "alloc bench");
  HeapAllocResult r;
  r.blocks      = static_cast<std::uint32_t>(blocks);
  r.block_bytes = Types::block_bytes;
  r.capacity    = cap;
  r.alloc       = t.alloc;
  r.free        = t.free;
  r.failed      = t.failed;
  r.check       = t.check;
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

Fig14aHeap fig14a_heap(std::uint64_t heap_bytes) {
  Fig14aHeap h;
  h.heap_bytes        = heap_bytes;
  h.block_bytes       = Types64::block_bytes;
  h.capacity          = Types64::capacity<Object64>;
  auto const metadata = [](std::uint64_t m) {
    auto const config = soa::heap_config<Types64>(static_cast<std::uint32_t>(m), 1, 0);
    return soa::StoragePlan::make(config, Types64::block_bytes).metadata_bytes;
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
  AllocFreeRun const t = time_alloc_free<Types64, Object64>(
      heap, slots.data(), threads, n, warmup, repeats, "utilization at n = " + std::to_string(n));
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
    destroy_objects<Types64, Object64><<<g, block>>>(heap.ref(), dense.data(), max.objects, 1);
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
  result.heap = fig14a_heap(heap_bytes);
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
  return run<Types64, Object64>(
      static_cast<std::uint64_t>(threads), per_thread, warmup, repeats, knobs);
}

HeapAllocResult heap_allocation_wave(std::uint64_t threads,
                                     int warmup,
                                     int repeats,
                                     HeapKnobs const& knobs) {
  static_assert(Types16::size_bytes<Object16> == 16);
  return run<Types16, Object16>(threads, 1, warmup, repeats, knobs);
}

std::uint64_t heap_linux_scalability_bytes(int threads, int per_thread) {
  return run_bytes<Types64, Object64>(static_cast<std::uint64_t>(threads) *
                                      static_cast<std::uint64_t>(per_thread));
}

std::uint64_t heap_allocation_wave_bytes(std::uint64_t threads) {
  return run_bytes<Types16, Object16>(threads);
}

}  // namespace heaplab::bench
