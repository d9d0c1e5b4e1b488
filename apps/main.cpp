// heaplab_apps: the papers' applications on soa::Heap (issue 12, docs/apps.md), one subcommand
// per app: gen-ca (the generational cellular automaton, CompactGpu Fig. 13), nbody and collision
// (DynaSOAr Table 1, CompactGpu Fig. 11), wa-tor, structure, game-of-life, sugarscape, traffic and
// barnes-hut (DynaSOAr Table 1).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "barnes_hut/barnes_hut.hpp"
#include "common/cli.hpp"
#include "common/memory_budget.hpp"
#include "common/no_device.hpp"
#include "game_of_life/game_of_life.hpp"
#include "gen_ca/gen_ca.hpp"
#include "nbody/nbody.hpp"
#include "program.hpp"
#include "program_output.hpp"
#include "shapes.hpp"
#include "structure/structure.hpp"
#include "sugarscape/sugarscape.hpp"
#include "traffic/traffic.hpp"
#include "wa_tor/wa_tor.hpp"

namespace {

namespace apps = heaplab::apps;
namespace ga   = heaplab::apps::gen_ca;

/// --random-shape SEED on every app (shapes.hpp, docs/apps.md "Random shapes").
void add_random_shape(CLI::App* cmd, std::uint64_t& seed) {
  cmd->add_option("--random-shape",
                  seed,
                  "SEED: draw the shape options not given (grid sides, densities, body count, "
                  "rule, scenario, seed) from SEED within the ranges of docs/apps.md \"Random "
                  "shapes\"; prints them as the options that replay the run");
}

/// --check (with the app's own description), --check-every K and --csv FILE, which every app has;
/// `unit` is "iteration" or "generation". Returns --check, which the app's other check options
/// need.
CLI::Option* add_check_options(CLI::App* cmd,
                               bool& check,
                               int& check_every,
                               std::string& csv,
                               std::string const& what,
                               std::string const& unit,
                               std::string const& section) {
  auto* flag = cmd->add_flag("--check", check, what);
  cmd->add_option("--check-every", check_every, "K: " + unit + "s between checks (needs --check)")
      ->check(CLI::Range(1, 1 << 24))
      ->needs(flag);
  cmd->add_option("--csv", csv, "per-" + unit + " CSV file (docs/apps.md \"" + section + "\")");
  return flag;
}

/// Applies --random-shape when it was given: draws, prints the drawn options.
template <class Options, class Draw>
void apply_random_shape(CLI::App const* cmd, std::uint64_t seed, Options& o, Draw draw) {
  if (cmd->count("--random-shape") == 0) return;
  apps::Given const given = [cmd](std::string const& option) { return cmd->count(option) > 0; };
  std::string const words = draw(seed, given, o);
  std::printf("%s: random shape %llu: %s\n",
              cmd->get_name().c_str(),
              static_cast<unsigned long long>(seed),
              words.c_str());
}

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
  add_check_options(cmd,
                    o.check,
                    o.check_every,
                    o.csv,
                    "compare the heap (objects, pointer grid, live-object count) with the CPU "
                    "reference exactly and run the invariant catalog on a snapshot every "
                    "--check-every generations and after the last; exit 1 at the first difference",
                    "generation",
                    "gen-ca");
  cmd->add_flag("--baseline",
                o.baseline,
                "also run the static dense-grid baseline (no allocation) in the same process");
  apps::add_heap_flags(cmd, o.heap, o.profile);
  add_random_shape(cmd, o.random_shape);
  return cmd;
}

namespace nb = heaplab::apps::nbody;

