// The allocation example of docs/allocator.md ("Example: a population that divides and dies"),
// compiled and run. The code between the BEGIN/END markers is the documentation's, verbatim.
//
// Its outcome is fully determined by parallel_do's semantics (objects created during a
// parallel_do are not visited by it): 1000 bacteria with energy 5; step 1: 5 -> 4, each divides
// into two of energy 2 (the 1000 children are not stepped); step 2: 2000 x (2 -> 1);
// step 3: 2000 x (1 -> 0): all die.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>

// BEGIN docs/allocator.md example
#include "heaplab/soa/heap.cuh"  // Heap, HeapRef (nvcc)
#include "heaplab/soa/tracked.hpp"

namespace soa = heaplab::soa;

struct Types;  // the heap's type list, defined once the classes are complete

class Bacterium : public soa::Tracked {  // Tracked: an id and a cookie, for snapshots
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Bacterium, soa::Tracked, (float, energy_));

  HEAPLAB_HD Bacterium(std::uint64_t id, float energy) : Tracked(id), energy_(energy) {}

  // Methods that allocate or delete take the heap as an argument; defined below Types.
  __device__ void step(soa::HeapRef<Types> heap, unsigned long long* next_id);
  __device__ void add_energy(float* total) { *total += energy_; }
};

struct Types : soa::HeapTypes<soa::Tracked, Bacterium> {};

__device__ void Bacterium::step(soa::HeapRef<Types> heap, unsigned long long* next_id) {
  energy_ -= 1.0f;
  if (energy_ <= 0.0f) {  // die: a method may delete its own object
    heap.destroy(this);
    return;
  }
  if (energy_ >= 4.0f) {  // divide: this parallel_do does not visit the child
    energy_ /= 2.0f;
    float const half = energy_;
    if (heap.make<Bacterium>(atomicAdd(next_id, 1ull), half) == nullptr)
      energy_ *= 2.0f;  // out of memory: nothing was created (counted in heap.oom_count())
  }
}

__global__ void total_energy(soa::HeapRef<Types> heap, float* out) {
  float sum = 0.0f;
  heap.device_do<Bacterium, &Bacterium::add_energy>(&sum);  // sequential loop in this thread
  *out = sum;
}
// END docs/allocator.md example

#include "gpu_test.hpp"
#include "heap_test_support.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/cuda/error.hpp"

TEST(HeapDocExampleGpu, PopulationDividesThenDies) {
  HEAPLAB_REQUIRE_GPU();
  // BEGIN docs/allocator.md host example
  auto heap = soa::Heap<Types>::with_bytes(std::uint64_t{16} << 20);  // 16 MiB of blocks
  unsigned long long* next_id = nullptr;
  float* total                = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&next_id, sizeof *next_id));
  HEAPLAB_CUDA_TRY(cudaMalloc(&total, sizeof *total));
  unsigned long long const first_free_id = 1000;
  HEAPLAB_CUDA_TRY(
      cudaMemcpy(next_id, &first_free_id, sizeof first_free_id, cudaMemcpyHostToDevice));

  heap.parallel_new<Bacterium>(1000, 5.0f);  // Bacterium(i, 5.0f) for i = 0 .. 999
  heap.parallel_do<Bacterium, &Bacterium::step>(heap.ref(), next_id);
  total_energy<<<1, 1, 0, heap.stream()>>>(heap.ref(), total);
  soa::HeapStatistics const stats         = heap.statistics();  // used slots, F, OOM count
  heaplab::check::HeapSnapshot const snap = heap.snapshot_with_payloads();  // ids, cookies
  // END docs/allocator.md host example

  float h_total = 0;
  HEAPLAB_CUDA_TRY(cudaMemcpy(&h_total, total, sizeof h_total, cudaMemcpyDeviceToHost));
  EXPECT_EQ(stats.used_slots, 2000u);
  EXPECT_EQ(stats.oom_count, 0u);
  EXPECT_EQ(h_total, 4000.0f);  // 2000 x 2.0
  heap_test::expect_catalog_holds(snap, "after step 1");
  auto const objects = heap_test::objects_by_id(snap);
  ASSERT_EQ(objects.size(), 2000u);
  for (std::uint64_t id = 0; id < 2000; ++id) EXPECT_EQ(objects.count(id), 1u) << "id " << id;

  heap.parallel_do<Bacterium, &Bacterium::step>(heap.ref(), next_id);
  total_energy<<<1, 1, 0, heap.stream()>>>(heap.ref(), total);
  HEAPLAB_CHECK_LAUNCH();
  HEAPLAB_CUDA_TRY(cudaMemcpy(&h_total, total, sizeof h_total, cudaMemcpyDeviceToHost));
  EXPECT_EQ(heap.statistics().used_slots, 2000u);
  EXPECT_EQ(h_total, 2000.0f);

  heap.parallel_do<Bacterium, &Bacterium::step>(heap.ref(), next_id);
  auto const after = heap.snapshot();
  heap_test::expect_catalog_holds(after, "after everything died");
  EXPECT_EQ(heaplab::check::count_set(after.free_blocks), heap.num_blocks());
  HEAPLAB_CUDA_TRY(cudaFree(next_id));
  HEAPLAB_CUDA_TRY(cudaFree(total));
}
