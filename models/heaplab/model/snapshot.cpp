// HeapModel::snapshot: the model's state in the representation every checker and diff reads.
//
// The state bitmaps are built from the model's own state sets (not recomputed from fills), so the
// invariant catalog really checks the model's bookkeeping.
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/model/heap_model.hpp"

namespace heaplab::model {

namespace {

check::BitmapSnapshot bitmap_of(std::uint32_t num_bits, std::set<std::uint32_t> const& bits) {
  check::BitmapSnapshot bitmap = check::make_bitmap(num_bits);
  for (std::uint32_t b : bits) check::set_bit(bitmap, b);
  return bitmap;
}

}  // namespace

check::HeapSnapshot HeapModel::snapshot() const {
  std::uint32_t const M = config_.num_blocks;
  check::HeapSnapshot s = check::make_empty_snapshot(config_, /*with_payloads=*/true);
  s.producer            = "model";
  for (std::uint32_t b = 0; b < M; ++b) {
    check::BlockSnapshot& out = s.blocks[b];
    Block const& block        = blocks_[b];
    out.objects.assign(core::kMaxCapacity, std::nullopt);
    if (!block.type) {
      // A free block is invalidated: every allocation bit set (DynaSOAr App. A.2).
      out.type         = core::kNoType;
      out.alloc_bitmap = ~std::uint64_t{0};
      out.iter_bitmap  = out.alloc_bitmap;
      continue;
    }
    TypeId const t          = *block.type;
    std::uint32_t const cap = config_.capacity(t);
    out.type                = t;
    out.alloc_bitmap        = check::padding_mask(cap);  // bits N_T..63 (DynaSOAr App. A.1)
    for (std::uint32_t slot = 0; slot < core::kMaxCapacity; ++slot) {
      if (!block.slots[slot]) continue;
      Object const& obj = objects_.at(*block.slots[slot]);
      out.alloc_bitmap |= std::uint64_t{1} << slot;
      check::ObjectRecord record;
      record.id     = obj.id;
      record.cookie = obj.cookie;
      for (auto const& ref : obj.refs) {
        if (ref)  // during a defragmentation call: the location at the call's start
          record.refs.push_back(referent_location(*ref));
        else
          record.refs.push_back(std::nullopt);
      }
      out.objects[slot] = std::move(record);
    }
    out.iter_bitmap = out.alloc_bitmap;
  }
  s.free_blocks = bitmap_of(M, free_);
  for (TypeId t = 0; t < config_.num_types(); ++t) {
    if (config_.types[t].is_abstract) continue;  // absent bitmaps (CompactGpu Fig. 2)
    s.allocated[t] = bitmap_of(M, allocated_[t]);
    s.active[t]    = bitmap_of(M, active_[t]);
    s.defrag[t]    = bitmap_of(M, defrag_[t]);
  }
  return s;
}

}  // namespace heaplab::model
