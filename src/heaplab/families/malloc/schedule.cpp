// The malloc family's schedules: limits and the work budget, step lines, request sizes and the
// strict JSON form (schedule.hpp).
#include "heaplab/families/malloc/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <variant>

#include "heaplab/schedule/choice.hpp"
#include "heaplab/schedule/strict_json.hpp"

namespace heaplab::malloc_family {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

namespace {

using namespace schedule::strict;  // the strict JSON readers (strict_json.hpp)
using Obj = StrictObject;

/// Salts of the choices a wave makes from its seed (ASCII "mask", "size").
constexpr std::uint64_t kSaltMask = 0x6d61736b;
constexpr std::uint64_t kSaltSize = 0x73697a65;

template <class E>
struct Names {
  E value;
  char const* name;
};
constexpr Names<SizeDist> kDists[] = {
    {SizeDist::fixed, "fixed"}, {SizeDist::mixed, "mixed"}, {SizeDist::heavy, "heavy"}};
constexpr Names<Lanes> kLanes[]           = {{Lanes::per_lane, "per_lane"},
                                             {Lanes::warp_uniform, "warp_uniform"}};
constexpr Names<Divergence> kDivergence[] = {{Divergence::all, "all"},
                                             {Divergence::alternate, "alternate"},
                                             {Divergence::random_mask, "random_mask"}};
constexpr Names<Select> kSelects[]        = {{Select::all, "all"},
                                             {Select::random, "random"},
                                             {Select::size, "size"},
                                             {Select::oldest, "oldest"},
                                             {Select::warp, "warp"}};

template <class E, std::size_t N>
char const* name_of(Names<E> const (&names)[N], E v) {
  for (auto const& n : names)
    if (n.value == v) return n.name;
  return "?";
}
template <class E, std::size_t N>
std::optional<E> value_of(Names<E> const (&names)[N], std::string const& s) {
  for (auto const& n : names)
    if (s == n.name) return n.value;
  return std::nullopt;
}
template <class E, std::size_t N>
std::vector<std::string> all_names(Names<E> const (&names)[N]) {
  std::vector<std::string> out;
  for (auto const& n : names) out.emplace_back(n.name);
  return out;
}

void check_range(std::uint64_t v, std::uint64_t lo, std::uint64_t hi, std::string const& path) {
  if (v < lo) fail(path, "must be at least " + std::to_string(lo) + ", got " + std::to_string(v));
  if (v > hi) fail(path, "must be at most " + std::to_string(hi) + ", got " + std::to_string(v));
}

std::uint64_t read_bounded(Obj const& o,
                           std::string const& key,
                           std::uint64_t lo,
                           std::uint64_t hi) {
  std::uint64_t const v = as_u64(o.at(key), o.path(key));
  check_range(v, lo, hi, o.path(key));
  return v;
}

void validate_alloc(AllocWave const& a, std::string const& path) {
  check_range(a.threads, 1, kMaxThreads, path + ".threads");
  check_range(a.per_thread, 1, kMaxPerThread, path + ".per_thread");
  check_range(a.min, 1, kMaxRequest, path + ".min");
  check_range(a.max, a.min, kMaxRequest, path + ".max");
  if (a.sizes == SizeDist::fixed && a.max != a.min)
    fail(path + ".max", "must equal min for fixed sizes");
}

void validate_fill(FillWave const& f, std::string const& path) {
  check_range(f.threads, 1, kMaxThreads, path + ".threads");
  check_range(f.size, 1, kMaxRequest, path + ".size");
  check_range(f.max_per_thread, 1, kMaxFillPerThread, path + ".max_per_thread");
}

void validate_free(FreeWave const& f, std::string const& path) {
  if (!(f.fraction >= 0 && f.fraction <= 1))
    fail(path + ".fraction", "must be in [0, 1], got " + std::to_string(f.fraction));
  check_range(f.min, 1, kMaxRequest, path + ".min");
  check_range(f.max, f.min, kMaxRequest, path + ".max");
}

ordered step_to_json(MallocStep const& step) {
  if (auto const* a = std::get_if<AllocWave>(&step))
    return {{"op", "alloc"},
            {"threads", a->threads},
            {"per_thread", a->per_thread},
            {"sizes", to_string(a->sizes)},
            {"min", a->min},
            {"max", a->max},
            {"lanes", to_string(a->lanes)},
            {"divergence", to_string(a->divergence)},
            {"seed", a->seed}};
  if (auto const* f = std::get_if<FillWave>(&step))
    return {{"op", "fill"},
            {"threads", f->threads},
            {"size", f->size},
            {"max_per_thread", f->max_per_thread}};
  if (auto const* f = std::get_if<FreeWave>(&step)) {
    ordered j = {{"op", "free"}, {"select", to_string(f->select)}};
    if (f->select == Select::random || f->select == Select::oldest) j["fraction"] = f->fraction;
    if (f->select == Select::size) {
      j["min"] = f->min;
      j["max"] = f->max;
    }
    if (f->select == Select::random || f->select == Select::warp) j["seed"] = f->seed;
    return j;
  }
  return {{"op", "touch"}};
}

AllocWave read_alloc(json const& j, std::string const& path) {
  Obj const o(
      j,
      path,
      {"op", "threads", "per_thread", "sizes", "min", "max", "lanes", "divergence", "seed"});
  AllocWave a;
  a.threads    = static_cast<std::uint32_t>(read_bounded(o, "threads", 1, kMaxThreads));
  a.per_thread = static_cast<std::uint32_t>(read_bounded(o, "per_thread", 1, kMaxPerThread));
  a.sizes =
      as_enum<SizeDist>(o.at("sizes"), o.path("sizes"), size_dist_from_string, all_names(kDists));
  a.min = read_bounded(o, "min", 1, kMaxRequest);
  a.max = o.find("max") ? read_bounded(o, "max", a.min, kMaxRequest) : a.min;
  if (auto const* l = o.find("lanes"))
    a.lanes = as_enum<Lanes>(*l, o.path("lanes"), lanes_from_string, all_names(kLanes));
  if (auto const* d = o.find("divergence"))
    a.divergence = as_enum<Divergence>(
        *d, o.path("divergence"), divergence_from_string, all_names(kDivergence));
  if (auto const* s = o.find("seed")) a.seed = as_u64(*s, o.path("seed"));
  validate_alloc(a, path);
  return a;
}

FillWave read_fill(json const& j, std::string const& path) {
  Obj const o(j, path, {"op", "threads", "size", "max_per_thread"});
  FillWave f;
  f.threads = static_cast<std::uint32_t>(read_bounded(o, "threads", 1, kMaxThreads));
  f.size    = read_bounded(o, "size", 1, kMaxRequest);
  f.max_per_thread =
      static_cast<std::uint32_t>(read_bounded(o, "max_per_thread", 1, kMaxFillPerThread));
  return f;
}

FreeWave read_free(json const& j, std::string const& path) {
  Obj const o(j, path, {"op", "select", "fraction", "min", "max", "seed"});
  FreeWave f;
  f.select =
      as_enum<Select>(o.at("select"), o.path("select"), select_from_string, all_names(kSelects));
  bool const uses_fraction = f.select == Select::random || f.select == Select::oldest;
  bool const uses_sizes    = f.select == Select::size;
  bool const uses_seed     = f.select == Select::random || f.select == Select::warp;
  auto refuse              = [&](char const* key, bool used) {
    if (!used && o.find(key))
      fail(o.path(key), std::string("not used by select \"") + to_string(f.select) + "\"");
  };
  refuse("fraction", uses_fraction);
  refuse("min", uses_sizes);
  refuse("max", uses_sizes);
  refuse("seed", uses_seed);
  if (uses_fraction) f.fraction = as_unit(o.at("fraction"), o.path("fraction"));
  if (uses_sizes) {
    f.min = read_bounded(o, "min", 1, kMaxRequest);
    f.max = read_bounded(o, "max", f.min, kMaxRequest);
  }
  if (uses_seed) f.seed = as_u64(o.at("seed"), o.path("seed"));
  return f;
}

MallocStep read_step(json const& j, std::string const& path) {
  if (!j.is_object()) fail(path, "expected a step object, got " + show(j));
  auto const op = j.find("op");
  if (op == j.end()) fail(path + ".op", "missing required field (alloc, fill, free or touch)");
  std::string const name = as_string(*op, path + ".op");
  if (name == "alloc") return read_alloc(j, path);
  if (name == "fill") return read_fill(j, path);
  if (name == "free") return read_free(j, path);
  if (name == "touch") {
    Obj const o(j, path, {"op"});
    return Touch{};
  }
  fail(path + ".op", "unknown op '" + name + "'; expected one of: alloc, fill, free, touch");
}

}  // namespace

char const* to_string(SizeDist d) { return name_of(kDists, d); }
char const* to_string(Lanes l) { return name_of(kLanes, l); }
char const* to_string(Divergence d) { return name_of(kDivergence, d); }
char const* to_string(Select s) { return name_of(kSelects, s); }
std::optional<SizeDist> size_dist_from_string(std::string const& s) { return value_of(kDists, s); }
std::optional<Lanes> lanes_from_string(std::string const& s) { return value_of(kLanes, s); }
std::optional<Divergence> divergence_from_string(std::string const& s) {
  return value_of(kDivergence, s);
}
std::optional<Select> select_from_string(std::string const& s) { return value_of(kSelects, s); }

std::uint64_t step_requests(MallocStep const& step) {
  if (auto const* a = std::get_if<AllocWave>(&step))
    return std::uint64_t{a->threads} * a->per_thread;
  if (auto const* f = std::get_if<FillWave>(&step))
    return std::uint64_t{f->threads} * (f->max_per_thread + 1ull);
  return 0;
}

std::uint64_t wave_bytes(AllocWave const& w) {
  std::uint64_t bytes = 0;
  for (std::uint32_t t = 0; t < w.threads; ++t)
    for (std::uint32_t k = 0; k < w.per_thread; ++k) bytes += request_size(w, t, k);
  return bytes;
}

std::optional<std::uint64_t> demand_bytes(MallocSchedule const& s) {
  std::uint64_t bytes = 0;
  for (MallocStep const& step : s.steps) {
    if (std::holds_alternative<FillWave>(step)) return std::nullopt;
    if (auto const* a = std::get_if<AllocWave>(&step)) bytes += wave_bytes(*a);
  }
  return bytes;
}

void validate(MallocSchedule const& s) {
  check_range(s.pool, kMinPool, kMaxPool, "pool");
  if (s.steps.size() > kMaxSteps) fail("steps", "at most " + std::to_string(kMaxSteps) + " steps");
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    std::string const path = index_path("steps", i);
    if (auto const* a = std::get_if<AllocWave>(&s.steps[i])) validate_alloc(*a, path);
    if (auto const* f = std::get_if<FillWave>(&s.steps[i])) validate_fill(*f, path);
    if (auto const* f = std::get_if<FreeWave>(&s.steps[i])) validate_free(*f, path);
    std::uint64_t const n = step_requests(s.steps[i]);
    if (n > kMaxWaveRequests)
      fail(path,
           "a wave of " + std::to_string(n) + " requests; the work budget allows " +
               std::to_string(kMaxWaveRequests) + " per wave");
    total += n;
    if (total > kMaxScheduleRequests)
      fail(path,
           "the schedule's requests pass the work budget of " +
               std::to_string(kMaxScheduleRequests) + " here");
  }
}

