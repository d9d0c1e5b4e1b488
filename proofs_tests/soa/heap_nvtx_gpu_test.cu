// The heap's NVTX memory pool (soa/nvtx_regions.hpp, HeapOptions::nvtx_pool): which blocks are
// regions follows the free bitmap at nvtx_protect_free_blocks(), and kernels touching only live
// objects stay clean under memcheck (this binary runs in the sanitize tier). The other half, a
// planted use after free that memcheck must report, is gpu_planted_use_after_free
// (planted_use_after_free.cu), which the sanitize tier runs expecting the report.
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gpu_test.hpp"
#include "heap_test_support.hpp"
#include "heap_test_types.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/cuda/error.hpp"

using namespace heap_test;
namespace check = heaplab::check;

namespace {

constexpr std::uint32_t kBlocks = 16;
constexpr std::uint32_t kLeaves = 8 * 64;  // at least 8 blocks of Leaf (capacity 64)

__global__ void make_leaves(Ref heap, std::uint32_t n, Leaf** out) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = heap.make<Leaf>(std::uint64_t{i}, i);
}

__device__ std::uint64_t block_of(Ref const& heap, Leaf const* p) {
  return (static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p)) - heap.block_base()) /
         Types::block_bytes;
}

/// Destroys every leaf in an even-numbered block (so those blocks become free) and clears its
/// entry in `leaves`.
__global__ void destroy_in_even_blocks(Ref heap, std::uint32_t n, Leaf** leaves) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || leaves[i] == nullptr || block_of(heap, leaves[i]) % 2 != 0) return;
  heap.destroy(leaves[i]);
  leaves[i] = nullptr;
}

/// Sums value() over the live leaves: touches only blocks in use.
__global__ void sum_live(std::uint32_t n, Leaf* const* leaves, unsigned long long* sum) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && leaves[i] != nullptr)
    atomicAdd(sum, static_cast<unsigned long long>(leaves[i]->value()));
}

TEST(HeapNvtx, RegionsFollowTheFreeBitmapAndLiveAccessesStayClean) {
  HEAPLAB_REQUIRE_GPU();
  soa::HeapOptions options;
  options.nvtx_pool = true;
  auto heap         = soa::Heap<Types>::with_blocks(kBlocks, options);
  EXPECT_EQ(heap.nvtx_registered_blocks(), std::vector<bool>(kBlocks, true));

  DeviceArray<Leaf*> leaves(kLeaves);
  make_leaves<<<(kLeaves + 127) / 128, 128>>>(heap.ref(), kLeaves, leaves.data);
  HEAPLAB_CHECK_LAUNCH();
  destroy_in_even_blocks<<<(kLeaves + 127) / 128, 128>>>(heap.ref(), kLeaves, leaves.data);
  HEAPLAB_CHECK_LAUNCH();
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());

  auto const snap = heap.snapshot();
  expect_catalog_holds(snap, "after destroying the leaves of even blocks");
  std::uint32_t const free_blocks = check::count_set(snap.free_blocks);
  ASSERT_GE(free_blocks, kBlocks / 2) << "every even block, used or not, must be free";
  ASSERT_LT(free_blocks, kBlocks) << "the odd blocks still hold leaves";

  EXPECT_EQ(heap.nvtx_protect_free_blocks(), free_blocks);
  auto const registered = heap.nvtx_registered_blocks();
  ASSERT_EQ(registered.size(), kBlocks);
  for (std::uint32_t b = 0; b < kBlocks; ++b)
    EXPECT_EQ(registered[b], !snap.free_blocks.get(b)) << "block " << b;

  // Touch every live leaf while the free blocks are outside the pool's regions: memcheck must
  // stay silent (the sanitize tier runs this binary with --error-exitcode).
  auto const host             = leaves.to_host();
  unsigned long long expected = 0;
  for (std::uint32_t i = 0; i < kLeaves; ++i)
    if (host[i] != nullptr) expected += i;
  ASSERT_GT(expected, 0u);
  DeviceArray<unsigned long long> sum(1);
  sum_live<<<(kLeaves + 127) / 128, 128>>>(kLeaves, leaves.data, sum.data);
  HEAPLAB_CHECK_LAUNCH();
  EXPECT_EQ(sum.to_host()[0], expected);

  // Every block registered again: allocation may use any block.
  heap.nvtx_register_all_blocks();
  EXPECT_EQ(heap.nvtx_registered_blocks(), std::vector<bool>(kBlocks, true));
  heap.parallel_new<Leaf>(kLeaves, 1u);
  heap.synchronize();
  EXPECT_EQ(heap.oom_count(), 0u);
  expect_catalog_holds(heap.snapshot(), "after refilling with every block registered");
}

TEST(HeapNvtx, WithoutThePoolTheCallsAreClearErrors) {
  HEAPLAB_REQUIRE_GPU();
  auto heap = soa::Heap<Types>::with_blocks(4);
  EXPECT_TRUE(heap.nvtx_registered_blocks().empty());
  EXPECT_THROW((void)heap.nvtx_protect_free_blocks(), heaplab::core::precondition_error);
  EXPECT_THROW(heap.nvtx_register_all_blocks(), heaplab::core::precondition_error);
}

}  // namespace
