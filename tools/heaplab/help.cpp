// `heaplab help [COMMAND]` (docs/cli.md).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "heaplab/runner/environment.hpp"
#include "options.hpp"

namespace heaplab::cli {

void add_help(CLI::App& app) {
  auto topic = std::make_shared<std::string>();
  auto* cmd  = app.add_subcommand("help", "print the help of heaplab or of one command");
  cmd->add_option("command", *topic, "the command to explain (default: heaplab itself)");
  cmd->footer("Examples:\n  heaplab help\n  heaplab help stress");
  cmd->callback([&app, topic] {
    if (topic->empty()) {
      // App::help() would delegate to the parsed subcommand (this one): format the top level.
      std::printf(
          "%s",
          app.get_formatter()->make_help(&app, "heaplab", CLI::AppFormatMode::Normal).c_str());
      std::exit(kExitPassed);
    }
    std::vector<std::string> names;
    for (auto const* sub : app.get_subcommands([](CLI::App const*) { return true; })) {
      if (sub->get_name() == *topic) {
        std::printf("%s",
                    sub->get_formatter()
                        ->make_help(sub, "heaplab " + sub->get_name(), CLI::AppFormatMode::Normal)
                        .c_str());
        std::exit(kExitPassed);
      }
      names.push_back(sub->get_name());
    }
    std::string const best = closest(*topic, names, 3);
    std::fprintf(stderr,
                 "heaplab help: error: unknown command '%s'%s; see 'heaplab --help'\n",
                 topic->c_str(),
                 best.empty() ? "" : (" (did you mean '" + best + "'?)").c_str());
    std::exit(kExitUsage);
  });
}

}  // namespace heaplab::cli
