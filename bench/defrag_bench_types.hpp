// The workload of CompactGpu Table 1 (sec. 4.4), shared by `heaplab_bench defrag` (the GPU run)
// and `heaplab_bench defrag-traffic` (the same heap on the reference model, for the bytes a call
// must move): the two classes, how many objects, which ones are deleted and what points where.
// Host and device (nvcc or a host compiler).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mix.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/tracked.hpp"

namespace heaplab::bench {

// The two classes of Table 1's synthetic benchmark: 32 bytes each (id, cookie, one pointer to
// the other class, one payload word), so every block holds 64 objects and exactly one SOA array
// per block may point to the defragmented class ("#Rewr. Fields 1").
class DefragBenchB;
class DefragBenchA : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(DefragBenchA,
                             soa::Tracked,
                             (DefragBenchB*, other_),
                             (std::uint64_t, payload_));
  HEAPLAB_HD explicit DefragBenchA(std::uint64_t id) : Tracked(id), other_(nullptr), payload_(0) {}
};
class DefragBenchB : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(DefragBenchB,
                             soa::Tracked,
                             (DefragBenchA*, other_),
                             (std::uint64_t, payload_));
  HEAPLAB_HD explicit DefragBenchB(std::uint64_t id) : Tracked(id), other_(nullptr), payload_(0) {}
};
using DefragBenchTypes = soa::HeapTypes<soa::Tracked, DefragBenchA, DefragBenchB>;
static_assert(DefragBenchTypes::size_bytes<DefragBenchA> == 32 &&
              DefragBenchTypes::capacity<DefragBenchA> == 64);

/// Objects per class at scale 1 (CompactGpu sec. 4.4).
inline constexpr std::uint64_t kDefragBenchObjects = 32768000;

/// Object i of a class has id 2 i + 1 (class A) or 2 i + 2 (class B).
HEAPLAB_HD_INLINE constexpr std::uint64_t defrag_bench_id(std::uint64_t i, bool class_b) {
  return 2 * i + (class_b ? 2 : 1);
}

/// Whether object i of class A is deleted (a pseudo-random fraction of them).
HEAPLAB_HD_INLINE bool defrag_bench_deleted(std::uint64_t i, std::uint64_t seed, double fraction) {
  return static_cast<double>(core::splitmix64(i ^ (seed << 40)) >> 11) * 0x1.0p-53 < fraction;
}

/// The B object that A[i] points to.
HEAPLAB_HD_INLINE std::uint64_t defrag_bench_a_target(std::uint64_t i,
                                                      std::uint64_t seed,
                                                      std::uint64_t count) {
  return core::splitmix64(i * 2 + seed) % count;
}

/// The A object that B[i] points to, unless that one is deleted (then B[i] holds null).
HEAPLAB_HD_INLINE std::uint64_t defrag_bench_b_target(std::uint64_t i,
                                                      std::uint64_t seed,
                                                      std::uint64_t count) {
  return core::splitmix64(i * 2 + 1 + seed) % count;
}

/// Blocks of the benchmark's heap: every object fits with 2% + 1024 blocks to spare (concurrent
/// block initialization leaves some blocks partly filled). The callers refuse more than 2^32 - 1
/// (HeapConfig::num_blocks is 32 bits).
inline std::uint64_t defrag_bench_blocks(std::uint64_t count, bool both) {
  return (count + 63) / 64 * (both ? 2 : 1) * 102 / 100 + 1024;
}

/// The rewrite variant named `s` (forwarding, recompute-global, recompute-shared); throws
/// std::runtime_error for another name. Host only.
inline core::RewriteVariant defrag_bench_variant(std::string const& s) {
  for (auto v : {core::RewriteVariant::forwarding,
                 core::RewriteVariant::recompute_global,
                 core::RewriteVariant::recompute_shared})
    if (s == core::to_string(v)) return v;
  throw std::runtime_error("unknown variant '" + s +
                           "' (forwarding, recompute-global, recompute-shared)");
}

/// The candidate order named `s` (block-id, fill; core::CandidateOrder); throws
/// std::runtime_error for another name. Host only.
inline core::CandidateOrder defrag_bench_order(std::string const& s) {
  if (auto const o = core::candidate_order_from_string(s)) return *o;
  throw std::runtime_error("unknown candidate order '" + s + "' (block-id, fill)");
}

}  // namespace heaplab::bench
