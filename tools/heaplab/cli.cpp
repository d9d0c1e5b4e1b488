// heaplab: the command-line tool of the testbed (docs/cli.md, docs/workflow.md): every command,
// for every registered family (heaplab::cli::main; main.cpp and the test tools call it).
//
// Usage errors of every kind (unknown command or option, a bad value, a missing argument) end
// here with one line on stderr and exit status 2; docs/cli.md lists the exit statuses.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "commands.hpp"
#include "options.hpp"

namespace {

using heaplab::cli::closest;

using heaplab::program::subcommand_names;

std::string joined(std::vector<std::string> const& items) {
  std::string out;
  for (auto const& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

/// The subcommand the user named (argv[1]), if it exists.
CLI::App* named_subcommand(CLI::App& app, int argc, char** argv) {
  if (argc < 2) return nullptr;
  try {
    return app.get_subcommand(argv[1]);
  } catch (CLI::OptionNotFound const&) {
    return nullptr;
  }
}

/// "unknown option '--sed' (did you mean '--seed'?)" for each argument that looks like an option
/// and is not one of `sub`'s; "" when there is none (the extra arguments are positional).
std::string unknown_options(CLI::App const& sub, int argc, char** argv) {
  std::vector<std::string> names;
  for (auto const* opt : sub.get_options()) {
    for (auto const& l : opt->get_lnames()) names.push_back("--" + l);
    for (auto const& s : opt->get_snames()) names.push_back("-" + s);
  }
  std::string out;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-' || (arg[1] >= '0' && arg[1] <= '9')) continue;
    if (auto const eq = arg.find('='); eq != std::string::npos) arg.resize(eq);
    if (std::find(names.begin(), names.end(), arg) != names.end()) continue;
    std::string const best = closest(arg, names, arg.size() <= 4 ? 1 : 3);
    out += (out.empty() ? "" : "; ") + ("unknown option '" + arg + "'");
    if (!best.empty()) out += " (did you mean '" + best + "'?)";
  }
  return out;
}

int usage_error(CLI::App& app, CLI::ParseError const& e, int argc, char** argv) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
  CLI::App* sub           = named_subcommand(app, argc, argv);
  std::string const where = sub ? "heaplab " + sub->get_name() : "heaplab";
  std::string message     = e.what();
  // CLI11 spells some messages over several lines; one line is what scripts and people grep.
  for (auto& c : message)
    if (c == '\n') c = ' ';
  while (!message.empty() && message.back() == ' ') message.pop_back();
  if (sub && dynamic_cast<CLI::ExtrasError const*>(&e)) {
    if (auto const unknown = unknown_options(*sub, argc, argv); !unknown.empty()) message = unknown;
  }
  if (!sub && dynamic_cast<CLI::RequiredError const*>(&e))
    message = "a command is required; commands: " + joined(subcommand_names(app));
  std::fprintf(
      stderr, "%s: error: %s; see '%s --help'\n", where.c_str(), message.c_str(), where.c_str());
  return heaplab::cli::kExitUsage;
}

}  // namespace

namespace heaplab::cli {

int main(int argc, char** argv) {
  heaplab::cli::set_program_path(argc > 0 ? argv[0] : "heaplab");
  // Past a file size limit (ulimit -f) a write fails with EFBIG and the command says which file
  // was not written; by default SIGXFSZ would end the process without a word (status 153).
  std::signal(SIGXFSZ, SIG_IGN);
  if (!heaplab::program::plant_requested_bug("heaplab")) return heaplab::cli::kExitUsage;
  CLI::App app{
      "heaplab: a verification-first testbed for GPU dynamic memory allocation and "
      "compaction.",
      "heaplab"};
  app.require_subcommand(1);
  heaplab::program::add_version_flag(app, "heaplab");
  app.footer(
      "Examples:\n"
      "  heaplab run                                  the main job: every tier this machine can "
      "run\n"
      "  heaplab stress --minutes 5 --seed 1          random schedules against the model\n"
      "  heaplab stress --runner gpu --minutes 10     the GPU allocator against the model\n"
      "  heaplab stress --runner rw-cpu --minutes 2   the random-walk pools on CPU threads\n"
      "  heaplab families                             the allocator families and their runners\n"
      "  heaplab replay failures/                     replay every failure file in a folder\n"
      "  heaplab minimize failures/20261122T101112Z-9417744632.json   shrink a failing file\n"
      "  heaplab help stress                          a command's options and examples\n"
      "  heaplab version                              version, commit, CUDA and GPUs\n"
      "Exit statuses: 0 passed, 1 failed, 2 usage error or unreadable input, 3 a kernel hung,\n"
      "4 not checked (nothing ran, or not the side that failed), 130 interrupted (Ctrl-C).\n"
      "docs/cli.md describes every command; docs/workflow.md a day with heaplab.");
  heaplab::cli::add_run(app);
  heaplab::cli::add_stress(app);
  heaplab::cli::add_replay(app);
  heaplab::cli::add_minimize(app);
  heaplab::cli::add_show(app);
  heaplab::cli::add_list_invariants(app);
  heaplab::cli::add_families(app);
  heaplab::cli::add_help(app);
  app.add_subcommand("version", "print the version (as --version)")->callback([] {
    std::printf("%s\n", heaplab::program::version_text("heaplab").c_str());
  });

  heaplab::program::check_every_number(app);
  heaplab::program::last_one_wins(app);

  // An unknown command or an unknown option before the command ("heaplab --versoin"): say so and
  // suggest the closest, before CLI11 calls it an extra argument or says a command is required.
  if (auto const status = heaplab::program::unknown_command_or_option(app, "heaplab", argc, argv))
    return *status;
  try {
    heaplab::program::parse(app, argc, argv);
  } catch (CLI::ParseError const& e) {
    return usage_error(app, e, argc, argv);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab: error: %s\n", e.what());
    return heaplab::cli::kExitUsage;
  }
  return 0;
}

}  // namespace heaplab::cli
