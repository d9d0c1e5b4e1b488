// The heap and defragmentation options every app of `heaplab_apps` shares (docs/apps.md
// "Options every app has"): the heap size, DynaSOAr's allocator parameters and ablations,
// CompactGpu's defragmentation policy in the loop (sec. 3.7), and the memory and the variants
// of a run (--memory-mib, --only; memory_budget.hpp). Plain C++17 (CPU-tested in
// common_test.cpp); heap_options() in defrag_loop.cuh turns them into soa::HeapOptions and
// cli.hpp adds them to a CLI11 subcommand.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "heaplab/compact/policy.hpp"
#include "heaplab/core/defrag_limits.hpp"

namespace heaplab::apps {

struct HeapFlags {
  /// Heap blocks M; 0: the app's default size.
  std::uint32_t heap_blocks = 0;
  /// r, active-block lookups before a new block is opened (DynaSOAr sec. 4.2); 0: the heap's.
  std::uint32_t active_lookups = 0;
  /// Warp-coalesced frees (HeapOptions::coalesce_frees); false: one fetch_and per object.
  bool coalesce_frees = true;
  /// DynaSOAr's request coalescing and bitmap rotation (HeapOptions::coalesce_requests,
  /// rotate_bitmaps; Fig. 12C ablations "NoCoal", "NoShift").
  bool coalesce_requests = true;
  bool rotate_bitmaps    = true;
  /// heaplab's block hints per warp slot (HeapOptions::block_hints; issue 30, on by default).
  bool block_hints = true;
  /// heaplab's claim tickets (HeapOptions::claim_wait_rounds; not in the papers); nullopt: the
  /// heap's default, 0: off (DynaSOAr Alg. 1 as published).
  std::optional<std::uint32_t> claim_wait_rounds;

  /// Defragmentation in the loop (CompactGpu sec. 3.7); at most one of the two policies:
  /// every m iterations (0: off) ...
  std::uint32_t defrag_every = 0;
  /// ... or after massive deallocations: k2 candidates, a count ("10000") or a percentage of the
  /// heap's blocks ("5%"); empty: off.
  std::string defrag_after;
  /// n (HeapConfig::defrag_factor), k1 and the rewriting variant of every call.
  std::uint32_t defrag_n  = 1;
  std::uint32_t defrag_k1 = 16;  // CompactGpu sec. 4.3: "We chose k1 = 16"
  std::string rewrite     = "forwarding";
  /// The candidate order of every call (core::CandidateOrder): block-id (the paper's) or fill.
  std::string defrag_order = "block-id";

  /// --memory-mib: the MiB every variant holds its objects in (memory_budget.hpp; DynaSOAr
  /// Fig. 11); 0: each variant's default size.
  std::uint64_t memory_mib = 0;
  /// false with --only naming another variant: the heap variant does not run.
  bool run_heap = true;
};

/// The policy the flags name, or nullopt when defragmentation is off. Throws
/// std::invalid_argument for both policies at once or a malformed --defrag-after.
std::optional<compact::DefragPolicy> defrag_policy(HeapFlags const& flags);

/// The rewriting variant --rewrite names (forwarding, recompute-global, recompute-shared).
/// Throws std::invalid_argument naming the accepted values.
core::RewriteVariant rewrite_variant(std::string const& name);

/// The candidate order --defrag-order names (block-id, fill); std::invalid_argument otherwise.
core::CandidateOrder defrag_order(std::string const& name);

/// Checks the flags (policy, variant, n >= 1); throws std::invalid_argument.
void validate(HeapFlags const& flags);

/// One line for the run's header: "r 2, frees coalesced, defrag every 50 (n 1, k1 16, forwarding)".
std::string describe(HeapFlags const& flags);

/// ", PLANTED BUG <name>" for the name of the bug a build plants (pass core::mutant::kPlanted
/// from the app's own translation unit: each planted-bug library is compiled with its own
/// name, docs/mutants.md), "" for none: the end of the apps' header lines.
std::string planted_bug_note(char const* planted);

}  // namespace heaplab::apps
