// The "wator" universe (universes.cuh): exactly the config of proofs_tests/model/data/wator.json.
#include "heaplab/families/heap/gpu/detail/universe_entry.cuh"
#include "heaplab/families/heap/gpu/universes.cuh"

namespace heaplab::heap_family::gpu::detail {

namespace {
TypeMap wator_map(std::uint32_t num_blocks, std::uint32_t n, std::uint32_t k1) {
  // wator.json's sizes: Cell 16, Agent 16, Fish 16, Shark 32 (capacities 64, 0, 64, 32).
  return type_map_of<universe_types::wator::Types>(num_blocks, n, k1, {16, 16, 16, 32});
}
}  // namespace

UniverseEntry wator_universe() {
  return make_entry<universe_types::wator::Types>(
      "wator",
      "Cell, abstract Agent, Fish and Shark derived from Agent: the config of "
      "proofs_tests/model/data/wator.json (CompactGpu sec. 2.1)",
      &wator_map);
}

}  // namespace heaplab::heap_family::gpu::detail
