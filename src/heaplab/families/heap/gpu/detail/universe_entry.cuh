// Building a universe's UniverseEntry from its type list (universe_*.cu). nvcc only.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "heaplab/families/heap/gpu/detail/universe_executor.cuh"
#include "heaplab/soa/host_config.hpp"

namespace heaplab::heap_family::gpu::detail {

/// The TypeMap of `Types` with M, n, k1: the GPU config without its tracked root (soa::Tracked or
/// the universe's own, tracked.hpp), with `schedule_sizes` (empty: the GPU sizes).
template <class Types>
TypeMap type_map_of(std::uint32_t num_blocks,
                    std::uint32_t n,
                    std::uint32_t k1,
                    std::vector<std::uint32_t> const& schedule_sizes) {
  return TypeMap(soa::heap_config<Types>(num_blocks, n, k1),
                 {soa::tracked_root_of<Types>(Types::num_types)},
                 schedule_sizes);
}

/// type_map_of for a universe whose schedule sizes are its GPU sizes: every universe but wator.
template <class Types>
TypeMap gpu_sized_map(std::uint32_t num_blocks, std::uint32_t n, std::uint32_t k1) {
  return type_map_of<Types>(num_blocks, n, k1, {});
}

/// "Tracked(16, abstract) Cell(40) Agent(24, abstract) Fish(40: Agent) ...".
inline std::string describe_gpu_types(core::HeapConfig const& gpu) {
  std::string out;
  for (std::uint32_t t = 0; t < gpu.num_types(); ++t) {
    auto const& ty = gpu.types[t];
    out += (out.empty() ? "" : " ") + ty.name + "(" + std::to_string(ty.size_bytes);
    if (ty.base) out += ": " + gpu.types[*ty.base].name;
    if (ty.is_abstract) out += ", abstract";
    out += ")";
  }
  return out;
}

template <class Types>
UniverseEntry make_entry(std::string name,
                         std::string description,
                         TypeMap (*type_map)(std::uint32_t, std::uint32_t, std::uint32_t)) {
  UniverseEntry e;
  TypeMap const map      = type_map(32, 1, 0);
  e.info.name            = std::move(name);
  e.info.description     = std::move(description);
  e.info.config          = map.schedule();
  e.info.gpu_block_bytes = Types::block_bytes;
  e.info.gpu_types       = describe_gpu_types(map.gpu());
  e.type_map             = type_map;
  e.make_executor        = &make_executor<Types>;
  return e;
}

}  // namespace heaplab::heap_family::gpu::detail
