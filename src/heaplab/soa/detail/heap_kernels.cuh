// The kernels behind Heap<Types> (heap.cuh). Not public API.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/heap_protocol.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/soa/detail/warp.cuh"
#include "heaplab/soa/heap_ref.cuh"
#include "heaplab/soa/storage_plan.hpp"

namespace heaplab::soa::detail {

inline constexpr unsigned kThreadsPerBlock = 256;

/// Threads per CUDA block of parallel_do's method kernel (parallel_do_kernel). A CUDA block
/// leaves its multiprocessor only when its slowest warp is done, and a method that allocates can
/// stall one warp for a while (its leader's reservation rounds, a claim-ticket wait) while the
/// block's other warps have finished: with 2 warps per block a stalled warp keeps one idle warp's
/// slot, with 8 warps seven. Measured on an H100 (docs/results.md "parallel_do's block size"):
/// wa-tor 2048x1024's move phase 94 -> 85 ms at 64 threads (512: 124 ms); 32 threads slowed the
/// decide phase (61 vs 52 ms: at most 32 resident blocks per multiprocessor, so 32 warps).
inline constexpr unsigned kParallelDoThreadsPerBlock = 64;

/// Writes the state of an empty heap (storage_plan.hpp write_initial_state). A template only so
/// that the header can be included by several translation units.
template <class Types>
__global__ void initialize_heap_kernel(core::HeapStorage storage) {
  std::size_t const n = initial_state_elements(storage);
  for (std::uint64_t i = global_thread_1d(); i < n; i += grid_stride_1d())
    write_initial_state(storage, static_cast<std::size_t>(i));
}

/// parallel_new: object i gets constructor arguments (i, args...) (DynaSOAr sec. 2.1). The
/// grid-stride loop keeps whole warps allocating together, so requests coalesce.
template <class Types, class T, class... Args>
__global__ void parallel_new_kernel(HeapRef<Types> heap, std::uint64_t count, Args... args) {
  for (std::uint64_t i = global_thread_1d(); i < count; i += grid_stride_1d())
    heap.template make<T>(i, args...);
}

/// Whether type t is T or a concrete subtype of T (table lookup in constant memory).
template <class Types, class T>
__device__ bool is_concrete_subtype_of(std::uint32_t t) {
  auto const& table = HeapRef<Types>::layout();
  return t < Types::num_types && table.types[t].is_abstract == 0 &&
         table.is_subtype(t, Types::template type_id<T>);
}

/// parallel_do step 1 (DynaSOAr sec. 3.1, 3.7): for every block allocated for T or a concrete
/// subtype of T, iteration bitmap := allocation bitmap below the capacity. Runs to completion
/// before any method, so objects created by the methods are not in any iteration bitmap.
template <class Types, class T>
__global__ void copy_iteration_bitmaps_kernel(HeapRef<Types> heap) {
  auto const& core = heap.core();
  for (std::uint64_t i = global_thread_1d(); i < heap.num_blocks(); i += grid_stride_1d()) {
    std::uint32_t const b = static_cast<std::uint32_t>(i);
    std::uint32_t const t = core.blocks().load_type(b);
    if (!is_concrete_subtype_of<Types, T>(t) || !core.allocated(t).get(b)) continue;
    std::uint64_t const live = core.blocks().load_alloc_bitmap(b, core::MemoryOrder::relaxed) &
                               core::low_bits(core.capacity(t));
    core::DeviceAtomics::store(
        core.blocks().iter_bitmap_address(b), live, core::MemoryOrder::relaxed);
  }
}

/// parallel_do step 1 when T is its only concrete type: the same for the blocks of R =
/// allocated[T], as the enumeration's visitor (SetBitIndices::enumerate), so it costs O(|R|)
/// instead of a pass over all M block headers (DynaSOAr Fig. 14B: a do-all's cost must not grow
/// with the heap) and, with the tiled enumeration, no kernel of its own. Each block of R is
/// visited once, so no two threads write one iteration bitmap.
template <class Types, class T>
struct CopyIterationBitmap {
  HeapRef<Types> heap;
  __device__ void operator()(std::uint32_t b) const {
    constexpr std::uint32_t n = Types::template capacity<T>;
    auto const& core          = heap.core();
    std::uint64_t const live =
        core.blocks().load_alloc_bitmap(b, core::MemoryOrder::relaxed) & core::low_bits(n);
    core::DeviceAtomics::store(
        core.blocks().iter_bitmap_address(b), live, core::MemoryOrder::relaxed);
  }
};

/// parallel_do step 2, one kernel per concrete type U (DynaSOAr sec. 2.1 footnote 2): N_U
/// consecutive threads per block of R = blocks[0 .. *count) (sec. 3.7 Fig. 7), grid-stride.
/// A thread runs the method iff its slot's iteration bit is set. The iteration bitmap is read
/// atomically: a block of R whose objects all deleted themselves may be re-initialized
/// (iteration bitmap cleared) while other threads of R still read it; such threads belong to
/// slots whose bit was already 0 or whose object already ran, so either value skips them.
template <class Types, class U, auto Method, class... Args>
__global__ void parallel_do_kernel(HeapRef<Types> heap,
                                   std::uint32_t const* blocks,
                                   std::uint32_t const* count,
                                   Args... args) {
  constexpr std::uint32_t n = Types::template capacity<U>;
  std::uint64_t const total = std::uint64_t{*count} * n;
  for (std::uint64_t i = global_thread_1d(); i < total; i += grid_stride_1d()) {
    std::uint32_t const b    = blocks[i / n];
    std::uint32_t const slot = static_cast<std::uint32_t>(i % n);
    std::uint64_t iter       = 0;
    if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::parallel_do_reads_alloc_bitmap) {
      // MUTANT parallel_do_reads_alloc_bitmap: the allocation bitmap instead of the iteration
      // bitmap decides, so objects created by the methods in blocks of R are visited too.
      iter = core::DeviceAtomics::load(heap.core().blocks().alloc_bitmap_address(b),
                                       core::MemoryOrder::relaxed) &
             core::low_bits(n);
    } else {
      iter = core::DeviceAtomics::load(heap.core().blocks().iter_bitmap_address(b),
                                       core::MemoryOrder::relaxed);
    }
    if (((iter >> slot) & 1u) == 0) continue;
    U* const object = reinterpret_cast<U*>(
        static_cast<std::uintptr_t>(heap.template object_pointer_of<U>(b, slot)));
    (object->*Method)(args...);
  }
}

