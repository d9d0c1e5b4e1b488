#include "heaplab/check/diff.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>

#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/hex.hpp"

namespace heaplab::check {

namespace {

std::string hex(std::uint64_t v) { return core::hex64(v); }

/// "{3, 7}": the positions of the set bits of x, offset by `base`.
std::string bit_list(std::uint64_t x, std::uint64_t base = 0) {
  std::string out = "{";
  bool first      = true;
  for (unsigned i = 0; i < 64; ++i) {
    if (((x >> i) & 1u) == 0) continue;
    out += (first ? "" : ", ") + std::to_string(base + i);
    first = false;
  }
  return out + "}";
}

std::string ref_string(std::optional<core::SlotRef> const& r) {
  return r ? std::to_string(r->block) + ":" + std::to_string(r->slot) : "null";
}

std::string opt_string(std::optional<std::uint32_t> const& v) {
  return v ? std::to_string(*v) : "none";
}

class Differ {
 public:
  explicit Differ(DiffOptions const& options) : options_(options) {}

  void add(std::string where,
           std::string field,
           std::string expected,
           std::string actual,
           std::int64_t block = -1,
           std::int64_t slot  = -1) {
    ++result_.total;
    if (result_.differences.size() >= options_.max_differences) return;
    result_.differences.push_back(Difference{
        std::move(where), std::move(field), std::move(expected), std::move(actual), block, slot});
  }

  template <typename T>
  void compare(std::string const& where, std::string const& field, T const& e, T const& a) {
    if (!(e == a)) add(where, field, std::to_string(e), std::to_string(a));
  }

  SnapshotDiff take() { return std::move(result_); }

