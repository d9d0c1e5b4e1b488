// The options and the memory profile every app shares (common/heap_flags.hpp, profile.hpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/allocators.hpp"
#include "common/any_heap_check.hpp"
#include "common/heap_flags.hpp"
#include "common/memory_budget.hpp"
#include "common/profile.hpp"
#include "heaplab/core/object_pointer.hpp"

namespace heaplab::apps {
namespace {

using compact::DefragPolicy;

TEST(HeapFlags, ThePlantedBugNoteNamesTheBugOrIsEmpty) {
  EXPECT_EQ(planted_bug_note(""), "");
  EXPECT_EQ(planted_bug_note(nullptr), "");
  EXPECT_EQ(planted_bug_note("gen_ca_skip_dying"), ", PLANTED BUG gen_ca_skip_dying");
}

TEST(HeapFlags, NoPolicyByDefault) {
  HeapFlags f;
  EXPECT_FALSE(defrag_policy(f).has_value());
  EXPECT_NO_THROW(validate(f));
  EXPECT_EQ(describe(f), "r default, frees coalesced, no defragmentation");
}

TEST(HeapFlags, EveryM) {
  HeapFlags f;
  f.defrag_every = 50;
  auto const p   = defrag_policy(f);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->kind(), DefragPolicy::Kind::every_m_iterations);
  EXPECT_FALSE(p->triggers_on_iteration(49));
  EXPECT_TRUE(p->triggers_on_iteration(50));
  EXPECT_TRUE(p->triggers_on_iteration(100));
}

TEST(HeapFlags, AfterMassiveDeallocationCount) {
  HeapFlags f;
  f.defrag_after = "1000";
  auto const p   = defrag_policy(f);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->kind(), DefragPolicy::Kind::after_massive_deallocation);
  EXPECT_EQ(p->k2(12345), 1000u);
  // Sec. 3.7: k2 scaled by n/(n+1): n = 1 -> 500.
  EXPECT_EQ(p->candidate_threshold(1, 12345), 500u);
}

TEST(HeapFlags, AfterMassiveDeallocationPercent) {
  HeapFlags f;
  f.defrag_after = "5%";
  auto const p   = defrag_policy(f);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->k2(1000), 50u);
  EXPECT_EQ(p->k2(1001), 51u);  // ceil
}

TEST(HeapFlags, RejectsMalformedAndConflictingPolicies) {
  for (std::string bad : {"0", "-3", "12x", "x", "%", "0%", "101%", "1e3", " 5"}) {
    HeapFlags f;
    f.defrag_after = bad;
    EXPECT_THROW(defrag_policy(f), std::invalid_argument) << bad;
  }
  HeapFlags both;
  both.defrag_every = 10;
  both.defrag_after = "100";
  EXPECT_THROW(validate(both), std::invalid_argument);
}

TEST(HeapFlags, RewriteVariants) {
  EXPECT_EQ(rewrite_variant("forwarding"), core::RewriteVariant::forwarding);
  EXPECT_EQ(rewrite_variant("recompute-global"), core::RewriteVariant::recompute_global);
  EXPECT_EQ(rewrite_variant("recompute-shared"), core::RewriteVariant::recompute_shared);
  EXPECT_THROW(rewrite_variant("forward"), std::invalid_argument);
  HeapFlags f;
  f.rewrite = "shared";
  EXPECT_THROW(validate(f), std::invalid_argument);
}

TEST(HeapFlags, DefragOrders) {
  EXPECT_EQ(defrag_order("block-id"), core::CandidateOrder::block_id);
  EXPECT_EQ(defrag_order("fill"), core::CandidateOrder::by_fill);
  EXPECT_THROW(defrag_order("by_fill"), std::invalid_argument);
  HeapFlags f;
  f.defrag_order = "emptiest";
  EXPECT_THROW(validate(f), std::invalid_argument);
  f.defrag_order = "fill";
  f.defrag_every = 50;
  EXPECT_EQ(describe(f),
            "r default, frees coalesced, defrag every 50 (n 1, k1 16, forwarding, candidates by "
            "fill)");
}

