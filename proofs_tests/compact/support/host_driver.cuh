// The CPU emulation of CompactGpu (label cpu; nvcc builds it because the heap ref is a CUDA
// header): a heap in host memory laid out exactly like the GPU heap (the portable core's
// HostHeap for the metadata, an aligned buffer for the blocks), and a pass driver for the pass loop
// (compact/detail/engine.hpp) that runs the very per-thread steps of the GPU kernels
// (compact/detail/steps.cuh) for every thread index in turn, shared memory included. One
// sequential order of each kernel's threads is one of the executions the GPU may produce (the
// steps of one kernel never read what another thread of the same kernel writes, steps.cuh), so
// this checks the algorithm, the pass geometry and the state updates against the model on
// machines without a GPU; the GPU tier checks the kernels and CUB on top.
#pragma once

#include "heaplab/soa/heap_ref.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compact_test_types.hpp"
#include "heaplab/check/from_core.hpp"
#include "heaplab/compact/detail/call_plan.hpp"
#include "heaplab/compact/detail/engine.hpp"
#include "heaplab/compact/detail/reflection.hpp"
#include "heaplab/compact/detail/steps.cuh"
#include "heaplab/compact/options.hpp"
#include "heaplab/core/host_heap.hpp"
#include "heaplab/soa/host_config.hpp"
#include "heaplab/soa/payloads.hpp"
#include "pattern.cuh"
#include "population.hpp"

namespace compact_test {

namespace compact = heaplab::compact;
namespace cdetail = heaplab::compact::detail;

/// A GPU-layout heap in host memory. Pointers encode host addresses (below 2^50 on every
/// supported host, checked).
template <class Types>
class HostObjectHeap {
 public:
  using Ref = soa::HeapRef<Types>;

  HostObjectHeap(std::uint32_t num_blocks, std::uint32_t n, std::uint32_t k1)
      : core_(soa::heap_config<Types>(num_blocks, n, k1)) {
    std::size_t const bytes = std::size_t{num_blocks} * Types::block_bytes;
    blocks_.reset(static_cast<unsigned char*>(std::aligned_alloc(128, bytes)));
    HEAPLAB_EXPECTS(blocks_ != nullptr, "HostObjectHeap: out of host memory");
    std::memset(blocks_.get(), 0, bytes);
    auto const base = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(blocks_.get()));
    HEAPLAB_EXPECTS(core::heap_fits_encoding(base, Types::block_bytes, num_blocks),
                    "HostObjectHeap: the host buffer does not fit the object pointer encoding");
    ref_ = Ref(core_.storage(), base, &control_, soa::kDefaultOomRetries);
  }

  [[nodiscard]] Ref const& ref() const { return ref_; }
  [[nodiscard]] core::HeapConfig const& config() const { return core_.config(); }

  /// A new object (core allocation, then id, cookie, null pointers and the field pattern);
  /// 0 when the heap is full.
  std::uint64_t allocate(std::uint32_t type, std::uint64_t id) {
    core::SlotRef const s = ref_.core().allocate(type, id * 0x9E3779B97F4A7C15ull);
    if (s.is_null()) return 0;
    std::uint64_t const p = ref_.object_pointer(s.block, s.slot, type);
    ref_.initialize_tracked(p, id);
    write_pattern(ref_, p, id);
    return p;
  }
  void destroy(std::uint64_t p) {
    core::SlotRef const at = ref_.locate(p);
    ref_.core().deallocate(core::pointer_type(p), at);
  }

  [[nodiscard]] check::HeapSnapshot snapshot() {
    check::HeapSnapshot s = check::from_core(config(), core_.storage());
    s.producer            = "cpu-emulation";
    soa::add_payloads<Types>(s, ref_.block_base(), blocks_.get());
    return s;
  }

 private:
  struct Free {
    void operator()(unsigned char* p) const noexcept { std::free(p); }
  };
  core::HostHeap core_;
  std::unique_ptr<unsigned char, Free> blocks_;
  soa::detail::DeviceControl control_{};
  Ref ref_{};
};

/// Planted bugs, for the tests that show the differential catches a wrong implementation.
enum class Fault : std::uint8_t {
  none,
  skip_roots,           // external roots are not rewritten (the paper's behaviour)
  skip_forwarding,      // Alg. 2 is left out: Alg. 3 reads object data as forwarding pointers
  skip_self_holder,     // T's own blocks are not scanned: moved objects keep stale pointers
  single_hop,           // the rewrite follows one move only: objects moved twice are left behind
  unstable_fill_order,  // the order by fill breaks ties by descending block id (an unstable sort)
};

