// The malloc family (family.hpp): its JSON form, steps, showing, coverage, notes, reductions and
// the registrations of its runners (generation is in generate.cpp).
#include "heaplab/families/malloc/family.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <utility>

#include "heaplab/families/malloc/catalog.hpp"
#include "heaplab/families/malloc/reference.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/minimize.hpp"
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
#include "heaplab/families/malloc/gpu/gpu_subjects.hpp"
#endif

namespace heaplab::malloc_family {

namespace {

std::uint64_t count_of(runner::StressCounts const& s, std::string const& key) {
  auto const it = s.counts.find(key);
  return it == s.counts.end() ? 0 : it->second;
}

std::string pool_bucket(std::uint64_t pool) {
  if (pool <= (64u << 10)) return "<= 64 KiB";
  if (pool <= (1u << 20)) return "<= 1 MiB";
  if (pool <= (16u << 20)) return "<= 16 MiB";
  return "> 16 MiB";
}

std::string threads_bucket(std::uint32_t threads) {
  if (threads <= 32) return "<= 32";
  if (threads <= 1024) return "<= 1024";
  return "> 1024";
}

/// "64 B 0.97, 256 B 0.95" from the counts fill.S.bytes / fill.S.pool.
std::string utilization_by_size(runner::StressCounts const& s) {
  std::string out;
  for (auto const& [key, bytes] : s.counts) {
    if (key.rfind("fill.", 0) != 0 || key.size() < 11 || key.compare(key.size() - 6, 6, ".bytes"))
      continue;
    std::string const size   = key.substr(5, key.size() - 11);
    std::uint64_t const pool = count_of(s, "fill." + size + ".pool");
    if (pool == 0) continue;
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.3f", static_cast<double>(bytes) / pool);
    out += (out.empty() ? "" : ", ") + size + " B " + ratio;
  }
  return out;
}

}  // namespace

std::string MallocFamily::title() const {
  return "any allocator with malloc(size) / free(ptr): CUDA's device malloc, RW_malloc, peers";
}

std::vector<runner::InvariantInfo> MallocFamily::invariants() const {
  std::vector<runner::InvariantInfo> out;
  for (MallocInvariant const& inv : malloc_catalog())
    out.push_back({std::string(inv.name),
                   "malloc/free contract (docs/malloc.md)",
                   std::string(inv.statement),
                   false});
  return out;
}

runner::AnySchedule MallocFamily::from_json(nlohmann::json const& document) const {
  return wrap(malloc_from_json(document));
}

nlohmann::ordered_json MallocFamily::to_json(runner::AnySchedule const& s) const {
  return malloc_family::to_json(unwrap(s));
}

std::string MallocFamily::describe_step(runner::AnySchedule const& s, std::size_t i) const {
  return describe(unwrap(s).steps.at(i));
}

std::string MallocFamily::config_summary(runner::AnySchedule const& s) const {
  return "pool " + std::to_string(unwrap(s).pool) + " B";
}

std::string MallocFamily::size_summary(runner::AnySchedule const& s) const {
  return "pool = " + std::to_string(unwrap(s).pool) + " B";
}

void MallocFamily::show(runner::AnySchedule const& s, std::ostream& out) const {
  MallocSchedule const& m = unwrap(s);
  out << "pool: " << m.pool << " bytes\n";
  out << "steps (" << m.steps.size() << "):\n";
  for (std::size_t i = 0; i < m.steps.size(); ++i)
    out << "  " << i << ": " << describe(m.steps[i]) << "\n";
}

void MallocFamily::cover(runner::AnySchedule const& s,
                         std::size_t steps_run,
                         runner::Coverage& coverage) const {
  MallocSchedule const& m = unwrap(s);
  coverage.add("pools", pool_bucket(m.pool));
  for (std::size_t i = 0; i < steps_run && i < m.steps.size(); ++i) {
    MallocStep const& step = m.steps[i];
    coverage.add("steps", step_name(step));
    if (auto const* a = std::get_if<AllocWave>(&step)) {
      coverage.add("sizes", to_string(a->sizes));
      coverage.add("lanes", to_string(a->lanes));
      coverage.add("divergence", to_string(a->divergence));
      coverage.add("threads", threads_bucket(a->threads));
    }
    if (auto const* f = std::get_if<FreeWave>(&step))
      coverage.add("selectors", to_string(f->select));
    if (auto const* f = std::get_if<FillWave>(&step))
      coverage.add("threads", threads_bucket(f->threads));
  }
}

std::vector<runner::CoverageCategory> MallocFamily::coverage_categories() const {
  return {{"steps", "steps"},
          {"sizes", "size distributions"},
          {"lanes", "sizes by"},
          {"divergence", "alloc divergence"},
          {"selectors", "free selectors"},
          {"threads", "waves by threads"},
          {"pools", "pools"}};
}

std::vector<std::string> MallocFamily::stress_notes(runner::StressCounts const& s) const {
  std::vector<std::string> notes;
  notes.push_back(std::to_string(count_of(s, "requests")) +
                  " requests: " + std::to_string(count_of(s, "granted")) + " granted (" +
                  std::to_string(count_of(s, "bytes")) + " bytes), " +
                  std::to_string(count_of(s, "nulls")) + " null; " +
                  std::to_string(count_of(s, "freed")) + " freed; " +
                  std::to_string(count_of(s, "touched")) + " touched");
  if (std::string const u = utilization_by_size(s); !u.empty())
    notes.push_back("utilization at the first null of a fill from empty, by size: " + u);
  if (std::uint64_t const n = count_of(s, "null_then_success"); n > 0)
    notes.push_back("FINDING: " + std::to_string(n) +
                    " fill requests got null and then succeeded at once with nothing freed");
  if (s.cases > 0 && count_of(s, "nulls") == 0)
    notes.push_back("WARNING: no request got null (malloc-null-justified was not exercised)");
  if (s.cases > 0 && count_of(s, "freed") == 0) notes.push_back("WARNING: nothing was freed");
  return notes;
}

void MallocFamily::reduce(runner::Reducer& reducer, runner::ReductionOptions const& options) const {
  auto best = [&]() -> MallocSchedule const& { return unwrap(reducer.best()); };
  auto test = [&](MallocSchedule c, std::string const& what) {
    if (!reducer.try_candidate(wrap(std::move(c)))) return false;
    reducer.log(what + ": " + std::to_string(best().steps.size()) + " steps, pool " +
                std::to_string(best().pool) + " B");
    return true;
  };
  for (std::size_t i = 0; options.sizes && i < best().steps.size(); ++i) {
    std::string const name = "step " + std::to_string(i);
    if (std::holds_alternative<AllocWave>(best().steps[i])) {
      auto wave = [i](MallocSchedule& s) -> AllocWave& { return std::get<AllocWave>(s.steps[i]); };
      if (MallocSchedule c = best(); wave(c).sizes != SizeDist::fixed) {
        wave(c).sizes = SizeDist::fixed;
        wave(c).max   = wave(c).min;
        (void)test(std::move(c), name + ": fixed sizes");
      }
      if (MallocSchedule c = best(); wave(c).divergence != Divergence::all) {
        wave(c).divergence = Divergence::all;
        (void)test(std::move(c), name + ": no divergence");
      }
      for (MallocSchedule c = best(); wave(c).per_thread > 1; c = best()) {
        wave(c).per_thread /= 2;
        if (!test(std::move(c), name + ": halved the requests per thread")) break;
      }
      for (MallocSchedule c = best(); wave(c).threads > 1; c = best()) {
        wave(c).threads /= 2;
        if (!test(std::move(c), name + ": halved the threads")) break;
      }
    }
    if (std::holds_alternative<FillWave>(best().steps[i])) {
      auto wave = [i](MallocSchedule& s) -> FillWave& { return std::get<FillWave>(s.steps[i]); };
      for (MallocSchedule c = best(); wave(c).threads > 1; c = best()) {
        wave(c).threads /= 2;
        if (!test(std::move(c), name + ": halved the threads")) break;
      }
    }
  }
  if (!options.heap) return;
  runner::shrink_number(
      reducer,
      best().pool,
      kMinPool,
      [&](std::uint64_t pool) {
        MallocSchedule c = best();
        c.pool           = pool;
        return wrap(std::move(c));
      },
      "pool");
}

MallocFamily const& family() {
  static MallocFamily const malloc;
  return malloc;
}

runner::RunnerInfo runner_info(std::string name,
                               std::string help,
                               SubjectMaker make,
                               bool deterministic) {
  runner::RunnerInfo r;
  r.name   = name;
  r.family = "malloc";
  r.help   = std::move(help);
  r.make   = [name, make, deterministic](
               runner::RunnerOptions const& o) -> std::unique_ptr<runner::Runner> {
    return std::make_unique<MallocRunner>(
        name, [&] { return make(o); }, deterministic);
  };
  return r;
}

runner::RunnerInfo with_min_pool(runner::RunnerInfo r, SubjectInfo const& s) {
  std::uint64_t const mib = (s.min_pool + (std::uint64_t{1} << 20) - 1u) >> 20;
  r.min_heap_mib          = static_cast<std::uint32_t>(std::min<std::uint64_t>(mib, 0xFFFFFFFFu));
  return r;
}

runner::RunnerInfo gpu_runner_info(std::string name,
                                   std::string help,
                                   SubjectMaker make,
                                   bool one_per_process) {
  runner::RunnerInfo r = runner_info(std::move(name), std::move(help), std::move(make), false);
  r.unavailable        = &runner::gpu_unavailable_reason;
  r.uses_gpu           = true;
  r.one_per_process    = one_per_process;
  return r;
}

namespace {

runner::FamilyRegistration const malloc_registration{family()};

runner::RunnerRegistration const malloc_model{runner_info(
    "malloc-model",
    "the reference allocator (sequential first fit over a host arena) against the catalog",
    [](runner::RunnerOptions const&) { return make_reference_subject(); },
    true)};

runner::RunnerRegistration const malloc_rw_cpu{runner_info(
    "malloc-rw-cpu",
    "RW_malloc (RW Alg. 3) as malloc/free over 16-byte pages, one lock-step warp per 32 threads "
    "on --threads OS threads, against the catalog",
    [](runner::RunnerOptions const& o) { return make_rw_cpu_subject(o.threads); },
    false)};

std::unique_ptr<Subject> cuda_subject([[maybe_unused]] runner::RunnerOptions const& o) {
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
  return make_cuda_malloc_subject(gpu_subject_options(o));
#else
  throw runner::runner_unavailable(runner::gpu_unavailable_reason());
#endif
}

std::unique_ptr<Subject> rw_subject([[maybe_unused]] runner::RunnerOptions const& o) {
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
  return make_rw_malloc_subject(gpu_subject_options(o));
#else
  throw runner::runner_unavailable(runner::gpu_unavailable_reason());
#endif
}

runner::RunnerRegistration const malloc_cuda{gpu_runner_info(
    "malloc-cuda",
    "CUDA's device malloc/free (cudaLimitMallocHeapSize = the pool; one pool size per "
    "process) against the catalog",
    &cuda_subject,
    true)};
runner::RunnerRegistration const malloc_rw_gpu{gpu_runner_info(
    "malloc-rw-gpu",
    "RW_malloc (RW Alg. 3) as malloc/free over 16-byte pages, on the GPU, against the "
    "catalog",
    &rw_subject,
    false)};

}  // namespace

}  // namespace heaplab::malloc_family