/// nbody and collision (DynaSOAr Table 1, CompactGpu Fig. 11): one options struct each.
CLI::App* add_nbody_command(CLI::App& app, nb::NbodyOptions& o, bool collision) {
  o.collision = collision;
  auto* cmd   = app.add_subcommand(
      collision ? "collision" : "nbody",
      collision
          ? "n-body simulation with merging (DynaSOAr Table 1 'collision', CompactGpu Fig. 11): "
            "mutual nearest bodies closer than --merge-radius merge, the absorbed one is destroyed "
            "(the heap fragments); static SOA baseline; --check: mass, momentum, counts"
          : "n-body simulation (DynaSOAr Table 1 'nbody'): one heap object per body, all-pairs "
            "forces with device_do; static SOA baseline; --check: mass, momentum, counts");
  cmd->add_option("--bodies", o.bodies, "number of bodies")->check(CLI::Range(1u, 1u << 24));
  cmd->add_option("--iterations", o.iterations, "time steps")->check(CLI::Range(0, 1 << 24));
  cmd->add_option("--seed", o.seed, "seed of the initial bodies");
  cmd->add_option("--dt", o.dt, "time step");
  cmd->add_option("--softening", o.softening, "softening length eps (forces use r^2 + eps^2)");
  if (collision)
    cmd->add_option("--merge-radius", o.merge_radius, "bodies closer than this may merge");
  cmd->add_option("--initial-speed", o.initial_speed, "initial velocities uniform in [-v, v]^2");
  auto* check = add_check_options(
      cmd,
      o.check,
      o.check_every,
      o.csv,
      "every --check-every iterations and after the last: body count = initial - merges = heap "
      "live objects, masses > 0 and no NaN, total mass (nbody: exact; collision: "
      "--mass-tolerance), total momentum (--momentum-tolerance), the invariant catalog on a "
      "snapshot, and the CPU reference for the first --reference-steps iterations; exit 1 at the "
      "first violation",
      "iteration",
      "nbody");
  cmd->add_option("--reference-steps",
                  o.reference_steps,
                  "iterations the CPU reference (double, index order) follows; only up to 4096 "
                  "bodies; 0: off (needs --check)")
      ->needs(check);
  cmd->add_option("--reference-tolerance",
                  o.reference_tolerance,
                  "per value, relative to 1 + |reference value| (needs --check)")
      ->needs(check);
  cmd->add_option(
         "--momentum-tolerance", o.momentum_tolerance, "|P - P0| <= tol * sum m|v| (needs --check)")
      ->needs(check);
  if (collision)
    cmd->add_option("--mass-tolerance", o.mass_tolerance, "relative (needs --check)")->needs(check);
  cmd->add_flag(
      "--baseline",
      o.baseline,
      "also run the static SOA baseline (alive flags, no allocation) in the same process");
  apps::add_heap_flags(cmd, o.heap, o.profile);
  apps::add_variant_options(cmd, o.heap, o.allocators, &o.baseline);
  add_random_shape(cmd, o.random_shape);
  return cmd;
}

namespace wt = heaplab::apps::wa_tor;

CLI::App* add_wa_tor_command(CLI::App& app, wt::WaTorOptions& o) {
  auto* cmd = app.add_subcommand(
      "wa-tor",
      "fish and sharks on a W x H torus (DynaSOAr Table 1, SoaAlloc Fig. 5, CompactGpu Fig. "
      "14/15): Fish/Shark heap objects, with the static SOA baseline and a CUDA device-malloc "
      "variant in the same process, and --check");
  cmd->add_option("--width", o.width, "grid width (cells)")->check(CLI::Range(3u, 1u << 15));
  cmd->add_option("--height", o.height, "grid height (cells)")->check(CLI::Range(3u, 1u << 15));
  cmd->add_option("--iterations", o.iterations, "iterations (fish round + shark round)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--seed", o.seed, "seed of the counter-based generator (initial grid, choices)");
  cmd->add_option("--fish-density", o.fish_density, "fraction of cells with a fish at the start")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--shark-density", o.shark_density, "fraction of cells with a shark at the start")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option(
         "--fish-spawn", o.fish_spawn, "a fish that moves breeds once its timer reaches this")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--shark-spawn", o.shark_spawn, "the same for sharks")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option(
         "--shark-energy", o.shark_energy, "energy of a new shark; -1 per iteration, 0: starves")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--fish-energy", o.fish_energy, "energy a shark gains by eating a fish")
      ->check(CLI::Range(0u, 1u << 20));
  cmd->add_option("--max-energy", o.max_energy, "cap of a shark's energy (>= --shark-energy)")
      ->check(CLI::Range(1u, 1u << 20));
  add_check_options(
      cmd,
      o.check,
      o.check_every,
      o.csv,
      "every variant: births/deaths equal the CPU reference's every iteration; every K "
      "iterations "
      "and after the last: each agent in exactly one cell, each cell at most one agent, objects "
      "and cells agree, population = previous + births - deaths, timers/energies in range, the "
      "invariant catalog on a heap snapshot; exit 1 at the first violation",
      "iteration",
      "wa-tor");
  cmd->add_flag(
      "--baseline",
      o.baseline,
      "also run the static SOA baseline (agent fields in dense cell arrays, no allocation)");
  auto* cm = cmd->add_flag("--cuda-malloc",
                           o.cuda_malloc,
                           "also run the variant with agents from CUDA device malloc/free");
  cmd->add_option("--cuda-malloc-iterations",
                  o.cuda_malloc_iterations,
                  "run the CUDA malloc variant for at most this many iterations (0: --iterations); "
                  "the ratio is per iteration")
      ->check(CLI::Range(0, 1 << 20))
      ->needs(cm);
  apps::add_heap_flags(cmd, o.heap, o.profile);  // --heap-blocks default: docs/apps.md "wa-tor"
  apps::add_variant_options(cmd, o.heap, o.allocators, &o.baseline);
  add_random_shape(cmd, o.random_shape);
  return cmd;
}

