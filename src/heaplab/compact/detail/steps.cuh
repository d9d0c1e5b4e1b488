// The per-thread bodies of CompactGpu's kernels (docs/compaction.md). Each function is what one
// GPU thread does for one index of its kernel; the kernels (kernels.cuh) call them in grid-stride
// loops and the CPU emulation (proofs_tests/compact/support) calls them for every index in turn,
// so the algorithm the CPU tests check against the model is the one the GPU runs.
//
// Data races: the steps of one kernel write disjoint locations (an object slot, a forwarding
// pointer slot, one block's bitmap word), except the state bitmaps, which they change with the
// core's atomic bitmap operations (DynaSOAr sec. 4.1, Lemma 5: every bit is changed at most once
// per kernel, so the hierarchy is consistent when the kernel ends). A kernel never reads what
// another thread of the same kernel writes, with one exception made safe by a barrier: a
// forwarding pointer overwrites the first bytes of its source's data segment, which other threads
// may still be copying (CompactGpu sec. 3.3 footnote 6 gives the forwarding pointers a kernel of
// their own for this reason). heaplab's move kernel hands every source to the 64 threads of ONE
// thread block, which copy, meet at __syncthreads, and only then store the forwarding pointers:
// no other thread reads that source (targets are not sources, no two sources share a target).
//
// nvcc only (the heap ref is a CUDA header); host and device.
#pragma once

#include <cstdint>
#include <cstring>

#include "heaplab/compact/detail/reflection.hpp"
#include "heaplab/compact/pass_plan.hpp"
#include "heaplab/core/atomics.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/block_headers.hpp"
#include "heaplab/core/defrag_fill.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/soa/heap_types.hpp"

