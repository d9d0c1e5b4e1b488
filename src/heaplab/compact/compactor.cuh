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
// Everything is ordered on the heap's stream. Without an observer the passes run on the device
// (one CUDA graph, no host round trip; PassLoop::device) and defragment() synchronizes once, at
// the end; with an observer, or PassLoop::host, it synchronizes once per pass. Pointers are
// rewritten once per call, after the last pass. nvcc only.
#pragma once

#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <cub/device/device_radix_sort.cuh>

#include <chrono>
#include <cstdint>
#include <cstdlib>
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
      : heap_(&heap),
        multiprocessors_(cudart::multiprocessor_count()),
        pass_loop_(default_pass_loop()) {
    for (auto& e : events_) HEAPLAB_CUDA_TRY(cudaEventCreate(&e));
    HEAPLAB_CUDA_TRY(cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking));
    void* pinned = nullptr;
    HEAPLAB_CUDA_TRY(cudaMallocHost(&pinned, sizeof(HostReadback)));
    readback_.reset(static_cast<HostReadback*>(pinned));
  }
  Compactor(Compactor const&)            = delete;
  Compactor& operator=(Compactor const&) = delete;
  ~Compactor() {
    destroy_loop();
    if (capture_stream_ != nullptr) (void)cudaStreamDestroy(capture_stream_);
    for (auto& e : events_)
      if (e != nullptr) (void)cudaEventDestroy(e);
  }

  /// Where the passes of defragment() calls without an observer are stepped (PassLoop; default
  /// device, or what the environment variable HEAPLAB_PASS_LOOP says: `device` or `host`). A
  /// call with an observer always steps them on the host.
  void set_pass_loop(PassLoop loop) { pass_loop_ = loop; }
  [[nodiscard]] PassLoop pass_loop() const { return pass_loop_; }

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
  /// Types) in passes until at most k1 candidates remain or a pass has no source (B = 0), then
  /// rewrites the pointers once. on_pass is called after every pass at quiescence (the passes
  /// are then stepped on the host; pointers still hold their values of the call's start). Throws
  /// core::precondition_error for an unknown or abstract type, a type with a live
  /// soa::Heap::Enumeration, n outside 1 <= n < N_T, or a source cap of 0; cudart::cuda_error
  /// when a launch fails.
  DefragStats defragment(std::uint32_t type,
                         DefragOptions const& options = {},
                         PassObserver const& on_pass  = {}) {
    HEAPLAB_EXPECTS(!heap_->is_frozen(type),
                    "Compactor::defragment: the type has a live Heap::Enumeration (moving its "
                    "objects would invalidate the kept block array)");
    detail::CallPlan const plan = make_plan(type, options);
    GpuPassDriver driver(*this);
    return detail::run_defragmentation(driver, plan, on_pass);
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
    if (plan.n != plan.defrag_factor) {
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
    detail::LoopState loop{};
    unsigned long long histogram[detail::kRelocationBins]{};
  };
  /// Device-side scratch words: r (written by R's enumeration), the call's counters,
  /// count_candidates' result, the device-side loop's state and the relocation histogram.
  struct DeviceWords {
    std::uint32_t candidates = 0;
    detail::PassCounters counters{};
    unsigned long long candidate_count = 0;
    detail::LoopState loop{};
    unsigned long long histogram[detail::kRelocationBins]{};
  };
  struct PinnedFree {
    void operator()(HostReadback* p) const noexcept { (void)cudaFreeHost(p); }
  };
  using Words     = cudart::device_buffer<std::uint64_t>;  // bitmap words, records
  using BlockList = cudart::device_buffer<std::uint32_t>;  // block indices, record targets
  using Bytes     = cudart::device_buffer<std::uint8_t>;   // fill keys, sort scratch

  // Events: a host-stepped pass's scan begin/end, the starts of copy and block states and its
  // end; the device-side loop's begin and end; the rewrite's begin and end; the call's first
  // and last.
  enum Event : int {
    scan0,
    scan1,
    copy0,
    states0,
    pass1,
    loop0,
    rewrite0,
    rewrite1,
    call0,
    call1,
    kEvents
  };

  /// What a captured device-side loop depends on besides the compactor's scratch (which keeps
  /// its addresses): the graph is rebuilt when any of these changes.
  struct LoopKey {
    std::uint32_t type = 0, n = 0, defrag_factor = 0, k1 = 0, cap = 0;
    RewriteVariant variant     = RewriteVariant::forwarding;
    core::CandidateOrder order = core::CandidateOrder::block_id;
    std::uint64_t perturb_seed = 0;
    bool operator==(LoopKey const& o) const {
      return type == o.type && n == o.n && defrag_factor == o.defrag_factor && k1 == o.k1 &&
             cap == o.cap && variant == o.variant && order == o.order &&
             perturb_seed == o.perturb_seed;
    }
  };

  class GpuPassDriver {
   public:
    static constexpr bool has_device_loop = true;

    explicit GpuPassDriver(Compactor& c) : c_(c) {}

    [[nodiscard]] bool device_loop() const { return c_.pass_loop_ == PassLoop::device; }

    void begin_call(detail::CallPlan const& plan) {
      plan_ = plan;
      c_.ensure_scratch();
      HEAPLAB_CUDA_TRY(cudaMemsetAsync(c_.device_words(), 0, sizeof(DeviceWords), c_.stream()));
      c_.call_sources_.set_zero_async(c_.stream());
      if (plan.variant != RewriteVariant::forwarding) c_.ensure_records(plan.n);
      if (plan.order == core::CandidateOrder::by_fill) c_.ensure_fill_order();
      if (plan.count_relocations) c_.snapshot_start(plan.type);
      holders_ = detail::holder_arrays(ref_type::layout(), plan.type);
      roots_.clear();
      for (ExternalRoots const& r : c_.roots_)
        if (r.count > 0 && ref_type::layout().is_subtype(plan.type, r.pointee)) roots_.push_back(r);
      pass_ = 0;
      c_.record(call0);
      // The n-override rule: the call's own candidate bitmap, built once; the passes keep it.
      if (plan.n != plan.defrag_factor) c_.build_call_candidates(plan_, c_.call_candidates());
    }

    // ------------------------------------------------------------- host-stepped passes

    detail::ScanResult scan() {
      c_.record(scan0);
      c_.select_candidates(plan_, detail::LoopDecision{}, c_.stream());
      cudart::copy_to_host_async(
          &c_.readback_->candidates, &c_.device_words()->candidates, 1, c_.stream());
      c_.record(scan1);
      HEAPLAB_CUDA_TRY(cudaEventSynchronize(c_.events_[scan1]));
      return {c_.readback_->candidates, c_.elapsed(scan0, scan1)};
    }

    void copy(PassDecision const& d) {
      view_ = c_.make_view(plan_, d.sources, core::perturb_seed_for(plan_.perturb_seed, pass_));
      ++pass_;
      c_.record(copy0);
      std::uint64_t const threads = std::uint64_t{d.sources} * 32u;  // a warp per source
      detail::move_kernel<Types>
          <<<c_.grid_for(threads), detail::kThreadsPerBlock, 0, c_.stream()>>>(view_);
      c_.after_launch();
    }

    void update_block_states(PassDecision const& d) {
      c_.record(states0);
      detail::block_states_kernel<Types><<<c_.grid_for(2u * std::uint64_t{d.sources}),
                                           detail::kThreadsPerBlock,
                                           0,
                                           c_.stream()>>>(view_);
      c_.after_launch();
    }

    detail::PassReport end_pass() {
      unsigned long long* const moved = &c_.device_words()->counters.objects_moved;
      cudart::copy_to_host_async(&c_.readback_->counters.objects_moved, moved, 1, c_.stream());
      c_.record(pass1);
      HEAPLAB_CUDA_TRY(cudaEventSynchronize(c_.events_[pass1]));
      HEAPLAB_CUDA_TRY(cudaMemsetAsync(moved, 0, sizeof(unsigned long long), c_.stream()));
      detail::PassReport r;
      r.objects_moved = c_.readback_->counters.objects_moved;
      r.copy_ms       = c_.elapsed(copy0, states0);
      r.state_ms      = c_.elapsed(states0, pass1);
      return r;
    }

    // ------------------------------------------------------------- device-side passes

    /// Before begin_call (untimed by the call's events): captures the loop's graph unless the
    /// compactor holds one for this call shape. Returns the host time it took.
    double prepare_device_loop(detail::CallPlan const& plan) {
      auto const start = std::chrono::steady_clock::now();
      c_.ensure_scratch();
      if (plan.variant != RewriteVariant::forwarding) c_.ensure_records(plan.n);
      if (plan.n != plan.defrag_factor)
        (void)c_.call_candidates();  // no allocation while capturing
      if (plan.order == core::CandidateOrder::by_fill) c_.ensure_fill_order();
      c_.prepare_loop(plan);
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
          .count();
    }

    void launch_passes() {
      device_loop_ = true;
      c_.launch_loop(plan_);
    }

    // ------------------------------------------------------------- once per call

    void rewrite() {
      c_.record(rewrite0);
      detail::PassView<ref_type> v =
          c_.make_view(plan_, 0, core::perturb_seed_for(plan_.perturb_seed, detail::kMaxHops));
      // A call without a pass moved nothing: nothing to rewrite, nothing scanned. The host
      // knows it for host-stepped passes; the device-side loop's kernels check it themselves.
      if (device_loop_) v.loop = &c_.device_words()->loop;
      bool const rewrite = device_loop_ || pass_ > 0;
      with_variant([&](auto variant) {
        constexpr RewriteVariant V = decltype(variant)::value;
        if (plan_.count_relocations) c_.count_relocations<V>(v);
        if (!rewrite) return;
        for (detail::HolderArrays const& h : holders_) {
          std::uint64_t const* words = c_.heap().ref().core().allocated(h.holder).words();
          detail::rewrite_holders_kernel<Types, V>
              <<<c_.grid_for(std::uint64_t{c_.num_blocks()} * 32u / detail::kRewriteBlocks),
                 detail::kThreadsPerBlock,
                 0,
                 c_.stream()>>>(v, h, words);
          c_.after_launch();
        }
        for (ExternalRoots const& r : roots_) {
          detail::rewrite_roots_kernel<Types, V>
              <<<c_.grid_for(r.count), detail::kThreadsPerBlock, 0, c_.stream()>>>(
                  v, r.pointers, r.count);
          c_.after_launch();
        }
      });
      c_.record(rewrite1);
    }

    detail::CallReport end_call() {
      if (plan_.n != plan_.defrag_factor) {
        // The n-override rule (docs/model.md): defrag[T] follows the heap's n after the call.
        detail::resync_defrag_kernel<Types>
            <<<c_.grid_for(c_.num_blocks()), detail::kThreadsPerBlock, 0, c_.stream()>>>(
                c_.heap().ref(), plan_.type, plan_.defrag_factor, &c_.device_words()->counters);
        c_.after_launch();
      }
      c_.read_back_call();
      c_.record(call1);
      HEAPLAB_CUDA_TRY(cudaEventSynchronize(c_.events_[call1]));
      HostReadback const& back = *c_.readback_;
      detail::CallReport report;
      report.pointers_scanned      = back.counters.pointers_scanned;
      report.pointers_rewritten    = back.counters.pointers_rewritten;
      report.roots_scanned         = back.counters.roots_scanned;
      report.roots_rewritten       = back.counters.roots_rewritten;
      report.defrag_bits_corrected = back.counters.defrag_bits_corrected;
      if (plan_.count_relocations) {
        std::size_t used = detail::kRelocationBins;
        while (used > 1 && back.histogram[used - 1] == 0) --used;
        report.objects_by_relocation_count.assign(back.histogram, back.histogram + used);
      }
      report.rewrite_ms = c_.elapsed(rewrite0, rewrite1);
      report.total_ms   = c_.elapsed(call0, call1);
      report.passes_ms  = device_loop_ ? c_.elapsed(loop0, rewrite0) : c_.elapsed(call0, rewrite0);
      if (device_loop_) report.loop = c_.loop_report();
      return report;
    }

   private:
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

    Compactor& c_;
    detail::CallPlan plan_{};
    detail::PassView<ref_type> view_{};
    std::vector<detail::HolderArrays> holders_;
    std::vector<ExternalRoots> roots_;
    std::uint32_t pass_ = 0;  // host-stepped passes of this call begun so far
    bool device_loop_   = false;
  };

  /// HEAPLAB_PASS_LOOP=host|device (unset: device). tools/gpu-tier --sanitize sets `host`:
  /// under compute-sanitizer, kernels launched from the body of a conditional CUDA graph node
  /// are reported by synccheck (divergent barrier in a kernel without divergence) and racecheck
  /// aborts, while the same kernels launched directly are clean (docs/compaction.md).
  static PassLoop default_pass_loop() {
    char const* v = std::getenv("HEAPLAB_PASS_LOOP");
    if (v == nullptr || *v == '\0' || std::string(v) == "device") return PassLoop::device;
    HEAPLAB_EXPECTS(std::string(v) == "host",
                    "HEAPLAB_PASS_LOOP must be 'device' or 'host', not '" + std::string(v) + "'");
    return PassLoop::host;
  }

  detail::CallPlan make_plan(std::uint32_t type, DefragOptions const& options) const {
    return detail::make_call_plan<Types>(heap_->config(), type, options);
  }

  /// The view of a pass with `sources` sources (0 for the device-side loop and the rewrite).
  detail::PassView<ref_type> make_view(detail::CallPlan const& plan,
                                       std::uint32_t sources,
                                       std::uint64_t perturb_seed) {
    detail::PassView<ref_type> v;
    v.heap            = heap_->ref();
    v.type            = plan.type;
    v.capacity        = plan.capacity;
    v.n               = plan.n;
    v.defrag_factor   = plan.defrag_factor;
    v.sources         = sources;
    v.forwarding      = plan.variant == RewriteVariant::forwarding;
    v.R               = R();
    v.call_candidates = plan.n != plan.defrag_factor ? call_candidates() : nullptr;
    v.call_sources    = call_sources_.data();
    if (!v.forwarding) {
      v.record_source         = record_source_.data();
      v.record_targets        = record_targets_.data();
      v.record_target_bitmaps = record_target_bitmaps_.data();
    }
    v.counters     = &device_words()->counters;
    v.moved        = &device_words()->counters.objects_moved;
    v.source_moved = source_moved_.data();
    v.perturb_seed = perturb_seed;
    return v;
  }

  // ------------------------------------------------------------ the device-side loop

  /// Launches every pass of the call as one CUDA graph: a while node whose body is scan, plan
  /// (decide_pass; ends the loop), move and block states, with the loop's state in device
  /// memory (detail::LoopState). No host synchronization; end_call reads the pass records.
  void launch_loop(detail::CallPlan const& plan) {
    std::uint32_t const capacity =
        core::worst_case_passes_with_cap(num_blocks(), plan.n, plan.k1, plan.source_cap) + 1u;
    if (loop_passes_.size() < capacity)
      loop_passes_ = cudart::device_buffer<detail::LoopPass>(capacity, "CompactGpu pass records");
    detail::LoopState& init = readback_->loop;
    init                    = detail::LoopState{};
    init.capacity           = static_cast<std::uint32_t>(loop_passes_.size());
    init.records            = loop_passes_.data();
    cudart::copy_to_device_async(&device_words()->loop, &init, 1, stream());
    record(loop0);
    HEAPLAB_CUDA_TRY(cudaGraphLaunch(loop_exec_, stream()));
  }

  /// The loop's graph for this call shape: captured and instantiated unless already held (host
  /// work, once per compactor and call shape; DefragStats::setup_ms).
  void prepare_loop(detail::CallPlan const& plan) {
    LoopKey const key{plan.type,
                      plan.n,
                      plan.defrag_factor,
                      plan.k1,
                      plan.source_cap,
                      plan.variant,
                      plan.order,
                      plan.perturb_seed};
    if (loop_exec_ == nullptr || !(loop_key_ == key)) build_loop(plan, key);
  }

  /// Captures the loop's body into the while node's graph and instantiates it.
  void build_loop(detail::CallPlan const& plan, LoopKey const& key) {
    destroy_loop();
    cudaGraph_t graph = nullptr;
    HEAPLAB_CUDA_TRY(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle handle{};
    HEAPLAB_CUDA_TRY(
        cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams node{};
    node.type               = cudaGraphNodeTypeConditional;
    node.conditional.handle = handle;
    node.conditional.type   = cudaGraphCondTypeWhile;
    node.conditional.size   = 1;
    cudaGraphNode_t while_node{};
    HEAPLAB_CUDA_TRY(cudaGraphAddNode(&while_node, graph, nullptr, nullptr, 0, &node));
    cudaGraph_t body = node.conditional.phGraph_out[0];
    HEAPLAB_CUDA_TRY(cudaStreamBeginCaptureToGraph(
        capture_stream_, body, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
    capture_loop_body(plan, handle);
    HEAPLAB_CUDA_TRY(cudaStreamEndCapture(capture_stream_, &body));
    HEAPLAB_CUDA_TRY(cudaGraphInstantiate(&loop_exec_, graph, 0));
    HEAPLAB_CUDA_TRY(cudaGraphDestroy(graph));
    loop_key_ = key;
  }

  void capture_loop_body(detail::CallPlan const& plan, cudaGraphConditionalHandle handle) {
    cudaStream_t const s            = capture_stream_;
    detail::PassView<ref_type> view = make_view(plan, 0, plan.perturb_seed);
    view.loop                       = &device_words()->loop;
    detail::LoopDecision const decision{
        &device_words()->loop, plan.n, plan.k1, plan.source_cap, handle};
    select_candidates(plan, decision, s);
    // One resident wave each: the grid-stride loops cover any B', and a late pass with a few
    // sources does not pay for thousands of idle thread blocks.
    unsigned const wave =
        static_cast<unsigned>(multiprocessors_) * (2048u / detail::kThreadsPerBlock);
    detail::move_kernel<Types><<<wave, detail::kThreadsPerBlock, 0, s>>>(view);
    HEAPLAB_CHECK_LAUNCH();
    detail::block_states_kernel<Types><<<wave, detail::kThreadsPerBlock, 0, s>>>(view);
    HEAPLAB_CHECK_LAUNCH();
  }

  void destroy_loop() noexcept {
    if (loop_exec_ != nullptr) (void)cudaGraphExecDestroy(loop_exec_);
    loop_exec_ = nullptr;
  }

  /// The device-side loop's report from the read-back state (after end_call's synchronization).
  detail::LoopReport loop_report() {
    detail::LoopState const& s = readback_->loop;
    HEAPLAB_EXPECTS(s.overflow == 0 && s.stopped == 1,
                    "CompactGpu: the device-side pass loop ran out of pass records (more passes "
                    "than core::worst_case_passes_with_cap allows)");
    std::vector<detail::LoopPass> records(s.passes);
    if (s.passes > 0) cudart::copy_to_host(records.data(), loop_passes_.data(), s.passes, stream());
    detail::LoopReport r;
    r.stop              = static_cast<DefragStop>(s.stop);
    r.candidates_before = s.candidates_before;
    r.candidates_after  = s.candidates_after;
    for (std::uint32_t i = 0; i < s.passes; ++i) {
      PassStats p;
      p.index           = i;
      p.candidates      = records[i].candidates;
      p.sources_allowed = records[i].sources_allowed;
      p.sources         = records[i].sources;
      p.objects_moved   = records[i].objects_moved;
      r.passes.push_back(p);
    }
    return r;
  }

  /// Queues the copies of the call's counters, loop state and histogram to the pinned readback.
  void read_back_call() {
    cudart::copy_to_host_async(&readback_->counters, &device_words()->counters, 1, stream());
    cudart::copy_to_host_async(&readback_->loop, &device_words()->loop, 1, stream());
    cudart::copy_to_host_async(
        readback_->histogram, device_words()->histogram, detail::kRelocationBins, stream());
  }

  // ---------------------------------------------------------------- scratch and helpers

  cudaStream_t stream() const { return heap_->stream(); }
  std::uint32_t num_blocks() const { return heap_->num_blocks(); }
  std::uint32_t containers() const { return heap_->ref().core().storage().layout.containers(0); }

  void ensure_scratch() {
    if (!R_) {
      R_             = BlockList(std::size_t{num_blocks()} + 1, "CompactGpu candidate array R");
      words_         = cudart::device_buffer<DeviceWords>(1, "CompactGpu scratch words");
      call_sources_  = Words(containers(), "CompactGpu call source bitmap");
      source_moved_  = BlockList(num_blocks(), "CompactGpu objects moved per source");
      select_chunks_ = BlockList(cudart::ceil_div(containers(), detail::kSelectWordsPerChunk),
                                 "CompactGpu candidate counts per chunk");
      words_.set_zero_async(stream());
    }
  }
  /// The recompute variants' records: one per block (sec. 3.8 Fig. 7, indexed by the source's
  /// block id), 8 + 12 n bytes per block.
  void ensure_records(std::uint32_t n) {
    std::size_t const targets = std::size_t{num_blocks()} * n;
    if (record_source_.size() < num_blocks())
      record_source_ = Words(num_blocks(), "CompactGpu record source bitmaps");
    if (record_targets_.size() < targets) {
      record_targets_        = BlockList(targets, "CompactGpu record target ids");
      record_target_bitmaps_ = Words(targets, "CompactGpu record target bitmaps");
    }
  }
  /// count_relocations: allocated[T] and every allocation bitmap as the call begins.
  void snapshot_start(std::uint32_t type) {
    if (!start_words_) {
      start_words_ = Words(containers(), "CompactGpu call-start allocated[T]");
      start_alloc_ = Words(num_blocks(), "CompactGpu call-start allocation bitmaps");
    }
    auto const core = heap_->ref().core();
    cudart::copy_on_device_async(
        start_words_.data(), core.allocated(type).words(), containers(), stream());
    cudart::copy_on_device_async(
        start_alloc_.data(), core.blocks().alloc_bitmap_address(0), num_blocks(), stream());
  }
  template <RewriteVariant V>
  void count_relocations(detail::PassView<ref_type> const& v) {
    detail::relocation_histogram_kernel<Types, V>
        <<<grid_for(num_blocks()), detail::kThreadsPerBlock, 0, stream()>>>(
            v, start_words_.data(), start_alloc_.data(), device_words()->histogram);
    after_launch();
  }
  std::uint32_t* R() const { return R_.data(); }
  DeviceWords* device_words() const { return words_.data(); }
  std::uint64_t* call_candidates() {
    if (!call_candidates_)
      call_candidates_ = Words(containers(), "CompactGpu call candidate bitmap");
    return call_candidates_.data();
  }

  /// Level 0 of the bitmap the call's candidates come from: defrag[T] when the call uses the
  /// heap's n, else the call's own bitmap (build_call_candidates).
  std::uint64_t* candidate_words(detail::CallPlan const& plan) {
    if (plan.n == plan.defrag_factor) return heap_->ref().core().defrag(plan.type).words();
    return call_candidates();
  }
  /// R and r (device words) from the call's candidate bitmap, on stream s; with a decision
  /// (the device-side loop), also the pass (detail::write_candidates_kernel). In the order by
  /// fill (core::CandidateOrder::by_fill) the stream compaction writes the block-id order to
  /// by_id_, and a stable radix sort of all M entries by fill_key (fills 0..64, kFillKeyPast
  /// past r; one 7-bit digit) writes R: ties keep their block-id order, as in the model's
  /// std::stable_sort. M, not r, entries: r is on the device, and the sort's launch shape must
  /// not depend on it inside the device-side loop's graph.
  void select_candidates(detail::CallPlan const& plan,
                         detail::LoopDecision const& decision,
                         cudaStream_t s) {
    auto const chunks            = static_cast<unsigned>(select_chunks_.size());
    std::uint64_t const* words   = candidate_words(plan);
    bool const by_fill           = plan.order == core::CandidateOrder::by_fill;
    std::uint32_t* const written = by_fill ? by_id_.data() : R();
    detail::count_chunks_kernel<<<chunks, detail::kThreadsPerBlock, 0, s>>>(
        words, num_blocks(), select_chunks_.data());
    HEAPLAB_CHECK_LAUNCH();
    detail::write_candidates_kernel<<<chunks, detail::kThreadsPerBlock, 0, s>>>(
        words, num_blocks(), select_chunks_.data(), written, &device_words()->candidates, decision);
    HEAPLAB_CHECK_LAUNCH();
    if (!by_fill) return;
    detail::fill_keys_kernel<ref_type>
        <<<grid_for(num_blocks()), detail::kThreadsPerBlock, 0, s>>>(make_view(plan, 0, 0),
                                                                     by_id_.data(),
                                                                     &device_words()->candidates,
                                                                     fill_keys_.data(),
                                                                     num_blocks());
    HEAPLAB_CHECK_LAUNCH();
    std::size_t bytes = sort_scratch_.size();
    sort_by_fill(sort_scratch_.data(), bytes, s);
  }

  /// CUB's stable radix sort of the M (fill key, block) pairs into R; with scratch == nullptr it
  /// only sets `bytes` to the scratch it needs.
  void sort_by_fill(void* scratch, std::size_t& bytes, cudaStream_t s) {
    HEAPLAB_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch,
                                                     bytes,
                                                     fill_keys_.data(),
                                                     fill_keys_sorted_.data(),
                                                     by_id_.data(),
                                                     R(),
                                                     static_cast<std::int64_t>(num_blocks()),
                                                     0,
                                                     detail::kFillKeyBits,
                                                     s));
  }

  /// The buffers of the order by fill (select_candidates), allocated before a call's first
  /// scan (begin_call) and before the device-side loop's capture (no allocation while capturing).
  void ensure_fill_order() {
    if (by_id_) return;
    by_id_ = BlockList(num_blocks(), "CompactGpu candidates by block id");
    // The sort reads all M entries, those past r too (keys kFillKeyPast): never uninitialized
    // memory (compute-sanitizer's initcheck).
    by_id_.set_zero_async(stream());
    fill_keys_        = Bytes(num_blocks(), "CompactGpu candidate fill keys");
    fill_keys_sorted_ = Bytes(num_blocks(), "CompactGpu candidate fill keys, sorted");
    std::size_t bytes = 0;
    sort_by_fill(nullptr, bytes, stream());
    sort_scratch_ = Bytes(bytes == 0 ? 1 : bytes, "CompactGpu candidate sort scratch");
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
  PassLoop pass_loop_  = PassLoop::device;  // set_pass_loop
  cudaEvent_t events_[kEvents]{};
  cudaStream_t capture_stream_ = nullptr;
  cudaGraphExec_t loop_exec_   = nullptr;
  LoopKey loop_key_{};
  std::unique_ptr<HostReadback, PinnedFree> readback_;
  BlockList R_;                               // R[0 .. r), then r
  cudart::device_buffer<DeviceWords> words_;  // one DeviceWords
  cudart::device_buffer<detail::LoopPass> loop_passes_;
  Words call_sources_, call_candidates_, count_bitmap_;
  Words record_source_, record_target_bitmaps_, start_words_, start_alloc_;
  BlockList record_targets_;
  BlockList select_chunks_;  // candidates per chunk of the selection
  BlockList source_moved_;   // objects moved per source of the current pass
  // The order by fill (ensure_fill_order): R by block id, the keys, and the sort's scratch.
  BlockList by_id_;
  Bytes fill_keys_, fill_keys_sorted_, sort_scratch_;
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
