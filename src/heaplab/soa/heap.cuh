// Heap<Types>: the owning host object of a GPU object heap (cuCollections style: an owning,
// move-only host object plus a trivially copyable device ref, heap_ref.cuh). docs/allocator.md.
//
//   using Types = soa::HeapTypes<soa::Tracked, Node, Leaf>;
//   auto heap   = soa::Heap<Types>::with_bytes(std::uint64_t{1} << 30);   // 1 GiB of blocks
//   heap.parallel_new<Node>(1000, 0.5f);           // Node(i, 0.5f) for i in 0..999
//   heap.parallel_do<Node, &Node::step>(heap.ref(), dt);
//   my_kernel<<<g, b, 0, heap.stream()>>>(heap.ref());
//   heap.check_device_errors();                    // debug preset: double free / foreign pointer
//   check::HeapSnapshot s = heap.snapshot_with_payloads();
//
// Every operation is ordered on the heap's stream (HeapOptions::stream). Operations that return
// data (statistics, oom_count, snapshots, check_device_errors) synchronize that stream. Call
// them only at quiescence: no kernel using the heap may run concurrently.
// nvcc only (it launches kernels).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "heaplab/check/from_core.hpp"
#include "heaplab/check/snapshot.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/heap_config.hpp"
#include "heaplab/core/heap_protocol.hpp"
#include "heaplab/core/hex.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/cuda/pinned_buffer.hpp"
#include "heaplab/soa/detail/device_control.hpp"
#include "heaplab/soa/detail/heap_kernels.cuh"
#include "heaplab/soa/heap_ref.cuh"
#include "heaplab/soa/heap_statistics.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/host_config.hpp"
#include "heaplab/soa/nvtx_regions.hpp"
#include "heaplab/soa/payloads.hpp"
#include "heaplab/soa/set_bit_indices.cuh"
#include "heaplab/soa/storage_plan.hpp"

namespace heaplab::soa {

namespace detail {
/// A type as a value, for generic lambdas over a type list (Heap::for_concrete_under). At
/// namespace scope: nvcc's kernel stubs name the types a kernel is instantiated with, and a
/// private member type would not be accessible there.
template <class U>
struct type_tag {
  using type = U;
};
}  // namespace detail

/// A device-side check found an error: a debug check (HEAPLAB_DEBUG_CHECKS) a double free or a
/// pointer not from this heap, or the always-on check of Heap::Enumeration a change of a frozen
/// type. The message names the kind, the thread (blockIdx, threadIdx) and
/// the pointer of the first report, and the number of reports.
class heap_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct HeapOptions {
  /// CompactGpu's defragmentation factor n and stop threshold k1 (HeapConfig; 1 <= n < the
  /// smallest capacity).
  std::uint32_t defrag_factor = 1;
  std::uint32_t k1            = 0;
  /// r: active-block lookups before an allocation initializes a new block (DynaSOAr sec. 4.2).
  std::uint32_t active_lookups = core::kDefaultActiveLookups;
  /// Extra rounds before an allocation answers nullptr (HeapRef::allocate_raw).
  std::uint32_t oom_retries = kDefaultOomRetries;
  /// Rounds an allocation without a claim ticket waits for a block being opened before it opens
  /// one itself (core/heap_protocol.hpp find_or_claim_block, "Claim tickets"); 0: claim tickets off
  /// (DynaSOAr Alg. 1 as published: every miss opens a block).
  std::uint32_t claim_wait_rounds = core::kDefaultClaimWaitRounds;
  /// Frees of one warp into one block share one fetch_and (HeapRef::free_unchecked); false: one
  /// per object, as DynaSOAr Alg. 2 (for measurements).
  bool coalesce_frees = true;
  /// DynaSOAr sec. 4.2 "Allocation Request Coalescing": the lanes of a warp that allocate the
  /// same type at once elect a leader that reserves slots for all of them (HeapRef::allocate_raw).
  /// false: every lane allocates on its own (DynaSOAr-NoCoal of Fig. 12C; for measurements).
  bool coalesce_requests = true;
  /// DynaSOAr sec. 4.2 "Bitmap Rotation" (core::HeapStorage::rotate_bitmaps): searches start at
  /// a seed-derived rotation. false: every search starts at bit 0 (DynaSOAr-NoShift of
  /// Fig. 12C; for measurements).
  bool rotate_bitmaps = true;
  /// Block hints (core/heap_protocol.hpp reserve_slots "Block hints", issue 30): a warp's first
  /// reservation round tries the block that the last warp in its warp slot of the SM left not
  /// full before it looks up active[T]. On by default since its entry and active[T]'s top-level
  /// word are loaded together: on an H200 it made wa-tor 6% and game-of-life 12-16% faster, slow
  /// launches of `heaplab_bench alloc`'s size rows rarer and n = 1024 3% faster, gen-ca, the mixed
  /// row and the wave up to 4% slower (docs/results.md "Block hints on by default"). false:
  /// DynaSOAr's lookups only, and the metadata region has no entries.
  bool block_hints = true;
  /// Stream every heap operation is ordered on.
  cudaStream_t stream = nullptr;
  /// Register the block area with the NVTX memory API as a pool with one region per block
  /// (nvtx_regions.hpp), so that after nvtx_protect_free_blocks() compute-sanitizer's memcheck
  /// reports kernels touching free blocks. Off by default.
  bool nvtx_pool = false;
};

template <class Types>
class Heap {
 public:
  using types    = Types;
  using ref_type = HeapRef<Types>;