namespace heaplab::compact::detail {

using core::MemoryOrder;

/// The counters of a call, in device memory (zeroed when the call begins; objects_moved also
/// before every host-stepped pass).
struct PassCounters {
  unsigned long long objects_moved         = 0;
  unsigned long long pointers_scanned      = 0;
  unsigned long long pointers_rewritten    = 0;
  unsigned long long roots_scanned         = 0;
  unsigned long long roots_rewritten       = 0;
  unsigned long long defrag_bits_corrected = 0;
};

/// One pass of the device-side pass loop, written by the plan kernel (and objects_moved by the
/// commit kernel); read once by the host after the loop.
struct LoopPass {
  std::uint32_t candidates         = 0;  // r
  std::uint32_t sources_allowed    = 0;  // B
  std::uint32_t sources            = 0;  // B'
  std::uint32_t pad                = 0;
  unsigned long long objects_moved = 0;
};

/// The device-side pass loop's state (device memory). The plan kernel of each iteration decides
/// the pass from r (compact::decide_pass, the host loop's function) and publishes it in
/// `sources` and `current`; the kernels of the same iteration read them (PassView::loop).
struct LoopState {
  std::uint32_t passes            = 0;  // passes decided so far
  std::uint32_t current           = 0;  // index of the pass the kernels of this iteration run
  std::uint32_t sources           = 0;  // its B' (0 once the loop has stopped)
  std::uint32_t stop              = 0;  // core::DefragStop, when it stopped
  std::uint32_t candidates_before = 0;  // r of the first scan
  std::uint32_t candidates_after  = 0;  // r of the last scan
  std::uint32_t stopped           = 0;  // 1 once a scan ended the loop
  std::uint32_t overflow          = 0;  // 1 if the pass records ran out (a bug: see capacity)
  std::uint32_t capacity          = 0;  // entries of `records`
  LoopPass* records               = nullptr;
};

HEAPLAB_HD_INLINE void add_to_counter(unsigned long long* counter, unsigned long long value) {
#if HEAPLAB_DEVICE_CODE
  // order: relaxed (a count, read by the host after the kernel)
  if (value != 0) atomicAdd(counter, value);
#else
  *counter += value;  // the CPU emulation runs one step at a time
#endif
}

/// Plain (non-atomic) 8-byte load and store of object data; memcpy on the host (no aliasing).
HEAPLAB_HD_INLINE std::uint64_t load_word(unsigned char const* at) {
#if HEAPLAB_DEVICE_CODE
  return *reinterpret_cast<std::uint64_t const*>(at);
#else
  std::uint64_t v = 0;
  std::memcpy(&v, at, sizeof v);
  return v;
#endif
}
HEAPLAB_HD_INLINE void store_word(unsigned char* at, std::uint64_t v) {
#if HEAPLAB_DEVICE_CODE
  *reinterpret_cast<std::uint64_t*>(at) = v;
#else
  std::memcpy(at, &v, sizeof v);
#endif
}

/// A load of data no thread of the running kernel writes (bitmaps and records during the
/// rewrite): through the read-only data cache on the GPU.
template <class T>
HEAPLAB_HD_INLINE T load_readonly(T const* at) {
#if HEAPLAB_DEVICE_CODE
  return __ldg(at);
#else
  return *at;
#endif
}

/// Copies one chunk of an element: 16, 8, 4, 2 or 1 bytes (`width`), aligned to its width.
struct Chunk {
  unsigned char* to         = nullptr;
  unsigned char const* from = nullptr;
  std::uint32_t width       = 0;
};

/// The widest access (16, 8, 4, 2 or 1 bytes) that divides an element of `bytes` bytes. Every
/// element is aligned to the largest power of two dividing its size, up to 128 (soa/layout.hpp
/// alignment rule: a unit starts at a multiple of min(128, bit_ceil(N * size))).
HEAPLAB_HD_INLINE std::uint32_t chunk_width(std::uint32_t bytes) {
  return bytes % 16u == 0  ? 16u
         : bytes % 8u == 0 ? 8u
         : bytes % 4u == 0 ? 4u
         : bytes % 2u == 0 ? 2u
                           : 1u;
}

#if HEAPLAB_DEVICE_CODE
__device__ __forceinline__ ulonglong2 load_chunk(Chunk const& c) {
  ulonglong2 v{0, 0};
  switch (c.width) {
    case 16:
      v = *reinterpret_cast<ulonglong2 const*>(c.from);
      break;
    case 8:
      v.x = *reinterpret_cast<std::uint64_t const*>(c.from);
      break;
    case 4:
      v.x = *reinterpret_cast<std::uint32_t const*>(c.from);
      break;
    case 2:
      v.x = *reinterpret_cast<std::uint16_t const*>(c.from);
      break;
    default:
      v.x = *c.from;
      break;
  }
  return v;
}
__device__ __forceinline__ void store_chunk(Chunk const& c, ulonglong2 v) {
  switch (c.width) {
    case 16:
      *reinterpret_cast<ulonglong2*>(c.to) = v;
      break;
    case 8:
      *reinterpret_cast<std::uint64_t*>(c.to) = v.x;
      break;
    case 4:
      *reinterpret_cast<std::uint32_t*>(c.to) = static_cast<std::uint32_t>(v.x);
      break;
    case 2:
      *reinterpret_cast<std::uint16_t*>(c.to) = static_cast<std::uint16_t>(v.x);
      break;
    default:
      *c.to = static_cast<unsigned char>(v.x);
      break;
  }
}
#endif

/// Chunks copied together: all their loads are issued before the first store, so a thread has
/// this many independent loads in flight (the compiler may not reorder a load above a store that
/// could alias it).
inline constexpr std::uint32_t kCopyBatch = 4;

/// Copies the chunks of one batch: loads first, then stores.
HEAPLAB_HD_INLINE void copy_chunks(Chunk const* chunks, std::uint32_t count) {
#if HEAPLAB_DEVICE_CODE
  ulonglong2 v[kCopyBatch];
#pragma unroll
  for (std::uint32_t k = 0; k < kCopyBatch; ++k)
    if (k < count) v[k] = load_chunk(chunks[k]);
#pragma unroll
  for (std::uint32_t k = 0; k < kCopyBatch; ++k)
    if (k < count) store_chunk(chunks[k], v[k]);
#else
  unsigned char v[kCopyBatch][16];
  for (std::uint32_t k = 0; k < count; ++k) std::memcpy(v[k], chunks[k].from, chunks[k].width);
  for (std::uint32_t k = 0; k < count; ++k) std::memcpy(chunks[k].to, v[k], chunks[k].width);
#endif
}

/// Everything the steps of one pass read, passed to kernels by value. `Ref` is soa::HeapRef.
template <class Ref>
struct PassView {
  Ref heap{};
  std::uint32_t type          = 0;     // T
  std::uint32_t capacity      = 0;     // N_T
  std::uint32_t n             = 1;     // the call's factor
  std::uint32_t defrag_factor = 1;     // the heap's factor: defrag[T] follows it
  std::uint32_t sources       = 0;     // B' (the device-side loop: LoopState::sources, see resolve)
  bool forwarding             = true;  // the call's variant is RewriteVariant::forwarding
  /// R: this pass's candidates (device memory, r entries), ascending by block id or by fill
  /// (core::CandidateOrder).
  std::uint32_t const* R = nullptr;
  /// The call's own candidate bitmap (level 0 only) when n differs from the heap's; nullptr
  /// otherwise. Kept in step with the fills like defrag[T], with the call's n.
  std::uint64_t* call_candidates = nullptr;
  /// Level 0 of a bitmap of all blocks: bit b set iff block b was a source of an earlier pass of
  /// this call (set when the source is released). The one rewrite at the end of the call
  /// follows pointers out of exactly these blocks (CompactGpu Alg. 3 line 2, per call).
  std::uint64_t* call_sources = nullptr;
  /// Recompute variants (sec. 3.8 Fig. 7, one record per source of the call, indexed by the
  /// source's block id b): record_source[b] = the source's allocation bitmap when it was moved,
  /// record_targets[b * n + i - 1] and record_target_bitmaps[b * n + i - 1] = its target i's id
  /// and allocation bitmap before that pass. nullptr for forwarding.
  std::uint64_t* record_source         = nullptr;
  std::uint32_t* record_targets        = nullptr;
  std::uint64_t* record_target_bitmaps = nullptr;
  PassCounters* counters               = nullptr;
  /// Where this pass's moved objects are counted: &counters->objects_moved (host-stepped) or
  /// the pass's LoopPass (device-side loop, set by resolve).
  unsigned long long* moved = nullptr;
  /// Per source s of the pass: the objects it moves (written by the move kernel, read by the
  /// block-state kernel).
  std::uint32_t* source_moved = nullptr;
  /// The device-side pass loop's state, or nullptr when the host steps the passes.
  LoopState const* loop = nullptr;
  /// This pass's warp-order perturbation seed (core/perturb.hpp); 0: off. With the device-side
  /// loop: the call's seed, combined with the pass index by resolve.
  std::uint64_t perturb_seed = 0;

