// heaplab's survey frameworks (bench/survey, docs/survey.md) without the survey: AdapterManager
// over RW_malloc and over the object heap's size-class wrapper (ObjectHeapAdapter), used as the
// survey's programs use a manager (made on the host, copied by value into every launch).
// - Grants of sizes 1 .. 8192 B from 40,000 threads: none null, 16-byte aligned, pairwise disjoint
//   (sorted by address, each ends before the next begins), and every byte written by its thread
//   reads back.
// - Frees give memory back: 24 rounds of allocate-all / free-all in a pool that holds only a few
//   rounds at once, every request granted in every round.
// - A copy of the manager going out of scope frees nothing (the owner still allocates after it).
// - The object heap's size classes: 1..16 -> 0, 17..32 -> 1, 4097..8192 -> 9.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/families/malloc/gpu/rw_malloc_adapter.cuh"
#include "object_heap_adapter.cuh"
#include "survey_instance.cuh"

namespace {

namespace hs = heaplab::survey;
namespace hc = heaplab::cudart;

__host__ __device__ std::uint32_t request_bytes(std::uint32_t tid, std::uint32_t max_bytes) {
  return 1 + (tid * 2654435761u) % max_bytes;
}

template <class Manager>
__global__ void allocate_kernel(Manager mm,
                                std::uint64_t* out,
                                std::uint32_t n,
                                std::uint32_t max_bytes) {
  std::uint32_t const tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  std::uint32_t const bytes = request_bytes(tid, max_bytes);
  auto* const p             = static_cast<unsigned char*>(mm.malloc(bytes));
  out[tid]                  = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
  if (p == nullptr) return;
  for (std::uint32_t i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(tid + i);
}

__global__ void verify_kernel(std::uint64_t const* ptrs,
                              std::uint32_t n,
                              std::uint32_t max_bytes,
                              unsigned long long* wrong) {
  std::uint32_t const tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n || ptrs[tid] == 0) return;
  auto const* const p =
      reinterpret_cast<unsigned char const*>(static_cast<std::uintptr_t>(ptrs[tid]));
  std::uint32_t const bytes = request_bytes(tid, max_bytes);
  for (std::uint32_t i = 0; i < bytes; ++i)
    if (p[i] != static_cast<unsigned char>(tid + i)) atomicAdd(wrong, 1ull);
}

template <class Manager>
__global__ void free_kernel(Manager mm, std::uint64_t const* ptrs, std::uint32_t n) {
  std::uint32_t const tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  mm.free(reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptrs[tid])));
}

constexpr unsigned kBlock = 256;

template <class Manager>
std::vector<std::uint64_t> allocate(Manager const& mm,
                                    hc::device_buffer<std::uint64_t>& d,
                                    std::uint32_t n,
                                    std::uint32_t max_bytes) {
  allocate_kernel<<<(n + kBlock - 1) / kBlock, kBlock>>>(mm, d.data(), n, max_bytes);
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  std::vector<std::uint64_t> h(n);
  hc::copy_to_host_async(h.data(), d.data(), n, nullptr);
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  return h;
}

template <class Manager>
void free_all(Manager const& mm, hc::device_buffer<std::uint64_t>& d, std::uint32_t n) {
  free_kernel<<<(n + kBlock - 1) / kBlock, kBlock>>>(mm, d.data(), n);
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
}

template <class Adapter>
class SurveyManagerGpu : public ::testing::Test {
 protected:
  void SetUp() override { HEAPLAB_REQUIRE_GPU(); }
};

using Adapters = ::testing::Types<heaplab::malloc_family::RwMallocAdapter, hs::ObjectHeapAdapter>;
TYPED_TEST_SUITE(SurveyManagerGpu, Adapters);

