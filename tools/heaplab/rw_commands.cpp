// The random-walk pool's side of heaplab stress, replay, minimize and show (rw_commands.hpp).
#include "rw_commands.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/rw_minimize.hpp"
#include "heaplab/runner/rw_registry.hpp"
#include "heaplab/runner/rw_stress.hpp"
#include "heaplab/schedule/json.hpp"
#include "heaplab/schedule/rw_json.hpp"
#include "options.hpp"

namespace heaplab::cli {

namespace {

std::string counts_text(std::map<std::string, std::uint64_t> const& counts) {
  if (counts.empty()) return "none";
  std::string out;
  for (auto const& [key, n] : counts)
    out += (out.empty() ? "" : ", ") + key + " " + std::to_string(n);
  return out;
}

std::string progress_text(runner::RwStressStats const& s) {
  char buf[256];
  std::snprintf(buf,
                sizeof buf,
                "elapsed %6.1f s | cases %llu | waves %llu | pages %llu | nulls %llu | failures "
                "%llu",
                s.elapsed,
                static_cast<unsigned long long>(s.cases),
                static_cast<unsigned long long>(s.run.waves),
                static_cast<unsigned long long>(s.run.pages),
                static_cast<unsigned long long>(s.run.out_of_pages + s.run.exhaustions),
                static_cast<unsigned long long>(s.failures));
  return buf;
}

void print_rw_summary(runner::RwStressResult const& r) {
  auto const& s = r.stats;
  std::printf("stress: %s\n", progress_text(s).c_str());
  std::printf(
      "heaplab stress: %llu cases, %llu waves, %llu requests, %llu pages handed out, %llu "
      "handles freed; nulls: %llu out of pages, %llu bounded-walk exhaustions; mean X_i %.2f, "
      "max X_i %u; %.1f s; stopped: %s\n",
      static_cast<unsigned long long>(s.cases),
      static_cast<unsigned long long>(s.run.waves),
      static_cast<unsigned long long>(s.run.requests),
      static_cast<unsigned long long>(s.run.pages),
      static_cast<unsigned long long>(s.run.freed),
      static_cast<unsigned long long>(s.run.out_of_pages),
      static_cast<unsigned long long>(s.run.exhaustions),
      s.run.requests ? static_cast<double>(s.run.walk_steps) / static_cast<double>(s.run.requests)
                     : 0.0,
      s.run.max_walk_steps,
      s.elapsed,
      r.stop_reason.c_str());
  std::printf("coverage: alloc waves by algorithm: %s\n", counts_text(s.algorithms).c_str());
  std::printf("coverage: alloc waves by lanes: %s\n", counts_text(s.lanes).c_str());
  std::printf("coverage: free waves: %s\n", counts_text(s.frees).c_str());
}

int rw_verdict(runner::RwStressResult const& r, std::uint64_t seed) {
  auto const sd = static_cast<unsigned long long>(seed);
  if (!r.failures.empty()) {
    std::printf("heaplab stress: FAILED, %zu failure%s (seed %llu):\n",
                r.failures.size(),
                r.failures.size() == 1 ? "" : "s",
                sd);
    for (auto const& f : r.failures)
      std::printf("  %s  step %zu %s %s\n",
                  f.path.empty() ? "(not saved)" : f.path.c_str(),
                  f.failure.step,
                  schedule::to_string(f.failure.kind),
                  f.failure.check.c_str());
    return kExitFailed;
  }
  if (r.stats.cases == 0) {
    std::printf("heaplab stress: NOTHING TESTED: no case ran (seed %llu); exit status %d\n",
                sd,
                kExitNotChecked);
    return kExitNotChecked;
  }
  std::printf("heaplab stress: PASSED, no failures (seed %llu)\n", sd);
  return kExitPassed;
}

runner::RwStressOptions rw_stress_options(RwStressArgs const& a) {
  runner::RwStressOptions o;
  o.seconds      = a.seconds;
  o.seed         = a.seed_given ? a.seed
                                : static_cast<std::uint64_t>(
                              std::chrono::system_clock::now().time_since_epoch().count()) %
                              1000000007ull;
  o.max_cases    = a.cases;
  o.only_case    = a.only_case;
  o.max_failures = a.max_failures;
  o.out_dir      = a.out_dir;
  o.tick_seconds = a.progress_every;
  return o;
}

}  // namespace

int rw_stress(RwStressArgs const& a) {
  runner::RwStressOptions const o = rw_stress_options(a);
  if (a.dump) {
    if (!a.only_case || !a.seed_given) {
      std::fprintf(stderr,
                   "heaplab stress: error: --dump needs --case K and the --seed of the run\n");
      return kExitUsage;
    }
    std::cout << schedule::dump(runner::make_rw_case(o, *a.only_case).schedule);
    return kExitPassed;
  }
  std::unique_ptr<runner::RwRunner> r;
  try {
    r = runner::make_rw_runner(a.runner, {a.os_threads, 0});
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab stress: error: --runner %s: %s\n", a.runner.c_str(), e.what());
    return kExitUsage;
  }
  std::printf("heaplab stress: runner %s, seed %llu, budget %.1f s%s; failure files in %s/\n",
              a.runner.c_str(),
              static_cast<unsigned long long>(o.seed),
              o.seconds,
              o.max_cases ? (", cases below " + std::to_string(o.max_cases)).c_str() : "",
              a.out_dir.c_str());
  if (!a.seed_given)
    std::printf("heaplab stress: (no --seed given; repeat this run with --seed %llu)\n",
                static_cast<unsigned long long>(o.seed));
  std::fflush(stdout);
  runner::RwStressObserver obs;
  obs.on_tick = [&](runner::RwStressStats const& s) {
    if (!a.quiet) std::printf("stress: %s\n", progress_text(s).c_str());
    std::fflush(stdout);
  };
  obs.on_failure = [&](runner::RwSavedFailure const& f) {
    std::printf("FAILURE case %llu, seed %llu, at step %zu: %s, check %s: %s\n",
                static_cast<unsigned long long>(f.file.origin.case_index.value_or(0)),
                static_cast<unsigned long long>(f.file.seed),
                f.failure.step,
                schedule::to_string(f.failure.kind),
                f.failure.check.c_str(),
                f.file.failure.message.c_str());
    if (f.path.empty())
      std::printf("  the failure file could not be written: %s\n", f.save_error.c_str());
    else
      std::printf("  failure file: %s\n  replay it:    %s replay %s\n",
                  f.path.c_str(),
                  program_path().c_str(),
                  f.path.c_str());
    std::fflush(stdout);
  };
  runner::RwStressResult const result = runner::run_rw_stress(o, *r, obs);
  print_rw_summary(result);
  return rw_verdict(result, o.seed);
}

// ------------------------------------------------------------------------------------ replay

namespace {

/// The runners to replay on: --model: rw-model; --runner: those; else rw-model, the recorded
/// runner, rw-cpu and rw-gpu (each once).
std::vector<std::string> rw_runners_for(RwReplayArgs const& a,
                                        schedule::RwFailureFile const* failure) {
  if (a.model_only) return {"rw-model"};
  std::vector<std::string> out;
  auto add = [&](std::string const& n) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  if (!a.runners.empty()) {
    for (auto const& n : a.runners) add(n);
    return out;
  }
  add("rw-model");
  if (failure) add(failure->runner);
  add("rw-cpu");
  add("rw-gpu");
  return out;
}

struct RwSide {
  std::string name;
  enum class State { passed, failed, not_run } state = State::not_run;
  std::string reason;
  std::optional<runner::RwFailure> failure;
};

/// Runs one side: once for a deterministic runner, up to 5 times (until it fails) otherwise.
RwSide run_side(std::string const& name, schedule::RwSchedule const& s, bool detailed) {
  RwSide side{name, RwSide::State::not_run, {}, {}};
  std::unique_ptr<runner::RwRunner> r;
  try {
    r = runner::make_rw_runner(name);
  } catch (std::exception const& e) {
    side.reason = e.what();
    return side;
  }
  if (auto const why = r->unsupported(s); !why.empty()) {
    side.reason = why;
    return side;
  }
  unsigned const tries = r->deterministic() ? 1 : 5;
  for (unsigned k = 0; k < tries && !side.failure; ++k) {
    runner::RwWaveCallback cb;
    if (detailed && k == 0)
      cb = [&](runner::RwWaveReport const& w) {
        std::printf("  %3zu  %-60s held %llu, used pages %llu%s  %s\n",
                    w.step,
                    w.description.c_str(),
                    static_cast<unsigned long long>(w.held),
                    static_cast<unsigned long long>(w.used_pages),
                    w.nulls ? (", nulls " + std::to_string(w.nulls)).c_str() : "",
                    w.ok ? "ok" : "FAILED");
      };
    side.failure = r->run(s, cb).failure;
  }
  side.state = side.failure ? RwSide::State::failed : RwSide::State::passed;
  return side;
}

void print_side(RwSide const& side, schedule::RwFailureFile const* f, bool detailed) {
  if (side.state == RwSide::State::not_run) {
    std::printf("%s side: not run: %s\n", side.name.c_str(), side.reason.c_str());
    return;
  }
  if (side.state == RwSide::State::passed) {
    std::printf("%s side: passed\n", side.name.c_str());
    return;
  }
  auto const& fl = *side.failure;
  std::printf("%s side: FIRST FAILURE at step %zu: %s, check %s\n  message: %s\n",
              side.name.c_str(),
              fl.step,
              schedule::to_string(fl.kind),
              fl.check.c_str(),
              runner::describe(fl).c_str());
  if (detailed)
    for (std::size_t i = 1; i < fl.violations.size() && i < 10; ++i)
      std::printf("  also: %s\n", fl.violations[i].to_string().c_str());
  if (f && f->runner == side.name)
    std::printf("  %s\n",
                fl.kind == f->failure.kind && fl.check == f->failure.check
                    ? "reproduced: the recorded failure"
                    : "failed differently from the recorded failure");
}

}  // namespace

RwReplayOutcome rw_replay(std::string const& file,
                          schedule::RwReplayable const& loaded,
                          RwReplayArgs const& args,
                          bool detailed) {
  auto const* f                   = std::get_if<schedule::RwFailureFile>(&loaded);
  schedule::RwSchedule const& sch = schedule::schedule_of(loaded);
  RwReplayOutcome out;
  out.recorded =
      f ? f->runner + ": " + schedule::to_string(f->failure.kind) + ", check " + f->failure.check
        : "schedule";
  if (detailed)
    std::printf("replay %s: random-walk %s (%s), T = %u pages, %zu waves\n",
                file.c_str(),
                f ? "failure file" : "schedule",
                out.recorded.c_str(),
                sch.pool.num_pages,
                sch.steps.size());
  std::vector<RwSide> sides;
  for (auto const& name : rw_runners_for(args, f)) {
    if (detailed) std::printf("%s side:\n", name.c_str());
    sides.push_back(run_side(name, sch, detailed));
    print_side(sides.back(), f, detailed);
    out.sides.push_back(name + (sides.back().state == RwSide::State::passed   ? ": passes"
                                : sides.back().state == RwSide::State::failed ? ": fails"
                                                                              : ": not run"));
  }
  bool const explicit_not_run =
      !args.runners.empty() && std::any_of(sides.begin(), sides.end(), [](RwSide const& s) {
        return s.state == RwSide::State::not_run;
      });
  RwSide const* recorded = nullptr;
  bool any_failed = false, any_passed = false;
  for (auto const& s : sides) {
    if (f && s.name == f->runner) recorded = &s;
    any_failed = any_failed || s.state == RwSide::State::failed;
    any_passed = any_passed || s.state == RwSide::State::passed;
  }
  std::string line;
  if (recorded && recorded->state == RwSide::State::failed) {
    bool const same =
        recorded->failure->kind == f->failure.kind && recorded->failure->check == f->failure.check;
    out.verdict = same ? "still fails" : "fails differently";
    line =
        same ? "STILL FAILS: the recorded failure (" + out.recorded + ") reproduced on " + f->runner
             : "FAILS DIFFERENTLY: " + f->runner + " failed, but not as recorded (" + out.recorded +
                   ")";
    out.status = kExitFailed;
  } else if (any_failed) {
    out.verdict = "fails";
    line        = "FAILED on a side (see above)";
    out.status  = kExitFailed;
  } else if (f && (!recorded || recorded->state == RwSide::State::not_run)) {
    out.verdict = "not checked";
    line        = "NOT CHECKED: the recorded failure came from the " + f->runner +
           " runner, which could not run here" +
           (recorded ? " (" + recorded->reason + ")" : " (not among the runners asked for)") +
           "; the sides that ran passed, which says nothing about the " + f->runner + " failure";
    out.status = kExitNotChecked;
  } else if (f) {
    out.verdict = "fixed";
    line = "FIXED: the recorded failure (" + out.recorded + ") did not reproduce on " + f->runner +
           ", and every side that ran passed";
    out.status = kExitPassed;
  } else {
    out.verdict = any_passed ? "passes" : "not checked";
    line = any_passed ? "passed on every side that ran" : "NOT CHECKED: no runner could run it";
    out.status = any_passed ? kExitPassed : kExitNotChecked;
  }
  if (explicit_not_run) out.status = out.status == kExitFailed ? kExitFailed : kExitUsage;
  std::printf(detailed ? "\nverdict: %s (exit status %d)\n" : "  verdict: %s (exit status %d)\n",
              line.c_str(),
              out.status);
  return out;
}

// ---------------------------------------------------------------------------------- minimize

int rw_minimize(RwMinimizeArgs const& a, schedule::RwReplayable const& loaded) {
  auto const* f                     = std::get_if<schedule::RwFailureFile>(&loaded);
  schedule::RwSchedule const& input = schedule::schedule_of(loaded);
  std::string const name            = !a.runner.empty() ? a.runner : f ? f->runner : "rw-model";
  std::unique_ptr<runner::RwRunner> r;
  try {
    r = runner::make_rw_runner(name);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab minimize: runner '%s': %s\n", name.c_str(), e.what());
    return kExitUsage;
  }
  runner::RwMinimizeOptions mo;
  mo.reruns   = a.reruns ? a.reruns : (r->deterministic() ? 1u : 5u);
  mo.max_runs = a.max_runs;
  mo.seconds  = a.seconds;
  if (!a.quiet)
    mo.log = [](std::string const& line) {
      std::printf("  %s\n", line.c_str());
      std::fflush(stdout);
    };
  std::printf("heaplab minimize %s: %zu waves, T = %u, runner %s, %u run%s per candidate\n",
              a.file.c_str(),
              input.steps.size(),
              input.pool.num_pages,
              name.c_str(),
              mo.reruns,
              mo.reruns == 1 ? "" : "s");
  auto const m = runner::rw_minimize(input, *r, f ? f->failure.check : std::string(), mo);
  if (!m.reproduced) {
    std::printf(
        "heaplab minimize: nothing to minimize: the input does not fail in %u run(s) on "
        "'%s'\n",
        mo.reruns,
        name.c_str());
    return kExitFailed;
  }
  try {
    if (f) {
      schedule::RwFailureFile out = *f;
      out.created                 = schedule::utc_now_iso8601();
      out.git_commit              = runner::git_commit();
      out.gpu                     = r->device_name();
      out.runner                  = name;
      out.origin                  = {};
      out.origin.command          = "minimize";
      out.origin.minimized_from   = a.file;
      out.origin.original_steps   = input.steps.size();
      out.failure                 = {
                          m.failure->step, m.failure->kind, m.failure->check, runner::describe(*m.failure)};
      out.schedule = m.schedule;
      schedule::write_failure(out, a.out);
    } else {
      schedule::write_text_file(a.out, schedule::dump(m.schedule));
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab minimize: %s; %s was not written\n", e.what(), a.out.c_str());
    return kExitUsage;
  }
  std::printf(
      "heaplab minimize: waves %zu -> %zu, T %u -> %u; %zu runs\n  failure: %s, check %s: "
      "%s\n  wrote %s\n  replay it: %s replay %s\n",
      input.steps.size(),
      m.schedule.steps.size(),
      input.pool.num_pages,
      m.schedule.pool.num_pages,
      m.runs,
      schedule::to_string(m.failure->kind),
      m.failure->check.c_str(),
      runner::describe(*m.failure).c_str(),
      a.out.c_str(),
      program_path().c_str(),
      a.out.c_str());
  return kExitPassed;
}

// -------------------------------------------------------------------------------------- show

int rw_show(std::string const& file, schedule::RwReplayable const& loaded, bool as_json) {
  auto const* f                   = std::get_if<schedule::RwFailureFile>(&loaded);
  schedule::RwSchedule const& sch = schedule::schedule_of(loaded);
  if (as_json) {
    std::cout << (f ? schedule::dump(*f) : schedule::dump(sch));
    return 0;
  }
  if (f)
    std::cout << "failure " << file << ": runner " << f->runner << ", gpu " << f->gpu << ", commit "
              << f->git_commit << ", seed " << f->seed << ", origin " << f->origin.command
              << "\n  failure at step " << f->failure.step << ": "
              << schedule::to_string(f->failure.kind) << ", check " << f->failure.check << ": "
              << f->failure.message << "\n";
  std::cout << (f ? "its schedule" : "schedule " + file) << " (format " << schedule::kRwFormatName
            << " version " << schedule::kRwFormatVersion << ")\n";
  if (!sch.description.empty()) std::cout << "  " << sch.description << "\n";
  auto const pretaken = schedule::rw_pretaken_pages(sch.pool);
  std::cout << "pool: T = " << sch.pool.num_pages << " pages of " << sch.pool.page_bytes << " B, "
            << sch.pool.word_bits << "-bit words, max_steps " << sch.pool.max_steps << ", "
            << pretaken.size() << " pre-taken\n";
  std::cout << "steps (" << sch.steps.size() << "):\n";
  for (std::size_t i = 0; i < sch.steps.size(); ++i)
    std::cout << "  " << i << ": " << schedule::describe(sch.steps[i]) << "\n";
  return 0;
}

}  // namespace heaplab::cli