  HEAPLAB_HD_INLINE std::uint32_t source(std::uint32_t s) const { return R[s]; }
  HEAPLAB_HD_INLINE std::uint32_t target(std::uint32_t s, std::uint32_t i) const {
    return R[pass_block_index(s, i, sources)];
  }
  HEAPLAB_HD_INLINE unsigned char* block(std::uint32_t b) const {
    return reinterpret_cast<unsigned char*>(
        static_cast<std::uintptr_t>(heap.block_base() + std::uint64_t{b} * Ref::block_bytes()));
  }
  HEAPLAB_HD_INLINE std::uint64_t alloc_bitmap(std::uint32_t b) const {
    return heap.core().blocks().load_alloc_bitmap(b, MemoryOrder::relaxed);
  }
  /// Block b was a source of this call. Read only by the rewrite, which runs after the passes.
  HEAPLAB_HD_INLINE bool was_source(std::uint32_t b) const {
    return ((load_readonly(call_sources + b / 64u) >> (b % 64u)) & 1u) != 0;
  }
};

/// The view a kernel of the device-side pass loop works with: B' and the pass index from the
/// loop's state (the plan kernel of the same iteration wrote them; kernel boundaries order it).
template <class Ref>
HEAPLAB_HD_INLINE PassView<Ref> resolve(PassView<Ref> v) {
  if (v.loop == nullptr) return v;
  std::uint32_t const pass = v.loop->current;
  v.sources                = v.loop->sources;
  v.moved                  = &v.loop->records[pass < v.loop->capacity ? pass : 0].objects_moved;
  v.perturb_seed           = core::perturb_seed_for(v.perturb_seed, pass);
  return v;
}

/// The block id of p if p is a non-null pointer to a T object in a block that was a source of
/// this call (CompactGpu Alg. 3 line 2; heaplab rewrites once per call, so "a source" means a
/// source of any pass: PassView::call_sources). False otherwise.
template <class Ref>
HEAPLAB_HD_INLINE bool moved_from_block(PassView<Ref> const& v,
                                        std::uint64_t p,
                                        std::uint32_t& block) {
  if (p == 0 || core::pointer_type(p) != v.type) return false;
  std::uint64_t const address = core::pointer_block_address(p);
  std::uint64_t const base    = v.heap.block_base();
  if (address < base) return false;
  std::uint64_t const b = (address - base) / Ref::block_bytes();
  if (b >= v.heap.num_blocks()) return false;
  auto const b32 = static_cast<std::uint32_t>(b);
  // MUTANT rewrite_filter_off_by_one: the block after a source passes the filter too, so a
  // pointer into it is "forwarded" through its object data.
  bool const source = v.was_source(b32) || (core::mutant::rewrite_filter_off_by_one && b32 > 0 &&
                                            v.was_source(b32 - 1u));
  if (!source) return false;
  block = b32;
  return true;
}

/// One relocation of CompactGpu Alg. 1: the live object `loc` of source s, its slot there and its
/// destination (target block id and slot). `valid` is false if the source has at most `loc`
/// live objects.
struct Relocation {
  bool valid                 = false;
  std::uint32_t source_block = 0;
  std::uint32_t source_slot  = 0;
  std::uint32_t target_block = 0;
  std::uint32_t target_slot  = 0;
};

/// The n + 1 blocks of source s's record (sec. 3.2 Fig. 5): block k = R[s + k B'] (k = 0: the
/// source, k = 1..n: its targets) and their allocation bitmaps as the pass found them. The move
/// kernel loads them once per source into shared memory (one thread per k, in parallel); the CPU
/// emulation reads them through the view.
template <class Ref>
struct SourceRecordView {
  PassView<Ref> const* v = nullptr;
  std::uint32_t s        = 0;
  HEAPLAB_HD_INLINE std::uint32_t block(std::uint32_t k) const {
    return v->R[pass_block_index(s, k, v->sources)];
  }
  HEAPLAB_HD_INLINE std::uint64_t bitmap(std::uint32_t k) const {
    return v->alloc_bitmap(block(k));
  }
};

/// CompactGpu Alg. 1 for the thread with index i < 64 B' of the move kernel: live object i % 64
/// of source i / 64, from its record `rec` (block(k), bitmap(k) for k = 0..n; the pass has not
/// changed any bitmap yet). Computed once per thread; the copy and the forwarding pointer both
/// use it.
template <class Record>
HEAPLAB_HD_INLINE Relocation
relocation_in(Record const& rec, std::uint32_t n, std::uint32_t capacity, std::uint64_t i) {
  auto const loc = static_cast<std::uint32_t>(i % kThreadsPerSource);
  Relocation r;
  r.source_block           = rec.block(0);
  std::uint64_t const live = rec.bitmap(0) & core::low_bits(capacity);
  if (loc >= static_cast<std::uint32_t>(core::popcount(live))) return r;
  Destination const d = destination_of(loc, n, [&](std::uint32_t t) { return rec.bitmap(t); });
  HEAPLAB_EXPECTS(d.target != 0,
                  "CompactGpu move: a source's objects do not fit into its targets (a block of R "
                  "is not a defragmentation candidate for this n)");
  r.valid        = true;
  r.source_slot  = static_cast<std::uint32_t>(core::nth_set_bit(live, static_cast<int>(loc)));
  r.target_block = rec.block(d.target);
  r.target_slot  = d.slot;
  return r;
}

/// The live objects of the source of record `rec` (what the pass moves from it).
template <class Record>
HEAPLAB_HD_INLINE std::uint32_t live_objects(Record const& rec, std::uint32_t capacity) {
  return static_cast<std::uint32_t>(core::popcount(rec.bitmap(0) & core::low_bits(capacity)));
}

/// relocation_in with the record read through the view (i < 64 B': live object i % 64 of source
/// i / 64, CompactGpu Alg. 1's thread mapping; the GPU's move kernel maps a warp to a source).
template <class Ref>
HEAPLAB_HD_INLINE Relocation relocation_of(PassView<Ref> const& v, std::uint64_t i) {
  SourceRecordView<Ref> const rec{&v, static_cast<std::uint32_t>(i / kThreadsPerSource)};
  return relocation_in(rec, v.n, v.capacity, i);
}

/// Copies every field of the objects of the K relocations r[j] (invalid ones are skipped) from
/// their source slots to their destinations: field by field in the outer loop, so that the
/// threads of a warp (neighbouring objects of one source) copy one SOA array at a time,
/// coalesced (sec. 3.2). Inherited fields included. Each element in chunks of its widest aligned
/// access, kCopyBatch chunks at a time, loads first: with K > 1 a thread has the loads of
/// several objects in flight.
template <std::uint32_t K, class Ref, class Table>
HEAPLAB_HD_INLINE void copy_objects(PassView<Ref> const& v,
                                    Table const& table,
                                    Relocation const (&r)[K]) {
  unsigned char const* from_block[K] = {};
  unsigned char* to_block[K]         = {};
  for (std::uint32_t j = 0; j < K; ++j)
    if (r[j].valid) {
      from_block[j] = v.block(r[j].source_block);
      to_block[j]   = v.block(r[j].target_block);
    }
  Chunk batch[kCopyBatch];
  std::uint32_t count        = 0;
  std::uint32_t const fields = table.types[v.type].num_fields;
  for (std::uint32_t f_index = 0; f_index < fields; ++f_index) {
    soa::FieldLayout const& f = table.field(v.type, f_index);
    // MUTANT copy_widens_narrow_fields: every element is copied as 8 bytes (a width mix-up),
    // so a field narrower than 8 bytes also overwrites the next slots' elements and, from the
    // last slots of its array, the start of the next field's array (docs/mutants.md).
    bool const widen          = core::mutant::copy_widens_narrow_fields && f.element_bytes < 8u;
    std::uint32_t const width = widen ? 8u : chunk_width(f.element_bytes);
    std::uint32_t const bytes = widen ? 8u : f.element_bytes;
    for (std::uint32_t e = 0; e < f.elements; ++e) {
      std::uint64_t const unit = std::uint64_t{f.offset} + std::uint64_t{e} * f.stride;
      for (std::uint32_t k = 0; k < bytes; k += width)
        for (std::uint32_t j = 0; j < K; ++j) {
          if (!r[j].valid) continue;
          batch[count++] =
              Chunk{to_block[j] + unit + std::uint64_t{r[j].target_slot} * f.element_bytes + k,
                    from_block[j] + unit + std::uint64_t{r[j].source_slot} * f.element_bytes + k,
                    width};
          if (count == kCopyBatch) {
            copy_chunks(batch, count);
            count = 0;
          }
        }
    }
  }
  copy_chunks(batch, count);
}

#if HEAPLAB_DEVICE_CODE
/// Fields copied per group by copy_objects_grouped.
inline constexpr std::uint32_t kCopyGroup = 4;

/// A field that is one chunk per object (one element of at most 16 bytes): copied from
/// registers by copy_objects_grouped.
__device__ __forceinline__ bool single_chunk(soa::FieldLayout const& f) {
  // MUTANT copy_small_arrays_as_one_chunk: a field of at most 16 bytes in all is taken for one
  // chunk, so an array field (u8[3], u16[5], two pointers) is copied as its element 0 only:
  // only layouts with small array fields show it (docs/mutants.md).
  if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::copy_small_arrays_as_one_chunk)
    return f.element_bytes * f.elements <= 16u && chunk_width(f.element_bytes) == f.element_bytes;
  return f.elements == 1 && f.element_bytes <= 16u &&
         chunk_width(f.element_bytes) == f.element_bytes;
}

