// The portable core in GPU kernels (DeviceAtomics): many threads allocate and free one object at
// a time, without request coalescing, on a device copy of a HostHeap's initial state. Between
// kernels (quiescence) the state is copied back and checked with the invariant catalog
// (check::from_core), and every returned slot is checked: in range, of the requested type, never
// handed to two threads. Independent thread scheduling (Volta and later) must let the retrying
// set/clear loops of threads of one warp make progress; the original DynaSOAr hangs here on
// Hopper in its coalescing path, which this kernel does not use (issue 5 adds coalescing).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/check/from_core.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/core/heap_protocol.hpp"
#include "heaplab/core/host_heap.hpp"
#include "heaplab/cuda/error.hpp"

namespace core  = heaplab::core;
namespace check = heaplab::check;

namespace {

core::HeapConfig test_config(std::uint32_t blocks) {
  core::HeapConfig c;
  c.types      = {{"T0", 8, {}, false, {}}, {"T1", 64, {}, false, {}}, {"T2", 256, {}, false, {}}};
  c.num_blocks = blocks;
  c.defrag_factor = 1;
  c.validate();
  return c;
}

/// Device arrays holding a copy of a HostHeap's state, and copying back to a host mirror.
class DeviceHeap {
 public:
  explicit DeviceHeap(core::HostHeap& host) : host_(host) {
    core::HeapStorage const h = host.storage();
    std::uint32_t const m = h.num_blocks, k = h.num_types, w = h.layout.total_words;
    dev_                 = h;
    dev_.alloc_bitmaps   = upload(h.alloc_bitmaps, m);
    dev_.iter_bitmaps    = upload(h.iter_bitmaps, m);
    dev_.block_types     = upload(h.block_types, m);
    dev_.free_words      = upload(h.free_words, w);
    dev_.allocated_words = upload(h.allocated_words, std::size_t{k} * w);
    dev_.active_words    = upload(h.active_words, std::size_t{k} * w);
    dev_.defrag_words    = upload(h.defrag_words, std::size_t{k} * w);
    dev_.capacities      = upload(h.capacities, k);
    // Every pointer of HeapStorage must be replaced: a host pointer left here is an illegal
    // address on the device (the claim-ticket arrays were, when they came in).
    dev_.claim_tickets = upload(h.claim_tickets, k);
    dev_.claim_runs    = upload(h.claim_runs, std::size_t{k} * h.claim_run_slots);
  }
  ~DeviceHeap() {
    for (void* p : allocations_) cudaFree(p);
  }
  DeviceHeap(DeviceHeap const&)            = delete;
  DeviceHeap& operator=(DeviceHeap const&) = delete;

  [[nodiscard]] core::HeapProtocol<core::DeviceAtomics> ref() const {
    return core::HeapProtocol<core::DeviceAtomics>(dev_);
  }

  /// Copies the device state into the host heap's arrays (the snapshot reads those).
  void download() {
    core::HeapStorage const h = host_.storage();
    std::uint32_t const m = h.num_blocks, k = h.num_types, w = h.layout.total_words;
    copy_back(h.alloc_bitmaps, dev_.alloc_bitmaps, m);
    copy_back(h.iter_bitmaps, dev_.iter_bitmaps, m);
    copy_back(h.block_types, dev_.block_types, m);
    copy_back(h.free_words, dev_.free_words, w);
    copy_back(h.allocated_words, dev_.allocated_words, std::size_t{k} * w);
    copy_back(h.active_words, dev_.active_words, std::size_t{k} * w);
    copy_back(h.defrag_words, dev_.defrag_words, std::size_t{k} * w);
  }

 private:
  template <class T>
  T* upload(T const* src, std::size_t n) {
    void* p = nullptr;
    HEAPLAB_CUDA_TRY(cudaMalloc(&p, n * sizeof(T)));
    allocations_.push_back(p);
    HEAPLAB_CUDA_TRY(cudaMemcpy(p, src, n * sizeof(T), cudaMemcpyHostToDevice));
    return static_cast<T*>(p);
  }
  template <class T>
  static void copy_back(T* dst, T const* src, std::size_t n) {
    HEAPLAB_CUDA_TRY(cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost));
  }

  core::HostHeap& host_;
  core::HeapStorage dev_{};
  std::vector<void*> allocations_;
};

__global__ void allocate_one_each(core::HeapProtocol<core::DeviceAtomics> heap,
                                  core::SlotRef* out,
                                  std::uint32_t* types,
                                  std::uint32_t n,
                                  std::uint32_t round) {
  std::uint32_t const tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  std::uint32_t const t = (tid + round) % 3;
  types[tid]            = t;
  out[tid]              = heap.allocate(t, (std::uint64_t{round} << 32) | tid);
}

