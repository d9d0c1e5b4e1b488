// Host-side logic of the GPU heap, without a GPU (docs/allocator.md "Storage", "Snapshots"):
//  - StoragePlan: every array of the metadata region 128-byte aligned, in bounds, disjoint;
//  - the initial state the heap's init kernel writes (write_initial_state) is exactly the empty
//    heap of check::make_empty_snapshot and of core::HostHeap;
//  - the portable core runs on storage laid out by the plan (host memory) and keeps the catalog;
//  - payload extraction (add_payloads) on host memory laid out exactly like the device heap,
//    with objects built by the field DSL: ids, cookies, pointer targets in pointer_slots order;
//  - statistics_from_counts equals check::fragmentation on snapshots;
//  - configuration and sizing errors are clear.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "heaplab/check/defrag_obligations.hpp"
#include "heaplab/check/diff.hpp"
#include "heaplab/check/from_core.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/cookie.hpp"
#include "heaplab/core/heap_protocol.hpp"
#include "heaplab/core/host_heap.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/soa/heap_statistics.hpp"
#include "heaplab/soa/host_config.hpp"
#include "heaplab/soa/payloads.hpp"
#include "heaplab/soa/storage_plan.hpp"
#include "heaplab/soa/tracked.hpp"

namespace soa   = heaplab::soa;
namespace core  = heaplab::core;
namespace check = heaplab::check;

namespace heap_host_test {

// The GPU tests' types (heap_test_types.hpp, next to this file), without the device methods.
class Leaf : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Leaf, soa::Tracked, (std::uint32_t, value_));
  Leaf(std::uint64_t id, std::uint32_t value) : Tracked(id), value_(value) {}
};
class Node : public soa::Tracked {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(
      Node, soa::Tracked, (Node*, next_), (Leaf* [2], kids_), (float, weight_));
  Node(std::uint64_t id, float weight) : Tracked(id), next_(nullptr), weight_(weight) {
    kids_[0] = nullptr;
    kids_[1] = nullptr;
  }
  void set_next(Node* n) { next_ = n; }
  void set_kid(int i, Leaf* l) { kids_[i] = l; }
};
class Fat : public Node {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(Fat, Node, (std::uint64_t[4], extra_));
  Fat(std::uint64_t id, float weight) : Node(id, weight) {}
};
using Types = soa::HeapTypes<soa::Tracked, Leaf, Node, Fat>;

class Plain {
 public:
  HEAPLAB_SOA_FIELDS(Plain, (int, x_));
};
class Huge {  // 40 bytes vs 1 byte: capacity floor(64 / 40) = 1
 public:
  HEAPLAB_SOA_FIELDS(Huge, (std::uint64_t[5], words_));
};
class Tiny {
 public:
  HEAPLAB_SOA_FIELDS(Tiny, (std::uint8_t, b_));
};
using PlainTypes = soa::HeapTypes<Plain>;
using HugeTypes  = soa::HeapTypes<Tiny, Huge>;

constexpr std::uint32_t kLeaf = Types::type_id<Leaf>;
constexpr std::uint32_t kNode = Types::type_id<Node>;
constexpr std::uint32_t kFat  = Types::type_id<Fat>;

// Hand-worked layout (docs/allocator.md rule): Node, N = 29: id_ 232 B at 0, cookie_ at 256,
// next_ at 512, kids_ units of 232 B (stride 256) at 768 and 1024, weight_ 116 B at 1280, end
// 1396; Leaf, N = 64: end 1280; Fat, N = 16: end 1280. Block = align_up(1396, 128) = 1408.
static_assert(Types::block_bytes == 1408);

