// CompactGpu's kernels: grid-stride loops over the per-thread steps of steps.cuh. Not public API
// (compactor.cuh launches them). nvcc only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "heaplab/compact/detail/steps.cuh"
#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/soa/detail/warp.cuh"
#include "heaplab/soa/heap_ref.cuh"

namespace heaplab::compact::detail {

inline constexpr unsigned kThreadsPerBlock = 256;
/// Pointer slots a rewrite thread loads before it looks any of them up (memory-level
/// parallelism; see rewrite_holders_kernel).
inline constexpr unsigned kRewriteBatch = 4;

using core::PerturbPoint;
using soa::detail::global_thread_1d;
using soa::detail::grid_stride_1d;
using soa::detail::perturb_warp;

/// Adds each lane's value into *counter with one atomic per warp. Every lane of the warp must
/// call it (kernels end with it, after their grid-stride loops, with full warps).
__device__ __forceinline__ void add_warp_total(unsigned long long* counter, unsigned value) {
  unsigned const total = __reduce_add_sync(0xFFFFFFFFu, value);
  if (soa::detail::lane_id() == 0 && total != 0) atomicAdd(counter, 1ull * total);
}

/// The dynamic shared memory of the recompute variants' rewrite kernels (one declaration for
/// every instantiation).
__device__ __forceinline__ unsigned char* dynamic_shared_memory() {
  extern __shared__ __align__(16) unsigned char heaplab_compact_shared[];
  return heaplab_compact_shared;
}

/// The call's candidate bitmap when its n differs from the heap's (level 0 only, `words`
/// containers).
template <class Types>
__global__ void call_candidates_kernel(soa::HeapRef<Types> heap,
                                       std::uint32_t type,
                                       std::uint32_t n,
                                       std::uint64_t* out,
                                       std::uint32_t words) {
  for (std::uint64_t w = global_thread_1d(); w < words; w += grid_stride_1d())
    out[w] = call_candidate_word(heap, type, n, static_cast<std::uint32_t>(w));
}

/// Number of set bits of `words` words into *out (a policy's candidate count). (A template
/// only so that the header can be included by several translation units.)
template <int = 0>
__global__ void count_bits_kernel(std::uint64_t const* words,
                                  std::uint32_t count,
                                  unsigned long long* out) {
  unsigned local = 0;
  for (std::uint64_t w = global_thread_1d(); w < count; w += grid_stride_1d())
    local += static_cast<unsigned>(__popcll(words[w]));
  add_warp_total(out, local);
}

template <class Types>
__global__ void record_bitmaps_kernel(PassView<soa::HeapRef<Types>> v) {
  std::uint64_t const total = std::uint64_t{v.n + 1u} * v.sources;
  for (std::uint64_t j = global_thread_1d(); j < total; j += grid_stride_1d())
    snapshot_record_bitmap(v, static_cast<std::uint32_t>(j));
}

/// CompactGpu Alg. 1: 64 threads per source block.
template <class Types>
__global__ void move_kernel(PassView<soa::HeapRef<Types>> v) {
  auto const& table         = soa::HeapRef<Types>::layout();
  std::uint64_t const total = std::uint64_t{v.sources} * kThreadsPerSource;
  for (std::uint64_t i = global_thread_1d(); i < total; i += grid_stride_1d()) {
    perturb_warp(v.perturb_seed, i / 32u, PerturbPoint::move);
    move_object(v, table, i);
    // MUTANT fused_forwarding_store: the forwarding pointer is stored right after the object's
    // own copy, in the move kernel, instead of in a kernel of its own (CompactGpu sec. 3.3
    // footnote 6): it may overwrite bytes of other objects of the source block that other
    // threads have not copied yet (docs/mutants.md).
    if constexpr (core::mutant::fused_forwarding_store) place_forwarding_pointer(v, i);
  }
}

/// CompactGpu Alg. 2: a separate kernel (sec. 3.3 footnote 6).
template <class Types>
__global__ void forwarding_kernel(PassView<soa::HeapRef<Types>> v) {
  std::uint64_t const total = std::uint64_t{v.sources} * kThreadsPerSource;
  for (std::uint64_t i = global_thread_1d(); i < total; i += grid_stride_1d()) {
    perturb_warp(v.perturb_seed, i / 32u, PerturbPoint::forwarding);
    place_forwarding_pointer(v, i);
  }
}

template <class Types>
__global__ void commit_targets_kernel(PassView<soa::HeapRef<Types>> v) {
  unsigned moved = 0;
  for (std::uint64_t s = global_thread_1d(); s < v.sources; s += grid_stride_1d()) {
    perturb_warp(v.perturb_seed, s / 32u, PerturbPoint::commit);
    moved += commit_targets(v, static_cast<std::uint32_t>(s));
  }
  add_warp_total(&v.counters->objects_moved, moved);
}

template <class Types>
__global__ void release_sources_kernel(PassView<soa::HeapRef<Types>> v) {
  for (std::uint64_t s = global_thread_1d(); s < v.sources; s += grid_stride_1d()) {
    perturb_warp(v.perturb_seed, s / 32u, PerturbPoint::release);
    release_source(v, static_cast<std::uint32_t>(s));
  }
}

template <class Types>
__global__ void resync_defrag_kernel(soa::HeapRef<Types> heap,
                                     std::uint32_t type,
                                     std::uint32_t heap_n,
                                     PassCounters* counters) {
  unsigned corrected = 0;
  for (std::uint64_t b = global_thread_1d(); b < heap.num_blocks(); b += grid_stride_1d())
    corrected += resync_defrag_bit(heap, type, heap_n, static_cast<std::uint32_t>(b));
  add_warp_total(&counters->defrag_bits_corrected, corrected);
}

/// Shared memory bytes of a rewrite kernel of variant V for a pass with `sources` sources.
__host__ __device__ constexpr std::uint32_t rewrite_shared_bytes(core::RewriteVariant v,
                                                                 std::uint32_t n,
                                                                 std::uint32_t sources) {
  return v == core::RewriteVariant::recompute_global   ? sources * 4u
         : v == core::RewriteVariant::recompute_shared ? (n + 1u) * sources * 12u
                                                       : 0u;
}

/// Sec. 3.8: the pointer lookup of variant V for the rewrite kernels, passed to `run`. The
/// recompute variants first load their records into shared memory (every thread of the block
/// takes part, then one barrier; nothing writes shared memory afterwards): call it from every
/// thread of the block, outside any divergent branch.
template <class Types, core::RewriteVariant V, class Run>
__device__ __forceinline__ void with_rewrite_lookup(PassView<soa::HeapRef<Types>> const& v,
                                                    std::uint32_t bound,
                                                    Run&& run) {
  using Ref = soa::HeapRef<Types>;
  if constexpr (V == core::RewriteVariant::forwarding) {
    run(ForwardingLookup<Ref>{v, bound});
  } else if constexpr (V == core::RewriteVariant::recompute_global) {
    auto* const source_ids = reinterpret_cast<std::uint32_t*>(dynamic_shared_memory());
    for (std::uint32_t k = threadIdx.x; k < v.sources; k += blockDim.x) source_ids[k] = v.R[k];
    __syncthreads();
    run(RecomputeLookup<Ref>{v, bound, source_ids, v.R, v.record_bitmaps});
  } else {
    std::uint32_t const entries = (v.n + 1u) * v.sources;
    auto* const bitmaps         = reinterpret_cast<std::uint64_t*>(dynamic_shared_memory());
    auto* const ids             = reinterpret_cast<std::uint32_t*>(bitmaps + entries);
    for (std::uint32_t k = threadIdx.x; k < entries; k += blockDim.x) {
      bitmaps[k] = v.record_bitmaps[k];
      ids[k]     = v.R[k];
    }
    __syncthreads();
    run(RecomputeLookup<Ref>{v, bound, ids, ids, bitmaps});
  }
}

/// Sec. 3.4 / 3.8: rewrites the pointers to sources in the SOA arrays `h` of the holder blocks
/// holder_blocks[0 .. *holder_count) (one thread per pointer slot).
template <class Types, core::RewriteVariant V>
__global__ void rewrite_holders_kernel(PassView<soa::HeapRef<Types>> v,
                                       HolderArrays h,
                                       std::uint32_t const* holder_blocks,
                                       std::uint32_t const* holder_count) {
  auto const& table         = soa::HeapRef<Types>::layout();
  std::uint32_t const bound = v.source_bound();
  unsigned scanned = 0, rewritten = 0;
  with_rewrite_lookup<Types, V>(v, bound, [&](auto const& lookup) {
    // kRewriteBatch indices per thread and round, each phase for all of them before the next:
    // the pointer loads (and the lookups' loads) of one thread are independent, so they are
    // in flight together instead of one dependent chain after the other.
    std::uint64_t const total  = std::uint64_t{*holder_count} * h.count * kThreadsPerSource;
    std::uint64_t const stride = grid_stride_1d();
    for (std::uint64_t first = global_thread_1d(); first < total; first += stride * kRewriteBatch) {
      perturb_warp(v.perturb_seed, first / 32u, PerturbPoint::rewrite);
      LoadedPointer p[kRewriteBatch];
      std::uint64_t q[kRewriteBatch];
#pragma unroll
      for (unsigned k = 0; k < kRewriteBatch; ++k) {
        std::uint64_t const i = first + k * stride;
        p[k] = i < total ? load_holder_slot(v, table, h, holder_blocks, bound, i) : LoadedPointer{};
      }
#pragma unroll
      for (unsigned k = 0; k < kRewriteBatch; ++k)
        q[k] = p[k].at == nullptr ? 0 : lookup(p[k].value);
#pragma unroll
      for (unsigned k = 0; k < kRewriteBatch; ++k) {
        RewriteCount const c = store_rewritten(p[k], q[k]);
        scanned += c.scanned;
        rewritten += c.rewritten;
      }
    }
  });
  add_warp_total(&v.counters->pointers_scanned, scanned);
  add_warp_total(&v.counters->pointers_rewritten, rewritten);
}

/// Sec. 3.4 / 3.8: rewrites the pointers to sources in the external root array
/// roots[0 .. root_count) (one thread per entry).
template <class Types, core::RewriteVariant V>
__global__ void rewrite_roots_kernel(PassView<soa::HeapRef<Types>> v,
                                     std::uint64_t* roots,
                                     std::uint64_t root_count) {
  std::uint32_t const bound = v.source_bound();
  unsigned scanned = 0, rewritten = 0;
  with_rewrite_lookup<Types, V>(v, bound, [&](auto const& lookup) {
    for (std::uint64_t i = global_thread_1d(); i < root_count; i += grid_stride_1d()) {
      RewriteCount const c = rewrite_root(roots, lookup, i);
      scanned += c.scanned;
      rewritten += c.rewritten;
    }
  });
  add_warp_total(&v.counters->roots_scanned, scanned);
  add_warp_total(&v.counters->roots_rewritten, rewritten);
}

}  // namespace heaplab::compact::detail
