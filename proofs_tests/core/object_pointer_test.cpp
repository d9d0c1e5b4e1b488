// Object pointer encoding (DynaSOAr sec. 3.3, Fig. 6): round trip and the heap-fits check.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>

#include "heaplab/core/object_pointer.hpp"

namespace core = heaplab::core;

RC_GTEST_PROP(ObjectPointer, EncodeDecodeRoundTrips, ()) {
  // Any 64-byte aligned block address below 2^50, capacity 1..64, slot < capacity, type < 256.
  std::uint64_t const block    = *rc::gen::inRange<std::uint64_t>(0, std::uint64_t{1} << 44) << 6;
  std::uint32_t const capacity = *rc::gen::inRange<std::uint32_t>(1, 65);
  std::uint32_t const slot     = *rc::gen::inRange<std::uint32_t>(0, capacity);
  std::uint32_t const type     = *rc::gen::inRange<std::uint32_t>(0, 256);
  std::uint64_t const p        = core::encode_object_pointer(block, slot, capacity, type);
  RC_ASSERT(core::pointer_block_address(p) == block);
  RC_ASSERT(core::pointer_slot(p) == slot);
  RC_ASSERT(core::pointer_capacity(p) == capacity);
  RC_ASSERT(core::pointer_type(p) == type);
  RC_ASSERT(p != 0 || (block == 0 && slot == 0 && capacity == 1 && type == 0));
}

RC_GTEST_PROP(ObjectPointer, DistinctObjectsHaveDistinctPointers, ()) {
  std::uint64_t const b1 = *rc::gen::inRange<std::uint64_t>(0, 1u << 20) << 6;
  std::uint64_t const b2 = *rc::gen::inRange<std::uint64_t>(0, 1u << 20) << 6;
  std::uint32_t const s1 = *rc::gen::inRange<std::uint32_t>(0, 64);
  std::uint32_t const s2 = *rc::gen::inRange<std::uint32_t>(0, 64);
  RC_PRE(b1 != b2 || s1 != s2);
  RC_ASSERT(core::encode_object_pointer(b1, s1, 64, 3) !=
            core::encode_object_pointer(b2, s2, 64, 3));
}

TEST(ObjectPointer, HandWorkedEncoding) {
  // block 0x1000, slot 5, capacity 8 (stored as 7 in bits 50..55), type 2 (bits 56..63)
  std::uint64_t const expected = 0x1000u | 5u | (std::uint64_t{7} << 50) | (std::uint64_t{2} << 56);
  EXPECT_EQ(core::encode_object_pointer(0x1000, 5, 8, 2), expected);
  EXPECT_EQ(core::pointer_capacity(std::uint64_t{63} << 50), 64u);
}

TEST(ObjectPointer, HeapFitsEncoding) {
  std::uint64_t const limit = std::uint64_t{1} << 50;
  EXPECT_TRUE(core::heap_fits_encoding(0, 64, 1));
  EXPECT_TRUE(core::heap_fits_encoding(0x7f0000000000ull, 4096, 1000));
  // The last block ends exactly at 2^50: fits; one more block does not.
  EXPECT_TRUE(core::heap_fits_encoding(limit - 4096 * 10, 4096, 10));
  EXPECT_FALSE(core::heap_fits_encoding(limit - 4096 * 10, 4096, 11));
  // Misaligned base or block size, zero block size, base past the limit.
  EXPECT_FALSE(core::heap_fits_encoding(32, 64, 1));
  EXPECT_FALSE(core::heap_fits_encoding(0, 96, 1));
  EXPECT_FALSE(core::heap_fits_encoding(0, 0, 1));
  EXPECT_FALSE(core::heap_fits_encoding(limit, 64, 1));
  // A typical 48-bit user-space address (0x7f..) is above 2^47 but below 2^50: fits.
  EXPECT_TRUE(core::heap_fits_encoding(0x7f1234560000ull, 1 << 16, 1 << 10));
  // A device pointer in the 0x7f.. range with a 2^48 byte heap would cross 2^50? 2^47+2^48 < 2^50.
  EXPECT_TRUE(core::heap_fits_encoding(std::uint64_t{1} << 47, 1 << 16, std::uint64_t{1} << 32));
  EXPECT_FALSE(core::heap_fits_encoding(std::uint64_t{1} << 49, 1 << 16, std::uint64_t{1} << 34));
}
