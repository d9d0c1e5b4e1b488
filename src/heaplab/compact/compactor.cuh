// CompactGpu on heaplab's GPU heap (CompactGpu sec. 3; docs/compaction.md).
//
//   auto heap = soa::Heap<Types>::with_blocks(1 << 16, {.defrag_factor = 2});
//   compact::Compactor<Types> compactor(heap);               // owns scratch, remembers roots
//   compactor.add_roots({d_roots, count, Types::type_id<Node>});
//   compact::DefragStats s = compactor.defragment(Types::type_id<Fish>);      // heap's n, k1
//   s = compactor.defragment(fish, {.n = 3, .k1 = 16, .variant =
//   RewriteVariant::recompute_shared});
//
//   // one-shot, by runtime type id (e.g. a schedule executor):
//   compact::defragment(heap, type, options, roots, on_pass);
//
//   // policies (sec. 3.7): once per application iteration
//   compact::AutoDefrag<Types> autodefrag(compactor, fish, DefragPolicy::every(50));
//   if (auto stats = autodefrag.end_of_iteration()) ...
//
// Stop-the-world (sec. 3): call only at quiescence, when no kernel that uses the heap runs.
// Everything is ordered on the heap's stream; defragment() synchronizes it once per pass (the
// host needs the number of candidates). nvcc only.
#pragma once

#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "heaplab/compact/detail/call_plan.hpp"
#include "heaplab/compact/detail/engine.hpp"
#include "heaplab/compact/detail/kernels.cuh"
#include "heaplab/compact/detail/reflection.hpp"
#include "heaplab/compact/detail/steps.cuh"
#include "heaplab/compact/options.hpp"
#include "heaplab/compact/pass_plan.hpp"
#include "heaplab/compact/policy.hpp"
#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/perturb.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/soa/set_bit_indices.cuh"

namespace heaplab::compact {

template <class Types>
class Compactor {
 public:
  using heap_type = soa::Heap<Types>;
  using ref_type  = soa::HeapRef<Types>;

  /// A compactor for `heap` (which must outlive it). Scratch memory is allocated on first use
  /// and kept: R and per-holder block lists (4 bytes per heap block each), the call's candidate
  /// bitmap and the records of the recompute variants.
  explicit Compactor(heap_type& heap)
      : heap_(&heap), multiprocessors_(cudart::multiprocessor_count()) {
    for (auto& e : events_) HEAPLAB_CUDA_TRY(cudaEventCreate(&e));
    void* pinned = nullptr;
    HEAPLAB_CUDA_TRY(cudaMallocHost(&pinned, sizeof(HostReadback)));
    readback_.reset(static_cast<HostReadback*>(pinned));
  }
  Compactor(Compactor const&)            = delete;
  Compactor& operator=(Compactor const&) = delete;
  ~Compactor() {
    for (auto& e : events_)
      if (e != nullptr) (void)cudaEventDestroy(e);
  }

  [[nodiscard]] heap_type& heap() const { return *heap_; }

  /// Registers an array of external roots (ExternalRoots); every later defragment() keeps its
  /// entries pointing at their objects. Returns a handle for remove_roots. Throws
  /// core::precondition_error for an unknown pointee type or a null array with count > 0.
  std::size_t add_roots(ExternalRoots roots) {
    HEAPLAB_EXPECTS(roots.pointee < Types::num_types,
                    "Compactor::add_roots: pointee type id " + std::to_string(roots.pointee) +
                        " is not a type of the heap");
    HEAPLAB_EXPECTS(roots.count == 0 || roots.pointers != nullptr,
                    "Compactor::add_roots: a root array of " + std::to_string(roots.count) +
                        " entries needs a device pointer");
    roots_.push_back(roots);
    return roots_.size() - 1;
  }
  /// Unregisters the roots of a handle from add_roots (later handles stay valid).
  void remove_roots(std::size_t handle) {
    HEAPLAB_EXPECTS(handle < roots_.size(), "Compactor::remove_roots: unknown handle");
    roots_[handle] = ExternalRoots{};
  }

  /// CompactGpu sec. 3: defragments the objects of concrete type `type` (a runtime type id of
  /// Types) in passes until at most k1 candidates remain or a pass has no source (B = 0).
  /// on_pass is called after every pass at quiescence. Throws core::precondition_error for an
  /// unknown or abstract type, n outside 1 <= n < N_T, or a source cap of 0; cudart::cuda_error
  /// when a launch fails.
  DefragStats defragment(std::uint32_t type,
                         DefragOptions const& options = {},
                         PassObserver const& on_pass  = {}) {
    detail::CallPlan const plan = make_plan(type, options);
    GpuBackend backend(*this);
    return detail::run_defragmentation(backend, plan, on_pass);
  }

