// report.hpp.
#include "heaplab/runner/report.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "heaplab/check/dump.hpp"

namespace heaplab::runner {

std::set<std::uint32_t> relevant_blocks(Failure const& f, check::HeapSnapshot const& s) {
  std::set<std::uint32_t> out;
  for (auto const& v : f.violations) {
    if (v.block >= 0) out.insert(static_cast<std::uint32_t>(v.block));
    if (v.object_id >= 0) {
      for (std::uint32_t b = 0; b < s.blocks.size(); ++b)
        for (auto const& rec : s.blocks[b].objects)
          if (rec && rec->id == static_cast<std::uint64_t>(v.object_id)) out.insert(b);
    }
    if (out.size() >= 8) break;
  }
  if (f.diff)
    for (std::size_t i = 0; i < f.diff->differences.size() && i < 8; ++i)
      if (f.diff->differences[i].block >= 0)
        out.insert(static_cast<std::uint32_t>(f.diff->differences[i].block));
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

std::string format_failure(Failure const& f, ReportOptions const& o) {
  std::ostringstream out;
  out << "FIRST FAILURE at step " << f.step << ": " << f.step_description << "\n";
  out << "  kind " << schedule::to_string(f.kind) << ", check " << f.check << "\n";
  out << "  message: " << f.message << "\n";
  if (!f.violations.empty()) {
    out << "  violations (" << f.violations.size() << "):\n";
    std::size_t shown = 0;
    for (auto const& v : f.violations) {
      if (shown++ == o.max_violations) {
        out << "    ... and " << f.violations.size() - o.max_violations << " more\n";
        break;
      }
      out << "    " << v.to_string() << "\n";
    }
  }
  if (f.diff) {
    out << "  diff (expected = model, actual = " << (o.runner.empty() ? "implementation" : o.runner)
        << "): " << f.diff->total << " difference" << (f.diff->total == 1 ? "" : "s") << "\n";
    std::istringstream lines(format_diff(f.step, *f.diff, o.max_differences));
    for (std::string line; std::getline(lines, line);) out << "    " << line << "\n";
  }
  if (o.dump_snapshot && f.actual) {
    std::set<std::uint32_t> const blocks = relevant_blocks(f, *f.actual);
    out << "\n  snapshot after step " << f.step << " ("
        << (f.actual->producer.empty() ? "actual" : f.actual->producer)
        << (o.full_dump ? ")" : "; the blocks the failure is about, --full-dump for all)") << ":\n";
    std::istringstream lines(o.full_dump ? check::dump(*f.actual)
                                         : relevant_dump(*f.actual, blocks));
    for (std::string line; std::getline(lines, line);) out << "    " << line << "\n";
  }
  return out.str();
}

}  // namespace heaplab::runner
