// Interleaving schedules: validation and their strict JSON form (schedule.hpp).
#include "heaplab/families/interleaving/schedule.hpp"

#include "heaplab/explore/explore.hpp"
#include "heaplab/explore/strategy.hpp"
#include "heaplab/schedule/schedule.hpp"
#include "heaplab/schedule/strict_json.hpp"

namespace heaplab::interleaving_family {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

namespace {

using schedule::schedule_error;
using namespace schedule::strict;  // the strict JSON readers (strict_json.hpp)
using Obj = StrictObject;

std::vector<std::string> const kModelNames    = {"sequential_consistency", "release_acquire"};
std::vector<std::string> const kStrategyNames = {"random", "pct"};

std::optional<SeededStrategy::Name> parse_strategy_name(std::string const& s) {
  if (s == "random") return SeededStrategy::Name::random;
  if (s == "pct") return SeededStrategy::Name::pct;
  return std::nullopt;
}

char const* to_string(SeededStrategy::Name n) {
  return n == SeededStrategy::Name::random ? "random" : "pct";
}

ordered strategy_to_json(SeededStrategy const& s) {
  ordered j = {{"name", to_string(s.name)}, {"seed", s.seed}};
  if (s.name == SeededStrategy::Name::pct) {
    j["depth"]         = s.depth;
    j["step_estimate"] = s.step_estimate;
  }
  return j;
}

ordered decision_to_json(Decision const& d) {
  return {{d.kind == Decision::Kind::thread ? "thread" : "read", d.value}};
}

SeededStrategy read_strategy(json const& j, std::string const& path) {
  if (!j.is_object()) fail(path, "expected a strategy object, got " + show(j));
  auto const name = j.find("name");
  if (name == j.end()) fail(path + ".name", "missing required field (\"random\" or \"pct\")");
  SeededStrategy s;
  s.name = as_enum(*name, path + ".name", &parse_strategy_name, kStrategyNames);
  if (s.name == SeededStrategy::Name::random) {
    Obj const o(j, path, {"name", "seed"});
    s.seed = as_u64(o.at("seed"), o.path("seed"));
    return s;
  }
  Obj const o(j, path, {"name", "seed", "depth", "step_estimate"});
  s.seed          = as_u64(o.at("seed"), o.path("seed"));
  s.depth         = as_u32(o.at("depth"), o.path("depth"), kMaxPctDepth);
  s.step_estimate = as_u64(o.at("step_estimate"), o.path("step_estimate"));
  return s;
}

Decision read_decision(json const& j, std::string const& path) {
  if (!j.is_object() || j.size() != 1)
    fail(path, "expected {\"thread\": t} or {\"read\": k}, got " + show(j));
  Obj const o(j, path, {"thread", "read"});
  if (auto const* t = o.find("thread"))
    return {Decision::Kind::thread, as_u32(*t, o.path("thread"), kMaxThread)};
  return {Decision::Kind::read, as_u32(o.at("read"), o.path("read"), explore::kReadChoice - 1)};
}

}  // namespace

std::uint32_t Decision::encoded() const {
  return kind == Kind::thread ? value : (explore::kReadChoice | value);
}

Decision Decision::decode(std::uint32_t chosen) {
  if ((chosen & explore::kReadChoice) != 0) return {Kind::read, chosen & ~explore::kReadChoice};
  return {Kind::thread, chosen};
}

bool operator==(InterleavingSchedule const& a, InterleavingSchedule const& b) {
  return a.description == b.description && a.workload == b.workload &&
         a.workload_seed == b.workload_seed && a.memory_model == b.memory_model &&
         a.step_budget == b.step_budget && a.stale_read_bound == b.stale_read_bound &&
         a.strategy == b.strategy && a.steps == b.steps;
}

std::optional<explore::MemoryModel> parse_memory_model(std::string const& name) {
  if (name == "sequential_consistency") return explore::MemoryModel::sequential_consistency;
  if (name == "release_acquire") return explore::MemoryModel::release_acquire;
  return std::nullopt;
}

void validate(InterleavingSchedule const& s) {
  if (s.step_budget < 1 || s.step_budget > kMaxStepBudget)
    throw schedule_error("step_budget", "must be in 1.." + std::to_string(kMaxStepBudget));
  if (s.steps.size() > kMaxDecisions)
    throw schedule_error("steps", "at most " + std::to_string(kMaxDecisions) + " decisions");
  if (s.strategy && !s.steps.empty())
    throw schedule_error("steps",
                         "a schedule with a strategy has no steps (the strategy chooses every "
                         "decision); give either \"strategy\" or the decisions");
  if (s.strategy && s.strategy->name == SeededStrategy::Name::pct &&
      (s.strategy->depth < 1 || s.strategy->depth > kMaxPctDepth || s.strategy->step_estimate < 1))
    throw schedule_error(
        "strategy",
        "pct needs depth 1.." + std::to_string(kMaxPctDepth) + " and step_estimate >= 1");
  bool const weak = s.memory_model == explore::MemoryModel::release_acquire;
  if (s.stale_read_bound && !weak)
    throw schedule_error("stale_read_bound", "only with \"memory_model\": \"release_acquire\"");
  if (s.stale_read_bound && s.strategy)
    throw schedule_error("stale_read_bound",
                         "bounds the stale reads of explicit decisions, not of a strategy");
  std::uint32_t stale = 0;
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    Decision const& d      = s.steps[i];
    std::string const path = "steps[" + std::to_string(i) + "]";
    if (d.kind == Decision::Kind::read && !weak)
      throw schedule_error(path + ".read",
                           "read decisions exist only with \"memory_model\": \"release_acquire\"");
    if (d.kind == Decision::Kind::thread && d.value > kMaxThread)
      throw schedule_error(path + ".thread", "at most " + std::to_string(kMaxThread));
    if (d.kind == Decision::Kind::read && d.value >= explore::kReadChoice)
      throw schedule_error(path + ".read", "out of range");
    if (d.kind == Decision::Kind::read && d.value > 0 && s.stale_read_bound &&
        ++stale > *s.stale_read_bound)
      throw schedule_error(path + ".read",
                           "more loads read an older store than stale_read_bound " +
                               std::to_string(*s.stale_read_bound) + " allows");
  }
}

