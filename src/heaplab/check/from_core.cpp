#include "heaplab/check/from_core.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "heaplab/core/expects.hpp"

namespace heaplab::check {

namespace {

/// Copies the levels of one hierarchical bitmap stored per `layout` at `words`.
BitmapSnapshot bitmap_of(core::BitmapLayout const& layout, std::uint64_t const* words) {
  BitmapSnapshot out;
  out.num_bits = layout.num_bits;
  for (std::uint32_t l = 0; l < layout.num_levels; ++l) {
    std::uint64_t const* first = words + layout.level_offset[l];
    out.levels.emplace_back(first, first + layout.containers(l));
  }
  return out;
}

HeapSnapshot snapshot_shell(core::HeapConfig const& config) {
  HeapSnapshot snap;
  snap.config       = config;
  snap.has_payloads = false;
  snap.producer     = "cpu-core";
  snap.blocks.resize(config.num_blocks);
  snap.allocated.resize(config.num_types());
  snap.active.resize(config.num_types());
  snap.defrag.resize(config.num_types());
  return snap;
}

}  // namespace

HeapSnapshot from_core(core::HeapConfig const& config, core::HeapStorage const& storage) {
  config.validate();
  HEAPLAB_EXPECTS(storage.num_blocks == config.num_blocks,
                  "from_core: the storage's block count differs from the config's");
  HEAPLAB_EXPECTS(storage.num_types == config.num_types(),
                  "from_core: the storage's type count differs from the config's");
  HEAPLAB_EXPECTS(
      storage.layout.num_bits == config.num_blocks &&
          storage.layout.total_words == core::BitmapLayout::for_bits(config.num_blocks).total_words,
      "from_core: the storage's bitmap layout does not fit num_blocks");
  for (std::uint32_t t = 0; t < config.num_types(); ++t)
    HEAPLAB_EXPECTS(storage.capacities[t] == config.capacity(t),
                    "from_core: a capacity in the storage differs from the config's");

  HeapSnapshot snap = snapshot_shell(config);
  for (std::uint32_t b = 0; b < config.num_blocks; ++b) {
    snap.blocks[b].type         = storage.block_types[b];
    snap.blocks[b].alloc_bitmap = storage.alloc_bitmaps[b];
    snap.blocks[b].iter_bitmap  = storage.iter_bitmaps[b];
  }
  std::uint32_t const words = storage.layout.total_words;
  snap.free_blocks          = bitmap_of(storage.layout, storage.free_words);
  for (std::uint32_t t = 0; t < config.num_types(); ++t) {
    if (config.types[t].is_abstract) continue;  // absent bitmaps (CompactGpu Fig. 2)
    std::size_t const base = std::size_t{t} * words;
    snap.allocated[t]      = bitmap_of(storage.layout, storage.allocated_words + base);
    snap.active[t]         = bitmap_of(storage.layout, storage.active_words + base);
    snap.defrag[t]         = bitmap_of(storage.layout, storage.defrag_words + base);
  }
  return snap;
}

HeapSnapshot from_core(core::HostHeap const& heap) {
  core::HeapConfig const& config   = heap.config();
  core::BitmapLayout const& layout = heap.layout();
  HeapSnapshot snap                = snapshot_shell(config);
  for (std::uint32_t b = 0; b < config.num_blocks; ++b) {
    snap.blocks[b].type         = heap.block_type(b);
    snap.blocks[b].alloc_bitmap = heap.alloc_bitmap(b);
    snap.blocks[b].iter_bitmap  = heap.iter_bitmap(b);
  }
  snap.free_blocks = bitmap_of(layout, heap.bitmap_words(core::StateBitmap::free_blocks).data());
  for (std::uint32_t t = 0; t < config.num_types(); ++t) {
    if (config.types[t].is_abstract) continue;
    snap.allocated[t] =
        bitmap_of(layout, heap.bitmap_words(core::StateBitmap::allocated, t).data());
    snap.active[t] = bitmap_of(layout, heap.bitmap_words(core::StateBitmap::active, t).data());
    snap.defrag[t] = bitmap_of(layout, heap.bitmap_words(core::StateBitmap::defrag, t).data());
  }
  return snap;
}

}  // namespace heaplab::check