  /// A heap of num_blocks blocks of Types::block_bytes bytes each. Throws
  /// core::precondition_error for a configuration the allocator cannot run (num_blocks == 0,
  /// n out of range, a concrete type of capacity 1, r == 0) and cudart::cuda_error when the device
  /// memory cannot be allocated.
  static Heap with_blocks(std::uint32_t num_blocks, HeapOptions const& options = {}) {
    return Heap(num_blocks, options);
  }

  /// A heap whose block area takes at most `block_bytes_budget` bytes (soa::blocks_for_budget:
  /// floor(budget / block size) blocks; the metadata region comes on top, see device_bytes()).
  /// Throws core::precondition_error when not even one block fits.
  static Heap with_bytes(std::uint64_t block_bytes_budget, HeapOptions const& options = {}) {
    return Heap(blocks_for_budget<Types>(block_bytes_budget), options);
  }

  Heap(Heap&&) noexcept            = default;
  Heap& operator=(Heap&&) noexcept = default;
  Heap(Heap const&)                = delete;
  Heap& operator=(Heap const&)     = delete;
  ~Heap()                          = default;

  /// The device view, to pass by value into kernels. Valid while this heap lives.
  [[nodiscard]] ref_type ref() const { return ref_; }
  [[nodiscard]] core::HeapConfig const& config() const { return config_; }
  [[nodiscard]] StoragePlan const& plan() const { return plan_; }
  [[nodiscard]] std::uint32_t num_blocks() const { return plan_.num_blocks; }
  [[nodiscard]] cudaStream_t stream() const { return options_.stream; }
  /// Device memory owned: metadata region + block area (+ parallel_do scratch once used, + a
  /// block array per type once enumerate<T>() kept one).
  [[nodiscard]] std::uint64_t device_bytes() const {
    return plan_.metadata_bytes + plan_.block_area_bytes() + scratch_bytes_;
  }
  /// Total slots of concrete type T if every block held T objects: num_blocks * N_T.
  template <class T>
  [[nodiscard]] std::uint64_t capacity_in_objects() const {
    return std::uint64_t{plan_.num_blocks} * Types::template capacity<T>;
  }

  /// Empties the heap (every block free and invalidated, counters and error reports cleared),
  /// as after construction. Object data is left as it is.
  void reset() {
    HEAPLAB_EXPECTS(std::find(frozen_.begin(), frozen_.end(), 1) == frozen_.end(),
                    "Heap::reset: a Heap::Enumeration is still live");
    launch_initialize();
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(control_device(), 0, sizeof(detail::DeviceControl), stream()));
  }

  // ---------------------------------------------------------------- bulk operations

  /// Creates `count` objects of T; object i is constructed as T(i, args...) (DynaSOAr sec. 2.1;
  /// i is a std::uint64_t). Requests that find the heap full create nothing and are counted in
  /// oom_count(). Asynchronous.
  template <class T, class... Args>
  void parallel_new(std::uint64_t count, Args const&... args) {
    static_assert(Types::template contains<T> && !Types::template is_abstract<T>,
                  "parallel_new<T>: T must be a concrete type of this heap");
    if (count == 0) return;
    HEAPLAB_EXPECTS(!is_frozen(Types::template type_id<T>),
                    "parallel_new<T>: T has a live Heap::Enumeration (no T may be created until "
                    "its last_parallel_do or its destruction)");
    detail::parallel_new_kernel<Types, T, std::decay_t<Args>...>
        <<<grid_for(count), detail::kThreadsPerBlock, 0, stream()>>>(ref_, count, args...);
    after_launch();
  }

