// AnyHeap (any_heap.cuh) on the GPU (label gpu; SKIPPED without a GPU), over rw-malloc and
// cuda-malloc: creation, the do-all's snapshot semantics, deletion and compaction, subtypes,
// device_do, the array invariants (verify) on a consistent and on a corrupted state, overflow.
#include "common/any_heap.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "common/allocators.cuh"
#include "gpu_test.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"

// The test types live in a named namespace: in an unnamed one nvcc reports the DSL's unused
// members.
namespace heaplab::apps::any_heap_test {

struct Types;

/// An abstract base with two concrete subtypes of different sizes (a 1-byte first field, a
/// 32-byte array, a pointer field).
class Thing {
 public:
  HEAPLAB_SOA_ABSTRACT(Thing);
  HEAPLAB_SOA_FIELDS(Thing, (std::uint8_t, tag_), (std::uint32_t, id_));
  HEAPLAB_HD Thing(std::uint64_t id, std::uint8_t tag)
      : tag_(tag), id_(static_cast<std::uint32_t>(id)) {}

  /// Counts itself: seen[id] += 1.
  __device__ void count(unsigned* seen) { atomicAdd(&seen[id_], 1u); }  // order: relaxed (a tally)
  /// Deletes itself when its id is odd.
  template <class Ref>
  __device__ void delete_if_odd(Ref heap) {
    if (id_ % 2 == 1) heap.destroy(this);
  }
};

class Small : public Thing {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Small, Thing, (double, value_));
  HEAPLAB_HD explicit Small(std::uint64_t id) : Thing(id, 1), value_(0.5 * id) {}
  /// Makes one Small with id + offset (visited by no do-all that is running).
  template <class Ref>
  __device__ void spawn(Ref heap, std::uint32_t offset) {
    heap.template make<Small>(std::uint64_t{id_} + offset);
  }
  /// device_do body: sum += value_.
  __device__ void add_to(double* sum) { *sum += value_; }
  template <class Ref>
  __device__ void sum_all(Ref heap, double* out) {
    if (id_ != 0) return;
    double s = 0;
    heap.template device_do<Small, &Small::add_to>(&s);
    *out = s;
  }
};

class Large : public Thing {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Large, Thing, (soa::array<double, 4>, data_), (Large*, next_));
  HEAPLAB_HD explicit Large(std::uint64_t id) : Thing(id, 2), next_(nullptr) {
    for (int k = 0; k < 4; ++k) data_[k] = static_cast<double>(id + k);
  }
};

struct Types : soa::HeapTypes<Thing, Small, Large> {};

}  // namespace heaplab::apps::any_heap_test