/// Host memory shaped like one GPU heap: metadata region per the plan, block area 128-aligned.
struct HostImage {
  /// With the block hints' entries (StoragePlan::make's block_hints), so that they are checked.
  HostImage(core::HeapConfig const& config, std::uint32_t block_bytes)
      : plan(soa::StoragePlan::make(config, block_bytes, true)),
        metadata(plan.metadata_bytes / 8 + 1, 0),
        blocks(static_cast<unsigned char*>(std::aligned_alloc(128, plan.block_area_bytes()))) {
    storage = plan.storage_at(metadata.data(),
                              config.defrag_factor,
                              core::kDefaultActiveLookups,
                              core::kDefaultClaimWaitRounds);
    for (std::size_t i = 0; i < soa::initial_state_elements(storage); ++i)
      soa::write_initial_state(storage, i);
    auto* caps = const_cast<std::uint32_t*>(storage.capacities);
    for (std::uint32_t t = 0; t < config.num_types(); ++t) caps[t] = config.capacity(t);
    std::fill(blocks.get(), blocks.get() + plan.block_area_bytes(), 0);
  }
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  std::uint64_t base() const { return reinterpret_cast<std::uintptr_t>(blocks.get()); }

  soa::StoragePlan plan;
  std::vector<std::uint64_t> metadata;
  std::unique_ptr<unsigned char, Free> blocks;
  core::HeapStorage storage{};
};

}  // namespace heap_host_test

using namespace heap_host_test;

TEST(HeapHostPlan, ArraysAreAlignedDisjointAndInBounds) {
  for (std::uint32_t m : {1u, 63u, 64u, 65u, 4095u, 4097u, 300000u}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    auto const config       = soa::heap_config<Types>(m, 1, 0);
    auto const plan         = soa::StoragePlan::make(config, Types::block_bytes, true);
    std::size_t const words = core::BitmapLayout::for_bits(m).total_words;
    EXPECT_EQ(plan.layout.total_words, words);
    struct Range {
      char const* name;
      std::size_t begin, bytes;
    };
    std::vector<Range> const ranges = {
        {"alloc", plan.alloc_bitmaps, 8ull * m},
        {"iter", plan.iter_bitmaps, 8ull * m},
        {"types", plan.block_types, 4ull * m},
        {"free", plan.free_words, 8 * words},
        {"allocated", plan.allocated_words, 8 * words * config.num_types()},
        {"active", plan.active_words, 8 * words * config.num_types()},
        {"defrag", plan.defrag_words, 8 * words * config.num_types()},
        {"capacities", plan.capacities, 4ull * config.num_types()},
        {"claim tickets", plan.claim_tickets, 8ull * config.num_types()},
        {"claim runs", plan.claim_runs, 8ull * config.num_types() * core::claim_run_slots_for(m)},
        {"block hints", plan.block_hints, 4ull * config.num_types() * plan.hint_slots},
        {"control", plan.control, sizeof(soa::detail::DeviceControl)},
    };
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      EXPECT_EQ(ranges[i].begin % 128, 0u) << ranges[i].name;
      EXPECT_LE(ranges[i].begin + ranges[i].bytes, plan.metadata_bytes) << ranges[i].name;
      for (std::size_t j = i + 1; j < ranges.size(); ++j)
        EXPECT_TRUE(ranges[i].begin + ranges[i].bytes <= ranges[j].begin ||
                    ranges[j].begin + ranges[j].bytes <= ranges[i].begin)
            << ranges[i].name << " overlaps " << ranges[j].name;
    }
    EXPECT_EQ(plan.metadata_bytes % 128, 0u);
    EXPECT_EQ(plan.block_area_bytes(), std::uint64_t{m} * 1408);
  }
}

