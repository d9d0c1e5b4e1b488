// The differential driver (differential.hpp) for the GPU heap: population by kernels
// (allocate_raw, pointer slots by index, destroy_raw), payload snapshots, device root arrays
// registered with a Compactor, and a field-pattern check kernel. nvcc only.
#pragma once

#include "heaplab/compact/compactor.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "compact_test_types.hpp"
#include "heaplab/cuda/error.hpp"
#include "pattern.cuh"
#include "population.hpp"

namespace compact_test {

namespace compact = heaplab::compact;

/// A device array with host upload/download (test helper).
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::vector<T> const& host) { upload(host); }
  void upload(std::vector<T> const& host) {
    if (host.size() > capacity_) {
      T* p = nullptr;
      HEAPLAB_CUDA_TRY(cudaMalloc(&p, host.size() * sizeof(T)));
      data_.reset(p);
      capacity_ = host.size();
    }
    size_ = host.size();
    if (size_ > 0)
      HEAPLAB_CUDA_TRY(
          cudaMemcpy(data_.get(), host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  [[nodiscard]] std::vector<T> download() const {
    std::vector<T> host(size_);
    if (size_ > 0)
      HEAPLAB_CUDA_TRY(
          cudaMemcpy(host.data(), data_.get(), size_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  [[nodiscard]] T* get() const { return data_.get(); }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(T* p) const noexcept { (void)cudaFree(p); }
  };
  std::unique_ptr<T, Free> data_;
  std::size_t size_ = 0, capacity_ = 0;
};

template <class Types>
__global__ void allocate_objects_kernel(soa::HeapRef<Types> heap,
                                        std::uint32_t const* types,
                                        std::uint64_t const* ids,
                                        std::uint64_t* out,
                                        std::uint64_t count) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint64_t const p = heap.allocate_raw(types[i]);
    if (p != 0) {
      heap.initialize_tracked(p, ids[i]);
      write_pattern(heap, p, ids[i]);
    }
    out[i] = p;
  }
}

template <class Types>
__global__ void link_kernel(soa::HeapRef<Types> heap,
                            std::uint64_t const* from,
                            std::uint32_t const* slot,
                            std::uint64_t const* to,
                            std::uint64_t count) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    *heap.pointer_slot_address(from[i], slot[i]) = to[i];
}

template <class Types>
__global__ void destroy_kernel(soa::HeapRef<Types> heap,
                               std::uint64_t const* p,
                               std::uint64_t count) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    heap.destroy_raw(p[i]);
}

/// Counts live objects whose plain fields are not the pattern of their id.
template <class Types>
__global__ void pattern_check_kernel(soa::HeapRef<Types> heap, unsigned long long* bad) {
  auto const& core = heap.core();
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
       i < heap.num_blocks();
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    auto const b          = static_cast<std::uint32_t>(i);
    std::uint32_t const t = core.blocks().load_type(b);
    if (t >= Types::num_types || core.capacity(t) < 2 || !core.allocated(t).get(b)) continue;
    std::uint64_t live = core.blocks().load_alloc_bitmap(b, heaplab::core::MemoryOrder::relaxed) &
                         heaplab::core::low_bits(core.capacity(t));
    while (live != 0) {
      auto const slot = static_cast<std::uint32_t>(heaplab::core::find_first_set(live));
      live &= live - 1u;
      if (!pattern_intact(heap, heap.object_pointer(b, slot, t))) atomicAdd(bad, 1ull);
    }
  }
}

inline unsigned grid_of(std::uint64_t n) {
  std::uint64_t const g = (n + 255) / 256;
  return static_cast<unsigned>(g == 0 ? 1 : (g > 4096 ? 4096 : g));
}

template <class Types>
class GpuDriver {
 public:
  GpuDriver(std::uint32_t num_blocks, std::uint32_t n, std::uint32_t k1)
      : heap_(soa::Heap<Types>::with_blocks(num_blocks, options(n, k1))), compactor_(heap_) {}
  GpuDriver(GpuDriver const&)            = delete;
  GpuDriver& operator=(GpuDriver const&) = delete;

  [[nodiscard]] char const* name() const { return "gpu"; }
  [[nodiscard]] core::HeapConfig const& config() const { return heap_.config(); }
  [[nodiscard]] soa::Heap<Types>& heap() { return heap_; }
  [[nodiscard]] compact::Compactor<Types>& compactor() { return compactor_; }