ordered to_json(InterleavingSchedule const& s) {
  ordered j = {{"format", kFormatName}, {"version", kFormatVersion}};
  if (!s.description.empty()) j["description"] = s.description;
  j["workload"]     = {{"kind", workloads::to_string(s.workload)}, {"seed", s.workload_seed}};
  j["memory_model"] = explore::to_string(s.memory_model);
  j["step_budget"]  = s.step_budget;
  if (s.stale_read_bound) j["stale_read_bound"] = *s.stale_read_bound;
  if (s.strategy) j["strategy"] = strategy_to_json(*s.strategy);
  ordered steps = ordered::array();
  for (Decision const& d : s.steps) steps.push_back(decision_to_json(d));
  j["steps"] = std::move(steps);
  return j;
}

InterleavingSchedule from_json(json const& document) {
  check_format(document, "an interleaving schedule", kFormatName, kFormatVersion);
  Obj const o(document,
              "",
              {"format",
               "version",
               "description",
               "workload",
               "memory_model",
               "step_budget",
               "stale_read_bound",
               "strategy",
               "steps"});
  InterleavingSchedule s;
  if (auto const* d = o.find("description")) s.description = as_string(*d, "description");
  Obj const w(o.at("workload"), "workload", {"kind", "seed"});
  s.workload      = as_enum(w.at("kind"),
                       w.path("kind"),
                       &workloads::parse_workload_kind,
                       workloads::workload_kind_names());
  s.workload_seed = as_u64(w.at("seed"), w.path("seed"));
  s.memory_model  = as_enum(o.at("memory_model"), "memory_model", &parse_memory_model, kModelNames);
  s.step_budget   = as_u64(o.at("step_budget"), "step_budget");
  if (auto const* b = o.find("stale_read_bound"))
    s.stale_read_bound = as_u32(*b, "stale_read_bound");
  if (auto const* st = o.find("strategy")) s.strategy = read_strategy(*st, "strategy");
  json const& steps = as_array(o.at("steps"), "steps");
  if (steps.size() > kMaxDecisions)
    fail("steps", "at most " + std::to_string(kMaxDecisions) + " decisions");
  s.steps.reserve(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i)
    s.steps.push_back(read_decision(steps[i], index_path("steps", i)));
  validate(s);
  return s;
}

std::string describe(SeededStrategy const& s) {
  if (s.name == SeededStrategy::Name::random) return explore::RandomStrategy(s.seed).describe();
  return explore::PctStrategy(s.seed, s.depth, s.step_estimate).describe();
}

std::string describe(Decision const& d) {
  if (d.kind == Decision::Kind::thread) return "T" + std::to_string(d.value);
  return "read r" + std::to_string(d.value) + " (skips " + std::to_string(d.value) +
         (d.value == 1 ? " newer store)" : " newer stores)");
}

std::vector<std::uint32_t> encoded(std::vector<Decision> const& steps) {
  std::vector<std::uint32_t> out;
  out.reserve(steps.size());
  for (Decision const& d : steps) out.push_back(d.encoded());
  return out;
}

std::string schedule_text(std::vector<Decision> const& steps) {
  return explore::format_schedule(encoded(steps));
}

}  // namespace heaplab::interleaving_family