TEST(HeapHostPlan, StorageAtPointsEveryArrayIntoItsPlannedPlace) {
  // A field of HeapStorage left out here is a feature silently off on the GPU (the claim-run
  // table was, once: claim tickets did nothing there while the CPU heap had them).
  auto const config = soa::heap_config<Types>(4097, 1, 0);
  HostImage image(config, Types::block_bytes);
  auto const at = [&](std::size_t offset) {
    return reinterpret_cast<unsigned char const*>(image.metadata.data()) + offset;
  };
  auto const same = [](void const* p, unsigned char const* q) {
    return static_cast<unsigned char const*>(p) == q;
  };
  core::HeapStorage const& s = image.storage;
  EXPECT_TRUE(same(s.alloc_bitmaps, at(image.plan.alloc_bitmaps)));
  EXPECT_TRUE(same(s.iter_bitmaps, at(image.plan.iter_bitmaps)));
  EXPECT_TRUE(same(s.block_types, at(image.plan.block_types)));
  EXPECT_TRUE(same(s.free_words, at(image.plan.free_words)));
  EXPECT_TRUE(same(s.allocated_words, at(image.plan.allocated_words)));
  EXPECT_TRUE(same(s.active_words, at(image.plan.active_words)));
  EXPECT_TRUE(same(s.defrag_words, at(image.plan.defrag_words)));
  EXPECT_TRUE(same(s.capacities, at(image.plan.capacities)));
  EXPECT_TRUE(same(s.claim_tickets, at(image.plan.claim_tickets)));
  EXPECT_TRUE(same(s.claim_runs, at(image.plan.claim_runs)));
  EXPECT_EQ(s.claim_run_slots, core::claim_run_slots_for(4097));
  EXPECT_TRUE(same(s.block_hints, at(image.plan.block_hints)));
  EXPECT_EQ(s.hint_slots, 8192u);  // a power of two >= M, at most 16384 (soa::hint_slots_for)
  EXPECT_EQ(image.plan.hint_slots, 8192u);
  EXPECT_EQ(soa::hint_slots_for(1), 1u);
  EXPECT_EQ(soa::hint_slots_for(300000), 16384u);
  EXPECT_EQ(s.claim_wait_rounds, core::kDefaultClaimWaitRounds);
  // The same fields as the CPU heap's storage, pointer for pointer non-null.
  core::HostHeap host(config);
  core::HeapStorage const h = host.storage();
  EXPECT_EQ(h.claim_tickets != nullptr, s.claim_tickets != nullptr);
  EXPECT_EQ(h.claim_runs != nullptr, s.claim_runs != nullptr);
  EXPECT_EQ(h.claim_run_slots, s.claim_run_slots);
  EXPECT_EQ(h.claim_wait_rounds, s.claim_wait_rounds);
  // Bitmap rotation (DynaSOAr sec. 4.2) is on by default on both heaps, and the switch reaches
  // the storage the GPU heap uploads (HeapOptions::rotate_bitmaps).
  EXPECT_TRUE(s.rotate_bitmaps);
  EXPECT_EQ(h.rotate_bitmaps, s.rotate_bitmaps);
  core::HeapStorage const off = image.plan.storage_at(image.metadata.data(),
                                                      config.defrag_factor,
                                                      core::kDefaultActiveLookups,
                                                      core::kDefaultClaimWaitRounds,
                                                      /*rotate_bitmaps=*/false);
  EXPECT_FALSE(off.rotate_bitmaps);
  EXPECT_EQ(off.free_words, s.free_words);
  // Block hints (planned here, HostImage): every entry starts as "none".
  EXPECT_EQ(s.block_hints[0], core::kNotFound);
  // Without them (HeapOptions::block_hints false) the plan has no entries: the
  // metadata region is what it was before the hints, and the core sees none.
  auto const plain = soa::StoragePlan::make(config, Types::block_bytes, false);
  EXPECT_EQ(plain.hint_slots, 0u);
  EXPECT_LT(plain.metadata_bytes, image.plan.metadata_bytes);
  std::vector<std::uint64_t> plain_metadata(plain.metadata_bytes / 8 + 1, 0);
  core::HeapStorage const none = plain.storage_at(plain_metadata.data(),
                                                  config.defrag_factor,
                                                  core::kDefaultActiveLookups,
                                                  core::kDefaultClaimWaitRounds);
  EXPECT_EQ(none.block_hints, nullptr);
  EXPECT_EQ(none.hint_slots, 0u);
}

