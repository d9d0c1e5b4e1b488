#include "heaplab/check/snapshot_utils.hpp"

#include <string>

#include "heaplab/core/bitops.hpp"
#include "heaplab/core/cookie.hpp"
#include "heaplab/core/expects.hpp"

namespace heaplab::check {

namespace {

std::uint32_t ceil_div64(std::uint32_t bits) { return (bits + 63u) / 64u; }

bool has_shape(BitmapSnapshot const& bitmap) {
  auto const containers = level_container_counts(bitmap.num_bits);
  if (bitmap.levels.size() != containers.size()) return false;
  for (std::size_t l = 0; l < containers.size(); ++l)
    if (bitmap.levels[l].size() != containers[l]) return false;
  return true;
}

void check_block(HeapSnapshot const& snapshot, std::uint32_t block) {
  HEAPLAB_EXPECTS(block < snapshot.blocks.size(),
                  "block " + std::to_string(block) + " is out of range: the snapshot has " +
                      std::to_string(snapshot.blocks.size()) + " blocks");
}

/// The per-type state bitmaps of a concrete type; throws for a type the snapshot lacks.
void check_concrete_type(HeapSnapshot const& snapshot, std::uint32_t type) {
  HEAPLAB_EXPECTS(type < snapshot.config.num_types(),
                  "type " + std::to_string(type) + " is out of range: the config has " +
                      std::to_string(snapshot.config.num_types()) + " types");
  HEAPLAB_EXPECTS(!snapshot.config.types[type].is_abstract,
                  "type '" + snapshot.config.types[type].name +
                      "' is abstract: it has no blocks (CompactGpu Fig. 2)");
  HEAPLAB_EXPECTS(type < snapshot.allocated.size() && type < snapshot.active.size() &&
                      type < snapshot.defrag.size(),
                  "the snapshot lacks the state bitmaps of type " + std::to_string(type));
}

/// Clears the block's bit in the free bitmap and in every concrete type's state bitmaps.
void clear_state_bits(HeapSnapshot& snapshot, std::uint32_t block) {
  assign_bit(snapshot.free_blocks, block, false);
  for (std::uint32_t t = 0; t < snapshot.config.num_types(); ++t) {
    if (snapshot.config.types[t].is_abstract) continue;
    assign_bit(snapshot.allocated.at(t), block, false);
    assign_bit(snapshot.active.at(t), block, false);
    assign_bit(snapshot.defrag.at(t), block, false);
  }
}

}  // namespace

// ---------------------------------------------------------------- hierarchical bitmaps

std::vector<std::uint32_t> level_bit_counts(std::uint32_t num_bits) {
  std::vector<std::uint32_t> counts;
  if (num_bits == 0) return counts;
  counts.push_back(num_bits);
  while (counts.back() > 64) counts.push_back(ceil_div64(counts.back()));
  return counts;
}

std::vector<std::uint32_t> level_container_counts(std::uint32_t num_bits) {
  std::vector<std::uint32_t> containers;
  for (std::uint32_t bits : level_bit_counts(num_bits)) containers.push_back(ceil_div64(bits));
  return containers;
}

BitmapSnapshot make_bitmap(std::uint32_t num_bits) {
  BitmapSnapshot bitmap;
  bitmap.num_bits = num_bits;
  for (std::uint32_t containers : level_container_counts(num_bits))
    bitmap.levels.emplace_back(containers, 0);
  return bitmap;
}

void assign_bit(BitmapSnapshot& bitmap, std::uint32_t bit, bool value) {
  HEAPLAB_EXPECTS(bit < bitmap.num_bits,
                  "bit " + std::to_string(bit) + " is past the bitmap's " +
                      std::to_string(bitmap.num_bits) + " bits");
  HEAPLAB_EXPECTS(has_shape(bitmap),
                  "the bitmap's levels do not have the shape of " +
                      std::to_string(bitmap.num_bits) + " bits (call recompute_levels first)");
  std::uint32_t index = bit;
  bool summary        = value;
  for (std::size_t l = 0; l < bitmap.levels.size(); ++l) {
    std::uint64_t& container = bitmap.levels[l][index / 64];
    std::uint64_t const mask = std::uint64_t{1} << (index % 64);
    container                = summary ? (container | mask) : (container & ~mask);
    summary                  = container != 0;  // the bit that represents this container above
    index /= 64;
  }
}

void recompute_levels(BitmapSnapshot& bitmap) {
  auto const containers = level_container_counts(bitmap.num_bits);
  bitmap.levels.resize(containers.size());
  for (std::size_t l = 0; l < containers.size(); ++l) {
    if (l == 0) {
      if (bitmap.levels[0].size() != containers[0]) bitmap.levels[0].resize(containers[0], 0);
      continue;
    }
    auto const& below = bitmap.levels[l - 1];
    auto& level       = bitmap.levels[l];
    level.assign(containers[l], 0);
    for (std::size_t i = 0; i < below.size(); ++i)
      if (below[i] != 0) level[i / 64] |= std::uint64_t{1} << (i % 64);
  }
}

bool test_bit(BitmapSnapshot const& bitmap, std::uint32_t bit) {
  if (bit >= bitmap.num_bits || bitmap.levels.empty()) return false;
  auto const& level0 = bitmap.levels[0];
  if (bit / 64 >= level0.size()) return false;
  return ((level0[bit / 64] >> (bit % 64)) & 1u) != 0;
}

std::vector<std::uint32_t> set_bits(BitmapSnapshot const& bitmap) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t b = 0; b < bitmap.num_bits; ++b)
    if (test_bit(bitmap, b)) out.push_back(b);
  return out;
}

