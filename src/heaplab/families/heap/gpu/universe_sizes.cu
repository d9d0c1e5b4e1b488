// The "sizes" universe (universes.cuh): concrete types of 16 to 200 bytes, pointer arrays,
// concrete inheritance.
#include "heaplab/families/heap/gpu/detail/universe_entry.cuh"
#include "heaplab/families/heap/gpu/universes.cuh"

namespace heaplab::heap_family::gpu::detail {

UniverseEntry sizes_universe() {
  return make_entry<universe_types::sizes::Types>(
      "sizes",
      "Tiny (16 B), Small (24 B), Pair (40 B), Wide (104 B, derived from Pair), Huge (200 B): "
      "capacities 64 down to 5, pointer arrays, concrete inheritance",
      &gpu_sized_map<universe_types::sizes::Types>);
}

}  // namespace heaplab::heap_family::gpu::detail