/// copy_objects_grouped's path (all fields, the single-chunk ones from registers).
template <std::uint32_t K, class Ref, class Table>
__device__ __forceinline__ void copy_single_chunk_fields(PassView<Ref> const& v,
                                                         Table const& table,
                                                         Relocation const (&r)[K]) {
  unsigned char const* from[K];
  unsigned char* to[K];
#pragma unroll
  for (std::uint32_t j = 0; j < K; ++j) {
    from[j] = v.block(r[j].source_block);
    to[j]   = v.block(r[j].target_block);
  }
  std::uint32_t const fields = table.types[v.type].num_fields;
  for (std::uint32_t f0 = 0; f0 < fields; f0 += kCopyGroup) {
    ulonglong2 value[kCopyGroup][K];
#pragma unroll
    for (std::uint32_t q = 0; q < kCopyGroup; ++q) {
      if (f0 + q >= fields) break;
      soa::FieldLayout const& f = table.field(v.type, f0 + q);
      if (!single_chunk(f)) continue;
#pragma unroll
      for (std::uint32_t j = 0; j < K; ++j)
        if (r[j].valid)
          value[q][j] = load_chunk(
              Chunk{nullptr,
                    from[j] + f.offset + std::uint64_t{r[j].source_slot} * f.element_bytes,
                    f.element_bytes});
    }
#pragma unroll
    for (std::uint32_t q = 0; q < kCopyGroup; ++q) {
      if (f0 + q >= fields) break;
      soa::FieldLayout const& f = table.field(v.type, f0 + q);
      // Rare: element by element, as copy_objects does. Not a call of copy_objects: that puts
      // its chunk array on this kernel's stack (80 -> 240 bytes) and made the move kernel's copy
      // phase of Table 1 0.97 -> 1.26 ms on an H100 (2026-11-24), though no field here takes it.
      if (!single_chunk(f)) {
        for (std::uint32_t e = 0; e < f.elements; ++e)
          for (std::uint32_t k = 0; k < f.element_bytes; k += chunk_width(f.element_bytes))
#pragma unroll
            for (std::uint32_t j = 0; j < K; ++j) {
              if (!r[j].valid) continue;
              std::uint64_t const unit = f.offset + std::uint64_t{e} * f.stride + k;
              Chunk const c{to[j] + unit + std::uint64_t{r[j].target_slot} * f.element_bytes,
                            from[j] + unit + std::uint64_t{r[j].source_slot} * f.element_bytes,
                            chunk_width(f.element_bytes)};
              store_chunk(c, load_chunk(c));
            }
        continue;
      }
#pragma unroll
      for (std::uint32_t j = 0; j < K; ++j)
        if (r[j].valid)
          store_chunk(Chunk{to[j] + f.offset + std::uint64_t{r[j].target_slot} * f.element_bytes,
                            nullptr,
                            f.element_bytes},
                      value[q][j]);
    }
  }
}