std::string step_name(MallocStep const& step) {
  static char const* const names[] = {"alloc", "fill", "free", "touch"};
  return names[step.index()];
}

std::string describe(MallocStep const& step) {
  if (auto const* a = std::get_if<AllocWave>(&step)) {
    std::string sizes = std::string(to_string(a->sizes)) + "[" + std::to_string(a->min);
    if (a->sizes != SizeDist::fixed) sizes += "," + std::to_string(a->max);
    return "alloc threads=" + std::to_string(a->threads) +
           " per_thread=" + std::to_string(a->per_thread) + " sizes=" + sizes +
           "] lanes=" + to_string(a->lanes) + " divergence=" + to_string(a->divergence) +
           " seed=" + std::to_string(a->seed);
  }
  if (auto const* f = std::get_if<FillWave>(&step))
    return "fill threads=" + std::to_string(f->threads) + " size=" + std::to_string(f->size) +
           " max_per_thread=" + std::to_string(f->max_per_thread);
  if (auto const* f = std::get_if<FreeWave>(&step)) {
    std::string out = std::string("free select=") + to_string(f->select);
    if (f->select == Select::random || f->select == Select::oldest)
      out += " fraction=" + json(f->fraction).dump();
    if (f->select == Select::size)
      out += " sizes=[" + std::to_string(f->min) + "," + std::to_string(f->max) + "]";
    if (f->select == Select::random || f->select == Select::warp)
      out += " seed=" + std::to_string(f->seed);
    return out;
  }
  return "touch";
}

