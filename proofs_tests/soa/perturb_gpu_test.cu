// Warp-order perturbation on the GPU (core/perturb.hpp, soa::detail::perturb_warp): the seeded
// delays really reorder warps. Two warps pass a perturbation point, then take a ticket; where
// the hash delays warp 0 and not warp 1, warp 1 must (nearly always) come first.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/core/perturb.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/soa/detail/warp.cuh"

namespace core = heaplab::core;

namespace {

__global__ void ticket_kernel(std::uint64_t const* seeds, unsigned* tickets, unsigned* first) {
  // One thread block of two warps per launch index (blockIdx.x).
  unsigned const warp = threadIdx.x / 32u;
  heaplab::soa::detail::perturb_warp(seeds[blockIdx.x], warp, core::PerturbPoint::move);
  if (threadIdx.x % 32u == 0) {
    unsigned const t = atomicAdd(&tickets[blockIdx.x], 1u);
    if (t == 0) first[blockIdx.x] = warp;
  }
}

}  // namespace

TEST(PerturbGpu, DelayedWarpComesSecond) {
  HEAPLAB_REQUIRE_GPU();
  constexpr unsigned kRuns = 4096;
  std::vector<std::uint64_t> seeds(kRuns);
  for (unsigned i = 0; i < kRuns; ++i) seeds[i] = core::perturb_seed_for(20261124, i);
  std::uint64_t* d_seeds = nullptr;
  unsigned *d_tickets = nullptr, *d_first = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_seeds, kRuns * sizeof(std::uint64_t)));
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_tickets, kRuns * sizeof(unsigned)));
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_first, kRuns * sizeof(unsigned)));
  HEAPLAB_CUDA_TRY(
      cudaMemcpy(d_seeds, seeds.data(), kRuns * sizeof(std::uint64_t), cudaMemcpyHostToDevice));
  HEAPLAB_CUDA_TRY(cudaMemset(d_tickets, 0, kRuns * sizeof(unsigned)));
  ticket_kernel<<<kRuns, 64>>>(d_seeds, d_tickets, d_first);
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  std::vector<unsigned> first(kRuns);
  HEAPLAB_CUDA_TRY(
      cudaMemcpy(first.data(), d_first, kRuns * sizeof(unsigned), cudaMemcpyDeviceToHost));
  cudaFree(d_seeds);
  cudaFree(d_tickets);
  cudaFree(d_first);

  unsigned only_warp0_delayed = 0, warp1_first_then = 0, warp1_first_overall = 0;
  for (unsigned i = 0; i < kRuns; ++i) {
    bool const d0 = core::perturb_delay_ns(seeds[i], 0, core::PerturbPoint::move) != 0;
    bool const d1 = core::perturb_delay_ns(seeds[i], 1, core::PerturbPoint::move) != 0;
    warp1_first_overall += first[i] == 1;
    if (d0 && !d1) {
      ++only_warp0_delayed;
      warp1_first_then += first[i] == 1;
    }
  }
  std::printf(
      "[heaplab] %u of %u launches delay warp 0 only; warp 1 first in %u of them, in %u "
      "of all launches\n",
      only_warp0_delayed,
      kRuns,
      warp1_first_then,
      warp1_first_overall);
  ASSERT_GT(only_warp0_delayed, kRuns / 8);  // the hash: 3/16 of the launches
  EXPECT_GE(warp1_first_then, only_warp0_delayed * 9 / 10)
      << "a warp delayed by >= 256 ns should lose the race to one that is not";
}