/// copy_objects on the GPU: the same chunks, in groups of kCopyGroup fields whose loads for
/// all K objects are issued before any store, held in registers (static indices only, so
/// nothing goes to local memory). Fields of several elements or of more than 16 bytes, and
/// every field under the copy_widens_narrow_fields mutant, take copy_objects's path.
template <std::uint32_t K, class Ref, class Table>
__device__ __forceinline__ void copy_objects_grouped(PassView<Ref> const& v,
                                                     Table const& table,
                                                     Relocation const (&r)[K]) {
  if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::copy_widens_narrow_fields) {
    copy_objects(v, table, r);
  } else {
    copy_single_chunk_fields(v, table, r);
  }
}
#endif

// ------------------------------------------------------------------------------------ scan

/// Level-0 word w of the call's candidate bitmap for factor n (used when n differs from the
/// heap's): bit b set iff b is in allocated[T] and used(b) / N_T <= n / (n + 1).
template <class Ref>
HEAPLAB_HD_INLINE std::uint64_t call_candidate_word(Ref const& heap,
                                                    std::uint32_t type,
                                                    std::uint32_t n,
                                                    std::uint32_t w) {
  std::uint32_t const cap = heap.core().capacity(type);
  std::uint64_t allocated =
      core::DeviceAtomics::load(heap.core().allocated(type).container(0, w), MemoryOrder::relaxed);
  std::uint64_t candidates = 0;
  while (allocated != 0) {
    int const bit = core::find_first_set(allocated);
    allocated &= allocated - 1u;
    std::uint32_t const b = w * 64u + static_cast<std::uint32_t>(bit);
    std::uint64_t const used =
        core::used_slots(heap.core().blocks().load_alloc_bitmap(b, MemoryOrder::relaxed), cap);
    if (core::is_defrag_fill(static_cast<std::uint32_t>(used), cap, n))
      candidates |= std::uint64_t{1} << bit;
  }
  return candidates;
}

// ------------------------------------------------------------------------ candidate order

/// The sort key past R's end (core::CandidateOrder::by_fill): above every fill, so that a stable
/// sort of all M entries leaves the r candidates first.
inline constexpr std::uint8_t kFillKeyPast = 127;
/// Bits of a fill key (fills 0..64 and kFillKeyPast).
inline constexpr int kFillKeyBits = 7;

/// core::CandidateOrder::by_fill, the key of R's entry i for the stable sort that turns the
/// block-id order into the fill order (the GPU's fill_keys_kernel for every i < M, then a CUB
/// radix sort, which is stable; the CPU emulation sorts with std::stable_sort): the set bits of
/// block R[i]'s allocation bitmap for i < r, kFillKeyPast past r. The bits at and above the
/// capacity are set in every block of T alike (DynaSOAr App. A.1), so the key orders by live
/// objects, as the model's HeapModel::fill does. The bitmaps are read relaxed: the call is
/// stop-the-world, and the previous kernel's writes are ordered by the kernel boundary.
template <class Ref>
HEAPLAB_HD_INLINE std::uint8_t fill_key(PassView<Ref> const& v,
                                        std::uint32_t const* block_order,
                                        std::uint32_t r,
                                        std::uint32_t i) {
  if (i >= r) return kFillKeyPast;
  return static_cast<std::uint8_t>(core::popcount(v.alloc_bitmap(block_order[i])));
}

// ------------------------------------------------------------------------------------ copy

/// CompactGpu Alg. 1 (move_objects): copies the object of relocation r to its destination.
template <class Ref, class Table>
HEAPLAB_HD_INLINE void move_object(PassView<Ref> const& v,
                                   Table const& table,
                                   Relocation const& r) {
  Relocation const one[1] = {r};
  copy_objects(v, table, one);
}

/// CompactGpu Alg. 2 (place_forwarding_ptrs) for relocation r: stores the new location of the
/// object into forwarding_ptr[slot] of the source block, i.e. the 8 bytes at offset 8 * slot of
/// its data segment (Listing 1: the block is a union of the data segment and N_T forwarding
/// pointers; block sizes reserve N_T * 8 bytes, soa/heap_types.hpp block_bytes). Only after every
/// object of the source has been copied (the move kernel's barrier, see the file comment).
/// Freed sources are not reused within a call, so the pointer survives until the call's rewrite.
template <class Ref>
HEAPLAB_HD_INLINE void place_forwarding_pointer(PassView<Ref> const& v, Relocation const& r) {
  if (!r.valid) return;
  store_word(v.block(r.source_block) + std::uint64_t{r.source_slot} * sizeof(std::uint64_t),
             v.heap.object_pointer(r.target_block, r.target_slot, v.type));
}

