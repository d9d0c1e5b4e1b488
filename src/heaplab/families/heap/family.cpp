// The object heap family (family.hpp) and its CPU runners' registrations.
#include "heaplab/families/heap/family.hpp"

#include <cstdio>
#include <map>
#include <mutex>
#include <ostream>
#include <sstream>

#include "heaplab/check/invariants.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/families/heap/differential.hpp"
#include "heaplab/families/heap/model_executor.hpp"
#include "heaplab/families/heap/model_runner.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/schedule/generators.hpp"
#include "heaplab/schedule/json.hpp"

namespace heaplab::heap_family {

namespace {

using Schedule = schedule::Schedule;

/// The config sources of runners (ConfigSourceRegistration), by runner name.
std::map<std::string, std::function<rc::Gen<core::HeapConfig>()>>& config_sources() {
  static std::map<std::string, std::function<rc::Gen<core::HeapConfig>()>> sources;
  return sources;
}

std::string with_commas(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

std::string heap_size_bucket(std::uint32_t m) {
  if (m <= 8) return "M 1-8";
  if (m <= 64) return "M 9-64";
  if (m <= 512) return "M 65-512";
  if (m <= 4096) return "M 513-4096";
  return "M 4097-65536";
}

/// Coverage of one step, by the schedule format's names.
struct StepCoverage {
  runner::Coverage& c;
  void operator()(schedule::AllocWave const& w) const {
    c.add("divergence", to_string(w.divergence));
  }
  void operator()(schedule::FreeWave const& f) const {
    c.add("free_patterns", to_string(f.select.pattern));
  }
  void operator()(schedule::ParallelDo const& p) const {
    c.add("parallel_do_actions", to_string(p.action));
  }
  void operator()(schedule::Defrag const& d) const {
    c.add("defrag_variants", schedule::variant_name(d.variant));
    c.add("defrag_orders", core::to_string(d.order));
  }
  void operator()(schedule::Check const&) const {}
};

/// Cases whose heap has M > 64 blocks (2- and 3-level bitmap hierarchies).
std::uint64_t deep_cases(runner::Coverage const& c) {
  std::uint64_t deep = 0;
  auto const it      = c.counts.find("hierarchy_depths");
  if (it == c.counts.end()) return 0;
  for (auto const& [depth, n] : it->second)
    if (depth.rfind("1 ", 0) != 0) deep += n;
  return deep;
}

std::uint64_t count_of(runner::StressCounts const& s, std::string const& key) {
  auto const it = s.counts.find(key);
  return it == s.counts.end() ? 0 : it->second;
}

}  // namespace

std::string HeapFamily::title() const {
  return "the object heap: DynaSOAr's allocator and CompactGpu's defragmentation";
}

std::string HeapFamily::schedule_format() const { return schedule::kFormatName; }

std::vector<runner::InvariantInfo> HeapFamily::invariants() const {
  std::vector<runner::InvariantInfo> out;
  for (auto const& inv : check::catalog())
    out.push_back({std::string(inv.name),
                   std::string(inv.citation),
                   std::string(inv.statement),
                   inv.needs_payloads});
  return out;
}

runner::AnySchedule HeapFamily::from_json(nlohmann::json const& document) const {
  return wrap(schedule::from_json(document));
}

nlohmann::ordered_json HeapFamily::to_json(runner::AnySchedule const& s) const {
  return schedule::to_json(unwrap(s));
}

std::string HeapFamily::describe_step(runner::AnySchedule const& s, std::size_t i) const {
  Schedule const& sched = unwrap(s);
  return schedule::describe(sched.config, sched.steps.at(i));
}

std::string HeapFamily::config_summary(runner::AnySchedule const& s) const {
  core::HeapConfig const& c = unwrap(s).config;
  std::ostringstream out;
  out << "M=" << c.num_blocks << " n=" << c.defrag_factor << " k1=" << c.k1 << "; types:";
  for (std::uint32_t t = 0; t < c.num_types(); ++t) {
    auto const& ty = c.types[t];
    out << " " << ty.name << "(";
    if (ty.is_abstract)
      out << "abstract";
    else
      out << ty.size_bytes << " B, capacity " << c.capacity(t);
    if (ty.base) out << ", base " << c.types[*ty.base].name;
    out << ")";
  }
  return out.str();
}

std::string HeapFamily::size_summary(runner::AnySchedule const& s) const {
  return "M = " + std::to_string(unwrap(s).config.num_blocks);
}

void HeapFamily::show(runner::AnySchedule const& s, std::ostream& out) const {
  Schedule const& sched     = unwrap(s);
  core::HeapConfig const& c = sched.config;
  out << "config: M = " << c.num_blocks << " blocks, n = " << c.defrag_factor << ", k1 = " << c.k1
      << "\n";
  for (std::uint32_t t = 0; t < c.num_types(); ++t) {
    auto const& ty = c.types[t];
    out << "  type " << t << " " << ty.name << ": ";
    if (ty.is_abstract)
      out << "abstract, " << ty.size_bytes << " B";
    else
      out << ty.size_bytes << " B, capacity " << c.capacity(t);
    if (ty.base) out << ", base " << c.types[*ty.base].name;
    out << "\n";
    auto const slots = c.pointer_slots(t);
    for (std::uint32_t slot = 0; slot < slots.size(); ++slot)
      out << "    slot " << slot << ": " << schedule::slot_name(c, t, slot) << " -> "
          << c.types[slots[slot].pointee].name << "\n";
  }
  out << "steps (" << sched.steps.size() << "):\n";
  for (std::size_t i = 0; i < sched.steps.size(); ++i)
    out << "  " << i << ": " << schedule::describe(c, sched.steps[i]) << "\n";
}

std::vector<runner::Profile> HeapFamily::profiles() const {
  return {
      {"small", "M in [2, 32], the property tests' schedules"},
      {"mixed",
       "1-, 2- and 3-level bitmap hierarchies (M up to 8192), a defrag in every case (the gpu "
       "runner's default)"},
      {"large", "M from --heap-mib, waves scaled to the heap"},
      {"near-oom", "small heaps driven past exhaustion"},
  };
}

runner::AnySchedule HeapFamily::generate(runner::GenerationRequest const& request,
                                         std::uint64_t seed,
                                         std::uint32_t size) const {
  std::uint32_t const max_blocks = request.max_size ? request.max_size : kDefaultMaxBlocks;
  auto const gen                 = schedule::gen::profile_schedule(
      request.profile, request.heap_mib, max_blocks, configs_for(request.runner));
  return wrap(gen(rc::Random(seed), static_cast<int>(size)).value());
}

std::string HeapFamily::request_summary(runner::GenerationRequest const& r) const {
  return "heap " + std::to_string(r.heap_mib) +
         " MiB (M <= " + std::to_string(r.max_size ? r.max_size : kDefaultMaxBlocks) + " blocks)";
}

void HeapFamily::cover(runner::AnySchedule const& s,
                       std::size_t steps_run,
                       runner::Coverage& coverage) const {
  Schedule const& sched = unwrap(s);
  auto const m          = sched.config.num_blocks;
  auto const depth      = hierarchy_depth(m);
  auto const types      = sched.config.num_types();
  coverage.add("heap_sizes", heap_size_bucket(m));
  coverage.add("hierarchy_depths", std::to_string(depth) + " level" + (depth == 1 ? "" : "s"));
  coverage.add("type_counts", std::to_string(types) + (types == 1 ? " type" : " types"));
  std::size_t const n = std::min(steps_run, sched.steps.size());
  for (std::size_t i = 0; i < n; ++i) {
    coverage.add("step_kinds", schedule::step_name(sched.steps[i]));
    std::visit(StepCoverage{coverage}, sched.steps[i]);
  }
}

std::vector<runner::CoverageCategory> HeapFamily::coverage_categories() const {
  return {{"step_kinds", "steps"},
          {"divergence", "alloc divergence"},
          {"free_patterns", "free selectors"},
          {"parallel_do_actions", "parallel_do actions"},
          {"defrag_variants", "defrag variants"},
          {"defrag_orders", "defrag candidate orders"},
          {"heap_sizes", "heap sizes"},
          {"hierarchy_depths", "hierarchy depths"},
          {"type_counts", "types"}};
}

std::vector<std::string> HeapFamily::stress_notes(runner::StressCounts const& s) const {
  std::vector<std::string> notes;
  notes.push_back(with_commas(count_of(s, "defrags")) + " defrags, " +
                  with_commas(count_of(s, "out_of_memory")) + " allocations out of memory, " +
                  with_commas(count_of(s, "created")) + " objects created");
  char rate[128];
  std::snprintf(rate,
                sizeof rate,
                "%.1f cases/s with M > 64 (2- and 3-level hierarchies)",
                s.elapsed > 0 ? static_cast<double>(deep_cases(s.coverage)) / s.elapsed : 0.0);
  notes.push_back(rate);
  if (s.cases > 0 && count_of(s, "defrags") == 0)
    notes.push_back("WARNING: this run exercised no defragmentation");
  return notes;
}

std::unique_ptr<HeapRunner> make_runner(std::string const& name,
                                        runner::RunnerOptions const& options) {
  std::unique_ptr<runner::Runner> r = runner::make_runner(name, options);
  auto* heap                        = dynamic_cast<HeapRunner*>(r.get());
  HEAPLAB_EXPECTS(heap != nullptr, "runner '" + name + "' is not a runner of the heap family");
  (void)r.release();
  return std::unique_ptr<HeapRunner>(heap);
}

HeapFamily const& family() {
  static HeapFamily const heap;
  return heap;
}

ConfigSourceRegistration::ConfigSourceRegistration(
    std::string runner, std::function<rc::Gen<core::HeapConfig>()> configs) {
  config_sources()[std::move(runner)] = std::move(configs);
}

rc::Gen<core::HeapConfig> configs_for(std::string const& runner) {
  auto const it = config_sources().find(runner);
  return it == config_sources().end() ? schedule::gen::config() : it->second();
}

std::uint32_t hierarchy_depth(std::uint32_t num_blocks) {
  std::uint32_t depth = 1;
  for (std::uint64_t covered = 64; covered < num_blocks; covered *= 64) ++depth;
  return depth;
}

runner::RunnerInfo gpu_runner_info(std::string help,
                                   runner::RunnerInfo::Make make,
                                   std::function<std::string()> unavailable) {
  runner::RunnerInfo r{"gpu", "heap", std::move(help), std::move(make)};
  r.unavailable      = std::move(unavailable);
  r.uses_gpu         = true;
  r.default_profile  = "mixed";
  r.default_max_size = schedule::kMaxBlocks;
  return r;
}

namespace {

runner::FamilyRegistration const heap_family{family()};

runner::RunnerRegistration const model_runner{
    {"model",
     "heap",
     "the reference model alone (model::ModelInterpreter): places, checks and predicts itself",
     [](runner::RunnerOptions const&) -> std::unique_ptr<runner::Runner> {
       return std::make_unique<ModelRunner>();
     }}};

runner::RunnerRegistration const differential_model_runner{
    {"differential-model",
     "heap",
     "the differential path of the GPU runner with a second model in place of the GPU, placing at "
     "random legal spots (seed: --placement-seed)",
     [](runner::RunnerOptions const& o) -> std::unique_ptr<runner::Runner> {
       return std::make_unique<DifferentialRunner>(
           std::make_unique<ModelExecutor>(PlacementPolicy::random_legal, o.seed));
     }}};

#if !defined(HEAPLAB_HAVE_CUDA_RUNTIME)
// Without nvcc the GPU runner (gpu/) is not compiled; the name stays known, so that `--runner gpu`
// says why it cannot run rather than that it does not exist.
std::string gpu_not_built() {
  return "the GPU runner is not built: this heaplab was configured without CUDA (nvcc absent), so "
         "src/heaplab/families/heap/gpu was left out (docs/gpu-runner.md)";
}

runner::RunnerRegistration const gpu_runner_not_built{gpu_runner_info(
    "the GPU object allocator and CompactGpu against the model (not built: no nvcc)",
    [](runner::RunnerOptions const&) -> std::unique_ptr<runner::Runner> {
      throw runner::runner_unavailable(gpu_not_built());
    },
    &gpu_not_built)};
#endif

}  // namespace

}  // namespace heaplab::heap_family
