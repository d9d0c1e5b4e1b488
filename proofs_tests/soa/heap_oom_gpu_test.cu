// Near out-of-memory behaviour of the GPU heap: allocation until nullptr appears, then freeing
// everything, then allocating the full capacity again.
//
//  - Every thread allocates until it gets nullptr (a thread stops at its first nullptr). Every
//    non-null object must be valid and distinct (payload check: ids, cookies, locations), the OOM
//    counter must equal the number of nullptr answers, nothing may loop forever (timeout).
//  - After freeing everything every block is free (catalog, free bitmap full).
//  - The full capacity can be allocated again: capacity(Leaf) requests, each retried on nullptr
//    (near exhaustion a block being initialized by another thread is briefly invisible, so a
//    nullptr is possible while a slot is about to appear: HeapRef::allocate_raw); at the end
//    every block is a full Leaf block and one more request gets nullptr.
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "gpu_test.hpp"
#include "heap_test_support.hpp"
#include "heap_test_types.hpp"
#include "heaplab/check/oom_obligations.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/cookie.hpp"

using namespace heap_test;
namespace check = heaplab::check;

namespace {

constexpr std::uint32_t kPerThread = 64;  // slots of `out` per thread
constexpr double kTimeoutSeconds   = 20.0;

template <class T>
__device__ std::uint64_t bits(T const* p) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
}

/// Thread tid allocates objects of kind tid % 3 (Leaf, Node, Fat) with ids tid * 64 + j until it
/// gets nullptr or has made kPerThread objects. saw_null[tid] = 1 iff it got nullptr.
__global__ void allocate_until_null(Ref heap,
                                    std::uint32_t threads,
                                    std::uint64_t* out,
                                    std::uint32_t* saw_null) {
  std::uint32_t const tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= threads) return;
  std::uint32_t const kind = tid % 3u;
  for (std::uint32_t j = 0; j < kPerThread; ++j) {
    std::uint64_t const id = std::uint64_t{tid} * kPerThread + j;
    std::uint64_t p        = 0;
    if (kind == 0)
      p = bits(heap.make<Leaf>(id, j));
    else if (kind == 1)
      p = bits(heap.make<Node>(id, 1.0f));
    else
      p = bits(heap.make<Fat>(id, 1.0f));
    if (p == 0) {
      saw_null[tid] = 1;
      return;
    }
    out[id] = p;
  }
}

__global__ void free_all(Ref heap, std::uint64_t const* out, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    heap.destroy_raw(out[i]);
}

/// One Leaf per thread (id = tid), retrying up to max_attempts times on nullptr.
__global__ void allocate_leaves_with_retry(Ref heap,
                                           std::uint32_t n,
                                           std::uint32_t max_attempts,
                                           std::uint64_t* out,
                                           std::uint32_t* nulls) {
  std::uint32_t const tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  for (std::uint32_t a = 0; a < max_attempts; ++a) {
    Leaf* const p = heap.make<Leaf>(std::uint64_t{tid}, 1u);
    if (p != nullptr) {
      out[tid] = bits(p);
      return;
    }
    atomicAdd(nulls, 1u);
    __nanosleep(1000);
  }
}

__global__ void one_more_leaf(Ref heap, std::uint64_t* out) {
  out[0] = bits(heap.make<Leaf>(std::uint64_t{999999999}, 1u));
}

/// An allocation-only wave over the empty entries of `out` (slot i belongs to thread i /
/// per_thread): thread tid fills each of its empty slots with an object of kind (tid + wave) % 3
/// (Leaf, Node, Fat; id = wave * slots + i), or counts a null for that type in nulls[type id].
__global__ void allocation_wave(Ref heap,
                                std::uint32_t threads,
                                std::uint32_t per_thread,
                                std::uint32_t wave,
                                std::uint64_t* out,
                                unsigned long long* nulls) {
  std::uint32_t const tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= threads) return;
  std::uint32_t const kind  = (tid + wave) % 3u;
  std::uint64_t const slots = std::uint64_t{threads} * per_thread;
  for (std::uint32_t j = 0; j < per_thread; ++j) {
    std::uint64_t const i = std::uint64_t{tid} * per_thread + j;
    if (out[i] != 0) continue;
    std::uint64_t const id = wave * slots + i;
    std::uint64_t const p  = kind == 0   ? bits(heap.make<Leaf>(id, j))
                             : kind == 1 ? bits(heap.make<Node>(id, 1.0f))
                                         : bits(heap.make<Fat>(id, 1.0f));
    if (p != 0) {
      out[i] = p;
      continue;
    }
    unsigned const type = kind == 0 ? kLeaf : kind == 1 ? kNode : kFat;
    atomicAdd(&nulls[type], 1ull);
  }
}