  template <class T>
  DefragStats defragment(DefragOptions const& options = {}, PassObserver const& on_pass = {}) {
    static_assert(Types::template contains<T> && !Types::template is_abstract<T>,
                  "defragment<T>: T must be a concrete type of this heap");
    return defragment(Types::template type_id<T>, options, on_pass);
  }

  /// The defragmentation candidates of `type` for factor n (default: the heap's): the blocks of
  /// `type` with fill <= n/(n+1), i.e. the r the next pass would see. Synchronizes. May be
  /// called from a pass observer (it uses scratch of its own; for an n other than the heap's it
  /// rebuilds the call's candidate bitmap from the fills, which is what the passes maintain).
  std::uint32_t count_candidates(std::uint32_t type, std::optional<std::uint32_t> n = {}) {
    DefragOptions options;
    options.n                   = n;
    detail::CallPlan const plan = make_plan(type, options);
    ensure_scratch();
    std::uint64_t const* words = heap_->ref().core().defrag(plan.type).words();
    if (plan.n != plan.heap_n) {
      if (!count_bitmap_) count_bitmap_ = Words(containers(), "policy candidate bitmap");
      build_call_candidates(plan, count_bitmap_.data());
      words = count_bitmap_.data();
    }
    std::uint32_t const count     = containers();
    unsigned long long* const out = &device_words()->candidate_count;
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(out, 0, sizeof(unsigned long long), stream()));
    detail::count_bits_kernel<<<grid_for(count), detail::kThreadsPerBlock, 0, stream()>>>(
        words, count, out);
    HEAPLAB_CHECK_LAUNCH();
    cudart::copy_to_host(&readback_->candidate_count, out, 1, stream());
    return static_cast<std::uint32_t>(readback_->candidate_count);
  }

 private:
  /// What the host reads back (pinned memory).
  struct HostReadback {
    std::uint32_t candidates = 0;
    detail::PassCounters counters{};
    unsigned long long candidate_count = 0;
  };
  /// Device-side scratch words: r (written by R's enumeration), the holder block counts, the
  /// pass counters, and count_candidates' result.
  struct DeviceWords {
    std::uint32_t candidates = 0;
    std::uint32_t holder_count[Types::num_types]{};
    detail::PassCounters counters{};
    unsigned long long candidate_count = 0;
  };
  struct PinnedFree {
    void operator()(HostReadback* p) const noexcept { (void)cudaFreeHost(p); }
  };
  using Words     = cudart::device_buffer<std::uint64_t>;  // bitmap words, records
  using BlockList = cudart::device_buffer<std::uint32_t>;  // block indices

  // Events of one pass: scan begin/end, then the starts of copy, commit, rewrite, release, and
  // the end of the pass; plus the call's first and last.
  enum Event : int {
    scan0,
    scan1,
    copy0,
    commit0,
    rewrite0,
    release0,
    pass1,
    call0,
    call1,
    kEvents
  };

  class GpuBackend {
   public:
    explicit GpuBackend(Compactor& c) : c_(c) {}

    void begin_call(detail::CallPlan const& plan) {
      plan_ = plan;
      c_.ensure_scratch();
      HEAPLAB_CUDA_TRY(cudaMemsetAsync(c_.device_words(), 0, sizeof(DeviceWords), c_.stream()));
      c_.record(call0);
      holders_      = detail::holder_arrays(ref_type::layout(), plan.type);
      holder_ready_ = std::vector<bool>(Types::num_types, false);
      roots_.clear();
      for (ExternalRoots const& r : c_.roots_)
        if (r.count > 0 && ref_type::layout().is_subtype(plan.type, r.pointee)) roots_.push_back(r);
      if (plan.variant != RewriteVariant::forwarding) c_.ensure_records();
      build_candidates_ = plan.n != plan.heap_n;
      pass_             = 0;
    }

    detail::ScanResult scan() {
      c_.record(scan0);
      if (build_candidates_) {  // once per call: the passes keep the call's bitmap up to date
        c_.build_call_candidates(plan_, c_.call_candidates());
        build_candidates_ = false;
      }
      std::uint64_t const* words = c_.candidate_words(plan_);
      c_.indices_->enumerate(
          words, c_.num_blocks(), c_.R(), &c_.device_words()->candidates, c_.stream());
      cudart::copy_to_host_async(
          &c_.readback_->candidates, &c_.device_words()->candidates, 1, c_.stream());
      c_.record(scan1);
      HEAPLAB_CUDA_TRY(cudaEventSynchronize(c_.events_[scan1]));
      return {c_.readback_->candidates, c_.elapsed(scan0, scan1)};
    }