/// Recompute variants, one thread per source (sec. 3.8 Fig. 7): the source's record `rec`
/// (as relocation_in takes it), kept for the call's rewrite, indexed by the source's block id:
/// its allocation bitmap and its targets' ids and bitmaps as they are before the pass changes
/// any (the move kernel runs before the commit kernel).
template <class Ref, class Record>
HEAPLAB_HD_INLINE void store_record(PassView<Ref> const& v, Record const& rec) {
  std::uint32_t const b = rec.block(0);
  v.record_source[b]    = rec.bitmap(0);
  for (std::uint32_t i = 1; i <= v.n; ++i) {
    std::uint64_t const at      = std::uint64_t{b} * v.n + (i - 1u);
    v.record_targets[at]        = rec.block(i);
    v.record_target_bitmaps[at] = rec.bitmap(i);
  }
}

// ---------------------------------------------------------------------------- block states

/// Sec. 3.5 for the targets of source s (one thread per source; no two sources share a target):
/// target i receives the next min(left, free slots) objects in its lowest free slots (what
/// destination_of assigned), so its allocation bitmap gains those bits; it leaves active[T] if
/// it became full, defrag[T] if its fill passed defrag_factor / (defrag_factor + 1), and the call's
/// candidate bitmap if its fill passed n / (n + 1). A block only gains objects here, so no bit is
/// set. `moved` = the objects source s moved (sources_moved: the move kernel counts them, so that
/// this step need not read the source's allocation bitmap, which release_source overwrites).
/// Returns `moved`. Runs after the move kernel.
template <class Ref>
HEAPLAB_HD_INLINE std::uint32_t commit_targets(PassView<Ref> const& v,
                                               std::uint32_t s,
                                               std::uint32_t moved) {
  auto const& state       = v.heap.core();
  std::uint32_t const cap = v.capacity;
  std::uint32_t left      = moved;
  for (std::uint32_t i = 1; i <= v.n && left > 0; ++i) {
    std::uint32_t const b      = v.target(s, i);
    std::uint64_t const before = v.alloc_bitmap(b);
    std::uint32_t const free   = static_cast<std::uint32_t>(core::popcount(~before));
    std::uint32_t const take   = left < free ? left : free;
    if (take == 0) continue;
    std::uint64_t const after       = before | received_slots(before, take);
    std::uint32_t const used_before = core::used_slots(before, cap);
    std::uint32_t const used_after  = used_before + take;
    core::DeviceAtomics::store(state.blocks().alloc_bitmap_address(b), after, MemoryOrder::relaxed);
    // MUTANT full_target_stays_active: a target that the pass filled stays in active[T].
    if (after == core::kFullBitmap && !core::mutant::full_target_stays_active) {
      bool const cleared = state.active(v.type).try_clear(b, MemoryOrder::relaxed);
      HEAPLAB_EXPECTS(cleared, "CompactGpu: a target that filled up was not in active[T]");
    }
    if (core::is_defrag_fill(used_before, cap, v.defrag_factor) &&
        !core::is_defrag_fill(used_after, cap, v.defrag_factor)) {
      bool const cleared = state.defrag(v.type).try_clear(b, MemoryOrder::relaxed);
      HEAPLAB_EXPECTS(cleared, "CompactGpu: a target with low fill was not in defrag[T]");
    }
    if (v.call_candidates != nullptr && !core::is_defrag_fill(used_after, cap, v.n))
      core::DeviceAtomics::fetch_and(
          v.call_candidates + b / 64u, ~(std::uint64_t{1} << (b % 64u)), MemoryOrder::relaxed);
    left -= take;
  }
  HEAPLAB_EXPECTS(left == 0, "CompactGpu: a source's objects do not fit into its targets");
  return moved;
}

/// Sec. 3.5 for source s (one thread per source), at the end of its pass: the block becomes
/// free, as a deletion by the allocator leaves it (core::HeapProtocol::invalidate_block):
/// allocation bitmap invalidated (all ones, DynaSOAr App. A.2), out of active[T], defrag[T] and
/// allocated[T], into free with a release set (the next claimer's acquire clear_any orders our
/// writes before its use of the block). The header type stays, as after a deletion. Its bit in
/// the call's source bitmap is set: the rewrite at the end of the call follows pointers out of
/// it, through its forwarding pointers or record, which nothing overwrites during the call (free
/// blocks are neither candidates nor allocated while the call runs: stop-the-world, sec. 3).
template <class Ref>
HEAPLAB_HD_INLINE void release_source(PassView<Ref> const& v, std::uint32_t s) {
  auto const& state     = v.heap.core();
  std::uint32_t const b = v.source(s);
  core::DeviceAtomics::store(
      state.blocks().alloc_bitmap_address(b), core::kFullBitmap, MemoryOrder::relaxed);
  bool const was_active = state.active(v.type).try_clear(b, MemoryOrder::relaxed);
  HEAPLAB_EXPECTS(was_active, "CompactGpu: a source block was not in active[T]");
  if (state.defrag(v.type).get(b, MemoryOrder::relaxed))
    (void)state.defrag(v.type).try_clear(b, MemoryOrder::relaxed);
  bool const was_allocated = state.allocated(v.type).try_clear(b, MemoryOrder::relaxed);
  HEAPLAB_EXPECTS(was_allocated, "CompactGpu: a source block was not in allocated[T]");
  if (v.call_candidates != nullptr)
    core::DeviceAtomics::fetch_and(
        v.call_candidates + b / 64u, ~(std::uint64_t{1} << (b % 64u)), MemoryOrder::relaxed);
  // Relaxed: read only by the rewrite kernels, which a kernel boundary orders after this one.
  core::DeviceAtomics::fetch_or(
      v.call_sources + b / 64u, std::uint64_t{1} << (b % 64u), MemoryOrder::relaxed);
  // order: release [block-free-compact] (the pass's writes to the block before the next
  // claimer's use)
  bool const freed = state.free_blocks().try_set(b, MemoryOrder::release);
  HEAPLAB_EXPECTS(freed, "CompactGpu: a source block was already free");
}

