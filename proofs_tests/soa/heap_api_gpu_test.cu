// The GPU heap's API: make/destroy from kernels, parallel_new, parallel_do (iteration-bitmap
// semantics, subtypes, allocation and self-deletion inside), device_do, statistics, reset,
// snapshots with payloads. After every step the whole invariant catalog must hold on the
// snapshot, and the live objects (ids, cookies, pointer targets) must be exactly the expected
// ones. Expected values come from the test's own arithmetic, never from the heap.
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "heap_test_support.hpp"
#include "heap_test_types.hpp"
#include "heaplab/check/defrag_obligations.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/cookie.hpp"
#include "heaplab/cuda/error.hpp"

namespace heap_test {
// A type without the Tracked convention. Outside the anonymous namespace: nvcc warns about the
// DSL's unreferenced heaplab_check_declaration member in classes with internal linkage.
class Plain {
 public:
  HEAPLAB_SOA_FIELDS(Plain, (int, x_));
};
using PlainTypes = soa::HeapTypes<Plain>;
}  // namespace heap_test

using namespace heap_test;
namespace check = heaplab::check;

namespace {

template <class T>
__host__ __device__ std::uint64_t bits(T const* p) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
}

/// Thread i makes Leaf(i, 3i) and Node(n + i, i) with node.kids_[0] = leaf, and writes both
/// pointers out.
__global__ void make_pairs(Ref heap, std::uint32_t n, Leaf** leaves, Node** nodes) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Leaf* const leaf = heap.make<Leaf>(std::uint64_t{i}, 3u * i);
  Node* const node = heap.make<Node>(std::uint64_t{n} + i, static_cast<float>(i));
  if (node != nullptr) node->set_kid(0, leaf);
  leaves[i] = leaf;
  nodes[i]  = node;
}

/// Threads with even i destroy their pair.
__global__ void destroy_even_pairs(Ref heap, std::uint32_t n, Leaf** leaves, Node** nodes) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || i % 2 != 0) return;
  heap.destroy(nodes[i]);
  heap.destroy(leaves[i]);
}

__global__ void destroy_all(Ref heap, std::uint32_t n, Leaf** leaves, Node** nodes) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (nodes != nullptr) heap.destroy(nodes[i]);
  if (leaves != nullptr) heap.destroy(leaves[i]);
}

/// Each thread runs device_do over Leaf (sum of values) and over Node (count, with Fat).
__global__ void device_do_sums(Ref heap,
                               unsigned long long* leaf_sums,
                               unsigned long long* node_counts) {
  std::uint32_t const i    = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long sum   = 0;
  unsigned long long count = 0;
  heap.device_do<Leaf, &Leaf::add_to>(&sum);
  heap.device_do<Node, &Node::count_into>(&count);
  leaf_sums[i]   = sum;
  node_counts[i] = count;
}

/// Every thread of two CTAs runs device_do_sums on `heap`, whose leaves all hold the value 7 and
/// which holds no Node: each must see `leaves` leaves once (sum 7 * leaves) and no node.
void expect_device_do_sums(Ref const& heap, std::uint64_t leaves) {
  DeviceArray<unsigned long long> sums(64);
  DeviceArray<unsigned long long> counts(64);
  device_do_sums<<<2, 32>>>(heap, sums.data, counts.data);
  HEAPLAB_CHECK_LAUNCH();
  for (auto s : sums.to_host()) EXPECT_EQ(s, 7ull * leaves);
  for (auto c : counts.to_host()) EXPECT_EQ(c, 0u);
}

/// Sets pointer slot k of `holder` to `target` for each (holder, k, target) triple.
__global__ void link_slots(Ref heap, std::uint64_t const* triples, std::size_t n) {
  std::size_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  *heap.pointer_slot_address(triples[3 * i], static_cast<std::uint32_t>(triples[3 * i + 1])) =
      triples[3 * i + 2];
}

/// Gives the Leaf at pointers[i] the id base + i (and its cookie).
__global__ void relabel(std::uint64_t const* pointers, std::size_t n, std::uint64_t base) {
  std::size_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) reinterpret_cast<Leaf*>(static_cast<std::uintptr_t>(pointers[i]))->set_id(base + i);
}

