// RapidCheck properties of the catalog over random consistent snapshots built with the
// snapshot_utils helpers: (1) the whole catalog holds; (2) any single corruption of a state bit,
// an allocation bit, a header type, an id or a cookie is caught by the invariant that owns it,
// and the diff against the original names a difference.
//
// Configs and block choices come from RapidCheck; block contents from a std::mt19937_64 seeded
// by RapidCheck, so every case is deterministic and replays with reproduce=.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "heaplab/check/diff.hpp"
#include "heaplab/check/dump.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/bitops.hpp"
#include "test_heap.hpp"

namespace check = heaplab::check;
namespace core  = heaplab::core;
using heaplab::check::testing::describe;

namespace {

/// A valid config: 1..5 types (some abstract, single inheritance, pointer fields incl. arrays),
/// sizes within 20x of each other (capacity >= 3), n in 1..min(4, min capacity - 1).
core::HeapConfig gen_config() {
  core::HeapConfig c;
  auto const num_types = *rc::gen::inRange<std::uint32_t>(1, 6);
  for (std::uint32_t t = 0; t < num_types; ++t) {
    core::TypeSpec ty;
    ty.name = "T" + std::to_string(t);
    if (t > 0 && *rc::gen::inRange(0, 3) == 0) ty.base = *rc::gen::inRange<std::uint32_t>(0, t);
    std::uint32_t const min_size = ty.base ? c.types[*ty.base].size_bytes : 8;
    ty.size_bytes =
        std::min<std::uint32_t>(160, min_size + *rc::gen::inRange<std::uint32_t>(0, 60));
    ty.is_abstract = t + 1 < num_types && *rc::gen::inRange(0, 4) == 0;
    c.types.push_back(ty);
  }
  for (std::uint32_t t = 0; t < num_types; ++t) {
    auto const fields = *rc::gen::inRange(0, 3);
    for (int f = 0; f < fields; ++f)
      c.types[t].pointer_fields.push_back({"f" + std::to_string(f),
                                           *rc::gen::inRange<std::uint32_t>(0, num_types),
                                           *rc::gen::inRange<std::uint32_t>(1, 4)});
  }
  // Big heaps (three bitmap levels) now and then.
  c.num_blocks =
      *rc::gen::weightedOneOf<std::uint32_t>({{6, rc::gen::inRange<std::uint32_t>(1, 200)},
                                              {1, rc::gen::inRange<std::uint32_t>(4090, 4300)}});
  std::uint32_t const max_n = std::min<std::uint32_t>(4, c.min_defrag_capacity() - 1);
  c.defrag_factor           = *rc::gen::inRange<std::uint32_t>(1, max_n + 1);
  c.k1                      = *rc::gen::inRange<std::uint32_t>(0, 5);
  c.validate();
  return c;
}

std::vector<std::uint32_t> concrete_types(core::HeapConfig const& c) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t t = 0; t < c.num_types(); ++t)
    if (!c.types[t].is_abstract) out.push_back(t);
  return out;
}

