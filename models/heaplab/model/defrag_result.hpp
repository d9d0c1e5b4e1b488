// Plans and statistics of the model's CompactGpu defragmentation (CompactGpu sec. 3, sec. 4.2).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "heaplab/check/snapshot.hpp"
#include "heaplab/core/defrag_limits.hpp"

namespace heaplab::model {

/// One object relocation of a pass: object `id` moves from `from` to `to`.
struct Relocation {
  std::uint64_t id = 0;
  core::SlotRef from;
  core::SlotRef to;
};

/// The source block R[s] and its targets R[s + i*B], i = 1..n, with the moves of CompactGpu Alg. 1:
/// the j-th live object of the source (slot order) goes to the j-th free slot across the targets,
/// taken in order (CompactGpu sec. 3.2, Fig. 5 and Fig. 6).
struct SourceAssignment {
  std::uint32_t source = 0;
  std::vector<std::uint32_t> targets;
  std::vector<Relocation> moves;
};

/// One pass: R (candidates sorted by block index), the sources the candidates allow,
/// floor(r / (n + 1)), and B, the sources this pass uses: min(floor(r / (n + 1)), source_cap)
/// (core/defrag_limits.hpp; without a cap B = floor(r / (n + 1)) as in CompactGpu sec. 3.2).
/// The targets of R[s] are R[s + i*B].
/// The order of a pass's candidate array R (core/defrag_limits.hpp): ascending block id
/// (CompactGpu sec. 3.2, the default) or by fill, emptiest first, ties by block id.
using core::CandidateOrder;

struct DefragPassPlan {
  std::uint32_t type = 0;
  std::uint32_t n    = 1;
  std::vector<std::uint32_t> R;
  std::uint32_t sources_allowed = 0;      // floor(r / (n + 1))
  std::uint32_t B               = 0;      // min(sources_allowed, source cap)
  std::vector<SourceAssignment> sources;  // R[0] .. R[B-1], in that order
};

/// One pass. A pass only moves objects and updates block states; pointers are rewritten once per
/// call, after the last pass (the pointer counts are in DefragResult; docs/model.md "One rewrite
/// per call").
struct DefragPassStats {
  std::uint32_t candidates      = 0;  // r at the start of the pass
  std::uint32_t sources_allowed = 0;  // floor(r / (n + 1))
  std::uint32_t sources         = 0;  // B = min(sources_allowed, source cap)
  std::uint64_t objects_moved   = 0;
};

using core::DefragStop;  // why the call stopped (core/defrag_limits.hpp)

struct DefragResult {
  std::uint32_t type = 0;
  std::uint32_t n    = 1;  // the factor this call used
  std::uint32_t k1   = 0;
  /// At most this many sources per pass (core::kUnlimitedSources: no cap).
  std::uint32_t source_cap = core::kUnlimitedSources;
  std::vector<DefragPassStats> passes;
  /// The one pointer rewrite of the call, after the last pass (CompactGpu sec. 3.4; once per call,
  /// not per pass: docs/model.md). All 0 when no pass ran.
  /// Pointer slots of the types U that may point to T (the type-limited scan), in the allocated
  /// blocks of U after the last pass.
  std::uint64_t pointers_scanned = 0;
  /// Those of the scanned slots whose object moved at least once in this call.
  std::uint64_t pointers_rewritten = 0;
  /// Root entries whose object moved at least once in this call.
  std::uint64_t roots_rewritten   = 0;
  DefragStop stop                 = DefragStop::k1_reached;
  std::uint32_t candidates_before = 0;  // with the factor of this call
  std::uint32_t candidates_after  = 0;
  /// How many times each object of T that moved was relocated in this call.
  std::map<std::uint64_t, std::uint32_t> relocations;
  /// [c] = number of objects of T (live throughout) relocated exactly c times; [0] = not moved.
  std::vector<std::uint64_t> objects_by_relocation_count;
  /// [k - 1] = number of relocations that were the k-th relocation of their object (the stacked
  /// bars of CompactGpu Fig. 10).
  std::vector<std::uint64_t> relocations_by_ordinal;
  /// F (CompactGpu sec. 2.2) over the allocated blocks of T, and over all allocated blocks.
  double fragmentation_before      = 0;
  double fragmentation_after       = 0;
  double heap_fragmentation_before = 0;
  double heap_fragmentation_after  = 0;
  std::uint32_t blocks_before      = 0;  // allocated blocks of T
  std::uint32_t blocks_after       = 0;
};

}  // namespace heaplab::model