/// The pass loop's pass driver that runs the kernels' steps sequentially (see the file comment).
template <class Types>
class HostPassDriver {
 public:
  using Ref                             = soa::HeapRef<Types>;
  static constexpr bool has_device_loop = false;

  HostPassDriver(Ref ref, std::vector<compact::ExternalRoots> roots, Fault fault = Fault::none)
      : ref_(ref), all_roots_(std::move(roots)), fault_(fault) {}

  void begin_call(cdetail::CallPlan const& plan) {
    plan_  = plan;
    M_     = ref_.num_blocks();
    words_ = ref_.core().storage().layout.containers(0);
    R_.assign(std::size_t{M_} + 1, 0);
    call_.assign(words_, 0);
    sources_.assign(words_, 0);
    record_source_.assign(M_, 0);
    record_targets_.assign(std::size_t{M_} * plan.n, 0);
    record_target_bitmaps_.assign(std::size_t{M_} * plan.n, 0);
    counters_ = {};
    passes_   = 0;
    holders_  = cdetail::holder_arrays(Ref::layout(), plan.type);
    roots_.clear();
    for (auto const& r : all_roots_)
      if (r.count > 0 && Ref::layout().is_subtype(plan.type, r.pointee)) roots_.push_back(r);
    if (plan.n != plan.defrag_factor)
      for (std::uint32_t w = 0; w < words_; ++w)
        call_[w] = cdetail::call_candidate_word(ref_, plan_.type, plan_.n, w);
    if (plan.count_relocations) {
      start_words_.assign(ref_.core().allocated(plan.type).words(),
                          ref_.core().allocated(plan.type).words() + words_);
      start_alloc_.resize(M_);
      for (std::uint32_t b = 0; b < M_; ++b) start_alloc_[b] = view_of(0).alloc_bitmap(b);
    }
  }

  cdetail::ScanResult scan() {
    std::uint64_t const* words = candidate_words();
    std::uint32_t r            = 0;
    for (std::uint32_t b = 0; b < M_; ++b)
      if ((words[b / 64] >> (b % 64)) & 1u) R_[r++] = b;
    if (plan_.order == core::CandidateOrder::by_fill) order_by_fill(r);
    return {r, 0.0};
  }

  /// The GPU's order by fill (Compactor::select_candidates): fill_keys_kernel's step for every
  /// entry, then the result of its stable radix sort (std::stable_sort by key).
  void order_by_fill(std::uint32_t r) {
    std::vector<std::uint32_t> const by_id(R_.begin(), R_.begin() + M_);
    std::vector<std::uint8_t> keys(M_);
    for (std::uint32_t i = 0; i < M_; ++i)
      keys[i] = cdetail::fill_key(view_of(0), by_id.data(), r, i);
    std::vector<std::uint32_t> at(M_);
    for (std::uint32_t i = 0; i < M_; ++i) at[i] = i;
    std::stable_sort(at.begin(), at.end(), [&](std::uint32_t x, std::uint32_t y) {
      if (fault_ == Fault::unstable_fill_order && keys[x] == keys[y]) return x > y;
      return keys[x] < keys[y];
    });
    for (std::uint32_t i = 0; i < M_; ++i) R_[i] = by_id[at[i]];
  }

  /// The move kernel: every thread's copy, then (the barrier) every forwarding pointer or record.
  void copy(compact::PassDecision const& d) {
    view_                       = view_of(d.sources);
    auto const& table           = Ref::layout();
    std::uint64_t const threads = std::uint64_t{d.sources} * compact::kThreadsPerSource;
    std::vector<cdetail::Relocation> relocations(threads);
    for (std::uint64_t i = 0; i < threads; ++i) {
      relocations[i] = cdetail::relocation_of(view_, i);
      cdetail::move_object(view_, table, relocations[i]);
    }
    source_moved_.resize(d.sources);
    for (std::uint32_t s = 0; s < d.sources; ++s)
      source_moved_[s] =
          cdetail::live_objects(cdetail::SourceRecordView<Ref>{&view_, s}, plan_.capacity);
    if (!view_.forwarding) {
      for (std::uint32_t s = 0; s < d.sources; ++s)
        cdetail::store_record(view_, cdetail::SourceRecordView<Ref>{&view_, s});
    } else if (fault_ != Fault::skip_forwarding) {
      for (auto const& r : relocations) cdetail::place_forwarding_pointer(view_, r);
    }
  }

  /// The block-state kernel: one of the orders it may run in (every commit, then every
  /// release; on the GPU they run side by side, commits counting from source_moved).
  void update_block_states(compact::PassDecision const& d) {
    for (std::uint32_t s = 0; s < d.sources; ++s)
      counters_.objects_moved += cdetail::commit_targets(view_, s, source_moved_[s]);
    for (std::uint32_t s = 0; s < d.sources; ++s) cdetail::release_source(view_, s);
    ++passes_;
  }

