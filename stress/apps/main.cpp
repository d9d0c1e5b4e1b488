// heaplab_apps: the papers' applications on soa::Heap (issue 12, docs/apps.md), one subcommand
// per app. Built so far: gen-ca (the generational cellular automaton, CompactGpu Fig. 13).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "common/cli.hpp"
#include "gen_ca/gen_ca.hpp"
#include "structure/structure.hpp"

namespace {

namespace apps = heaplab::apps;
namespace ga   = heaplab::apps::gen_ca;

CLI::App* add_gen_ca_command(CLI::App& app, ga::GenCaOptions& o) {
  auto* cmd = app.add_subcommand(
      "gen-ca",
      "generational cellular automaton (CompactGpu Fig. 13): one heap object per alive or dying "
      "cell on a W x H torus, with a static dense-grid baseline and an exact --check against a "
      "CPU reference");
  cmd->add_option("--width", o.width, "grid width (cells)")->check(CLI::Range(1u, 1u << 16));
  cmd->add_option("--height", o.height, "grid height (cells)")->check(CLI::Range(1u, 1u << 16));
  cmd->add_option("--iterations", o.iterations, "generations to run")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--seed", o.seed, "seed of the initial grid");
  cmd->add_option("--rule",
                  o.rule,
                  "burst (0235678/3468/255, the paper's), life (23/3/2) or S/B/C: survive digits, "
                  "birth digits, number of states C in 2..256");
  cmd->add_option("--density", o.density, "fraction of cells alive at the start")
      ->check(CLI::Range(0.0, 1.0));
  auto* check =
      cmd->add_flag("--check",
                    o.check,
                    "compare the heap (objects, pointer grid, live-object count) with the CPU "
                    "reference exactly and run the invariant catalog on a snapshot every "
                    "--check-every generations and after the last; exit 1 at the first difference");
  cmd->add_option("--check-every", o.check_every, "K: generations between checks (needs --check)")
      ->check(CLI::Range(1, 1 << 20))
      ->needs(check);
  cmd->add_flag("--baseline",
                o.baseline,
                "also run the static dense-grid baseline (no allocation) in the same process");
  cmd->add_option("--csv", o.csv, "per-generation CSV file (docs/apps.md \"Reading the CSV\")");
  apps::add_heap_flags(cmd, o.heap, o.profile);
  return cmd;
}

namespace st = heaplab::apps::structure;

CLI::App* add_structure_command(CLI::App& app, st::StructureOptions& o) {
  auto* cmd = app.add_subcommand(
      "structure",
      "fracture simulation (DynaSOAr Table 1 \"structure\", CompactGpu Fig. 12): Node and Spring "
      "heap objects on a W x H mesh pulled on its right edge; springs over their strain threshold "
      "break, a BFS from the anchored left edge removes cut-off nodes with their springs; with a "
      "static SOA baseline and a --check of the graph invariants");
  cmd->add_option("--width", o.width, "nodes per row (column 0 anchored, the last one pulled)")
      ->check(CLI::Range(2u, 1u << 16));
  cmd->add_option("--height", o.height, "rows of nodes")->check(CLI::Range(2u, 1u << 16));
  cmd->add_option("--iterations", o.iterations, "iterations to run")->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--seed", o.seed, "seed of the spring thresholds");
  cmd->add_option("--threshold", o.threshold, "mean breaking strain of a spring (> 0)")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
         "--jitter", o.jitter, "thresholds spread uniformly over threshold * (1 +- jitter)")
      ->check(CLI::Range(0.0f, 0.999f));
  cmd->add_option("--load", o.load, "pull speed of the right column (length units per time unit)")
      ->check(CLI::Range(0.0f, 100.0f));
  auto* check = cmd->add_flag(
      "--check",
      o.check,
      "every --check-every iterations and after the last: download the graph and check no broken "
      "spring, no spring to a dead node, no isolated node survives, counts = initial - removed, "
      "live objects per type, the invariant catalog; with --baseline also equal heap and "
      "baseline counts; exit 1 at the first violation");
  cmd->add_option("--check-every", o.check_every, "K: iterations between checks (needs --check)")
      ->check(CLI::Range(1, 1 << 20))
      ->needs(check);
  cmd->add_flag("--baseline", o.baseline, "also run the static SOA baseline in the same process");
  cmd->add_option("--csv", o.csv, "per-iteration CSV file (docs/apps.md \"structure\")");
  apps::add_heap_flags(cmd, o.heap, o.profile);
  return cmd;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  CLI::App app{"heaplab_apps: the papers' applications on heaplab's GPU object allocator."};
  app.require_subcommand(1);
  ga::GenCaOptions gen_ca;
  auto* gen_ca_cmd = add_gen_ca_command(app, gen_ca);
  st::StructureOptions structure;
  auto* structure_cmd = add_structure_command(app, structure);
  try {
    app.parse(argc, argv);
    if (gen_ca_cmd->parsed()) return ga::run_gen_ca(gen_ca);
    if (structure_cmd->parsed()) return st::run_structure(structure);
  } catch (CLI::ParseError const& e) {
    // --help prints and exits 0; any other parse error is a usage error: one line, status 2.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    std::fprintf(stderr, "heaplab_apps: error: %s; see 'heaplab_apps --help'\n", message.c_str());
    return 2;
  } catch (ga::NoDevice const& e) {
    std::fprintf(stderr, "heaplab_apps: SKIPPED: %s\n", e.what());
    return ga::kNoDeviceExit;
  } catch (st::NoDevice const& e) {
    std::fprintf(stderr, "heaplab_apps: SKIPPED: %s\n", e.what());
    return st::kNoDeviceExit;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab_apps: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