TEST(HeapFlags, DescribeNamesThePolicy) {
  HeapFlags f;
  f.active_lookups    = 2;
  f.coalesce_frees    = false;
  f.rotate_bitmaps    = false;
  f.block_hints       = false;
  f.claim_wait_rounds = 0;
  f.defrag_after      = "5%";
  f.defrag_n          = 3;
  f.rewrite           = "recompute-global";
  EXPECT_EQ(
      describe(f),
      "r 2, frees one by one, no bitmap rotation (NoShift), no block hints, claim tickets off, "
      "defrag after 5% candidates (n 3, k1 16, recompute-global)");
}

std::vector<std::string> lines_of(std::string const& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ProfileCsv, OneRowPerConcreteTypeAndAll) {
  std::string const path = ::testing::TempDir() + "heaplab_profile_test.csv";
  soa::HeapStatistics stats;
  stats.types            = {{"Agent", 0, 0, 0, 0, 0.0}, {"Fish", 64, 3, 192, 100, 0.479167}};
  stats.allocated_blocks = 3;
  stats.used_slots       = 100;
  stats.fragmentation    = 0.479167;
  {
    ProfileCsv csv(path, "wa-tor", 1024);
    csv.write("heap", 7, stats, {1.5, 0.25, 1, 3, 42, 0.125});
  }
  auto const lines = lines_of(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], ProfileCsv::kHeader);
  EXPECT_EQ(lines[1], "wa-tor,heap,7,Fish,100,3,3072,0.479167,1.5000,0.2500,1,3,42,0.1250");
  EXPECT_EQ(lines[2], "wa-tor,heap,7,all,100,3,3072,0.479167,1.5000,0.2500,1,3,42,0.1250");
  std::remove(path.c_str());
}

TEST(ProfileCsv, DisabledWritesNothingAndUnwritablePathThrows) {
  ProfileCsv off;
  EXPECT_FALSE(off.enabled());
  off.write("heap", 1, {}, {});
  EXPECT_THROW(ProfileCsv("/nonexistent-dir/x.csv", "gen-ca", 1), std::runtime_error);
}

TEST(Allocators, KnownNamesPassUnknownAndRepeatedOnesThrow) {
  EXPECT_NO_THROW(validate_allocators({}));
  EXPECT_NO_THROW(validate_allocators({"cuda-malloc", "rw-malloc"}));
  EXPECT_THROW(validate_allocators({"gallatin-typo"}), std::invalid_argument);
  EXPECT_THROW(validate_allocators({"rw-malloc", "rw-malloc"}), std::invalid_argument);
  EXPECT_EQ(allocator_names(), (std::vector<std::string>{"cuda-malloc", "rw-malloc"}));
}

/// Three live objects of type 2 at entries 0, 2, 3 (entry 1 deleted), as AnyHeap leaves them.
AnyTypeState consistent_any_state() {
  AnyTypeState s;
  s.type_name = "Fish";
  s.type_id   = 2;
  s.capacity  = 8;
  s.count     = 4;
  for (std::uint64_t a : {0x10000ull, 0ull, 0x10080ull, 0x20040ull})
    s.entries.push_back(a == 0 ? 0 : core::encode_object_pointer(a, 0, 1, 2));
  s.record_index = {0, 0, 2, 3};
  return s;
}

TEST(MemoryBudget, WithoutMemoryMibEveryVariantKeepsItsDefault) {
  HeapFlags f;
  EXPECT_EQ(memory_bytes(f), 0u);
  EXPECT_EQ(heap_blocks_for(f, 4096, 123, "app"), 123u);
  EXPECT_EQ(pool_bytes_for(f, 999), 999u);
  EXPECT_THROW(heap_blocks_for(f, 4096, 1ull << 32, "app"), std::invalid_argument);  // too large
  f.heap_blocks = 77;
  EXPECT_EQ(heap_blocks_for(f, 4096, 123, "app"), 77u);
  EXPECT_EQ(heap_blocks_for(f, 4096, 1ull << 32, "app"), 77u);  // the default is not used
}

