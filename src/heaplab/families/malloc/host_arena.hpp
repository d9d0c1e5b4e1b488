// HostArena: the pool of a host subject (the reference, RW_malloc on CPU threads): `bytes` bytes
// of host memory, 16-byte aligned, with the subject's write and verify (cookie.hpp). Writes and
// reads outside the arena are never made: a block that reaches past it is written and read up to
// the arena's end, and verify reports the first byte outside as bad.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "heaplab/families/malloc/cookie.hpp"
#include "heaplab/families/malloc/subject.hpp"

namespace heaplab::malloc_family {

class HostArena {
 public:
  static constexpr std::uint64_t kAlign = 16;

  /// A fresh arena of `bytes` bytes (rounded down to 16), zeroed.
  void reset(std::uint64_t bytes) {
    storage_.assign(bytes + 2 * kAlign, 0);
    auto const raw = reinterpret_cast<std::uintptr_t>(storage_.data());
    base_          = (raw + kAlign - 1) / kAlign * kAlign;
    size_          = bytes / kAlign * kAlign;
  }
  [[nodiscard]] std::uint64_t base() const { return base_; }
  [[nodiscard]] std::uint64_t size() const { return size_; }
  [[nodiscard]] AddressRange range() const { return {base_, base_ + size_}; }
  [[nodiscard]] std::uint64_t address(std::uint64_t offset) const { return base_ + offset; }

  /// How many of the block's bytes lie in the arena from its start (0 when it starts outside).
  [[nodiscard]] std::uint64_t inside(Block const& b) const {
    if (b.address < base_ || b.address >= base_ + size_) return 0;
    return std::min(b.size, base_ + size_ - b.address);
  }

  void write(Block const& b) const {
    write_cookie(reinterpret_cast<std::uint8_t*>(b.address), inside(b), b.id, b.epoch);
  }
  void write(std::vector<Block> const& blocks) const {
    for (Block const& b : blocks) write(b);
  }

  /// Subject::verify's answer for one block.
  [[nodiscard]] std::uint64_t verify(Block const& b) const {
    std::uint64_t const n = inside(b);
    return first_bad_byte(reinterpret_cast<std::uint8_t const*>(b.address), n, b.id, b.epoch);
  }
  [[nodiscard]] std::vector<std::uint64_t> verify(std::vector<Block> const& blocks) const {
    std::vector<std::uint64_t> out;
    out.reserve(blocks.size());
    for (Block const& b : blocks) out.push_back(verify(b));
    return out;
  }

 private:
  std::vector<std::uint8_t> storage_;
  std::uint64_t base_ = 0, size_ = 0;
};

}  // namespace heaplab::malloc_family