/// Follows next_ from `start` through the field DSL, writing every pointer seen.
__global__ void walk_ring(Fat* start, std::uint64_t* out, std::size_t steps) {
  Node* p = start;
  for (std::size_t i = 0; i < steps && p != nullptr; ++i) {
    out[i] = bits(p);
    p      = p->next();
  }
}

heaplab::core::SlotRef ref_of(Ref const& heap, void const* p) { return heap.locate(bits(p)); }

}  // namespace

TEST(HeapGpu, MakeAndDestroyFromKernelsKeepTheCatalogAndPayloads) {
  HEAPLAB_REQUIRE_GPU();
  auto heap                 = soa::Heap<Types>::with_blocks(512);
  constexpr std::uint32_t n = 3000;
  DeviceArray<Leaf*> leaves(n);
  DeviceArray<Node*> nodes(n);
  make_pairs<<<(n + 127) / 128, 128>>>(heap.ref(), n, leaves.data, nodes.data);
  HEAPLAB_CHECK_LAUNCH();
  heap.check_device_errors();
  auto const h_leaves = leaves.to_host();
  auto const h_nodes  = nodes.to_host();
  EXPECT_EQ(heap.oom_count(), 0u);

  {
    auto const snap = heap.snapshot_with_payloads();
    expect_catalog_holds(snap, "after make_pairs");
    EXPECT_EQ(snap.producer, "gpu");
    auto const objects = objects_by_id(snap);
    ASSERT_EQ(objects.size(), 2u * n);
    for (std::uint32_t i = 0; i < n; ++i) {
      ASSERT_NE(h_leaves[i], nullptr);
      ASSERT_NE(h_nodes[i], nullptr);
      auto const& leaf = objects.at(i);
      auto const& node = objects.at(n + i);
      EXPECT_EQ(leaf.type, kLeaf);
      EXPECT_EQ(node.type, kNode);
      EXPECT_EQ(leaf.record->cookie, heaplab::core::cookie_of(i));
      // The pointers the kernel got are where the snapshot found the objects.
      EXPECT_EQ(leaf.at, ref_of(heap.ref(), h_leaves[i]));
      EXPECT_EQ(node.at, ref_of(heap.ref(), h_nodes[i]));
      // Pointer slots: next_, kids_[0], kids_[1].
      ASSERT_EQ(node.record->refs.size(), 3u);
      EXPECT_FALSE(node.record->refs[0].has_value());
      ASSERT_TRUE(node.record->refs[1].has_value());
      EXPECT_EQ(*node.record->refs[1], leaf.at);
      EXPECT_FALSE(node.record->refs[2].has_value());
      EXPECT_TRUE(leaf.record->refs.empty());
    }
    auto const by_type = count_by_type(snap);
    EXPECT_EQ(by_type[kLeaf], n);
    EXPECT_EQ(by_type[kNode], n);
  }

  destroy_even_pairs<<<(n + 127) / 128, 128>>>(heap.ref(), n, leaves.data, nodes.data);
  HEAPLAB_CHECK_LAUNCH();
  heap.check_device_errors();
  {
    auto const snap = heap.snapshot_with_payloads();
    expect_catalog_holds(snap, "after destroying the even pairs");
    auto const objects = objects_by_id(snap);
    EXPECT_EQ(objects.size(), n);  // n/2 pairs left
    for (std::uint32_t i = 1; i < n; i += 2) {
      ASSERT_EQ(objects.count(i), 1u) << "leaf " << i;
      ASSERT_EQ(objects.count(n + i), 1u) << "node " << n + i;
      EXPECT_EQ(*objects.at(n + i).record->refs[1], objects.at(i).at);
    }
  }

  // Destroy the rest (the even ones again would be double frees: only odd ones here).
  std::vector<Leaf*> odd_leaves(h_leaves);
  std::vector<Node*> odd_nodes(h_nodes);
  for (std::uint32_t i = 0; i < n; i += 2) odd_leaves[i] = nullptr, odd_nodes[i] = nullptr;
  HEAPLAB_CUDA_TRY(
      cudaMemcpy(leaves.data, odd_leaves.data(), n * sizeof(Leaf*), cudaMemcpyHostToDevice));
  HEAPLAB_CUDA_TRY(
      cudaMemcpy(nodes.data, odd_nodes.data(), n * sizeof(Node*), cudaMemcpyHostToDevice));
  destroy_all<<<(n + 127) / 128, 128>>>(heap.ref(), n, leaves.data, nodes.data);
  HEAPLAB_CHECK_LAUNCH();
  heap.check_device_errors();
  auto const snap = heap.snapshot_with_payloads();
  expect_catalog_holds(snap, "after destroying everything");
  EXPECT_EQ(check::count_set(snap.free_blocks), heap.num_blocks());
  EXPECT_TRUE(objects_by_id(snap).empty());
}

