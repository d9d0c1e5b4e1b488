// The validated parameters of one defragmentation call, from the heap's config, the type list's
// layout table and the caller's DefragOptions. Plain C++17 (host), shared by the GPU compactor
// and the CPU emulation.
#pragma once

#include <cstdint>
#include <string>

#include "heaplab/compact/options.hpp"
#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/heap_config.hpp"

namespace heaplab::compact::detail {

struct CallPlan {
  std::uint32_t type          = 0;
  std::uint32_t n             = 1;  // this call's factor
  std::uint32_t defrag_factor = 1;  // the heap's factor (defrag[T] bits)
  std::uint32_t k1            = 0;
  std::uint32_t source_cap    = core::kUnlimitedSources;  // B' <= source_cap
  RewriteVariant variant      = RewriteVariant::forwarding;
  std::uint32_t capacity      = 0;      // N_T
  std::uint32_t object_bytes  = 0;      // size(T)
  std::uint64_t perturb_seed  = 0;      // DefragOptions::perturb_seed
  bool count_relocations      = false;  // DefragOptions::count_relocations
  /// R's order in every pass (DefragOptions::order).
  core::CandidateOrder order = core::CandidateOrder::block_id;
};

/// Throws core::precondition_error for a type id that is out of range or abstract, n outside
/// 1 <= n < N_T (CompactGpu sec. 3: a source must fit into n targets), a forced cap of 0, or a
/// record budget too small for one source.
/// The cap is core::effective_source_cap (the variant's, lowered to options.source_cap if given),
/// the same as the model's.
template <class Types>
CallPlan make_call_plan(core::HeapConfig const& config,
                        std::uint32_t type,
                        DefragOptions const& options) {
  constexpr auto table = Types::layout_table();
  HEAPLAB_EXPECTS(type < Types::num_types,
                  "defragment: type id " + std::to_string(type) + " is not a type of the heap (" +
                      std::to_string(Types::num_types) + " types)");
  HEAPLAB_EXPECTS(table.types[type].is_abstract == 0,
                  "defragment: type '" + std::string(Types::type_name(type)) +
                      "' is abstract and has no blocks");
  std::uint32_t const cap = table.types[type].capacity;
  std::uint32_t const n   = options.n.value_or(config.defrag_factor);
  HEAPLAB_EXPECTS(n >= 1 && n < cap,
                  "defragment: factor n=" + std::to_string(n) + " must satisfy 1 <= n < " +
                      std::to_string(cap) + " (the capacity of '" + Types::type_name(type) +
                      "'; CompactGpu sec. 3)");
  HEAPLAB_EXPECTS(!options.source_cap || *options.source_cap >= 1,
                  "defragment: a forced source cap must be at least 1");
  CallPlan plan;
  plan.type          = type;
  plan.n             = n;
  plan.defrag_factor = config.defrag_factor;
  plan.k1            = options.k1.value_or(config.k1);
  plan.variant       = options.variant;
  plan.order         = options.order;
  plan.source_cap    = core::effective_source_cap(options, n);
  HEAPLAB_EXPECTS(plan.source_cap >= 1,
                  "defragment: a record budget of " + std::to_string(options.record_budget_bytes) +
                      " bytes leaves no source per pass for " + core::to_string(options.variant) +
                      " with n=" + std::to_string(n) + " (sec. 3.8: 12 (n + 1) bytes per record)");
  plan.capacity          = cap;
  plan.object_bytes      = table.types[type].size_bytes;
  plan.perturb_seed      = options.perturb_seed;
  plan.count_relocations = options.count_relocations;
  return plan;
}

}  // namespace heaplab::compact::detail