/// Frees the objects of `out` whose hash(seed, i) falls below `percent` and empties their slots.
__global__ void free_some(
    Ref heap, std::uint64_t* out, std::uint64_t n, std::uint64_t seed, unsigned percent) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    h               = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull;
    if (out[i] == 0 || (h >> 40) % 100 >= percent) continue;
    heap.destroy_raw(out[i]);
    out[i] = 0;
  }
}

template <class T>
std::vector<T> to_host(T const* d, std::size_t n) {
  std::vector<T> h(n);
  HEAPLAB_CUDA_TRY(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace

TEST(HeapOomGpu, AllocateUntilNullFreeAllAndRefillTheFullCapacity) {
  HEAPLAB_REQUIRE_GPU();
  constexpr std::uint32_t kBlocks  = 48;
  constexpr std::uint32_t kThreads = 2048;
  auto heap                        = soa::Heap<Types>::with_blocks(kBlocks);
  std::uint64_t const slots        = std::uint64_t{kThreads} * kPerThread;

  std::uint64_t* d_out  = nullptr;
  std::uint32_t* d_null = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_out, slots * sizeof(std::uint64_t)));
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_null, kThreads * sizeof(std::uint32_t)));
  HEAPLAB_CUDA_TRY(cudaMemset(d_out, 0, slots * sizeof(std::uint64_t)));
  HEAPLAB_CUDA_TRY(cudaMemset(d_null, 0, kThreads * sizeof(std::uint32_t)));
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());

  // ---- phase 1: allocate until nullptr
  allocate_until_null<<<kThreads / 128, 128, 0, heap.stream()>>>(
      heap.ref(), kThreads, d_out, d_null);
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  wait_or_exit(heap.stream(), kTimeoutSeconds, "allocate-until-null kernel");
  heap.check_device_errors();
  auto const out      = to_host(d_out, slots);
  auto const saw_null = to_host(d_null, kThreads);
  std::uint64_t nulls = 0;
  for (auto s : saw_null) nulls += s;
  EXPECT_GT(nulls, 0u) << "the heap never ran out of memory: the test does not test OOM";
  EXPECT_EQ(heap.oom_count(), nulls) << "OOM counter vs nullptr answers";

  std::set<std::uint64_t> distinct;
  std::set<std::uint64_t> ids;
  for (std::uint64_t i = 0; i < slots; ++i) {
    if (out[i] == 0) continue;
    EXPECT_TRUE(heap.ref().contains(out[i])) << "object " << i;
    EXPECT_TRUE(distinct.insert(out[i]).second) << "pointer handed out twice: object " << i;
    ids.insert(i);
  }
  {
    auto const snap = heap.snapshot_with_payloads();
    expect_catalog_holds(snap, "when the heap is (nearly) full");
    auto const objects = objects_by_id(snap);
    EXPECT_EQ(objects.size(), ids.size());
    for (std::uint64_t id : ids) {
      auto const it = objects.find(id);
      ASSERT_NE(it, objects.end()) << "object " << id << " handed out but not in the heap";
      EXPECT_EQ(it->second.record->cookie, heaplab::core::cookie_of(id));
      EXPECT_EQ(it->second.at, heap.ref().locate(out[id]));
      EXPECT_EQ(it->second.type,
                static_cast<std::uint32_t>((id / kPerThread) % 3u == 0   ? kLeaf
                                           : (id / kPerThread) % 3u == 1 ? kNode
                                                                         : kFat));
    }
    auto const stats = heap.statistics();
    EXPECT_EQ(stats.used_slots, ids.size());
    EXPECT_LE(stats.free_blocks, 0u + kBlocks);
  }

  // ---- phase 2: free everything
  free_all<<<64, 256, 0, heap.stream()>>>(heap.ref(), d_out, slots);
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  wait_or_exit(heap.stream(), kTimeoutSeconds, "free kernel");
  heap.check_device_errors();
  {
    auto const snap = heap.snapshot_with_payloads();
    expect_catalog_holds(snap, "after freeing everything");
    EXPECT_EQ(check::count_set(snap.free_blocks), kBlocks) << "every block must be free again";
    EXPECT_TRUE(objects_by_id(snap).empty());
  }

  // ---- phase 3: the full capacity again
  heap.reset_oom_count();
  std::uint32_t const capacity = kBlocks * Types::capacity<Leaf>;
  HEAPLAB_CUDA_TRY(cudaMemset(d_out, 0, slots * sizeof(std::uint64_t)));
  HEAPLAB_CUDA_TRY(cudaMemset(d_null, 0, sizeof(std::uint32_t)));
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  allocate_leaves_with_retry<<<(capacity + 127) / 128, 128, 0, heap.stream()>>>(
      heap.ref(), capacity, 1000, d_out, d_null);
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  wait_or_exit(heap.stream(), kTimeoutSeconds, "refill kernel");
  heap.check_device_errors();
  auto const refill           = to_host(d_out, capacity);
  std::uint32_t const retried = to_host(d_null, 1)[0];
  std::set<std::uint64_t> refilled;
  for (std::uint32_t i = 0; i < capacity; ++i) {
    ASSERT_NE(refill[i], 0u) << "request " << i << " never got memory although the heap has room";
    EXPECT_TRUE(refilled.insert(refill[i]).second);
  }
  EXPECT_EQ(heap.oom_count(), retried);
  {
    auto const snap = heap.snapshot_with_payloads();
    expect_catalog_holds(snap, "after refilling the full capacity");
    EXPECT_EQ(check::count_set(snap.free_blocks), 0u);
    EXPECT_EQ(check::count_set(snap.allocated[kLeaf]), kBlocks);
    EXPECT_EQ(check::count_set(snap.active[kLeaf]), 0u) << "every block is full";
    EXPECT_EQ(objects_by_id(snap).size(), capacity);
  }
  one_more_leaf<<<1, 1, 0, heap.stream()>>>(heap.ref(), d_out);
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  wait_or_exit(heap.stream(), kTimeoutSeconds, "one more allocation");
  EXPECT_EQ(to_host(d_out, 1)[0], 0u) << "a full heap handed out an object";
  EXPECT_EQ(heap.oom_count(), retried + 1u);

  HEAPLAB_CUDA_TRY(cudaFree(d_out));
  HEAPLAB_CUDA_TRY(cudaFree(d_null));
}