  /// Allocates the whole population in ONE launch (a thread per request), as a program would.
  /// This used to be a cold-start burst the allocator lost: hundreds of warps found no active
  /// block at the same time and each opened a fresh one (DynaSOAr Alg. 1 lines 4-7), so the heap
  /// filled with sparse blocks and a population of 75% of its capacity no longer fit (measured on
  /// an H200: 193 of 9574 objects found no memory), and the driver allocated in waves of 1024.
  /// Claim tickets (core/heap_protocol.hpp find_or_claim_block; docs/core.md "Claim tickets") make
  /// a burst open about one block per N_T requested slots, so one launch fits. A nullptr answer
  /// near exhaustion stays legal (docs/allocator.md "Out of memory": a block being initialized or
  /// deleted is briefly invisible), so the requests that got one go again, all in one launch per
  /// round; only a request that still fails after kRounds rounds fails the test.
  void allocate(std::vector<NewObject> const& objects) {
    constexpr int kRounds          = 8;
    std::vector<NewObject> pending = objects;
    for (int round = 0; round < kRounds && !pending.empty(); ++round) {
      std::vector<NewObject> failed = launch_allocations(pending);
      heap_.reset_oom_count();
      retried_allocations_ += failed.size();
      pending = std::move(failed);
    }
    ASSERT_TRUE(pending.empty()) << pending.size() << " of " << objects.size()
                                 << " objects found no memory after " << kRounds
                                 << " rounds: the test heap is too small for its population";
  }
  /// Requests that got nullptr in some round of allocate() and were retried.
  [[nodiscard]] std::uint64_t retried_allocations() const { return retried_allocations_; }
  check::HeapSnapshot snapshot() { return heap_.snapshot_with_payloads(); }
  void link(std::vector<Link> const& links) {
    std::vector<std::uint64_t> from, to;
    std::vector<std::uint32_t> slot;
    for (Link const& l : links) {
      from.push_back(pointer_.at(l.from));
      slot.push_back(l.slot);
      to.push_back(l.to == 0 ? 0 : pointer_.at(l.to));
    }
    if (links.empty()) return;
    DeviceArray<std::uint64_t> const d_from(from), d_to(to);
    DeviceArray<std::uint32_t> const d_slot(slot);
    link_kernel<Types><<<grid_of(links.size()), 256, 0, heap_.stream()>>>(
        heap_.ref(), d_from.get(), d_slot.get(), d_to.get(), links.size());
    HEAPLAB_CHECK_LAUNCH();
    heap_.synchronize();
  }
  void destroy(std::vector<std::uint64_t> const& ids) {
    std::vector<std::uint64_t> p;
    for (std::uint64_t id : ids) p.push_back(pointer_.at(id));
    if (p.empty()) return;
    DeviceArray<std::uint64_t> const d_p(p);
    destroy_kernel<Types>
        <<<grid_of(p.size()), 256, 0, heap_.stream()>>>(heap_.ref(), d_p.get(), p.size());
    HEAPLAB_CHECK_LAUNCH();
    heap_.synchronize();
  }
  void add_root_array(RootArray const& r) {
    std::vector<std::uint64_t> entries;
    for (std::uint64_t id : r.targets) entries.push_back(id == 0 ? 0 : pointer_.at(id));
    roots_.push_back(std::make_unique<DeviceArray<std::uint64_t>>(entries));
    compactor_.add_roots({roots_.back()->get(), entries.size(), r.pointee});
  }
  std::vector<std::optional<core::SlotRef>> root_locations() const {
    std::vector<std::optional<core::SlotRef>> out;
    for (auto const& r : roots_)
      for (std::uint64_t p : r->download()) {
        if (p == 0) {
          out.push_back(std::nullopt);
        } else {
          core::SlotRef const at = heap_.ref().locate(p);
          out.push_back(at);
        }
      }
    return out;
  }
  compact::DefragStats defragment(std::uint32_t type,
                                  compact::DefragOptions const& options,
                                  compact::PassObserver const& on_pass) {
    return compactor_.defragment(type, options, on_pass);
  }
  std::uint64_t pattern_mismatches() {
    DeviceArray<unsigned long long> bad(std::vector<unsigned long long>(1, 0));
    pattern_check_kernel<Types>
        <<<grid_of(heap_.num_blocks()), 256, 0, heap_.stream()>>>(heap_.ref(), bad.get());
    HEAPLAB_CHECK_LAUNCH();
    heap_.synchronize();
    return bad.download()[0];
  }

 private:
  /// One launch of allocate_objects_kernel over `requests`, one thread each; records the
  /// pointers it got and returns the requests that got nullptr.
  std::vector<NewObject> launch_allocations(std::vector<NewObject> const& requests) {
    std::vector<std::uint32_t> types;
    std::vector<std::uint64_t> ids;
    for (NewObject const& o : requests) {
      types.push_back(o.type);
      ids.push_back(o.id);
    }
    DeviceArray<std::uint32_t> const d_types(types);
    DeviceArray<std::uint64_t> const d_ids(ids);
    DeviceArray<std::uint64_t> d_out(std::vector<std::uint64_t>(requests.size(), 0));
    allocate_objects_kernel<Types><<<grid_of(requests.size()), 256, 0, heap_.stream()>>>(
        heap_.ref(), d_types.get(), d_ids.get(), d_out.get(), requests.size());
    HEAPLAB_CHECK_LAUNCH();
    heap_.synchronize();
    std::vector<std::uint64_t> const out = d_out.download();
    std::vector<NewObject> failed;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (out[i] == 0) {
        failed.push_back(requests[i]);
      } else {
        pointer_[requests[i].id] = out[i];
      }
    }
    return failed;
  }
  static soa::HeapOptions options(std::uint32_t n, std::uint32_t k1) {
    soa::HeapOptions o;
    o.defrag_factor = n;
    o.k1            = k1;
    return o;
  }

  soa::Heap<Types> heap_;
  compact::Compactor<Types> compactor_;
  std::map<std::uint64_t, std::uint64_t> pointer_;
  std::vector<std::unique_ptr<DeviceArray<std::uint64_t>>> roots_;
  std::uint64_t retried_allocations_ = 0;
};

}  // namespace compact_test
