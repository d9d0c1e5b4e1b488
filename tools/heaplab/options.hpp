// Option checking shared by the heaplab subcommands (docs/cli.md "Options and numbers").
//
// CLI11's own conversions accept "-1" for an unsigned option (it wraps), "nan" for a range-checked
// double (every comparison with NaN is false) and out-of-range integers in some spellings. These
// validators look at the text the user typed, before any conversion, so that every such input is
// a usage error (exit status 2) with a message that names the option and the accepted range.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "heaplab/schedule/text.hpp"

namespace heaplab::cli {

/// The exit statuses shared by the subcommands (docs/cli.md "Exit statuses").
inline constexpr int kExitPassed      = 0;
inline constexpr int kExitFailed      = 1;
inline constexpr int kExitUsage       = 2;
inline constexpr int kExitHang        = 3;
inline constexpr int kExitNotChecked  = 4;    // nothing was tested, or not the side that failed
inline constexpr int kExitInterrupted = 130;  // SIGINT: 128 + 2, as shells report it

/// A decimal integer in [min, max]: digits only (no sign, no exponent, no hex), no overflow.
CLI::Validator unsigned_integer(std::uint64_t min, std::uint64_t max);
/// A finite decimal number in [min, max] (or (min, max] when min_exclusive); NaN and infinities
/// are rejected.
CLI::Validator finite_number(double min, double max, bool min_exclusive = false);

/// "Did you mean": the closest candidate within a few edits (schedule/text.hpp).
using schedule::closest;

/// The name heaplab was started as, for messages and the replay commands it prints: the
/// executable's path as typed (argv[0]); "heaplab" when unknown.
std::string const& program_path();
void set_program_path(std::string path);

}  // namespace heaplab::cli
