// CompactGpu's kernels: grid-stride loops over the per-thread steps of steps.cuh. Not public API
// (compactor.cuh launches them). nvcc only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "heaplab/compact/detail/steps.cuh"
#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/soa/detail/warp.cuh"
#include "heaplab/soa/heap_ref.cuh"

namespace heaplab::compact::detail {

inline constexpr unsigned kThreadsPerBlock = 256;

using core::PerturbPoint;
using soa::detail::global_thread_1d;
using soa::detail::grid_stride_1d;
using soa::detail::perturb_warp;

/// Adds each lane's value into *counter with one atomic per warp. Every lane of the warp must
/// call it (kernels end with it, after their grid-stride loops, with full warps).
__device__ __forceinline__ void add_warp_total(unsigned long long* counter, unsigned value) {
  unsigned const total = __reduce_add_sync(0xFFFFFFFFu, value);
  // order: relaxed (a count, read by the host after the kernel)
  if (soa::detail::lane_id() == 0 && total != 0) atomicAdd(counter, 1ull * total);
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

/// The lookup of variant V (the recompute variants share one: their records are in global
/// memory, indexed by block id).
template <class Ref, core::RewriteVariant V>
using LookupFor = std::conditional_t<V == core::RewriteVariant::forwarding,
                                     ForwardingLookup<Ref>,
                                     RecomputeLookup<Ref>>;

/// The device-side pass loop's decision, by one thread once r is known: compact::decide_pass,
/// as the host loop decides; a pass is published through `loop` for the kernels of the same
/// iteration, and the loop ends (the while node's condition becomes 0) when the decision is to
/// stop. The kernels that follow in the stopping iteration see B' = 0 and do nothing.
struct LoopDecision {
  LoopState* loop = nullptr;  // nullptr: host-stepped (the host decides)
  std::uint32_t n = 1, k1 = 0, cap = 0;
  cudaGraphConditionalHandle handle{};
};

__device__ inline void decide_on_device(LoopDecision const& d, std::uint32_t r) {
  LoopState* const loop = d.loop;
  PassDecision const p  = decide_pass(r, d.n, d.k1, d.cap);
  if (loop->passes == 0) loop->candidates_before = r;
  loop->candidates_after = r;
  if (!p.run || loop->passes >= loop->capacity) {
    loop->overflow = p.run ? 1u : 0u;
    loop->sources  = 0;
    loop->stop     = static_cast<std::uint32_t>(p.stop);
    loop->stopped  = 1;
    cudaGraphSetConditional(d.handle, 0);
    return;
  }
  loop->current = loop->passes;
  loop->sources = p.sources;
  LoopPass rec;  // every byte written (the host copies the records)
  rec.candidates              = r;
  rec.sources_allowed         = p.sources_allowed;
  rec.sources                 = p.sources;
  loop->records[loop->passes] = rec;
  ++loop->passes;
}

/// Level-0 words per chunk of the candidate selection (one thread block, one word per thread).
inline constexpr std::uint32_t kSelectWordsPerChunk = kThreadsPerBlock;

/// Word w of a level-0 bitmap of num_bits bits, bits at and above num_bits cleared; 0 past the
/// end. Without branches: the kernels below call it before block-wide barriers, and every lane
/// of a warp stays on one path.
__device__ __forceinline__ std::uint64_t select_word(std::uint64_t const* words,
                                                     std::uint32_t num_bits,
                                                     std::uint64_t w) {
  std::uint64_t const num_words = (std::uint64_t{num_bits} + 63u) / 64u;
  bool const inside             = w < num_words;
  std::uint64_t const x         = words[inside ? w : num_words - 1u];
  std::uint64_t const valid     = inside ? std::uint64_t{num_bits} - w * 64u : 0u;
  return valid >= 64u ? x : x & core::low_bits(static_cast<unsigned>(valid));
}

/// The candidate selection, first kernel: the set bits of each chunk of kSelectWordsPerChunk
/// words into chunk_counts[chunk].
template <int = 0>
__global__ void __launch_bounds__(kThreadsPerBlock)
    count_chunks_kernel(std::uint64_t const* words,
                        std::uint32_t num_bits,
                        std::uint32_t* chunk_counts) {
  using Reduce = cub::BlockReduce<std::uint32_t, kThreadsPerBlock>;
  __shared__ typename Reduce::TempStorage reduce;
  std::uint64_t const w = std::uint64_t{blockIdx.x} * kSelectWordsPerChunk + threadIdx.x;
  std::uint32_t const total =
      Reduce(reduce).Sum(static_cast<std::uint32_t>(__popcll(select_word(words, num_bits, w))));
  if (threadIdx.x == 0) chunk_counts[blockIdx.x] = total;
}

/// CompactGpu sec. 3.2 "Choosing Source/Target Blocks", second kernel: the stream compaction
/// of the candidate bitmap (level 0, num_bits bits) into R, ascending, and r = *count. A block
/// adds up the counts of the chunks before its own, scans its words' counts and writes their
/// positions, a warp at a time per word (lane l takes bits l and l + 32: coalesced stores).
/// With `decision.loop` the block of the last chunk also decides the pass (decide_on_device).
/// Two small kernels in place of a CUB select over every bit position plus a decision kernel:
/// the device-side loop runs them once per pass.
template <int = 0>
__global__ void __launch_bounds__(kThreadsPerBlock)
    write_candidates_kernel(std::uint64_t const* words,
                            std::uint32_t num_bits,
                            std::uint32_t const* chunk_counts,
                            std::uint32_t* R,
                            std::uint32_t* count,
                            LoopDecision decision) {
  using Reduce = cub::BlockReduce<std::uint32_t, kThreadsPerBlock>;
  using Scan   = cub::BlockScan<std::uint32_t, kThreadsPerBlock>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
  } temp;
  __shared__ std::uint32_t before;
  std::uint32_t earlier = 0;
  for (std::uint32_t c = threadIdx.x; c < blockIdx.x; c += blockDim.x) earlier += chunk_counts[c];
  earlier = Reduce(temp.reduce).Sum(earlier);
  if (threadIdx.x == 0) before = earlier;
  __syncthreads();
  std::uint64_t const w = std::uint64_t{blockIdx.x} * kSelectWordsPerChunk + threadIdx.x;
  std::uint64_t const x = select_word(words, num_bits, w);
  std::uint32_t offset = 0, total = 0;
  Scan(temp.scan).ExclusiveSum(static_cast<std::uint32_t>(__popcll(x)), offset, total);
  offset += before;
  std::uint32_t const lane = soa::detail::lane_id();
  // The warp's nonzero words, one at a time.
  for (unsigned nonzero = __ballot_sync(0xFFFFFFFFu, x != 0); nonzero != 0;
       nonzero &= nonzero - 1u) {
    auto const j           = static_cast<std::uint32_t>(__ffs(static_cast<int>(nonzero)) - 1);
    std::uint64_t const xj = __shfl_sync(0xFFFFFFFFu, x, static_cast<int>(j));
    std::uint32_t const oj = __shfl_sync(0xFFFFFFFFu, offset, static_cast<int>(j));
    std::uint64_t const wj = w - lane + j;
    for (std::uint32_t bit = lane; bit < 64u; bit += 32u)
      if ((xj >> bit) & 1u)
        R[oj + static_cast<std::uint32_t>(__popcll(xj & core::low_bits(bit)))] =
            static_cast<std::uint32_t>(wj * 64u + bit);
  }
  if (blockIdx.x != gridDim.x - 1u || threadIdx.x != 0) return;
  std::uint32_t const r = before + total;
  *count                = r;
  if (decision.loop != nullptr) decide_on_device(decision, r);
}

/// core::CandidateOrder::by_fill: the sort key of every entry of the block-id order (fill_key),
/// M entries, those past r = *count included.
template <class Ref>
__global__ void __launch_bounds__(kThreadsPerBlock)
    fill_keys_kernel(PassView<Ref> v,
                     std::uint32_t const* block_order,
                     std::uint32_t const* count,
                     std::uint8_t* keys,
                     std::uint32_t num_blocks) {
  std::uint32_t const r = *count;  // written by write_candidates_kernel, the kernel before
  for (std::uint64_t i = global_thread_1d(); i < num_blocks; i += grid_stride_1d())
    keys[i] = fill_key(v, block_order, r, static_cast<std::uint32_t>(i));
}

/// Warps per thread block of the move kernel.
inline constexpr std::uint32_t kWarpsPerBlock = kThreadsPerBlock / 32u;

/// A source's record in the move kernel's shared memory (SourceRecordView's interface).
struct SharedSourceRecord {
  std::uint32_t const* ids;
  std::uint64_t const* bitmaps;
  __device__ std::uint32_t block(std::uint32_t k) const { return ids[k]; }
  __device__ std::uint64_t bitmap(std::uint32_t k) const { return bitmaps[k]; }
};

/// CompactGpu Alg. 1 and 2 in one kernel, one warp per source (the paper gives a source 64
/// threads, one per slot; a warp's lane takes slots' objects `lane` and `lane + 32`, the same
/// relocation_in, so a source's objects are copied by one warp with the loads of two objects in
/// flight per lane, and no thread waits for a slot that holds nothing). Per source: lanes k <= n
/// load block R[s + k B'] of its record and that block's allocation bitmap into the warp's
/// shared memory, in parallel; after __syncwarp every lane computes its relocations from there,
/// once, and copies the objects; after a second __syncwarp, when every object of the source has
/// been read, it stores their forwarding pointers: they overwrite the start of the source's data
/// segment (sec. 3.3 footnote 6 gives them a kernel of their own for this reason), and no other
/// warp reads that source (targets are not sources; no two sources share a target). __syncwarp
/// orders the memory accesses of the lanes it synchronizes. Recompute variants store each
/// source's record instead. A third __syncwarp ends the round before the record is reused.
template <class Types>
__global__ void __launch_bounds__(kThreadsPerBlock, 4)
    move_kernel(PassView<soa::HeapRef<Types>> view) {
  __shared__ std::uint32_t ids[kWarpsPerBlock][kThreadsPerSource];
  __shared__ std::uint64_t bitmaps[kWarpsPerBlock][kThreadsPerSource];
  PassView<soa::HeapRef<Types>> const v = resolve(view);
  auto const& table                     = soa::HeapRef<Types>::layout();
  std::uint32_t const lane              = soa::detail::lane_id();
  std::uint32_t const w                 = threadIdx.x / 32u;
  std::uint64_t const warps             = grid_stride_1d() / 32u;
  SharedSourceRecord const rec{ids[w], bitmaps[w]};
  for (std::uint64_t s = global_thread_1d() / 32u; s < v.sources; s += warps) {  // warp-uniform
    perturb_warp(v.perturb_seed, s, PerturbPoint::move);
    for (std::uint32_t k = lane; k <= v.n; k += 32u) {  // n < N_T <= 64
      std::uint32_t const b = v.R[pass_block_index(static_cast<std::uint32_t>(s), k, v.sources)];
      ids[w][k]             = b;
      bitmaps[w][k]         = v.alloc_bitmap(b);
    }
    __syncwarp();
    Relocation const r[2] = {relocation_in(rec, v.n, v.capacity, lane),
                             relocation_in(rec, v.n, v.capacity, lane + 32u)};
    if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::forwarding_before_upper_half) {
      // MUTANT forwarding_before_upper_half: the lower half's objects (slots 0..31) are copied
      // and forwarded before the upper half's are copied, on the reasoning that slot j's
      // forwarding pointer overwrites only slot j's first field. That holds when the first
      // field is 8 bytes wide (an id first); with a narrower first field the lower half's
      // pointers overwrite the upper half's first fields and the next arrays before they are
      // copied: capacities above 32 and a first field of 1, 2 or 4 bytes (docs/mutants.md).
      if (v.forwarding) {
        Relocation const lower[1] = {r[0]};
        Relocation const upper[1] = {r[1]};
        copy_objects_grouped(v, table, lower);
        __syncwarp();
        place_forwarding_pointer(v, r[0]);
        copy_objects_grouped(v, table, upper);
      } else {
        copy_objects_grouped(v, table, r);
      }
    } else {
      copy_objects_grouped(v, table, r);
    }
    if (lane == 0) v.source_moved[s] = live_objects(rec, v.capacity);
    if (!v.forwarding) {
      if (lane == 0) store_record(v, rec);
    } else {
      // MUTANT fused_forwarding_store: no barrier between the copies and the forwarding
      // stores, so a forwarding pointer may overwrite bytes of the source that other lanes
      // have not copied yet (docs/mutants.md).
      if HEAPLAB_MUTANT_CONSTEXPR (!core::mutant::fused_forwarding_store) __syncwarp();
      perturb_warp(v.perturb_seed, s, PerturbPoint::forwarding);
      if HEAPLAB_MUTANT_CONSTEXPR (!core::mutant::forwarding_before_upper_half)
        place_forwarding_pointer(v, r[0]);
      place_forwarding_pointer(v, r[1]);
    }
    __syncwarp();
  }
}

