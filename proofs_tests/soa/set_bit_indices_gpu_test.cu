// soa::SetBitIndices (the sorted block array R of parallel_do and CompactGpu's candidate array)
// against a naive host loop over fresh random bitmaps: sizes around container and level
// boundaries, densities from empty to full, garbage bits past num_bits that must be ignored.
#include "heaplab/soa/set_bit_indices.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/cuda/error.hpp"

namespace {

std::vector<std::uint32_t> naive_set_bits(std::vector<std::uint64_t> const& words,
                                          std::uint32_t n) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < n; ++i)
    if ((words[i / 64] >> (i % 64)) & 1u) out.push_back(i);
  return out;
}

}  // namespace

TEST(SetBitIndicesGpu, MatchesANaiveLoop) {
  HEAPLAB_REQUIRE_GPU();
  std::mt19937_64 rng(20261121);
  heaplab::soa::SetBitIndices indices(64);  // grows on demand
  for (std::uint32_t n :
       {1u, 63u, 64u, 65u, 1000u, 4095u, 4096u, 4097u, 100000u, 262145u, 1u << 20}) {
    for (double density : {0.0, 0.001, 0.3, 0.5, 1.0}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", density " + std::to_string(density));
      std::size_t const words = (n + 63) / 64;
      std::vector<std::uint64_t> bits(words, 0);
      std::bernoulli_distribution set(density);
      for (std::uint32_t i = 0; i < n; ++i)
        if (set(rng)) bits[i / 64] |= std::uint64_t{1} << (i % 64);
      if (n % 64 != 0) bits.back() |= ~((std::uint64_t{1} << (n % 64)) - 1u);  // garbage past n
      std::uint64_t* d_words = nullptr;
      std::uint32_t* d_out   = nullptr;
      std::uint32_t* d_count = nullptr;
      HEAPLAB_CUDA_TRY(cudaMalloc(&d_words, words * 8));
      HEAPLAB_CUDA_TRY(cudaMalloc(&d_out, std::size_t{n} * 4));
      HEAPLAB_CUDA_TRY(cudaMalloc(&d_count, 4));
      HEAPLAB_CUDA_TRY(cudaMemcpy(d_words, bits.data(), words * 8, cudaMemcpyHostToDevice));
      HEAPLAB_CUDA_TRY(cudaMemset(d_count, 0xFF, 4));
      indices.enumerate(d_words, n, d_out, d_count);
      std::uint32_t count = 0;
      HEAPLAB_CUDA_TRY(cudaMemcpy(&count, d_count, 4, cudaMemcpyDeviceToHost));
      auto const want = naive_set_bits(bits, n);
      ASSERT_EQ(count, want.size());
      std::vector<std::uint32_t> got(count);
      if (count > 0)
        HEAPLAB_CUDA_TRY(
            cudaMemcpy(got.data(), d_out, std::size_t{count} * 4, cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, want);
      HEAPLAB_CUDA_TRY(cudaFree(d_words));
      HEAPLAB_CUDA_TRY(cudaFree(d_out));
      HEAPLAB_CUDA_TRY(cudaFree(d_count));
    }
  }
}

TEST(SetBitIndicesGpu, ZeroBitsGiveCountZero) {
  HEAPLAB_REQUIRE_GPU();
  heaplab::soa::SetBitIndices indices;
  std::uint32_t* d_count = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_count, 4));
  HEAPLAB_CUDA_TRY(cudaMemset(d_count, 0xFF, 4));
  indices.enumerate(nullptr, 0, nullptr, d_count);
  std::uint32_t count = 1;
  HEAPLAB_CUDA_TRY(cudaMemcpy(&count, d_count, 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(count, 0u);
  HEAPLAB_CUDA_TRY(cudaFree(d_count));
}