namespace st = heaplab::apps::structure;

CLI::App* add_structure_command(CLI::App& app, st::StructureOptions& o) {
  auto* cmd = app.add_subcommand(
      "structure",
      "fracture simulation (DynaSOAr Table 1 \"structure\", CompactGpu Fig. 12): Node and Spring "
      "heap objects on a W x H mesh under a load (--scenario); springs over their strain threshold "
      "break, a BFS from the anchored nodes removes cut-off pieces with their springs; with a "
      "static SOA baseline and a --check of the graph invariants");
  cmd->add_option("--width", o.width, "nodes per row")->check(CLI::Range(2u, 1u << 16));
  cmd->add_option("--height", o.height, "rows of nodes")->check(CLI::Range(2u, 1u << 16));
  cmd->add_option("--iterations", o.iterations, "iterations to run")->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--seed", o.seed, "seed of the spring thresholds");
  cmd->add_option("--threshold", o.threshold, "mean breaking strain of a spring (> 0)")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
         "--jitter", o.jitter, "thresholds spread uniformly over threshold * (1 +- jitter)")
      ->check(CLI::Range(0.0f, 0.999f));
  cmd->add_option("--scenario",
                  o.scenario,
                  "shrink: the four borders anchored, every rest length shrinks by --shrink per "
                  "iteration (progressive fracture, islands cut off and removed); pull: column 0 "
                  "anchored, the last column pulled right at --load")
      ->check(CLI::IsMember({"shrink", "pull"}))
      ->capture_default_str();
  cmd->add_option("--load", o.load, "pull: speed of the right column (length units per time unit)")
      ->check(CLI::Range(0.0f, 100.0f))
      ->capture_default_str();
  cmd->add_option(
         "--shrink", o.shrink, "shrink: fraction of the initial rest lengths lost per iteration")
      ->check(CLI::Range(0.0f, 0.999f))
      ->capture_default_str();
  cmd->add_option("--shrink-floor",
                  o.shrink_floor,
                  "shrink: rest lengths stop shrinking at this fraction of the initial ones")
      ->check(CLI::Range(0.001f, 1.0f))
      ->capture_default_str();
  add_check_options(
      cmd,
      o.check,
      o.check_every,
      o.csv,
      "every --check-every iterations and after the last: download the graph and check no broken "
      "spring, no spring to a dead node, no isolated node survives, counts = initial - removed, "
      "live objects per type, the invariant catalog; with --baseline also equal heap and "
      "baseline counts; exit 1 at the first violation",
      "iteration",
      "structure");
  cmd->add_flag("--baseline", o.baseline, "also run the static SOA baseline in the same process");
  apps::add_heap_flags(cmd, o.heap, o.profile);
  apps::add_variant_options(cmd, o.heap, o.allocators, &o.baseline);
  add_random_shape(cmd, o.random_shape);
  return cmd;
}

