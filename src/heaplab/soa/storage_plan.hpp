// Where the GPU heap keeps the portable core's state (core/heap_protocol.hpp HeapStorage) in device
// memory, and the state of an empty heap. Plain C++17 (compiles with g++ and nvcc); the
// functions marked HEAPLAB_HD also run in the heap's initialization kernel, so the CPU tests
// (proofs_tests/soa/heap_host_test.cpp) check exactly what the kernel writes.
//
// A heap owns two device allocations (docs/allocator.md "Storage"):
//   metadata region   every array of HeapStorage plus the DeviceControl word block, each array
//                     starting on a 128-byte line (coalesced scans, no false sharing between
//                     arrays); one allocation so that a snapshot is one copy
//   block area        num_blocks * block_bytes bytes of object data (DynaSOAr sec. 3.1), the
//                     base 128-byte aligned (cudaMalloc gives 256) and checked against the
//                     object pointer encoding (core::heap_fits_encoding)
// Keeping them apart lets compute-sanitizer's memcheck see an overrun of the block area.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "heaplab/core/bitops.hpp"
#include "heaplab/core/block_headers.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/heap_config.hpp"
#include "heaplab/core/heap_protocol.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/soa/detail/device_control.hpp"
#include "heaplab/soa/layout.hpp"

namespace heaplab::soa {

/// Entries per type of the block hints (core HeapProtocol::reserve_slots "Block hints"): one per
/// warp slot of the GPU (HeapRef::allocate_raw names entry SM id * 64 + warp slot, 64 warps per
/// SM, up to 256 SMs), at most one per block rounded up to a power of two: on a small heap the
/// warps share entries (a hint is only a candidate). A heap without hints (HeapOptions::
/// block_hints false) plans none, so its metadata region and snapshot copies are what they were
/// before the hints.
HEAPLAB_HD_INLINE constexpr std::uint32_t hint_slots_for(std::uint32_t num_blocks) {
  return core::power_of_two_at_least(num_blocks, 16384u);
}

/// Byte offsets of the arrays of one heap's metadata region, and the sizes that determine them.
/// Every offset is a multiple of kCacheLineBytes (128).
struct StoragePlan {
  core::BitmapLayout layout{};  // of one state bitmap of num_blocks bits
  std::uint32_t num_blocks  = 0;
  std::uint32_t num_types   = 0;
  std::uint32_t block_bytes = 0;

  // Offsets into the metadata region.
  std::size_t alloc_bitmaps   = 0;  // uint64_t[num_blocks]
  std::size_t iter_bitmaps    = 0;  // uint64_t[num_blocks]
  std::size_t block_types     = 0;  // uint32_t[num_blocks]
  std::size_t free_words      = 0;  // uint64_t[layout.total_words]
  std::size_t allocated_words = 0;  // uint64_t[num_types * layout.total_words]
  std::size_t active_words    = 0;  // uint64_t[num_types * layout.total_words]
  std::size_t defrag_words    = 0;  // uint64_t[num_types * layout.total_words]
  std::size_t capacities      = 0;  // uint32_t[num_types]
  std::size_t claim_tickets   = 0;  // uint64_t[num_types]
  std::size_t claim_runs      = 0;  // uint64_t[num_types * core::claim_run_slots_for(num_blocks)]
  std::size_t block_hints     = 0;  // uint32_t[num_types * hint_slots]
  std::uint32_t hint_slots    = 0;  // hint_slots_for(num_blocks) with block hints, else 0
  std::size_t control         = 0;  // detail::DeviceControl
  std::size_t metadata_bytes  = 0;  // end of the region (a multiple of 128)

  /// Bytes of the block area.
  [[nodiscard]] std::uint64_t block_area_bytes() const {
    return std::uint64_t{num_blocks} * block_bytes;
  }
  /// Words of one type-indexed state bitmap array (allocated, active or defrag of every type).
  [[nodiscard]] std::size_t typed_words() const {
    return std::size_t{num_types} * layout.total_words;
  }

