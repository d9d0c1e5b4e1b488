// HeapModel::snapshot: the model's state in the representation every checker and diff reads.
//
// The state bitmaps are built from the model's own state sets (not recomputed from fills), so the
// invariant catalog really checks the model's bookkeeping.
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/model/heap_model.hpp"

namespace heaplab::model {

namespace {

/// The bitmap whose level 0 is `words` (a set's word mirror), upper levels derived.
check::BitmapSnapshot bitmap_of(std::uint32_t num_bits, std::vector<std::uint64_t> const& words) {
  check::BitmapSnapshot bitmap = check::make_bitmap(num_bits);
  HEAPLAB_EXPECTS(bitmap.levels.at(0).size() == words.size(),
                  "model snapshot: a state set's word mirror has the wrong length");
  bitmap.levels[0] = words;
  check::recompute_levels(bitmap);
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
  // The same walk groups the objects by block (a counting sort: no vector per block).
  std::size_t const n = objects_.size();
  std::vector<std::pair<ObjectId, Location>> where;
  std::vector<Object const*> in_id_order;
  std::vector<std::size_t> first(std::size_t{M} + 1, 0);  // block b: [first[b], first[b + 1])
  where.reserve(n);
  in_id_order.reserve(n);
  for (auto const& [id, obj] : objects_) {
    where.emplace_back(id, obj.where);
    in_id_order.push_back(&obj);
    ++first[obj.where.block + 1];
  }
  for (std::uint32_t b = 0; b < M; ++b) first[b + 1] += first[b];
  std::vector<Object const*> by_block(n);
  {
    std::vector<std::size_t> next(first.begin(), first.end() - 1);
    for (Object const* obj : in_id_order) by_block[next[obj->where.block]++] = obj;
  }
  auto const location_of = [&](ObjectId id) {
    if (!call_start_locations_.empty()) return referent_location(id);
    auto const it = std::lower_bound(
        where.begin(), where.end(), id, [](auto const& e, ObjectId x) { return e.first < x; });
    HEAPLAB_EXPECTS(
        it != where.end() && it->first == id,
        "model snapshot: a pointer refers to object " + std::to_string(id) + ", which is not live");
    return it->second;
  };
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
    auto const objs_begin = by_block.begin() + static_cast<std::ptrdiff_t>(first[b]);
    auto const objs_end   = by_block.begin() + static_cast<std::ptrdiff_t>(first[b + 1]);
    std::sort(objs_begin, objs_end, [](Object const* x, Object const* y) {
      return x->where.slot < y->where.slot;
    });
    for (auto it = objs_begin; it != objs_end; ++it) {
      Object const* const obj = *it;
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
  s.free_blocks = bitmap_of(M, free_words_);
  for (TypeId t = 0; t < config_.num_types(); ++t) {
    if (config_.types[t].is_abstract) continue;  // absent bitmaps (CompactGpu Fig. 2)
    s.allocated[t] = bitmap_of(M, allocated_words_[t]);
    s.active[t]    = bitmap_of(M, active_words_[t]);
    s.defrag[t]    = bitmap_of(M, defrag_words_[t]);
  }
  return s;
}

}  // namespace heaplab::model
