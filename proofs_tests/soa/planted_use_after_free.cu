// A planted use after free for the sanitize tier: memcheck must report it (docs/testing.md
// "Planted sanitizer checks"). Not a GoogleTest binary: its "pass" is memcheck's report, which
// tools/gpu-tier --sanitize and the CTest test sanitize.planted.use_after_free look for.
//
//   gpu_planted_use_after_free              the heap's block area is an NVTX pool; every leaf is
//                                           made, then destroyed (all blocks free), then
//                                           nvtx_protect_free_blocks(), then a kernel reads a
//                                           destroyed leaf's field: memcheck reports an
//                                           "Invalid __global__ read"
//   gpu_planted_use_after_free --no-protect the same without the protection: the read lands in
//                                           memory cudaMalloc still owns, memcheck is silent.
//                                           This is the control that shows the NVTX
//                                           registration is what catches it.
// Exit status 0 when the program ran (memcheck's --error-exitcode decides the outcome), 2 for a
// bad argument; prints "SKIPPED: ..." and exits 0 without a GPU.
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "heap_test_types.hpp"
#include "heaplab/cuda/device_info.hpp"
#include "heaplab/cuda/error.hpp"

using namespace heap_test;

namespace {

constexpr std::uint32_t kLeaves = 256;

__global__ void make_leaves(Ref heap, Leaf** out) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kLeaves) out[i] = heap.make<Leaf>(std::uint64_t{i}, i);
}

__global__ void destroy_leaves(Ref heap, Leaf* const* leaves) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kLeaves) heap.destroy(leaves[i]);
}

/// THE PLANTED BUG: reads a field of a leaf that was destroyed.
__global__ void read_destroyed_leaf(Leaf* const* leaves, unsigned* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = leaves[kLeaves / 2]->value();
}

}  // namespace

int main(int argc, char** argv) {
  bool protect = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-protect") == 0) {
      protect = false;
    } else {
      std::fprintf(stderr, "usage: %s [--no-protect]\n", argv[0]);
      return 2;
    }
  }
  auto const device = heaplab::cudart::probe_device();
  if (!device.available) {
    std::printf("SKIPPED: %s\n", device.reason.c_str());
    return 0;
  }
  soa::HeapOptions options;
  options.nvtx_pool = true;
  auto heap         = soa::Heap<Types>::with_blocks(8, options);
  Leaf** leaves     = nullptr;
  unsigned* out     = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&leaves, kLeaves * sizeof(Leaf*)));
  HEAPLAB_CUDA_TRY(cudaMalloc(&out, sizeof(unsigned)));
  make_leaves<<<kLeaves / 128, 128>>>(heap.ref(), leaves);
  destroy_leaves<<<kLeaves / 128, 128>>>(heap.ref(), leaves);
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  std::uint32_t unregistered = 0;
  if (protect) unregistered = heap.nvtx_protect_free_blocks();
  std::printf(
      "planted use after free: %u of %u blocks outside the NVTX pool's regions; reading "
      "leaf %u after its destruction\n",
      unregistered,
      heap.num_blocks(),
      kLeaves / 2);
  read_destroyed_leaf<<<1, 32>>>(leaves, out);
  (void)cudaDeviceSynchronize();  // memcheck reports the read here; the context stays usable
  (void)cudaFree(leaves);
  (void)cudaFree(out);
  std::printf("planted use after free: done (memcheck decides)\n");
  return 0;
}