namespace gl = heaplab::apps::game_of_life;

CLI::App* add_game_of_life_command(CLI::App& app, gl::GameOfLifeOptions& o) {
  auto* cmd = app.add_subcommand(
      "game-of-life",
      "Conway's Game of Life in DynaSOAr's form (Table 1): alive cells and alive-candidates are "
      "heap objects, O(alive) work per generation, on a W x H torus; with a static dense-grid "
      "baseline and an exact --check against a CPU reference");
  cmd->add_option("--width", o.width, "grid width (cells)")->check(CLI::Range(1u, 1u << 16));
  cmd->add_option("--height", o.height, "grid height (cells)")->check(CLI::Range(1u, 1u << 16));
  cmd->add_option("--iterations", o.iterations, "generations to run")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--seed", o.seed, "seed of the initial grid");
  cmd->add_option("--rule",
                  o.rule,
                  "life (23/3/2) or a two-state rule S/B/2: survive digits, birth digits (no 0)");
  cmd->add_option("--density", o.density, "fraction of cells alive at the start")
      ->check(CLI::Range(0.0, 1.0));
  add_check_options(
      cmd,
      o.check,
      o.check_every,
      o.csv,
      "every --check-every generations and after the last: the alive cells equal the CPU "
      "reference's exactly, every dead cell with an alive neighbour holds a candidate, no stale "
      "candidate, grid and heap name the same objects, live-object count, the invariant catalog "
      "on a snapshot; exit 1 at the first violation",
      "generation",
      "game-of-life");
  cmd->add_flag("--baseline",
                o.baseline,
                "also run the static dense-grid baseline (no allocation) in the same process");
  apps::add_heap_flags(cmd, o.heap, o.profile);
  apps::add_variant_options(cmd, o.heap, o.allocators, &o.baseline);
  add_random_shape(cmd, o.random_shape);
  return cmd;
}

namespace sg = heaplab::apps::sugarscape;

CLI::App* add_sugarscape_command(CLI::App& app, sg::SugarscapeOptions& o) {
  auto* cmd = app.add_subcommand(
      "sugarscape",
      "agents on a W x H torus of sugar (DynaSOAr Table 1): they move toward sugar, eat, age, "
      "starve, mate and are born; Male and Female heap objects, with the static SOA baseline "
      "(agents merged into the cells) and an exact --check against a CPU reference");
  cmd->add_option("--width", o.width, "grid width (cells)")->check(CLI::Range(3u, 1u << 15));
  cmd->add_option("--height", o.height, "grid height (cells)")->check(CLI::Range(3u, 1u << 15));
  cmd->add_option("--iterations", o.iterations, "iterations to run")->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--seed", o.seed, "seed of the counter-based generator (world, choices)");
  cmd->add_option("--density", o.density, "fraction of cells with an agent at the start")
      ->check(CLI::Range(0.0, 1.0));
  add_check_options(
      cmd,
      o.check,
      o.check_every,
      o.csv,
      "every --check-every iterations and after the last, each variant: every cell's sugar and "
      "every agent's kind, sugar, age, metabolism and vision equal the CPU reference's exactly; "
      "heap: grid and objects name each other, live-object count, the invariant catalog; exit 1 "
      "at the first difference",
      "iteration",
      "sugarscape");
  cmd->add_flag(
      "--baseline",
      o.baseline,
      "also run the static SOA baseline (agent fields in dense cell arrays, no allocation)");
  apps::add_heap_flags(cmd, o.heap, o.profile);
  apps::add_variant_options(cmd, o.heap, o.allocators, &o.baseline);
  add_random_shape(cmd, o.random_shape);
  return cmd;
}

namespace tf = heaplab::apps::traffic;

