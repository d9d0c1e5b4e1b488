// Regression test for the Hopper hang (ARCHITECTURE.md: DynaSOAr's warp-leader allocation path
// assumes lock-step warps and hangs under independent thread scheduling). Heavily divergent
// allocation in every warp: per-lane trip counts 0..63 (a permutation of the lanes), the type
// changing per lane and per iteration, allocations in divergent branches and with a runtime
// type id, lanes sleeping for lane-dependent times and lanes exiting in the middle of the loop.
//
// Each kernel is guarded by a host-side timeout (heap_test_support.hpp wait_or_exit): a hang
// ends the binary with a message instead of blocking it. Then the result must be exact: every
// request served (the heap is large enough), every pointer distinct, the live objects exactly
// the expected ids with intact cookies, the per-type counts exact, the catalog holding.
// Expected values come from the same small formulas the kernel uses (trip count, type, exit).
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "heap_test_support.hpp"
#include "heap_test_types.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/cookie.hpp"
#include "heaplab/core/object_pointer.hpp"

using namespace heap_test;
namespace check = heaplab::check;

namespace {

constexpr std::uint32_t kMaxTrips = 64;
constexpr double kTimeoutSeconds  = 20.0;

// ---- the schedule, shared by kernel and host (plain arithmetic, not code under test)

/// Trips of a lane: 0..63; lanes of one warp get distinct values (7 is odd, so lane * 7 mod 64
/// is a permutation of the 32 lanes onto distinct residues).
__host__ __device__ std::uint32_t trips_of(std::uint32_t lane,
                                           std::uint32_t warp,
                                           std::uint32_t salt) {
  return (lane * 7u + warp * 13u + salt) % kMaxTrips;
}
/// 0 Leaf, 1 Node, 2 Fat: changes per lane and per iteration.
__host__ __device__ std::uint32_t kind_of(std::uint32_t lane, std::uint32_t warp, std::uint32_t j) {
  return (lane + j + warp) % 3u;
}
/// Lanes with lane % 7 == 3 return right after iteration trips / 2.
__host__ __device__ bool exits_after(std::uint32_t lane, std::uint32_t j, std::uint32_t trips) {
  return lane % 7u == 3u && j == trips / 2u;
}
__host__ __device__ std::uint64_t id_of(std::uint32_t tid, std::uint32_t j) {
  return std::uint64_t{tid} * kMaxTrips + j;
}

__host__ __device__ std::uint32_t type_of_kind(std::uint32_t kind) {
  return kind == 0 ? kLeaf : kind == 1 ? kNode : kFat;
}

template <class T>
__device__ std::uint64_t bits(T const* p) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
}

/// Variant A: a separate make<T> call site per type, in divergent branches.
/// Variant B: one allocate_raw(type) with a runtime type id (the match splits the warp), then
/// the constructor of the right type.
__global__ void divergent_allocations(Ref heap,
                                      std::uint64_t* out,
                                      std::uint32_t salt,
                                      bool runtime_type) {
  std::uint32_t const tid   = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint32_t const lane  = tid % 32u;
  std::uint32_t const warp  = tid / 32u;
  std::uint32_t const trips = trips_of(lane, warp, salt);
  for (std::uint32_t j = 0; j < trips; ++j) {
    std::uint32_t const kind = kind_of(lane, warp, j);
    std::uint64_t const id   = id_of(tid, j);
    std::uint64_t p          = 0;
    if (runtime_type) {
      p = heap.allocate_raw(type_of_kind(kind));
      if (p != 0) {
        if (kind == 0)
          Ref::construct(reinterpret_cast<Leaf*>(p), id, j);
        else if (kind == 1)
          Ref::construct(reinterpret_cast<Node*>(p), id, 1.0f);
        else
          Ref::construct(reinterpret_cast<Fat*>(p), id, 2.0f);
      }
    } else if (kind == 0) {
      p = bits(heap.make<Leaf>(id, j));
    } else if (kind == 1) {
      p = bits(heap.make<Node>(id, 1.0f));
    } else {
      if (lane % 2u == 0u) __nanosleep(100u * (lane % 5u));  // even more divergence
      p = bits(heap.make<Fat>(id, 2.0f));
    }
    out[id] = p;
    if ((lane ^ j) % 5u == 0u) __nanosleep((lane * 37u + j * 11u) % 500u);
    if (exits_after(lane, j, trips)) return;
  }
}

/// Frees every object whose id is set in out (one thread per id slot range).
__global__ void free_all(Ref heap, std::uint64_t const* out, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    heap.destroy_raw(out[i]);
}

