// The bump family (bump_family.hpp): its JSON form, showing, coverage and minimize reductions,
// and the registrations of the family and its runners bump-model and bump-cpu.
#include "bump_family.hpp"

#include <ostream>
#include <utility>

#include "bump_invariants.hpp"
#include "bump_runner.hpp"
#include "heaplab/runner/minimize.hpp"

namespace heaplab::bump_family {

namespace {

std::uint64_t count_of(runner::StressCounts const& s, std::string const& key) {
  auto const it = s.counts.find(key);
  return it == s.counts.end() ? 0 : it->second;
}

std::string threads_bucket(std::uint32_t t) {
  if (t == 1) return "1";
  if (t <= 8) return "2-8";
  if (t <= 64) return "9-64";
  if (t <= 512) return "65-512";
  return "513-4096";
}

std::string arena_bucket(std::uint64_t a) {
  if (a <= 64) return "1-64 B";
  if (a <= 4096) return "65 B-4 KiB";
  if (a <= 65536) return "4-64 KiB";
  return "64 KiB-1 GiB";
}

}  // namespace

std::string BumpFamily::title() const {
  return "a bump allocator over an arena with free_all (test-only: proofs_tests/families/bump)";
}

std::vector<runner::InvariantInfo> BumpFamily::invariants() const {
  std::vector<runner::InvariantInfo> out;
  for (BumpInvariant const& inv : bump_catalog())
    out.push_back({std::string(inv.name),
                   "heaplab bump family (proofs_tests/families/bump)",
                   std::string(inv.statement),
                   false});
  return out;
}

runner::AnySchedule BumpFamily::from_json(nlohmann::json const& document) const {
  return wrap(bump_from_json(document));
}

nlohmann::ordered_json BumpFamily::to_json(runner::AnySchedule const& s) const {
  return bump_family::to_json(unwrap(s));
}

std::string BumpFamily::describe_step(runner::AnySchedule const& s, std::size_t i) const {
  return describe(unwrap(s).steps.at(i));
}

std::string BumpFamily::config_summary(runner::AnySchedule const& s) const {
  return "arena " + std::to_string(unwrap(s).arena) + " B";
}

std::string BumpFamily::size_summary(runner::AnySchedule const& s) const {
  return "arena = " + std::to_string(unwrap(s).arena) + " B";
}

void BumpFamily::show(runner::AnySchedule const& s, std::ostream& out) const {
  BumpSchedule const& b = unwrap(s);
  out << "arena: " << b.arena << " bytes\n";
  out << "steps (" << b.steps.size() << "):\n";
  for (std::size_t i = 0; i < b.steps.size(); ++i)
    out << "  " << i << ": " << describe(b.steps[i]) << "\n";
}

void BumpFamily::cover(runner::AnySchedule const& s,
                       std::size_t steps_run,
                       runner::Coverage& coverage) const {
  BumpSchedule const& b = unwrap(s);
  coverage.add("arenas", arena_bucket(b.arena));
  for (std::size_t i = 0; i < steps_run && i < b.steps.size(); ++i) {
    coverage.add("steps", step_name(b.steps[i]));
    auto const* a = std::get_if<BumpAlloc>(&b.steps[i]);
    if (!a) continue;
    coverage.add("threads", threads_bucket(a->threads));
    coverage.add("aligns", "align " + std::to_string(a->align));
    bool too_big = false;
    for (std::uint64_t size : a->sizes) too_big = too_big || size > b.arena;
    coverage.add("sizes",
                 too_big                ? "a size beyond the arena"
                 : a->sizes.size() == 1 ? "one size"
                                        : "a size list");
  }
}

std::vector<runner::CoverageCategory> BumpFamily::coverage_categories() const {
  return {{"steps", "steps"},
          {"threads", "alloc waves by threads"},
          {"aligns", "alignments"},
          {"sizes", "sizes"},
          {"arenas", "arenas"}};
}

std::vector<std::string> BumpFamily::stress_notes(runner::StressCounts const& s) const {
  std::vector<std::string> notes;
  notes.push_back(std::to_string(count_of(s, "requests")) +
                  " requests: " + std::to_string(count_of(s, "granted")) + " granted (" +
                  std::to_string(count_of(s, "bytes")) + " bytes), " +
                  std::to_string(count_of(s, "nulls")) + " null; " +
                  std::to_string(count_of(s, "free_alls")) + " free_alls");
  if (s.cases > 0 && count_of(s, "nulls") == 0)
    notes.push_back("WARNING: no request ran out of arena (bump-null-justified was not exercised)");
  if (s.cases > 0 && count_of(s, "free_alls") == 0)
    notes.push_back("WARNING: no free_all ran (bump-free-all-resets was not exercised)");
  return notes;
}

void BumpFamily::reduce(runner::Reducer& reducer, runner::ReductionOptions const& options) const {
  auto best = [&]() -> BumpSchedule const& { return unwrap(reducer.best()); };
  auto wave = [](BumpSchedule& s, std::size_t i) -> BumpAlloc& {
    return std::get<BumpAlloc>(s.steps[i]);
  };
  auto test = [&](BumpSchedule c, std::string const& what) {
    if (!reducer.try_candidate(wrap(std::move(c)))) return false;
    reducer.log(what + ": " + std::to_string(best().steps.size()) + " steps, arena " +
                std::to_string(best().arena) + " B");
    return true;
  };
  for (std::size_t i = 0; options.sizes && i < best().steps.size(); ++i) {
    if (!std::holds_alternative<BumpAlloc>(best().steps[i])) continue;
    std::string const name = "wave " + std::to_string(i);
    if (BumpSchedule c = best(); wave(c, i).sizes.size() > 1) {
      wave(c, i).sizes.resize(1);
      (void)test(std::move(c), name + ": one size");
    }
    if (BumpSchedule c = best(); wave(c, i).align > 1) {
      wave(c, i).align = 1;
      (void)test(std::move(c), name + ": alignment 1");
    }
    for (BumpSchedule c = best(); wave(c, i).threads > 1; c = best()) {
      wave(c, i).threads /= 2;
      if (!test(std::move(c), name + ": halved the threads")) break;
    }
  }
  if (!options.heap) return;
  runner::shrink_number(
      reducer,
      best().arena,
      1,
      [&](std::uint64_t arena) {
        BumpSchedule c = best();
        c.arena        = arena;
        return wrap(std::move(c));
      },
      "arena");
}

BumpFamily const& family() {
  static BumpFamily const bump;
  return bump;
}

runner::RunnerInfo cpu_runner_info(std::string name, std::string help, AllocatorFactory make) {
  runner::RunnerInfo r;
  r.name   = name;
  r.family = "bump";
  r.help   = std::move(help);
  r.make   = [name, make](runner::RunnerOptions const& o) -> std::unique_ptr<runner::Runner> {
    BackendFactory backend = [make, threads = o.threads](std::uint64_t arena) {
      return std::make_unique<ThreadsBackend>(make(arena), threads);
    };
    return std::make_unique<BumpRunner>(name, std::move(backend), false);
  };
  return r;
}

namespace {

runner::FamilyRegistration const bump_family{family()};

runner::RunnerInfo bump_model_info() {
  runner::RunnerInfo r;
  r.name   = "bump-model";
  r.family = "bump";
  r.help   = "the sequential bump allocator alone, threads in each wave's seed order (reference)";
  r.make   = [](runner::RunnerOptions const&) -> std::unique_ptr<runner::Runner> {
    return std::make_unique<BumpRunner>(
        "bump-model",
        [](std::uint64_t arena) { return std::make_unique<SequentialBackend>(arena); },
        true);
  };
  return r;
}

runner::RunnerRegistration const bump_model{bump_model_info()};
runner::RunnerRegistration const bump_cpu{cpu_runner_info(
    "bump-cpu",
    "the compare-and-swap bump allocator on OS threads (--threads per wave) against the model",
    [](std::uint64_t arena) { return std::make_unique<AtomicBump>(arena); })};

}  // namespace

}  // namespace heaplab::bump_family