  /// Runs (obj->*Method)(args...) for every object of T and of T's concrete subtypes that exists
  /// when the call is made (DynaSOAr sec. 2.1, 3.7). First every such block's iteration bitmap
  /// is set to its allocation bitmap (one kernel over the block headers; for a T without
  /// subtypes over the blocks of R = allocated[T] only, by the enumeration of R itself, its
  /// visitor); then, per concrete type U (a separate kernel each, sec. 2.1 footnote 2),
  /// allocated[U] is enumerated into the sorted block array R (SetBitIndices, one tiled kernel)
  /// and N_U consecutive threads run the objects of each block whose iteration bit is set. Objects
  /// created by the methods are not visited; a method may delete its own object and objects of
  /// types that are not T or a subtype of T, and allocate any type. Asynchronous; args are copied
  /// into the kernels.
  template <class T, auto Method, class... Args>
  void parallel_do(Args const&... args) {
    static_assert(Types::template contains<T>, "parallel_do<T>: T is not in this heap's type list");
    static_assert(std::is_member_function_pointer_v<decltype(Method)>,
                  "parallel_do<T, &T::method>: the second argument must be a member function");
    ensure_scratch();
    if constexpr (concrete_types_under<T>(std::make_index_sequence<Types::num_types>{}) == 1 &&
                  !Types::template is_abstract<T>) {
      // T is its only concrete type: R, with the iteration bitmaps of R's blocks set as it is
      // enumerated, then the method (the same steps and order as below, without the pass over
      // all M headers; with the tiled enumeration two kernels in all).
      constexpr std::uint32_t t = Types::template type_id<T>;
      if (is_frozen(t)) {  // T's kept enumeration is R, iteration bitmaps set (Enumeration)
        launch_on_kept<T, Method>(args...);
        return;
      }
      std::uint32_t* const blocks = block_array_.data();
      std::uint32_t* const count  = blocks + plan_.num_blocks;
      indices_->enumerate(ref_.core().allocated(t),
                          blocks,
                          count,
                          stream(),
                          detail::CopyIterationBitmap<Types, T>{ref_});
      after_launch();
      launch_parallel_do_kernel<T, Method>(blocks, count, args...);
    } else {
      // With every concrete type under T frozen (Enumeration) their iteration bitmaps are set.
      bool all_frozen = true;
      for_concrete_under<T>([&](auto tag) {
        all_frozen = all_frozen && is_frozen(Types::template type_id<typename decltype(tag)::type>);
      });
      if (!all_frozen) {
        detail::copy_iteration_bitmaps_kernel<Types, T>
            <<<grid_for(plan_.num_blocks), detail::kThreadsPerBlock, 0, stream()>>>(ref_);
        after_launch();
      }
      run_per_subtype<T, Method>(std::make_index_sequence<Types::num_types>{}, args...);
    }
  }

  /// One enumeration of T kept for several do-alls (issue 31: an iteration's phases that
  /// neither create nor destroy T need R = allocated[T] once, not once per phase).
  /// Heap::enumerate<T>() builds R and sets the iteration bitmaps of R's blocks (the first half
  /// of parallel_do, DynaSOAr sec. 3.1, 3.7), per concrete type U of T and its subtypes, and
  /// freezes every such U: until last_parallel_do or the destructor, every parallel_do over U
  /// (through this object, or Heap::parallel_do of U or of a supertype) runs on the kept R
  /// without enumerating again.
  ///
  /// Why it is exact: R and the iteration bitmaps are exactly what a fresh parallel_do would
  /// compute as long as no object of T is created or destroyed (a T block enters allocated[T]
  /// only when a T is created in it, leaves it only when its last T is destroyed, and its
  /// allocation bitmap changes only by those two operations; nothing else writes T's iteration
  /// bitmaps). That condition is checked, always (not only in the debug preset): while T is
  /// frozen, the first creation or destruction of a T through HeapRef is recorded
  /// (DeviceControl::frozen_change) and thrown as heap_error by the next check_device_errors()
  /// (call it once per iteration where you synchronize anyway; device_errors() returns it
  /// without clearing), and parallel_new<T>, reset() and the compactor's defragment() refuse to
  /// run (core::precondition_error). The check costs one cached byte load per allocation and
  /// free (DeviceControl::frozen_types) and an atomic on the error branch only.
  ///
  ///   {
  ///     auto cells = heap.enumerate<Cell>();               // one enumeration
  ///     cells.parallel_do<&Cell::count>(w);                // no Cell created or destroyed
  ///     cells.last_parallel_do<&Cell::update>(ref, w);     // may create and destroy Cells
  ///   }
  ///   heap.check_device_errors();                          // throws if a freeze was broken
  ///
  /// At most one live Enumeration per concrete type; it refers to its heap (do not move the heap
  /// while it lives). Move-only.
  template <class T>
  class Enumeration {
   public:
    Enumeration(Enumeration&& other) noexcept : heap_(std::exchange(other.heap_, nullptr)) {}
    Enumeration& operator=(Enumeration&&)      = delete;
    Enumeration(Enumeration const&)            = delete;
    Enumeration& operator=(Enumeration const&) = delete;
    ~Enumeration() {
      if (heap_ != nullptr) heap_->template thaw_under<T>();
    }

    /// parallel_do<U, Method>(args...) on the kept R, U = T or, for a method of a subtype of T
    /// (e.g. &Male::propose on an enumeration of Agent), that subtype (do_all_target_t). Its
    /// methods must not create or destroy objects of T or of its subtypes.
    template <auto Method, class... Args>
    void parallel_do(Args const&... args) {
      static_assert(is_do_all_target_v<T, Method>,
                    "Enumeration<T>::parallel_do<&C::m>: C must be T, a base or a subtype of T");
      HEAPLAB_EXPECTS(heap_ != nullptr, "Heap::Enumeration::parallel_do after last_parallel_do");
      heap_->template parallel_do<do_all_target_t<T, Method>, Method>(args...);
    }

