// Random problem shapes for every app (issue 34, "app bugs that depend on the problem's shape";
// docs/apps.md "Random shapes"): `heaplab_apps <app> --random-shape SEED` draws the shape options
// the command line did not give from SEED, within the documented ranges below, and prints them
// as the explicit options that replay the run. The apps smoke of `heaplab run` and the planted-bug
// tests draw several per run. Host only; a pure function of (seed, what was given).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "barnes_hut/barnes_hut.hpp"
#include "game_of_life/game_of_life.hpp"
#include "gen_ca/gen_ca.hpp"
#include "nbody/nbody.hpp"
#include "structure/structure.hpp"
#include "sugarscape/sugarscape.hpp"
#include "traffic/traffic.hpp"
#include "wa_tor/wa_tor.hpp"

namespace heaplab::apps {

/// Whether the command line gave an option ("--width"): such an option keeps its value.
using Given = std::function<bool(std::string const& option)>;

/// The documented ranges (docs/apps.md "Random shapes"). Grid sides are drawn uniformly, or with
/// probability 1/4 as a prime, so non-square, odd and prime sides are all common.
struct ShapeRanges {
  static constexpr std::uint32_t kMinSide = 5, kMaxSide = 251;         // the grid apps
  static constexpr std::uint32_t kMinBodies = 33, kMaxBodies = 3000;   // nbody, collision
  static constexpr std::uint32_t kMinMeshSide = 4, kMaxMeshSide = 97;  // structure
  static constexpr double kMinDensity = 0.02, kMaxDensity = 0.9;       // gen-ca, game-of-life, fish
  static constexpr double kMinMergeRadius = 0.001, kMaxMergeRadius = 0.03;  // collision
  static constexpr std::uint32_t kMinJunctions = 1, kMaxJunctions = 40;     // traffic
  static constexpr double kMinSpawnRate = 0.005, kMaxSpawnRate = 0.3;       // traffic
};

/// Each draws the options of its app that `given` says were not on the command line and returns
/// them as the command-line words that set them ("--width 61 --height 37 ...").
std::string draw_gen_ca_shape(std::uint64_t seed, Given const& given, gen_ca::GenCaOptions& o);
std::string draw_nbody_shape(std::uint64_t seed, Given const& given, nbody::NbodyOptions& o);
std::string draw_wa_tor_shape(std::uint64_t seed, Given const& given, wa_tor::WaTorOptions& o);
std::string draw_game_of_life_shape(std::uint64_t seed,
                                    Given const& given,
                                    game_of_life::GameOfLifeOptions& o);
std::string draw_sugarscape_shape(std::uint64_t seed,
                                  Given const& given,
                                  sugarscape::SugarscapeOptions& o);
std::string draw_traffic_shape(std::uint64_t seed, Given const& given, traffic::TrafficOptions& o);
std::string draw_barnes_hut_shape(std::uint64_t seed,
                                  Given const& given,
                                  barnes_hut::BarnesHutOptions& o);
std::string draw_structure_shape(std::uint64_t seed,
                                 Given const& given,
                                 structure::StructureOptions& o);

}  // namespace heaplab::apps