/// After a kernel that freed every object: no device error, the catalog holds, every block free.
void expect_empty(soa::Heap<Types>& heap) {
  heap.check_device_errors();
  auto const empty = heap.snapshot();
  expect_catalog_holds(empty, "after freeing everything");
  EXPECT_EQ(check::count_set(empty.free_blocks), heap.num_blocks());
}

struct Expected {
  std::set<std::uint64_t> ids;
  std::uint64_t per_type[3] = {0, 0, 0};
};

Expected expected_objects(std::uint32_t threads, std::uint32_t salt) {
  Expected e;
  for (std::uint32_t tid = 0; tid < threads; ++tid) {
    std::uint32_t const lane = tid % 32u, warp = tid / 32u, trips = trips_of(lane, warp, salt);
    for (std::uint32_t j = 0; j < trips; ++j) {
      e.ids.insert(id_of(tid, j));
      ++e.per_type[kind_of(lane, warp, j)];
      if (exits_after(lane, j, trips)) break;
    }
  }
  return e;
}

void run_round(soa::Heap<Types>& heap,
               std::uint32_t grid,
               std::uint32_t block,
               std::uint32_t salt,
               bool runtime_type) {
  SCOPED_TRACE("grid " + std::to_string(grid) + " x " + std::to_string(block) + ", salt " +
               std::to_string(salt) + (runtime_type ? ", runtime type" : ", per-type call sites"));
  std::uint32_t const threads = grid * block;
  std::uint64_t const slots   = std::uint64_t{threads} * kMaxTrips;
  std::uint64_t* d_out        = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_out, slots * sizeof(std::uint64_t)));
  HEAPLAB_CUDA_TRY(cudaMemset(d_out, 0, slots * sizeof(std::uint64_t)));
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());

  divergent_allocations<<<grid, block, 0, heap.stream()>>>(heap.ref(), d_out, salt, runtime_type);
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  wait_or_exit(heap.stream(), kTimeoutSeconds, "divergent allocation kernel");
  HEAPLAB_CUDA_TRY(cudaStreamSynchronize(heap.stream()));  // surfaces a kernel fault
  heap.check_device_errors();

  std::vector<std::uint64_t> out(slots);
  HEAPLAB_CUDA_TRY(
      cudaMemcpy(out.data(), d_out, slots * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  Expected const want = expected_objects(threads, salt);
  EXPECT_EQ(heap.oom_count(), 0u) << "the heap is large enough for every request";

  // Every request served, every pointer distinct, nothing written where no request was made.
  std::set<std::uint64_t> distinct;
  for (std::uint64_t i = 0; i < slots; ++i) {
    bool const requested = want.ids.count(i) != 0;
    if (!requested) {
      EXPECT_EQ(out[i], 0u) << "slot " << i << " written without a request";
      continue;
    }
    ASSERT_NE(out[i], 0u) << "request " << i << " got nullptr";
    EXPECT_TRUE(heap.ref().contains(out[i])) << "request " << i;
    EXPECT_TRUE(distinct.insert(out[i]).second) << "pointer handed out twice (request " << i << ")";
  }

  auto const snap = heap.snapshot_with_payloads();
  expect_catalog_holds(snap, "after divergent allocation");
  auto const objects = objects_by_id(snap);
  ASSERT_EQ(objects.size(), want.ids.size());
  for (std::uint64_t id : want.ids) {
    auto const it = objects.find(id);
    ASSERT_NE(it, objects.end()) << "object " << id << " missing";
    EXPECT_EQ(it->second.record->cookie, heaplab::core::cookie_of(id));
    EXPECT_EQ(it->second.at, heap.ref().locate(out[id])) << "object " << id;
  }
  auto const by_type = count_by_type(snap);
  EXPECT_EQ(by_type[kLeaf], want.per_type[0]);
  EXPECT_EQ(by_type[kNode], want.per_type[1]);
  EXPECT_EQ(by_type[kFat], want.per_type[2]);

  free_all<<<256, 256, 0, heap.stream()>>>(heap.ref(), d_out, slots);
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  wait_or_exit(heap.stream(), kTimeoutSeconds, "free kernel");
  expect_empty(heap);
  HEAPLAB_CUDA_TRY(cudaFree(d_out));
}

}  // namespace

TEST(HeapItsGpu, DivergentAllocationInOneWarpTerminatesAndIsExact) {
  HEAPLAB_REQUIRE_GPU();
  // 8192 threads x up to 63 objects of three sizes: about 2.4e5 objects in about 9000 blocks (32768
  // leave room for fragmentation).
  auto heap = soa::Heap<Types>::with_blocks(32768);
  run_round(heap, 64, 128, 0, false);
  run_round(heap, 64, 128, 5, true);
}