    void copy(PassDecision const& d) {
      view_ = make_view(d);
      ++pass_;
      c_.record(copy0);
      if (plan_.variant != RewriteVariant::forwarding) {
        std::uint64_t const entries = std::uint64_t{plan_.n + 1u} * d.sources;
        detail::record_bitmaps_kernel<Types>
            <<<c_.grid_for(entries), detail::kThreadsPerBlock, 0, c_.stream()>>>(view_);
        c_.after_launch();
      }
      std::uint64_t const threads = std::uint64_t{d.sources} * kThreadsPerSource;
      detail::move_kernel<Types>
          <<<c_.grid_for(threads), detail::kThreadsPerBlock, 0, c_.stream()>>>(view_);
      c_.after_launch();
      if (plan_.variant == RewriteVariant::forwarding) {
        detail::forwarding_kernel<Types>
            <<<c_.grid_for(threads), detail::kThreadsPerBlock, 0, c_.stream()>>>(view_);
        c_.after_launch();
      }
    }

    void commit_targets(PassDecision const& d) {
      c_.record(commit0);
      detail::commit_targets_kernel<Types>
          <<<c_.grid_for(d.sources), detail::kThreadsPerBlock, 0, c_.stream()>>>(view_);
      c_.after_launch();
    }

    void rewrite(PassDecision const& d) {
      c_.record(rewrite0);
      for (detail::HolderArrays const& h : holders_) {
        // allocated[U] is fixed during the call for U != T; allocated[T] loses the sources at
        // the end of every pass.
        if (!holder_ready_[h.holder] || h.holder == plan_.type) {
          c_.indices_->enumerate(c_.heap().ref().core().allocated(h.holder).words(),
                                 c_.num_blocks(),
                                 c_.holder_blocks(h.holder),
                                 &c_.device_words()->holder_count[h.holder],
                                 c_.stream());
          holder_ready_[h.holder] = true;
        }
        std::uint64_t const most = std::uint64_t{c_.num_blocks()} * h.count * kThreadsPerSource;
        std::uint32_t const* const blocks = c_.holder_blocks(h.holder);
        std::uint32_t const* const count  = &c_.device_words()->holder_count[h.holder];
        with_variant([&](auto variant) {
          constexpr RewriteVariant V = decltype(variant)::value;
          launch_rewrite<V>(d, most, &detail::rewrite_holders_kernel<Types, V>, h, blocks, count);
        });
      }
      for (ExternalRoots const& r : roots_) {
        with_variant([&](auto variant) {
          constexpr RewriteVariant V = decltype(variant)::value;
          launch_rewrite<V>(
              d, r.count, &detail::rewrite_roots_kernel<Types, V>, r.pointers, r.count);
        });
      }
    }

    void release_sources(PassDecision const& d) {
      c_.record(release0);
      detail::release_sources_kernel<Types>
          <<<c_.grid_for(d.sources), detail::kThreadsPerBlock, 0, c_.stream()>>>(view_);
      c_.after_launch();
    }

    detail::PassReport end_pass() {
      cudart::copy_to_host_async(
          &c_.readback_->counters, &c_.device_words()->counters, 1, c_.stream());
      c_.record(pass1);
      HEAPLAB_CUDA_TRY(cudaEventSynchronize(c_.events_[pass1]));
      detail::PassCounters const k = c_.readback_->counters;
      HEAPLAB_CUDA_TRY(cudaMemsetAsync(
          &c_.device_words()->counters, 0, sizeof(detail::PassCounters), c_.stream()));
      detail::PassReport r;
      r.objects_moved      = k.objects_moved;
      r.pointers_scanned   = k.pointers_scanned;
      r.pointers_rewritten = k.pointers_rewritten;
      r.roots_scanned      = k.roots_scanned;
      r.roots_rewritten    = k.roots_rewritten;
      r.copy_ms            = c_.elapsed(copy0, commit0);
      r.rewrite_ms         = c_.elapsed(rewrite0, release0);
      r.state_ms           = c_.elapsed(commit0, rewrite0) + c_.elapsed(release0, pass1);
      return r;
    }

