// Field DSL in device code: the scenario of soa_test_scenario.hpp run by kernels on a
// cudaMalloc'ed buffer; the raw bytes are copied back and compared with the hand-computed image
// (the same image the CPU test soa_field_test.cpp checks on the host).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/cuda/error.hpp"
#include "soa_test_scenario.hpp"
#include "soa_test_types.hpp"

using namespace soa_test;

namespace {

__global__ void run_phase1(std::uint64_t base) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  scenario::phase1(base, i);
}

__global__ void run_phase2(std::uint64_t base) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  scenario::phase2(base, i);
}

// Compile-time layout facts are usable in device code: written by a kernel, checked on the host.
__global__ void read_layout_constants(std::uint64_t* out) {
  out[0] = ListA::capacity<Star>;
  out[1] = ListA::type_id<Star>;
  out[2] = ListA::block_bytes;
  out[3] = ListA::field_offset<Star, 5>(ListA::capacity<Star>);
  out[4] = ListA::field_offset<Body, 4>(ListA::capacity<Body>);
}

// The layout table passed by value to a kernel answers like on the host.
__global__ void read_layout_table(ListA::Table table, std::uint64_t* out) {
  out[0] = table.unit_offset(3, 5, 1);
  out[1] = table.unit_offset_at(1, 3, 2, 10);
  out[2] = table.incoming_begin[ListA::num_types];
  out[3] = table.is_subtype(3, 0) ? 1 : 0;
}

}  // namespace

TEST(SoaFieldGpu, KernelWritesExactlyTheHandComputedBytes) {
  HEAPLAB_REQUIRE_GPU();
  std::size_t const bytes = std::size_t{list_a::kBlockBytes} * scenario::kBlocks;
  unsigned char* d_buffer = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_buffer, bytes));
  HEAPLAB_CUDA_TRY(cudaMemset(d_buffer, kPoison, bytes));
  auto const base = reinterpret_cast<std::uint64_t>(d_buffer);
  ASSERT_EQ(base % 128, 0u);
  // Several thread blocks, so that objects of one heap block are written by different warps.
  constexpr unsigned kThreads = 32;
  unsigned const grid         = (scenario::kObjects + kThreads - 1) / kThreads;
  run_phase1<<<grid, kThreads>>>(base);
  HEAPLAB_CHECK_LAUNCH();
  run_phase2<<<grid, kThreads>>>(base);
  HEAPLAB_CHECK_LAUNCH();
  std::vector<unsigned char> got(bytes);
  HEAPLAB_CUDA_TRY(cudaMemcpy(got.data(), d_buffer, bytes, cudaMemcpyDeviceToHost));
  HEAPLAB_CUDA_TRY(cudaFree(d_buffer));

  ExpectedImage const want = scenario::expected_image(base);
  long const diff          = want.first_difference(got.data());
  EXPECT_EQ(diff, -1) << "first differing byte: block " << diff / list_a::kBlockBytes << ", offset "
                      << diff % list_a::kBlockBytes;
  std::printf(
      "[heaplab] %u objects written by kernels, %zu bytes compared\n", scenario::kObjects, bytes);
}

TEST(SoaFieldGpu, LayoutConstantsAndTableInDeviceCode) {
  HEAPLAB_REQUIRE_GPU();
  std::uint64_t* d_out = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_out, 9 * sizeof(std::uint64_t)));
  read_layout_constants<<<1, 1>>>(d_out);
  HEAPLAB_CHECK_LAUNCH();
  constexpr ListA::Table table = ListA::layout_table();
  read_layout_table<<<1, 1>>>(table, d_out + 5);
  HEAPLAB_CHECK_LAUNCH();
  std::uint64_t got[9];
  HEAPLAB_CUDA_TRY(cudaMemcpy(got, d_out, sizeof(got), cudaMemcpyDeviceToHost));
  HEAPLAB_CUDA_TRY(cudaFree(d_out));
  // Hand-worked numbers (soa_test_types.hpp).
  EXPECT_EQ(got[0], 10u);
  EXPECT_EQ(got[1], 3u);
  EXPECT_EQ(got[2], list_a::kBlockBytes);
  EXPECT_EQ(got[3], list_a::kStarPlanets);
  EXPECT_EQ(got[4], list_a::kBodyNext);
  EXPECT_EQ(got[5], list_a::kStarPlanets + list_a::kStarPlanetsStride);
  EXPECT_EQ(got[6], list_a::kStarVel + 2 * list_a::kStarVelStride);
  EXPECT_EQ(got[7], 10u);
  EXPECT_EQ(got[8], 1u);
}
