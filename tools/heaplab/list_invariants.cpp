// `heaplab list-invariants`: prints the invariant catalog (src/heaplab/check/invariants.cpp,
// docs/invariants.md): name, citation, statement and whether the invariant needs payloads.
#include <algorithm>
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "heaplab/check/invariants.hpp"

namespace heaplab::cli {

namespace {

struct ListOptions {
  bool markdown   = false;
  bool names_only = false;
};

void print_catalog(ListOptions const& options) {
  auto const& catalog = check::catalog();
  if (options.names_only) {
    for (auto const& inv : catalog) std::printf("%.*s\n", int(inv.name.size()), inv.name.data());
    return;
  }
  if (options.markdown) {
    std::printf("| invariant | citation | statement | payloads |\n| --- | --- | --- | --- |\n");
    for (auto const& inv : catalog)
      std::printf("| `%.*s` | %.*s | %.*s | %s |\n",
                  int(inv.name.size()),
                  inv.name.data(),
                  int(inv.citation.size()),
                  inv.citation.data(),
                  int(inv.statement.size()),
                  inv.statement.data(),
                  inv.needs_payloads ? "yes" : "no");
    return;
  }
  std::size_t name_width = 9, citation_width = 8;
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
    std::printf("%-*.*s  %-*.*s  %-8s  %.*s\n",
                int(name_width),
                int(inv.name.size()),
                inv.name.data(),
                int(citation_width),
                int(inv.citation.size()),
                inv.citation.data(),
                inv.needs_payloads ? "yes" : "no",
                int(inv.statement.size()),
                inv.statement.data());
  std::printf(
      "\n%zu invariants. They hold at quiescence (between kernels); payload invariants are "
      "skipped on snapshots without payloads. docs/invariants.md.\n",
      catalog.size());
}

}  // namespace

void add_list_invariants(CLI::App& app) {
  auto options = std::make_shared<ListOptions>();
  auto* cmd    = app.add_subcommand("list-invariants", "print the invariant catalog");
  cmd->footer(
      "Prints each invariant's name (as used by failure files and check_one), the paper section\n"
      "it comes from, its statement, and whether it needs object payloads. Every invariant holds\n"
      "at quiescence, i.e. between kernels when no allocation, free or defragmentation is in\n"
      "flight. docs/invariants.md explains each one and how to add one.\n"
      "Examples:\n"
      "  heaplab list-invariants\n"
      "  heaplab list-invariants --names\n"
      "  heaplab list-invariants --markdown > table.md");
  cmd->add_flag(
      "--markdown", options->markdown, "Print a Markdown table (as in docs/invariants.md)");
  cmd->add_flag("--names", options->names_only, "Print only the names, one per line");
  cmd->callback([options] { print_catalog(*options); });
}

}  // namespace heaplab::cli
