// Subcommands of the heaplab tool. Each add_* registers one subcommand and its --help text.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace heaplab::cli {

void add_run(CLI::App& app);
void add_replay(CLI::App& app);
void add_show(CLI::App& app);
void add_list_invariants(CLI::App& app);
/// `heaplab families`: the registered families, their runners and profiles.
void add_families(CLI::App& app);
void add_stress(CLI::App& app);
void add_minimize(CLI::App& app);
/// `heaplab help [COMMAND]`: the top-level help, or one command's.
void add_help(CLI::App& app);

/// The whole command line: parses argv, runs the command, returns the exit status (main.cpp;
/// tools and tests with other families linked in call it too).
int main(int argc, char** argv);

}  // namespace heaplab::cli
