// The random-walk pool's stress loop (rw_stress.hpp).
#include "heaplab/runner/rw_stress.hpp"

#include <rapidcheck.h>
#include <chrono>

#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/stress.hpp"
#include "heaplab/schedule/generators.hpp"

namespace heaplab::runner {

namespace {

void add_coverage(RwStressStats& s, schedule::RwSchedule const& sched, std::size_t steps_run) {
  for (std::size_t i = 0; i < steps_run && i < sched.steps.size(); ++i) {
    if (auto const* a = std::get_if<schedule::RwAllocWave>(&sched.steps[i])) {
      ++s.algorithms[schedule::to_string(a->algorithm)];
      ++s.lanes[schedule::to_string(a->lanes)];
    } else {
      ++s.frees[schedule::to_string(std::get<schedule::RwFreeWave>(sched.steps[i]).select)];
    }
  }
}

/// Why the loop stops now, or "".
std::string stop_reason(RwStressOptions const& o,
                        RwStressStats const& s,
                        std::uint64_t next_case,
                        double elapsed) {
  if (o.only_case && next_case > 0) return "--case ran";
  if (o.interrupt && o.interrupt->load()) return "interrupted";
  if (o.max_cases && next_case >= o.max_cases) return "--cases reached";
  if (s.failures >= o.max_failures) return "--max-failures reached";
  if (elapsed >= o.seconds) return "time budget";
  return {};
}

}  // namespace

RwStressCase make_rw_case(RwStressOptions const& options, std::uint64_t k) {
  RwStressCase c;
  c.index      = k;
  c.seed       = case_seed(options.seed, k);
  c.rapidcheck = {c.seed, case_size(k)};
  auto const algorithms =
      options.algorithms.empty() ? schedule::gen::all_rw_algorithms() : options.algorithms;
  c.schedule = schedule::gen::rw_schedule(algorithms)(rc::Random(c.rapidcheck.seed),
                                                      static_cast<int>(c.rapidcheck.size))
                   .value();
  return c;
}

schedule::RwFailureFile rw_failure_file_for(RwStressOptions const& options,
                                            RwStressCase const& c,
                                            RwRunner const& runner,
                                            RwFailure const& failure) {
  schedule::RwFailureFile f;
  static_cast<schedule::FailureHeader&>(f) = stress_failure_header(
      runner.device_name(), runner.name(), c.seed, c.rapidcheck, options.seed, c.index);
  f.failure.step    = failure.step;
  f.failure.kind    = failure.kind;
  f.failure.check   = failure.check;
  f.failure.message = describe(failure);
  f.schedule        = c.schedule;
  return f;
}

RwStressResult run_rw_stress(RwStressOptions const& o,
                             RwRunner& runner,
                             RwStressObserver const& observer) {
  using clock      = std::chrono::steady_clock;
  auto const start = clock::now();
  auto seconds     = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };
  RwStressResult result;
  double last_tick = 0;
  for (std::uint64_t n = 0;; ++n) {
    result.stop_reason = stop_reason(o, result.stats, n, seconds());
    if (!result.stop_reason.empty()) break;
    RwStressCase const c = make_rw_case(o, o.only_case.value_or(n));
    RwRunOutcome const r = runner.run(c.schedule);
    result.stats.cases += 1;
    result.stats.run.add(r.stats);
    add_coverage(result.stats, c.schedule, r.steps_run);
    if (r.failure) {
      ++result.stats.failures;
      RwSavedFailure saved{{}, {}, rw_failure_file_for(o, c, runner, *r.failure), *r.failure};
      try {
        saved.path = schedule::save_failure(saved.file, o.out_dir);
      } catch (std::exception const& e) {
        saved.save_error = e.what();
      }
      if (observer.on_failure) observer.on_failure(saved);
      result.failures.push_back(std::move(saved));
    }
    result.stats.elapsed = seconds();
    if (observer.on_tick && result.stats.elapsed - last_tick >= o.tick_seconds) {
      last_tick = result.stats.elapsed;
      observer.on_tick(result.stats);
    }
  }
  result.stats.elapsed = seconds();
  return result;
}

}  // namespace heaplab::runner
