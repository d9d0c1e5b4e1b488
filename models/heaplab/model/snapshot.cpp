// HeapModel::snapshot: the model's state in the representation every checker and diff reads.
//
// The state bitmaps are built from the model's own state sets (not recomputed from fills), so the
// invariant catalog really checks the model's bookkeeping.
#include <algorithm>
#include <utility>
#include <vector>

#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/expects.hpp"
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
  // Every live object once, in id order (a walk of objects_, no search per object): its record
  // and where it is. Pointers name ids; their targets' locations come from the same walk (a
  // binary search in `where`), or during a defragmentation call from referent_location.
  std::vector<std::pair<ObjectId, Location>> where;
  where.reserve(objects_.size());
  for (auto const& [id, obj] : objects_) where.emplace_back(id, obj.where);
  auto const location_of = [&](ObjectId id) {
    if (!call_start_locations_.empty()) return referent_location(id);
    auto const it = std::lower_bound(
        where.begin(), where.end(), id, [](auto const& e, ObjectId x) { return e.first < x; });
    HEAPLAB_EXPECTS(
        it != where.end() && it->first == id,
        "model snapshot: a pointer refers to object " + std::to_string(id) + ", which is not live");
    return it->second;
  };
  std::vector<std::vector<Object const*>> in_block(M);
  for (auto const& [id, obj] : objects_) in_block[obj.where.block].push_back(&obj);
  for (std::uint32_t b = 0; b < M; ++b) {
    check::BlockSnapshot& out = s.blocks[b];
    Block const& block        = blocks_[b];
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
    for (std::uint32_t slot = 0; slot < core::kMaxCapacity; ++slot)
      if (block.slots[slot]) out.alloc_bitmap |= std::uint64_t{1} << slot;
    auto& objs = in_block[b];
    std::sort(objs.begin(), objs.end(), [](Object const* x, Object const* y) {
      return x->where.slot < y->where.slot;
    });
    for (Object const* obj : objs) {
      HEAPLAB_EXPECTS(
          block.slots[obj->where.slot] == obj->id,
          "model snapshot: object " + std::to_string(obj->id) + " is not in the slot it names");
      check::ObjectRecord record;
      record.id     = obj->id;
      record.cookie = obj->cookie;
      record.refs.reserve(obj->refs.size());
      for (auto const& ref : obj->refs) {
        if (ref)  // during a defragmentation call: the location at the call's start
          record.refs.push_back(location_of(*ref));
        else
          record.refs.push_back(std::nullopt);
      }
      out.objects.set(obj->where.slot, std::move(record));
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