TEST(HeapOomGpu, TinyHeapManyWarpsSameTypeNeverHangs) {
  HEAPLAB_REQUIRE_GPU();
  // One block for 64 Leafs, 4096 threads competing: the slow path (block initialization,
  // invalidation races) is hammered at exhaustion.
  auto heap                        = soa::Heap<Types>::with_blocks(1);
  constexpr std::uint32_t kThreads = 4096;
  std::uint64_t* d_out             = nullptr;
  std::uint32_t* d_null            = nullptr;
  std::uint64_t const slots        = std::uint64_t{kThreads} * kPerThread;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_out, slots * sizeof(std::uint64_t)));
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_null, kThreads * sizeof(std::uint32_t)));
  for (int round = 0; round < 5; ++round) {
    heap.reset();
    HEAPLAB_CUDA_TRY(cudaMemset(d_out, 0, slots * sizeof(std::uint64_t)));
    HEAPLAB_CUDA_TRY(cudaMemset(d_null, 0, kThreads * sizeof(std::uint32_t)));
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
    allocate_until_null<<<kThreads / 256, 256, 0, heap.stream()>>>(
        heap.ref(), kThreads, d_out, d_null);
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    wait_or_exit(heap.stream(), kTimeoutSeconds, "allocation on a one-block heap");
    auto const out      = to_host(d_out, slots);
    auto const saw_null = to_host(d_null, kThreads);
    std::uint64_t nulls = 0, objects = 0;
    for (auto s : saw_null) nulls += s;
    for (auto p : out) objects += p != 0 ? 1 : 0;
    EXPECT_EQ(heap.oom_count(), nulls);
    auto const snap = heap.snapshot_with_payloads();
    expect_catalog_holds(snap, "one-block heap");
    EXPECT_EQ(objects_by_id(snap).size(), objects);
    EXPECT_LE(objects, 64u);
    free_all<<<16, 256, 0, heap.stream()>>>(heap.ref(), d_out, slots);
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    wait_or_exit(heap.stream(), kTimeoutSeconds, "free on a one-block heap");
    EXPECT_EQ(check::count_set(heap.snapshot().free_blocks), 1u);
  }
  HEAPLAB_CUDA_TRY(cudaFree(d_out));
  HEAPLAB_CUDA_TRY(cudaFree(d_null));
}

