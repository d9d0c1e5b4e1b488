// What the command line of every heaplab program shares (heaplab, heaplab_bench, heaplab_apps;
// docs/cli.md "Options and numbers" and "Exit statuses"): one set of exit statuses, numbers read
// strictly, a mistyped command or option answered with the closest one, parse errors as one line,
// and -V/--version that ties any output to a build.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heaplab::program {

/// The exit statuses of every heaplab program (docs/cli.md "Exit statuses").
inline constexpr int kExitPassed     = 0;
inline constexpr int kExitFailed     = 1;
inline constexpr int kExitUsage      = 2;
inline constexpr int kExitHang       = 3;
inline constexpr int kExitNotChecked = 4;     // nothing was tested (no GPU here, no budget), or
                                              // not the side that failed
inline constexpr int kExitOutOfMemory = 5;    // heaplab_apps --memory-mib: a variant did not fit
inline constexpr int kExitInterrupted = 130;  // SIGINT: 128 + 2, as shells report it

/// A decimal integer in [min, max]: digits only (no sign, no exponent, no hex, no leading zero:
/// CLI11 would read "010" as octal), no overflow.
CLI::Validator unsigned_integer(std::uint64_t min, std::uint64_t max);
/// A finite decimal number in [min, max] (or (min, max] when min_exclusive); NaN, infinities,
/// hexadecimal and blanks are rejected.
CLI::Validator finite_number(double min, double max, bool min_exclusive = false);
/// A boolean option's value: exactly true, false, 1, 0, on, off, yes or no (CLI11 alone takes
/// "", "2" and "-1" too).
CLI::Validator boolean_word();

/// Adds the strict reading above to every option of `app` and its subcommands whose value is a
/// number (CLI11 type UINT, INT or FLOAT), on top of the option's own checks: CLI11 alone wraps
/// "-1" to 2^64-1, takes "nan" where a range is checked (every comparison with NaN is false), and
/// reads "0x10" and "010" in other bases. Call it after every option is added.
void check_every_number(CLI::App& app);
/// Every option of `app` and its subcommands that takes one value takes the last one when it is
/// given twice ("--seed 1 --seed 2" is seed 2), as git and cargo do, where CLI11 alone refuses
/// ("At Most 1 required but received 2"). Call it after every option is added.
void last_one_wins(CLI::App& app);

/// `<program> <version>`, the commit, the build (CUDA) and the GPUs this machine has.
std::string version_text(std::string const& program);
/// -V and --version: print version_text(program) and exit 0.
void add_version_flag(CLI::App& app, std::string const& program);

/// HEAPLAB_PLANT=<name>: in a planting build (-DHEAPLAB_MUTANT=runtime, docs/mutants.md "One
/// build for every planted bug") plants that bug and says so on stderr. Returns false after one
/// line on stderr saying why when it cannot (an unknown name, the device's switches not written,
/// or a build that cannot plant at run time); the program then exits kExitUsage. Call it first.
bool plant_requested_bug(std::string const& program);

/// The names of app's subcommands.
std::vector<std::string> subcommand_names(CLI::App const& app);

/// argv[1] when it is an unknown command or an option before the command that `app` does not
/// have: says so on stderr with the closest name and returns kExitUsage; nullopt otherwise.
std::optional<int> unknown_command_or_option(CLI::App& app,
                                             std::string const& program,
                                             int argc,
                                             char** argv);

/// Parses argv into `app`; when argv asks for help (-h or --help before any "--") only the chain of
/// subcommand names that leads argv is parsed with --help, so a command's help wins over a bad
/// value given with it ("stress --seed x --help" shows stress's help, as git and cargo do).
/// Throws what App::parse throws.
void parse(CLI::App& app, int argc, char** argv);

/// A CLI11 parse error as one line on stderr ("<where>: error: ...; see '<where> --help'") and
/// kExitUsage; --help and --version print and return 0.
int parse_error(CLI::App& app, CLI::ParseError const& e, std::string const& where);

}  // namespace heaplab::program
