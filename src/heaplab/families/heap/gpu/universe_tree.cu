// The "tree" universe (universes.cuh): an abstract base with subclasses two levels deep and
// pointer arrays to the abstract base.
#include "heaplab/families/heap/gpu/detail/universe_entry.cuh"
#include "heaplab/families/heap/gpu/universes.cuh"

namespace heaplab::heap_family::gpu::detail {

namespace {
TypeMap tree_map(std::uint32_t num_blocks, std::uint32_t n, std::uint32_t k1) {
  return type_map_of<universe_types::tree::Types>(num_blocks, n, k1, {});
}
}  // namespace

UniverseEntry tree_universe() {
  return make_entry<universe_types::tree::Types>(
      "tree",
      "abstract Node with Inner (Node*[4]), Leaf and Twig (derived from Leaf, Leaf*[8]), and "
      "Forest (Inner*[3]): subtype pointers, two levels of inheritance",
      &tree_map);
}

}  // namespace heaplab::heap_family::gpu::detail
