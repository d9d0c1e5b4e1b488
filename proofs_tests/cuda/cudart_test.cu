// The CUDA plumbing layer (src/heaplab/cuda, namespace heaplab::cudart): launch geometry,
// error handling (the exception type by status, the last error cleared), and on a GPU the owning
// device buffer and the copy helpers. Built twice (proofs_tests/cuda/CMakeLists.txt): the
// cpu-tier binary holds the cases that need only the CUDA runtime library (a failed runtime call
// without a GPU is still a failed call), the gpu-tier one (HEAPLAB_CUDART_TEST_GPU) the others.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/cuda/pinned_buffer.hpp"
#include "heaplab/cuda/step_arena.hpp"

namespace cudart = heaplab::cudart;

namespace {

/// HEAPLAB_CUDA_TRY of a call that fails with or without a GPU (a device that does not exist).
void try_a_bad_device() {
  int const bad_device = std::numeric_limits<int>::max();
  try {
    HEAPLAB_CUDA_TRY(cudaSetDevice(bad_device));
    FAIL() << "cudaSetDevice(INT_MAX) succeeded";
  } catch (cudart::cuda_error const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("cudaSetDevice(bad_device) failed: "), std::string::npos) << what;
    EXPECT_NE(what.find("cudart_test.cu:"), std::string::npos) << what;
  }
}

#if !defined(HEAPLAB_CUDART_TEST_GPU)  // cudart_test (cpu tier)

TEST(CudartError, TryNamesTheFailedCallAndItsPlace) { try_a_bad_device(); }

TEST(CudartGrid, CeilDivAndGridSizeFollowTheirDefinitions) {
  EXPECT_EQ(cudart::ceil_div(0, 256), 0u);
  EXPECT_EQ(cudart::ceil_div(1, 256), 1u);
  EXPECT_EQ(cudart::ceil_div(256, 256), 1u);
  EXPECT_EQ(cudart::ceil_div(257, 256), 2u);
  EXPECT_EQ(cudart::ceil_div(std::uint64_t{1} << 40, 3), ((std::uint64_t{1} << 40) + 2) / 3);
  EXPECT_EQ(cudart::grid_size(0, 256, 1000), 1u);  // at least one block, also for no items
  EXPECT_EQ(cudart::grid_size(1000, 256, 1000), 4u);
  EXPECT_EQ(cudart::grid_size(std::uint64_t{1} << 40, 256, 65535), 65535u);  // capped
  for (std::uint64_t n : {1ull, 255ull, 256ull, 257ull, 100000ull}) {
    unsigned const g = cudart::grid_size(n, 128, 1u << 20);
    EXPECT_GE(std::uint64_t{g} * 128, n) << n;      // covers every item
    EXPECT_LT(std::uint64_t{g - 1} * 128, n) << n;  // and no whole block more
  }
}

TEST(CudartError, AFailedAllocationIsOutOfMemoryAndOtherFailuresAreCudaErrors) {
  try {
    cudart::throw_cuda_error(cudaErrorMemoryAllocation, "alloc");
    FAIL() << "nothing thrown";
  } catch (cudart::out_of_memory const& e) {
    EXPECT_EQ(e.code(), cudaErrorMemoryAllocation);
    EXPECT_EQ(std::string(e.what()), "alloc");
  }
  try {
    cudart::throw_cuda_error(cudaErrorInvalidValue, "value");
    FAIL() << "nothing thrown";
  } catch (cudart::out_of_memory const&) {
    FAIL() << "an invalid value is not out of memory";
  } catch (cudart::cuda_error const& e) {
    EXPECT_EQ(e.code(), cudaErrorInvalidValue);
  }
}

#else  // gpu_cudart_test (gpu tier)

