// The core bit operations evaluated in a kernel on fresh random inputs and compared with the
// same functions on the host (whose correctness proofs_tests/core/bitops_test.cpp establishes).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/cuda/error.hpp"

namespace core = heaplab::core;

namespace {

constexpr int kOutputsPerInput = 9;

struct Input {
  std::uint64_t word;
  std::int32_t n;
  std::uint32_t rotation;
};

__global__ void evaluate_bitops(Input const* in, std::int64_t* out, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    Input const v   = in[i];
    std::int64_t* o = out + i * kOutputsPerInput;
    o[0]            = core::find_first_set(v.word);
    o[1]            = core::popcount(v.word);
    o[2]            = core::nth_set_bit(v.word, v.n);
    o[3]            = static_cast<std::int64_t>(core::rotate_left(v.word, v.rotation));
    o[4]            = static_cast<std::int64_t>(core::rotate_right(v.word, v.rotation));
    o[5]            = core::find_first_set_rotated(v.word, v.rotation);
    o[6]            = core::find_first_zero_rotated(v.word, v.rotation);
    o[7]            = static_cast<std::int64_t>(core::low_bits(v.rotation % 65));
    o[8]            = core::find_first_set32(static_cast<std::uint32_t>(v.word >> v.rotation % 33));
  }
}

void evaluate_on_host(Input const& v, std::int64_t* o) {
  o[0] = core::find_first_set(v.word);
  o[1] = core::popcount(v.word);
  o[2] = core::nth_set_bit(v.word, v.n);
  o[3] = static_cast<std::int64_t>(core::rotate_left(v.word, v.rotation));
  o[4] = static_cast<std::int64_t>(core::rotate_right(v.word, v.rotation));
  o[5] = core::find_first_set_rotated(v.word, v.rotation);
  o[6] = core::find_first_zero_rotated(v.word, v.rotation);
  o[7] = static_cast<std::int64_t>(core::low_bits(v.rotation % 65));
  o[8] = core::find_first_set32(static_cast<std::uint32_t>(v.word >> v.rotation % 33));
}

}  // namespace

TEST(BitopsGpu, KernelMatchesHostOnRandomInputs) {
  HEAPLAB_REQUIRE_GPU();
  constexpr std::size_t kCount = 1u << 20;
  std::random_device rd;
  auto const seed = rd();
  std::printf("[heaplab] seed %u\n", seed);
  std::mt19937_64 rng(seed);
  std::vector<Input> inputs(kCount);
  for (auto& v : inputs) {
    std::uint64_t w = rng();
    switch (rng() % 5) {  // vary the density of set bits
      case 0:
        w &= rng() & rng();
        break;
      case 1:
        w |= rng() | rng();
        break;
      case 2:
        w = (rng() % 2) ? 0 : ~0ull;
        break;
      default:
        break;
    }
    v.word     = w;
    v.n        = static_cast<std::int32_t>(rng() % 70) - 2;
    v.rotation = static_cast<std::uint32_t>(rng() % 300);
  }

  Input* d_in         = nullptr;
  std::int64_t* d_out = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_in, kCount * sizeof(Input)));
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_out, kCount * kOutputsPerInput * sizeof(std::int64_t)));
  // Poison the output so that an element the kernel never wrote cannot match by accident.
  HEAPLAB_CUDA_TRY(cudaMemset(d_out, 0xA5, kCount * kOutputsPerInput * sizeof(std::int64_t)));
  HEAPLAB_CUDA_TRY(cudaMemcpy(d_in, inputs.data(), kCount * sizeof(Input), cudaMemcpyHostToDevice));
  evaluate_bitops<<<264, 256>>>(d_in, d_out, kCount);
  HEAPLAB_CHECK_LAUNCH();
  std::vector<std::int64_t> got(kCount * kOutputsPerInput);
  HEAPLAB_CUDA_TRY(
      cudaMemcpy(got.data(), d_out, got.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
  HEAPLAB_CUDA_TRY(cudaFree(d_in));
  HEAPLAB_CUDA_TRY(cudaFree(d_out));

  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < kCount; ++i) {
    std::int64_t want[kOutputsPerInput];
    evaluate_on_host(inputs[i], want);
    for (int k = 0; k < kOutputsPerInput; ++k) {
      if (got[i * kOutputsPerInput + k] != want[k] && mismatches++ < 10) {
        ADD_FAILURE() << "input " << i << " word=0x" << std::hex << inputs[i].word << std::dec
                      << " n=" << inputs[i].n << " r=" << inputs[i].rotation << " output " << k
                      << ": device " << got[i * kOutputsPerInput + k] << " host " << want[k];
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
  std::printf("[heaplab] %zu inputs x %d functions compared, %zu mismatches\n",
              kCount,
              kOutputsPerInput,
              mismatches);
}