/// The n-override rule at the end of a call (docs/model.md): block b's defrag[T] bit follows
/// its fill with the heap's factor. Returns 1 if the bit had to change (the passes keep it in
/// step, so a 1 reveals a bug), else 0.
template <class Ref>
HEAPLAB_HD_INLINE std::uint32_t resync_defrag_bit(Ref const& heap,
                                                  std::uint32_t type,
                                                  std::uint32_t defrag_factor,
                                                  std::uint32_t b) {
  auto const& state = heap.core();
  if (!state.allocated(type).get(b, MemoryOrder::relaxed)) return 0;
  std::uint32_t const cap = state.capacity(type);
  bool const want         = core::is_defrag_fill(
      core::used_slots(state.blocks().load_alloc_bitmap(b, MemoryOrder::relaxed), cap),
      cap,
      defrag_factor);
  bool const have = state.defrag(type).get(b, MemoryOrder::relaxed);
  if (want == have) return 0;
  if (want)
    (void)state.defrag(type).try_set(b, MemoryOrder::relaxed);
  else
    (void)state.defrag(type).try_clear(b, MemoryOrder::relaxed);
  return 1;
}

// --------------------------------------------------------------------------------- rewrite
//
// heaplab rewrites pointers ONCE per call, after the last pass (beyond the paper, which scans
// the heap in every pass; docs/compaction.md "One rewrite per call"). Between passes every
// pointer keeps the value it had when the call began: moved objects are copied verbatim, so their
// pointer fields are stale too. At the end, a pointer into a block that was a source of some pass
// is followed hop by hop: an object moved in pass i sits in a target of pass i, which may itself
// be a source of a later pass j > i, where the object moved again; each hop leads to a block that
// was a source of a strictly later pass or of none, so a chain has at most one hop per pass. The
// hop reads the source's forwarding pointer (Alg. 3) or recomputes Alg. 1 from the source's
// record (sec. 3.8); both survive because freed sources are not reused within the call.

/// A bound on the hops of one pointer: a chain longer than this is a cycle (corrupt state), and
/// following stops there, leaving the stale pointer for the checks to report.
inline constexpr std::uint32_t kMaxHops = 1u << 16;

/// CompactGpu Alg. 3's lookup with forwarding pointers: one hop from block b (a source of this
/// call) reads forwarding_ptr[slot] of b.
template <class Ref>
struct ForwardingLookup {
  PassView<Ref> view;
  std::uint32_t max_hops = kMaxHops;  // lowered only by the CPU emulation's planted fault

  HEAPLAB_HD_INLINE std::uint64_t hop(std::uint64_t p, std::uint32_t b) const {
    return load_word(view.block(b) + std::uint64_t{core::pointer_slot(p)} * sizeof(std::uint64_t));
  }
};

/// Sec. 3.8: one hop recomputed from the record of block b instead of read from a forwarding
/// pointer: the rank j of the object among the source's live objects, then CompactGpu Alg. 1 over
/// the targets' record bitmaps. The record is found by the block id (PassView::record_*), so
/// neither the paper's hash table nor a search is needed. Returns p if its slot was not live in
/// the source (not a pointer to an object; follow then stops).
template <class Ref>
struct RecomputeLookup {
  PassView<Ref> view;
  std::uint32_t max_hops = kMaxHops;

  HEAPLAB_HD_INLINE std::uint64_t hop(std::uint64_t p, std::uint32_t b) const {
    std::uint32_t const slot   = core::pointer_slot(p);
    std::uint64_t const source = load_readonly(view.record_source + b);
    if (((source >> slot) & 1u) == 0) return p;
    auto const j = static_cast<std::uint32_t>(core::popcount(source & core::low_bits(slot)));
    std::uint64_t const first = std::uint64_t{b} * view.n;
    Destination const d       = destination_of(j, view.n, [&](std::uint32_t i) {
      return load_readonly(view.record_target_bitmaps + first + (i - 1u));
    });
    HEAPLAB_EXPECTS(d.target != 0, "CompactGpu rewrite: a record's objects do not fit");
    return view.heap.object_pointer(
        load_readonly(view.record_targets + first + (d.target - 1u)), d.slot, view.type);
  }
};

/// CompactGpu Alg. 3 for the whole call: p's final value, following it while it points into a
/// source of this call; `hops` (in: the hops already taken to reach p; out: plus the moves
/// followed here) counts the object's relocations in this call.
template <class Lookup>
HEAPLAB_HD_INLINE std::uint64_t follow(Lookup const& lookup, std::uint64_t p, std::uint32_t& hops) {
  std::uint32_t b = 0;
  while (hops < lookup.max_hops && moved_from_block(lookup.view, p, b)) {
    std::uint64_t const next = lookup.hop(p, b);
    if (next == p) break;
    p = next;
    ++hops;
  }
  return p;
}

/// What one rewrite step examined: live pointer slots read, and those it changed.
struct RewriteCount {
  std::uint32_t scanned   = 0;
  std::uint32_t rewritten = 0;
  HEAPLAB_HD_INLINE RewriteCount& operator+=(RewriteCount const& o) {
    scanned += o.scanned;
    rewritten += o.rewritten;
    return *this;
  }
};

