// heaplab_bench defrag-traffic's count (bench/defrag_traffic.hpp) on a call small enough to count
// by hand, and the geometry it reads from Table 1's layout. Every expected number below is worked
// out in the comments from the placements, not taken from a run.
#include "defrag_traffic.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "defrag_bench_types.hpp"
#include "heaplab/model/heap_model.hpp"

namespace heaplab::bench {
namespace {

constexpr std::uint32_t kT = 0;  // defragmented: two 8-byte fields (arrays at 0 and 512)
constexpr std::uint32_t kU = 1;  // holder: one pointer to T (array at 0)

core::HeapConfig config() {
  core::HeapConfig c;
  c.types         = {core::TypeSpec{"t", 16, std::nullopt, false, {}},
                     core::TypeSpec{"u", 16, std::nullopt, false, {{"to_t", kT, 1}}}};
  c.num_blocks    = 4;
  c.defrag_factor = 1;
  c.k1            = 0;
  return c;
}

TrafficGeometry geometry() {
  TrafficGeometry g;
  g.block_bytes = 1024;
  g.arrays      = {{0, 8}, {512, 8}};
  g.holders     = {{kU, 0, 0}};
  return g;
}

/// Block 0: T ids 1, 2, 3, 8 in slots 0, 1, 5, 6. Block 1: T ids 4..7 in slots 0..3. Block 2: U
/// id 10 -> 3, U id 11 -> 4, U id 12 -> null in slots 0, 1, 2. With n = 1 both T blocks are
/// candidates (fill <= 32), R = [0, 1], B = 1: block 0 is the source, block 1 its target, and
/// Alg. 1 moves ids 1, 2, 3, 8 to block 1's lowest free slots 4, 5, 6, 7. Then one candidate is
/// left: one pass.
model::HeapModel heap_of(std::vector<model::ObservedAllocation> const& placed) {
  model::HeapModel m(config());
  auto const error = m.accept_allocations(placed);
  EXPECT_FALSE(error.has_value()) << error->to_string();
  return m;
}

/// Block 0: T ids 1, 2, 3, 8 in slots 0, 1, 5, 6.
std::vector<model::ObservedAllocation> block0() {
  using model::ObservedAllocation;
  return {ObservedAllocation{1, kT, 0, 0, {}},
          ObservedAllocation{2, kT, 0, 1, {}},
          ObservedAllocation{3, kT, 0, 5, {}},
          ObservedAllocation{8, kT, 0, 6, {}}};
}

model::HeapModel heap() {
  using model::ObservedAllocation;
  std::vector<ObservedAllocation> placed = block0();
  for (auto const& a : {ObservedAllocation{4, kT, 1, 0, {}},
                        ObservedAllocation{5, kT, 1, 1, {}},
                        ObservedAllocation{6, kT, 1, 2, {}},
                        ObservedAllocation{7, kT, 1, 3, {}},
                        ObservedAllocation{10, kU, 2, 0, {3}},
                        ObservedAllocation{11, kU, 2, 1, {4}},
                        ObservedAllocation{12, kU, 2, 2, {std::nullopt}}})
    placed.push_back(a);
  return heap_of(placed);
}

TEST(DefragTraffic, CountsTheSectorsOfAHandCountedCall) {
  model::HeapModel m    = heap();
  DefragTraffic const t = defrag_traffic(m, kT, core::DefragOptions{}, geometry());
  ASSERT_EQ(t.passes.size(), 1u);
  PassTraffic const& p = t.passes[0];
  EXPECT_EQ(p.candidates, 2u);
  EXPECT_EQ(p.sources, 1u);
  EXPECT_EQ(p.objects_moved, 4u);
  // Copy. Read: R (2 entries of 4 B: 1 sector), the two allocation bitmaps (bytes 0-15: 1),
  // the source's elements: array 0 bytes 0-15 and 40-55 of block 0 (sectors 0, 1), array 1
  // bytes 512-527 and 552-567 (sectors 16, 17): 6. Written: slots 4-7 of block 1 in array 0
  // (bytes 1056-1087: all of sector 33) and array 1 (bytes 1568-1599: all of sector 49), no
  // fill; the forwarding pointers at bytes 0-15 and 40-55 of block 0 (sectors 0 and 1, in part,
  // but read before: no fill): 4 written.
  EXPECT_EQ(p.copy.read, 6u);
  EXPECT_EQ(p.copy.written, 4u);
  EXPECT_EQ(p.copy.filled, 0u);
  EXPECT_EQ(p.useful_bytes, 4u * 2u * 2u * 8u + 4u * 8u);  // sec. 4.4: 2 x 64 B moved + 4 x 8 B
  // Scan: the candidate bitmap's one word read, R written (8 of 32 bytes: a fill). States: the
  // allocation bitmaps of blocks 0 and 1 written (bytes 0-15: a fill), the word of block 0 in
  // active, defrag, allocated, free and the call's sources read and written.
  EXPECT_EQ(p.scan_and_states.read, 1u + 5u);
  EXPECT_EQ(p.scan_and_states.written, 1u + 1u + 5u);
  EXPECT_EQ(p.scan_and_states.filled, 2u);
  // Rewrite. Read: allocated[U]'s word, block 2's allocation bitmap, the three pointers (bytes
  // 2048-2071: sector 64), the call's source word (blocks 0 and 1 share it) and id 3's forwarding
  // pointer (block 0 bytes 40-47: sector 1): 5. Written: the pointer of U 10 (sector 64, read).
  EXPECT_EQ(t.rewrite.read, 5u);
  EXPECT_EQ(t.rewrite.written, 1u);
  EXPECT_EQ(t.rewrite.filled, 0u);
  EXPECT_EQ(t.pointers_scanned, 3u);
  EXPECT_EQ(t.pointers_rewritten, 1u);
  EXPECT_EQ(t.hops, 1u);
  EXPECT_EQ(t.rewrite_useful_bytes, 3u * 8u + 16u);
  EXPECT_EQ(t.total().sectors(), 10u + 15u + 6u);
  // The model ran the call: U 10 now reaches id 3 in block 1 slot 6.
  EXPECT_EQ(m.object(3).where, (core::SlotRef{1, 6}));
}

TEST(DefragTraffic, RecomputeVariantsWriteARecordPerSourceInsteadOfForwardingPointers) {
  model::HeapModel m = heap();
  core::DefragOptions o;
  o.variant             = core::RewriteVariant::recompute_global;
  DefragTraffic const t = defrag_traffic(m, kT, o, geometry());
  ASSERT_EQ(t.passes.size(), 1u);
  // The same reads; written: sectors 33 and 49 and the source's record (8 + 12 n = 20 bytes of
  // a sector never read: a fill), no forwarding pointer.
  EXPECT_EQ(t.passes[0].copy.read, 6u);
  EXPECT_EQ(t.passes[0].copy.written, 3u);
  EXPECT_EQ(t.passes[0].copy.filled, 1u);
  // The hop reads the record (one sector) instead of the forwarding pointer: still 5 reads.
  EXPECT_EQ(t.rewrite.read, 5u);
  EXPECT_EQ(t.hops, 1u);
}

/// The order by fill (core::CandidateOrder::by_fill): two T blocks, block 0 with ids 1, 2, 3, 8
/// in slots 0, 1, 5, 6 and block 1 with ids 4, 5 in slots 0, 1. By block id block 0 is the
/// source (4 moves); by fill the emptier block 1 is, and its 2 objects go to block 0's lowest free
/// slots 2 and 3.
TEST(DefragTraffic, ByFillTheEmptierBlockIsTheSource) {
  auto const two_blocks = [] {
    std::vector<model::ObservedAllocation> placed = block0();
    placed.push_back(model::ObservedAllocation{4, kT, 1, 0, {}});
    placed.push_back(model::ObservedAllocation{5, kT, 1, 1, {}});
    return heap_of(placed);
  };
  model::HeapModel by_id    = two_blocks();
  DefragTraffic const paper = defrag_traffic(by_id, kT, core::DefragOptions{}, geometry());
  ASSERT_EQ(paper.passes.size(), 1u);
  EXPECT_EQ(paper.passes[0].objects_moved, 4u);
  model::HeapModel by_fill = two_blocks();
  core::DefragOptions fill;
  fill.order                  = core::CandidateOrder::by_fill;
  DefragTraffic const what_if = defrag_traffic(by_fill, kT, fill, geometry());
  ASSERT_EQ(what_if.passes.size(), 1u);
  EXPECT_EQ(what_if.passes[0].objects_moved, 2u);
  EXPECT_EQ(by_fill.object(4).where, (core::SlotRef{0, 2}));
  EXPECT_EQ(by_fill.object(5).where, (core::SlotRef{0, 3}));
  // Fewer moves read fewer sectors: the source's slots 0, 1 lie in one sector per array (the
  // paper order's slots 0, 1, 5, 6 in two).
  EXPECT_LT(what_if.passes[0].copy.read, paper.passes[0].copy.read);
}

TEST(DefragTraffic, ACallWithoutAPassTouchesNothing) {
  model::HeapModel m = heap();
  core::DefragOptions o;
  o.k1                  = 2;  // two candidates: at most k1 remain before the first pass
  DefragTraffic const t = defrag_traffic(m, kT, o, geometry());
  EXPECT_TRUE(t.passes.empty());
  EXPECT_EQ(t.total().sectors(), 0u);
  EXPECT_EQ(t.pointers_scanned, 0u);
}

TEST(DefragTraffic, Table1GeometryIsFourArraysOf512BytesAndOnePointerArrayOfB) {
  TrafficGeometry const g =
      traffic_geometry<DefragBenchTypes>(DefragBenchTypes::type_id<DefragBenchA>);
  EXPECT_EQ(g.block_bytes, 2048u);
  ASSERT_EQ(g.arrays.size(), 4u);  // id, cookie, other_, payload_ of 64 slots x 8 B each
  for (std::uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(g.arrays[i].offset, 512u * i);
    EXPECT_EQ(g.arrays[i].element_bytes, 8u);
  }
  ASSERT_EQ(g.holders.size(), 1u);  // B::other_, B's third array, its only pointer slot
  EXPECT_EQ(g.holders[0].type, (DefragBenchTypes::type_id<DefragBenchB>));
  EXPECT_EQ(g.holders[0].pointer_slot, 0u);
  EXPECT_EQ(g.holders[0].offset, 1024u);
}

}  // namespace
}  // namespace heaplab::bench