TEST(HeapItsGpu, SingleWarpWithEveryTripCount) {
  HEAPLAB_REQUIRE_GPU();
  // One warp alone: no other warp can mask a hang inside it. Every salt shifts which lanes
  // have which trip count and type.
  auto heap = soa::Heap<Types>::with_blocks(512);
  for (std::uint32_t salt = 0; salt < 8; ++salt) run_round(heap, 1, 32, salt * 9u, salt % 2u == 1u);
}

TEST(HeapItsGpu, OddBlockShapesAndPartialWarps) {
  HEAPLAB_REQUIRE_GPU();
  // 48 and 100 threads per block: the last warp of every block is partial.
  auto heap = soa::Heap<Types>::with_blocks(8192);
  run_round(heap, 37, 48, 3, false);
  run_round(heap, 29, 100, 11, true);
}

// ---- the ablation switches (HeapOptions::coalesce_requests, rotate_bitmaps; DynaSOAr
// Fig. 12C): the same divergent workload must stay exact with either off, and each switch must
// take effect.

TEST(HeapItsGpu, AblationSwitchesStayExact) {
  HEAPLAB_REQUIRE_GPU();
  for (int variant = 0; variant < 3; ++variant) {
    soa::HeapOptions options;
    options.coalesce_requests = variant == 1;  // 0: NoCoal, 1: NoShift, 2: NoCoal-NoShift
    options.rotate_bitmaps    = variant == 0;
    SCOPED_TRACE(std::string("coalesce_requests ") + (options.coalesce_requests ? "on" : "off") +
                 ", rotate_bitmaps " + (options.rotate_bitmaps ? "on" : "off"));
    if (!heaplab::testing::under_cuda_tool()) {  // under a sanitizer: the one-warp round only
      auto heap = soa::Heap<Types>::with_blocks(32768, options);
      run_round(heap, 64, 128, 0, false);
      run_round(heap, 64, 128, 5, true);
    }
    auto one_warp = soa::Heap<Types>::with_blocks(512, options);
    run_round(one_warp, 1, 32, 9, true);
  }
}

namespace {

/// Each of the launch's threads makes one Leaf; out[tid] = its pointer.
__global__ void one_leaf_each(Ref heap, std::uint64_t* out) {
  std::uint32_t const tid = blockIdx.x * blockDim.x + threadIdx.x;
  out[tid]                = bits(heap.make<Leaf>(tid, 0u));
}

/// Distinct blocks the 32 Leafs of one warp land in, on an empty heap.
std::size_t blocks_of_one_warp(soa::Heap<Types>& heap) {
  heap.reset();
  std::uint64_t* d_out = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_out, 32 * sizeof(std::uint64_t)));
  one_leaf_each<<<1, 32, 0, heap.stream()>>>(heap.ref(), d_out);
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  wait_or_exit(heap.stream(), kTimeoutSeconds, "one Leaf per lane");
  std::vector<std::uint64_t> out(32);
  HEAPLAB_CUDA_TRY(
      cudaMemcpy(out.data(), d_out, 32 * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  HEAPLAB_CUDA_TRY(cudaFree(d_out));
  std::set<std::uint64_t> blocks;
  for (std::uint64_t p : out) {
    EXPECT_NE(p, 0u);
    blocks.insert(heaplab::core::pointer_block_address(p));
  }
  return blocks.size();
}

}  // namespace

TEST(HeapItsGpu, CoalescingOffEveryLaneAllocatesOnItsOwn) {
  HEAPLAB_REQUIRE_GPU();
  // Claim tickets off (DynaSOAr Alg. 1: a lookup miss opens a block). Coalesced, the warp's
  // leader reserves all 32 slots in one block it opens: exactly one block. Not coalesced, the
  // 32 lanes each miss the lookups of the empty heap and open a block of their own (seeds per
  // lane); unless the lanes were fully serialized, more than one block is used. Ten tries.
  soa::HeapOptions options;
  options.claim_wait_rounds = 0;
  auto coalesced            = soa::Heap<Types>::with_blocks(512, options);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(blocks_of_one_warp(coalesced), 1u);
  options.coalesce_requests = false;
  auto single               = soa::Heap<Types>::with_blocks(512, options);
  std::size_t most          = 0;
  for (int i = 0; i < 10; ++i) most = std::max(most, blocks_of_one_warp(single));
  EXPECT_GT(most, 1u) << "with coalescing off the lanes still shared one block every time";
}