  /// The plan for `config` (validated by the caller) with blocks of `block_bytes` bytes, with the
  /// entries of the block hints when `block_hints` (HeapOptions::block_hints).
  static StoragePlan make(core::HeapConfig const& config,
                          std::uint32_t block_bytes,
                          bool block_hints) {
    HEAPLAB_EXPECTS(block_bytes > 0 && block_bytes % kCacheLineBytes == 0,
                    "StoragePlan: block_bytes must be a positive multiple of 128");
    StoragePlan p;
    p.layout        = core::BitmapLayout::for_bits(config.num_blocks);
    p.num_blocks    = config.num_blocks;
    p.num_types     = config.num_types();
    p.block_bytes   = block_bytes;
    std::size_t end = 0;
    auto place      = [&end](std::size_t bytes) {
      std::size_t const at = end;
      end                  = static_cast<std::size_t>(align_up(at + bytes, kCacheLineBytes));
      return at;
    };
    std::size_t const m = p.num_blocks;
    p.alloc_bitmaps     = place(m * sizeof(std::uint64_t));
    p.iter_bitmaps      = place(m * sizeof(std::uint64_t));
    p.block_types       = place(m * sizeof(std::uint32_t));
    p.free_words        = place(std::size_t{p.layout.total_words} * sizeof(std::uint64_t));
    p.allocated_words   = place(p.typed_words() * sizeof(std::uint64_t));
    p.active_words      = place(p.typed_words() * sizeof(std::uint64_t));
    p.defrag_words      = place(p.typed_words() * sizeof(std::uint64_t));
    p.capacities        = place(std::size_t{p.num_types} * sizeof(std::uint32_t));
    p.claim_tickets     = place(std::size_t{p.num_types} * sizeof(std::uint64_t));
    p.claim_runs        = place(std::size_t{p.num_types} * core::claim_run_slots_for(p.num_blocks) *
                         sizeof(std::uint64_t));
    p.hint_slots        = block_hints ? hint_slots_for(p.num_blocks) : 0u;
    p.block_hints       = place(std::size_t{p.num_types} * p.hint_slots * sizeof(std::uint32_t));
    p.control           = place(sizeof(detail::DeviceControl));
    p.metadata_bytes    = end;
    return p;
  }

  /// The core's view of a metadata region at `base` (device or host memory laid out by this plan).
  [[nodiscard]] core::HeapStorage storage_at(void* base,
                                             std::uint32_t defrag_factor,
                                             std::uint32_t active_lookups,
                                             std::uint32_t claim_wait_rounds,
                                             bool rotate_bitmaps = true) const {
    auto* const bytes = static_cast<unsigned char*>(base);
    core::HeapStorage s;
    s.alloc_bitmaps   = reinterpret_cast<std::uint64_t*>(bytes + alloc_bitmaps);
    s.iter_bitmaps    = reinterpret_cast<std::uint64_t*>(bytes + iter_bitmaps);
    s.block_types     = reinterpret_cast<std::uint32_t*>(bytes + block_types);
    s.free_words      = reinterpret_cast<std::uint64_t*>(bytes + free_words);
    s.allocated_words = reinterpret_cast<std::uint64_t*>(bytes + allocated_words);
    s.active_words    = reinterpret_cast<std::uint64_t*>(bytes + active_words);
    s.defrag_words    = reinterpret_cast<std::uint64_t*>(bytes + defrag_words);
    s.capacities      = reinterpret_cast<std::uint32_t const*>(bytes + capacities);
    s.claim_tickets   = reinterpret_cast<std::uint64_t*>(bytes + claim_tickets);
    s.claim_runs      = reinterpret_cast<std::uint64_t*>(bytes + claim_runs);
    s.claim_run_slots = core::claim_run_slots_for(num_blocks);
    s.block_hints =
        hint_slots != 0 ? reinterpret_cast<std::uint32_t*>(bytes + block_hints) : nullptr;
    s.hint_slots        = hint_slots;
    s.layout            = layout;
    s.num_blocks        = num_blocks;
    s.num_types         = num_types;
    s.defrag_factor     = defrag_factor;
    s.active_lookups    = active_lookups;
    s.claim_wait_rounds = claim_wait_rounds;
    s.rotate_bitmaps    = rotate_bitmaps;
    return s;
  }

