// Heap types of the compaction tests: several types, inheritance (pointers declared to a base
// that may refer to a subtype), a self-referencing type, pointer arrays, a pointer to the
// abstract root (may refer to anything), and fields of every element width the move kernel
// copies differently (1, 2, 4, 8, 12 and 16 bytes).
//
//   Tracked (abstract, 16 B: id_, cookie_)
//   ├── Leaf   : tag_ (u8), small_ (u16), value_ (u32)                 23 B  N = 64 (smallest)
//   ├── Node   : next_ (Node*), kids_ (Leaf*[3]), weight_ (double),
//   │            flag_ (u8)                                            57 B  N = 25
//   │   └── Fat: any_ (Tracked*), pair_ (Pair16), v_ (Vec3),
//   │            shorts_ (u16[3])                                      99 B  N = 14
//   └── Holder : nodes_ (Node*[2]), leaf_ (Leaf*), x_ (float)          44 B  N = 33
//
// Which SOA arrays may point to each type (CompactGpu sec. 3.4):
//   Leaf:   Node.kids_[0..2] (in Node and Fat blocks), Fat.any_, Holder.leaf_
//   Node:   Node.next_ (Node, Fat blocks), Fat.any_, Holder.nodes_[0..1]
//   Fat:    the same as Node (Fat <: Node)
//   Holder: Fat.any_
// Plain C++ (g++ and nvcc).
#pragma once

#include <cstdint>

#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/tracked.hpp"

namespace compact_test {

namespace soa = heaplab::soa;

struct Pair16 {
  std::uint64_t a;
  std::uint64_t b;
};
struct Vec3 {
  float x;
  float y;
  float z;
};

class Leaf : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(
      Leaf, soa::Tracked, (std::uint8_t, tag_), (std::uint16_t, small_), (std::uint32_t, value_));
};

class Node : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Node,
                             soa::Tracked,
                             (Node*, next_),
                             (Leaf* [3], kids_),
                             (double, weight_),
                             (std::uint8_t, flag_));
};

class Fat : public Node {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(
      Fat, Node, (soa::Tracked*, any_), (Pair16, pair_), (Vec3, v_), (std::uint16_t[3], shorts_));
};

class Holder : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(
      Holder, soa::Tracked, (Node* [2], nodes_), (Leaf*, leaf_), (float, x_));
};

using Types = soa::HeapTypes<soa::Tracked, Leaf, Node, Fat, Holder>;

inline constexpr std::uint32_t kTracked         = Types::type_id<soa::Tracked>;
inline constexpr std::uint32_t kLeaf            = Types::type_id<Leaf>;
inline constexpr std::uint32_t kNode            = Types::type_id<Node>;
inline constexpr std::uint32_t kFat             = Types::type_id<Fat>;
inline constexpr std::uint32_t kHolder          = Types::type_id<Holder>;
inline constexpr std::uint32_t kConcreteTypes[] = {kLeaf, kNode, kFat, kHolder};

static_assert(Types::size_bytes<Leaf> == 23 && Types::size_bytes<Node> == 57 &&
              Types::size_bytes<Fat> == 99 && Types::size_bytes<Holder> == 44);
static_assert(Types::capacity<Leaf> == 64 && Types::capacity<Node> == 25 &&
              Types::capacity<Fat> == 14 && Types::capacity<Holder> == 33);

/// Byte k of element e of field j of the object with id `id`: what the population writes into
/// every field that is not a heap pointer (ids and cookies excepted), and what the checks
/// expect after any number of moves.
HEAPLAB_HD_INLINE constexpr unsigned char pattern_byte(std::uint64_t id,
                                                       std::uint32_t j,
                                                       std::uint32_t e,
                                                       std::uint32_t k) {
  std::uint64_t z =
      id * 0x9E3779B97F4A7C15ull + (std::uint64_t{j} << 40) + (std::uint64_t{e} << 20) + k + 1;
  z ^= z >> 29;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 32;
  return static_cast<unsigned char>(z & 0xFFu);
}

}  // namespace compact_test
