// The "sizes" universe (universes.cuh): concrete types of 16 to 200 bytes, pointer arrays,
// concrete inheritance.
#include "heaplab/families/heap/gpu/detail/universe_entry.cuh"
#include "heaplab/families/heap/gpu/universes.cuh"

namespace heaplab::heap_family::gpu::detail {

namespace {
TypeMap sizes_map(std::uint32_t num_blocks, std::uint32_t n, std::uint32_t k1) {
  return type_map_of<universe_types::sizes::Types>(num_blocks, n, k1, {});
}
}  // namespace

UniverseEntry sizes_universe() {
  return make_entry<universe_types::sizes::Types>(
      "sizes",
      "Tiny (16 B), Small (24 B), Pair (40 B), Wide (104 B, derived from Pair), Huge (200 B): "
      "capacities 64 down to 5, pointer arrays, concrete inheritance",
      &sizes_map);
}

}  // namespace heaplab::heap_family::gpu::detail
