// A small hand-built heap shared by the check tests. Every number in it is worked out by hand in
// the comments, never computed by the code under test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/heap_config.hpp"

namespace heaplab::check::testing {

// Type ids of the test config.
inline constexpr std::uint32_t kAgent = 0;  // abstract, 16 B; field home -> Cell
inline constexpr std::uint32_t kFish  = 1;  // Agent, 16 B: the smallest type, capacity 64
inline constexpr std::uint32_t kShark = 2;  // Agent, 32 B: capacity 64*16/32 = 32; target -> Agent
inline constexpr std::uint32_t kCell =
    3;  // 24 B: capacity floor(64*16/24) = 42; agents[2] -> Agent

/// The Wa-Tor-like config (CompactGpu sec. 2.1) with M = 70 blocks (two level-0 containers, so
/// every state bitmap has two levels), n = 1, k1 = 0.
inline core::HeapConfig test_config() {
  core::HeapConfig c;
  c.types.push_back({"Agent", 16, std::nullopt, true, {{"home", kCell, 1}}});
  c.types.push_back({"Fish", 16, kAgent, false, {}});
  c.types.push_back({"Shark", 32, kAgent, false, {{"target", kAgent, 1}}});
  c.types.push_back({"Cell", 24, std::nullopt, false, {{"agents", kAgent, 2}}});
  c.num_blocks    = 70;
  c.defrag_factor = 1;
  c.k1            = 0;
  return c;
}

/// Bits lo..hi-1 set.
inline std::uint64_t slot_range(unsigned lo, unsigned hi) {
  std::uint64_t m = 0;
  for (unsigned i = lo; i < hi; ++i) m |= std::uint64_t{1} << i;
  return m;
}

/// A consistent snapshot at quiescence (n = 1: a block is a candidate iff used * 2 <= capacity):
///   block 0  Fish   slots 0..2    3/64  active, defrag
///   block 1  Fish   all 64       64/64  full: not active, not defrag
///   block 2  Fish   slots 0..39  40/64  active, not defrag (80 > 64)
///   block 3  Shark  all 32       32/32  full; padding bits 32..63 set
///   block 4  Cell   slots 0..9   10/42  active, defrag (20 <= 42)
///   block 6  free, stale header type Fish
///   block 65 Shark  slots 0, 1    2/32  active, defrag (in the second level-0 container)
///   every other block free.
/// Object ids: block 0: 0..2, block 1: 3..66, block 2: 67..106, block 3: 107..138,
/// block 4: 139..148, block 65: 149, 150 (151 objects). With payloads:
///   Fish 0 (0:0).home -> Cell 139 (4:0); Shark 107 (3:0).home -> 4:1, .target -> Fish 0 (0:0);
///   Shark 149 (65:0).target -> Shark 107 (3:0); Cell 139 (4:0).agents = [65:1, null].
inline HeapSnapshot valid_snapshot(bool with_payloads) {
  HeapSnapshot s   = make_empty_snapshot(test_config(), with_payloads);
  s.producer       = "test";
  std::uint64_t id = 0;
  id               = make_block_allocated(s, 0, kFish, slot_range(0, 3), id);
  id               = make_block_allocated(s, 1, kFish, slot_range(0, 64), id);
  id               = make_block_allocated(s, 2, kFish, slot_range(0, 40), id);
  id               = make_block_allocated(s, 3, kShark, slot_range(0, 32), id);
  id               = make_block_allocated(s, 4, kCell, slot_range(0, 10), id);
  id               = make_block_allocated(s, 65, kShark, slot_range(0, 2), id);
  s.blocks[6].type = kFish;  // stale: free blocks keep their last type
  if (with_payloads) {
    s.blocks[0].objects[0]->refs[0]  = core::SlotRef{4, 0};
    s.blocks[3].objects[0]->refs[0]  = core::SlotRef{4, 1};
    s.blocks[3].objects[0]->refs[1]  = core::SlotRef{0, 0};
    s.blocks[65].objects[0]->refs[1] = core::SlotRef{3, 0};
    s.blocks[4].objects[0]->refs[0]  = core::SlotRef{65, 1};
  }
  return s;
}

inline std::string describe(std::vector<Violation> const& vs) {
  std::string out;
  for (auto const& v : vs) out += "  " + v.to_string() + "\n";
  return out.empty() ? "  (none)\n" : out;
}

}  // namespace heaplab::check::testing