/// Sec. 3.5 in one kernel of 2 B' threads: thread s < B' commits the targets of source s (they
/// gain the moved slots), thread B' + s releases source s; the two chains of atomic bitmap
/// operations run side by side. Why it is race-free: the commit does not read the source's
/// allocation bitmap (which the release overwrites) but the count the move kernel left in
/// source_moved; every other access of a thread is to s's own targets (no two sources share
/// one) or source, or an atomic bit operation on a state bitmap, and each bit changes at most
/// once (targets and sources are different blocks), so by DynaSOAr's Lemma 5 every level is
/// consistent when the kernel ends.
template <class Types>
__global__ void block_states_kernel(PassView<soa::HeapRef<Types>> view) {
  PassView<soa::HeapRef<Types>> const v = resolve(view);
  unsigned moved                        = 0;
  std::uint64_t const sources           = v.sources;
  for (std::uint64_t t = global_thread_1d(); t < 2u * sources; t += grid_stride_1d()) {
    perturb_warp(
        v.perturb_seed, t / 32u, t < sources ? PerturbPoint::commit : PerturbPoint::release);
    if (t < sources) {
      auto const s = static_cast<std::uint32_t>(t);
      moved += commit_targets(v, s, v.source_moved[s]);
    } else {
      release_source(v, static_cast<std::uint32_t>(t - sources));
    }
  }
  add_warp_total(v.moved, moved);
}

