#include "heaplab/check/dump.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/cookie.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/hex.hpp"

namespace heaplab::check {

namespace {

std::string hex(std::uint64_t v) { return core::hex64(v); }

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string lpad(std::string s, std::size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

std::string refs_string(ObjectRecord const& r) {
  std::string out = "[";
  for (std::size_t i = 0; i < r.refs.size(); ++i) {
    if (i) out += ", ";
    out += r.refs[i] ? std::to_string(r.refs[i]->block) + ":" + std::to_string(r.refs[i]->slot)
                     : "null";
  }
  return out + "]";
}

bool type_known(HeapSnapshot const& s, std::uint32_t t) { return t < s.config.num_types(); }

/// The capacity used to show a block: its header type's when that is a known concrete type,
/// else its unique allocated type's, else 64.
std::uint32_t shown_capacity(HeapSnapshot const& s, std::uint32_t b) {
  std::uint32_t const header = s.blocks[b].type;
  if (type_known(s, header) && !s.config.types[header].is_abstract)
    return s.config.capacity(header);
  if (auto t = allocated_type(s, b)) return s.config.capacity(*t);
  return 64;
}

}  // namespace

std::string slot_map(std::uint64_t alloc_bitmap, std::uint32_t capacity) {
  HEAPLAB_EXPECTS(capacity >= 1 && capacity <= 64,
                  "capacity " + std::to_string(capacity) + " is not in 1..64");
  std::string map(64, '.');
  for (std::uint32_t i = 0; i < 64; ++i) {
    bool const set = ((alloc_bitmap >> i) & 1u) != 0;
    if (i < capacity)
      map[i] = set ? '#' : '.';
    else
      map[i] = set ? '-' : '!';
  }
  return map;
}

namespace {

std::size_t type_name_width(core::HeapConfig const& config) {
  std::size_t width = 4;
  for (auto const& ty : config.types) width = std::max(width, ty.name.size());
  return width;
}

/// An invalid config has no capacities: the raw headers only.
void dump_raw_blocks(std::ostream& os, HeapSnapshot const& s) {
  for (std::uint32_t b = 0; b < s.blocks.size(); ++b)
    os << "  block " << lpad(std::to_string(b), 5) << "  type " << s.blocks[b].type << "  "
       << hex(s.blocks[b].alloc_bitmap) << (test_bit(s.free_blocks, b) ? "  free" : "") << "\n";
}

void dump_types(std::ostream& os, core::HeapConfig const& config, std::size_t name_width) {
  os << "types:\n";
  for (std::uint32_t t = 0; t < config.num_types(); ++t) {
    auto const& ty = config.types[t];
    os << "  " << lpad(std::to_string(t), 3) << " " << pad(ty.name, name_width);
    if (ty.is_abstract) {
      os << "  abstract";
    } else {
      os << "  " << ty.size_bytes << " B  capacity " << config.capacity(t);
    }
    if (ty.base) os << "  base " << type_name(config, *ty.base);
    auto const slots = config.pointer_slots(t);
    if (!slots.empty()) {
      os << "  pointer slots " << slots.size() << " (";
      for (std::size_t i = 0; i < slots.size(); ++i) {
        auto const& f = config.types[slots[i].declaring_type].pointer_fields[slots[i].field];
        os << (i ? ", " : "") << f.name;
        if (f.count > 1) os << "[" << slots[i].element << "]";
        os << "->" << type_name(config, slots[i].pointee);
      }
      os << ")";
    }
    os << "\n";
  }
}

/// One line per block that is not free: type, fill, bitmap, slot map, state bits.
void dump_blocks(std::ostream& os, HeapSnapshot const& s, std::size_t name_width) {
  auto const& config     = s.config;
  std::uint32_t const m  = static_cast<std::uint32_t>(s.blocks.size());
  std::uint32_t non_free = 0;
  for (std::uint32_t b = 0; b < m; ++b)
    if (!test_bit(s.free_blocks, b)) ++non_free;
  os << "blocks (" << non_free << " not free of " << m
     << "; slot map: slot 0 first, '#' object, '.' free slot, '-' padding, '!' padding clear):\n";
  for (std::uint32_t b = 0; b < m; ++b) {
    if (test_bit(s.free_blocks, b)) continue;
    auto const& blk         = s.blocks[b];
    std::uint32_t const cap = shown_capacity(s, b);
    os << "  block " << lpad(std::to_string(b), 5) << "  "
       << pad(type_name(config, blk.type), name_width) << "  "
       << lpad(std::to_string(used_slots(blk.alloc_bitmap, cap)), 2) << "/"
       << pad(std::to_string(cap), 2) << "  " << hex(blk.alloc_bitmap) << "  "
       << slot_map(blk.alloc_bitmap, cap) << " ";
    bool any = false;
    for (std::uint32_t t = 0; t < config.num_types(); ++t) {
      for (auto const& [state, vec] :
           {std::pair<char const*, std::vector<BitmapSnapshot> const*>{"allocated", &s.allocated},
            {"active", &s.active},
            {"defrag", &s.defrag}}) {
        if (t >= vec->size() || !test_bit((*vec)[t], b)) continue;
        os << " " << state;
        if (t != blk.type) os << "[" << type_name(config, t) << "]";
        any = true;
      }
    }
    if (!any) os << " unallocated";
    os << "\n";
  }
}

/// Blocks, objects, active and defrag counts per concrete type, and the free blocks.
void dump_per_type(std::ostream& os, HeapSnapshot const& s, std::size_t name_width) {
  auto const& config    = s.config;
  std::uint32_t const m = static_cast<std::uint32_t>(s.blocks.size());
  os << "per type:\n";
  for (std::uint32_t t = 0; t < config.num_types(); ++t) {
    if (config.types[t].is_abstract || t >= s.allocated.size()) continue;
    std::uint32_t blocks = 0, objects = 0;
    for (std::uint32_t b : set_bits(s.allocated[t])) {
      if (b >= m) break;
      ++blocks;
      objects += used_slots(s.blocks[b].alloc_bitmap, config.capacity(t));
    }
    os << "  " << pad(config.types[t].name, name_width) << "  " << blocks << " blocks, " << objects
       << " objects, " << (t < s.active.size() ? count_set(s.active[t]) : 0) << " active, "
       << (t < s.defrag.size() ? count_set(s.defrag[t]) : 0) << " defrag\n";
  }
  os << "free blocks: " << count_set(s.free_blocks) << " of " << m << "\n";
}

/// Every live object's slot, id, cookie and pointer targets, block by block.
void dump_objects(std::ostream& os, HeapSnapshot const& s) {
  os << "objects (slot, id, cookie, refs as block:slot):\n";
  for (std::uint32_t b = 0; b < s.blocks.size(); ++b) {
    bool header_done = false;
    for (auto const& [slot, record] : s.blocks[b].objects.entries()) {
      if (!record) continue;
      if (!header_done) {
        os << "  block " << b << ":\n";
        header_done = true;
      }
      auto const& r = *record;
      os << "    slot " << lpad(std::to_string(slot), 2) << "  id " << r.id << "  cookie "
         << (r.cookie == core::cookie_of(r.id) ? "ok" : "BAD(" + hex(r.cookie) + ")") << "  refs "
         << refs_string(r) << "\n";
    }
  }
}

}  // namespace

std::string dump(HeapSnapshot const& s) {
  auto const& config = s.config;
  std::ostringstream os;
  std::uint32_t const m = static_cast<std::uint32_t>(s.blocks.size());
  os << "HeapSnapshot from '" << (s.producer.empty() ? "?" : s.producer) << "': M=" << m
     << " blocks";
  if (m != config.num_blocks) os << " (config says M=" << config.num_blocks << ")";
  os << ", n=" << config.defrag_factor << ", k1=" << config.k1 << ", payloads "
     << (s.has_payloads ? "yes" : "no") << "\n";
  try {
    config.validate();
  } catch (core::precondition_error const& e) {
    os << "config INVALID: " << e.what() << "\nblocks (raw):\n";
    dump_raw_blocks(os, s);
    return os.str();
  }
  std::size_t const name_width = type_name_width(config);
  dump_types(os, config, name_width);
  dump_blocks(os, s, name_width);
  dump_per_type(os, s, name_width);
  if (s.has_payloads) dump_objects(os, s);
  return os.str();
}

}  // namespace heaplab::check