namespace heaplab::apps {
namespace {

using any_heap_test::Large;
using any_heap_test::Small;
using any_heap_test::Thing;
using any_heap_test::Types;

constexpr std::uint64_t kPool = 64ull << 20;

/// CUDA fixes its device malloc heap when this file's module loads (allocators.cuh): the size is
/// set before the first test, whichever runs first.
class ReserveCudaMallocHeap : public ::testing::Environment {
 public:
  void SetUp() override {
    if (heaplab::testing::gpu_info().available) reserve_cuda_malloc({"cuda-malloc"}, kPool);
  }
};
::testing::Environment* const kReserve =
    ::testing::AddGlobalTestEnvironment(new ReserveCudaMallocHeap);

/// Ids visited by parallel_do<T, &Thing::count>, as a count per id below n.
template <class H, class T = Thing>
std::vector<unsigned> visits(H& heap, std::uint32_t n) {
  cudart::device_buffer<unsigned> seen(n, "visits");
  seen.set_zero_async(heap.stream());
  heap.template parallel_do<T, &Thing::count>(seen.data());
  return cudart::to_host(seen.data(), n, heap.stream());
}

template <class A>
class AnyHeapGpu : public ::testing::Test {};
using Allocators =
    ::testing::Types<malloc_family::RwMallocAdapter, malloc_family::CudaMallocAdapter>;
TYPED_TEST_SUITE(AnyHeapGpu, Allocators);

TYPED_TEST(AnyHeapGpu, CreatesVisitsDeletesAndCompacts) {
  HEAPLAB_REQUIRE_GPU();
  using H = AnyHeap<Types, TypeParam>;
  using R = typename H::Ref;
  H heap(kPool, 4096);
  heap.template parallel_new<Small>(1000);
  heap.template parallel_new<Large>(500);
  EXPECT_EQ(heap.template live<Thing>(), 1500u);
  EXPECT_EQ(heap.template live<Small>(), 1000u);
  EXPECT_EQ(heap.nulls(), 0u);
  EXPECT_EQ(heap.verify(), std::nullopt);
  // Every object once; Small ids 0..999 and Large ids 0..499 overlap: 2 visits below 500.
  auto v = visits(heap, 1000);
  for (std::uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(v[i], i < 500 ? 2u : 1u) << "id " << i;
  // Deleting the odd ones (each deletes itself) and compacting.
  heap.template parallel_do<Thing, &Thing::delete_if_odd<R>>(heap.ref());
  EXPECT_EQ(heap.template live<Thing>(), 750u);
  EXPECT_EQ(heap.verify(), std::nullopt);
  v = visits(heap, 1000);
  for (std::uint32_t i = 0; i < 1000; ++i)
    ASSERT_EQ(v[i], i % 2 == 1 ? 0u : (i < 500 ? 2u : 1u)) << "id " << i;
}

TYPED_TEST(AnyHeapGpu, ObjectsMadeDuringADoAllAreNotVisitedByIt) {
  HEAPLAB_REQUIRE_GPU();
  using H = AnyHeap<Types, TypeParam>;
  using R = typename H::Ref;
  H heap(kPool, 4096);
  heap.template parallel_new<Small>(100);
  cudart::device_buffer<unsigned> seen(300, "visits");
  seen.set_zero_async(heap.stream());
  heap.template parallel_do<Small, &Small::spawn<R>>(heap.ref(), 100u);  // ids 100..199
  EXPECT_EQ(heap.template live<Small>(), 200u);
  auto const v = visits<H, Small>(heap, 300);
  for (std::uint32_t i = 0; i < 300; ++i) ASSERT_EQ(v[i], i < 200 ? 1u : 0u) << "id " << i;
  // device_do sees every Small: sum of 0.5 * id over 0..199.
  cudart::device_buffer<double> sum(1, "sum");
  heap.template parallel_do<Small, &Small::sum_all<R>>(heap.ref(), sum.data());
  EXPECT_DOUBLE_EQ(cudart::value_to_host(sum.data(), heap.stream()), 0.5 * 199 * 200 / 2);
  EXPECT_EQ(heap.verify(), std::nullopt);
}

TYPED_TEST(AnyHeapGpu, ObjectsAreAlignedForTheEncodingAndKeepTheirFields) {
  HEAPLAB_REQUIRE_GPU();
  using H = AnyHeap<Types, TypeParam>;
  EXPECT_EQ(H::template request_bytes<Small>() % 64, 0u);
  EXPECT_EQ(H::template request_bytes<Large>() % 64, 0u);
  H heap(kPool, 4096);
  heap.template parallel_new<Large>(300);
  double const expect = [] {
    double s = 0;
    for (int i = 0; i < 300; ++i) s += 0.5 * i;
    return s;
  }();
  heap.template parallel_new<Small>(300);
  cudart::device_buffer<double> sum(1, "sum");
  heap.template parallel_do<Small, &Small::sum_all<typename H::Ref>>(heap.ref(), sum.data());
  // Large objects between the Small ones did not overwrite them.
  EXPECT_DOUBLE_EQ(cudart::value_to_host(sum.data(), heap.stream()), expect);
}

TYPED_TEST(AnyHeapGpu, VerifyReportsACorruptedRecord) {
  HEAPLAB_REQUIRE_GPU();
  using H = AnyHeap<Types, TypeParam>;
  H heap(kPool, 4096);
  heap.template parallel_new<Small>(10);
  ASSERT_EQ(heap.verify(), std::nullopt);
  // Entry 3 := entry 4's pointer: object 4 is then at two entries and its record names 4.
  auto const& a            = heap.ref().arrays[Types::type_id<Small>];
  std::uint64_t const kept = cudart::value_to_host(a.objects + 3);
  HEAPLAB_CUDA_TRY(
      cudaMemcpy(a.objects + 3, a.objects + 4, sizeof(std::uint64_t), cudaMemcpyDeviceToDevice));
  auto const v = heap.verify();
  // Restored before the heap frees its objects (object 4 twice would be a double free).
  HEAPLAB_CUDA_TRY(cudaMemcpy(a.objects + 3, &kept, sizeof kept, cudaMemcpyHostToDevice));
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("any-record-index"), std::string::npos) << *v;
  EXPECT_EQ(heap.verify(), std::nullopt);
}

TYPED_TEST(AnyHeapGpu, OverflowIsAnErrorNotALoss) {
  HEAPLAB_REQUIRE_GPU();
  using H = AnyHeap<Types, TypeParam>;
  H heap(kPool, 64);
  heap.template parallel_new<Small>(100);
  cudart::device_buffer<unsigned> seen(100, "visits");
  auto const run = [&] { heap.template parallel_do<Small, &Thing::count>(seen.data()); };
  EXPECT_THROW(run(), std::runtime_error);
  auto const v = heap.verify();
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("any-no-overflow"), std::string::npos) << *v;
}

}  // namespace
}  // namespace heaplab::apps