    detail::CallReport end_call() {
      detail::CallReport report;
      if (plan_.n != plan_.heap_n) {
        // The n-override rule (docs/model.md): defrag[T] follows the heap's n after the call.
        ref_type const heap = c_.heap().ref();
        detail::resync_defrag_kernel<Types>
            <<<c_.grid_for(c_.num_blocks()), detail::kThreadsPerBlock, 0, c_.stream()>>>(
                heap, plan_.type, plan_.heap_n, &c_.device_words()->counters);
        c_.after_launch();
      }
      cudart::copy_to_host_async(
          &c_.readback_->counters, &c_.device_words()->counters, 1, c_.stream());
      c_.record(call1);
      HEAPLAB_CUDA_TRY(cudaEventSynchronize(c_.events_[call1]));
      report.defrag_bits_corrected = c_.readback_->counters.defrag_bits_corrected;
      report.total_ms              = c_.elapsed(call0, call1);
      return report;
    }

   private:
    detail::PassView<ref_type> make_view(PassDecision const& d) const {
      detail::PassView<ref_type> v;
      v.heap            = c_.heap().ref();
      v.type            = plan_.type;
      v.capacity        = plan_.capacity;
      v.n               = plan_.n;
      v.heap_n          = plan_.heap_n;
      v.sources         = d.sources;
      v.R               = c_.R();
      v.candidates      = c_.candidate_words(plan_);
      v.call_candidates = plan_.n != plan_.heap_n ? c_.call_candidates() : nullptr;
      v.record_bitmaps =
          plan_.variant != RewriteVariant::forwarding ? c_.record_bitmaps() : nullptr;
      v.counters     = &c_.device_words()->counters;
      v.perturb_seed = core::perturb_seed_for(plan_.perturb_seed, pass_);
      return v;
    }

    /// Calls f(std::integral_constant<RewriteVariant, V>{}) for the call's variant V.
    template <class F>
    void with_variant(F&& f) const {
      switch (plan_.variant) {
        case RewriteVariant::forwarding:
          f(std::integral_constant<RewriteVariant, RewriteVariant::forwarding>{});
          break;
        case RewriteVariant::recompute_global:
          f(std::integral_constant<RewriteVariant, RewriteVariant::recompute_global>{});
          break;
        case RewriteVariant::recompute_shared:
          f(std::integral_constant<RewriteVariant, RewriteVariant::recompute_shared>{});
          break;
      }
    }

    /// Launches a rewrite kernel of variant V (rewrite_holders_kernel or rewrite_roots_kernel)
    /// for at most most_threads threads, with V's shared memory, as kernel(view, args...).
    template <RewriteVariant V, class... Params, class... Args>
    void launch_rewrite(PassDecision const& d,
                        std::uint64_t most_threads,
                        void (*kernel)(detail::PassView<ref_type>, Params...),
                        Args const&... args) {
      std::uint32_t const shared = detail::rewrite_shared_bytes(V, plan_.n, d.sources);
      HEAPLAB_EXPECTS(shared <= core::kDefragRecordBudgetBytes,
                      "CompactGpu: the records of a pass exceed the shared-memory budget");
      unsigned grid = c_.grid_for(most_threads);
      if (shared > 0) {
        // Every thread block loads the records once: keep the grid to what is resident.
        unsigned const resident =
            cudart::resident_blocks(kernel, detail::kThreadsPerBlock, shared, c_.multiprocessors_);
        grid = grid < resident ? grid : resident;
      }
      kernel<<<grid, detail::kThreadsPerBlock, shared, c_.stream()>>>(view_, args...);
      c_.after_launch();
    }

    Compactor& c_;
    detail::CallPlan plan_{};
    detail::PassView<ref_type> view_{};
    std::vector<detail::HolderArrays> holders_;
    std::vector<bool> holder_ready_;
    std::vector<ExternalRoots> roots_;
    bool build_candidates_ = false;
    std::uint32_t pass_    = 0;  // passes of this call begun so far
  };

  detail::CallPlan make_plan(std::uint32_t type, DefragOptions const& options) const {
    return detail::make_call_plan<Types>(heap_->config(), type, options);
  }

  // ---------------------------------------------------------------- scratch and helpers

  cudaStream_t stream() const { return heap_->stream(); }
  std::uint32_t num_blocks() const { return heap_->num_blocks(); }
  std::uint32_t containers() const { return heap_->ref().core().storage().layout.containers(0); }

  void ensure_scratch() {
    if (!R_) {
      R_       = BlockList(std::size_t{num_blocks()} + 1, "CompactGpu candidate array R");
      words_   = cudart::device_buffer<DeviceWords>(1, "CompactGpu scratch words");
      indices_ = std::make_unique<soa::SetBitIndices>(num_blocks());
      words_.set_zero_async(stream());
    }
  }
  void ensure_records() {
    if (!records_) records_ = Words(num_blocks(), "CompactGpu record bitmaps");
  }
  std::uint32_t* R() const { return R_.data(); }
  DeviceWords* device_words() const { return words_.data(); }
  std::uint64_t* record_bitmaps() const { return records_.data(); }
  std::uint64_t* call_candidates() {
    if (!call_candidates_)
      call_candidates_ = Words(containers(), "CompactGpu call candidate bitmap");
    return call_candidates_.data();
  }
  std::uint32_t* holder_blocks(std::uint32_t u) {
    if (holder_blocks_.size() != Types::num_types) holder_blocks_.resize(Types::num_types);
    if (!holder_blocks_[u]) holder_blocks_[u] = BlockList(num_blocks(), "CompactGpu holder blocks");
    return holder_blocks_[u].data();
  }