template <class Types>
__global__ void resync_defrag_kernel(soa::HeapRef<Types> heap,
                                     std::uint32_t type,
                                     std::uint32_t defrag_factor,
                                     PassCounters* counters) {
  unsigned corrected = 0;
  for (std::uint64_t b = global_thread_1d(); b < heap.num_blocks(); b += grid_stride_1d())
    corrected += resync_defrag_bit(heap, type, defrag_factor, static_cast<std::uint32_t>(b));
  add_warp_total(&counters->defrag_bits_corrected, corrected);
}

/// The device-side loop ran no pass (nothing moved): the rewrite has nothing to do and scans
/// nothing, as the host-stepped loop, which skips it.
template <class Ref>
__device__ __forceinline__ bool no_pass_ran(PassView<Ref> const& v) {
  return v.loop != nullptr && v.loop->passes == 0;
}

/// Blocks a rewrite warp takes per round (their loads in flight together).
inline constexpr std::uint32_t kRewriteBlocks = 1;

/// Sec. 3.4, once per call: rewrites the pointers to moved objects in the SOA arrays `h` of the
/// blocks of allocated[U] (U = h.holder; `holder_words` = level 0 of allocated[U]). One warp per
/// kRewriteBlocks blocks per round, over all blocks; the bitmaps are read through the read-only
/// path (nothing writes them during the rewrite).
template <class Types, core::RewriteVariant V>
__global__ void __launch_bounds__(kThreadsPerBlock, 8)
    rewrite_holders_kernel(PassView<soa::HeapRef<Types>> v,
                           HolderArrays h,
                           std::uint64_t const* holder_words) {
  if (no_pass_ran(v)) return;
  auto const& table = soa::HeapRef<Types>::layout();
  LookupFor<soa::HeapRef<Types>, V> const lookup{v};
  std::uint32_t const lane         = soa::detail::lane_id();
  std::uint64_t const warps        = grid_stride_1d() / 32u;
  std::uint64_t const M            = v.heap.num_blocks();
  std::uint64_t const* const alloc = v.heap.core().blocks().alloc_bitmap_address(0);
  RewriteCount c;
  for (std::uint64_t base = global_thread_1d() / 32u; base < M; base += warps * kRewriteBlocks) {
    perturb_warp(v.perturb_seed, base, PerturbPoint::rewrite);
    std::uint32_t blocks[kRewriteBlocks];
    std::uint64_t live[kRewriteBlocks];
#pragma unroll
    for (std::uint32_t j = 0; j < kRewriteBlocks; ++j) {
      std::uint64_t const b = base + j * warps;
      bool const holder = b < M && ((load_readonly(holder_words + b / 64u) >> (b % 64u)) & 1u) != 0;
      blocks[j]         = holder ? static_cast<std::uint32_t>(b) : kNoBlock;
      live[j]           = holder ? load_readonly(alloc + b) : 0;
    }
    c += rewrite_holder_pairs(v, table, h, blocks, live, lane, lookup);
  }
  add_warp_total(&v.counters->pointers_scanned, c.scanned);
  add_warp_total(&v.counters->pointers_rewritten, c.rewritten);
}

