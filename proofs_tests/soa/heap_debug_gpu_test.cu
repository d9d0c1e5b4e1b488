// Debug-preset checks of the GPU heap (HEAPLAB_DEBUG_CHECKS): a double free and a pointer that
// is not from this heap are reported with the thread (blockIdx, threadIdx) and the pointer, the
// object is not freed, and Heap::check_device_errors() turns the report into a heap_error. Built
// in every preset; outside the debug preset the tests skip with the reason.
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "gpu_test.hpp"
#include "heap_test_support.hpp"
#include "heap_test_types.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/object_pointer.hpp"

using namespace heap_test;
namespace check = heaplab::check;

#if defined(HEAPLAB_DEBUG_CHECKS)
#define HEAPLAB_REQUIRE_DEBUG_CHECKS() (void)0
#else
#define HEAPLAB_REQUIRE_DEBUG_CHECKS() \
  GTEST_SKIP() << "debug checks are compiled only in the debug preset (HEAPLAB_DEBUG_CHECKS)"
#endif

namespace {

/// Every thread makes one Leaf: out[global thread index] = its pointer.
__global__ void make_leaves(Ref heap, std::uint64_t* out) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i]                = static_cast<std::uint64_t>(
      reinterpret_cast<std::uintptr_t>(heap.make<Leaf>(std::uint64_t{i}, 1u)));
}

/// Thread `culprit` of block `culprit_block` destroys its Leaf twice; every other thread destroys
/// its Leaf unless it lives in the culprit's heap block. The kernel allocates nothing, so the slot
/// freed first cannot be handed out again before the second destroy; and no other thread can
/// empty the culprit's heap block, whose invalidation (all allocation bits set until the block is
/// marked free) would make the second destroy look legal (docs/allocator.md "Debug checks").
__global__ void double_free(Ref heap,
                            std::uint32_t culprit_block,
                            std::uint32_t culprit,
                            std::uint64_t const* pointers) {
  std::uint32_t const i       = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint64_t const mine    = pointers[i];
  std::uint64_t const suspect = pointers[culprit_block * blockDim.x + culprit];
  if (blockIdx.x == culprit_block && threadIdx.x == culprit) {
    heap.destroy_raw(mine);
    heap.destroy_raw(mine);
  } else if (heaplab::core::pointer_block_address(mine) !=
             heaplab::core::pointer_block_address(suspect)) {
    heap.destroy_raw(mine);
  }
}

/// Thread `culprit` passes `foreign` to destroy_raw.
__global__ void free_foreign(Ref heap, std::uint32_t culprit, std::uint64_t foreign) {
  if (threadIdx.x == culprit) heap.destroy_raw(foreign);
}

/// Makes one Leaf and writes its pointer (to free it through another heap).
__global__ void make_one(Ref heap, std::uint64_t* out) {
  out[0] = static_cast<std::uint64_t>(
      reinterpret_cast<std::uintptr_t>(heap.make<Leaf>(std::uint64_t{7}, 1u)));
}

std::string hex(std::uint64_t p) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(p));
  return text;
}

std::string error_of(soa::Heap<Types>& heap) {
  try {
    heap.check_device_errors();
  } catch (soa::heap_error const& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST(HeapDebugGpu, DoubleFreeIsReportedWithThreadAndPointer) {
  HEAPLAB_REQUIRE_GPU();
  HEAPLAB_REQUIRE_DEBUG_CHECKS();
  auto heap            = soa::Heap<Types>::with_blocks(16);
  std::uint64_t* d_out = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_out, 3 * 64 * sizeof(std::uint64_t)));
  make_leaves<<<3, 64, 0, heap.stream()>>>(heap.ref(), d_out);
  HEAPLAB_CHECK_LAUNCH();
  double_free<<<3, 64, 0, heap.stream()>>>(heap.ref(), 2, 37, d_out);
  HEAPLAB_CHECK_LAUNCH();
  std::uint64_t p = 0;
  HEAPLAB_CUDA_TRY(cudaMemcpy(&p, d_out + 2 * 64 + 37, sizeof p, cudaMemcpyDeviceToHost));
  ASSERT_NE(p, 0u);
  std::string const what = error_of(heap);
  ASSERT_FALSE(what.empty()) << "the double free was not reported";
  EXPECT_NE(what.find("double free"), std::string::npos) << what;
  EXPECT_NE(what.find("thread (37,0,0) of block (2,0,0)"), std::string::npos) << what;
  EXPECT_NE(what.find(hex(p)), std::string::npos) << what;
  EXPECT_NE(what.find("1 error report"), std::string::npos) << what;
  // Reported once, then cleared; the heap is intact (the second free was not performed).
  EXPECT_TRUE(error_of(heap).empty());
  auto const snap = heap.snapshot();
  expect_catalog_holds(snap, "after a reported double free");
  // Only the culprit's heap block may still hold objects (the ones its neighbours kept).
  EXPECT_GE(check::count_set(snap.free_blocks), 15u);
  HEAPLAB_CUDA_TRY(cudaFree(d_out));
}