/// A consistent snapshot: each block free or allocated for a random concrete type with a
/// random non-empty set of objects (random, single, full or nearly full); with payloads, each
/// pointer slot null or pointing to a random live object of an allowed type.
check::HeapSnapshot random_snapshot(core::HeapConfig const& config,
                                    bool payloads,
                                    std::uint64_t seed,
                                    double alloc_probability) {
  std::mt19937_64 rng(seed);
  auto s             = check::make_empty_snapshot(config, payloads);
  auto const types   = concrete_types(config);
  std::uint64_t next = 0;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (std::uint32_t b = 0; b < config.num_blocks; ++b) {
    if (unit(rng) >= alloc_probability) continue;
    std::uint32_t const t   = types[rng() % types.size()];
    std::uint32_t const cap = config.capacity(t);
    std::uint64_t slots     = 0;
    switch (rng() % 4) {
      case 0:
        slots = rng();
        break;
      case 1:
        slots = std::uint64_t{1} << (rng() % cap);
        break;
      case 2:
        slots = ~std::uint64_t{0};
        break;
      default:
        slots = ~(std::uint64_t{1} << (rng() % cap));
        break;
    }
    slots &= core::low_bits(cap);
    if (slots == 0) slots = 1;
    next = check::make_block_allocated(s, b, t, slots, next);
  }
  // Stale header types on some free blocks.
  for (std::uint32_t b = 0; b < config.num_blocks; ++b)
    if (check::test_bit(s.free_blocks, b) && rng() % 3 == 0)
      s.blocks[b].type = types[rng() % types.size()];
  if (payloads) {
    std::vector<std::pair<core::SlotRef, std::uint32_t>> live;  // where, type
    for (std::uint32_t b = 0; b < config.num_blocks; ++b) {
      auto const t = check::allocated_type(s, b);
      if (!t) continue;
      for (std::uint32_t slot = 0; slot < 64; ++slot)
        if (s.blocks[b].objects[slot]) live.push_back({{b, slot}, *t});
    }
    for (auto const& [where, t] : live) {
      auto const slots = config.pointer_slots(t);
      auto& refs       = s.blocks[where.block].objects[where.slot]->refs;
      for (std::size_t i = 0; i < slots.size(); ++i) {
        if (rng() % 2 == 0) continue;
        // A few tries to find an allowed target; null otherwise.
        for (int attempt = 0; attempt < 8 && !live.empty(); ++attempt) {
          auto const& [target, tt] = live[rng() % live.size()];
          if (config.is_subtype(tt, slots[i].pointee)) {
            refs[i] = target;
            break;
          }
        }
      }
    }
  }
  return s;
}

std::set<std::string> names_of(std::vector<check::Violation> const& vs) {
  std::set<std::string> out;
  for (auto const& v : vs) out.insert(v.invariant);
  return out;
}

}  // namespace

RC_GTEST_PROP(CatalogProperty, RandomConsistentSnapshotsPassTheWholeCatalog, ()) {
  auto const config   = gen_config();
  bool const payloads = *rc::gen::arbitrary<bool>();
  auto const seed     = *rc::gen::arbitrary<std::uint64_t>();
  auto const p        = *rc::gen::element(0.0, 0.1, 0.5, 0.9, 1.0);
  auto const s        = random_snapshot(config, payloads, seed, p);
  auto const vs       = check::check_all(s);
  RC_ASSERT(vs.empty());
  RC_ASSERT(check::diff(s, s).empty());
}

