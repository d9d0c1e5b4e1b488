// program.hpp.
#include "program.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "heaplab/core/mutants.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/schedule/text.hpp"

namespace heaplab::program {
namespace {

bool all_digits(std::string const& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// "" when `text` is a decimal integer (an optional '-' and digits without a leading zero).
std::string signed_integer_problem(std::string const& text) {
  std::string const digits = !text.empty() && text[0] == '-' ? text.substr(1) : text;
  if (!all_digits(digits) || (digits.size() > 1 && digits[0] == '0'))
    return "expected a decimal integer, got '" + text + "'";
  return {};
}

/// The value of `text` when it is a finite decimal number: strtod alone would also take
/// hexadecimal ("0x10"), "inf", "nan" and leading blanks.
std::optional<double> decimal_number(std::string const& text) {
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos)
    return std::nullopt;
  char* end          = nullptr;
  double const value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

void check_numbers_of(CLI::App& app) {
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  for (CLI::Option* opt : app.get_options()) {
    // CLI11's type name, without the ":<description>" each validator appends. These checks carry
    // no description of their own (""), so that --help shows the type and the option's own range
    // once ("--minutes FLOAT:(0, 1e+06]=1", not "FLOAT:(0, 1e+06]:FLOAT=1").
    std::string type = opt->get_type_name();
    type             = type.substr(0, type.find(':'));
    if (type == "UINT")
      opt->check(unsigned_integer(0, kMax).description(""));
    else if (type == "INT")
      opt->check(CLI::Validator(signed_integer_problem, ""));
    else if (type == "FLOAT")
      opt->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return decimal_number(text) ? std::string()
                                        : "expected a number (finite, decimal), got '" + text + "'";
          },
          ""));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_numbers_of(*sub);
}

std::string joined(std::vector<std::string> const& items) {
  std::string out;
  for (auto const& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

CLI::Validator unsigned_integer(std::uint64_t min, std::uint64_t max) {
  std::string const range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::string const expected = "expected an integer in " + range + ", got '" + text + "'";
        if (!all_digits(text) || (text.size() > 1 && text[0] == '0')) return expected;
        std::uint64_t value  = 0;
        auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size()) return expected;
        if (value < min || value > max) return expected;
        return {};
      },
      range);
}

CLI::Validator finite_number(double min, double max, bool min_exclusive) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s%g, %g]", min_exclusive ? "(" : "[", min, max);
  std::string const range = buf;
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::string const expected = "expected a number in " + range + ", got '" + text + "'";
        auto const value           = decimal_number(text);
        if (!value || *value < min || *value > max || (min_exclusive && *value == min))
          return expected;
        return {};
      },
      range);
}

CLI::Validator boolean_word() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        for (char const* word : {"true", "false", "1", "0", "on", "off", "yes", "no"})
          if (text == word) return {};
        return "expected true or false (or 1/0, on/off, yes/no), got '" + text + "'";
      },
      "true|false");
}

void check_every_number(CLI::App& app) { check_numbers_of(app); }

void last_one_wins(CLI::App& app) {
  for (CLI::Option* opt : app.get_options())
    if (opt->get_items_expected_max() == 1 &&
        opt->get_multi_option_policy() == CLI::MultiOptionPolicy::Throw)
      opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) last_one_wins(*sub);
}

std::string version_text(std::string const& program) {
  std::string out = program + " " + runner::version() + "\ncommit: " + runner::git_commit() + "\n" +
                    runner::build_description();
  int const gpus = runner::visible_gpu_count();
  if (gpus == 0) {
    out += "gpus: none usable: " + runner::gpu_unavailable_reason();
  } else {
    out += "gpus: " + std::to_string(gpus) + " visible:";
    for (int d = 0; d < gpus; ++d) out += (d ? ", " : " ") + runner::gpu_name(d);
  }
  return out;
}

void add_version_flag(CLI::App& app, std::string const& program) {
  app.set_version_flag(
      "-V,--version",
      [program] { return version_text(program); },
      "print the version, the commit (and a tree hash when the checkout is dirty or copied) and "
      "the CUDA/GPU build information");
}

std::vector<std::string> subcommand_names(CLI::App const& app) {
  std::vector<std::string> names;
  for (auto const* sub : app.get_subcommands([](CLI::App const*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

std::optional<int> unknown_command_or_option(CLI::App& app,
                                             std::string const& program,
                                             int argc,
                                             char** argv) {
  if (argc < 2) return std::nullopt;
  std::string const arg = argv[1];
  if (arg.empty()) return std::nullopt;
  if (arg[0] != '-') {
    auto const names = subcommand_names(app);
    if (std::find(names.begin(), names.end(), arg) != names.end()) return std::nullopt;
    std::string const best = schedule::closest(arg, names, 3);
    std::fprintf(stderr,
                 "%s: error: unknown command '%s'%s; commands: %s; see '%s --help'\n",
                 program.c_str(),
                 arg.c_str(),
                 best.empty() ? "" : (" (did you mean '" + best + "'?)").c_str(),
                 joined(names).c_str(),
                 program.c_str());
    return kExitUsage;
  }
  std::vector<std::string> top;
  for (auto const* opt : app.get_options()) {
    for (auto const& l : opt->get_lnames()) top.push_back("--" + l);
    for (auto const& s : opt->get_snames()) top.push_back("-" + s);
  }
  if (std::find(top.begin(), top.end(), arg.substr(0, arg.find('='))) != top.end())
    return std::nullopt;
  std::string const best = schedule::closest(arg, top, arg.size() <= 4 ? 1 : 3);
  std::fprintf(stderr,
               "%s: error: unknown option '%s'%s; options before a command: %s; see '%s --help'\n",
               program.c_str(),
               arg.c_str(),
               best.empty() ? "" : (" (did you mean '" + best + "'?)").c_str(),
               joined(top).c_str(),
               program.c_str());
  return kExitUsage;
}

void parse(CLI::App& app, int argc, char** argv) {
  bool help = false;
  for (int i = 1; i < argc && std::string(argv[i]) != "--"; ++i)
    help = help || std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h";
  if (!help) {
    app.parse(argc, argv);
    return;
  }
  std::vector<char*> args{argv[0]};
  CLI::App* current = &app;
  for (int i = 1; i < argc; ++i) {
    CLI::App* sub = nullptr;
    try {
      sub = current->get_subcommand(argv[i]);
    } catch (CLI::OptionNotFound const&) {
      break;
    }
    args.push_back(argv[i]);
    current = sub;
  }
  static char help_flag[] = "--help";
  args.push_back(help_flag);
  app.parse(static_cast<int>(args.size()), args.data());
}

int parse_error(CLI::App& app, CLI::ParseError const& e, std::string const& where) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
  std::string message = e.what();
  // CLI11 spells some messages over several lines; one line is what scripts and people grep.
  std::replace(message.begin(), message.end(), '\n', ' ');
  while (!message.empty() && message.back() == ' ') message.pop_back();
  std::fprintf(
      stderr, "%s: error: %s; see '%s --help'\n", where.c_str(), message.c_str(), where.c_str());
  return kExitUsage;
}

bool plant_requested_bug(std::string const& program) {
  std::string const failed = core::mutant::plant_from_environment();
  if (failed.empty()) return true;
  std::fprintf(stderr, "%s: error: %s\n", program.c_str(), failed.c_str());
  return false;
}

}  // namespace heaplab::program
