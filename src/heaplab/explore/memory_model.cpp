#include "heaplab/explore/memory_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace heaplab::explore {

char const* to_string(MemoryModel m) {
  return m == MemoryModel::release_acquire ? "release_acquire" : "sequential_consistency";
}

MemoryModel memory_model_from_string(std::string const& name) {
  if (name == "sequential_consistency" || name == "sc") return MemoryModel::sequential_consistency;
  if (name == "release_acquire" || name == "ra") return MemoryModel::release_acquire;
  throw std::invalid_argument("unknown memory model '" + name +
                              "' (expected sequential_consistency (sc) or release_acquire (ra))");
}

namespace {

bool acquires(core::MemoryOrder o) {
  return o == core::MemoryOrder::acquire || o == core::MemoryOrder::acq_rel ||
         o == core::MemoryOrder::seq_cst;
}
bool releases(core::MemoryOrder o) {
  return o == core::MemoryOrder::release || o == core::MemoryOrder::acq_rel ||
         o == core::MemoryOrder::seq_cst;
}

}  // namespace

void ReleaseAcquireMemory::raise(View& v, std::uint32_t loc, std::uint32_t ts) {
  if (v.size() <= loc) v.resize(loc + 1, 0);
  v[loc] = std::max(v[loc], ts);
}

void ReleaseAcquireMemory::join(View& into, View const& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

std::uint32_t ReleaseAcquireMemory::append(std::uint32_t loc, std::uint64_t value, View view) {
  auto& messages         = locations_[loc].messages;
  std::uint32_t const ts = static_cast<std::uint32_t>(messages.size());
  raise(view, loc, ts);
  messages.push_back(Message{value, std::move(view)});
  return ts;
}

std::uint32_t ReleaseAcquireMemory::locate(core::AtomicAccess const& access,
                                           std::uint64_t memory_value) {
  auto const [it, inserted] =
      index_.emplace(access.address, static_cast<std::uint32_t>(locations_.size()));
  std::uint32_t const loc = it->second;
  if (inserted) {
    locations_.push_back(Location{access.address, access.width, {}});
    locations_.back().messages.push_back(Message{memory_value, View{}});  // initial, ts 0
    return loc;
  }
  Location const& l = locations_[loc];
  if (l.width != access.width)
    throw std::logic_error(
        "weak-memory model: mixed-size accesses to one location are not supported (" +
        std::to_string(l.width) + " and " + std::to_string(access.width) + " bytes)");
  if (l.messages.back().value != memory_value) {
    // Memory changed without an observed store (no observer on the writing thread). The model
    // cannot order that write; it treats it like an initial value: visible to, and the oldest
    // value readable by, every thread from now on.
    std::uint32_t const ts = append(loc, memory_value, View{});
    for (View& v : threads_) raise(v, loc, ts);
  }
  return loc;
}

std::uint32_t ReleaseAcquireMemory::load_options(std::uint32_t thread,
                                                 core::AtomicAccess const& access,
                                                 std::uint64_t memory_value) {
  std::uint32_t const loc = locate(access, memory_value);
  if (access.order == core::MemoryOrder::seq_cst) return 1;
  auto const newest = static_cast<std::uint32_t>(locations_[loc].messages.size() - 1);
  return newest - at(threads_[thread], loc) + 1;
}

std::uint64_t ReleaseAcquireMemory::load(std::uint32_t thread,
                                         core::AtomicAccess const& access,
                                         std::uint32_t skip) {
  std::uint32_t const loc = index_.at(access.address);
  auto const& messages    = locations_[loc].messages;
  auto const newest       = static_cast<std::uint32_t>(messages.size() - 1);
  View& view              = threads_[thread];
  if (skip > newest - at(view, loc))
    throw std::logic_error("weak-memory model: a load chose a message older than its view");
  std::uint32_t const ts = newest - skip;
  Message const& m       = messages[ts];
  if (acquires(access.order)) join(view, m.view);
  raise(view, loc, ts);
  return m.value;
}

void ReleaseAcquireMemory::store(std::uint32_t thread,
                                 core::AtomicAccess const& access,
                                 std::uint64_t memory_before,
                                 std::uint64_t value) {
  std::uint32_t const loc = locate(access, memory_before);
  View& view              = threads_[thread];
  // The store becomes the newest message (modification order follows execution order); the
  // writer's own view of the location moves to it, and a release store carries the whole view.
  raise(view, loc, static_cast<std::uint32_t>(locations_[loc].messages.size()));
  append(loc, value, releases(access.order) ? view : View{});
}

void ReleaseAcquireMemory::rmw(std::uint32_t thread,
                               core::AtomicAccess const& access,
                               std::uint64_t before,
                               std::uint64_t after,
                               bool wrote) {
  std::uint32_t const loc       = locate(access, before);
  View& view                    = threads_[thread];
  auto& messages                = locations_[loc].messages;
  auto const read_ts            = static_cast<std::uint32_t>(messages.size() - 1);
  core::MemoryOrder const order = wrote ? access.order : core::detail::failure_order(access.order);
  // Atomicity: an RMW reads the latest message.
  if (acquires(order)) join(view, messages[read_ts].view);
  raise(view, loc, read_ts);
  if (!wrote) return;
  // Release sequence: the new message carries the read message's view on, so an acquire
  // reading it synchronizes with the release head that the read message belongs to.
  View carried = messages[read_ts].view;
  if (releases(order)) join(carried, view);
  std::uint32_t const ts = append(loc, after, std::move(carried));
  raise(view, loc, ts);
}

bool ReleaseAcquireMemory::catch_up(std::uint32_t thread) {
  View& view   = threads_[thread];
  bool changed = false;
  if (view.size() < locations_.size()) view.resize(locations_.size(), 0);
  for (std::size_t loc = 0; loc < locations_.size(); ++loc) {
    auto const newest = static_cast<std::uint32_t>(locations_[loc].messages.size() - 1);
    if (view[loc] < newest) {
      view[loc] = newest;
      changed   = true;
    }
  }
  return changed;
}

}  // namespace heaplab::explore
