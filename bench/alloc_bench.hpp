// heaplab's GPU object allocator (src/heaplab/soa) in the allocation benchmarks of DynaSOAr
// sec. 6.4 and the issue: linux-scalability (threads x n objects of 64 bytes, then free all) and
// one wave of many threads x 1 object of 16 bytes. The CUDA device-malloc baselines are in
// baselines.hpp, the Gallatin peer baseline gallatin_bench.hpp; `heaplab_bench alloc` runs them
// in the same process.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "heaplab/core/heap_protocol.hpp"
#include "object_check.hpp"
#include "timing.hpp"

namespace heaplab::bench {

/// Threads per block of every allocation and free kernel of `heaplab_bench alloc` (heaplab's and
/// Gallatin's: the same kernel shape, one thread per `threads`, ceil(threads / 256) blocks).
inline constexpr unsigned kAllocBlockThreads = 256;

/// The soa::HeapOptions the allocation benchmarks vary (docs/allocator.md "Ablation switches"):
/// claim tickets, coalesced frees, block hints, and DynaSOAr's ablations of Fig. 12C / 13 (request
/// coalescing, bitmap rotation, r active lookups). The defaults are HeapOptions' defaults.
struct HeapKnobs {
  std::uint32_t claim_wait_rounds = core::kDefaultClaimWaitRounds;
  bool coalesce_frees             = true;
  bool coalesce_requests          = true;
  bool rotate_bitmaps             = true;
  std::uint32_t active_lookups    = core::kDefaultActiveLookups;
  bool block_hints                = true;

  /// "claim_wait_rounds 16, coalesced frees on, coalesced requests on, rotation on, r 5, block
  /// hints on".
  [[nodiscard]] std::string describe() const {
    auto const on = [](bool b) { return b ? "on" : "off"; };
    return "claim_wait_rounds " + std::to_string(claim_wait_rounds) + ", coalesced frees " +
           on(coalesce_frees) + ", coalesced requests " + on(coalesce_requests) + ", rotation " +
           on(rotate_bitmaps) + ", r " + std::to_string(active_lookups) + ", block hints " +
           on(block_hints);
  }

  /// The allocator column of CSV rows: "heaplab" with the defaults, else the paper's variant
  /// naming (Fig. 12C), e.g. "heaplab-NoCoal-NoShift-r2", "heaplab-NoTickets",
  /// "heaplab-NoCoalFree", "heaplab-NoHints".
  [[nodiscard]] std::string label() const {
    std::string l = "heaplab";
    if (!coalesce_requests) l += "-NoCoal";
    if (!rotate_bitmaps) l += "-NoShift";
    if (active_lookups != core::kDefaultActiveLookups) l += "-r" + std::to_string(active_lookups);
    if (claim_wait_rounds != core::kDefaultClaimWaitRounds)
      l += claim_wait_rounds == 0 ? "-NoTickets" : "-wait" + std::to_string(claim_wait_rounds);
    if (!coalesce_frees) l += "-NoCoalFree";
    if (!block_hints) l += "-NoHints";
    return l;
  }
};

struct HeapAllocResult {
  Sample alloc;                   // the allocation kernel
  Sample free;                    // the kernel freeing every object
  std::uint64_t failed      = 0;  // nullptr answers (Heap::oom_count) in the last timed run
  std::uint32_t blocks      = 0;  // heap size M
  std::uint32_t block_bytes = 0;
  std::uint32_t capacity    = 0;  // objects per block
  ObjectCheck check;              // the object check of the last timed allocation run
  /// Of that run's warp rounds, the share whose objects lie in one block: the free kernel frees
  /// them with one release_slots, the others lane by lane (warp_rounds.hpp).
  double one_block_rounds = 1;
};

/// linux-scalability with heaplab's heap: `threads` threads each make `per_thread` objects of a
/// 64-byte type (HeapTypes<one type of uint64_t[8]>, default-initialized: no field writes) in
/// one kernel and store the pointers; a second kernel destroys them. Each timed run starts from
/// an empty heap (Heap::reset, untimed). The heap holds every object with room to spare. After
/// the timed allocation runs, untimed, the objects of the last run are checked
/// (object_check.hpp: words_[0] and words_[7] written and read back through the field DSL,
/// encoded pointers distinct by block and slot). `knobs`: the soa::HeapOptions of the heap.
HeapAllocResult heap_linux_scalability(
    int threads, int per_thread, int warmup, int repeats, HeapKnobs const& knobs);

/// One wave: `threads` threads x 1 object of a 16-byte type, then the matching free; the same
/// check (words_[0] and words_[1]).
HeapAllocResult heap_allocation_wave(std::uint64_t threads,
                                     int warmup,
                                     int repeats,
                                     HeapKnobs const& knobs);

/// Device bytes heap_linux_scalability / heap_allocation_wave take at most: heap, pointer slots
/// and the object check.
std::uint64_t heap_linux_scalability_bytes(int threads, int per_thread);
std::uint64_t heap_allocation_wave_bytes(std::uint64_t threads);

/// The object sizes of the size rows (`heaplab_bench alloc --sizes`), in bytes: one heaplab type
/// each (HeapTypes<one type>: words_ of 8-byte words, of one 4-byte word for 4 B).
inline constexpr std::uint32_t kAllocSizes[] = {4, 16, 64, 256, 1024, 4096};

/// A size row: `threads` threads each make `per_thread` objects of the type of `bytes` (one of
/// kAllocSizes, else std::invalid_argument) in one kernel, then a second kernel destroys them;
/// the same heap sizing, timing and check as heap_linux_scalability.
HeapAllocResult heap_object_size(std::uint32_t bytes,
                                 int threads,
                                 int per_thread,
                                 int warmup,
                                 int repeats,
                                 HeapKnobs const& knobs);
std::uint64_t heap_object_size_bytes(std::uint32_t bytes, int threads, int per_thread);

/// The mixed row's sizes: three types in ONE heap; object i of thread t is of kMixedSizes[(t +
/// i) % 3], so that every warp asks for all three in every round.
inline constexpr std::uint32_t kMixedSizes[] = {16, 64, 256};

/// The mixed row: as heap_object_size, in one heap of the three types of kMixedSizes (its
/// `capacity` is the 16-byte type's: 64; the 64- and 256-byte types have 16 and 4).
HeapAllocResult heap_mixed(
    int threads, int per_thread, int warmup, int repeats, HeapKnobs const& knobs);
std::uint64_t heap_mixed_bytes(int threads, int per_thread);

}  // namespace heaplab::bench

