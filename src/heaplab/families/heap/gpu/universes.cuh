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

#include "heaplab/families/heap/gpu/detail/step_kernels.cuh"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/tracked.hpp"

namespace heaplab::heap_family::gpu::universe_types {

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

// --------------------------------------------------------------------- head8, head16, head32
// Layouts unlike the others, so that a bug whose effect depends on field widths or order can show
// (issue 15): no object starts with the 8-byte id. The hidden root carries a leading field of
// 1, 2 or 4 bytes (`Head`), then the id and the cookie (soa::TrackedFields{1, 2}); inheritance
// goes three levels below it, and pointer fields and arrays follow narrower fields. GPU sizes
// for Head = u8 (u16: +1, u32: +3 to every type):
//
//   type    own fields (after Root's head, id, cookie)       size   capacity (head8)
//   Root    head: Head, id: u64, cookie: u64 (abstract)      17     0
//   A       a: u16, next: A*                                 27     64
//   B       : A; b: u32, kids: B*[3]                         55     31
//   C       : B; c: u8, back: A*                             64     27
//   D       bytes: u8[3], ref: C*, data: u64[2]              44     39
//
// A CompactGpu forwarding pointer (8 bytes at offset 8 * slot of the source block, Listing 1)
// overwrites the heads of eight slots and, for higher slots, ids and cookies of other objects: a
// mutant that stores it before every object of the block was copied (fused_forwarding_store)
// corrupts objects here, while with Tracked first it only ever hits the object's own id.
#define HEAPLAB_LAYOUT_UNIVERSE(NS, HEAD)                                                    \
  namespace NS {                                                                             \
  class A;                                                                                   \
  class C;                                                                                   \
  class Root {                                                                               \
   public:                                                                                   \
    HEAPLAB_SOA_ABSTRACT(Root);                                                              \
    HEAPLAB_SOA_FIELDS(Root, (HEAD, head_), (std::uint64_t, id_), (std::uint64_t, cookie_)); \
    static constexpr soa::TrackedFields heaplab_tracked_fields{1, 2};                        \
  };                                                                                         \
  class A : public Root {                                                                    \
   public:                                                                                   \
    HEAPLAB_SOA_DERIVED_FIELDS(A, Root, (std::uint16_t, a_), (A*, next_));                   \
    HEAPLAB_GPU_RUNNER_SCHEDULE_ACTION()                                                     \
  };                                                                                         \
  class B : public A {                                                                       \
   public:                                                                                   \
    HEAPLAB_SOA_DERIVED_FIELDS(B, A, (std::uint32_t, b_), (B* [3], kids_));                  \
  };                                                                                         \
  class C : public B {                                                                       \
   public:                                                                                   \
    HEAPLAB_SOA_DERIVED_FIELDS(C, B, (std::uint8_t, c_), (A*, back_));                       \
  };                                                                                         \
  class D : public Root {                                                                    \
   public:                                                                                   \
    HEAPLAB_SOA_DERIVED_FIELDS(                                                              \
        D, Root, (std::uint8_t[3], bytes_), (C*, ref_), (std::uint64_t[2], data_));          \
    HEAPLAB_GPU_RUNNER_SCHEDULE_ACTION()                                                     \
  };                                                                                         \
  using Types = soa::HeapTypes<Root, A, B, C, D>;                                            \
  }

HEAPLAB_LAYOUT_UNIVERSE(head8, std::uint8_t)
HEAPLAB_LAYOUT_UNIVERSE(head16, std::uint16_t)
HEAPLAB_LAYOUT_UNIVERSE(head32, std::uint32_t)
#undef HEAPLAB_LAYOUT_UNIVERSE

static_assert(head8::Types::size_bytes<head8::A> == 27 && head8::Types::capacity<head8::B> == 31 &&
              head8::Types::capacity<head8::C> == 27 && head8::Types::capacity<head8::D> == 39);
static_assert(soa::tracked_root_of<head16::Types>(soa::kNoType) == 0 &&
              soa::tracked_fields_of<head32::Types>().id == 1);

}  // namespace heaplab::heap_family::gpu::universe_types