TEST(HeapHostPlan, InitialStateIsTheEmptyHeap) {
  for (std::uint32_t m : {1u, 64u, 65u, 4097u, 262145u}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    auto const config = soa::heap_config<Types>(m, 2, 1);
    HostImage image(config, Types::block_bytes);
    check::HeapSnapshot const got  = check::from_core(config, image.storage);
    check::HeapSnapshot const want = check::make_empty_snapshot(config, false);
    auto const d                   = check::diff(want, got, check::DiffOptions{true, false, 10});
    EXPECT_TRUE(d.empty()) << d.to_string();
    EXPECT_TRUE(check::check_all(got).empty());
    // The same words as the core's own host heap.
    core::HostHeap host(config);
    std::vector<std::uint64_t> const free_words = host.bitmap_words(core::StateBitmap::free_blocks);
    for (std::uint32_t w = 0; w < free_words.size(); ++w)
      EXPECT_EQ(soa::full_bitmap_word(image.plan.layout, w), free_words[w]) << "free word " << w;
    // No block hint: every entry of every type kNotFound (block 0 would be a hint).
    std::size_t const hints = std::size_t{config.num_types()} * soa::hint_slots_for(m);
    std::size_t wrong       = 0;
    for (std::size_t i = 0; i < hints; ++i)
      wrong += image.storage.block_hints[i] != core::kNotFound;
    EXPECT_EQ(wrong, 0u);
  }
}

TEST(HeapHostPlan, InitialStateFailsTheCatalogWhenAWordIsWrong) {
  // The test above can fail: corrupt the image the initializer wrote and the snapshot differs.
  auto const config = soa::heap_config<Types>(130, 1, 0);
  HostImage image(config, Types::block_bytes);
  image.storage.free_words[image.plan.layout.level_offset[1]] = 0;  // summary level cleared
  auto const got = check::from_core(config, image.storage);
  EXPECT_FALSE(check::check_all(got).empty());
  EXPECT_FALSE(check::diff(check::make_empty_snapshot(config, false), got).empty());
}

TEST(HeapHostPlan, TheCoreProtocolRunsOnThePlannedStorage) {
  auto const config = soa::heap_config<Types>(200, 1, 0);
  HostImage image(config, Types::block_bytes);
  core::HeapProtocol<core::HostAtomics> const heap(image.storage);
  std::mt19937_64 rng(7);
  std::vector<std::pair<std::uint32_t, core::SlotRef>> live;
  for (int step = 0; step < 4000; ++step) {
    if (!live.empty() && rng() % 3 == 0) {
      std::size_t const i = rng() % live.size();
      heap.deallocate(live[i].first, live[i].second);
      live[i] = live.back();
      live.pop_back();
      continue;
    }
    std::uint32_t const t = std::vector<std::uint32_t>{kLeaf, kNode, kFat}[rng() % 3];
    core::SlotRef const r = heap.allocate(t, rng());
    ASSERT_FALSE(r.is_null());
    live.emplace_back(t, r);
  }
  auto const snap       = check::from_core(config, image.storage);
  auto const violations = check::check_all(snap);
  EXPECT_TRUE(violations.empty()) << (violations.empty() ? "" : violations[0].to_string());
  std::uint64_t used = 0;
  for (std::uint32_t b = 0; b < snap.blocks.size(); ++b) {
    auto const t = check::allocated_type(snap, b);
    if (t) used += check::used_slots(snap.blocks[b].alloc_bitmap, config.capacity(*t));
  }
  EXPECT_EQ(used, live.size());
}

