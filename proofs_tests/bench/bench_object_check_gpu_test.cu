// The object check of `heaplab_bench alloc` (bench/object_check.hpp) catches what it
// claims to: null, foreign, duplicate and overlapping pointers, including an overlap that shares
// none of the checked words (only the sort sees it), over plain device memory; and heaplab's and
// Gallatin's benchmark runs pass it (Gallatin where built; without it, its runs must say "not
// built").
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "alloc_bench.hpp"
#include "gallatin_bench.hpp"
#include "gpu_test.hpp"
#include "heaplab/core/heap_protocol.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "object_check.cuh"

namespace {

namespace hb = heaplab::bench;

/// Objects of `bytes` bytes anywhere in [begin, end), Word-aligned, checked through their first
/// and last Word (one word when bytes == sizeof(Word)).
template <class Word>
struct RangeAccessOf {
  std::uint64_t begin        = 0;
  std::uint64_t end          = 0;
  std::uint64_t bytes        = 64;
  std::uint64_t min_distance = 64;

  __device__ bool owns(std::uint64_t p) const {
    return p % sizeof(Word) == 0 && p >= begin && p + bytes <= end;
  }
  __device__ Word& first(std::uint64_t p) const {
    return *reinterpret_cast<Word*>(static_cast<std::uintptr_t>(p));
  }
  __device__ Word& last(std::uint64_t p) const {
    return *reinterpret_cast<Word*>(static_cast<std::uintptr_t>(p + bytes - sizeof(Word)));
  }
  __device__ std::uint64_t key(std::uint64_t p) const { return p; }
};
using RangeAccess = RangeAccessOf<std::uint64_t>;

constexpr std::uint64_t kObjects = 1000;
constexpr std::uint64_t kStride  = 128;  // objects of 64 bytes, 64 bytes apart

class ObjectCheckGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    HEAPLAB_REQUIRE_GPU();
    arena_ = heaplab::cudart::device_buffer<unsigned char>(kObjects * kStride + 4096, "arena");
    base_  = reinterpret_cast<std::uintptr_t>(arena_.data());
    for (std::uint64_t i = 0; i < kObjects; ++i) slots_.push_back(base_ + i * kStride);
  }

  hb::ObjectCheck check() {
    heaplab::cudart::device_buffer<std::uint64_t> d(slots_.size(), "slots");
    heaplab::cudart::copy_to_device_async(d.data(), slots_.data(), slots_.size(), nullptr);
    RangeAccess const access{base_, base_ + arena_.size(), 64, 64};
    return hb::check_objects(d.data(), slots_.size(), access);
  }

  heaplab::cudart::device_buffer<unsigned char> arena_;
  std::uint64_t base_ = 0;
  std::vector<std::uint64_t> slots_;
};

TEST_F(ObjectCheckGpu, DistinctObjectsVerify) {
  auto const c = check();
  EXPECT_EQ(c.objects, kObjects);
  EXPECT_EQ(c.violations(), 0u) << hb::describe(c);
  EXPECT_EQ(hb::describe(c), "verified 1000 objects");
}

TEST_F(ObjectCheckGpu, NullAndForeignAreCounted) {
  slots_[10]   = 0;
  slots_[20]   = base_ + arena_.size() + 4096;  // outside the arena: never written
  auto const c = check();
  EXPECT_EQ(c.nulls, 1u);
  EXPECT_EQ(c.foreign, 1u);
  EXPECT_EQ(c.mismatches, 0u);
  EXPECT_EQ(c.overlaps, 0u);
  EXPECT_EQ(hb::describe(c),
            "2 violations in 1000 objects (nulls 1, foreign 1, mismatches 0, overlaps 0)");
}

TEST_F(ObjectCheckGpu, DuplicateIsAnOverlapAndAMismatch) {
  slots_[5]    = slots_[3];
  auto const c = check();
  EXPECT_EQ(c.overlaps, 1u);
  EXPECT_GE(c.mismatches, 1u);  // both slots write both words; at least one loses
  EXPECT_LE(c.mismatches, 2u);
}

TEST_F(ObjectCheckGpu, OverlapSharingNoCheckedWordIsFoundBySorting) {
  slots_[7]    = slots_[2] + 32;  // [p+32, p+96) overlaps [p, p+64); words p, p+56 vs p+32, p+88
  auto const c = check();
  EXPECT_EQ(c.mismatches, 0u);
  EXPECT_EQ(c.overlaps, 1u);
}

TEST_F(ObjectCheckGpu, OverlapSharingTheLastWordMismatches) {
  slots_[7]    = slots_[2] + 56;  // its first word is slot 2's last word
  auto const c = check();
  EXPECT_EQ(c.overlaps, 1u);
  EXPECT_GE(c.mismatches, 1u);
}

/// 4-byte objects, one 32-bit word each (the 4-byte size row's word): its first and last word
/// are one, which must not read as a mismatch; a duplicate still mismatches.
class OneWordCheckGpu : public ObjectCheckGpu {
 protected:
  void SetUp() override {
    ObjectCheckGpu::SetUp();
    if (IsSkipped()) return;  // no GPU: the base skipped and made no arena
    for (std::uint64_t i = 0; i < kObjects; ++i) slots_[i] = base_ + i * 4;
  }
  hb::ObjectCheck check() {
    heaplab::cudart::device_buffer<std::uint64_t> d(slots_.size(), "slots");
    heaplab::cudart::copy_to_device_async(d.data(), slots_.data(), slots_.size(), nullptr);
    RangeAccessOf<std::uint32_t> const access{base_, base_ + arena_.size(), 4, 4};
    return hb::check_objects(d.data(), slots_.size(), access);
  }
};