__global__ void free_selected(core::HeapProtocol<core::DeviceAtomics> heap,
                              core::SlotRef const* objs,
                              std::uint32_t const* types,
                              std::uint32_t n,
                              std::uint32_t modulus,
                              std::uint32_t remainder) {
  std::uint32_t const tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n || tid % modulus != remainder || objs[tid].is_null()) return;
  heap.deallocate(types[tid], objs[tid]);
}

/// Allocation and free in one kernel: every thread frees and re-allocates several times.
__global__ void churn(core::HeapProtocol<core::DeviceAtomics> heap,
                      std::uint32_t n,
                      std::uint32_t rounds) {
  std::uint32_t const tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  for (std::uint32_t r = 0; r < rounds; ++r) {
    std::uint32_t const t = (tid * 7 + r) % 3;
    core::SlotRef const a = heap.allocate(t, (std::uint64_t{r} << 32) | tid);
    if (!a.is_null()) heap.deallocate(t, a);
  }
}

std::string catalog_violations(core::HostHeap const& heap) {
  std::string out;
  for (auto const& v : check::check_all(check::from_core(heap))) out += v.to_string() + "\n";
  return out;
}

}  // namespace

TEST(CoreGpu, ConcurrentAllocateAndFreeKeepEveryInvariant) {
  HEAPLAB_REQUIRE_GPU();
  // 3 blocks per thread: a thread holds at most one object and claims at most one block at a
  // time, so the free bitmap can never be observed empty (no out-of-memory result). 196608
  // blocks give every state bitmap three levels.
  std::uint32_t const kThreads = 1u << 16, kBlocks = 3 * kThreads, kBlockDim = 256;
  core::HostHeap host(test_config(kBlocks));
  DeviceHeap dev(host);
  core::SlotRef* objs  = nullptr;
  std::uint32_t* types = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&objs, kThreads * sizeof(core::SlotRef)));
  HEAPLAB_CUDA_TRY(cudaMalloc(&types, kThreads * sizeof(std::uint32_t)));
  std::uint32_t const grid = (kThreads + kBlockDim - 1) / kBlockDim;

  for (std::uint32_t round = 0; round < 3; ++round) {
    allocate_one_each<<<grid, kBlockDim>>>(dev.ref(), objs, types, kThreads, round);
    HEAPLAB_CHECK_LAUNCH();
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
    dev.download();
    std::vector<core::SlotRef> got(kThreads);
    std::vector<std::uint32_t> got_types(kThreads);
    HEAPLAB_CUDA_TRY(
        cudaMemcpy(got.data(), objs, kThreads * sizeof(core::SlotRef), cudaMemcpyDeviceToHost));
    HEAPLAB_CUDA_TRY(cudaMemcpy(
        got_types.data(), types, kThreads * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
    std::uint32_t nulls = 0;
    for (std::uint32_t i = 0; i < kThreads; ++i) {
      if (got[i].is_null()) {
        ++nulls;
        continue;
      }
      ASSERT_LT(got[i].block, kBlocks);
      ASSERT_EQ(host.block_type(got[i].block), got_types[i]) << "thread " << i;
      ASSERT_LT(got[i].slot, host.config().capacity(got_types[i]));
      ASSERT_TRUE(seen.insert({got[i].block, got[i].slot}).second) << "slot handed to two threads";
      ASSERT_TRUE((host.alloc_bitmap(got[i].block) >> got[i].slot) & 1u);
    }
    EXPECT_EQ(nulls, 0u) << "the heap has room for every object of this round";
    EXPECT_EQ(catalog_violations(host), "") << "after allocation round " << round;
    free_selected<<<grid, kBlockDim>>>(dev.ref(), objs, types, kThreads, 2, round % 2);
    HEAPLAB_CHECK_LAUNCH();
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
    dev.download();
    EXPECT_EQ(catalog_violations(host), "") << "after free round " << round;
    free_selected<<<grid, kBlockDim>>>(dev.ref(), objs, types, kThreads, 2, 1 - round % 2);
    HEAPLAB_CHECK_LAUNCH();
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  }
  churn<<<grid, kBlockDim>>>(dev.ref(), kThreads, 8);
  HEAPLAB_CHECK_LAUNCH();
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  dev.download();
  EXPECT_EQ(catalog_violations(host), "") << "after churn";
  for (std::uint32_t b = 0; b < kBlocks; ++b)
    ASSERT_EQ(host.alloc_bitmap(b), core::kFullBitmap)
        << "block " << b << " not free after everything was freed";
  cudaFree(objs);
  cudaFree(types);
}
