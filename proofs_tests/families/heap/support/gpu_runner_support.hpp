// Helpers for the GPU runner's tests (docs/gpu-runner.md "Tests"): running a schedule on the
// "gpu" runner, turning a failure into a failure file with the replay command, the hang exit,
// and RapidCheck properties without shrinking.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/families/heap/family.hpp"
#include "heaplab/families/heap/gpu/gpu_runner.hpp"
#include "heaplab/families/heap/heap_runner.hpp"
#include "heaplab/families/heap/report.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/schedule/json.hpp"
#include "heaplab/schedule/schedule.hpp"
#include "property.hpp"

#if !defined(HEAPLAB_TOOL_RELATIVE)
#error \
    "HEAPLAB_TOOL_RELATIVE must name the heaplab executable (proofs_tests/families/heap/CMakeLists.txt)"
#endif

namespace gpu_runner_test {

namespace runner      = heaplab::runner;
namespace heap_family = heaplab::heap_family;
namespace gpu         = heaplab::heap_family::gpu;
namespace schedule    = heaplab::schedule;
namespace core        = heaplab::core;

using heaplab::testing::under_cuda_tool;

/// The heaplab executable, relative to this test binary (the build folder may have moved).
inline std::string heaplab_tool() {
  std::error_code ec;
  auto const self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "heaplab";
  return (self.parent_path() / HEAPLAB_TOOL_RELATIVE).lexically_normal().string();
}

/// Where failure files go: $HEAPLAB_FAILURE_DIR, else failures/ (relative to the working dir).
inline std::filesystem::path failure_dir() {
  char const* d = std::getenv("HEAPLAB_FAILURE_DIR");
  return d != nullptr && *d != '\0' ? std::filesystem::path(d) : std::filesystem::path("failures");
}

/// The schedule without its defrag steps (the id graph is the same: defragmentation only moves
/// objects).
inline schedule::Schedule without_defrag(schedule::Schedule s) {
  s.steps.erase(std::remove_if(s.steps.begin(),
                               s.steps.end(),
                               [](schedule::Step const& step) {
                                 return std::holds_alternative<schedule::Defrag>(step);
                               }),
                s.steps.end());
  return s;
}

/// The steps before the first defrag step.
inline schedule::Schedule prefix_before_defrag(schedule::Schedule s) {
  auto const first = std::find_if(s.steps.begin(), s.steps.end(), [](schedule::Step const& step) {
    return std::holds_alternative<schedule::Defrag>(step);
  });
  s.steps.erase(first, s.steps.end());
  return s;
}

/// The "gpu" runner (fails the test if it cannot be made; call HEAPLAB_REQUIRE_GPU() first).
inline std::unique_ptr<heap_family::HeapRunner> gpu_runner() {
  return gpu::make_gpu_runner(runner::RunnerOptions{});  // watchdog: HEAPLAB_WATCHDOG_MS or 5 s
}

/// Saves the failure of `schedule` on `r` as a failure file and returns one paragraph naming
/// the failure, the file and the exact replay command (also printed to stdout at once, so a
/// crash afterwards cannot lose it).
inline std::string save_failure(heap_family::HeapRunner const& r,
                                schedule::Schedule const& s,
                                runner::Failure const& failure,
                                std::string const& origin,
                                std::uint64_t seed) {
  runner::FailureFile f;
  f.created        = runner::utc_now_iso8601();
  f.git_commit     = runner::git_commit();
  f.gpu            = r.device_name();
  f.runner         = r.name();
  f.seed           = seed;
  f.origin.command = origin;
  f.failure        = failure.record();
  f.schedule       = heap_family::family().wrap(s);
  std::ostringstream out;
  out << "FAILURE on runner " << r.name() << " at step " << failure.step << " ("
      << failure.step_description << "): " << runner::to_string(failure.kind) << ", check "
      << failure.check << ": " << failure.message << "\n";
  try {
    auto const path = std::filesystem::absolute(runner::save_failure(f, failure_dir()));
    out << "  failure file: " << path.string() << "\n"
        << "  replay it:    " << heaplab_tool() << " replay " << path.string() << "\n";
  } catch (std::exception const& e) {
    out << "  (the failure file could not be written: " << e.what() << ")\n";
  }
  std::cout << out.str() << std::flush;
  return out.str();
}

/// After a hang the device still runs the stuck kernel and the runner is unusable (runner.hpp):
/// report and end the process with status 3, as heaplab stress does (std::_Exit skips static
/// destructors, which would block on the stuck context).
[[noreturn]] inline void exit_after_hang(std::string const& report) {
  std::cout << report
            << "[heaplab] a GPU kernel hung (watchdog); ending the test process with "
               "status 3\n"
            << std::flush;
  std::fflush(stderr);
  std::_Exit(3);
}

/// Runs `s` on `r`; on a failure saves the failure file (origin "test") and returns the report
/// paragraph (empty when the run passed). A hang ends the process.
inline std::string run_and_report(heap_family::HeapRunner& r,
                                  schedule::Schedule const& s,
                                  runner::StepCallback const& on_step = {}) {
  runner::RunOutcome const outcome = r.run(s, on_step);
  if (outcome.ok()) return "";
  std::string const report = save_failure(r, s, *outcome.failure, "test", 0);
  if (outcome.failure->kind == runner::FailureKind::hang || !r.usable()) exit_after_hang(report);
  return report + runner::format_failure(*outcome.failure, runner::ReportOptions{});
}

// ------------------------------------------------------------------------------- schedules

/// proofs_tests/model/data/wator.json, embedded at configure time (CMakeLists.txt) so that a
/// build folder copied to a GPU box needs no source tree.
inline char const* const kWatorJson =
#include "wator_json.inc"
    ;

inline schedule::Schedule wator() { return schedule::parse(kWatorJson); }

inline std::vector<std::uint32_t> concrete_types(core::HeapConfig const& c) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t t = 0; t < c.num_types(); ++t)
    if (!c.types[t].is_abstract) out.push_back(t);
  return out;
}

