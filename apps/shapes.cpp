// Random problem shapes (shapes.hpp).
#include "shapes.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

namespace heaplab::apps {

namespace {

/// splitmix64: a small, well-mixed generator; the same draws on every machine.
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z               = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z               = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi].
  std::uint32_t uniform(std::uint32_t lo, std::uint32_t hi) {
    return lo + static_cast<std::uint32_t>(next() % (std::uint64_t{hi} - lo + 1));
  }
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Log-uniform in [lo, hi] (lo > 0), rounded to 4 significant digits so that the printed
  /// option replays the same value.
  double log_uniform(double lo, double hi) {
    double const v = lo * std::pow(hi / lo, unit());
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", v);
    return std::stod(text);
  }
  /// A grid side in [lo, hi]: with probability 1/4 a prime, else uniform.
  std::uint32_t side(std::uint32_t lo, std::uint32_t hi) {
    std::uint32_t n = uniform(lo, hi);
    if (next() % 4 != 0) return n;
    while (n < hi && !prime(n)) ++n;
    while (n > lo && !prime(n)) --n;
    return n;
  }

 private:
  static bool prime(std::uint32_t n) {
    if (n < 2) return false;
    for (std::uint32_t d = 2; d * d <= n; ++d)
      if (n % d == 0) return false;
    return true;
  }
  std::uint64_t state_;
};

/// The words of the options drawn so far ("--width 61 --height 37").
class Words {
 public:
  Words(Given const& given) : given_(given) {}
  /// Sets `field` to `value` and records "option value", unless the command line gave `option`.
  template <class F, class T>
  void set(char const* option, F& field, T const& value) {
    if (given_(option)) return;
    field = static_cast<F>(value);
    std::ostringstream v;
    v << field;
    text_ += (text_.empty() ? "" : " ") + std::string(option) + " " + v.str();
  }
  std::string const& text() const { return text_; }

 private:
  Given const& given_;
  std::string text_;
};

using R = ShapeRanges;

}  // namespace

std::string draw_gen_ca_shape(std::uint64_t seed, Given const& given, gen_ca::GenCaOptions& o) {
  Draw d(seed);
  Words w(given);
  // Rules of every kind: the paper's (255 states), Life, one-generation dying (Brian's Brain),
  // HighLife, Star Wars (4 states), a replicator with many births.
  static char const* const kRules[] = {
      "burst", "life", "/2/3", "23/36/2", "345/2/4", "1357/1357/3"};
  std::uint32_t const width  = d.side(R::kMinSide, R::kMaxSide);
  std::uint32_t const height = d.side(R::kMinSide, R::kMaxSide);
  double const density       = d.log_uniform(R::kMinDensity, R::kMaxDensity);
  char const* const rule     = kRules[d.uniform(0, sizeof kRules / sizeof kRules[0] - 1)];
  w.set("--width", o.width, width);
  w.set("--height", o.height, height);
  w.set("--density", o.density, density);
  w.set("--rule", o.rule, rule);
  w.set("--seed", o.seed, d.next() % 1000000);
  return w.text();
}

std::string draw_game_of_life_shape(std::uint64_t seed,
                                    Given const& given,
                                    game_of_life::GameOfLifeOptions& o) {
  Draw d(seed);
  Words w(given);
  // Two-state rules: Life, HighLife (births on 6 too), Seeds (no survival: everything dies each
  // generation), Day & Night (dense births and survivals), Life without Death (nothing dies).
  static char const* const kRules[] = {"life", "23/36/2", "/2/2", "34678/3678/2", "012345678/3/2"};
  std::uint32_t const width         = d.side(R::kMinSide, R::kMaxSide);
  std::uint32_t const height        = d.side(R::kMinSide, R::kMaxSide);
  double const density              = d.log_uniform(R::kMinDensity, R::kMaxDensity);
  char const* const rule            = kRules[d.uniform(0, sizeof kRules / sizeof kRules[0] - 1)];
  w.set("--width", o.width, width);
  w.set("--height", o.height, height);
  w.set("--density", o.density, density);
  w.set("--rule", o.rule, rule);
  w.set("--seed", o.seed, d.next() % 1000000);
  return w.text();
}