TYPED_TEST(SurveyManagerGpu, GrantsAreDisjointAlignedAndKeepTheirBytes) {
  constexpr std::uint32_t n = 40000, max_bytes = 8192;
  hs::AdapterManager<TypeParam> const mm(std::uint64_t{1} << 30);
  hc::device_buffer<std::uint64_t> d(n, "pointers");
  std::vector<std::uint64_t> const p = allocate(mm, d, n, max_bytes);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> extents;
  for (std::uint32_t t = 0; t < n; ++t) {
    ASSERT_NE(p[t], 0u) << "thread " << t << " got null in a 1 GiB pool";
    ASSERT_EQ(p[t] % 16, 0u) << "thread " << t;
    extents.emplace_back(p[t], p[t] + request_bytes(t, max_bytes));
  }
  std::sort(extents.begin(), extents.end());
  for (std::size_t i = 1; i < extents.size(); ++i)
    ASSERT_LE(extents[i - 1].second, extents[i].first) << "two grants overlap";
  hc::device_buffer<unsigned long long> wrong(1, "wrong");
  HEAPLAB_CUDA_TRY(cudaMemset(wrong.data(), 0, sizeof(unsigned long long)));
  verify_kernel<<<(n + kBlock - 1) / kBlock, kBlock>>>(d.data(), n, max_bytes, wrong.data());
  unsigned long long w = 1;
  HEAPLAB_CUDA_TRY(cudaMemcpy(&w, wrong.data(), sizeof w, cudaMemcpyDeviceToHost));
  EXPECT_EQ(w, 0u) << "bytes that did not read back";
  free_all(mm, d, n);
}

TYPED_TEST(SurveyManagerGpu, FreesGiveMemoryBack) {
  // 20,000 x up to 256 B is at most 5 MB a round (the object heap: size classes up to 256 B, its
  // small heap has half of the 32 MiB pool): a few rounds fit, 24 only if frees recycle.
  constexpr std::uint32_t n = 20000, max_bytes = 256;
  hs::AdapterManager<TypeParam> const mm(std::uint64_t{32} << 20);
  hc::device_buffer<std::uint64_t> d(n, "pointers");
  for (int round = 0; round < 24; ++round) {
    std::vector<std::uint64_t> const p = allocate(mm, d, n, max_bytes);
    ASSERT_EQ(std::count(p.begin(), p.end(), 0u), 0) << "round " << round;
    free_all(mm, d, n);
  }
}

TYPED_TEST(SurveyManagerGpu, ACopyOwnsNothing) {
  constexpr std::uint32_t n = 1000, max_bytes = 64;
  hs::AdapterManager<TypeParam> const mm(std::uint64_t{16} << 20);
  { hs::AdapterManager<TypeParam> const copy(mm); }  // its destructor must not free the pool
  hc::device_buffer<std::uint64_t> d(n, "pointers");
  std::vector<std::uint64_t> const p = allocate(mm, d, n, max_bytes);
  EXPECT_EQ(std::count(p.begin(), p.end(), 0u), 0);
  free_all(mm, d, n);
}

__global__ void size_class_kernel(std::uint32_t const* bytes, std::uint32_t* out, int n) {
  int const i = threadIdx.x;
  if (i < n) out[i] = hs::ObjectHeapAdapter::size_class(bytes[i]);
}

TEST(ObjectHeapAdapterGpu, SizeClasses) {
  HEAPLAB_REQUIRE_GPU();
  std::vector<std::uint32_t> const bytes{1, 16, 17, 32, 33, 512, 513, 1024, 4097, 8192};
  std::vector<std::uint32_t> const want{0, 0, 1, 1, 2, 5, 6, 6, 9, 9};
  hc::device_buffer<std::uint32_t> db(bytes.size(), "bytes"), dout(bytes.size(), "classes");
  HEAPLAB_CUDA_TRY(cudaMemcpy(db.data(), bytes.data(), bytes.size() * 4, cudaMemcpyHostToDevice));
  size_class_kernel<<<1, 32>>>(db.data(), dout.data(), static_cast<int>(bytes.size()));
  std::vector<std::uint32_t> got(bytes.size());
  HEAPLAB_CUDA_TRY(cudaMemcpy(got.data(), dout.data(), got.size() * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, want);
}

}  // namespace
