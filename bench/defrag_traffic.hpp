// The memory traffic a CompactGpu call cannot avoid (issue 31: what bounds Table 1): the 32-byte
// sectors that the call's kernels must touch, counted on the reference model's run of the same
// call (docs/compaction.md "The sectors a call must touch"). No GPU: the model decides the passes
// (CompactGpu sec. 3.2, Alg. 1) exactly as the compactor does, and the SOA layout of the heap's
// types says where every object, forwarding pointer and pointer array lies in memory.
//
// Counted per phase as an ideal cache would see it: each distinct sector once per kernel, read
// or written, and a written sector that the kernel writes only in part and never reads counted a
// third time (DRAM delivers the whole sector before the partial write can be merged). So the
// count is a lower bound on a kernel's DRAM traffic; what a GPU moves beyond it (ncu's
// dram__bytes) is what its caches lost. Plain C++17, host only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/model/heap_model.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/layout.hpp"

namespace heaplab::bench {

/// Where the data of a heap lies, as far as a defragmentation of type T touches it: blocks lie
/// `block_bytes` apart; within a block of T each SOA array (unit) starts at `offset` and holds
/// `element_bytes` per slot; a forwarding pointer is 8 bytes at 8 x slot (CompactGpu Listing 1).
struct TrafficGeometry {
  struct Array {
    std::uint64_t offset        = 0;
    std::uint32_t element_bytes = 0;
  };
  /// An SOA array of pointers that may point to T (CompactGpu sec. 3.4 scans exactly these).
  struct Holder {
    std::uint32_t type         = 0;  // U, the (concrete) type of the blocks that hold it
    std::uint32_t pointer_slot = 0;  // index in HeapConfig::pointer_slots(U)
    std::uint64_t offset       = 0;  // within a block of U; 8 bytes per slot
  };
  std::uint64_t block_bytes  = 0;
  std::uint32_t sector_bytes = 32;
  std::vector<Array> arrays;  // every SOA array of T, inherited fields included
  std::vector<Holder> holders;
};

/// The geometry of type id `type` of a soa::HeapTypes list, from its layout table.
template <class Types>
TrafficGeometry traffic_geometry(std::uint32_t type) {
  constexpr auto table = Types::layout_table();
  TrafficGeometry g;
  g.block_bytes            = table.block_bytes;
  soa::TypeLayout const& t = table.types[type];
  for (std::uint32_t f = 0; f < t.num_fields; ++f) {
    soa::FieldLayout const& field = table.field(type, f);
    for (std::uint32_t e = 0; e < field.elements; ++e)
      g.arrays.push_back({table.unit_offset(type, f, e), field.element_bytes});
  }
  for (std::uint32_t i = table.incoming_begin[type]; i < table.incoming_begin[type + 1]; ++i) {
    soa::PointerArrayRef const& ref = table.incoming[i];
    g.holders.push_back(
        {ref.type, table.pointer_slots_before(ref.type, ref.field) + ref.element, ref.offset});
  }
  return g;
}

/// Distinct sectors of one phase.
struct SectorCount {
  std::uint64_t read    = 0;
  std::uint64_t written = 0;
  std::uint64_t filled  = 0;  // written in part, not read: DRAM reads them before the write
  [[nodiscard]] std::uint64_t sectors() const { return read + written + filled; }
  SectorCount& operator+=(SectorCount const& o) {
    read += o.read, written += o.written, filled += o.filled;
    return *this;
  }
};

/// One pass (CompactGpu sec. 3.2-3.5).
struct PassTraffic {
  std::uint32_t candidates    = 0;  // r
  std::uint32_t sources       = 0;  // B
  std::uint64_t objects_moved = 0;
  /// The move kernel: R and the allocation bitmaps of every source and target read, every moved
  /// object's elements read and written, then its forwarding pointer (or the source's record).
  SectorCount copy;
  /// The candidate selection (level 0 of the candidate bitmap read, R written) and the block
  /// states (allocation bitmaps of sources and targets written, the sources' level-0 words of
  /// active, defrag, allocated, free and the call's sources; the targets' state words, which
  /// change for some targets only, are left out).
  SectorCount scan_and_states;
  /// CompactGpu sec. 4.4's accounting: 2 x the object bytes moved + 8 B per forwarding pointer.
  std::uint64_t useful_bytes = 0;
};

struct DefragTraffic {
  std::vector<PassTraffic> passes;
  /// The one rewrite of the call (docs/compaction.md "One rewrite per call"): the holder types'
  /// level-0 allocated words, the allocation bitmap of each of their blocks, every live pointer
  /// of a holder array, the call's source bitmap word of every non-null pointer and of every hop,
  /// the forwarding pointer (or record) of each hop, and each rewritten pointer written.
  SectorCount rewrite;
  std::uint64_t pointers_scanned   = 0;
  std::uint64_t pointers_rewritten = 0;
  std::uint64_t hops               = 0;
  /// Sec. 4.4's accounting: 8 B per pointer scanned + 16 B per pointer rewritten.
  std::uint64_t rewrite_useful_bytes = 0;
  [[nodiscard]] SectorCount total() const;
};

/// Runs model.defrag(type, options) and counts the sectors its kernels must touch, pass by pass
/// and in the rewrite. Roots are not counted. Throws std::logic_error if the plans it reads from
/// the model differ from the passes the model ran. Every pass's R is in options.order.
DefragTraffic defrag_traffic(model::HeapModel& model,
                             std::uint32_t type,
                             core::DefragOptions const& options,
                             TrafficGeometry const& geometry);

}  // namespace heaplab::bench

namespace heaplab::bench {

/// `heaplab_bench defrag-traffic`: Table 1's workload (defrag_bench_types.hpp) on the reference
/// model, its sectors per pass and phase, and the time they take at the given bandwidths.
struct DefragTrafficOptions {
  double scale     = 1.0 / 16;  // objects per class = scale * 32,768,000
  std::uint32_t n  = 3;
  std::uint32_t k1 = 0;
  double fraction  = 0.6;
  std::vector<std::string> variants{"forwarding"};
  std::uint64_t seed = 1;
  bool per_pass      = false;
  /// Same-run device-to-device copy rates (bytes read + written per second, GB/s) to turn sectors
  /// into a time: NVIDIA H100 80GB HBM3, heaplab_bench defrag, 2026-11-24.
  std::vector<double> copy_gbps{2988.7};
  std::string csv;
  /// R's order in every pass: "block-id" (CompactGpu sec. 3.2) or "fill" (the emptiest
  /// candidates as sources; core::CandidateOrder).
  std::string order = "block-id";
};

/// Prints the counts; returns the process exit status.
int run_defrag_traffic(DefragTrafficOptions const& options);

}  // namespace heaplab::bench
