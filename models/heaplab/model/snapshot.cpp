// HeapModel::snapshot: the model's state in the representation every checker and diff reads.
//
// The state bitmaps are built from the model's own state sets (not recomputed from fills), so the
// invariant catalog really checks the model's bookkeeping.
#include <algorithm>
#include <cstddef>
#include <map>
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

/// Every live object once, in id order (one walk of the object map, no search per object): where
/// it is, for pointer targets (binary search by id), and the objects grouped by block (a counting
/// sort: no vector per block): block b's are by_block[first[b] .. first[b + 1]).
struct ObjectIndex {
  std::vector<std::pair<ObjectId, Location>> where;
  std::vector<std::size_t> first;
  std::vector<Object const*> by_block;

  ObjectIndex(std::map<ObjectId, Object> const& objects, std::uint32_t num_blocks)
      : first(std::size_t{num_blocks} + 1, 0), by_block(objects.size()) {
    std::vector<Object const*> in_id_order;
    where.reserve(objects.size());
    in_id_order.reserve(objects.size());
    for (auto const& [id, obj] : objects) {
      where.emplace_back(id, obj.where);
      in_id_order.push_back(&obj);
      ++first[obj.where.block + 1];
    }
    for (std::uint32_t b = 0; b < num_blocks; ++b) first[b + 1] += first[b];
    std::vector<std::size_t> next(first.begin(), first.end() - 1);
    for (Object const* obj : in_id_order) by_block[next[obj->where.block]++] = obj;
  }
};

}  // namespace

check::HeapSnapshot HeapModel::snapshot() const {
  std::uint32_t const M = config_.num_blocks;
  check::HeapSnapshot s = check::make_empty_snapshot(config_, /*with_payloads=*/true);
  s.producer            = "model";
  // Pointers name ids; their targets' locations come from the index, or during a
  // defragmentation call from referent_location.
  ObjectIndex index(objects_, M);  // each block's range is sorted by slot below
  auto const& where      = index.where;
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
    auto const objs_begin = index.by_block.begin() + static_cast<std::ptrdiff_t>(index.first[b]);
    auto const objs_end = index.by_block.begin() + static_cast<std::ptrdiff_t>(index.first[b + 1]);
    std::sort(objs_begin, objs_end, [](Object const* x, Object const* y) {
      return x->where.slot < y->where.slot;
    });
    out.objects.reserve(static_cast<std::size_t>(objs_end - objs_begin));
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
