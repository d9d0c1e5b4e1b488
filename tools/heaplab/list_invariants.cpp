// `heaplab list-invariants` and `heaplab families`: what the families of this heaplab check and
// how to run them (docs/invariants.md, docs/families.md). Both list every registered family; they
// name none.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "heaplab/runner/registry.hpp"
#include "options.hpp"

namespace heaplab::cli {

namespace {

struct ListOptions {
  bool markdown   = false;
  bool names_only = false;
  std::string family;  // "" : every family
};

void print_markdown(runner::Family const& f) {
  std::printf("| invariant | citation | statement | payloads |\n| --- | --- | --- | --- |\n");
  for (auto const& inv : f.invariants())
    std::printf("| `%s` | %s | %s | %s |\n",
                inv.name.c_str(),
                inv.citation.c_str(),
                inv.statement.c_str(),
                inv.needs_payloads ? "yes" : "no");
}

void print_table(runner::Family const& f) {
  auto const catalog         = f.invariants();
  std::size_t name_width     = 9;
  std::size_t citation_width = 8;
  for (auto const& inv : catalog) {
    name_width     = std::max(name_width, inv.name.size());
    citation_width = std::max(citation_width, inv.citation.size());
  }
  std::printf("%-*s  %-*s  %-8s  %s\n",
              int(name_width),
              "invariant",
              int(citation_width),
              "citation",
              "payloads",
              "statement");
  for (auto const& inv : catalog)
    std::printf("%-*s  %-*s  %-8s  %s\n",
                int(name_width),
                inv.name.c_str(),
                int(citation_width),
                inv.citation.c_str(),
                inv.needs_payloads ? "yes" : "no",
                inv.statement.c_str());
}

/// The families asked for: one by name, or every family. Empty (after saying why) for an unknown
/// name.
std::vector<runner::Family const*> families_for(std::string const& name, char const* command) {
  auto& registry = runner::Registry::instance();
  if (name.empty()) return registry.families();
  if (runner::Family const* f = registry.family(name)) return {f};
  std::string known;
  for (runner::Family const* f : registry.families())
    known += (known.empty() ? "" : ", ") + f->name();
  std::fprintf(stderr,
               "heaplab %s: error: --family %s: unknown family; families: %s\n",
               command,
               name.c_str(),
               known.c_str());
  return {};
}

int print_catalogs(ListOptions const& options) {
  if (options.markdown && options.names_only) {
    std::fprintf(stderr,
                 "heaplab list-invariants: error: --markdown and --names exclude each other\n");
    return kExitUsage;
  }
  auto const families = families_for(options.family, "list-invariants");
  if (families.empty()) return kExitUsage;
  std::size_t total = 0;
  for (runner::Family const* f : families) {
    if (options.names_only) {
      for (auto const& inv : f->invariants()) std::printf("%s\n", inv.name.c_str());
      continue;
    }
    std::printf(options.markdown ? "### %s: %s\n\n" : "family %s: %s\n",
                f->name().c_str(),
                f->title().c_str());
    options.markdown ? print_markdown(*f) : print_table(*f);
    std::printf("\n");
    total += f->invariants().size();
  }
  if (!options.names_only && !options.markdown)
    std::printf(
        "%zu invariants. They hold at quiescence (between kernels); payload invariants are "
        "skipped on snapshots without payloads. docs/invariants.md.\n",
        total);
  return kExitPassed;
}

int print_families(std::string const& name) {
  auto const families = families_for(name, "families");
  if (families.empty()) return kExitUsage;
  for (runner::Family const* f : families) {
    std::printf("family %s: %s\n  schedule files: \"format\": \"%s\"\n  runners:\n",
                f->name().c_str(),
                f->title().c_str(),
                f->schedule_format().c_str());
    for (runner::RunnerInfo const* r : runner::Registry::instance().runners_of(f->name())) {
      std::string const why = r->unavailable ? r->unavailable() : std::string();
      std::printf("    %-20s %s%s%s\n",
                  r->name.c_str(),
                  r->help.c_str(),
                  r->name == f->reference_runner() ? " [reference]" : "",
                  why.empty() ? "" : (" [cannot run here: " + why + "]").c_str());
    }
    std::printf("  profiles (stress --profile):\n");
    for (auto const& p : f->profiles())
      std::printf("    %-20s %s\n", p.name.c_str(), p.help.c_str());
    std::printf("  invariants: %zu (heaplab list-invariants --family %s)\n\n",
                f->invariants().size(),
                f->name().c_str());
  }
  return kExitPassed;
}

}  // namespace

void add_list_invariants(CLI::App& app) {
  auto options = std::make_shared<ListOptions>();
  auto* cmd    = app.add_subcommand("list-invariants", "print the families' invariant catalogs");
  cmd->footer(
      "Prints each invariant's name (as used by failure files), the paper section it comes\n"
      "from, its statement, and whether it needs object payloads, family by family. Every\n"
      "invariant holds at quiescence, i.e. between kernels when no allocation, free or\n"
      "defragmentation is in flight. docs/invariants.md explains each one and how to add one.\n"
      "Examples:\n"
      "  heaplab list-invariants\n"
      "  heaplab list-invariants --family rw\n"
      "  heaplab list-invariants --names\n"
      "  heaplab list-invariants --markdown > table.md");
  auto* markdown = cmd->add_flag(
      "--markdown", options->markdown, "Print Markdown tables (as in docs/invariants.md)");
  cmd->add_flag("--names", options->names_only, "Print only the names, one per line")
      ->excludes(markdown);
  cmd->add_option("--family", options->family, "only this family's catalog (heap, rw, ...)");
  cmd->callback([options] { std::exit(print_catalogs(*options)); });
}

void add_families(CLI::App& app) {
  auto name = std::make_shared<std::string>();
  auto* cmd =
      app.add_subcommand("families", "list the allocator families, their runners and profiles");
  cmd->footer(
      "Lists every allocator family this heaplab has (docs/families.md): its schedule format,\n"
      "its runners (which is the reference, which cannot run here and why), its stress profiles\n"
      "and the size of its invariant catalog.\n"
      "Examples:\n"
      "  heaplab families\n"
      "  heaplab families --family rw");
  cmd->add_option("--family", *name, "only this family");
  cmd->callback([name] { std::exit(print_families(*name)); });
}

}  // namespace heaplab::cli