std::uint64_t request_size(AllocWave const& w, std::uint32_t t, std::uint32_t k) {
  std::uint32_t const lane = t % 32, warp = t / 32;
  switch (w.divergence) {
    case Divergence::all:
      break;
    case Divergence::alternate:
      if (lane % 2 != 0) return 0;
      break;
    case Divergence::random_mask:
      if (((schedule::mix(w.seed, warp, kSaltMask) >> lane) & 1u) == 0) return 0;
      break;
  }
  if (w.sizes == SizeDist::fixed) return w.min;
  std::uint64_t const who = w.lanes == Lanes::per_lane ? t : warp;
  std::uint64_t const h   = schedule::mix(w.seed, who * kMaxPerThread + k, kSaltSize);
  if (w.sizes == SizeDist::mixed) return w.min + h % (w.max - w.min + 1);
  // heavy: log-uniform in [min, max]: min x (max / min)^u.
  double const u = schedule::unit_interval(h);
  double const v = static_cast<double>(w.min) *
                   std::pow(static_cast<double>(w.max) / static_cast<double>(w.min), u);
  return std::clamp(static_cast<std::uint64_t>(v), w.min, w.max);
}

ordered to_json(MallocSchedule const& s) {
  ordered j     = {{"format", kMallocFormatName},
                   {"version", kMallocFormatVersion},
                   {"description", s.description},
                   {"pool", s.pool}};
  ordered steps = ordered::array();
  for (auto const& step : s.steps) steps.push_back(step_to_json(step));
  j["steps"] = std::move(steps);
  return j;
}

MallocSchedule malloc_from_json(json const& document) {
  check_format(document, "a malloc schedule", kMallocFormatName, kMallocFormatVersion);
  Obj const o(document, "", {"format", "version", "description", "pool", "steps"});
  MallocSchedule s;
  if (auto const* d = o.find("description")) s.description = as_string(*d, "description");
  s.pool            = read_bounded(o, "pool", kMinPool, kMaxPool);
  json const& steps = as_array(o.at("steps"), "steps");
  if (steps.size() > kMaxSteps) fail("steps", "at most " + std::to_string(kMaxSteps) + " steps");
  for (std::size_t i = 0; i < steps.size(); ++i)
    s.steps.push_back(read_step(steps[i], index_path("steps", i)));
  validate(s);
  return s;
}

}  // namespace heaplab::malloc_family
