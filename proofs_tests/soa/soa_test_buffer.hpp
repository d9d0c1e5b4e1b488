// A hand-made stand-in for heap blocks, shared by the soa CPU and GPU tests: object pointers are
// built with core::encode_object_pointer over a buffer (no allocator involved), and an "expected
// image" of the buffer is filled byte by byte at hand-computed positions.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "heaplab/core/host_device.hpp"
#include "heaplab/core/object_pointer.hpp"

namespace soa_test {

/// Bytes never written by a test: every byte the expected image does not set must keep it.
inline constexpr unsigned char kPoison = 0xA5;

/// The encoded pointer to (block, slot) of a buffer starting at `base` with blocks of
/// `block_bytes`; capacity and type id are given by the test (hand-worked, not reflected).
template <class T>
HEAPLAB_HD_INLINE T* object_at(std::uint64_t base,
                               std::uint32_t block_bytes,
                               std::uint32_t block,
                               std::uint32_t slot,
                               std::uint32_t capacity,
                               std::uint32_t type) {
  std::uint64_t const block_address = base + std::uint64_t{block} * block_bytes;
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(
      heaplab::core::encode_object_pointer(block_address, slot, capacity, type)));
}

/// The bytes a buffer must hold after a test, built from hand-computed positions.
class ExpectedImage {
 public:
  ExpectedImage(std::uint32_t block_bytes, std::uint32_t blocks)
      : block_bytes_(block_bytes), bytes_(std::size_t{block_bytes} * blocks, kPoison) {}

  /// Value `v` at byte `offset` of block `block`.
  template <class V>
  void put(std::uint32_t block, std::uint64_t offset, V const& v) {
    std::memcpy(bytes_.data() + std::size_t{block} * block_bytes_ + offset, &v, sizeof(V));
  }

  [[nodiscard]] std::vector<unsigned char> const& bytes() const { return bytes_; }

  /// Index of the first byte where `actual` differs, or -1.
  [[nodiscard]] long first_difference(unsigned char const* actual) const {
    for (std::size_t i = 0; i < bytes_.size(); ++i)
      if (actual[i] != bytes_[i]) return static_cast<long>(i);
    return -1;
  }

 private:
  std::uint32_t block_bytes_;
  std::vector<unsigned char> bytes_;
};

}  // namespace soa_test