/// Statistics at quiescence: per type the blocks in allocated[T] and the used slots in them,
/// plus the free-block count. out = [blocks per type (K), used per type (K), free blocks].
template <class Types>
__global__ void count_blocks_kernel(HeapRef<Types> heap, unsigned long long* out) {
  constexpr std::uint32_t k = Types::num_types;
  __shared__ unsigned long long blocks[k];
  __shared__ unsigned long long used[k];
  __shared__ unsigned long long free_blocks;
  for (std::uint32_t t = threadIdx.x; t < k; t += blockDim.x) {
    blocks[t] = 0;
    used[t]   = 0;
  }
  if (threadIdx.x == 0) free_blocks = 0;
  __syncthreads();
  auto const& core = heap.core();
  for (std::uint64_t i = global_thread_1d(); i < heap.num_blocks(); i += grid_stride_1d()) {
    std::uint32_t const b = static_cast<std::uint32_t>(i);
    // order: relaxed (a count in shared memory, read after __syncthreads)
    if (core.free_blocks().get(b)) atomicAdd(&free_blocks, 1ull);
    std::uint32_t const t = core.blocks().load_type(b);
    if (t >= k || core.capacity(t) == 0 || !core.allocated(t).get(b)) continue;
    std::uint64_t const a = core.blocks().load_alloc_bitmap(b, core::MemoryOrder::relaxed);
    // order: relaxed (counts in shared memory, read after __syncthreads)
    atomicAdd(&blocks[t], 1ull);
    // order: relaxed (counts in shared memory, read after __syncthreads)
    atomicAdd(&used[t], static_cast<unsigned long long>(core::used_slots(a, core.capacity(t))));
  }
  __syncthreads();
  for (std::uint32_t t = threadIdx.x; t < k; t += blockDim.x) {
    // order: relaxed (statistics, read by the host after the kernel)
    if (blocks[t] != 0) atomicAdd(&out[t], blocks[t]);
    // order: relaxed (statistics, read by the host after the kernel)
    if (used[t] != 0) atomicAdd(&out[k + t], used[t]);
  }
  // order: relaxed (statistics, read by the host after the kernel)
  if (threadIdx.x == 0 && free_blocks != 0) atomicAdd(&out[2 * k], free_blocks);
}

}  // namespace heaplab::soa::detail
