// heaplab: the command-line tool of the testbed (docs/workflow.md).
#include <cstdio>
#include <exception>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "heaplab: a verification-first testbed for GPU dynamic memory allocation and compaction.\n"
      "Every subcommand has --help. docs/workflow.md describes a day with heaplab."};
  app.require_subcommand(1);
  heaplab::cli::add_run(app);
  heaplab::cli::add_replay(app);
  heaplab::cli::add_show(app);
  heaplab::cli::add_list_invariants(app);
  heaplab::cli::add_stress(app);
  heaplab::cli::add_minimize(app);
  try {
    app.parse(argc, argv);
  } catch (CLI::ParseError const& e) {
    return app.exit(e);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