TEST(HeapDebugGpu, ForeignPointersAreReported) {
  HEAPLAB_REQUIRE_GPU();
  HEAPLAB_REQUIRE_DEBUG_CHECKS();
  auto heap            = soa::Heap<Types>::with_blocks(8);
  auto other           = soa::Heap<Types>::with_blocks(8);
  std::uint64_t* d_out = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_out, sizeof(std::uint64_t)));
  make_one<<<1, 1, 0, other.stream()>>>(other.ref(), d_out);
  HEAPLAB_CHECK_LAUNCH();
  std::uint64_t from_other = 0;
  HEAPLAB_CUDA_TRY(cudaMemcpy(&from_other, d_out, sizeof from_other, cudaMemcpyDeviceToHost));
  ASSERT_NE(from_other, 0u);

  Ref const ref              = heap.ref();
  std::uint64_t const inside = ref.object_pointer(3, 5, kLeaf);
  struct Case {
    char const* what;
    std::uint64_t pointer;
  };
  Case const cases[] = {
      {"an object of another heap", from_other},
      {"a block address past the end", ref.object_pointer(8, 0, kLeaf)},
      {"an address inside a block", inside + 64},
      {"an abstract type id", (inside & ~(std::uint64_t{0xFF} << 56)) | (std::uint64_t{0} << 56)},
      {"a type id out of range",
       (inside & ~(std::uint64_t{0xFF} << 56)) | (std::uint64_t{9} << 56)},
      {"a slot at the capacity", ref.object_pointer(3, 0, kFat) | 16u},
      {"capacity bits of another type",
       (inside & ~(std::uint64_t{0x3F} << 50)) | (std::uint64_t{28} << 50)},
  };
  for (Case const& c : cases) {
    SCOPED_TRACE(c.what);
    ASSERT_FALSE(ref.contains(c.pointer));
    free_foreign<<<1, 32, 0, heap.stream()>>>(ref, 9, c.pointer);
    HEAPLAB_CHECK_LAUNCH();
    std::string const what = error_of(heap);
    EXPECT_NE(what.find("pointer not from this heap"), std::string::npos) << what;
    EXPECT_NE(what.find("thread (9,0,0) of block (0,0,0)"), std::string::npos) << what;
    EXPECT_NE(what.find(hex(c.pointer)), std::string::npos) << what;
  }
  expect_catalog_holds(heap.snapshot(), "after reported foreign pointers");
  // A live object of this heap freed correctly is not reported.
  make_one<<<1, 1, 0, heap.stream()>>>(heap.ref(), d_out);
  HEAPLAB_CHECK_LAUNCH();
  std::uint64_t mine = 0;
  HEAPLAB_CUDA_TRY(cudaMemcpy(&mine, d_out, sizeof mine, cudaMemcpyDeviceToHost));
  free_foreign<<<1, 32, 0, heap.stream()>>>(ref, 0, mine);
  HEAPLAB_CHECK_LAUNCH();
  EXPECT_TRUE(error_of(heap).empty());
  EXPECT_EQ(check::count_set(heap.snapshot().free_blocks), 8u);
  HEAPLAB_CUDA_TRY(cudaFree(d_out));
}

TEST(HeapDebugGpu, FreeingAnObjectOfAFreedBlockIsADoubleFree) {
  HEAPLAB_REQUIRE_GPU();
  HEAPLAB_REQUIRE_DEBUG_CHECKS();
  // The block of the only object becomes free after the first destroy: the second destroy finds
  // an invalidated block (all bits set), which must still be reported, not freed.
  auto heap            = soa::Heap<Types>::with_blocks(4);
  std::uint64_t* d_out = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_out, sizeof(std::uint64_t)));
  make_one<<<1, 1, 0, heap.stream()>>>(heap.ref(), d_out);
  HEAPLAB_CHECK_LAUNCH();
  std::uint64_t p = 0;
  HEAPLAB_CUDA_TRY(cudaMemcpy(&p, d_out, sizeof p, cudaMemcpyDeviceToHost));
  free_foreign<<<1, 1, 0, heap.stream()>>>(heap.ref(), 0, p);
  HEAPLAB_CHECK_LAUNCH();
  EXPECT_TRUE(error_of(heap).empty());
  free_foreign<<<1, 1, 0, heap.stream()>>>(heap.ref(), 0, p);
  HEAPLAB_CHECK_LAUNCH();
  std::string const what = error_of(heap);
  EXPECT_NE(what.find("double free"), std::string::npos) << what;
  expect_catalog_holds(heap.snapshot(), "after a double free into a free block");
  HEAPLAB_CUDA_TRY(cudaFree(d_out));
}