TEST(HeapGpu, ParallelNewConstructsWithTheIndexFirst) {
  HEAPLAB_REQUIRE_GPU();
  auto heap                 = soa::Heap<Types>::with_blocks(64);
  constexpr std::uint32_t n = 1000;
  heap.parallel_new<Leaf>(n, 7u);     // Leaf(i, 7)
  heap.parallel_new<Fat>(100, 2.5f);  // Fat(i, 2.5f): ids overlap the leaves', so no payloads
  auto const snap = heap.snapshot();
  expect_catalog_holds(snap, "after parallel_new");
  auto const stats = heap.statistics();
  EXPECT_EQ(stats.types[kLeaf].used_slots, n);
  EXPECT_EQ(stats.types[kFat].used_slots, 100u);
  EXPECT_EQ(stats.types[kLeaf].allocated_blocks, check::count_set(snap.allocated[kLeaf]));
  EXPECT_EQ(stats.types[kFat].allocated_blocks, check::count_set(snap.allocated[kFat]));
  EXPECT_EQ(stats.oom_count, 0u);

  auto heap2 = soa::Heap<Types>::with_blocks(64);
  heap2.parallel_new<Leaf>(n, 7u);
  auto const snap2   = heap2.snapshot_with_payloads();
  auto const objects = objects_by_id(snap2);
  ASSERT_EQ(objects.size(), n);
  for (std::uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(objects.count(i), 1u) << "id " << i;
    EXPECT_EQ(objects.at(i).record->cookie, heaplab::core::cookie_of(i));
  }
  expect_catalog_holds(snap2, "after parallel_new with payloads");

  // device_do: every thread sees every leaf exactly once: sum of values = 7n.
  expect_device_do_sums(heap2.ref(), n);
}

TEST(HeapGpu, DeviceDoVisitsEveryObjectOfFullPartialAndSparseBlocksOnce) {
  HEAPLAB_REQUIRE_GPU();
  // device_do reads a full block in a counted loop and the others by a bit scan. Three full
  // blocks are thinned to 64, 40 and 3 live leaves, the rest of the heap's leaf blocks left as
  // parallel_new made them.
  auto heap                   = soa::Heap<Types>::with_blocks(64);
  constexpr std::uint32_t cap = Types::capacity<Leaf>;
  constexpr std::uint32_t n   = 8 * cap;
  heap.parallel_new<Leaf>(n, 7u);
  auto const before = heap.snapshot();
  std::vector<std::uint32_t> full;
  for (std::uint32_t const b : check::set_bits(before.allocated[kLeaf]))
    if (before.blocks[b].alloc_bitmap == ~std::uint64_t{0}) full.push_back(b);
  ASSERT_GE(full.size(), 3u) << "parallel_new filled fewer than three blocks";
  std::vector<Leaf*> doomed;
  for (std::uint32_t slot = 3; slot < cap; ++slot) {
    if (slot >= 40)
      doomed.push_back(reinterpret_cast<Leaf*>(heap.ref().object_pointer_of<Leaf>(full[1], slot)));
    doomed.push_back(reinterpret_cast<Leaf*>(heap.ref().object_pointer_of<Leaf>(full[2], slot)));
  }
  DeviceArray<Leaf*> pointers(doomed.size());
  HEAPLAB_CUDA_TRY(cudaMemcpy(
      pointers.data, doomed.data(), doomed.size() * sizeof(Leaf*), cudaMemcpyHostToDevice));
  auto const count = static_cast<std::uint32_t>(doomed.size());
  destroy_all<<<(count + 63) / 64, 64>>>(heap.ref(), count, pointers.data, nullptr);
  HEAPLAB_CHECK_LAUNCH();
  heap.check_device_errors();
  auto const after = heap.snapshot();
  expect_catalog_holds(after, "after thinning three blocks");
  EXPECT_EQ(check::used_slots(after.blocks[full[0]].alloc_bitmap, cap), 64u);
  EXPECT_EQ(check::used_slots(after.blocks[full[1]].alloc_bitmap, cap), 40u);
  EXPECT_EQ(check::used_slots(after.blocks[full[2]].alloc_bitmap, cap), 3u);

  expect_device_do_sums(heap.ref(), n - doomed.size());
}

