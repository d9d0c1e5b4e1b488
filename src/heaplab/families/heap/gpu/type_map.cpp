// TypeMap (type_map.hpp).
#include "heaplab/families/heap/gpu/type_map.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace heaplab::heap_family::gpu {

namespace {

std::string type_label(core::HeapConfig const& c, std::uint32_t t) {
  return "type " + std::to_string(t) + " ('" + c.types[t].name + "')";
}

std::string name_of(core::HeapConfig const& c, std::optional<std::uint32_t> t) {
  if (!t) return "none";
  return *t < c.num_types() ? "'" + c.types[*t].name + "'" : "type " + std::to_string(*t);
}

bool any_bit(check::BitmapSnapshot const& b) {
  for (auto const& level : b.levels)
    for (std::uint64_t word : level)
      if (word != 0) return true;
  return false;
}

}  // namespace

std::string type_difference(core::HeapConfig const& universe, core::HeapConfig const& config) {
  if (universe.num_types() != config.num_types())
    return std::to_string(config.num_types()) + " types here, " +
           std::to_string(universe.num_types()) + " in the universe";
  for (std::uint32_t t = 0; t < config.num_types(); ++t) {
    auto const& want      = universe.types[t];
    auto const& got       = config.types[t];
    std::string const who = type_label(config, t);
    if (got.name != want.name)
      return who + ": named '" + got.name + "' here, '" + want.name + "' in the universe";
    if (got.size_bytes != want.size_bytes)
      return who + ": size " + std::to_string(got.size_bytes) + " here, " +
             std::to_string(want.size_bytes) + " in the universe";
    if (got.base != want.base)
      return who + ": base " + name_of(config, got.base) + " here, " +
             name_of(universe, want.base) + " in the universe";
    if (got.is_abstract != want.is_abstract)
      return who + (got.is_abstract ? ": abstract here, concrete in the universe"
                                    : ": concrete here, abstract in the universe");
    if (got.pointer_fields.size() != want.pointer_fields.size())
      return who + ": " + std::to_string(got.pointer_fields.size()) + " pointer fields here, " +
             std::to_string(want.pointer_fields.size()) + " in the universe";
    for (std::size_t f = 0; f < got.pointer_fields.size(); ++f) {
      auto const& p           = got.pointer_fields[f];
      auto const& q           = want.pointer_fields[f];
      std::string const field = who + ": pointer field " + std::to_string(f);
      if (p.name != q.name)
        return field + " is named '" + p.name + "' here, '" + q.name + "' in the universe";
      if (p.pointee != q.pointee)
        return field + " ('" + p.name + "') points to " + name_of(config, p.pointee) +
               " here, to " + name_of(universe, q.pointee) + " in the universe";
      if (p.count != q.count)
        return field + " ('" + p.name + "') has count " + std::to_string(p.count) + " here, " +
               std::to_string(q.count) + " in the universe";
    }
  }
  return "";
}