CLI::App* add_traffic_command(CLI::App& app, tf::TrafficOptions& o) {
  auto* cmd = app.add_subcommand(
      "traffic",
      "Nagel-Schreckenberg traffic on a street network (DynaSOAr Table 1): cars appear at "
      "producer cells, drive their trip through W x H intersections and leave; Car heap objects, "
      "with the static SOA baseline (cars merged into the cells) and an exact --check against a "
      "CPU reference");
  cmd->add_option("--width", o.width, "intersections per row")->check(CLI::Range(1u, 2048u));
  cmd->add_option("--height", o.height, "rows of intersections")->check(CLI::Range(1u, 2048u));
  cmd->add_option("--iterations", o.iterations, "iterations to run")->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--seed", o.seed, "seed of the network and of the counter-based generator");
  cmd->add_option("--spawn-rate", o.spawn_rate, "a producer's chance of a new car per iteration")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--slow", o.slow, "Nagel-Schreckenberg's p: a car's chance to slow by one")
      ->check(CLI::Range(0.0, 1.0));
  add_check_options(
      cmd,
      o.check,
      o.check_every,
      o.csv,
      "every --check-every iterations and after the last, each variant: a car exactly where the "
      "CPU reference has one, with its id, velocity, speed limit and trip; heap: grid and objects "
      "name each other, live-object count, the invariant catalog; exit 1 at the first difference",
      "iteration",
      "traffic");
  cmd->add_flag("--baseline",
                o.baseline,
                "also run the static SOA baseline (car fields in dense cell arrays)");
  apps::add_heap_flags(cmd, o.heap, o.profile);
  apps::add_variant_options(cmd, o.heap, o.allocators, &o.baseline);
  add_random_shape(cmd, o.random_shape);
  return cmd;
}

namespace bh = heaplab::apps::barnes_hut;

CLI::App* add_barnes_hut_command(CLI::App& app, bh::BarnesHutOptions& o) {
  auto* cmd = app.add_subcommand(
      "barnes-hut",
      "Barnes-Hut n-body in 2D (DynaSOAr Table 1): bodies in a quad tree of heap nodes deleted and "
      "built again every iteration by parallel top-down and bottom-up passes; --check: the tree's "
      "invariants and the forces against the CPU (no static baseline: category 4)");
  cmd->add_option("--bodies", o.bodies, "number of bodies")->check(CLI::Range(1u, 1u << 24));
  cmd->add_option("--iterations", o.iterations, "time steps")->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--seed", o.seed, "seed of the initial bodies");
  cmd->add_option(
         "--theta", o.theta, "opening criterion: a node is one mass when size / distance < theta")
      ->check(CLI::Range(0.0f, 2.0f));
  cmd->add_option("--dt", o.dt, "time step")->check(CLI::PositiveNumber);
  auto* check = add_check_options(
      cmd,
      o.check,
      o.check_every,
      o.csv,
      "at iteration 1, every --check-every iterations and after the last: the quad tree's "
      "invariants (boxes, counts, lists, masses, no leaked node), every force against a CPU walk "
      "of the same tree and, over --direct-sample bodies, against the direct sum; the live-object "
      "count and the invariant catalog; exit 1 at the first violation",
      "iteration",
      "barnes-hut");
  cmd->add_option("--direct-sample", o.direct_sample, "bodies whose forces --check sums directly")
      ->needs(check);
  cmd->add_option("--max-direct-error",
                  o.max_direct_error,
                  "the mean relative force error allowed against the direct sum (needs --check)")
      ->needs(check);
  apps::add_heap_flags(cmd, o.heap, o.profile);
  apps::add_variant_options(cmd, o.heap, o.allocators, nullptr);
  add_random_shape(cmd, o.random_shape);
  return cmd;
}

}  // namespace