TEST(HeapGpu, ParallelDoVisitsEveryObjectOnceAndNotTheOnesItCreates) {
  HEAPLAB_REQUIRE_GPU();
  auto heap                      = soa::Heap<Types>::with_blocks(128);
  constexpr std::uint32_t n      = 2000;
  constexpr std::uint64_t offset = 5000;
  heap.parallel_new<Leaf>(n, 1u);
  DeviceArray<unsigned> visits(offset + n);
  heap.parallel_do<Leaf, &Leaf::visit_and_spawn<Ref>>(heap.ref(), visits.data, offset + n, offset);
  auto const v = visits.to_host();
  for (std::uint64_t id = 0; id < n; ++id) EXPECT_EQ(v[id], 1u) << "original leaf " << id;
  for (std::uint64_t id = offset; id < offset + n; ++id)
    EXPECT_EQ(v[id], 0u) << "leaf " << id << " was created by the parallel_do and visited by it";
  auto const snap = heap.snapshot_with_payloads();
  expect_catalog_holds(snap, "after parallel_do that allocates");
  auto const objects = objects_by_id(snap);
  EXPECT_EQ(objects.size(), 2u * n);
  for (std::uint64_t id = 0; id < n; ++id) {
    EXPECT_EQ(objects.count(id), 1u);
    EXPECT_EQ(objects.count(id + offset), 1u);
  }
  EXPECT_EQ(heap.oom_count(), 0u);
}

TEST(HeapGpu, AKeptEnumerationVisitsEveryObjectOncePerDoAll) {
  HEAPLAB_REQUIRE_GPU();
  auto heap                      = soa::Heap<Types>::with_blocks(128);
  constexpr std::uint32_t n      = 2000;
  constexpr std::uint64_t offset = 5000;
  heap.parallel_new<Leaf>(n, 1u);
  heap.parallel_new<Node>(300, 1.0f);
  DeviceArray<unsigned> visits(offset + n);
  DeviceArray<unsigned> node_visits(300);
  {
    auto leaves = heap.enumerate<Leaf>();
    EXPECT_TRUE(heap.is_frozen(kLeaf));
    EXPECT_FALSE(heap.is_frozen(kNode));
    leaves.parallel_do<&Leaf::count_visit>(visits.data, offset + n);
    heap.parallel_do<Leaf, &Leaf::count_visit>(visits.data, offset + n);  // the kept R too
    // Another type's do-all (with its subtype) is enumerated as usual meanwhile.
    heap.parallel_do<Node, &Node::count_visit>(node_visits.data, std::uint64_t{300});
    // The last do-all may create Leaves: they are not visited by it.
    leaves.last_parallel_do<&Leaf::visit_and_spawn<Ref>>(
        heap.ref(), visits.data, offset + n, offset);
    EXPECT_FALSE(heap.is_frozen(kLeaf));
  }
  EXPECT_NO_THROW(heap.check_device_errors());
  auto v = visits.to_host();
  for (std::uint64_t id = 0; id < n; ++id) ASSERT_EQ(v[id], 3u) << "leaf " << id;
  for (std::uint64_t id = offset; id < offset + n; ++id) ASSERT_EQ(v[id], 0u) << "leaf " << id;
  for (auto c : node_visits.to_host()) EXPECT_EQ(c, 1u);
  // After the enumeration: a fresh one sees the created leaves too.
  heap.parallel_do<Leaf, &Leaf::count_visit>(visits.data, offset + n);
  v = visits.to_host();
  for (std::uint64_t id = 0; id < n; ++id) ASSERT_EQ(v[id], 4u) << "leaf " << id;
  for (std::uint64_t id = offset; id < offset + n; ++id) ASSERT_EQ(v[id], 1u) << "leaf " << id;
  // (No payloads: the Leaf and Node ids overlap.)
  expect_catalog_holds(heap.snapshot(), "after a kept enumeration");
}