TypeMap::TypeMap(core::HeapConfig gpu,
                 std::vector<std::uint32_t> const& hidden,
                 std::vector<std::uint32_t> const& schedule_sizes)
    : gpu_(std::move(gpu)) {
  auto fail = [](std::string const& what) { throw std::logic_error("GPU type universe: " + what); };
  std::uint32_t const G = gpu_.num_types();
  schedule_of_.assign(G, std::nullopt);
  for (std::uint32_t g = 0; g < G; ++g) {
    bool const is_hidden = std::find(hidden.begin(), hidden.end(), g) != hidden.end();
    if (is_hidden) {
      if (!gpu_.types[g].is_abstract || !gpu_.types[g].pointer_fields.empty())
        fail(type_label(gpu_, g) + " is hidden but not abstract or has pointer fields");
      continue;
    }
    schedule_of_[g] = static_cast<std::uint32_t>(gpu_of_.size());
    gpu_of_.push_back(g);
  }
  if (!schedule_sizes.empty() && schedule_sizes.size() != gpu_of_.size())
    fail(std::to_string(schedule_sizes.size()) + " schedule sizes for " +
         std::to_string(gpu_of_.size()) + " visible types");

  schedule_.num_blocks    = gpu_.num_blocks;
  schedule_.defrag_factor = gpu_.defrag_factor;
  schedule_.k1            = gpu_.k1;
  for (std::uint32_t s = 0; s < gpu_of_.size(); ++s) {
    core::TypeSpec spec = gpu_.types[gpu_of_[s]];
    if (!schedule_sizes.empty()) spec.size_bytes = schedule_sizes[s];
    if (spec.base) {
      // A visible type whose base is hidden (Tracked) is a root for schedules.
      spec.base = schedule_of_[*spec.base];
    }
    for (auto& f : spec.pointer_fields) {
      if (!schedule_of_[f.pointee])
        fail(type_label(gpu_, gpu_of_[s]) + ": pointer field '" + f.name +
             "' points to a hidden type");
      f.pointee = *schedule_of_[f.pointee];
    }
    schedule_.types.push_back(std::move(spec));
  }
  try {
    schedule_.validate();
  } catch (std::exception const& e) {
    fail(std::string("the schedule config is invalid: ") + e.what());
  }
  for (std::uint32_t s = 0; s < gpu_of_.size(); ++s) {
    std::uint32_t const g = gpu_of_[s];
    if (schedule_.capacity(s) != gpu_.capacity(g))
      fail(type_label(schedule_, s) + " has capacity " + std::to_string(schedule_.capacity(s)) +
           " in the schedule config but " + std::to_string(gpu_.capacity(g)) +
           " on the GPU: choose schedule sizes proportional to the GPU sizes");
    auto const want = gpu_.pointer_slots(g);
    auto const got  = schedule_.pointer_slots(s);
    bool same       = want.size() == got.size();
    for (std::size_t k = 0; same && k < got.size(); ++k)
      same = schedule_of_[want[k].declaring_type] == got[k].declaring_type &&
             want[k].field == got[k].field && want[k].element == got[k].element &&
             schedule_of_[want[k].pointee] == got[k].pointee;
    if (!same) fail(type_label(schedule_, s) + " has other pointer slots on the GPU");
  }
}

std::optional<std::uint32_t> TypeMap::to_schedule(std::uint32_t g) const {
  if (g >= schedule_of_.size()) return std::nullopt;
  return schedule_of_[g];
}

TypeMap TypeMap::with_parameters(std::uint32_t num_blocks,
                                 std::uint32_t n,
                                 std::uint32_t k1) const {
  TypeMap out = *this;
  for (core::HeapConfig* c : {&out.gpu_, &out.schedule_}) {
    c->num_blocks    = num_blocks;
    c->defrag_factor = n;
    c->k1            = k1;
    c->validate();
  }
  return out;
}

check::HeapSnapshot TypeMap::to_schedule_snapshot(check::HeapSnapshot s) const {
  std::uint32_t const G = gpu_.num_types();
  if (s.config.num_types() != G || s.allocated.size() != G || s.active.size() != G ||
      s.defrag.size() != G)
    throw std::invalid_argument("GPU snapshot has " + std::to_string(s.config.num_types()) +
                                " types and " + std::to_string(s.allocated.size()) +
                                " allocated bitmaps; the universe's GPU type list has " +
                                std::to_string(G));
  if (s.blocks.size() != gpu_.num_blocks || s.config.num_blocks != gpu_.num_blocks)
    throw std::invalid_argument("GPU snapshot has " + std::to_string(s.blocks.size()) +
                                " blocks; the heap has " + std::to_string(gpu_.num_blocks));
  for (std::uint32_t g = 0; g < G; ++g) {
    if (schedule_of_[g]) continue;
    for (auto const* b : {&s.allocated[g], &s.active[g], &s.defrag[g]})
      if (any_bit(*b))
        throw std::invalid_argument("GPU snapshot: a state bitmap of the hidden abstract " +
                                    type_label(gpu_, g) + " has a bit set");
  }
  for (auto& block : s.blocks) {
    if (block.type >= G) continue;  // kNoType (never allocated) or garbage: left as it is
    block.type = schedule_of_[block.type].value_or(kHiddenTypeInSnapshot);
  }
  auto pick = [&](std::vector<check::BitmapSnapshot>& bitmaps) {
    std::vector<check::BitmapSnapshot> out;
    out.reserve(gpu_of_.size());
    for (std::uint32_t g : gpu_of_) out.push_back(std::move(bitmaps[g]));
    bitmaps = std::move(out);
  };
  pick(s.allocated);
  pick(s.active);
  pick(s.defrag);
  s.config = schedule_;
  return s;
}

}  // namespace heaplab::heap_family::gpu
