#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "alloc_bench.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
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

template <class Types, class T>
HeapAllocResult run(std::uint64_t threads,
                    int per_thread,
                    int warmup,
                    int repeats,
                    std::uint32_t claim_wait_rounds,
                    bool coalesce_frees) {
  std::uint64_t const objects = threads * static_cast<std::uint64_t>(per_thread);
  constexpr std::uint32_t cap = Types::template capacity<T>;
  std::uint64_t const blocks  = heap_blocks(objects, cap);
  if (blocks > 0xFFFFFFFFull)
    throw std::runtime_error("alloc bench: too many objects for one heap");
  soa::HeapOptions options;
  options.claim_wait_rounds = claim_wait_rounds;
  options.coalesce_frees    = coalesce_frees;
  auto heap = soa::Heap<Types>::with_blocks(static_cast<std::uint32_t>(blocks), options);
  cudart::device_buffer<std::uint64_t> slots(objects, "object pointer slots");
  unsigned const block = kAllocBlockThreads;
  auto const grid      = static_cast<unsigned>(cudart::ceil_div(threads, block));
  auto alloc           = [&] {
    make_objects<Types, T><<<grid, block>>>(heap.ref(), slots.data(), threads, per_thread);
    HEAPLAB_CHECK_LAUNCH();
  };
  HeapAllocResult r;
  r.blocks      = static_cast<std::uint32_t>(blocks);
  r.block_bytes = Types::block_bytes;
  r.capacity    = cap;
  r.alloc       = time_repeated(
      warmup, repeats, [&] { heap.reset(); }, alloc);
  r.failed = heap.oom_count();
  // Untimed: the objects of the last timed run, written and read back (object_check.cuh).
  r.check = check_objects(slots.data(), objects, HeapObjectAccess<Types, T>{heap.ref()});
  r.free  = time_repeated(
      warmup,
      repeats,
      [&] {
        heap.reset();
        alloc();
      },
      [&] {
        destroy_objects<Types, T><<<grid, block>>>(heap.ref(), slots.data(), threads, per_thread);
        HEAPLAB_CHECK_LAUNCH();
      });
  heap.synchronize();
  if (heap.statistics().used_slots != 0)
    throw std::runtime_error("alloc bench: objects left after the free kernel");
  return r;
}

}  // namespace

HeapAllocResult heap_linux_scalability(int threads,
                                       int per_thread,
                                       int warmup,
                                       int repeats,
                                       std::uint32_t claim_wait_rounds,
                                       bool coalesce_frees) {
  static_assert(Types64::size_bytes<Object64> == 64);
  return run<Types64, Object64>(static_cast<std::uint64_t>(threads),
                                per_thread,
                                warmup,
                                repeats,
                                claim_wait_rounds,
                                coalesce_frees);
}

HeapAllocResult heap_allocation_wave(std::uint64_t threads,
                                     int warmup,
                                     int repeats,
                                     std::uint32_t claim_wait_rounds,
                                     bool coalesce_frees) {
  static_assert(Types16::size_bytes<Object16> == 16);
  return run<Types16, Object16>(threads, 1, warmup, repeats, claim_wait_rounds, coalesce_frees);
}

std::uint64_t heap_linux_scalability_bytes(int threads, int per_thread) {
  return run_bytes<Types64, Object64>(static_cast<std::uint64_t>(threads) *
                                      static_cast<std::uint64_t>(per_thread));
}

std::uint64_t heap_allocation_wave_bytes(std::uint64_t threads) {
  return run_bytes<Types16, Object16>(threads);
}

}  // namespace heaplab::bench