TEST(HeapGpu, AKeptEnumerationOfABaseTypeCoversItsSubtypes) {
  HEAPLAB_REQUIRE_GPU();
  auto heap = soa::Heap<Types>::with_blocks(128);
  heap.parallel_new<Node>(500, 1.0f);
  DeviceArray<unsigned> visits(2000);
  {
    auto nodes = heap.enumerate<Node>();  // Node and Fat
    EXPECT_TRUE(heap.is_frozen(kNode));
    EXPECT_TRUE(heap.is_frozen(kFat));
    EXPECT_FALSE(heap.is_frozen(kLeaf));
    EXPECT_THROW(heap.parallel_new<Fat>(10, 1.0f), heaplab::core::precondition_error);
    EXPECT_THROW((void)heap.enumerate<Fat>(), heaplab::core::precondition_error);
    nodes.parallel_do<&Node::count_visit>(visits.data, std::uint64_t{2000});
    heap.parallel_do<Node, &Node::count_visit>(visits.data, std::uint64_t{2000});
    // The last do-all creates Leaves and destroys every third Node: allowed.
    nodes.last_parallel_do<&Node::grow<Ref>>(heap.ref());
  }
  EXPECT_NO_THROW(heap.check_device_errors());
  auto v = visits.to_host();
  for (std::uint64_t id = 0; id < 500; ++id) ASSERT_EQ(v[id], 2u) << "node " << id;
  for (std::uint64_t id = 500; id < 2000; ++id) ASSERT_EQ(v[id], 0u) << "id " << id;
  // Fat objects (ids 0..299, as parallel_new numbers them) made after the enumeration are
  // visited by a fresh one, with the Nodes that did not destroy themselves (id % 3 != 0).
  heap.parallel_new<Fat>(300, 2.0f);
  {
    auto nodes = heap.enumerate<Node>();
    nodes.parallel_do<&Node::count_visit>(visits.data, std::uint64_t{2000});
  }
  v = visits.to_host();
  for (std::uint64_t id = 0; id < 500; ++id) {
    unsigned const expected = 2u + (id % 3 != 0 ? 1u : 0u) + (id < 300 ? 1u : 0u);
    ASSERT_EQ(v[id], expected) << "id " << id;
  }
  EXPECT_EQ(heap.statistics().types[kFat].used_slots, 300u);
  expect_catalog_holds(heap.snapshot(), "after a kept enumeration of a base type");
}

TEST(HeapGpu, CreatingOrDestroyingAFrozenTypeIsReported) {
  HEAPLAB_REQUIRE_GPU();
  constexpr std::uint32_t n = 256;
  {  // a creation inside a do-all of the kept enumeration
    auto heap = soa::Heap<Types>::with_blocks(128);
    heap.parallel_new<Leaf>(n, 1u);
    DeviceArray<unsigned> visits(2 * n);
    auto leaves = heap.enumerate<Leaf>();
    leaves.parallel_do<&Leaf::visit_and_spawn<Ref>>(heap.ref(), visits.data, 2 * n, n);
    leaves.thaw();
    try {
      heap.check_device_errors();
      ADD_FAILURE() << "a Leaf created while Leaf was frozen was not reported";
    } catch (soa::heap_error const& e) {
      EXPECT_NE(std::string(e.what()).find("live Heap::Enumeration"), std::string::npos)
          << e.what();
      EXPECT_NE(
          std::string(e.what()).find("object of type " + std::to_string(kLeaf) + " was created"),
          std::string::npos)
          << e.what();
    }
    EXPECT_NO_THROW(heap.check_device_errors());  // the reports were cleared
  }
  {  // a destruction by a kernel of its own
    auto heap = soa::Heap<Types>::with_blocks(128);
    DeviceArray<Leaf*> leaves(n);
    DeviceArray<Node*> nodes(n);
    make_pairs<<<n / 64, 64>>>(heap.ref(), n, leaves.data, nodes.data);
    HEAPLAB_CHECK_LAUNCH();
    {
      auto frozen = heap.enumerate<Leaf>();
      destroy_all<<<n / 64, 64>>>(heap.ref(), n, leaves.data, nullptr);
      HEAPLAB_CHECK_LAUNCH();
    }
    EXPECT_THROW(
        {
          try {
            heap.check_device_errors();
          } catch (soa::heap_error const& e) {
            EXPECT_NE(std::string(e.what()).find("object of type " + std::to_string(kLeaf) +
                                                 " was destroyed"),
                      std::string::npos)
                << e.what();
            throw;
          }
        },
        soa::heap_error);
    // Destroying Nodes (not frozen) while Leaf is frozen is fine.
    auto frozen = heap.enumerate<Leaf>();
    destroy_all<<<n / 64, 64>>>(heap.ref(), n, nullptr, nodes.data);
    HEAPLAB_CHECK_LAUNCH();
    frozen.thaw();
    EXPECT_NO_THROW(heap.check_device_errors());
  }
}

