// Host-only companions of heaplab/soa/heap_types.hpp: the core::HeapConfig of a heap type list
// (for the model, snapshots, the invariant catalog and schedules) and the number of blocks for a
// heap byte budget.
//
// Host code (it builds std::vector/std::string values); it may be included from .cu files.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "heaplab/core/expects.hpp"
#include "heaplab/core/heap_config.hpp"
#include "heaplab/soa/heap_types.hpp"

namespace heaplab::soa {

/// The HeapConfig of `Types` (a HeapTypes<...>) for M = num_blocks and CompactGpu parameters n
/// and k1: one TypeSpec per type in list order (name, size, base, abstract flag, own pointer
/// fields with pointee type id and array count, in declaration order). Validated: throws
/// core::precondition_error naming the problem (e.g. n >= the smallest block capacity).
template <class Types>
core::HeapConfig heap_config(std::uint32_t num_blocks,
                             std::uint32_t defrag_factor,
                             std::uint32_t k1) {
  constexpr auto table = Types::layout_table();
  core::HeapConfig config;
  config.num_blocks    = num_blocks;
  config.defrag_factor = defrag_factor;
  config.k1            = k1;
  for (std::uint32_t t = 0; t < Types::num_types; ++t) {
    TypeLayout const& ty = table.types[t];
    core::TypeSpec spec;
    spec.name        = Types::type_name(t);
    spec.size_bytes  = ty.size_bytes;
    spec.is_abstract = ty.is_abstract != 0;
    if (ty.base != kNoType) spec.base = ty.base;
    for (std::uint32_t j = 0; j < ty.num_fields; ++j) {
      FieldLayout const& f = table.field(t, j);
      if (f.declaring_type != t || !f.is_heap_pointer()) continue;
      spec.pointer_fields.push_back({Types::field_name(t, j), f.pointee, f.elements});
    }
    config.types.push_back(std::move(spec));
  }
  config.validate();
  return config;
}

/// Number of blocks of `Types` that fit in `budget_bytes` of block storage. The core's per-block
/// metadata (allocation and iteration bitmaps, type ids, block-state bitmaps) lives in separate
/// arrays and is not counted here. Throws core::precondition_error when not even one block fits
/// or when the count does not fit in 32 bits (HeapConfig::num_blocks).
template <class Types>
std::uint32_t blocks_for_budget(std::uint64_t budget_bytes) {
  constexpr std::uint64_t block = Types::block_bytes;
  HEAPLAB_EXPECTS(budget_bytes >= block,
                  "heap budget of " + std::to_string(budget_bytes) +
                      " bytes is smaller than one block: this type list needs blocks of " +
                      std::to_string(block) + " bytes");
  std::uint64_t const blocks = budget_bytes / block;
  HEAPLAB_EXPECTS(blocks <= std::uint64_t{0xFFFFFFFFu},
                  "heap budget of " + std::to_string(budget_bytes) + " bytes gives " +
                      std::to_string(blocks) + " blocks; at most 2^32 - 1 are supported");
  return static_cast<std::uint32_t>(blocks);
}

}  // namespace heaplab::soa