TEST(HeapHostPayloads, IdsCookiesAndPointerTargetsFromHostMemory) {
  auto const config = soa::heap_config<Types>(64, 1, 0);
  HostImage image(config, Types::block_bytes);
  ASSERT_TRUE(core::heap_fits_encoding(image.base(), Types::block_bytes, 64));
  core::HeapProtocol<core::HostAtomics> const heap(image.storage);
  auto pointer = [&](std::uint32_t t, core::SlotRef r) {
    return core::encode_object_pointer(
        image.base() + std::uint64_t{r.block} * Types::block_bytes, r.slot, config.capacity(t), t);
  };
  // 100 leaves (ids 0..99), 60 nodes (ids 1000..1059), 20 fats (ids 2000..2019).
  // Node i: next = node (i + 1) % 60, kids = leaves 2i, 2i+1 (for i < 50). Fat j: next = node j,
  // kids_[1] = leaf 99 - j.
  std::vector<std::uint64_t> leaves, nodes, fats;
  std::map<std::uint64_t, core::SlotRef> where;  // id -> location
  std::uint64_t seed = 1;
  auto make          = [&](std::uint32_t t, std::uint64_t id) {
    core::SlotRef const r = heap.allocate(t, seed++);
    EXPECT_FALSE(r.is_null());
    where[id] = core::SlotRef{r.block, r.slot};
    return pointer(t, r);
  };
  for (std::uint64_t i = 0; i < 100; ++i) {
    std::uint64_t const p = make(kLeaf, i);
    new (reinterpret_cast<void*>(p)) Leaf(i, 3);
    leaves.push_back(p);
  }
  for (std::uint64_t i = 0; i < 60; ++i) {
    std::uint64_t const p = make(kNode, 1000 + i);
    new (reinterpret_cast<void*>(p)) Node(1000 + i, 1.0f);
    nodes.push_back(p);
  }
  for (std::uint64_t j = 0; j < 20; ++j) {
    std::uint64_t const p = make(kFat, 2000 + j);
    new (reinterpret_cast<void*>(p)) Fat(2000 + j, 1.0f);
    fats.push_back(p);
  }
  auto as_node = [](std::uint64_t p) { return reinterpret_cast<Node*>(p); };
  auto as_leaf = [](std::uint64_t p) { return reinterpret_cast<Leaf*>(p); };
  for (std::size_t i = 0; i < 60; ++i) {
    as_node(nodes[i])->set_next(as_node(nodes[(i + 1) % 60]));
    if (i < 50) {
      as_node(nodes[i])->set_kid(0, as_leaf(leaves[2 * i]));
      as_node(nodes[i])->set_kid(1, as_leaf(leaves[2 * i + 1]));
    }
  }
  for (std::size_t j = 0; j < 20; ++j) {
    as_node(fats[j])->set_next(as_node(nodes[j]));
    as_node(fats[j])->set_kid(1, as_leaf(leaves[99 - j]));
  }

  check::HeapSnapshot snap = check::from_core(config, image.storage);
  soa::add_payloads<Types>(snap, image.base(), image.blocks.get());
  ASSERT_TRUE(snap.has_payloads);
  auto const violations = check::check_all(snap);
  EXPECT_TRUE(violations.empty()) << (violations.empty() ? "" : violations[0].to_string());

  std::size_t records = 0;
  for (std::uint32_t b = 0; b < snap.blocks.size(); ++b) {
    ASSERT_EQ(snap.blocks[b].objects.size(), 64u);
    for (std::uint32_t s = 0; s < 64; ++s) {
      auto const& o = snap.blocks[b].objects[s];
      if (!o) continue;
      ++records;
      ASSERT_EQ(where.at(o->id), (core::SlotRef{b, s})) << "object " << o->id;
      EXPECT_EQ(o->cookie, core::cookie_of(o->id));
      std::vector<std::optional<core::SlotRef>> want;
      if (o->id < 1000) {
        EXPECT_TRUE(o->refs.empty());
        continue;
      }
      if (o->id < 2000) {
        std::uint64_t const i = o->id - 1000;
        want.push_back(where.at(1000 + (i + 1) % 60));
        want.push_back(i < 50 ? std::optional<core::SlotRef>(where.at(2 * i)) : std::nullopt);
        want.push_back(i < 50 ? std::optional<core::SlotRef>(where.at(2 * i + 1)) : std::nullopt);
      } else {
        std::uint64_t const j = o->id - 2000;
        want.push_back(where.at(1000 + j));
        want.push_back(std::nullopt);
        want.push_back(where.at(99 - j));
      }
      EXPECT_EQ(o->refs, want) << "object " << o->id;
    }
  }
  EXPECT_EQ(records, 180u);

  // A pointer into nowhere decodes to block 0xFFFFFFFF and the catalog reports it.
  // next_ of node 1000 is at offset 512 of its block (hand-worked layout above).
  std::uint64_t const next_field = image.base() +
                                   where.at(1000).block * std::uint64_t{Types::block_bytes} + 512 +
                                   where.at(1000).slot * 8ull;
  *reinterpret_cast<std::uint64_t*>(next_field) = core::encode_object_pointer(64, 0, 29, kNode);
  check::HeapSnapshot broken                    = check::from_core(config, image.storage);
  soa::add_payloads<Types>(broken, image.base(), image.blocks.get());
  auto const& r = broken.blocks[where.at(1000).block].objects[where.at(1000).slot];
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->refs[0].has_value());
  EXPECT_EQ(r->refs[0]->block, core::kNotFound);
  auto const found = check::check_one("pointers-valid", broken);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("outside the heap"), std::string::npos) << found[0].message;
}