TEST(HeapGpu, AKeptEnumerationRefusesWhatWouldBreakIt) {
  HEAPLAB_REQUIRE_GPU();
  auto heap = soa::Heap<Types>::with_blocks(64);
  heap.parallel_new<Leaf>(100, 1u);
  DeviceArray<unsigned> visits(100);
  auto leaves = heap.enumerate<Leaf>();
  EXPECT_THROW((void)heap.enumerate<Leaf>(), heaplab::core::precondition_error);
  EXPECT_THROW(heap.parallel_new<Leaf>(10, 1u), heaplab::core::precondition_error);
  EXPECT_THROW(heap.reset(), heaplab::core::precondition_error);
  EXPECT_NO_THROW(heap.parallel_new<Node>(10, 1.0f));
  leaves.last_parallel_do<&Leaf::count_visit>(visits.data, std::uint64_t{100});
  EXPECT_THROW(leaves.parallel_do<&Leaf::count_visit>(visits.data, std::uint64_t{100}),
               heaplab::core::precondition_error);
  EXPECT_THROW(leaves.last_parallel_do<&Leaf::count_visit>(visits.data, std::uint64_t{100}),
               heaplab::core::precondition_error);
  for (auto c : visits.to_host()) EXPECT_EQ(c, 1u);
  EXPECT_NO_THROW(heap.parallel_new<Leaf>(10, 1u));  // thawed
  EXPECT_NO_THROW(heap.reset());
}

TEST(HeapGpu, ParallelDoOverABaseTypeVisitsSubtypes) {
  HEAPLAB_REQUIRE_GPU();
  auto heap = soa::Heap<Types>::with_blocks(128);
  heap.parallel_new<Node>(500, 1.0f);
  heap.parallel_new<Leaf>(700, 4u);
  DeviceArray<unsigned> visits(2000);
  heap.parallel_do<Node, &Node::count_visit>(visits.data, std::uint64_t{2000});
  auto v = visits.to_host();
  for (std::uint64_t id = 0; id < 500; ++id) EXPECT_EQ(v[id], 1u) << "node " << id;
  for (std::uint64_t id = 500; id < 2000; ++id) EXPECT_EQ(v[id], 0u) << "id " << id;

  // A second heap with Fat objects only: parallel_do<Node> must visit them (Fat <: Node).
  auto heap2 = soa::Heap<Types>::with_blocks(128);
  heap2.parallel_new<Fat>(300, 2.0f);
  DeviceArray<unsigned> visits2(2000);
  heap2.parallel_do<Node, &Node::count_visit>(visits2.data, std::uint64_t{2000});
  v = visits2.to_host();
  for (std::uint64_t id = 0; id < 300; ++id) EXPECT_EQ(v[id], 1u) << "fat " << id;
  for (std::uint64_t id = 300; id < 2000; ++id) EXPECT_EQ(v[id], 0u) << "id " << id;
  expect_catalog_holds(heap2.snapshot_with_payloads(), "after parallel_do over subtypes");
}