  cdetail::PassReport end_pass() {
    cdetail::PassReport r;
    r.objects_moved         = counters_.objects_moved;
    counters_.objects_moved = 0;
    return r;
  }

  void rewrite() {
    cdetail::PassView<Ref> const v = view_of(0);
    std::uint32_t const hops       = fault_ == Fault::single_hop ? 1u : cdetail::kMaxHops;
    if (v.forwarding)
      rewrite_with(cdetail::ForwardingLookup<Ref>{v, hops});
    else
      rewrite_with(cdetail::RecomputeLookup<Ref>{v, hops});
  }

  cdetail::CallReport end_call() {
    cdetail::CallReport r;
    if (plan_.n != plan_.defrag_factor)
      for (std::uint32_t b = 0; b < M_; ++b)
        r.defrag_bits_corrected +=
            cdetail::resync_defrag_bit(ref_, plan_.type, plan_.defrag_factor, b);
    r.pointers_scanned            = counters_.pointers_scanned;
    r.pointers_rewritten          = counters_.pointers_rewritten;
    r.roots_scanned               = counters_.roots_scanned;
    r.roots_rewritten             = counters_.roots_rewritten;
    r.objects_by_relocation_count = histogram_;
    return r;
  }

 private:
  /// A call without a pass moved nothing and scans nothing (as on the GPU).
  template <class Lookup>
  void rewrite_with(Lookup const& lookup) {
    if (plan_.count_relocations) count_relocations(lookup);
    if (passes_ == 0) return;
    auto const& table = Ref::layout();
    for (cdetail::HolderArrays const& h : holders_) {
      if (fault_ == Fault::skip_self_holder && h.holder == plan_.type) continue;
      auto const allocated = ref_.core().allocated(h.holder);
      for (std::uint32_t b = 0; b < M_; ++b) {
        if (!allocated.get(b)) continue;
        std::uint32_t const blocks[1] = {b};
        std::uint64_t const live[1]   = {lookup.view.alloc_bitmap(b)};
        for (std::uint32_t lane = 0; lane < 32; ++lane) {
          cdetail::RewriteCount const c =
              cdetail::rewrite_holder_pairs(lookup.view, table, h, blocks, live, lane, lookup);
          counters_.pointers_scanned += c.scanned;
          counters_.pointers_rewritten += c.rewritten;
        }
      }
    }
    if (fault_ == Fault::skip_roots) return;
    for (compact::ExternalRoots const& r : roots_)
      for (std::uint64_t i = 0; i < r.count; ++i) {
        cdetail::RewriteCount const c = cdetail::rewrite_root(r.pointers, lookup, i);
        counters_.roots_scanned += c.scanned;
        counters_.roots_rewritten += c.rewritten;
      }
  }

  /// What relocation_histogram_kernel counts, one object at a time.
  template <class Lookup>
  void count_relocations(Lookup const& lookup) {
    histogram_.clear();
    for (std::uint32_t b = 0; b < M_; ++b) {
      if (((start_words_[b / 64] >> (b % 64)) & 1u) == 0) continue;
      for (std::uint32_t slot = 0; slot < plan_.capacity; ++slot) {
        if (((start_alloc_[b] >> slot) & 1u) == 0) continue;
        std::uint32_t const c = cdetail::relocations_of(lookup, b, slot);
        if (histogram_.size() <= c) histogram_.resize(c + 1, 0);
        ++histogram_[c];
      }
    }
  }

  std::uint64_t* candidate_words() {
    return plan_.n == plan_.defrag_factor ? ref_.core().defrag(plan_.type).words() : call_.data();
  }
  cdetail::PassView<Ref> view_of(std::uint32_t sources) {
    cdetail::PassView<Ref> v;
    v.heap            = ref_;
    v.type            = plan_.type;
    v.capacity        = plan_.capacity;
    v.n               = plan_.n;
    v.defrag_factor   = plan_.defrag_factor;
    v.sources         = sources;
    v.forwarding      = plan_.variant == compact::RewriteVariant::forwarding;
    v.R               = R_.data();
    v.call_candidates = plan_.n != plan_.defrag_factor ? call_.data() : nullptr;
    v.call_sources    = sources_.data();
    if (!v.forwarding) {
      v.record_source         = record_source_.data();
      v.record_targets        = record_targets_.data();
      v.record_target_bitmaps = record_target_bitmaps_.data();
    }
    v.counters = nullptr;
    return v;
  }