/// Rewrites the live pointer slot at `at` holding p (1 scanned; 1 rewritten if it changed).
template <class Lookup>
HEAPLAB_HD_INLINE RewriteCount rewrite_slot(Lookup const& lookup,
                                            unsigned char* at,
                                            std::uint64_t p) {
  std::uint32_t hops    = 0;
  std::uint64_t const q = follow(lookup, p, hops);
  if (q == p) return {1, 0};
  store_word(at, q);
  return {1, 1};
}

/// A pointer's first hop (the load issued without waiting for the others of its batch):
/// `moved` tells whether p points into a source of the call.
template <class Lookup>
HEAPLAB_HD_INLINE std::uint64_t first_hop(Lookup const& lookup, std::uint64_t p, bool& moved) {
  std::uint32_t b = 0;
  moved           = moved_from_block(lookup.view, p, b);
  return moved ? lookup.hop(p, b) : p;
}

/// Marks an unused entry of a rewrite batch.
inline constexpr std::uint32_t kNoBlock = ~std::uint32_t{0};

/// Sec. 3.4, once per call, for holder type U = h.holder and K blocks of allocated[U]
/// (`blocks[j]`, kNoBlock for none; `live[j]` its allocation bitmap): pointer slots 2 lane and
/// 2 lane + 1 (lane < 32) of every SOA array of h in each block. On the GPU one warp takes K
/// blocks, so its lanes read an array's 64 slots (512 bytes) as 32 consecutive 16-byte loads,
/// and every lane has the loads of K blocks, then their first hops, in flight together; the CPU
/// emulation runs every lane in turn with K = 1. Free slots are skipped. The sources are no
/// longer in allocated[T] when the rewrite runs; the targets are, so the moved objects' own
/// (stale) pointers are rewritten like every other.
template <std::uint32_t K, class Ref, class Table, class Lookup>
HEAPLAB_HD_INLINE RewriteCount rewrite_holder_pairs(PassView<Ref> const& v,
                                                    Table const& table,
                                                    HolderArrays const& h,
                                                    std::uint32_t const (&blocks)[K],
                                                    std::uint64_t const (&live)[K],
                                                    std::uint32_t lane,
                                                    Lookup const& lookup) {
  RewriteCount c;
  std::uint32_t const s0 = 2u * lane;
  if (s0 >= h.capacity) return c;
  bool const pair = s0 + 1u < h.capacity;
  for (std::uint32_t a = 0; a < h.count; ++a) {
    unsigned char* at[K]     = {};
    std::uint64_t p[K][2]    = {};
    std::uint64_t hop[K][2]  = {};
    bool used[K][2]          = {};
    bool moved[K][2]         = {};
    std::uint64_t const unit = table.incoming[h.first + a].offset;
    for (std::uint32_t j = 0; j < K; ++j) {
      if (blocks[j] == kNoBlock) continue;
      // An array of N >= 2 pointers starts at a multiple of 16 (soa/layout.hpp), so slots s0
      // and s0 + 1 (s0 even) form one aligned 16-byte pair.
      at[j] = v.block(blocks[j]) + unit + std::uint64_t{s0} * sizeof(std::uint64_t);
#if HEAPLAB_DEVICE_CODE
      if (pair) {
        ulonglong2 const both = *reinterpret_cast<ulonglong2 const*>(at[j]);
        p[j][0]               = both.x;
        p[j][1]               = both.y;
      } else {
        p[j][0] = load_word(at[j]);
      }
#else
      p[j][0] = load_word(at[j]);
      if (pair) p[j][1] = load_word(at[j] + sizeof(std::uint64_t));
#endif
      used[j][0] = ((live[j] >> s0) & 1u) != 0;
      used[j][1] = pair && ((live[j] >> (s0 + 1u)) & 1u) != 0;
    }
    for (std::uint32_t j = 0; j < K; ++j)
      for (std::uint32_t e = 0; e < 2; ++e)
        if (used[j][e]) hop[j][e] = first_hop(lookup, p[j][e], moved[j][e]);
    for (std::uint32_t j = 0; j < K; ++j)
      for (std::uint32_t e = 0; e < 2; ++e) {
        if (!used[j][e]) continue;
        ++c.scanned;
        if (!moved[j][e]) continue;
        std::uint32_t hops    = 1;  // first_hop took one
        std::uint64_t const q = follow(lookup, hop[j][e], hops);
        if (q == p[j][e]) continue;
        store_word(at[j] + e * sizeof(std::uint64_t), q);
        ++c.rewritten;
      }
  }
  return c;
}

/// External roots (beyond the paper): entry i of a root array whose declared pointee is a
/// supertype of T.
template <class Lookup>
HEAPLAB_HD_INLINE RewriteCount rewrite_root(std::uint64_t* roots,
                                            Lookup const& lookup,
                                            std::uint64_t i) {
  return rewrite_slot(lookup, reinterpret_cast<unsigned char*>(roots + i), roots[i]);
}

/// CompactGpu Fig. 10, for an object of T that was live at the call's start at (b, slot): how
/// many times the call moved it (the hops from its original location).
template <class Lookup>
HEAPLAB_HD_INLINE std::uint32_t relocations_of(Lookup const& lookup,
                                               std::uint32_t b,
                                               std::uint32_t slot) {
  std::uint32_t hops = 0;
  (void)follow(lookup, lookup.view.heap.object_pointer(b, slot, lookup.view.type), hops);
  return hops;
}

}  // namespace heaplab::compact::detail