TEST(HeapGpu, ParallelDoMethodsAllocateChildrenAndDeleteThemselves) {
  HEAPLAB_REQUIRE_GPU();
  auto heap                 = soa::Heap<Types>::with_blocks(256);
  constexpr std::uint32_t n = 900;
  heap.parallel_new<Node>(n, 0.5f);
  heap.parallel_do<Node, &Node::grow<Ref>>(heap.ref());
  EXPECT_EQ(heap.oom_count(), 0u);
  auto const snap = heap.snapshot_with_payloads();
  expect_catalog_holds(snap, "after grow");
  auto const objects     = objects_by_id(snap);
  std::uint64_t expected = 2u * n;  // every node's two children
  for (std::uint64_t id = 0; id < n; ++id) {
    for (int k = 0; k < 2; ++k)
      ASSERT_EQ(objects.count(kChildBase + 2 * id + static_cast<std::uint64_t>(k)), 1u)
          << "child of " << id;
    if (id % 3 == 0) {
      EXPECT_EQ(objects.count(id), 0u) << "node " << id << " should have deleted itself";
      continue;
    }
    ++expected;
    auto const& node = objects.at(id);
    ASSERT_EQ(node.record->refs.size(), 3u);
    for (int k = 0; k < 2; ++k) {
      ASSERT_TRUE(node.record->refs[1 + k].has_value());
      EXPECT_EQ(*node.record->refs[1 + k],
                objects.at(kChildBase + 2 * id + static_cast<std::uint64_t>(k)).at);
    }
  }
  EXPECT_EQ(objects.size(), expected);
  auto const stats = heap.statistics();
  EXPECT_NEAR(stats.fragmentation, check::fragmentation(snap, std::nullopt), 1e-12);
  EXPECT_NEAR(stats.types[kLeaf].fragmentation, check::fragmentation(snap, kLeaf), 1e-12);
  EXPECT_NEAR(stats.types[kNode].fragmentation, check::fragmentation(snap, kNode), 1e-12);
  EXPECT_EQ(stats.types[kNode].used_slots, expected - 2u * n);
  EXPECT_EQ(stats.types[kLeaf].used_slots, 2u * n);
  EXPECT_EQ(stats.free_blocks, check::count_set(snap.free_blocks));
}

