// The bump family's schedules: limits, step lines, the threads' order and the strict JSON form
// (bump_schedule.hpp).
#include "bump_schedule.hpp"

#include <utility>

#include "heaplab/schedule/choice.hpp"
#include "heaplab/schedule/schedule.hpp"
#include "heaplab/schedule/strict_json.hpp"

namespace heaplab::bump_family {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

namespace {

using namespace schedule::strict;  // the strict JSON readers (strict_json.hpp)
using Obj = StrictObject;

/// Salt of wave_order's choices (the ASCII of "bump").
constexpr std::uint64_t kSaltOrder = 0x62756d70;

void check_range(std::uint64_t v, std::uint64_t lo, std::uint64_t hi, std::string const& path) {
  if (v < lo) fail(path, "must be at least " + std::to_string(lo) + ", got " + std::to_string(v));
  if (v > hi) fail(path, "must be at most " + std::to_string(hi) + ", got " + std::to_string(v));
}

void check_align(std::uint64_t align, std::string const& path) {
  check_range(align, 1, kMaxAlign, path);
  if ((align & (align - 1)) != 0)
    fail(path, "must be a power of two (1, 2, 4, ..., 4096), got " + std::to_string(align));
}

void check_sizes_count(std::size_t n, std::string const& path) {
  if (n == 0) fail(path, "must list at least one size");
  if (n > kMaxSizes) fail(path, "at most " + std::to_string(kMaxSizes) + " sizes");
}

void check_steps_count(std::size_t n) {
  if (n > kMaxSteps) fail("steps", "at most " + std::to_string(kMaxSteps) + " steps");
}

std::uint64_t read_bounded(json const& j,
                           std::string const& path,
                           std::uint64_t lo,
                           std::uint64_t hi) {
  std::uint64_t const v = as_u64(j, path);
  check_range(v, lo, hi, path);
  return v;
}

ordered alloc_to_json(BumpAlloc const& a) {
  ordered j = {{"op", "alloc"}, {"threads", a.threads}};
  if (a.sizes.size() == 1)
    j["size"] = a.sizes.front();
  else
    j["sizes"] = a.sizes;
  j["align"] = a.align;
  j["seed"]  = a.seed;
  return j;
}

BumpAlloc read_alloc(json const& j, std::string const& path) {
  Obj const o(j, path, {"op", "threads", "size", "sizes", "align", "seed"});
  BumpAlloc a;
  a.threads =
      static_cast<std::uint32_t>(read_bounded(o.at("threads"), o.path("threads"), 1, kMaxThreads));
  json const* size  = o.find("size");
  json const* sizes = o.find("sizes");
  if ((size != nullptr) == (sizes != nullptr))
    fail(path,
         "give exactly one of \"size\" (one size) and \"sizes\" (a list cycled over threads)");
  a.sizes.clear();
  if (size) {
    a.sizes.push_back(read_bounded(*size, o.path("size"), 1, kMaxArena));
  } else {
    json const& list = as_array(*sizes, o.path("sizes"));
    check_sizes_count(list.size(), o.path("sizes"));
    for (std::size_t i = 0; i < list.size(); ++i)
      a.sizes.push_back(read_bounded(list[i], index_path(o.path("sizes"), i), 1, kMaxArena));
  }
  if (json const* align = o.find("align")) {
    a.align = as_u64(*align, o.path("align"));
    check_align(a.align, o.path("align"));
  } else {
    a.align = 1;
  }
  if (json const* seed = o.find("seed")) a.seed = as_u64(*seed, o.path("seed"));
  return a;
}

BumpStep read_step(json const& j, std::string const& path) {
  if (!j.is_object()) fail(path, "expected a step object, got " + show(j));
  auto const op = j.find("op");
  if (op == j.end()) fail(path + ".op", "missing required field (\"alloc\" or \"free_all\")");
  std::string const name = as_string(*op, path + ".op");
  if (name == "free_all") {
    Obj const o(j, path, {"op"});
    return BumpFreeAll{};
  }
  if (name != "alloc")
    fail(path + ".op", "unknown op '" + name + "'; expected one of: alloc, free_all");
  return read_alloc(j, path);
}

}  // namespace

void validate(BumpSchedule const& s) {
  check_range(s.arena, 1, kMaxArena, "arena");
  check_steps_count(s.steps.size());
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    auto const* a = std::get_if<BumpAlloc>(&s.steps[i]);
    if (!a) continue;
    std::string const path = index_path("steps", i);
    check_range(a->threads, 1, kMaxThreads, path + ".threads");
    check_sizes_count(a->sizes.size(), path + ".sizes");
    for (std::size_t k = 0; k < a->sizes.size(); ++k)
      check_range(a->sizes[k], 1, kMaxArena, index_path(path + ".sizes", k));
    check_align(a->align, path + ".align");
  }
}

std::string step_name(BumpStep const& step) {
  return std::holds_alternative<BumpAlloc>(step) ? "alloc" : "free_all";
}

std::string describe(BumpStep const& step) {
  auto const* a = std::get_if<BumpAlloc>(&step);
  if (!a) return "free_all";
  std::string out = "alloc threads=" + std::to_string(a->threads);
  if (a->sizes.size() == 1) {
    out += " size=" + std::to_string(a->sizes.front());
  } else {
    out += " sizes=[";
    for (std::size_t i = 0; i < a->sizes.size(); ++i)
      out += (i ? "," : "") + std::to_string(a->sizes[i]);
    out += "]";
  }
  return out + " align=" + std::to_string(a->align) + " seed=" + std::to_string(a->seed);
}

std::vector<std::uint32_t> wave_order(BumpAlloc const& wave) {
  std::vector<std::uint32_t> order(wave.threads);
  for (std::uint32_t t = 0; t < wave.threads; ++t) order[t] = t;
  for (std::uint32_t i = wave.threads; i > 1; --i)
    std::swap(order[i - 1], order[schedule::pick(i, wave.seed, i, kSaltOrder)]);
  return order;
}

ordered to_json(BumpSchedule const& s) {
  ordered j     = {{"format", kBumpFormatName},
                   {"version", kBumpFormatVersion},
                   {"description", s.description},
                   {"arena", s.arena}};
  ordered steps = ordered::array();
  for (auto const& step : s.steps)
    steps.push_back(std::holds_alternative<BumpAlloc>(step)
                        ? alloc_to_json(std::get<BumpAlloc>(step))
                        : ordered{{"op", "free_all"}});
  j["steps"] = std::move(steps);
  return j;
}

BumpSchedule bump_from_json(json const& document) {
  check_format(document, "a bump schedule", kBumpFormatName, kBumpFormatVersion);
  Obj const o(document, "", {"format", "version", "description", "arena", "steps"});
  BumpSchedule s;
  if (auto const* d = o.find("description")) s.description = as_string(*d, "description");
  s.arena           = read_bounded(o.at("arena"), "arena", 1, kMaxArena);
  json const& steps = as_array(o.at("steps"), "steps");
  check_steps_count(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i)
    s.steps.push_back(read_step(steps[i], index_path("steps", i)));
  validate(s);
  return s;
}

std::string dump(BumpSchedule const& schedule) { return to_json(schedule).dump(2) + "\n"; }

}  // namespace heaplab::bump_family