RC_GTEST_PROP(CatalogProperty, EverySingleCorruptionIsCaughtByItsInvariant, ()) {
  auto const config = gen_config();
  auto const seed   = *rc::gen::arbitrary<std::uint64_t>();
  auto const p      = *rc::gen::element(0.1, 0.5, 0.9);
  auto const clean  = random_snapshot(config, true, seed, p);
  RC_PRE(check::check_all(clean).empty());
  auto const types      = concrete_types(config);
  std::uint32_t const m = config.num_blocks;

  std::vector<std::uint32_t> allocated;
  for (std::uint32_t b = 0; b < m; ++b)
    if (check::allocated_type(clean, b)) allocated.push_back(b);

  auto s = clean;
  std::string expected;  // the invariant that must fire
  switch (*rc::gen::inRange(0, 6)) {
    case 0: {  // one allocation bit of any block
      auto const b   = *rc::gen::inRange<std::uint32_t>(0, m);
      auto const bit = *rc::gen::inRange<std::uint32_t>(0, 64);
      s.blocks[b].alloc_bitmap ^= std::uint64_t{1} << bit;
      auto const t = check::allocated_type(clean, b);
      expected     = !t                          ? "free-block-invalidated"
                     : bit < config.capacity(*t) ? "payload-matches-bitmap"
                                                 : "capacity-padding-set";
      break;
    }
    case 1: {  // one level-0 state bit, upper levels kept consistent
      auto const b              = *rc::gen::inRange<std::uint32_t>(0, m);
      auto const t              = *rc::gen::elementOf(types);
      auto const which          = *rc::gen::inRange(0, 4);
      bool const own            = check::allocated_type(clean, b) == t;
      check::BitmapSnapshot& bm = which == 0   ? s.free_blocks
                                  : which == 1 ? s.allocated[t]
                                  : which == 2 ? s.active[t]
                                               : s.defrag[t];
      check::assign_bit(bm, b, !check::test_bit(bm, b));
      expected = which <= 1   ? "free-iff-unallocated"
                 : which == 2 ? (own ? "active-iff-not-full" : "active-implies-allocated")
                              : (own ? "defrag-iff-low-fill" : "defrag-implies-active");
      break;
    }
    case 2: {  // one upper-level bit
      RC_PRE(m > 64);
      auto const t              = *rc::gen::elementOf(types);
      check::BitmapSnapshot& bm = s.active[t];
      auto const level          = *rc::gen::inRange<std::size_t>(1, bm.levels.size());
      auto const bits           = check::level_bit_counts(m)[level];
      auto const bit            = *rc::gen::inRange<std::uint32_t>(0, bits);
      bm.levels[level][bit / 64] ^= std::uint64_t{1} << (bit % 64);
      expected = "hierarchy-consistent";
      break;
    }
    case 3: {  // the header type of an allocated block
      RC_PRE(!allocated.empty());
      auto const b  = *rc::gen::elementOf(allocated);
      auto const to = *rc::gen::inRange<std::uint32_t>(0, config.num_types() + 1);
      RC_PRE(to != s.blocks[b].type);
      s.blocks[b].type = to == config.num_types() ? core::kNoType : to;
      expected         = "type-id-matches";
      break;
    }
    case 4:
    case 5: {  // an object's id (fresh, so still unique) or its cookie
      RC_PRE(!allocated.empty());
      auto const b = *rc::gen::elementOf(allocated);
      std::vector<std::uint32_t> slots;
      for (std::uint32_t i = 0; i < 64; ++i)
        if (s.blocks[b].objects[i]) slots.push_back(i);
      auto& record = *s.blocks[b].objects[*rc::gen::elementOf(slots)];
      if (*rc::gen::arbitrary<bool>())
        record.id += std::uint64_t{1} << 40;
      else
        record.cookie ^= std::uint64_t{1} << *rc::gen::inRange(0, 64);
      expected = "cookie-matches-id";
      break;
    }
  }
  auto const vs = check::check_all(s);
  RC_LOG() << describe(vs);
  RC_ASSERT(names_of(vs).count(expected) == 1u);
  RC_ASSERT(!check::diff(clean, s).empty());
}

// Broken shapes (what a buggy producer might emit) give violations, never an exception or a
// crash, in the catalog, the dump and the diff.
RC_GTEST_PROP(CatalogProperty, BrokenShapesAreReportedNotCrashedOn, ()) {
  auto const config = gen_config();
  auto const clean  = random_snapshot(config, true, *rc::gen::arbitrary<std::uint64_t>(), 0.5);
  auto s            = clean;
  auto const t      = *rc::gen::elementOf(concrete_types(config));
  check::BitmapSnapshot& bm = **rc::gen::elementOf(std::vector<check::BitmapSnapshot*>{
      &s.free_blocks, &s.allocated[t], &s.active[t], &s.defrag[t]});
  switch (*rc::gen::inRange(0, 8)) {
    case 0:
      s.blocks.pop_back();
      break;
    case 1:
      s.allocated.pop_back();
      break;
    case 2:
      bm.levels.clear();
      break;
    case 3:
      bm.levels[0].push_back(0);
      break;
    case 4:
      bm.levels.pop_back();
      break;
    case 5:
      s.blocks[*rc::gen::inRange<std::size_t>(0, s.blocks.size())].objects.resize(10);
      break;
    case 6:
      bm.num_bits += 1;
      break;
    case 7:
      bm.levels.back().push_back(0);
      break;
  }
  std::vector<check::Violation> vs;
  try {
    vs = check::check_all(s);
    (void)check::dump(s);
    (void)check::diff(clean, s);
    (void)check::diff(s, clean);
  } catch (std::exception const& e) {
    RC_FAIL(std::string("threw: ") + e.what());
  }
  RC_ASSERT(!vs.empty());
}