TEST(HeapHostPayloads, DecodeObjectPointer) {
  std::uint64_t const base = 1 << 20;
  EXPECT_FALSE(soa::decode_object_pointer(0, base, 1408, 10).has_value());
  auto const in = soa::decode_object_pointer(
      core::encode_object_pointer(base + 3 * 1408, 7, 29, 2), base, 1408, 10);
  ASSERT_TRUE(in.has_value());
  EXPECT_EQ(*in, (core::SlotRef{3, 7}));
  EXPECT_EQ(soa::decode_object_pointer(
                core::encode_object_pointer(base + 10 * 1408, 0, 29, 2), base, 1408, 10)
                ->block,
            core::kNotFound);  // one past the end
  EXPECT_EQ(soa::decode_object_pointer(
                core::encode_object_pointer(base + 1408 + 64, 0, 29, 2), base, 1408, 10)
                ->block,
            core::kNotFound);  // not a block boundary
  EXPECT_EQ(
      soa::decode_object_pointer(core::encode_object_pointer(base - 1408, 0, 29, 2), base, 1408, 10)
          ->block,
      core::kNotFound);  // below the heap
}

TEST(HeapHostPayloads, TypesWithoutTrackedAreNamedInTheError) {
  EXPECT_TRUE(soa::untracked_types<Types>().empty());
  EXPECT_NO_THROW(soa::expect_payload_support<Types>());
  EXPECT_EQ(soa::untracked_types<PlainTypes>(), std::vector<std::string>{"Plain"});
  try {
    soa::expect_payload_support<PlainTypes>();
    ADD_FAILURE() << "no error for a type without Tracked";
  } catch (core::precondition_error const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("Plain"), std::string::npos) << what;
    EXPECT_NE(what.find("Tracked"), std::string::npos) << what;
  }
  EXPECT_EQ(soa::tracked_type_id<Types>(), 0u);
  EXPECT_EQ(soa::tracked_type_id<PlainTypes>(), soa::kNoType);
}

