// Option checking shared by the heaplab subcommands (docs/cli.md "Options and numbers"): the
// validators of every heaplab program (program.hpp) look at the text the user typed, before
// CLI11 converts it, so that every bad number is a usage error (exit status 2) with a message that
// names the option and the accepted range.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "heaplab/schedule/text.hpp"
#include "program.hpp"

namespace heaplab::cli {

// The exit statuses and the number readers are those of every heaplab program (program.hpp).
using program::boolean_word;
using program::finite_number;
using program::kExitFailed;
using program::kExitHang;
using program::kExitInterrupted;
using program::kExitNotChecked;
using program::kExitPassed;
using program::kExitUsage;
using program::unsigned_integer;

/// "Did you mean": the closest candidate within a few edits (schedule/text.hpp).
using schedule::closest;

/// The name heaplab was started as, for messages and the replay commands it prints: the
/// executable's path as typed (argv[0]); "heaplab" when unknown.
std::string const& program_path();
void set_program_path(std::string path);

}  // namespace heaplab::cli