  Ref ref_;
  std::vector<compact::ExternalRoots> all_roots_, roots_;
  cdetail::CallPlan plan_{};
  std::uint32_t M_ = 0, words_ = 0;
  std::vector<std::uint32_t> R_, record_targets_, source_moved_;
  std::vector<std::uint64_t> call_, sources_, record_source_, record_target_bitmaps_;
  std::vector<std::uint64_t> start_words_, start_alloc_, histogram_;
  cdetail::PassCounters counters_{};
  std::vector<cdetail::HolderArrays> holders_;
  cdetail::PassView<Ref> view_{};
  Fault fault_          = Fault::none;
  std::uint32_t passes_ = 0;  // passes of this call so far
};

/// compact::defragment for a HostObjectHeap.
template <class Types>
compact::DefragStats host_defragment(HostObjectHeap<Types>& heap,
                                     std::uint32_t type,
                                     compact::DefragOptions const& options,
                                     std::vector<compact::ExternalRoots> const& roots,
                                     compact::PassObserver const& on_pass,
                                     Fault fault = Fault::none) {
  cdetail::CallPlan const plan = cdetail::make_call_plan<Types>(heap.config(), type, options);
  HostPassDriver<Types> driver(heap.ref(), roots, fault);
  return cdetail::run_defragmentation(driver, plan, on_pass);
}

/// The differential driver (differential.hpp) for the CPU emulation.
template <class Types>
class HostDriver {
 public:
  HostDriver(std::uint32_t num_blocks, std::uint32_t n, std::uint32_t k1, Fault fault = Fault::none)
      : heap_(num_blocks, n, k1), fault_(fault) {}

  [[nodiscard]] char const* name() const { return "cpu-emulation"; }
  [[nodiscard]] core::HeapConfig const& config() const { return heap_.config(); }
  [[nodiscard]] HostObjectHeap<Types>& heap() { return heap_; }

  void allocate(std::vector<NewObject> const& objects) {
    for (NewObject const& o : objects) {
      std::uint64_t const p = heap_.allocate(o.type, o.id);
      ASSERT_NE(p, 0u) << "host heap full at object " << o.id;
      pointer_[o.id] = p;
    }
  }
  check::HeapSnapshot snapshot() { return heap_.snapshot(); }
  void link(std::vector<Link> const& links) {
    for (Link const& l : links)
      *heap_.ref().pointer_slot_address(pointer_.at(l.from), l.slot) =
          l.to == 0 ? 0 : pointer_.at(l.to);
  }
  void destroy(std::vector<std::uint64_t> const& ids) {
    for (std::uint64_t id : ids) heap_.destroy(pointer_.at(id));
  }
  void add_root_array(RootArray const& r) {
    auto entries = std::make_unique<std::vector<std::uint64_t>>();
    for (std::uint64_t id : r.targets) entries->push_back(id == 0 ? 0 : pointer_.at(id));
    roots_.push_back({entries->data(), entries->size(), r.pointee});
    storage_.push_back(std::move(entries));
  }
  std::vector<std::optional<core::SlotRef>> root_locations() const {
    std::vector<std::optional<core::SlotRef>> out;
    for (auto const& r : roots_)
      for (std::uint64_t i = 0; i < r.count; ++i) {
        if (r.pointers[i] == 0) {
          out.push_back(std::nullopt);
        } else {
          core::SlotRef const at = heap_.ref().locate(r.pointers[i]);
          out.push_back(at);
        }
      }
    return out;
  }
  compact::DefragStats defragment(std::uint32_t type,
                                  compact::DefragOptions const& options,
                                  compact::PassObserver const& on_pass) {
    return host_defragment(heap_, type, options, roots_, on_pass, fault_);
  }
  std::uint64_t pattern_mismatches() {
    std::uint64_t bad           = 0;
    check::HeapSnapshot const s = heap_.snapshot();
    for (std::uint32_t b = 0; b < s.blocks.size(); ++b)
      for (std::uint32_t slot = 0; slot < s.blocks[b].objects.size(); ++slot)
        if (s.blocks[b].objects[slot] &&
            !pattern_intact(heap_.ref(), heap_.ref().object_pointer(b, slot, s.blocks[b].type)))
          ++bad;
    return bad;
  }

 private:
  HostObjectHeap<Types> heap_;
  std::map<std::uint64_t, std::uint64_t> pointer_;  // id -> pointer at allocation
  std::vector<compact::ExternalRoots> roots_;
  std::vector<std::unique_ptr<std::vector<std::uint64_t>>> storage_;
  Fault fault_          = Fault::none;
  std::uint32_t passes_ = 0;  // passes of this call so far
};

}  // namespace compact_test