std::uint32_t count_set(BitmapSnapshot const& bitmap) {
  return static_cast<std::uint32_t>(set_bits(bitmap).size());
}

// ---------------------------------------------------------------- block queries

std::uint64_t padding_mask(std::uint32_t capacity) { return ~core::low_bits(capacity); }

std::uint32_t used_slots(std::uint64_t alloc_bitmap, std::uint32_t capacity) {
  return static_cast<std::uint32_t>(core::popcount(alloc_bitmap & core::low_bits(capacity)));
}

std::vector<std::uint32_t> allocated_types(HeapSnapshot const& snapshot, std::uint32_t block) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t t = 0; t < snapshot.config.num_types() && t < snapshot.allocated.size(); ++t)
    if (!snapshot.config.types[t].is_abstract && test_bit(snapshot.allocated[t], block))
      out.push_back(t);
  return out;
}

std::optional<std::uint32_t> allocated_type(HeapSnapshot const& snapshot, std::uint32_t block) {
  std::optional<std::uint32_t> found;  // allocated_types without the vector (a hot path)
  for (std::uint32_t t = 0; t < snapshot.config.num_types() && t < snapshot.allocated.size(); ++t)
    if (!snapshot.config.types[t].is_abstract && test_bit(snapshot.allocated[t], block)) {
      if (found) return std::nullopt;
      found = t;
    }
  return found;
}

std::string type_name(core::HeapConfig const& config, std::uint32_t type) {
  if (type == core::kNoType) return "none";
  if (type >= config.num_types()) return "#" + std::to_string(type);
  return config.types[type].name;
}

// ---------------------------------------------------------------- snapshot construction

HeapSnapshot make_empty_snapshot(core::HeapConfig const& config, bool with_payloads) {
  config.validate();
  HeapSnapshot snapshot;
  snapshot.config       = config;
  snapshot.has_payloads = with_payloads;
  snapshot.producer     = "empty";
  BlockSnapshot free_block;
  free_block.type         = core::kNoType;
  free_block.alloc_bitmap = ~std::uint64_t{0};
  free_block.iter_bitmap  = 0;
  if (with_payloads) free_block.objects.resize(core::kMaxCapacity);
  snapshot.blocks.assign(config.num_blocks, free_block);

  snapshot.free_blocks = make_bitmap(config.num_blocks);
  for (std::uint32_t b = 0; b < config.num_blocks; ++b)
    snapshot.free_blocks.levels[0][b / 64] |= std::uint64_t{1} << (b % 64);
  recompute_levels(snapshot.free_blocks);

  for (std::uint32_t t = 0; t < config.num_types(); ++t) {
    std::uint32_t const bits = config.types[t].is_abstract ? 0 : config.num_blocks;
    snapshot.allocated.push_back(make_bitmap(bits));
    snapshot.active.push_back(make_bitmap(bits));
    snapshot.defrag.push_back(make_bitmap(bits));
  }
  return snapshot;
}

ObjectRecord make_object_record(core::HeapConfig const& config,
                                std::uint32_t type,
                                std::uint64_t id) {
  HEAPLAB_EXPECTS(type < config.num_types(), "type " + std::to_string(type) + " is out of range");
  ObjectRecord record;
  record.id     = id;
  record.cookie = core::cookie_of(id);
  record.refs.assign(config.pointer_slots(type).size(), std::nullopt);
  return record;
}

std::uint64_t make_block_allocated(HeapSnapshot& snapshot,
                                   std::uint32_t block,
                                   std::uint32_t type,
                                   std::uint64_t slots,
                                   std::uint64_t first_id) {
  check_block(snapshot, block);
  check_concrete_type(snapshot, type);
  auto const& config          = snapshot.config;
  std::uint32_t const cap     = config.capacity(type);
  std::uint64_t const padding = padding_mask(cap);
  HEAPLAB_EXPECTS((slots & padding) == 0,
                  "slots at or above the capacity " + std::to_string(cap) + " of type '" +
                      config.types[type].name + "' cannot hold objects");

  BlockSnapshot& b = snapshot.blocks[block];
  b.type           = type;
  b.alloc_bitmap   = slots | padding;
  b.iter_bitmap    = b.alloc_bitmap;

  std::uint32_t const used = used_slots(b.alloc_bitmap, cap);
  clear_state_bits(snapshot, block);
  set_bit(snapshot.allocated[type], block);
  if (used < cap) set_bit(snapshot.active[type], block);
  if (core::is_defrag_fill(used, cap, config.defrag_factor)) set_bit(snapshot.defrag[type], block);

  std::uint64_t next_id = first_id;
  if (snapshot.has_payloads) {
    b.objects.assign(core::kMaxCapacity, std::nullopt);
    for (std::uint32_t s = 0; s < cap; ++s)
      if ((slots >> s) & 1u) b.objects.set(s, make_object_record(config, type, next_id++));
  }
  return next_id;
}

void make_block_free(HeapSnapshot& snapshot, std::uint32_t block) {
  check_block(snapshot, block);
  BlockSnapshot& b = snapshot.blocks[block];
  b.alloc_bitmap   = ~std::uint64_t{0};
  clear_state_bits(snapshot, block);
  set_bit(snapshot.free_blocks, block);
  if (snapshot.has_payloads) b.objects.assign(core::kMaxCapacity, std::nullopt);
}

}  // namespace heaplab::check
