// Strict reading and canonical writing of random-walk schedules (rw_json.hpp).
#include "heaplab/schedule/rw_json.hpp"

#include <string>
#include <vector>

#include "heaplab/schedule/json.hpp"
#include "heaplab/schedule/strict_json.hpp"

namespace heaplab::schedule {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

namespace {

using namespace strict;  // the strict JSON readers (strict_json.hpp)
using Obj = StrictObject;

std::vector<std::string> const kAlgorithmNames = {"rw", "rw-bm", "corw", "rw-malloc"};
std::vector<std::string> const kLaneNames      = {"all", "every_kth", "random_subset"};
std::vector<std::string> const kSizeNames      = {"fixed", "cycle", "uniform"};
std::vector<std::string> const kSelectNames    = {"all", "fraction", "oldest"};

ordered pool_to_json(RwPool const& p) {
  ordered j = {{"pages", p.num_pages},
               {"page_bytes", p.page_bytes},
               {"word_bits", p.word_bits},
               {"max_steps", p.max_steps}};
  if (p.pretaken.pages)
    j["pretaken"] = {{"pages", *p.pretaken.pages}};
  else if (p.pretaken.count > 0 || p.pretaken.seed != 0)
    j["pretaken"] = {{"count", p.pretaken.count}, {"seed", p.pretaken.seed}};
  return j;
}

ordered alloc_to_json(RwAllocWave const& a) {
  ordered j     = {{"op", "alloc"},
                   {"algorithm", to_string(a.algorithm)},
                   {"threads", a.threads},
                   {"block_threads", a.block_threads},
                   {"seed", a.seed}};
  ordered lanes = {{"pattern", to_string(a.lanes)}};
  if (a.lanes == RwLanes::every_kth) lanes["k"] = a.k, lanes["offset"] = a.offset;
  if (a.lanes == RwLanes::random_subset) lanes["seed"] = a.lane_seed;
  j["lanes"]    = std::move(lanes);
  ordered sizes = {{"pattern", to_string(a.sizes)}};
  if (a.sizes == RwSizes::fixed) sizes["n"] = a.n;
  if (a.sizes == RwSizes::cycle) sizes["list"] = a.size_list;
  if (a.sizes == RwSizes::uniform) sizes["nmax"] = a.nmax, sizes["seed"] = a.size_seed;
  j["sizes"] = std::move(sizes);
  return j;
}

ordered free_to_json(RwFreeWave const& f) {
  ordered select = {{"pattern", to_string(f.select)}};
  if (f.select == RwFreeSelect::fraction) select["fraction"] = f.fraction, select["seed"] = f.seed;
  if (f.select == RwFreeSelect::oldest) select["count"] = f.count;
  return {{"op", "free"}, {"select", std::move(select)}};
}

RwPretaken read_pretaken(json const& j, std::string const& path) {
  Obj const o(j, path, {"count", "seed", "pages"});
  RwPretaken p;
  if (auto const* pages = o.find("pages")) {
    if (o.find("count") || o.find("seed"))
      fail(path, "give either \"pages\" or \"count\" and \"seed\", not both");
    json const& arr = as_array(*pages, o.path("pages"));
    if (arr.size() > kRwMaxPages)
      fail(o.path("pages"), "at most " + std::to_string(kRwMaxPages) + " pages");
    p.pages.emplace();
    for (std::size_t i = 0; i < arr.size(); ++i)
      p.pages->push_back(as_u32(arr[i], index_path(o.path("pages"), i)));
    return p;
  }
  p.count = as_u32(o.at("count"), o.path("count"), kRwMaxPages);
  if (auto const* s = o.find("seed")) p.seed = as_u64(*s, o.path("seed"));
  return p;
}

RwPool read_pool(json const& j, std::string const& path) {
  Obj const o(j, path, {"pages", "page_bytes", "word_bits", "max_steps", "pretaken"});
  RwPool p;
  p.num_pages = as_u32(o.at("pages"), o.path("pages"), kRwMaxPages);
  if (auto const* x = o.find("page_bytes")) p.page_bytes = as_u64(*x, o.path("page_bytes"));
  if (auto const* x = o.find("word_bits")) p.word_bits = as_u32(*x, o.path("word_bits"));
  if (auto const* x = o.find("max_steps"))
    p.max_steps = as_u32(*x, o.path("max_steps"), kRwMaxWalkSteps);
  if (auto const* x = o.find("pretaken")) p.pretaken = read_pretaken(*x, o.path("pretaken"));
  return p;
}

void read_lanes(json const& j, std::string const& path, RwAllocWave& a) {
  Obj const o(j, path, {"pattern", "k", "offset", "seed"});
  a.lanes = as_enum(o.at("pattern"), o.path("pattern"), &rw_lanes_from_string, kLaneNames);
  if (a.lanes == RwLanes::every_kth) {
    a.k = as_u32(o.at("k"), o.path("k"), 32);
    if (auto const* x = o.find("offset")) a.offset = as_u32(*x, o.path("offset"), 31);
  }
  if (a.lanes == RwLanes::random_subset) a.lane_seed = as_u64(o.at("seed"), o.path("seed"));
}

void read_sizes(json const& j, std::string const& path, RwAllocWave& a) {
  Obj const o(j, path, {"pattern", "n", "list", "nmax", "seed"});
  a.sizes = as_enum(o.at("pattern"), o.path("pattern"), &rw_sizes_from_string, kSizeNames);
  if (a.sizes == RwSizes::fixed) a.n = as_u32(o.at("n"), o.path("n"), kRwMaxRunPages);
  if (a.sizes == RwSizes::uniform) {
    a.nmax = as_u32(o.at("nmax"), o.path("nmax"), kRwMaxRunPages);
    if (auto const* x = o.find("seed")) a.size_seed = as_u64(*x, o.path("seed"));
  }
  if (a.sizes == RwSizes::cycle) {
    json const& arr = as_array(o.at("list"), o.path("list"));
    if (arr.size() > 32) fail(o.path("list"), "at most 32 sizes");
    for (std::size_t i = 0; i < arr.size(); ++i)
      a.size_list.push_back(as_u32(arr[i], index_path(o.path("list"), i), kRwMaxRunPages));
  }
}

RwStep read_step(json const& j, std::string const& path) {
  if (!j.is_object()) fail(path, "expected a step object, got " + show(j));
  auto const op = j.find("op");
  if (op == j.end()) fail(path + ".op", "missing required field (\"alloc\" or \"free\")");
  std::string const name = as_string(*op, path + ".op");
  if (name == "free") {
    Obj const o(j, path, {"op", "select"});
    Obj const s(o.at("select"), o.path("select"), {"pattern", "fraction", "seed", "count"});
    RwFreeWave f;
    f.select =
        as_enum(s.at("pattern"), s.path("pattern"), &rw_free_select_from_string, kSelectNames);
    if (f.select == RwFreeSelect::fraction) {
      f.fraction = as_unit(s.at("fraction"), s.path("fraction"));
      if (auto const* x = s.find("seed")) f.seed = as_u64(*x, s.path("seed"));
    }
    if (f.select == RwFreeSelect::oldest) f.count = as_u32(s.at("count"), s.path("count"));
    return f;
  }
  if (name != "alloc")
    fail(path + ".op", "unknown op '" + name + "'; expected one of: alloc, free");
  Obj const o(j, path, {"op", "algorithm", "threads", "block_threads", "seed", "lanes", "sizes"});
  RwAllocWave a;
  a.algorithm =
      as_enum(o.at("algorithm"), o.path("algorithm"), &rw_algorithm_from_string, kAlgorithmNames);
  a.threads = as_u32(o.at("threads"), o.path("threads"), kRwMaxThreads);
  if (auto const* x = o.find("block_threads"))
    a.block_threads = as_u32(*x, o.path("block_threads"), 1024);
  if (auto const* x = o.find("seed")) a.seed = as_u64(*x, o.path("seed"));
  if (auto const* x = o.find("lanes")) read_lanes(*x, o.path("lanes"), a);
  if (auto const* x = o.find("sizes")) read_sizes(*x, o.path("sizes"), a);
  return a;
}

}  // namespace

ordered to_json(RwSchedule const& s) {
  ordered j = {{"format", kRwFormatName}, {"version", kRwFormatVersion}};
  if (!s.description.empty()) j["description"] = s.description;
  j["pool"]     = pool_to_json(s.pool);
  ordered steps = ordered::array();
  for (auto const& step : s.steps)
    steps.push_back(std::holds_alternative<RwAllocWave>(step)
                        ? alloc_to_json(std::get<RwAllocWave>(step))
                        : free_to_json(std::get<RwFreeWave>(step)));
  j["steps"] = std::move(steps);
  return j;
}

RwSchedule rw_from_json(json const& document) {
  check_format(document, "a random-walk schedule", kRwFormatName, kRwFormatVersion);
  Obj const o(document, "", {"format", "version", "description", "pool", "steps"});
  RwSchedule s;
  if (auto const* d = o.find("description")) s.description = as_string(*d, "description");
  s.pool            = read_pool(o.at("pool"), "pool");
  json const& steps = as_array(o.at("steps"), "steps");
  if (steps.size() > kRwMaxWaves)
    fail("steps", "at most " + std::to_string(kRwMaxWaves) + " steps");
  for (std::size_t i = 0; i < steps.size(); ++i)
    s.steps.push_back(read_step(steps[i], index_path("steps", i)));
  validate(s);
  return s;
}

RwSchedule rw_from_document(std::string_view text, json const& document) {
  try {
    return rw_from_json(document);
  } catch (schedule_error const& e) {
    TextPosition const p = locate(text, e.path());
    throw schedule_error(e.path(), e.reason(), p.line, p.column);
  }
}

RwSchedule parse_rw(std::string_view text) { return rw_from_document(text, parse_document(text)); }

RwSchedule load_rw(std::filesystem::path const& file) {
  std::string const text = read_text_file(file);
  try {
    return parse_rw(text);
  } catch (schedule_error const& e) {
    throw schedule_error(e.path(), e.reason(), e.line(), e.column(), file.string());
  }
}

std::string dump(RwSchedule const& schedule) { return to_json(schedule).dump(2) + "\n"; }

}  // namespace heaplab::schedule