namespace heaplab::bench {

/// DynaSOAr Fig. 14A (sec. 6.4), `heaplab_bench utilization`: linux-scalability in a heap of a
/// fixed size (1 GiB) that holds exactly threads x 1024 objects of 64 B, so that n = 1024 is 100%
/// of the heap's bytes. heaplab's heap takes `heap_bytes` of device memory in all: metadata
/// region (bitmaps, headers, DynaSOAr's "internal data structures") plus as many blocks as fit
/// beside it.
struct Fig14aHeap {
  std::uint64_t heap_bytes     = 0;  // the budget: metadata + block area <= heap_bytes
  std::uint64_t metadata_bytes = 0;
  std::uint32_t blocks         = 0;
  std::uint32_t block_bytes    = 0;
  std::uint32_t capacity       = 0;  // objects per block
  /// Objects that fit in the blocks: blocks x capacity (the most any run can hold).
  [[nodiscard]] std::uint64_t slots() const { return std::uint64_t{blocks} * capacity; }
};

/// One n of Fig. 14A's x-axis: the allocation kernel (threads x n objects), then the free kernel,
/// each timed (median of `repeats` runs from an empty heap); the paper's y-axis is their sum / n.
struct Fig14aRow {
  int n = 0;
  Sample alloc;
  Sample free;
  std::uint64_t failed = 0;  // nullptr answers of the last timed run
  ObjectCheck check;         // of the last timed run (nulls are reported, counted by `failed`)
};

/// The maximum utilization: from an empty heap, every thread allocates until its first nullptr
/// (at most max_per_thread objects); objects = the non-null answers. Checked as the rows (every
/// object written and read back, pointers distinct); then all freed and the heap must be empty.
struct Fig14aMax {
  std::uint64_t objects        = 0;
  std::uint64_t threads_capped = 0;  // threads that reached max_per_thread without a nullptr
  float alloc_ms               = 0;
  ObjectCheck check;  // over the non-null answers only: nulls == 0
  bool empty_after_free = false;
};

struct Fig14aResult {
  Fig14aHeap heap;
  std::vector<Fig14aRow> rows;
  Fig14aMax max;
};

/// The heap of Fig. 14A for `heap_bytes` (throws std::invalid_argument when no block fits), its
/// metadata planned with or without the block hints' entries (HeapKnobs::block_hints).
Fig14aHeap fig14a_heap(std::uint64_t heap_bytes, bool block_hints);

/// Runs Fig. 14A with heaplab's heap: every n of `ns` (on_row is called after each, for
/// printing as it goes), then the maximum utilization.
Fig14aResult heap_fig14a(int threads,
                         std::vector<int> const& ns,
                         std::uint64_t heap_bytes,
                         int max_per_thread,
                         int warmup,
                         int repeats,
                         HeapKnobs const& knobs,
                         std::function<void(Fig14aRow const&)> const& on_row);

}  // namespace heaplab::bench