/// A link rule for slot 0 of every type in `types` that has pointer slots.
inline std::vector<schedule::LinkRule> links_for(core::HeapConfig const& c,
                                                 std::vector<std::uint32_t> const& types) {
  std::vector<schedule::LinkRule> out;
  for (std::uint32_t t : types) {
    if (c.pointer_slots(t).empty()) continue;
    schedule::LinkRule r;
    r.type = t;
    r.slot = 0;
    r.seed = 7 + t;
    out.push_back(r);
  }
  return out;
}

/// Waves that make one warp diverge as much as the format allows: per-lane trip counts covering
/// 0..63 (one warp with the even counts, one with the odd counts, each a permutation over the
/// lanes), every concrete type in one warp with 63 objects per lane, a partial last warp (1000
/// threads), with links to live objects and roots, then a free wave and another mixed wave into
/// the holes.
inline schedule::Schedule divergent_schedule(std::string const& universe,
                                             std::uint32_t num_blocks) {
  schedule::Schedule s;
  s.config                  = gpu::universe_config(universe, num_blocks, 1, 0);
  auto const concrete       = concrete_types(s.config);
  std::uint32_t const first = concrete.front();
  std::uint32_t const last  = concrete.back();
  schedule::AllocWave counts;
  counts.type       = first;
  counts.threads    = 32;
  counts.divergence = schedule::Divergence::per_lane_counts;
  for (std::uint32_t l = 0; l < 32; ++l) counts.lane_counts.push_back(2 * ((7 * l) % 32));
  s.steps.push_back(counts);
  schedule::AllocWave counts2 = counts;  // the odd counts 1..63, another type, with links
  counts2.type                = last;
  for (std::uint32_t l = 0; l < 32; ++l) counts2.lane_counts[l] = 2 * ((11 * l + 5) % 32) + 1;
  counts2.links = links_for(s.config, {last});
  s.steps.push_back(counts2);
  schedule::AllocWave mixed;
  mixed.threads    = 32;
  mixed.count      = 63;
  mixed.divergence = schedule::Divergence::mixed_types;
  mixed.lane_types = concrete;
  mixed.links      = links_for(s.config, concrete);
  mixed.roots      = true;
  s.steps.push_back(mixed);
  schedule::AllocWave partial = counts;  // 31 full warps and one of 8 lanes
  partial.threads             = 1000;
  for (auto& c : partial.lane_counts) c %= 4;
  s.steps.push_back(partial);
  schedule::FreeWave thin;
  thin.select.pattern  = schedule::SelectPattern::fraction;
  thin.select.fraction = 0.5;
  thin.select.seed     = 3;
  s.steps.push_back(thin);
  schedule::AllocWave refill = mixed;
  refill.count               = 17;
  refill.roots               = false;
  s.steps.push_back(refill);
  s.steps.push_back(schedule::Check{});
  schedule::validate(s);
  return s;
}

/// Counters over the steps of many runs (printed by the properties).
struct StepStats {
  std::uint64_t runs = 0, steps = 0, created = 0, out_of_memory = 0, deleted = 0, alloc_steps = 0,
                free_steps = 0, parallel_do_steps = 0, defrag_steps = 0, check_steps = 0,
                defrag_passes = 0, moved = 0, max_live = 0;
  void add(runner::StepReport const& r) {
    ++steps;
    created += r.count("created");
    out_of_memory += r.count("out_of_memory");
    deleted += r.count("deleted");
    defrag_passes += r.count("defrag_passes");
    moved += r.count("moved");
    max_live = std::max<std::uint64_t>(max_live, r.live);
    if (r.op == "alloc") ++alloc_steps;
    if (r.op == "free") ++free_steps;
    if (r.op == "parallel_do") ++parallel_do_steps;
    if (r.op == "defrag") ++defrag_steps;
    if (r.op == "check") ++check_steps;
  }
  [[nodiscard]] std::string to_string() const {
    std::ostringstream o;
    o << runs << " schedules, " << steps << " steps (alloc " << alloc_steps << ", free "
      << free_steps << ", parallel_do " << parallel_do_steps << ", defrag " << defrag_steps
      << ", check " << check_steps << "), objects created " << created
      << ", allocations out of memory " << out_of_memory << ", deleted " << deleted
      << ", defrag passes " << defrag_passes << ", objects moved " << moved
      << ", most live objects " << max_live;
    return o.str();
  }
};

/// check_property (property.hpp) with shrinking off: GPU runs are nondeterministic, so a shrunk
/// schedule need not fail again (the failure file is the reproduction).
template <class Testable>
void check_property_noshrink(int min_cases, Testable&& testable) {
  heaplab::testing::check_property(min_cases, std::forward<Testable>(testable), {false, true});
}

}  // namespace gpu_runner_test
