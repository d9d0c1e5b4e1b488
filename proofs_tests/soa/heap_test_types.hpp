// Heap types shared by the GPU heap tests. Every concrete type derives from soa::Tracked so that
// snapshots carry payloads (ids, cookies, pointer targets).
//
//   Tracked (abstract, 16 B: id_, cookie_)
//   ├── Leaf  : value_                            20 B  N = 64   (smallest type)
//   └── Node  : next_ (Node*), kids_ (Leaf*[2]),  44 B  N = floor(64*20/44) = 29
//       │       weight_
//       └── Fat : extra_ (uint64_t[4])            76 B  N = floor(64*20/76) = 16
//
// Pointer slots (HeapConfig::pointer_slots order): Node and Fat have 3: next_, kids_[0], kids_[1].
#pragma once

#include <cstdint>

#include "heaplab/core/host_device.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_ref.cuh"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/tracked.hpp"

namespace heap_test {

namespace soa = heaplab::soa;

class Leaf : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Leaf, soa::Tracked, (std::uint32_t, value_));

  HEAPLAB_HD Leaf(std::uint64_t id, std::uint32_t value) : Tracked(id), value_(value) {}

  HEAPLAB_HD std::uint32_t value() const { return value_; }
  /// device_do body: adds the value to *sum (sequential per thread).
  HEAPLAB_HD void add_to(unsigned long long* sum) { *sum += value_; }
  /// parallel_do body: counts visits per id (ids < limit).
  __device__ void count_visit(unsigned* visits, std::uint64_t limit) {
    std::uint64_t const id = id_;
    if (id < limit) atomicAdd(&visits[id], 1u);
  }
  /// parallel_do body: counts the visit of this id (ids < limit) and creates a new Leaf
  /// (id + offset), which the same parallel_do must not visit. Defined below.
  template <class Heap>
  __device__ void visit_and_spawn(Heap heap,
                                  unsigned* visits,
                                  std::uint64_t limit,
                                  std::uint64_t offset);
};

class Node : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(
      Node, soa::Tracked, (Node*, next_), (Leaf* [2], kids_), (float, weight_));

  HEAPLAB_HD Node(std::uint64_t id, float weight) : Tracked(id), next_(nullptr), weight_(weight) {
    kids_[0] = nullptr;
    kids_[1] = nullptr;
  }

  HEAPLAB_HD Node* next() const { return next_; }
  HEAPLAB_HD Leaf* kid(int i) const { return kids_[i]; }
  HEAPLAB_HD void set_next(Node* n) { next_ = n; }
  HEAPLAB_HD void set_kid(int i, Leaf* l) { kids_[i] = l; }

  /// device_do / parallel_do body: counts visits per id (ids < limit).
  __device__ void count_visit(unsigned* visits, std::uint64_t limit) {
    std::uint64_t const id = id_;
    if (id < limit) atomicAdd(&visits[id], 1u);
  }
  __device__ void count_into(unsigned long long* counter) { *counter += 1; }

  /// parallel_do body: two new Leaf children with ids kChildBase + 2 * id + k; nodes whose id is
  /// a multiple of 3 then delete themselves.
  template <class Heap>
  __device__ void grow(Heap heap);
};

class Fat : public Node {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Fat, Node, (std::uint64_t[4], extra_));

  HEAPLAB_HD Fat(std::uint64_t id, float weight) : Node(id, weight) {
    for (int i = 0; i < 4; ++i) extra_[i] = id * 4 + static_cast<std::uint64_t>(i);
  }
};

using Types = soa::HeapTypes<soa::Tracked, Leaf, Node, Fat>;
using Ref   = soa::HeapRef<Types>;

inline constexpr std::uint32_t kLeaf = Types::type_id<Leaf>;
inline constexpr std::uint32_t kNode = Types::type_id<Node>;
inline constexpr std::uint32_t kFat  = Types::type_id<Fat>;
static_assert(Types::capacity<Leaf> == 64 && Types::capacity<Node> == 29 &&
              Types::capacity<Fat> == 16);

inline constexpr std::uint64_t kChildBase = 1000000;

template <class Heap>
__device__ void Leaf::visit_and_spawn(Heap heap,
                                      unsigned* visits,
                                      std::uint64_t limit,
                                      std::uint64_t offset) {
  std::uint64_t const id = id_;
  if (id < limit) atomicAdd(&visits[id], 1u);
  heap.template make<Leaf>(id + offset, value_ + 1u);
}

template <class Heap>
__device__ void Node::grow(Heap heap) {
  std::uint64_t const id = id_;
  for (int k = 0; k < 2; ++k) {
    Leaf* const child =
        heap.template make<Leaf>(kChildBase + 2 * id + static_cast<std::uint64_t>(k), 1u);
    kids_[k] = child;
  }
  if (id % 3 == 0) heap.destroy(this);
}

}  // namespace heap_test