 private:
  DiffOptions options_;
  SnapshotDiff result_;
};

/// Returns false when the configs do not line up (M or number of types differ).
bool compare_config(core::HeapConfig const& e, core::HeapConfig const& a, Differ& d) {
  d.compare("config", "num_blocks", e.num_blocks, a.num_blocks);
  d.compare("config", "defrag_factor", e.defrag_factor, a.defrag_factor);
  d.compare("config", "k1", e.k1, a.k1);
  d.compare("config", "num_types", e.num_types(), a.num_types());
  std::uint32_t const nt = std::min(e.num_types(), a.num_types());
  for (std::uint32_t t = 0; t < nt; ++t) {
    auto const& te          = e.types[t];
    auto const& ta          = a.types[t];
    std::string const where = "config type " + std::to_string(t);
    if (te.name != ta.name) d.add(where, "name", te.name, ta.name);
    d.compare(where, "size_bytes", te.size_bytes, ta.size_bytes);
    if (te.base != ta.base) d.add(where, "base", opt_string(te.base), opt_string(ta.base));
    if (te.is_abstract != ta.is_abstract)
      d.add(where,
            "is_abstract",
            te.is_abstract ? "true" : "false",
            ta.is_abstract ? "true" : "false");
    d.compare(where, "pointer_fields.size", te.pointer_fields.size(), ta.pointer_fields.size());
    for (std::size_t f = 0; f < std::min(te.pointer_fields.size(), ta.pointer_fields.size()); ++f) {
      auto const& fe         = te.pointer_fields[f];
      auto const& fa         = ta.pointer_fields[f];
      std::string const name = "pointer_fields[" + std::to_string(f) + "]";
      if (fe.name != fa.name) d.add(where, name + ".name", fe.name, fa.name);
      d.compare(where, name + ".pointee", fe.pointee, fa.pointee);
      d.compare(where, name + ".count", fe.count, fa.count);
    }
  }
  return e.num_blocks == a.num_blocks && e.num_types() == a.num_types();
}

void compare_record(std::string const& where,
                    std::int64_t block,
                    std::int64_t slot,
                    std::optional<ObjectRecord> const& e,
                    std::optional<ObjectRecord> const& a,
                    Differ& d) {
  auto const describe = [](std::optional<ObjectRecord> const& r) {
    return r ? "object id " + std::to_string(r->id) : std::string("no object");
  };
  if (e.has_value() != a.has_value()) {
    d.add(where, "object", describe(e), describe(a), block, slot);
    return;
  }
  if (!e) return;
  if (e->id != a->id) d.add(where, "id", std::to_string(e->id), std::to_string(a->id), block, slot);
  if (e->cookie != a->cookie) d.add(where, "cookie", hex(e->cookie), hex(a->cookie), block, slot);
  if (e->refs.size() != a->refs.size()) {
    d.add(where,
          "refs.size",
          std::to_string(e->refs.size()),
          std::to_string(a->refs.size()),
          block,
          slot);
    return;
  }
  for (std::size_t i = 0; i < e->refs.size(); ++i) {
    bool const same = e->refs[i].has_value() == a->refs[i].has_value() &&
                      (!e->refs[i] || *e->refs[i] == *a->refs[i]);
    if (!same)
      d.add(where,
            "refs[" + std::to_string(i) + "]",
            ref_string(e->refs[i]),
            ref_string(a->refs[i]),
            block,
            slot);
  }
}

void compare_bitmap(std::string const& name,
                    BitmapSnapshot const& e,
                    BitmapSnapshot const& a,
                    Differ& d) {
  bool same_shape = e.num_bits == a.num_bits && e.levels.size() == a.levels.size();
  for (std::size_t l = 0; same_shape && l < e.levels.size(); ++l)
    same_shape = e.levels[l].size() == a.levels[l].size();
  if (!same_shape) {
    auto const shape = [](BitmapSnapshot const& b) {
      std::string s = std::to_string(b.num_bits) + " bits, levels [";
      for (std::size_t l = 0; l < b.levels.size(); ++l)
        s += (l ? ", " : "") + std::to_string(b.levels[l].size());
      return s + "] containers";
    };
    d.add(name, "shape", shape(e), shape(a));
    return;
  }
  for (std::size_t l = 0; l < e.levels.size(); ++l) {
    for (std::size_t i = 0; i < e.levels[l].size(); ++i) {
      std::uint64_t const x = e.levels[l][i] ^ a.levels[l][i];
      if (x == 0) continue;
      // At level 0 a bit is a block index.
      d.add(name + " level " + std::to_string(l) + " container " + std::to_string(i),
            "bits " + bit_list(x, std::uint64_t{64} * i),
            hex(e.levels[l][i]),
            hex(a.levels[l][i]));
    }
  }
}

}  // namespace

std::string Difference::to_string() const {
  return where + ": " + field + ": expected " + expected + ", actual " + actual;
}

std::string SnapshotDiff::to_string() const {
  if (empty()) return "no differences";
  std::ostringstream os;
  os << total << (total == 1 ? " difference" : " differences");
  if (differences.size() < total) os << " (first " << differences.size() << " shown)";
  os << ":\n";
  for (auto const& diff : differences) os << "  " << diff.to_string() << "\n";
  return os.str();
}

SnapshotDiff diff(HeapSnapshot const& expected,
                  HeapSnapshot const& actual,
                  DiffOptions const& options) {
  Differ d(options);
  if (!compare_config(expected.config, actual.config, d)) return d.take();

  std::size_t const m = std::min(expected.blocks.size(), actual.blocks.size());
  d.compare("snapshot", "blocks.size", expected.blocks.size(), actual.blocks.size());
  bool const payloads = options.compare_payloads && expected.has_payloads && actual.has_payloads;
  for (std::uint32_t b = 0; b < m; ++b) {
    auto const& be          = expected.blocks[b];
    auto const& ba          = actual.blocks[b];
    std::string const where = "block " + std::to_string(b);
    if (be.type != ba.type && !allocated_types(expected, b).empty() &&
        !allocated_types(actual, b).empty())
      d.add(
          where, "type", type_name(expected.config, be.type), type_name(actual.config, ba.type), b);
    if (be.alloc_bitmap != ba.alloc_bitmap)
      d.add(where,
            "alloc_bitmap bits " + bit_list(be.alloc_bitmap ^ ba.alloc_bitmap),
            hex(be.alloc_bitmap),
            hex(ba.alloc_bitmap),
            b);
    if (options.compare_iteration_bitmaps && be.iter_bitmap != ba.iter_bitmap)
      d.add(where,
            "iter_bitmap bits " + bit_list(be.iter_bitmap ^ ba.iter_bitmap),
            hex(be.iter_bitmap),
            hex(ba.iter_bitmap),
            b);
    if (payloads) {
      // The slots either side wrote, in ascending order (a slot neither wrote is empty in both;
      // a slot beyond a side's size() is empty there).
      auto const& ee = be.objects.entries();
      auto const& ea = ba.objects.entries();
      std::optional<ObjectRecord> const none;
      auto const in = [](SlotRecords const& r,
                         SlotRecords::Entry const& e) -> std::optional<ObjectRecord> const& {
        static std::optional<ObjectRecord> const empty;
        return e.slot < r.size() ? e.record : empty;
      };
      auto ie = ee.begin(), ia = ea.begin();
      while (ie != ee.end() || ia != ea.end()) {
        std::uint32_t const s = ia == ea.end()   ? ie->slot
                                : ie == ee.end() ? ia->slot
                                                 : std::min(ie->slot, ia->slot);
        auto const& re        = ie != ee.end() && ie->slot == s ? in(be.objects, *ie++) : none;
        auto const& ra        = ia != ea.end() && ia->slot == s ? in(ba.objects, *ia++) : none;
        if (re || ra) compare_record(where + " slot " + std::to_string(s), b, s, re, ra, d);
      }
    }
  }

  compare_bitmap("free", expected.free_blocks, actual.free_blocks, d);
  auto const& config = expected.config;
  for (std::uint32_t t = 0; t < config.num_types(); ++t) {
    std::string const tn = "[" + type_name(config, t) + "]";
    for (auto const& [state, ve, va] : {std::tuple<char const*,
                                                   std::vector<BitmapSnapshot> const*,
                                                   std::vector<BitmapSnapshot> const*>{
                                            "allocated", &expected.allocated, &actual.allocated},
                                        {"active", &expected.active, &actual.active},
                                        {"defrag", &expected.defrag, &actual.defrag}}) {
      if (t >= ve->size() || t >= va->size()) {
        if (ve->size() != va->size() && t == std::min(ve->size(), va->size()))
          d.add(
              std::string(state), "count", std::to_string(ve->size()), std::to_string(va->size()));
        continue;
      }
      compare_bitmap(state + tn, (*ve)[t], (*va)[t], d);
    }
  }
  return d.take();
}

}  // namespace heaplab::check