/// Sec. 3.4 (beyond the paper: external roots), once per call: one thread per entry.
template <class Types, core::RewriteVariant V>
__global__ void rewrite_roots_kernel(PassView<soa::HeapRef<Types>> v,
                                     std::uint64_t* roots,
                                     std::uint64_t root_count) {
  if (no_pass_ran(v)) return;
  LookupFor<soa::HeapRef<Types>, V> const lookup{v};
  RewriteCount c;
  for (std::uint64_t i = global_thread_1d(); i < root_count; i += grid_stride_1d())
    c += rewrite_root(roots, lookup, i);
  add_warp_total(&v.counters->roots_scanned, c.scanned);
  add_warp_total(&v.counters->roots_rewritten, c.rewritten);
}

/// Bins of the relocation histogram (CompactGpu Fig. 10); the last bin takes larger counts.
inline constexpr std::uint32_t kRelocationBins = 64;

/// CompactGpu Fig. 10 from the GPU: for every object of T live when the call began (block b of
/// the call-start allocated[T], `start_words`, slot set in `start_alloc[b]`), the number of
/// times the call moved it, counted into histogram[min(count, kRelocationBins - 1)]. Before the
/// rewrite (it follows the same chains).
template <class Types, core::RewriteVariant V>
__global__ void relocation_histogram_kernel(PassView<soa::HeapRef<Types>> v,
                                            std::uint64_t const* start_words,
                                            std::uint64_t const* start_alloc,
                                            unsigned long long* histogram) {
  LookupFor<soa::HeapRef<Types>, V> const lookup{v};
  for (std::uint64_t b = global_thread_1d(); b < v.heap.num_blocks(); b += grid_stride_1d()) {
    if (((start_words[b / 64u] >> (b % 64u)) & 1u) == 0) continue;
    std::uint64_t live = start_alloc[b] & core::low_bits(v.capacity);
    while (live != 0) {
      int const slot = core::find_first_set(live);
      live &= live - 1u;
      std::uint32_t const c =
          relocations_of(lookup, static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(slot));
      // order: relaxed (a histogram, read by the host after the kernel)
      atomicAdd(histogram + (c < kRelocationBins ? c : kRelocationBins - 1u), 1ull);
    }
  }
}

}  // namespace heaplab::compact::detail