    /// The last do-all on the kept R (over do_all_target_t, as parallel_do): T (and its
    /// subtypes) are thawed first, so these methods
    /// may create and destroy them (new objects are not visited: their iteration bits are 0, as
    /// in every parallel_do). The Enumeration is spent afterwards. Asynchronous, like
    /// parallel_do: a broken freeze before it is reported by the heap's next
    /// check_device_errors().
    template <auto Method, class... Args>
    void last_parallel_do(Args const&... args) {
      static_assert(is_do_all_target_v<T, Method>,
                    "Enumeration<T>::last_parallel_do<&C::m>: C must be T, a base or a subtype "
                    "of T");
      HEAPLAB_EXPECTS(heap_ != nullptr,
                      "Heap::Enumeration::last_parallel_do on a spent enumeration");
      Heap* const heap = std::exchange(heap_, nullptr);
      heap->template thaw_under<T>();
      heap->template for_concrete_under<do_all_target_t<T, Method>>([&](auto tag) {
        heap->template launch_on_kept<typename decltype(tag)::type, Method>(args...);
      });
    }

    /// Ends the freeze without another do-all (as the destructor does). Asynchronous.
    void thaw() {
      if (heap_ != nullptr) std::exchange(heap_, nullptr)->template thaw_under<T>();
    }

   private:
    friend class Heap;
    explicit Enumeration(Heap* heap) : heap_(heap) {}
    Heap* heap_ = nullptr;
  };

  /// Enumerates T's objects now (per concrete type U of T and its subtypes: R = allocated[U],
  /// the iteration bitmaps of R's blocks set) and keeps the result for several do-alls over T
  /// (Enumeration); freezes every such U.
  template <class T>
  [[nodiscard]] Enumeration<T> enumerate() {
    static_assert(Types::template contains<T>, "enumerate<T>: T is not in this heap's type list");
    static_assert(concrete_types_under<T>(std::make_index_sequence<Types::num_types>{}) >= 1,
                  "enumerate<T>: neither T nor a subtype of T is concrete");
    for_concrete_under<T>([&](auto tag) {
      HEAPLAB_EXPECTS(!is_frozen(Types::template type_id<typename decltype(tag)::type>),
                      "enumerate<T>: T or a subtype already has a live Heap::Enumeration");
    });
    ensure_scratch();
    if (kept_blocks_.empty()) kept_blocks_.resize(Types::num_types);
    for_concrete_under<T>([&](auto tag) {
      using U                   = typename decltype(tag)::type;
      constexpr std::uint32_t u = Types::template type_id<U>;
      if (!kept_blocks_[u]) {
        kept_blocks_[u] = cudart::device_buffer<std::uint32_t>(std::size_t{plan_.num_blocks} + 1,
                                                               "kept enumeration block array");
        scratch_bytes_ += (std::uint64_t{plan_.num_blocks} + 1) * sizeof(std::uint32_t);
      }
      std::uint32_t* const blocks = kept_blocks_[u].data();
      indices_->enumerate(ref_.core().allocated(u),
                          blocks,
                          blocks + plan_.num_blocks,
                          stream(),
                          detail::CopyIterationBitmap<Types, U>{ref_});
      after_launch();
      set_frozen(u, true);
    });
    return Enumeration<T>(this);
  }

  /// Whether type t has a live Enumeration (host-side mirror of DeviceControl::frozen_types).
  [[nodiscard]] bool is_frozen(std::uint32_t t) const {
    return t < frozen_.size() && frozen_[t] != 0;
  }

  // ---------------------------------------------------------------- queries (synchronize)

  /// Allocation requests answered with nullptr since construction or the last reset.
  [[nodiscard]] std::uint64_t oom_count() const { return read_control().oom_count; }
  void reset_oom_count() {
    HEAPLAB_CUDA_TRY(
        cudaMemsetAsync(&control_device()->oom_count, 0, sizeof(unsigned long long), stream()));
  }

