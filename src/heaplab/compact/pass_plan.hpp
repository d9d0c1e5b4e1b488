// The arithmetic of one CompactGpu pass (CompactGpu sec. 3.2, 3.6; docs/compaction.md): when a
// pass runs, how many sources it uses, which blocks are its targets, and where CompactGpu Alg. 1
// puts the j-th live object of a source. Host and device; plain C++17 (the GPU kernels, the CPU
// emulation of the kernels and the CPU tests all call these very functions).
#pragma once

#include <cstdint>

#include "heaplab/core/bitops.hpp"
#include "heaplab/core/defrag_limits.hpp"
#include "heaplab/core/host_device.hpp"

namespace heaplab::compact {

/// Threads per source block of the move and forwarding kernels (CompactGpu Alg. 1: "64 consecutive
/// threads to every source block"; a block holds at most 64 objects).
inline constexpr std::uint32_t kThreadsPerSource = 64;

using core::DefragStop;

/// What the candidates of one scan allow: stop, or run a pass with these numbers.
struct PassDecision {
  bool run                      = false;
  DefragStop stop               = DefragStop::k1_reached;  // when !run
  std::uint32_t candidates      = 0;                       // r
  std::uint32_t sources_allowed = 0;                       // B = floor(r / (n + 1))
  std::uint32_t sources         = 0;                       // B' = min(B, cap)
};

/// Sec. 3.6: passes run while more than k1 candidates remain; a pass with B = 0 cannot move
/// anything and ends the call. cap: core::sources_per_pass (or a smaller forced cap), >= 1.
HEAPLAB_HD_INLINE constexpr PassDecision decide_pass(std::uint32_t r,
                                                     std::uint32_t n,
                                                     std::uint32_t k1,
                                                     std::uint32_t cap) {
  PassDecision d;
  d.candidates      = r;
  d.sources_allowed = r / (n + 1u);
  if (r <= k1) {
    d.stop = DefragStop::k1_reached;
    return d;
  }
  if (d.sources_allowed == 0) {
    d.stop = DefragStop::no_progress;
    return d;
  }
  d.run     = true;
  d.sources = core::capped_sources(d.sources_allowed, cap);
  return d;
}

/// Index into R of target i (1..n) of source s (0..B'-1) of a pass with B' sources: s + i * B'
/// (sec. 3.2, Fig. 5). Index 0 (i = 0) is the source itself.
HEAPLAB_HD_INLINE constexpr std::uint32_t pass_block_index(std::uint32_t s,
                                                           std::uint32_t i,
                                                           std::uint32_t sources) {
  return s + i * sources;
}

/// Where CompactGpu Alg. 1 puts an object: target i (1..n) of its source, and the slot in that
/// target. target == 0 means "does not fit" (impossible when every block of the record is a
/// candidate).
struct Destination {
  std::uint32_t target = 0;
  std::uint32_t slot   = 0;
};

/// CompactGpu Alg. 1 lines 6-17: the j-th live object of a source (j = 0 for the lowest occupied
/// slot) goes to the j-th free slot across the targets, taken in order 1..n and each in slot order.
/// `target_bitmap(i)` returns the allocation bitmap of target i as it was before the pass (bits
/// at and above the capacity set, DynaSOAr App. A.1, so its zero bits are exactly the free
/// slots).
template <class TargetBitmap>
HEAPLAB_HD_INLINE Destination destination_of(std::uint32_t j,
                                             std::uint32_t n,
                                             TargetBitmap const& target_bitmap) {
  std::uint32_t t_loc = j;
  for (std::uint32_t i = 1; i <= n; ++i) {
    std::uint64_t const free_slots = ~target_bitmap(i);
    auto const t_slots             = static_cast<std::uint32_t>(core::popcount(free_slots));
    if (t_loc < t_slots)
      return Destination{
          i, static_cast<std::uint32_t>(core::nth_set_bit(free_slots, static_cast<int>(t_loc)))};
    t_loc -= t_slots;
  }
  return Destination{};
}

/// The slots a target with allocation bitmap `before` receives when `count` objects go to it:
/// its lowest `count` free slots (what destination_of hands out, target by target).
HEAPLAB_HD_INLINE std::uint64_t received_slots(std::uint64_t before, std::uint32_t count) {
  return core::lowest_set_bits(~before, count);
}

}  // namespace heaplab::compact