  [[nodiscard]] detail::DeviceControl* control_at(void* base) const {
    return reinterpret_cast<detail::DeviceControl*>(static_cast<unsigned char*>(base) + control);
  }
};

/// Word `w` of a hierarchical bitmap with every meaningful bit set (the free bitmap of an empty
/// heap, DynaSOAr sec. 3.4 "initially every bit is 1"): full containers are all ones, the last
/// container of each level has exactly its meaningful low bits set.
HEAPLAB_HD_INLINE std::uint64_t full_bitmap_word(core::BitmapLayout const& layout,
                                                 std::uint32_t w) {
  std::uint32_t level = 0;
  while (level + 1 < layout.num_levels && w >= layout.level_offset[level + 1]) ++level;
  std::uint32_t const container = w - layout.level_offset[level];
  std::uint32_t const first_bit = container * 64u;
  std::uint32_t const bits      = layout.level_bits[level];
  return bits - first_bit >= 64u ? core::kFullBitmap : core::low_bits(bits - first_bit);
}

/// Writes element `i` of every metadata array that has an element i, so that running it for
/// every i in [0, initial_state_elements(plan)) leaves the region in the state of an empty heap
/// (DynaSOAr sec. 3.4, App. A.2): every block free and invalidated (allocation bitmap all ones,
/// iteration bitmap 0, type kNoType), the free bitmap full on every level, allocated/active/
/// defrag of every type empty, no claim ticket taken, no block hint. Capacities and the control
/// block are not touched. Plain stores: the heap is quiescent (the initialization kernel, or a CPU
/// test).
HEAPLAB_HD_INLINE void write_initial_state(core::HeapStorage const& s, std::size_t i) {
  if (i < s.num_blocks) {
    s.alloc_bitmaps[i] = core::kFullBitmap;
    s.iter_bitmaps[i]  = 0;
    s.block_types[i]   = core::kNoType;
  }
  if (i < s.layout.total_words)
    s.free_words[i] = full_bitmap_word(s.layout, static_cast<std::uint32_t>(i));
  if (i < std::size_t{s.num_types} * s.layout.total_words) {
    s.allocated_words[i] = 0;
    s.active_words[i]    = 0;
    s.defrag_words[i]    = 0;
  }
  if (i < s.num_types && s.claim_tickets != nullptr) s.claim_tickets[i] = 0;
  if (i < std::size_t{s.num_types} * s.claim_run_slots && s.claim_runs != nullptr)
    s.claim_runs[i] = 0;
  if (i < std::size_t{s.num_types} * s.hint_slots && s.block_hints != nullptr)
    s.block_hints[i] = core::kNotFound;  // no hint
}

/// The number of indices write_initial_state must be run for.
HEAPLAB_HD_INLINE std::size_t initial_state_elements(core::HeapStorage const& s) {
  std::size_t n = s.num_blocks;
  if (s.layout.total_words > n) n = s.layout.total_words;
  if (std::size_t{s.num_types} * s.layout.total_words > n)
    n = std::size_t{s.num_types} * s.layout.total_words;
  if (std::size_t{s.num_types} * s.claim_run_slots > n)
    n = std::size_t{s.num_types} * s.claim_run_slots;
  if (s.block_hints != nullptr && std::size_t{s.num_types} * s.hint_slots > n)
    n = std::size_t{s.num_types} * s.hint_slots;
  return n;
}

/// Host-side checks of a configuration for the GPU heap, beyond HeapConfig::validate. Throws
/// core::precondition_error naming the problem.
inline void check_gpu_heap_config(core::HeapConfig const& config, std::uint32_t active_lookups) {
  config.validate();  // also rejects capacity-1 types, which the core protocol cannot serve
  HEAPLAB_EXPECTS(active_lookups >= 1, "Heap: active_lookups (r) must be at least 1");
}

/// Throws core::precondition_error unless blocks at `base` fit the object pointer encoding
/// (core/object_pointer.hpp) and the block area is 128-byte aligned (docs/allocator.md "Block
/// layout": SOA arrays rely on it).
inline void check_block_area(std::uint64_t base,
                             std::uint32_t block_bytes,
                             std::uint32_t num_blocks) {
  HEAPLAB_EXPECTS(base % kCacheLineBytes == 0,
                  "Heap: the block area is not 128-byte aligned (SOA arrays need it)");
  HEAPLAB_EXPECTS(core::heap_fits_encoding(base, block_bytes, num_blocks),
                  "Heap: the block area [" + std::to_string(base) + ", +" +
                      std::to_string(std::uint64_t{block_bytes} * num_blocks) +
                      ") does not fit the object pointer encoding (64-byte aligned blocks below "
                      "2^50)");
}

}  // namespace heaplab::soa