TEST(MemoryBudget, MemoryMibSizesTheHeapAndThePools) {
  HeapFlags f;
  f.memory_mib = 3;
  EXPECT_EQ(memory_bytes(f), 3u * 1024 * 1024);
  EXPECT_EQ(heap_blocks_for(f, 4096, 123, "app"), 768u);    // 3 MiB / 4 KiB
  EXPECT_EQ(heap_blocks_for(f, 5000, 123, "app"), 629u);    // rounded down: 3145728 / 5000 = 629.1
  EXPECT_EQ(heap_blocks_for(f, 8u << 20, 123, "app"), 1u);  // never 0 blocks
  EXPECT_EQ(pool_bytes_for(f, 999), 3u * 1024 * 1024);
  EXPECT_THROW(heap_blocks_for(f, 0, 1, "app"), std::invalid_argument);
  f.memory_mib = 1u << 20;  // 1 TiB of 64-byte blocks: 2^34 blocks
  EXPECT_THROW(heap_blocks_for(f, 64, 1, "app"), std::invalid_argument);
}

TEST(MemoryBudget, AtStepNamesSetUpOrTheStep) {
  EXPECT_EQ(at_step(0), "at set-up");
  EXPECT_EQ(at_step(12), "by iteration 12");
  EXPECT_EQ(at_step(3, "generation"), "by generation 3");
}

TEST(MemoryBudget, HeapBlocksAndMemoryMibExcludeEachOther) {
  HeapFlags f;
  f.memory_mib  = 4;
  f.heap_blocks = 10;
  EXPECT_THROW(validate(f), std::invalid_argument);
  f.heap_blocks = 0;
  EXPECT_NO_THROW(validate(f));
  EXPECT_NE(describe(f).find("every variant in 4 MiB"), std::string::npos) << describe(f);
}

TEST(MemoryBudget, FailedAllocationsAndOversizedBaselinesDoNotFit) {
  EXPECT_NO_THROW(require_no_failed_allocations("wa-tor", "heap", 0, "by iteration 3"));
  try {
    require_no_failed_allocations("wa-tor", "rw-malloc", 12, "by iteration 3", "pool 1 MiB");
    FAIL() << "12 failed allocations fit";
  } catch (OutOfMemory const& e) {
    EXPECT_EQ(e.app(), "wa-tor");
    EXPECT_EQ(e.variant(), "rw-malloc");
    EXPECT_NE(std::string(e.what()).find("12 allocations answered null by iteration 3"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(does_not_fit_line(e), "result app=wa-tor variant=rw-malloc fits=0");
  }
  HeapFlags f;
  EXPECT_NO_THROW(require_baseline_fits(f, "traffic", 1ull << 40));  // no budget: no limit
  f.memory_mib = 1;
  EXPECT_NO_THROW(require_baseline_fits(f, "traffic", 1u << 20));
  try {
    require_baseline_fits(f, "traffic", (1u << 20) + 1);
    FAIL() << "a baseline one byte over the budget fits";
  } catch (OutOfMemory const& e) {
    EXPECT_EQ(e.variant(), "baseline");
    EXPECT_EQ(does_not_fit_line(e), "result app=traffic variant=baseline fits=0");
  }
}

TEST(AnyHeapCheck, AConsistentStatePasses) {
  EXPECT_EQ(check_any_type(consistent_any_state()), std::nullopt);
}

/// Each broken state names its invariant.
TEST(AnyHeapCheck, EachBrokenStateIsReported) {
  auto expect = [](AnyTypeState const& s, std::string const& invariant) {
    auto const v = check_any_type(s);
    ASSERT_TRUE(v.has_value()) << invariant;
    EXPECT_NE(v->find(invariant), std::string::npos) << *v;
  };
  AnyTypeState s = consistent_any_state();
  s.overflow     = true;
  expect(s, "any-no-overflow");
  s       = consistent_any_state();
  s.count = 5;
  expect(s, "any-entries-counted");
  s            = consistent_any_state();
  s.entries[2] = core::encode_object_pointer(0x10080, 0, 1, 3);  // another type's id
  expect(s, "any-pointer-encoded");
  s            = consistent_any_state();
  s.entries[2] = core::encode_object_pointer(0x10080, 0, 64, 2);  // an soa block's capacity
  expect(s, "any-pointer-encoded");
  s                 = consistent_any_state();
  s.record_index[3] = 1;  // a compaction that did not renumber
  expect(s, "any-record-index");
  s                 = consistent_any_state();
  s.entries[3]      = s.entries[0];  // one object at two entries: its one record names entry 0
  s.record_index[3] = 0;
  expect(s, "any-record-index");
}

}  // namespace
}  // namespace heaplab::apps
