// report.hpp.
#include "heaplab/families/heap/report.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "heaplab/check/dump.hpp"

namespace heaplab::heap_family {

std::set<std::uint32_t> relevant_blocks(Failure const& f, check::HeapSnapshot const& s) {
  std::set<std::uint32_t> out;
  for (auto const& v : f.violations) {
    if (v.block >= 0) out.insert(static_cast<std::uint32_t>(v.block));
    if (v.object_id >= 0) {
      for (std::uint32_t b = 0; b < s.blocks.size(); ++b)
        for (auto const& e : s.blocks[b].objects.entries())
          if (e.record && e.record->id == static_cast<std::uint64_t>(v.object_id)) out.insert(b);
    }
    if (out.size() >= 8) break;
  }
  if (HeapFailureDetail const* d = heap_detail(f); d && d->diff)
    for (std::size_t i = 0; i < d->diff->differences.size() && i < 8; ++i)
      if (d->diff->differences[i].block >= 0)
        out.insert(static_cast<std::uint32_t>(d->diff->differences[i].block));
  return out;
}

std::string relevant_dump(check::HeapSnapshot const& s, std::set<std::uint32_t> const& blocks) {
  std::istringstream in(check::dump(s));
  std::ostringstream out;
  enum class Section { header, blocks, per_type, objects } section = Section::header;
  bool keep_records                                                = false;
  std::size_t block_lines                                          = 0;
  auto block_of = [](std::string const& l) -> long {
    auto const pos = l.find("block ");
    if (pos == std::string::npos) return -1;
    return std::strtol(l.c_str() + pos + 6, nullptr, 10);
  };
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("blocks (", 0) == 0)
      section = Section::blocks;
    else if (line.rfind("per type:", 0) == 0)
      section = Section::per_type;
    else if (line.rfind("objects (", 0) == 0)
      section = Section::objects;
    switch (section) {
      case Section::header:
      case Section::per_type:
        out << line << "\n";
        break;
      case Section::blocks:
        if (line.rfind("blocks (", 0) == 0) {
          out << line << "\n";
        } else if (blocks.empty() ? block_lines++ < 64
                                  : blocks.count(static_cast<std::uint32_t>(block_of(line))) != 0) {
          out << line << "\n";
        }
        break;
      case Section::objects:
        if (blocks.empty()) break;
        if (line.rfind("objects (", 0) == 0) {
          out << line << "\n";
        } else if (line.rfind("  block ", 0) == 0) {
          keep_records = blocks.count(static_cast<std::uint32_t>(block_of(line))) != 0;
          if (keep_records) out << line << "\n";
        } else if (keep_records) {
          out << line << "\n";
        }
        break;
    }
  }
  if (blocks.empty() && block_lines > 64) out << "  ... (" << block_lines - 64 << " more blocks)\n";
  return out.str();
}

std::string format_diff(std::size_t step, check::SnapshotDiff const& diff, std::size_t max_lines) {
  std::ostringstream out;
  std::size_t const listed = std::min(max_lines, diff.differences.size());
  for (std::size_t i = 0; i < listed; ++i) {
    auto const& d = diff.differences[i];
    out << "step " << step << ", " << d.where << ": " << d.field << ": expected " << d.expected
        << ", actual " << d.actual << "\n";
  }
  if (diff.total > listed) out << "... " << diff.total - listed << " more differences\n";
  return out.str();
}

}  // namespace heaplab::heap_family
