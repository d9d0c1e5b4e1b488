// Subcommands of the heaplab tool. Each add_* registers one subcommand and its --help text.
#pragma once

#include <CLI/CLI.hpp>

namespace heaplab::cli {

void add_run(CLI::App& app);
void add_replay(CLI::App& app);
void add_show(CLI::App& app);
void add_list_invariants(CLI::App& app);
void add_stress(CLI::App& app);
void add_minimize(CLI::App& app);

}  // namespace heaplab::cli