// Issue 34, class 1: out-of-memory legitimacy on large heaps under real GPU contention. Heaps of
// 65..2^16 blocks (3-level hierarchies from 4,097 on) are filled past their capacity by one launch
// of many warps with three types at once, a random part is freed, and the heap is refilled, three
// times; after every allocation-only wave the nulls of each type must be justified by the
// snapshots before and after it (check/oom_obligations.hpp: no block free throughout, no slot of a
// T block free throughout) and the catalog must hold. The planted bug free_search_first_word_only
// (a free-block search that sees blocks 0..63 only) fails it on every heap here.
TEST(HeapOomGpu, LargeHeapsFilledFromManyWarpsNeverAnswerAnUnjustifiedNull) {
  HEAPLAB_REQUIRE_GPU();
  std::mt19937_64 draw(20261201);
  std::vector<std::uint32_t> sizes{65, 4097, 65536};
  for (int k = 0; k < 3; ++k)  // log-uniform in [65, 65536]
    sizes.push_back(static_cast<std::uint32_t>(std::lround(
        65.0 * std::pow(65536.0 / 65.0, std::uniform_real_distribution<>(0, 1)(draw)))));
  constexpr std::uint32_t kPer = 8;
  std::uint32_t const max_cap =
      std::max({Types::capacity<Leaf>, Types::capacity<Node>, Types::capacity<Fat>});
  for (std::uint32_t const m : sizes) {
    SCOPED_TRACE("M = " + std::to_string(m));
    auto heap = soa::Heap<Types>::with_blocks(m);
    // 1.3 x the most objects the heap can hold: every wave ends past the edge of memory.
    std::uint32_t const threads = static_cast<std::uint32_t>((1.3 * m * max_cap + kPer - 1) / kPer);
    std::uint64_t const slots   = std::uint64_t{threads} * kPer;
    std::uint64_t* d_out        = nullptr;
    unsigned long long* d_nulls = nullptr;
    HEAPLAB_CUDA_TRY(cudaMalloc(&d_out, slots * sizeof(std::uint64_t)));
    HEAPLAB_CUDA_TRY(cudaMalloc(&d_nulls, Types::num_types * sizeof(unsigned long long)));
    HEAPLAB_CUDA_TRY(cudaMemset(d_out, 0, slots * sizeof(std::uint64_t)));
    for (std::uint32_t wave = 0; wave < 3; ++wave) {
      SCOPED_TRACE("wave " + std::to_string(wave));
      HEAPLAB_CUDA_TRY(cudaMemset(d_nulls, 0, Types::num_types * sizeof(unsigned long long)));
      HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
      check::HeapSnapshot const before = heap.snapshot();
      std::uint64_t const oom_before   = heap.oom_count();
      allocation_wave<<<(threads + 255) / 256, 256, 0, heap.stream()>>>(
          heap.ref(), threads, kPer, wave, d_out, d_nulls);
      HEAPLAB_CUDA_TRY(cudaGetLastError());
      wait_or_exit(heap.stream(), kTimeoutSeconds, "allocation wave on a large heap");
      heap.check_device_errors();
      check::HeapSnapshot const after = heap.snapshot();
      auto const counts               = to_host(d_nulls, Types::num_types);
      std::vector<std::uint64_t> const nulls(counts.begin(), counts.end());
      std::uint64_t total = 0;
      for (auto n : nulls) total += n;
      EXPECT_GT(total, 0u) << "the wave did not reach the edge of memory: it tests nothing";
      EXPECT_EQ(heap.oom_count() - oom_before, total) << "OOM counter vs null answers";
      for (auto const& v : check::check_oom_justified(before, after, nulls))
        ADD_FAILURE() << v.to_string();
      expect_catalog_holds(after, "after an allocation wave past the edge of memory");
      free_some<<<256, 256, 0, heap.stream()>>>(heap.ref(), d_out, slots, draw(), 20 + 20 * wave);
      HEAPLAB_CUDA_TRY(cudaGetLastError());
      wait_or_exit(heap.stream(), kTimeoutSeconds, "freeing part of a large heap");
      heap.check_device_errors();
    }
    HEAPLAB_CUDA_TRY(cudaFree(d_out));
    HEAPLAB_CUDA_TRY(cudaFree(d_nulls));
  }
}