TEST_F(OneWordCheckGpu, AdjacentFourByteObjectsVerify) {
  auto const c = check();
  EXPECT_EQ(c.violations(), 0u) << hb::describe(c);
}

TEST_F(OneWordCheckGpu, ADuplicateMismatchesAndOverlaps) {
  slots_[9]    = slots_[4];
  auto const c = check();
  EXPECT_EQ(c.overlaps, 1u);
  EXPECT_EQ(c.mismatches, 1u);  // one word, two writers: exactly one of them reads back another
}

TEST_F(OneWordCheckGpu, AnObjectTwoBytesOffOverlaps) {
  slots_[9]    = slots_[4] + 2;  // shares the word's upper half: a 4-byte-aligned Access rejects
  auto const c = check();        // it as foreign (never written)
  EXPECT_EQ(c.foreign, 1u);
}

TEST(BenchRunsGpu, HeaplabObjectsVerify) {
  HEAPLAB_REQUIRE_GPU();
  auto const ls = hb::heap_linux_scalability(300, 5, 0, 1, hb::HeapKnobs{});
  EXPECT_EQ(ls.check.objects, 1500u);
  EXPECT_EQ(ls.check.violations(), 0u) << hb::describe(ls.check);
  auto const wave = hb::heap_allocation_wave(5000, 0, 1, hb::HeapKnobs{});
  EXPECT_EQ(wave.check.objects, 5000u);
  EXPECT_EQ(wave.check.violations(), 0u) << hb::describe(wave.check);
}

TEST(BenchRunsGpu, HeaplabEverySizeAndTheMixedRowVerify) {
  HEAPLAB_REQUIRE_GPU();
  for (std::uint32_t bytes : hb::kAllocSizes) {
    auto const r = hb::heap_object_size(bytes, 300, 5, 0, 1, hb::HeapKnobs{});
    EXPECT_EQ(r.check.objects, 1500u) << bytes << " B";
    EXPECT_EQ(r.check.violations(), 0u) << bytes << " B: " << hb::describe(r.check);
    EXPECT_EQ(r.failed, 0u) << bytes << " B";
  }
  auto const mixed = hb::heap_mixed(300, 5, 0, 1, hb::HeapKnobs{});
  EXPECT_EQ(mixed.check.objects, 1500u);
  EXPECT_EQ(mixed.check.violations(), 0u) << hb::describe(mixed.check);
  EXPECT_EQ(mixed.capacity, 64u);  // the 16-byte type's; the others have 16 and 4
  EXPECT_THROW((void)hb::heap_object_size(5, 300, 5, 0, 1, hb::HeapKnobs{}), std::invalid_argument);
}

TEST(BenchRunsGpu, GallatinObjectsVerifyOrSayNotBuilt) {
  HEAPLAB_REQUIRE_GPU();
  std::uint64_t const pool = std::uint64_t{1} << 30;
  if (!hb::gallatin_built()) {
    try {
      (void)hb::gallatin_linux_scalability(300, 5, pool, 0, 1);
      ADD_FAILURE() << "a Gallatin run without Gallatin did not throw";
    } catch (std::runtime_error const& e) {
      EXPECT_NE(std::string(e.what()).find("not built"), std::string::npos) << e.what();
    }
    return;
  }
  auto const ls = hb::gallatin_linux_scalability(300, 5, pool, 0, 1);
  EXPECT_EQ(ls.check.objects, 1500u);
  EXPECT_EQ(ls.check.violations(), 0u) << hb::describe(ls.check);
  auto const wave = hb::gallatin_allocation_wave(5000, pool, 0, 1);
  EXPECT_EQ(wave.check.objects, 5000u);
  EXPECT_EQ(wave.check.violations(), 0u) << hb::describe(wave.check);
}

TEST(BenchRunsGpu, GallatinEverySizeAndTheMixedRowVerifyOrSayNotBuilt) {
  HEAPLAB_REQUIRE_GPU();
  std::uint64_t const pool = std::uint64_t{1} << 30;
  if (!hb::gallatin_built()) {
    EXPECT_THROW((void)hb::gallatin_object_size(4, 300, 5, pool, 0, 1), std::runtime_error);
    EXPECT_THROW((void)hb::gallatin_mixed(300, 5, pool, 0, 1), std::runtime_error);
    return;
  }
  for (std::uint32_t bytes : hb::kAllocSizes) {
    auto const r = hb::gallatin_object_size(bytes, 300, 5, pool, 0, 1);
    EXPECT_EQ(r.check.objects, 1500u) << bytes << " B";
    EXPECT_EQ(r.check.violations(), 0u) << bytes << " B: " << hb::describe(r.check);
  }
  auto const mixed = hb::gallatin_mixed(300, 5, pool, 0, 1);
  EXPECT_EQ(mixed.check.violations(), 0u) << hb::describe(mixed.check);
}

}  // namespace
