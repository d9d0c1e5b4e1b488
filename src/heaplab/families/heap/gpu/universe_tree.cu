// The "tree" universe (universes.cuh): an abstract base with subclasses two levels deep and
// pointer arrays to the abstract base.
#include "heaplab/families/heap/gpu/detail/universe_entry.cuh"
#include "heaplab/families/heap/gpu/universes.cuh"

namespace heaplab::heap_family::gpu::detail {

UniverseEntry tree_universe() {
  return make_entry<universe_types::tree::Types>(
      "tree",
      "abstract Node with Inner (Node*[4]), Leaf and Twig (derived from Leaf, Leaf*[8]), and "
      "Forest (Inner*[3]): subtype pointers, two levels of inheritance",
      &gpu_sized_map<universe_types::tree::Types>);
}

}  // namespace heaplab::heap_family::gpu::detail