namespace {

/// Lane l of the one warp makes one Leaf with id base + l (out[base + l]).
__global__ void one_leaf_per_lane(Ref heap, std::uint64_t* out, std::uint32_t base) {
  std::uint32_t const lane = threadIdx.x;
  out[base + lane]         = bits(heap.make<Leaf>(base + lane, 0u));
}

/// Object (lane, round) of the free pattern below: in one instruction the warp's lanes free
/// objects of all four allocation launches (lanes 8a .. 8a + 7 those of launch (a + round) % 4,
/// its objects 8 round .. 8 round + 7), so most free instructions span several blocks. Over the
/// four rounds every object once: launch g's object 8r + b is freed by lane 8((g - r) mod 4) + b
/// in round r.
__host__ __device__ std::uint32_t mixed_id(std::uint32_t lane, std::uint32_t round) {
  return 32u * ((lane / 8u + round) % 4u) + 8u * round + lane % 8u;
}

/// One warp: round r (r < rounds) frees object mixed_id(lane, r) of every lane.
__global__ void free_mixed(Ref heap, std::uint64_t const* out, std::uint32_t rounds) {
  for (std::uint32_t r = 0; r < rounds; ++r) heap.destroy_raw(out[mixed_id(threadIdx.x, r)]);
}

}  // namespace

TEST(HeapItsGpu, AWarpFreeingIntoSeveralBlocksFreesExactlyItsObjects) {
  HEAPLAB_REQUIRE_GPU();
  // A warp whose lanes free into several blocks at once (HeapRef::free_slot coalesces only a warp
  // that frees into one block; here every lane frees its own slot) must free exactly its objects.
  // 128 Leafs from four one-warp launches (two or more blocks of 64), then free instructions whose
  // lanes hold objects of all four launches. After two of the four rounds exactly the other half
  // is live, at its own slots; after all four the heap is empty.
  auto heap = soa::Heap<Types>::with_blocks(64);
  // mixed_id is a permutation of 0..127 over (lane, round): each object is freed once.
  std::set<std::uint32_t> ids;
  for (std::uint32_t r = 0; r < 4; ++r)
    for (std::uint32_t l = 0; l < 32; ++l) ids.insert(mixed_id(l, r));
  ASSERT_EQ(ids.size(), 128u);
  std::uint64_t* d_out = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d_out, 128 * sizeof(std::uint64_t)));
  for (std::uint32_t launch = 0; launch < 4; ++launch) {
    one_leaf_per_lane<<<1, 32, 0, heap.stream()>>>(heap.ref(), d_out, 32u * launch);
    HEAPLAB_CUDA_TRY(cudaGetLastError());
  }
  wait_or_exit(heap.stream(), kTimeoutSeconds, "128 Leafs");
  std::vector<std::uint64_t> out(128);
  HEAPLAB_CUDA_TRY(
      cudaMemcpy(out.data(), d_out, 128 * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  std::set<std::uint64_t> blocks;
  for (std::uint64_t p : out) {
    ASSERT_NE(p, 0u);
    blocks.insert(heaplab::core::pointer_block_address(p));
  }
  EXPECT_GE(blocks.size(), 2u);
  free_mixed<<<1, 32, 0, heap.stream()>>>(heap.ref(), d_out, 2);
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  wait_or_exit(heap.stream(), kTimeoutSeconds, "two mixed free rounds");
  heap.check_device_errors();
  auto const half = heap.snapshot_with_payloads();
  expect_catalog_holds(half, "after two mixed free rounds");
  auto const live = objects_by_id(half);
  std::set<std::uint32_t> freed;
  for (std::uint32_t r = 0; r < 2; ++r)
    for (std::uint32_t l = 0; l < 32; ++l) freed.insert(mixed_id(l, r));
  EXPECT_EQ(live.size(), 64u);
  for (std::uint32_t id = 0; id < 128; ++id) {
    auto const it = live.find(id);
    if (freed.count(id) != 0) {
      EXPECT_EQ(it, live.end()) << "object " << id << " was freed but is live";
      continue;
    }
    ASSERT_NE(it, live.end()) << "object " << id << " was not freed but is gone";
    EXPECT_EQ(it->second.at, heap.ref().locate(out[id])) << "object " << id;
  }
  // The other two rounds: the same kernel on rounds 2 and 3's objects, moved to 0 and 1's places.
  std::vector<std::uint64_t> rest(128, 0);
  for (std::uint32_t r = 2; r < 4; ++r)
    for (std::uint32_t l = 0; l < 32; ++l) rest[mixed_id(l, r - 2)] = out[mixed_id(l, r)];
  HEAPLAB_CUDA_TRY(
      cudaMemcpy(d_out, rest.data(), 128 * sizeof(std::uint64_t), cudaMemcpyHostToDevice));
  free_mixed<<<1, 32, 0, heap.stream()>>>(heap.ref(), d_out, 2);
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  wait_or_exit(heap.stream(), kTimeoutSeconds, "the last two mixed free rounds");
  expect_empty(heap);
  HEAPLAB_CUDA_TRY(cudaFree(d_out));
}