TEST(HeapGpu, PointerFieldsRoundTripAcrossTypes) {
  HEAPLAB_REQUIRE_GPU();
  auto heap = soa::Heap<Types>::with_blocks(64);
  heap.parallel_new<Fat>(40, 1.0f);  // ids 0..39
  heap.parallel_new<Leaf>(40, 1u);   // ids 0..39 too: locate objects by position, not id
  auto const before = heap.snapshot();
  std::vector<std::uint64_t> fats, leaves;
  for (std::uint32_t b = 0; b < before.blocks.size(); ++b) {
    for (std::uint32_t t : {kFat, kLeaf}) {
      if (!check::test_bit(before.allocated[t], b)) continue;
      for (std::uint32_t s = 0; s < before.config.capacity(t); ++s)
        if ((before.blocks[b].alloc_bitmap >> s) & 1u)
          (t == kFat ? fats : leaves).push_back(heap.ref().object_pointer(b, s, t));
    }
  }
  ASSERT_EQ(fats.size(), 40u);
  ASSERT_EQ(leaves.size(), 40u);
  // Fat i: next_ (slot 0) = Fat (i + 1) % 40 (a Node* holding a Fat), kids_[1] (slot 2) = Leaf i.
  std::vector<std::uint64_t> triples;
  for (std::size_t i = 0; i < 40; ++i) {
    triples.insert(triples.end(), {fats[i], 0, fats[(i + 1) % 40]});
    triples.insert(triples.end(), {fats[i], 2, leaves[i]});
  }
  DeviceArray<std::uint64_t> d_triples(triples.size());
  HEAPLAB_CUDA_TRY(
      cudaMemcpy(d_triples.data, triples.data(), triples.size() * 8, cudaMemcpyHostToDevice));
  link_slots<<<1, 128>>>(heap.ref(), d_triples.data, triples.size() / 3);
  HEAPLAB_CHECK_LAUNCH();
  DeviceArray<std::uint64_t> d_leaves(leaves.size());  // leaf ids 0..39 -> 100..139 (unique)
  HEAPLAB_CUDA_TRY(
      cudaMemcpy(d_leaves.data, leaves.data(), leaves.size() * 8, cudaMemcpyHostToDevice));
  relabel<<<1, 64>>>(d_leaves.data, leaves.size(), 100);
  HEAPLAB_CHECK_LAUNCH();
  // Read back through the typed DSL: next()->next() ... must walk the ring.
  DeviceArray<std::uint64_t> walk(41);
  walk_ring<<<1, 1>>>(reinterpret_cast<Fat*>(static_cast<std::uintptr_t>(fats[0])), walk.data, 41);
  HEAPLAB_CHECK_LAUNCH();
  auto const w = walk.to_host();
  for (std::size_t i = 0; i <= 40; ++i) EXPECT_EQ(w[i], fats[i % 40]) << "step " << i;

  auto const snap = heap.snapshot_with_payloads();
  expect_catalog_holds(snap, "after linking");
  auto const ref = heap.ref();
  for (std::size_t i = 0; i < 40; ++i) {
    heaplab::core::SlotRef const at = ref.locate(fats[i]);
    auto const& record              = snap.blocks[at.block].objects[at.slot];
    ASSERT_TRUE(record.has_value());
    ASSERT_EQ(record->refs.size(), 3u);
    auto const next = ref.locate(fats[(i + 1) % 40]);
    auto const leaf = ref.locate(leaves[i]);
    EXPECT_EQ(record->refs[0], (heaplab::core::SlotRef{next.block, next.slot}));
    EXPECT_FALSE(record->refs[1].has_value());
    EXPECT_EQ(record->refs[2], (heaplab::core::SlotRef{leaf.block, leaf.slot}));
    auto const& leaf_record = snap.blocks[leaf.block].objects[leaf.slot];
    ASSERT_TRUE(leaf_record.has_value());
    EXPECT_EQ(leaf_record->id, 100 + i);
    EXPECT_EQ(leaf_record->cookie, heaplab::core::cookie_of(100 + i));
  }
}

TEST(HeapGpu, ResetEmptiesTheHeap) {
  HEAPLAB_REQUIRE_GPU();
  auto heap = soa::Heap<Types>::with_blocks(32);
  heap.parallel_new<Leaf>(500, 1u);
  heap.reset();
  auto const snap = heap.snapshot();
  expect_catalog_holds(snap, "after reset");
  EXPECT_EQ(check::count_set(snap.free_blocks), 32u);
  EXPECT_EQ(heap.statistics().used_slots, 0u);
  heap.parallel_new<Leaf>(32 * 64, 1u);  // the full capacity again
  EXPECT_EQ(heap.statistics().types[kLeaf].used_slots + heap.oom_count(), 32u * 64u);
}

TEST(HeapGpu, PayloadSnapshotNeedsTrackedTypes) {
  HEAPLAB_REQUIRE_GPU();
  auto heap = soa::Heap<PlainTypes>::with_blocks(4);
  EXPECT_NO_THROW((void)heap.snapshot());
  try {
    (void)heap.snapshot_with_payloads();
    ADD_FAILURE() << "snapshot_with_payloads accepted a type without Tracked";
  } catch (heaplab::core::precondition_error const& e) {
    EXPECT_NE(std::string(e.what()).find("Plain"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Tracked"), std::string::npos) << e.what();
  }
}

TEST(HeapGpu, SizingErrorsAreClear) {
  HEAPLAB_REQUIRE_GPU();
  EXPECT_THROW((void)soa::Heap<Types>::with_blocks(0), heaplab::core::precondition_error);
  EXPECT_THROW((void)soa::Heap<Types>::with_bytes(Types::block_bytes - 1),
               heaplab::core::precondition_error);
  auto heap = soa::Heap<Types>::with_bytes(std::uint64_t{Types::block_bytes} * 10 + 5);
  EXPECT_EQ(heap.num_blocks(), 10u);
  // Move-only: the moved-to heap works.
  auto moved = std::move(heap);
  moved.parallel_new<Leaf>(10, 1u);
  EXPECT_EQ(moved.statistics().used_slots, 10u);
}
