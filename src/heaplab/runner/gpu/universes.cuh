// The GPU runner's type universes: compile-time heap type lists (the field DSL, docs/allocator.md)
// whose schedule configs the GPU runner supports (docs/gpu-runner.md "Type universes"). nvcc only
// (the parallel_do action is device code); the configs are available from plain C++ through
// gpu::universes().
//
// Every list starts with soa::Tracked (id and cookie, hidden from schedules, type_map.hpp), and
// every class that derives directly from it declares the runner's parallel_do body
// (HEAPLAB_GPU_RUNNER_SCHEDULE_ACTION), which its subclasses inherit. Sizes below are the GPU
// sizes (DynaSOAr sec. 3.2: all fields, inherited included; Tracked's id and cookie are 16 B).
#pragma once

#include <cstdint>

#include "heaplab/runner/gpu/detail/step_kernels.cuh"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/tracked.hpp"

namespace heaplab::runner::gpu::universe_types {

namespace soa = heaplab::soa;

// ------------------------------------------------------------------------------------- wator
// Exactly the config of proofs_tests/model/data/wator.json (CompactGpu sec. 2.1's Wa-Tor):
//
//   type    schedule size  GPU size                                  capacity
//   Cell    16             40: id, cookie, agent, neighbors[2]       64
//   Agent   16 (abstract)  24: id, cookie, home                      0
//   Fish    16 (: Agent)   40: Agent + 16 B padding                  64
//   Shark   32 (: Agent)   80: Agent + prey + 48 B padding           32
//
// The schedule sizes are the file's; the GPU sizes are proportional (padding), so both give the
// same capacities, which is all a size decides (TypeMap checks it).
namespace wator {

class Agent;

class Cell : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Cell, soa::Tracked, (Agent*, agent), (Cell* [2], neighbors));
  HEAPLAB_GPU_RUNNER_SCHEDULE_ACTION()
};

class Agent : public soa::Tracked {
 public:
  HEAPLAB_SOA_ABSTRACT(Agent);
  HEAPLAB_SOA_DERIVED_FIELDS(Agent, soa::Tracked, (Cell*, home));
  HEAPLAB_GPU_RUNNER_SCHEDULE_ACTION()
};

class Fish : public Agent {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Fish, Agent, (std::uint64_t[2], padding));
};

class Shark : public Agent {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Shark, Agent, (Fish*, prey), (std::uint64_t[6], padding));
};

using Types = soa::HeapTypes<soa::Tracked, Cell, Agent, Fish, Shark>;
static_assert(Types::capacity<Cell> == 64 && Types::capacity<Fish> == 64 &&
              Types::capacity<Shark> == 32 && Types::size_bytes<Shark> == 80);

}  // namespace wator

// ------------------------------------------------------------------------------------- sizes
// Concrete types of very different sizes, pointer arrays, concrete inheritance:
//
//   type    GPU size  fields (own)                                  capacity
//   Tiny    16        (none: id and cookie only)                    64
//   Small   24        next: Small*                                  42
//   Pair    40        kids: Small*[2], link: Pair*                  25
//   Wide    104       : Pair; more: Small*[4], data: u64[4]         9
//   Huge    200       owner: Pair*, data: u64[22]                   5
//
// n < 5 (the smallest capacity). Pointer slots: Pair 3, Wide 7 (Pair's 3 first), Huge 1.
namespace sizes {

class Tiny : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Tiny, soa::Tracked);
  HEAPLAB_GPU_RUNNER_SCHEDULE_ACTION()
};

class Small : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Small, soa::Tracked, (Small*, next));
  HEAPLAB_GPU_RUNNER_SCHEDULE_ACTION()
};

class Pair : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Pair, soa::Tracked, (Small* [2], kids), (Pair*, link));
  HEAPLAB_GPU_RUNNER_SCHEDULE_ACTION()
};

class Wide : public Pair {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Wide, Pair, (Small* [4], more), (std::uint64_t[4], data));
};

class Huge : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Huge, soa::Tracked, (Pair*, owner), (std::uint64_t[22], data));
  HEAPLAB_GPU_RUNNER_SCHEDULE_ACTION()
};

using Types = soa::HeapTypes<soa::Tracked, Tiny, Small, Pair, Wide, Huge>;
static_assert(Types::capacity<Tiny> == 64 && Types::capacity<Small> == 42 &&
              Types::capacity<Pair> == 25 && Types::capacity<Wide> == 9 &&
              Types::capacity<Huge> == 5);

}  // namespace sizes

// -------------------------------------------------------------------------------------- tree
// An abstract base with concrete subclasses two levels deep, and pointers to the abstract base:
//
//   type     GPU size  fields (own)                                 capacity
//   Node     24        parent: Node*            (abstract)          0
//   Inner    56        : Node; children: Node*[4]                   32
//   Leaf     28        : Node; value: u32                           64
//   Twig     92        : Leaf; siblings: Leaf*[8]                   19
//   Forest   48        trees: Inner*[3], count: u64                 37
namespace tree {

class Inner;
class Leaf;

class Node : public soa::Tracked {
 public:
  HEAPLAB_SOA_ABSTRACT(Node);
  HEAPLAB_SOA_DERIVED_FIELDS(Node, soa::Tracked, (Node*, parent));
  HEAPLAB_GPU_RUNNER_SCHEDULE_ACTION()
};

class Inner : public Node {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Inner, Node, (Node* [4], children));
};

class Leaf : public Node {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Leaf, Node, (std::uint32_t, value));
};

class Twig : public Leaf {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Twig, Leaf, (Leaf* [8], siblings));
};

class Forest : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Forest, soa::Tracked, (Inner* [3], trees), (std::uint64_t, count));
  HEAPLAB_GPU_RUNNER_SCHEDULE_ACTION()
};

using Types = soa::HeapTypes<soa::Tracked, Node, Inner, Leaf, Twig, Forest>;
static_assert(Types::capacity<Inner> == 32 && Types::capacity<Leaf> == 64 &&
              Types::capacity<Twig> == 19 && Types::capacity<Forest> == 37);

}  // namespace tree

}  // namespace heaplab::runner::gpu::universe_types