TEST(CudartError, TryClearsTheLastErrorItReported) {
  HEAPLAB_REQUIRE_GPU();
  try_a_bad_device();
  // The failure is not left behind for the next launch check to report (without a driver the
  // runtime's initialization error is sticky, hence a GPU test).
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(CudartDeviceBuffer, OwnsMovesAndRoundTripsThroughTheCopyHelpers) {
  HEAPLAB_REQUIRE_GPU();
  std::vector<std::uint32_t> host(1000);
  for (std::uint32_t i = 0; i < host.size(); ++i) host[i] = i * 2654435761u;
  cudart::device_buffer<std::uint32_t> a(host.size(), "test buffer");
  ASSERT_TRUE(a);
  EXPECT_EQ(a.size(), host.size());
  EXPECT_EQ(a.size_bytes(), host.size() * sizeof(std::uint32_t));
  cudart::copy_to_device_async(a.data(), host.data(), host.size(), nullptr);
  cudart::device_buffer<std::uint32_t> b = std::move(a);  // ownership moves, no copy
  EXPECT_FALSE(a);                                        // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(cudart::to_host(b.data(), b.size()), host);
  b.set_zero_async(nullptr);
  EXPECT_EQ(cudart::to_host(b.data(), b.size()), std::vector<std::uint32_t>(host.size(), 0u));
  cudart::device_buffer<std::uint64_t> empty(0);
  EXPECT_TRUE(empty);  // room for one element even when empty: data() is never null
  EXPECT_TRUE(cudart::to_host(empty.data(), 0).empty());
}

TEST(CudartDeviceBuffer, AnImpossibleAllocationThrowsOutOfMemoryNamingTheBuffer) {
  HEAPLAB_REQUIRE_GPU();
  std::size_t const too_many = std::size_t{1} << 50;  // 8 PiB of uint64
  try {
    cudart::device_buffer<std::uint64_t> huge(too_many, "impossible buffer");
    FAIL() << "an 8 PiB allocation succeeded";
  } catch (cudart::out_of_memory const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("impossible buffer"), std::string::npos) << what;
    EXPECT_NE(what.find("device memory free"), std::string::npos) << what;
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cudart::device_buffer<std::uint64_t> fine(16);  // the device still works
  EXPECT_TRUE(fine);
}

TEST(CudartPinnedBuffer, GrowsOnlyWhenAskedForMoreAndRoundTripsACopy) {
  HEAPLAB_REQUIRE_GPU();
  cudart::pinned_buffer staging;
  EXPECT_EQ(staging.capacity(), 0u);
  unsigned char* const first = staging.reserve(4096);
  EXPECT_GE(staging.capacity(), 4096u);
  EXPECT_EQ(staging.reserve(100), first);  // smaller: the same memory
  unsigned char* const grown = staging.reserve(staging.capacity() + 1);
  EXPECT_GE(staging.capacity(), 6144u);  // by half again at least
  cudart::device_buffer<unsigned char> d(6000);
  std::vector<unsigned char> want(6000);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = static_cast<unsigned char>(i * 7 + 3);
  cudart::copy_to_device_async(d.data(), want.data(), want.size(), nullptr);
  cudart::copy_to_host(grown, d.data(), want.size(), nullptr);
  EXPECT_EQ(std::vector<unsigned char>(grown, grown + want.size()), want);
}

TEST(CudartPinnedBuffer, AnImpossibleSizeThrowsACudaErrorAndLeavesAnEmptyUsableBuffer) {
  HEAPLAB_REQUIRE_GPU();
  // Heap::read_back_memory falls back to pageable memory on this exception (a cuda_error).
  cudart::pinned_buffer staging;
  (void)staging.reserve(4096);
  try {
    (void)staging.reserve(std::size_t{1} << 50);  // 1 PiB of page-locked memory
    FAIL() << "a 1 PiB cudaMallocHost succeeded";
  } catch (cudart::cuda_error const& e) {
    EXPECT_NE(std::string(e.what()).find("pinned staging buffer"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(staging.capacity(), 0u);  // the old memory was freed before the attempt
  EXPECT_NE(staging.reserve(64), nullptr);
}

TEST(CudartStepArena, ArraysReachTheDeviceOnFlushAndComeBackOnFetchAcrossChunksAndSteps) {
  HEAPLAB_REQUIRE_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudart::step_arena arena(256);  // tiny chunks: the arrays below span several
  for (std::uint32_t step = 0; step < 3; ++step) {
    arena.reset();
    std::vector<std::uint32_t> a(50), b(200);  // b is larger than a chunk: a chunk of its own
    for (std::uint32_t i = 0; i < a.size(); ++i) a[i] = step * 1000 + i;
    for (std::uint32_t i = 0; i < b.size(); ++i) b[i] = ~(step * 1000 + i);
    std::uint32_t* const da = arena.put(a);
    std::uint64_t* const dz = arena.zeroed<std::uint64_t>(40);
    std::uint32_t* const db = arena.put(b);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(dz) % 16, 0u);  // aligned
    // Dirty the zeroed range on the device first: flush() must overwrite it with zeros.
    ASSERT_EQ(cudaMemsetAsync(dz, 0xFF, 40 * sizeof(std::uint64_t), stream), cudaSuccess);
    arena.flush(stream);
    std::uint32_t const* ha = arena.fetch(da, a.size(), stream);
    std::uint64_t const* hz = arena.fetch(dz, 40, stream);
    std::uint32_t const* hb = arena.fetch(db, b.size(), stream);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(std::vector<std::uint32_t>(ha, ha + a.size()), a) << "step " << step;
    EXPECT_EQ(std::vector<std::uint64_t>(hz, hz + 40), std::vector<std::uint64_t>(40, 0))
        << "step " << step;
    EXPECT_EQ(std::vector<std::uint32_t>(hb, hb + b.size()), b) << "step " << step;
  }
  std::size_t const held = arena.capacity();
  arena.reset();
  (void)arena.put(std::vector<std::uint32_t>(50, 1));
  EXPECT_EQ(arena.capacity(), held);  // a step that fits allocates nothing more
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

#endif

}  // namespace