std::string draw_sugarscape_shape(std::uint64_t seed,
                                  Given const& given,
                                  sugarscape::SugarscapeOptions& o) {
  Draw d(seed);
  Words w(given);
  std::uint32_t const width  = d.side(R::kMinSide, R::kMaxSide);
  std::uint32_t const height = d.side(R::kMinSide, R::kMaxSide);
  double const density       = d.log_uniform(R::kMinDensity, R::kMaxDensity);
  w.set("--width", o.width, width);
  w.set("--height", o.height, height);
  w.set("--density", o.density, density);
  w.set("--seed", o.seed, d.next() % 1000000);
  return w.text();
}

std::string draw_traffic_shape(std::uint64_t seed, Given const& given, traffic::TrafficOptions& o) {
  Draw d(seed);
  Words w(given);
  std::uint32_t const width  = d.side(R::kMinJunctions, R::kMaxJunctions);
  std::uint32_t const height = d.side(R::kMinJunctions, R::kMaxJunctions);
  double const spawn         = d.log_uniform(R::kMinSpawnRate, R::kMaxSpawnRate);
  double const slow          = d.log_uniform(0.01, 0.5);
  w.set("--width", o.width, width);
  w.set("--height", o.height, height);
  w.set("--spawn-rate", o.spawn_rate, spawn);
  w.set("--slow", o.slow, slow);
  w.set("--seed", o.seed, d.next() % 1000000);
  return w.text();
}

std::string draw_barnes_hut_shape(std::uint64_t seed,
                                  Given const& given,
                                  barnes_hut::BarnesHutOptions& o) {
  Draw d(seed);
  Words w(given);
  std::uint32_t const bodies = d.uniform(R::kMinBodies, R::kMaxBodies);
  double const theta         = d.uniform(0, 8) / 10.0;  // 0 (the direct sum) .. 0.8
  w.set("--bodies", o.bodies, bodies);
  w.set("--theta", o.theta, theta);
  w.set("--seed", o.seed, d.next() % 1000000);
  return w.text();
}

std::string draw_nbody_shape(std::uint64_t seed, Given const& given, nbody::NbodyOptions& o) {
  Draw d(seed);
  Words w(given);
  std::uint32_t const bodies = d.uniform(R::kMinBodies, R::kMaxBodies);
  double const radius        = d.log_uniform(R::kMinMergeRadius, R::kMaxMergeRadius);
  w.set("--bodies", o.bodies, bodies);
  if (o.collision) w.set("--merge-radius", o.merge_radius, radius);
  w.set("--seed", o.seed, d.next() % 1000000);
  return w.text();
}

std::string draw_wa_tor_shape(std::uint64_t seed, Given const& given, wa_tor::WaTorOptions& o) {
  Draw d(seed);
  Words w(given);
  std::uint32_t const width  = d.side(R::kMinSide, R::kMaxSide);
  std::uint32_t const height = d.side(R::kMinSide, R::kMaxSide);
  double const fish          = d.log_uniform(R::kMinDensity, R::kMaxDensity);
  // Sharks: sparse to dense within what the fish leave free.
  double const sharks = d.log_uniform(R::kMinDensity / 2, std::max(0.02, (1.0 - fish) / 2));
  w.set("--width", o.width, width);
  w.set("--height", o.height, height);
  w.set("--fish-density", o.fish_density, fish);
  w.set("--shark-density", o.shark_density, sharks);
  w.set("--seed", o.seed, d.next() % 1000000);
  return w.text();
}

std::string draw_structure_shape(std::uint64_t seed,
                                 Given const& given,
                                 structure::StructureOptions& o) {
  Draw d(seed);
  Words w(given);
  std::uint32_t const width  = d.side(R::kMinMeshSide, R::kMaxMeshSide);
  std::uint32_t const height = d.side(R::kMinMeshSide, R::kMaxMeshSide);
  bool const pull            = d.next() % 2 == 0;
  double const threshold     = d.log_uniform(0.02, 0.2);
  double const load          = d.log_uniform(0.02, 0.5);
  double const shrink        = d.log_uniform(0.0005, 0.01);
  w.set("--width", o.width, width);
  w.set("--height", o.height, height);
  w.set("--scenario", o.scenario, pull ? "pull" : "shrink");
  w.set("--threshold", o.threshold, threshold);
  if (o.scenario == "pull") w.set("--load", o.load, load);
  if (o.scenario == "shrink") w.set("--shrink", o.shrink, shrink);
  w.set("--seed", o.seed, d.next() % 1000000);
  return w.text();
}

}  // namespace heaplab::apps
