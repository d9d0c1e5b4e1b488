// `heaplab replay --model FILE` and `heaplab show FILE` (docs/schedules.md).
//
// replay runs a schedule file on the reference model, one line per step, checking the invariant
// catalog after every step; at the first violation it prints the violation and the relevant part
// of the snapshot (check::dump) and exits with status 1. A file that cannot be read or is
// malformed exits with status 2 and a message naming the file, line, column and field.
// show pretty-prints a schedule (or its canonical JSON with --json).
//
// The model side lives in models/ (model::ModelInterpreter); a later GPU replay plugs in next to
// it with the same plan (schedule::plan_step) and the same per-step output.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "heaplab/check/dump.hpp"
#include "heaplab/model/interpreter.hpp"
#include "heaplab/schedule/json.hpp"

namespace heaplab::cli {
namespace {

struct ReplayOptions {
  std::string file;
  bool model                 = false;
  bool quiet                 = false;
  bool full_dump             = false;
  std::size_t max_violations = 10;
};

std::string config_summary(core::HeapConfig const& c) {
  std::ostringstream out;
  out << "M=" << c.num_blocks << " n=" << c.defrag_factor << " k1=" << c.k1 << "; types:";
  for (std::uint32_t t = 0; t < c.num_types(); ++t) {
    auto const& ty = c.types[t];
    out << " " << ty.name << "(";
    if (ty.is_abstract)
      out << "abstract";
    else
      out << ty.size_bytes << " B, capacity " << c.capacity(t);
    if (ty.base) out << ", base " << c.types[*ty.base].name;
    out << ")";
  }
  return out.str();
}

/// The blocks a violation is about: its block, or the block holding its object.
std::set<std::uint32_t> relevant_blocks(check::Violation const& v, check::HeapSnapshot const& s) {
  std::set<std::uint32_t> out;
  if (v.block >= 0) out.insert(static_cast<std::uint32_t>(v.block));
  if (v.object_id >= 0) {
    for (std::uint32_t b = 0; b < s.blocks.size(); ++b)
      for (auto const& rec : s.blocks[b].objects)
        if (rec && rec->id == static_cast<std::uint64_t>(v.object_id)) out.insert(b);
  }
  return out;
}

/// check::dump, cut to the part that matters for `v`: the header, the type table, the block
/// lines and object records of the relevant blocks (all block lines, no records, when the
/// violation names no block), the per-type counts.
std::string relevant_dump(check::HeapSnapshot const& s, check::Violation const& v) {
  std::set<std::uint32_t> const blocks = relevant_blocks(v, s);
  std::istringstream in(check::dump(s));
  std::ostringstream out;
  enum class Section { header, blocks, per_type, objects } section = Section::header;
  bool keep_records                                                = false;
  std::size_t block_lines                                          = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("blocks (", 0) == 0)
      section = Section::blocks;
    else if (line.rfind("per type:", 0) == 0)
      section = Section::per_type;
    else if (line.rfind("objects (", 0) == 0)
      section = Section::objects;
    auto block_of = [&](std::string const& l) -> long {
      auto const pos = l.find("block ");
      if (pos == std::string::npos) return -1;
      return std::strtol(l.c_str() + pos + 6, nullptr, 10);
    };
    switch (section) {
      case Section::header:
      case Section::per_type:
        out << line << "\n";
        break;
      case Section::blocks:
        if (line.rfind("blocks (", 0) == 0) {
          out << line << "\n";
        } else if (blocks.empty() ? block_lines++ < 64
                                  : blocks.count(static_cast<std::uint32_t>(block_of(line)))) {
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

int replay(ReplayOptions const& opt) {
  if (!opt.model) {
    std::fprintf(
        stderr, "heaplab replay: say where to replay: --model (the GPU replay is not built yet)\n");
    return 2;
  }
  schedule::Schedule sched;
  try {
    sched = schedule::load(opt.file);
  } catch (schedule::schedule_error const& e) {
    std::fprintf(stderr, "heaplab replay: %s\n", e.what());
    return 2;
  }
  std::printf("replay %s on the model: %zu steps; %s\n",
              opt.file.c_str(),
              sched.steps.size(),
              config_summary(sched.config).c_str());
  model::RunResult const result =
      model::run_on_model(sched, [&](model::StepOutcome const& out, model::HeapModel const& m) {
        if (!opt.quiet || !out.ok()) std::printf("%s\n", out.summary().c_str());
        if (out.ok()) return;
        std::printf("\nFIRST FAILURE at step %zu: %s\n", out.index, out.description.c_str());
        if (!out.error.empty()) std::printf("  error: %s\n", out.error.c_str());
        std::size_t shown = 0;
        for (auto const& v : out.violations) {
          if (shown++ == opt.max_violations) {
            std::printf("  ... and %zu more violations\n",
                        out.violations.size() - opt.max_violations);
            break;
          }
          std::printf("  %s\n", v.to_string().c_str());
        }
        auto const snapshot = m.snapshot();
        std::printf(
            "\nsnapshot after step %zu%s:\n%s",
            out.index,
            opt.full_dump ? "" : " (the part the first violation is about; --full-dump for all)",
            opt.full_dump || out.violations.empty()
                ? check::dump(snapshot).c_str()
                : relevant_dump(snapshot, out.violations.front()).c_str());
      });
  if (!result.ok()) {
    std::printf("\nreplay FAILED at step %zu of %zu\n", *result.failed_step(), sched.steps.size());
    return 1;
  }
  std::printf("replay passed: %zu steps, the invariant catalog held after every step\n",
              result.steps.size());
  return 0;
}

int show(std::string const& file, bool as_json) {
  schedule::Schedule sched;
  try {
    sched = schedule::load(file);
  } catch (schedule::schedule_error const& e) {
    std::fprintf(stderr, "heaplab show: %s\n", e.what());
    return 2;
  }
  if (as_json) {
    std::cout << schedule::dump(sched);
    return 0;
  }
  auto const& c = sched.config;
  std::cout << "schedule " << file << " (format " << schedule::kFormatName << " version "
            << schedule::kFormatVersion << ")\n";
  if (!sched.description.empty()) std::cout << "  " << sched.description << "\n";
  std::cout << "config: M = " << c.num_blocks << " blocks, n = " << c.defrag_factor
            << ", k1 = " << c.k1 << "\n";
  for (std::uint32_t t = 0; t < c.num_types(); ++t) {
    auto const& ty = c.types[t];
    std::cout << "  type " << t << " " << ty.name << ": ";
    if (ty.is_abstract)
      std::cout << "abstract, " << ty.size_bytes << " B";
    else
      std::cout << ty.size_bytes << " B, capacity " << c.capacity(t);
    if (ty.base) std::cout << ", base " << c.types[*ty.base].name;
    std::cout << "\n";
    auto const slots = c.pointer_slots(t);
    for (std::uint32_t s = 0; s < slots.size(); ++s)
      std::cout << "    slot " << s << ": " << schedule::slot_name(c, t, s) << " -> "
                << c.types[slots[s].pointee].name << "\n";
  }
  std::cout << "steps (" << sched.steps.size() << "):\n";
  for (std::size_t i = 0; i < sched.steps.size(); ++i)
    std::cout << "  " << i << ": " << schedule::describe(c, sched.steps[i]) << "\n";
  return 0;
}

}  // namespace

void add_replay(CLI::App& app) {
  auto opt  = std::make_shared<ReplayOptions>();
  auto* cmd = app.add_subcommand(
      "replay",
      "Replay a schedule file (docs/schedules.md). With --model: run it on the sequential\n"
      "reference model, print one line per step (live objects, blocks in use, fragmentation F)\n"
      "and check the whole invariant catalog after every step, plus CompactGpu's obligations\n"
      "after each defrag step. At the first violation, print it with the relevant part of the\n"
      "snapshot. Exit status: 0 passed, 1 a step failed, 2 the file is unreadable or malformed.");
  cmd->add_option("file", opt->file, "schedule file (JSON, format heaplab-schedule)")->required();
  cmd->add_flag("--model", opt->model, "replay on the reference model (models/)");
  cmd->add_flag("--quiet,-q", opt->quiet, "print only failing steps and the result");
  cmd->add_flag("--full-dump", opt->full_dump, "on failure, dump the whole snapshot");
  cmd->add_option("--max-violations", opt->max_violations, "violations listed on failure")
      ->check(CLI::Range(1, 100000));
  cmd->callback([opt] { std::exit(replay(*opt)); });
}

void add_show(CLI::App& app) {
  auto file    = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto* cmd    = app.add_subcommand(
      "show",
      "Pretty-print a schedule file: its config (types, capacities, pointer slots by index) and\n"
         "its steps, one line each. With --json, print the canonical JSON instead (what heaplab\n"
         "writes; reading it back gives the same schedule). Exit status 2 for a malformed file.");
  cmd->add_option("file", *file, "schedule file (JSON, format heaplab-schedule)")->required();
  cmd->add_flag("--json", *as_json, "print the canonical JSON form");
  cmd->callback([file, as_json] { std::exit(show(*file, *as_json)); });
}

}  // namespace heaplab::cli