  /// Throws heap_error if a debug check (HEAPLAB_DEBUG_CHECKS) reported an error, or an object of
  /// a frozen type was created or destroyed (Enumeration, always checked), since the last call,
  /// and clears the reports. In the debug preset the heap's own operations call it after
  /// every launch; after launching your own kernels with ref(), call it yourself.
  void check_device_errors() {
    detail::DeviceControl const c = read_control();
    if (c.error_count == 0 && c.frozen_change == 0) return;
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(
        &control_device()->error_count,
        0,
        sizeof(detail::DeviceControl) - offsetof(detail::DeviceControl, error_count),
        stream()));
    HEAPLAB_CUDA_TRY(cudaStreamSynchronize(stream()));
    throw heap_error(describe_errors(c));
  }

  /// The error reports check_device_errors() would throw, without clearing them; nullopt when
  /// there are none. For checks that must not change the heap (the apps' --check).
  [[nodiscard]] std::optional<std::string> device_errors() const {
    detail::DeviceControl const c = read_control();
    if (c.error_count == 0 && c.frozen_change == 0) return std::nullopt;
    return describe_errors(c);
  }

  /// Per-type block and slot counts, fragmentation F (CompactGpu sec. 2.2), OOM count.
  [[nodiscard]] HeapStatistics statistics() const {
    constexpr std::uint32_t k = Types::num_types;
    cudart::device_buffer<unsigned long long> d_counts(2 * k + 1, "heap statistics counters");
    d_counts.set_zero_async(stream());
    detail::count_blocks_kernel<Types>
        <<<grid_for(plan_.num_blocks), detail::kThreadsPerBlock, 0, stream()>>>(ref_,
                                                                                d_counts.data());
    HEAPLAB_CHECK_LAUNCH();
    std::vector<unsigned long long> const counts =
        cudart::to_host(d_counts.data(), d_counts.size(), stream());
    std::vector<std::uint64_t> blocks(counts.begin(), counts.begin() + k);
    std::vector<std::uint64_t> used(counts.begin() + k, counts.begin() + 2 * k);
    return statistics_from_counts(config_, blocks, used, counts[2 * k], oom_count());
  }

  /// The heap's metadata as a HeapSnapshot (producer "gpu", no payloads): headers and every
  /// state bitmap copied to the host and converted with check::from_core. With `staging` the
  /// copy lands in that page-locked buffer (reused across calls, cuda/pinned_buffer.hpp) instead
  /// of a fresh host vector.
  [[nodiscard]] check::HeapSnapshot snapshot(cudart::pinned_buffer* staging = nullptr) const {
    std::unique_ptr<std::uint64_t[]> owned;
    unsigned char* const host = read_back_memory(staging, plan_.metadata_bytes, owned);
    cudart::copy_to_host(host, metadata_.data(), plan_.metadata_bytes, stream());
    core::HeapStorage const storage = plan_.storage_at(host,
                                                       config_.defrag_factor,
                                                       options_.active_lookups,
                                                       options_.claim_wait_rounds,
                                                       options_.rotate_bitmaps);
    check::HeapSnapshot snap        = check::from_core(config_, storage);
    snap.producer                   = "gpu";
    return snap;
  }

  /// snapshot() plus every live object's payload: id, cookie and pointer targets (as block,
  /// slot) in HeapConfig::pointer_slots order. Every concrete type must derive from Tracked
  /// (tracked.hpp); otherwise throws core::precondition_error naming the types. Copies to the
  /// host only the blocks add_payloads reads (those the state bitmaps say are allocated for a
  /// type): runs of them (a gap of <= 32 free blocks is copied through; more than 64 runs become
  /// one span), packed one after the other. With `staging` both copies land in that reused
  /// page-locked buffer (the GPU runner passes one per worker), else in fresh host memory.
  [[nodiscard]] check::HeapSnapshot snapshot_with_payloads(
      cudart::pinned_buffer* staging = nullptr) const {
    expect_payload_support<Types>();
    check::HeapSnapshot snap          = snapshot(staging);
    constexpr std::uint32_t kMergeGap = 32;  // blocks: a shorter gap is copied through
    constexpr std::size_t kMaxRuns    = 64;  // more runs: one span (a copy call costs ~10 us)
    struct Run {
      std::uint32_t first = 0, end = 0;  // [first, end) blocks
      std::uint64_t at = 0;              // host offset of block `first`
    };
    std::vector<Run> runs;
    for (std::uint32_t b = 0; b < plan_.num_blocks; ++b) {
      if (!check::allocated_type(snap, b)) continue;
      if (!runs.empty() && b - runs.back().end <= kMergeGap)
        runs.back().end = b + 1;
      else
        runs.push_back({b, b + 1, 0});
    }
    if (runs.size() > kMaxRuns) runs = {{runs.front().first, runs.back().end, 0}};
    std::uint64_t const bytes = plan_.block_bytes;
    std::uint64_t total       = 0;
    for (Run& r : runs) {
      r.at = total;
      total += (r.end - r.first) * bytes;
    }
    // Uninitialized: exactly the bytes copied are read. snapshot() is done with `staging`.
    std::unique_ptr<std::uint64_t[]> owned;
    unsigned char* const host = read_back_memory(staging, total, owned);
    for (Run const& r : runs)
      cudart::copy_to_host_async(
          host + r.at, blocks_.data() + r.first * bytes, (r.end - r.first) * bytes, stream());
    synchronize();
    std::size_t cursor = 0;  // add_payloads_from asks for blocks in ascending order
    add_payloads_from<Types>(snap, ref_.block_base(), [&](std::uint32_t b) {
      while (cursor < runs.size() && b >= runs[cursor].end) ++cursor;
      HEAPLAB_EXPECTS(cursor < runs.size() && b >= runs[cursor].first,
                      "snapshot_with_payloads: block " + std::to_string(b) + " was not copied");
      return static_cast<unsigned char const*>(host + runs[cursor].at +
                                               (b - runs[cursor].first) * bytes);
    });
    return snap;
  }

  void synchronize() const { HEAPLAB_CUDA_TRY(cudaStreamSynchronize(stream())); }

  // ---------------------------------------------------------------- NVTX pool (memcheck)

  /// HeapOptions::nvtx_pool: unregisters the storage of every block that is free now, so that
  /// memcheck reports a kernel launched afterwards that touches it (a use after free of every
  /// object the block held). Until nvtx_register_all_blocks(), kernels must not allocate into
  /// new blocks: initializing a free block touches it as well (allocating into blocks in use is
  /// fine). Synchronizes the stream (reads the free bitmap). Returns how many blocks are now
  /// outside the pool's regions. Throws core::precondition_error without HeapOptions::nvtx_pool.
  std::uint32_t nvtx_protect_free_blocks() {
    HEAPLAB_EXPECTS(nvtx_ != nullptr,
                    "nvtx_protect_free_blocks: the heap was made without HeapOptions::nvtx_pool");
    check::HeapSnapshot const s = snapshot();
    std::vector<bool> in_use(plan_.num_blocks);
    std::uint32_t unregistered = 0;
    for (std::uint32_t b = 0; b < plan_.num_blocks; ++b) {
      in_use[b] = !s.free_blocks.get(b);
      unregistered += in_use[b] ? 0u : 1u;
    }
    nvtx_->set_registered(in_use);
    return unregistered;
  }

  /// HeapOptions::nvtx_pool: every block is a region again (the state after construction).
  void nvtx_register_all_blocks() {
    HEAPLAB_EXPECTS(nvtx_ != nullptr,
                    "nvtx_register_all_blocks: the heap was made without HeapOptions::nvtx_pool");
    synchronize();  // kernels already launched run under the current registration
    nvtx_->set_registered(std::vector<bool>(plan_.num_blocks, true));
  }

  /// Which blocks are regions of the NVTX pool now (empty without HeapOptions::nvtx_pool).
  [[nodiscard]] std::vector<bool> nvtx_registered_blocks() const {
    return nvtx_ ? nvtx_->registered() : std::vector<bool>{};
  }

 private:
  /// `bytes` of host memory (8-byte aligned, uninitialized) for a read-back: `staging`'s when
  /// given and it can grow that far, else fresh pageable memory held by `owned`. Page-locked
  /// memory is scarcer than pageable (one buffer per GPU runner worker, up to a heap's block
  /// area each), so a failure to grow it falls back instead of failing the snapshot.
  static unsigned char* read_back_memory(cudart::pinned_buffer* staging,
                                         std::size_t bytes,
                                         std::unique_ptr<std::uint64_t[]>& owned) {
    if (staging != nullptr) {
      try {
        return staging->reserve(bytes);
      } catch (cudart::cuda_error const&) {  // cudaMallocHost failed: pageable will do
      }
    }
    owned.reset(new std::uint64_t[bytes / sizeof(std::uint64_t) + 1]);
    return reinterpret_cast<unsigned char*>(owned.get());
  }

  Heap(std::uint32_t num_blocks, HeapOptions const& options)
      : config_(heap_config<Types>(num_blocks, options.defrag_factor, options.k1)),
        options_(options) {
    check_gpu_heap_config(config_, options_.active_lookups);
    plan_ = StoragePlan::make(config_, Types::block_bytes, options_.block_hints);

    multiprocessors_ = cudart::multiprocessor_count();
    metadata_        = Bytes(plan_.metadata_bytes, "heap metadata region");
    blocks_          = Bytes(plan_.block_area_bytes(), "heap block area");
    check_block_area(static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(blocks_.data())),
                     Types::block_bytes,
                     plan_.num_blocks);

    // Everything the heap's kernels or snapshots read is written first (initcheck): the whole
    // metadata region (alignment gaps included) and the block area are zeroed, capacities copied,
    // then the initialization kernel writes the empty-heap state.
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(metadata_.data(), 0, plan_.metadata_bytes, stream()));
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(blocks_.data(), 0, plan_.block_area_bytes(), stream()));
    std::vector<std::uint32_t> capacities(config_.num_types());
    for (std::uint32_t t = 0; t < config_.num_types(); ++t) capacities[t] = config_.capacity(t);
    cudart::copy_to_device_async(
        reinterpret_cast<std::uint32_t*>(metadata_.data() + plan_.capacities),
        capacities.data(),
        capacities.size(),
        stream());
    ref_ = ref_type(plan_.storage_at(metadata_.data(),
                                     config_.defrag_factor,
                                     options_.active_lookups,
                                     options_.claim_wait_rounds,
                                     options_.rotate_bitmaps),
                    static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(blocks_.data())),
                    control_device(),
                    options_.oom_retries,
                    options_.coalesce_frees,
                    options_.coalesce_requests);
    launch_initialize();
    // The capacities live in pageable host memory: wait before it goes out of scope.
    HEAPLAB_CUDA_TRY(cudaStreamSynchronize(stream()));
    if (options_.nvtx_pool)
      nvtx_ = std::make_unique<NvtxBlockPool>(
          blocks_.data(),
          Types::block_bytes,
          plan_.num_blocks,
          "heaplab heap block area (" + std::to_string(plan_.num_blocks) + " blocks)");
  }

  /// Device bytes: the metadata region and the block area.
  using Bytes = cudart::device_buffer<unsigned char>;

  [[nodiscard]] detail::DeviceControl* control_device() const {
    return plan_.control_at(metadata_.data());
  }

  [[nodiscard]] detail::DeviceControl read_control() const {
    return cudart::value_to_host(control_device(), stream());
  }

  static std::string describe_errors(detail::DeviceControl const& c) {
    std::string msg;
    if (c.frozen_change != 0) {
      bool const created = detail::frozen_change_created(c.frozen_change);
      msg                = "heaplab heap: an object of type " +
            std::to_string(detail::frozen_change_type(c.frozen_change)) + " was " +
            (created ? "created" : "destroyed") +
            " while the type had a live Heap::Enumeration (its kept block array would " +
            (created ? "miss it" : "still hold it") +
            "; use last_parallel_do for the do-all that creates or destroys)";
      if (c.error_count == 0) return msg;
      msg += "; ";
    }
    std::string kinds;
    if ((c.error_kinds & (1u << static_cast<unsigned>(detail::HeapErrorKind::double_free))) != 0)
      kinds += "double free";
    if ((c.error_kinds & (1u << static_cast<unsigned>(detail::HeapErrorKind::foreign_pointer))) !=
        0)
      kinds += std::string(kinds.empty() ? "" : ", ") + "pointer not from this heap";
    msg += "heaplab heap: " + std::to_string(c.error_count) + " error report(s) (" + kinds + ")";
    // order: acquire [first-error-report] (kernel completion: the control block was copied to
    // the host after the stream synchronized)
    if (c.first_ready != 0) {
      detail::ErrorReport const& r = c.first;
      msg += "; first: " +
             std::string(r.kind == static_cast<std::uint32_t>(detail::HeapErrorKind::double_free)
                             ? "double free"
                             : "pointer not from this heap") +
             " of " + core::hex64(r.pointer) + " by thread (" + std::to_string(r.thread_idx[0]) +
             "," + std::to_string(r.thread_idx[1]) + "," + std::to_string(r.thread_idx[2]) +
             ") of block (" + std::to_string(r.block_idx[0]) + "," +
             std::to_string(r.block_idx[1]) + "," + std::to_string(r.block_idx[2]) + ")";
      if (r.heap_block != core::kNotFound) msg += ", heap block " + std::to_string(r.heap_block);
    }
    return msg;
  }

  void launch_initialize() {
    core::HeapStorage const storage = ref_.core().storage();
    detail::initialize_heap_kernel<Types>
        <<<grid_for(initial_state_elements(storage)), detail::kThreadsPerBlock, 0, stream()>>>(
            storage);
    HEAPLAB_CHECK_LAUNCH();
  }

  /// Sets or clears T's freeze on the host and, stream-ordered, in DeviceControl::frozen_types.
  void set_frozen(std::uint32_t t, bool on) {
    if (frozen_.empty()) frozen_.assign(Types::num_types, 0);
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(&control_device()->frozen_types[t], on ? 1 : 0, 1, stream()));
    frozen_[t] = on ? 1 : 0;
  }
  /// f(detail::type_tag<U>{}) for every concrete type U that is T or derives from T, in type-id
  /// order.
  template <class T, class F>
  void for_concrete_under(F&& f) {
    for_concrete_under_impl<T>(f, std::make_index_sequence<Types::num_types>{});
  }
  template <class T, class F, std::size_t... I>
  void for_concrete_under_impl(F& f, std::index_sequence<I...>) {
    (call_if_concrete_under<T, typename Types::template type<static_cast<std::uint32_t>(I)>>(f),
     ...);
  }
  template <class T, class U, class F>
  static void call_if_concrete_under(F& f) {
    if constexpr ((std::is_same_v<T, U> ||
                   std::is_base_of_v<T, U>)&&!Types::template is_abstract<U>)
      f(detail::type_tag<U>{});
  }
  /// Thaws every concrete type under T (Enumeration<T>).
  template <class T>
  void thaw_under() noexcept {
    for_concrete_under<T>(
        [&](auto tag) { thaw_quietly(Types::template type_id<typename decltype(tag)::type>); });
  }

  /// Enumeration's destructor and last_parallel_do: thaws without checking (never throws; a
  /// violation stays in the error reports for the next check_device_errors).
  void thaw_quietly(std::uint32_t t) noexcept {
    if (!is_frozen(t)) return;
    (void)cudaMemsetAsync(&control_device()->frozen_types[t], 0, 1, stream());
    frozen_[t] = 0;
  }

  void after_launch() {
    HEAPLAB_CHECK_LAUNCH();
#if defined(HEAPLAB_DEBUG_CHECKS)
    check_device_errors();
#endif
  }

  /// Blocks of `block_size` threads for a grid-stride loop over n items: enough to fill the GPU
  /// (8,192 threads per multiprocessor: 32 blocks of 256), fewer for small n.
  [[nodiscard]] unsigned grid_for(std::uint64_t n,
                                  unsigned block_size = detail::kThreadsPerBlock) const {
    std::uint64_t const per_sm = std::uint64_t{32} * detail::kThreadsPerBlock / block_size;
    return cudart::grid_size(n, block_size, per_sm * static_cast<std::uint64_t>(multiprocessors_));
  }

  void ensure_scratch() {
    if (block_array_) return;
    block_array_   = cudart::device_buffer<std::uint32_t>(std::size_t{plan_.num_blocks} + 1,
                                                        "parallel_do block array");
    indices_       = std::make_unique<SetBitIndices>(plan_.num_blocks);
    scratch_bytes_ = (std::uint64_t{plan_.num_blocks} + 1) * sizeof(std::uint32_t) +
                     indices_->temp_storage_bytes();
  }

  template <class T, auto Method, std::size_t... I, class... Args>
  void run_per_subtype(std::index_sequence<I...>, Args const&... args) {
    (run_one_type<T, typename Types::template type<static_cast<std::uint32_t>(I)>, Method>(args...),
     ...);
  }

  /// parallel_do for one concrete type U <: T: R = allocated[U] (enumerated now: blocks created
  /// by earlier types' kernels of this parallel_do have iteration bitmap 0, so they add no work).
  template <class T, class U, auto Method, class... Args>
  void run_one_type(Args const&... args) {
    if constexpr ((std::is_same_v<T, U> ||
                   std::is_base_of_v<T, U>)&&!Types::template is_abstract<U>) {
      constexpr std::uint32_t u = Types::template type_id<U>;
      if (is_frozen(u)) {  // U's kept enumeration is R (Enumeration)
        launch_on_kept<U, Method>(args...);
        return;
      }
      std::uint32_t* const blocks = block_array_.data();
      std::uint32_t* const count  = blocks + plan_.num_blocks;
      // R = allocated[U] by the hierarchical enumeration (DynaSOAr Alg. 5): O(blocks of U), not
      // O(M); the heap is quiescent between the kernels of one stream.
      indices_->enumerate(ref_.core().allocated(u), blocks, count, stream());
      launch_parallel_do_kernel<U, Method>(blocks, count, args...);
    }
  }
  /// The method kernel of concrete type U over R = blocks[0 .. *count).
  template <class U, auto Method, class... Args>
  void launch_parallel_do_kernel(std::uint32_t const* blocks,
                                 std::uint32_t const* count,
                                 Args const&... args) {
    std::uint64_t const max_threads = std::uint64_t{plan_.num_blocks} * Types::template capacity<U>;
    constexpr unsigned block_size   = detail::kParallelDoThreadsPerBlock;
    detail::parallel_do_kernel<Types, U, Method, std::decay_t<Args>...>
        <<<grid_for(max_threads, block_size), block_size, 0, stream()>>>(
            ref_, blocks, count, args...);
    after_launch();
  }
  /// The method kernel of U over U's kept enumeration (Enumeration).
  template <class U, auto Method, class... Args>
  void launch_on_kept(Args const&... args) {
    std::uint32_t const* const kept = kept_blocks_[Types::template type_id<U>].data();
    launch_parallel_do_kernel<U, Method>(kept, kept + plan_.num_blocks, args...);
  }
  /// Concrete types U of the list with U = T or U derived from T.
  template <class T, std::size_t... I>
  static constexpr std::uint32_t concrete_types_under(std::index_sequence<I...>) {
    return (
        0u + ... +
        (((std::is_same_v<T, typename Types::template type<static_cast<std::uint32_t>(I)>> ||
           std::is_base_of_v<
               T,
               typename Types::template type<static_cast<std::uint32_t>(I)>>)&&!Types::
              template is_abstract<typename Types::template type<static_cast<std::uint32_t>(I)>>)
             ? 1u
             : 0u));
  }

  core::HeapConfig config_;
  HeapOptions options_{};
  StoragePlan plan_{};
  int multiprocessors_ = 1;
  Bytes metadata_;
  Bytes blocks_;
  cudart::device_buffer<std::uint32_t> block_array_;  // parallel_do's R, then its length
  std::unique_ptr<SetBitIndices> indices_;
  // Enumeration: per type the kept R (its length after num_blocks entries), allocated at the
  // type's first enumerate<T>(); the host mirror of the freeze flags.
  std::vector<cudart::device_buffer<std::uint32_t>> kept_blocks_;
  std::vector<unsigned char> frozen_;
  std::uint64_t scratch_bytes_ = 0;
  ref_type ref_{};
  std::unique_ptr<NvtxBlockPool> nvtx_;  // HeapOptions::nvtx_pool
};

}  // namespace heaplab::soa
