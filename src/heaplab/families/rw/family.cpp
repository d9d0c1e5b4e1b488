// The random-walk family (family.hpp) and the registrations of its runners.
#include "heaplab/families/rw/family.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "heaplab/check/rw_invariants.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/families/rw/cpu_pool.hpp"
#include "heaplab/families/rw/model_pool.hpp"
#include "heaplab/families/rw/rw_runner.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/schedule/generators.hpp"
#include "heaplab/schedule/rw_json.hpp"
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
#include <cuda_runtime_api.h>

#include "heaplab/cuda/error.hpp"
#include "heaplab/rw/device_pool.hpp"
#endif

namespace heaplab::rw_family {

namespace {

using schedule::RwSchedule;

std::uint64_t count_of(runner::StressCounts const& s, std::string const& key) {
  auto const it = s.counts.find(key);
  return it == s.counts.end() ? 0 : it->second;
}

/// The algorithms of profile `name` (every one for "mixed").
std::vector<core::RwAlgorithm> algorithms_of(std::string const& name) {
  if (name == "mixed") return schedule::gen::all_rw_algorithms();
  auto const a = schedule::rw_algorithm_from_string(name);
  HEAPLAB_EXPECTS(a.has_value(),
                  "unknown rw profile '" + name + "'; profiles: mixed, rw, rw-bm, corw, rw-malloc");
  return {*a};
}

}  // namespace

std::string RwFamily::title() const {
  return "the random-walk page pools: RW, RW-BM, CoRW and RW_malloc";
}

std::string RwFamily::schedule_format() const { return schedule::kRwFormatName; }

std::vector<runner::InvariantInfo> RwFamily::invariants() const {
  std::vector<runner::InvariantInfo> out;
  for (auto const& inv : check::rw_catalog())
    out.push_back(
        {std::string(inv.name), std::string(inv.citation), std::string(inv.statement), false});
  return out;
}

runner::AnySchedule RwFamily::from_json(nlohmann::json const& document) const {
  return wrap(schedule::rw_from_json(document));
}

nlohmann::ordered_json RwFamily::to_json(runner::AnySchedule const& s) const {
  return schedule::to_json(unwrap(s));
}

std::string RwFamily::describe_step(runner::AnySchedule const& s, std::size_t i) const {
  return schedule::describe(unwrap(s).steps.at(i));
}

std::string RwFamily::config_summary(runner::AnySchedule const& s) const {
  auto const& pool    = unwrap(s).pool;
  auto const pretaken = schedule::rw_pretaken_pages(pool);
  return "T = " + std::to_string(pool.num_pages) + " pages of " + std::to_string(pool.page_bytes) +
         " B, " + std::to_string(pool.word_bits) + "-bit words, max_steps " +
         std::to_string(pool.max_steps) + ", " + std::to_string(pretaken.size()) + " pre-taken";
}

std::string RwFamily::size_summary(runner::AnySchedule const& s) const {
  return "T = " + std::to_string(unwrap(s).pool.num_pages);
}

void RwFamily::show(runner::AnySchedule const& s, std::ostream& out) const {
  RwSchedule const& sch = unwrap(s);
  out << "pool: " << config_summary(s) << "\n";
  out << "steps (" << sch.steps.size() << "):\n";
  for (std::size_t i = 0; i < sch.steps.size(); ++i)
    out << "  " << i << ": " << schedule::describe(sch.steps[i]) << "\n";
}

std::vector<runner::Profile> RwFamily::profiles() const {
  return {{"mixed",
           "every algorithm: getpage/freepage mixes, divergent waves, near exhaustion, mixed "
           "sizes"},
          {"rw", "the same shapes with RW (Alg. 1) waves only"},
          {"rw-bm", "RW-BM (sec. 4.1) waves only"},
          {"corw", "CoRW (Alg. 2) waves only"},
          {"rw-malloc", "RW_malloc (Alg. 3) waves only"}};
}

runner::AnySchedule RwFamily::generate(runner::GenerationRequest const& request,
                                       std::uint64_t seed,
                                       std::uint32_t size) const {
  auto const gen = schedule::gen::rw_schedule(algorithms_of(request.profile));
  return wrap(gen(rc::Random(seed), static_cast<int>(size)).value());
}

void RwFamily::cover(runner::AnySchedule const& s,
                     std::size_t steps_run,
                     runner::Coverage& coverage) const {
  RwSchedule const& sch = unwrap(s);
  coverage.add("word_bits", std::to_string(sch.pool.word_bits) + "-bit words");
  for (std::size_t i = 0; i < steps_run && i < sch.steps.size(); ++i) {
    if (auto const* a = std::get_if<schedule::RwAllocWave>(&sch.steps[i])) {
      coverage.add("algorithms", schedule::to_string(a->algorithm));
      coverage.add("lanes", schedule::to_string(a->lanes));
    } else {
      coverage.add("frees",
                   schedule::to_string(std::get<schedule::RwFreeWave>(sch.steps[i]).select));
    }
  }
}

std::vector<runner::CoverageCategory> RwFamily::coverage_categories() const {
  return {{"algorithms", "alloc waves by algorithm"},
          {"lanes", "alloc waves by lanes"},
          {"frees", "free waves"},
          {"word_bits", "pools"}};
}

std::vector<std::string> RwFamily::stress_notes(runner::StressCounts const& s) const {
  std::uint64_t const requests = count_of(s, "requests");
  char line[320];
  std::snprintf(line,
                sizeof line,
                "%llu requests, %llu pages handed out, %llu handles freed; nulls: %llu out of "
                "pages, %llu bounded-walk exhaustions; mean X_i %.2f",
                static_cast<unsigned long long>(requests),
                static_cast<unsigned long long>(count_of(s, "pages")),
                static_cast<unsigned long long>(count_of(s, "freed")),
                static_cast<unsigned long long>(count_of(s, "out_of_pages")),
                static_cast<unsigned long long>(count_of(s, "exhaustions")),
                requests
                    ? static_cast<double>(count_of(s, "walk_steps")) / static_cast<double>(requests)
                    : 0.0);
  return {line};
}

void RwFamily::reduce(runner::Reducer& reducer, runner::ReductionOptions const& options) const {
  auto best = [&]() -> RwSchedule const& { return unwrap(reducer.best()); };
  auto test = [&](RwSchedule c, std::string const& what) {
    if (!reducer.try_candidate(wrap(std::move(c)))) return false;
    reducer.log(what + ": " + std::to_string(best().steps.size()) +
                " waves, T = " + std::to_string(best().pool.num_pages));
    return true;
  };
  if (options.sizes)
    for (std::size_t i = 0; i < best().steps.size(); ++i) {
      if (auto const* a = std::get_if<schedule::RwAllocWave>(&best().steps[i]);
          a && a->lanes != schedule::RwLanes::all) {
        RwSchedule c = best();
        auto& w      = std::get<schedule::RwAllocWave>(c.steps[i]);
        w.lanes      = schedule::RwLanes::all;
        w.k          = 1;
        w.offset     = 0;
        w.lane_seed  = 0;
        (void)test(std::move(c), "every lane of wave " + std::to_string(i) + " asks");
      }
      for (;;) {
        auto const* a = std::get_if<schedule::RwAllocWave>(&best().steps[i]);
        if (!a || a->threads <= 1) break;
        RwSchedule c                                        = best();
        std::get<schedule::RwAllocWave>(c.steps[i]).threads = a->threads / 2;
        if (!test(std::move(c), "halved the threads of wave " + std::to_string(i))) break;
      }
    }
  if (!options.heap) return;
  while (best().pool.num_pages > 1) {
    RwSchedule c          = best();
    auto& p               = c.pool;
    std::uint32_t const t = p.num_pages / 2;
    if (p.pretaken.pages) {
      auto& list = *p.pretaken.pages;
      list.erase(std::remove_if(list.begin(), list.end(), [t](std::uint32_t q) { return q >= t; }),
                 list.end());
    } else {
      p.pretaken.count =
          static_cast<std::uint32_t>(std::uint64_t{p.pretaken.count} * t / p.num_pages);
    }
    p.num_pages = t;
    if (!test(std::move(c), "halved T")) break;
  }
  if (best().pool.pretaken.pages || best().pool.pretaken.count > 0) {
    RwSchedule c    = best();
    c.pool.pretaken = {};
    (void)test(std::move(c), "dropped the pre-taken pages");
  }
}

RwFamily const& family() {
  static RwFamily const rw;
  return rw;
}

namespace {

/// Every algorithm runs on every rw executor.
std::string supports_all(core::RwAlgorithm) { return {}; }

runner::FamilyRegistration const rw_family{family()};

runner::RunnerRegistration const rw_model{
    {"rw-model",
     "rw",
     "a sequential, deterministic pool (the model-only self-check of the rw family)",
     [](runner::RunnerOptions const&) -> std::unique_ptr<runner::Runner> {
       return std::make_unique<RwRunner>(
           "rw-model",
           [](rw::PoolConfig const& c) { return std::make_unique<ModelPool>(c); },
           &supports_all,
           true);
     }}};

runner::RunnerRegistration const rw_cpu{
    {"rw-cpu",
     "rw",
     "the portable core (rw/page_pool.hpp) on free-running CPU threads (--threads); CoRW and "
     "RW_malloc as lock-step warps",
     [](runner::RunnerOptions const& o) -> std::unique_ptr<runner::Runner> {
       return std::make_unique<RwRunner>(
           "rw-cpu",
           [threads = o.threads](rw::PoolConfig const& c) {
             return std::make_unique<CpuThreadsPool>(c, threads);
           },
           &supports_all,
           false);
     }}};

/// rw-gpu: rw::DevicePool, one kernel per wave, on the worker's device.
std::unique_ptr<runner::Runner> make_rw_gpu([[maybe_unused]] runner::RunnerOptions const& o) {
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
  int const device = o.device;
  return std::make_unique<RwRunner>(
      "rw-gpu",
      [device](rw::PoolConfig const& c) {
        HEAPLAB_CUDA_TRY(cudaSetDevice(device));  // the worker's thread uses its GPU
        return std::make_unique<rw::DevicePool>(c);
      },
      &supports_all,
      false,
      runner::gpu_name(device));
#else
  throw runner::runner_unavailable(runner::gpu_unavailable_reason());
#endif
}

runner::RunnerInfo rw_gpu_info() {
  runner::RunnerInfo r{"rw-gpu",
                       "rw",
                       "the GPU pool (rw::DevicePool, one kernel per wave) against the model",
                       &make_rw_gpu};
  r.unavailable = &runner::gpu_unavailable_reason;
  r.uses_gpu    = true;
  return r;
}

runner::RunnerRegistration const rw_gpu{rw_gpu_info()};

}  // namespace

}  // namespace heaplab::rw_family