  /// Level 0 of the bitmap the call's candidates come from: defrag[T] when the call uses the
  /// heap's n, else the call's own bitmap (build_call_candidates).
  std::uint64_t* candidate_words(detail::CallPlan const& plan) {
    if (plan.n == plan.heap_n) return heap_->ref().core().defrag(plan.type).words();
    return call_candidates();
  }
  /// The call's own candidate bitmap from the block fills with the call's n (docs/model.md
  /// "The n-override rule"): before the first scan of a call whose n differs from the heap's.
  void build_call_candidates(detail::CallPlan const& plan, std::uint64_t* out) {
    detail::call_candidates_kernel<Types>
        <<<grid_for(containers()), detail::kThreadsPerBlock, 0, stream()>>>(
            heap_->ref(), plan.type, plan.n, out, containers());
    after_launch();
  }

  void record(Event e) { HEAPLAB_CUDA_TRY(cudaEventRecord(events_[e], stream())); }
  double elapsed(Event from, Event to) const {
    float ms = 0;
    HEAPLAB_CUDA_TRY(cudaEventElapsedTime(&ms, events_[from], events_[to]));
    return ms;
  }
  void after_launch() {
    HEAPLAB_CHECK_LAUNCH();
#if defined(HEAPLAB_DEBUG_CHECKS)
    heap_->check_device_errors();
#endif
  }

  /// Blocks for a grid-stride loop over n items: at most 32 blocks of 256 per multiprocessor.
  unsigned grid_for(std::uint64_t n) const {
    return cudart::grid_size(n,
                             detail::kThreadsPerBlock,
                             std::uint64_t{32} * static_cast<std::uint64_t>(multiprocessors_));
  }

  heap_type* heap_;
  int multiprocessors_ = 1;
  cudaEvent_t events_[kEvents]{};
  std::unique_ptr<HostReadback, PinnedFree> readback_;
  BlockList R_;                               // R[0 .. r), then r
  cudart::device_buffer<DeviceWords> words_;  // one DeviceWords
  Words records_, call_candidates_, count_bitmap_;
  std::vector<BlockList> holder_blocks_;
  std::unique_ptr<soa::SetBitIndices> indices_;
  std::vector<ExternalRoots> roots_;
};

/// One-shot defragmentation by runtime type id (the entry point of the schedule executor):
/// a Compactor with `roots` registered, one defragment() call. See Compactor::defragment.
template <class Types>
DefragStats defragment(soa::Heap<Types>& heap,
                       std::uint32_t type,
                       DefragOptions const& options            = {},
                       std::vector<ExternalRoots> const& roots = {},
                       PassObserver const& on_pass             = {}) {
  Compactor<Types> compactor(heap);
  for (ExternalRoots const& r : roots) compactor.add_roots(r);
  return compactor.defragment(type, options, on_pass);
}

/// Sec. 3.7: a policy wired to a compactor. An application loop calls end_of_iteration() once
/// per iteration (between kernels); it defragments `type` when the policy says so.
template <class Types>
class AutoDefrag {
 public:
  AutoDefrag(Compactor<Types>& compactor,
             std::uint32_t type,
             DefragPolicy policy,
             DefragOptions options = {})
      : compactor_(&compactor), type_(type), clock_(policy), options_(options) {}

  /// The stats of the defragmentation this iteration triggered, or nullopt.
  std::optional<DefragStats> end_of_iteration() {
    std::uint32_t const n = options_.n.value_or(compactor_->heap().config().defrag_factor);
    bool const due        = clock_.end_iteration(n, compactor_->heap().num_blocks(), [&] {
      return std::uint64_t{compactor_->count_candidates(type_, options_.n)};
    });
    if (!due) return std::nullopt;
    return compactor_->defragment(type_, options_);
  }

  [[nodiscard]] PolicyClock const& clock() const { return clock_; }

 private:
  Compactor<Types>* compactor_;
  std::uint32_t type_;
  PolicyClock clock_;
  DefragOptions options_;
};

}  // namespace heaplab::compact