int main(int argc, char** argv) {
  heaplab::program::line_buffered_stdout();  // a run ended by a signal keeps every line printed
  if (!heaplab::program::plant_requested_bug("heaplab_apps")) return heaplab::program::kExitUsage;
  CLI::App app{"heaplab_apps: the papers' applications on heaplab's GPU object allocator."};
  app.require_subcommand(1);
  ga::GenCaOptions gen_ca;
  auto* gen_ca_cmd = add_gen_ca_command(app, gen_ca);
  nb::NbodyOptions nbody;
  nb::NbodyOptions collision;
  auto* nbody_cmd     = add_nbody_command(app, nbody, false);
  auto* collision_cmd = add_nbody_command(app, collision, true);
  wt::WaTorOptions wa_tor;
  auto* wa_tor_cmd = add_wa_tor_command(app, wa_tor);
  st::StructureOptions structure;
  auto* structure_cmd = add_structure_command(app, structure);
  gl::GameOfLifeOptions game_of_life;
  auto* game_of_life_cmd = add_game_of_life_command(app, game_of_life);
  sg::SugarscapeOptions sugarscape;
  auto* sugarscape_cmd = add_sugarscape_command(app, sugarscape);
  tf::TrafficOptions traffic;
  auto* traffic_cmd = add_traffic_command(app, traffic);
  bh::BarnesHutOptions barnes_hut;
  auto* barnes_hut_cmd = add_barnes_hut_command(app, barnes_hut);
  heaplab::program::add_version_flag(app, "heaplab_apps");
  heaplab::program::check_every_number(app);
  heaplab::program::last_one_wins(app);
  if (auto const status =
          heaplab::program::unknown_command_or_option(app, "heaplab_apps", argc, argv))
    return *status;
  try {
    heaplab::program::parse(app, argc, argv);
    apply_random_shape(gen_ca_cmd, gen_ca.random_shape, gen_ca, apps::draw_gen_ca_shape);
    apply_random_shape(nbody_cmd, nbody.random_shape, nbody, apps::draw_nbody_shape);
    apply_random_shape(collision_cmd, collision.random_shape, collision, apps::draw_nbody_shape);
    apply_random_shape(wa_tor_cmd, wa_tor.random_shape, wa_tor, apps::draw_wa_tor_shape);
    apply_random_shape(
        structure_cmd, structure.random_shape, structure, apps::draw_structure_shape);
    apply_random_shape(
        game_of_life_cmd, game_of_life.random_shape, game_of_life, apps::draw_game_of_life_shape);
    apply_random_shape(
        sugarscape_cmd, sugarscape.random_shape, sugarscape, apps::draw_sugarscape_shape);
    apply_random_shape(traffic_cmd, traffic.random_shape, traffic, apps::draw_traffic_shape);
    apply_random_shape(
        barnes_hut_cmd, barnes_hut.random_shape, barnes_hut, apps::draw_barnes_hut_shape);
    if (gen_ca_cmd->parsed()) return ga::run_gen_ca(gen_ca);
    if (nbody_cmd->parsed()) return nb::run_nbody(nbody);
    if (collision_cmd->parsed()) return nb::run_nbody(collision);
    if (wa_tor_cmd->parsed()) return wt::run_wa_tor(wa_tor);
    if (structure_cmd->parsed()) return st::run_structure(structure);
    if (game_of_life_cmd->parsed()) return gl::run_game_of_life(game_of_life);
    if (sugarscape_cmd->parsed()) return sg::run_sugarscape(sugarscape);
    if (traffic_cmd->parsed()) return tf::run_traffic(traffic);
    if (barnes_hut_cmd->parsed()) return bh::run_barnes_hut(barnes_hut);
  } catch (CLI::ParseError const& e) {
    // --help prints and exits 0; any other parse error is a usage error: one line, status 2.
    return heaplab::program::parse_error(app, e, "heaplab_apps");
  } catch (apps::OutOfMemory const& e) {
    // A run that does not fit the memory it was given (--memory-mib): not an error of the app,
    // an answer tools/figure11 reads.
    std::printf("%s\n", apps::does_not_fit_line(e).c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "heaplab_apps: %s\n", e.what());
    return heaplab::program::kExitOutOfMemory;
  } catch (apps::NoDevice const& e) {
    std::fprintf(stderr, "heaplab_apps: SKIPPED: nothing ran: %s\n", e.what());
    return apps::kNoDeviceExit;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab_apps: error: %s\n", e.what());
    return heaplab::program::kExitUsage;
  }
  return 0;
}
