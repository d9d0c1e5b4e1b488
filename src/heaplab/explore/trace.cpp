#include "heaplab/explore/trace.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace heaplab::explore {

namespace {

std::string hex(std::uint64_t v, unsigned width_bytes) {
  char buf[24];
  if (width_bytes == 4)
    std::snprintf(buf, sizeof buf, "0x%08" PRIx64, v);
  else
    std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}

}  // namespace

std::string TraceFormatter::header() {
  char buf[160];
  std::snprintf(buf,
                sizeof buf,
                "%6s  %-4s %-9s %-8s %-26s %-20s %s",
                "step",
                "thr",
                "op",
                "order",
                "address",
                "operand",
                "old -> new");
  return buf;
}

std::string TraceFormatter::name_of(void const* address) {
  std::string name = namer_ ? namer_(address) : std::string();
  if (!name.empty()) return name;
  auto it             = std::find(unnamed_.begin(), unnamed_.end(), address);
  std::size_t const k = static_cast<std::size_t>(it - unnamed_.begin());
  if (it == unnamed_.end()) unnamed_.push_back(address);
  return "unnamed#" + std::to_string(k);
}

std::string TraceFormatter::line(Event const& e) {
  std::string operand;
  std::string values;
  switch (e.op) {
    case core::AtomicOp::load:
      values = "= " + hex(e.new_value, e.width);
      if (e.stale > 0)
        values += "  (stale: " + std::to_string(e.stale) + " newer store" +
                  (e.stale == 1 ? "" : "s") + ")";
      break;
    case core::AtomicOp::store:
    case core::AtomicOp::exchange:
      operand = hex(e.operand, e.width);
      values  = hex(e.old_value, e.width) + " -> " + hex(e.new_value, e.width);
      break;
    case core::AtomicOp::fetch_or:
      operand = "|" + hex(e.operand, e.width);
      break;
    case core::AtomicOp::fetch_and:
      operand = "&" + hex(e.operand, e.width);
      break;
    case core::AtomicOp::fetch_add:
      operand = "+" + hex(e.operand, e.width);
      break;
    case core::AtomicOp::compare_exchange:
      operand = "=>" + hex(e.operand, e.width);
      break;
  }
  if (values.empty())
    values = hex(e.old_value, e.width) + " -> " + hex(e.new_value, e.width) +
             (e.modifies() ? "" : "  (no change)");
  char buf[256];
  std::snprintf(buf,
                sizeof buf,
                "%6" PRIu64 "  T%-3u %-9s %-8s %-26s %-20s ",
                e.step,
                e.thread,
                core::to_string(e.op),
                core::to_string(e.order),
                name_of(e.address).c_str(),
                operand.c_str());
  return buf + values;
}

std::string TraceFormatter::format(std::vector<Event> const& events, std::size_t tail) {
  std::string out   = header() + "\n";
  std::size_t first = 0;
  if (tail > 0 && events.size() > tail) {
    first = events.size() - tail;
    out += "   ... " + std::to_string(first) + " earlier events omitted ...\n";
  }
  for (std::size_t i = first; i < events.size(); ++i) out += line(events[i]) + "\n";
  return out;
}

}  // namespace heaplab::explore