TEST(HeapHostStatistics, FragmentationAndCountsMatchTheSnapshot) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 50; ++round) {
    auto const config        = soa::heap_config<Types>(40, 1, 0);
    check::HeapSnapshot snap = check::make_empty_snapshot(config, false);
    std::vector<std::uint64_t> blocks(config.num_types(), 0), used(config.num_types(), 0);
    std::uint64_t free_blocks = 40;
    for (std::uint32_t b = 0; b < 40; ++b) {
      if (rng() % 4 == 0) continue;
      std::uint32_t const t     = std::vector<std::uint32_t>{kLeaf, kNode, kFat}[rng() % 3];
      std::uint32_t const cap   = config.capacity(t);
      std::uint64_t const slots = (rng() & core::low_bits(cap)) | 1u;  // not empty
      check::make_block_allocated(snap, b, t, slots);
      ++blocks[t];
      used[t] += static_cast<std::uint64_t>(__builtin_popcountll(slots));
      --free_blocks;
    }
    auto const s = soa::statistics_from_counts(config, blocks, used, free_blocks, 3);
    EXPECT_NEAR(s.fragmentation, check::fragmentation(snap, std::nullopt), 1e-12);
    for (std::uint32_t t : {kLeaf, kNode, kFat}) {
      EXPECT_NEAR(s.types[t].fragmentation, check::fragmentation(snap, t), 1e-12);
      EXPECT_EQ(s.types[t].allocated_blocks, check::count_set(snap.allocated[t]));
      EXPECT_EQ(s.types[t].allocated_slots, blocks[t] * config.capacity(t));
    }
    EXPECT_EQ(s.free_blocks, check::count_set(snap.free_blocks));
    EXPECT_EQ(s.oom_count, 3u);
    EXPECT_EQ(s.types[0].name, "Tracked");
    EXPECT_EQ(s.types[0].capacity, 0u);
  }
  auto const empty = soa::statistics_from_counts(
      soa::heap_config<Types>(4, 1, 0), {0, 0, 0, 0}, {0, 0, 0, 0}, 4, 0);
  EXPECT_EQ(empty.fragmentation, 0.0);
}

TEST(HeapHostConfig, ErrorsAreClear) {
  // Capacity 1 (Huge is 40x Tiny): HeapConfig::validate rejects it, naming the type.
  try {
    (void)soa::heap_config<HugeTypes>(8, 1, 0);
    ADD_FAILURE() << "capacity-1 type accepted";
  } catch (core::precondition_error const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("'Huge'"), std::string::npos) << what;
    EXPECT_NE(what.find("capacity 1"), std::string::npos) << what;
  }
  auto const config = soa::heap_config<Types>(8, 1, 0);
  EXPECT_NO_THROW(soa::check_gpu_heap_config(config, 1));
  EXPECT_THROW(soa::check_gpu_heap_config(config, 0), core::precondition_error);
  EXPECT_THROW((void)soa::heap_config<Types>(0, 1, 0), core::precondition_error);
  EXPECT_THROW((void)soa::heap_config<Types>(8, 16, 0), core::precondition_error);  // n >= N_Fat
  try {
    (void)soa::blocks_for_budget<Types>(1407);
    ADD_FAILURE() << "budget below one block accepted";
  } catch (core::precondition_error const& e) {
    EXPECT_NE(std::string(e.what()).find("smaller than one block"), std::string::npos) << e.what();
  }
  EXPECT_EQ(soa::blocks_for_budget<Types>(1408 * 3 + 1407), 3u);
  // Block area checks (encoding, 128-byte alignment).
  EXPECT_NO_THROW(soa::check_block_area(1 << 20, 1408, 100));
  EXPECT_THROW(soa::check_block_area((1 << 20) + 64, 1408, 100), core::precondition_error);
  EXPECT_THROW(soa::check_block_area(std::uint64_t{1} << 50, 1408, 1), core::precondition_error);
  EXPECT_THROW(soa::check_block_area((std::uint64_t{1} << 50) - 1408 * 4, 1408, 5),
               core::precondition_error);
  EXPECT_NO_THROW(soa::check_block_area((std::uint64_t{1} << 50) - 1408 * 4, 1408, 4));
}
