// `heaplab replay FILE` and `heaplab show FILE` (docs/replay.md, docs/schedules.md).
//
// replay accepts schedule files and failure files. It runs the model side always and the GPU side
// where the GPU runner is built and a GPU is present (otherwise one line says why not), plus any
// runner named with --runner; one line per step; at the first failure of a runner, the failure:
// kind, check, message, violations, the diff against the model (step, block, field, expected,
// actual) and the part of the snapshot it is about. For a failure file it also says whether the
// recorded failure reproduced. Exit status: 0 every runner passed, 1 a runner failed, 2 the file
// is unreadable or malformed (or a runner named explicitly cannot run here), 3 a hang (the
// process ends at once, docs/workflow.md "Hangs").
// show pretty-prints either kind of file (or its canonical JSON with --json).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/runner/report.hpp"
#include "heaplab/schedule/failure_file.hpp"
#include "heaplab/schedule/json.hpp"

namespace heaplab::cli {
namespace {

constexpr int kExitHang = 3;

struct ReplayOptions {
  std::string file;
  bool model = false;
  std::vector<std::string> runners;
  bool quiet                   = false;
  bool full_dump               = false;
  std::size_t max_violations   = 10;
  std::uint64_t placement_seed = 1;
  int watchdog_ms              = 0;
};

std::string config_summary(core::HeapConfig const& c) {
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

/// The record of a failure file: where it came from and what failed.
std::string failure_header(schedule::FailureFile const& f) {
  std::ostringstream out;
  out << "failure file: runner " << f.runner << ", gpu " << f.gpu << ", commit " << f.git_commit
      << ", created " << f.created << ", seed " << f.seed;
  if (f.rapidcheck)
    out << " (RapidCheck seed " << f.rapidcheck->seed << ", size " << f.rapidcheck->size << ")";
  out << "\n  origin: " << f.origin.command;
  if (f.origin.run_seed) out << " --seed " << *f.origin.run_seed;
  if (!f.origin.profile.empty()) out << " --profile " << f.origin.profile;
  if (f.origin.heap_mib) out << " --heap-mib " << *f.origin.heap_mib;
  if (f.origin.case_index) out << ", case " << *f.origin.case_index;
  if (!f.origin.minimized_from.empty()) out << ", minimized from " << f.origin.minimized_from;
  if (f.origin.original_steps) out << " (" << *f.origin.original_steps << " steps)";
  out << "\n  recorded failure: step " << f.failure.step << ", "
      << schedule::to_string(f.failure.kind) << ", check " << f.failure.check << ": "
      << f.failure.message << "\n";
  return out.str();
}

/// The runners to use: --model alone; else those named; else the model, the file's runner and
/// the GPU (each once).
std::vector<std::string> runners_for(ReplayOptions const& opt, schedule::Replayable const& r) {
  if (opt.model) return {"model"};
  if (!opt.runners.empty()) return opt.runners;
  std::vector<std::string> out = {"model"};
  if (auto const* f = std::get_if<schedule::FailureFile>(&r))
    if (f->runner != "model" && f->runner != "gpu") out.push_back(f->runner);
  out.push_back("gpu");
  return out;
}

int replay(ReplayOptions const& opt) {
  schedule::Replayable loaded;
  try {
    loaded = schedule::load_replayable(opt.file);
  } catch (schedule::schedule_error const& e) {
    std::fprintf(stderr, "heaplab replay: %s\n", e.what());
    return 2;
  }
  schedule::Schedule const& sched = schedule::schedule_of(loaded);
  auto const* failure_file        = std::get_if<schedule::FailureFile>(&loaded);
  std::printf("replay %s: %s, %zu step%s; %s\n",
              opt.file.c_str(),
              failure_file ? "failure file" : "schedule file",
              sched.steps.size(),
              sched.steps.size() == 1 ? "" : "s",
              config_summary(sched.config).c_str());
  if (failure_file) std::printf("%s", failure_header(*failure_file).c_str());

  bool const explicit_runners = opt.model || !opt.runners.empty();
  int status                  = 0;
  for (auto const& name : runners_for(opt, loaded)) {
    runner::RunnerOptions ro;
    ro.placement_seed = opt.placement_seed;
    if (opt.watchdog_ms > 0) ro.watchdog_budget = std::chrono::milliseconds(opt.watchdog_ms);
    std::unique_ptr<runner::ScheduleRunner> r;
    try {
      r = runner::make_runner(name, ro);
    } catch (runner::runner_unavailable const& e) {
      std::printf("\n%s side: not run: %s\n", name.c_str(), e.what());
      if (explicit_runners) status = std::max(status, 2);
      continue;
    } catch (std::exception const& e) {
      if (explicit_runners) {
        std::fprintf(stderr, "heaplab replay: %s\n", e.what());
        return 2;
      }
      // A failure file from a runner this heaplab does not have (e.g. a test's fake).
      std::printf("\n%s side: not run: %s\n", name.c_str(), e.what());
      continue;
    }
    if (auto const support = r->supports(sched.config); !support.supported) {
      std::printf("\n%s side: not run: this config is not supported: %s\n",
                  name.c_str(),
                  support.reason.c_str());
      if (explicit_runners) status = std::max(status, 2);
      continue;
    }
    std::string const device = r->device_name();
    std::printf("\n== %s side (%s) ==\n",
                name.c_str(),
                device == "none" ? "CPU" : ("device: " + device).c_str());
    runner::RunOutcome outcome;
    try {
      outcome = r->run(sched, [&](runner::StepReport const& s) {
        if (!opt.quiet || !s.ok) std::printf("%s\n", s.summary().c_str());
        std::fflush(stdout);
      });
    } catch (std::exception const& e) {
      std::fprintf(stderr, "heaplab replay: %s\n", e.what());
      return 2;
    }
    if (outcome.ok()) {
      std::printf("replay passed: %zu steps, the invariant catalog held after every step (%s)\n",
                  outcome.steps_run,
                  name.c_str());
      if (failure_file)
        std::printf("the recorded failure (runner %s) did not reproduce on %s\n",
                    failure_file->runner.c_str(),
                    name.c_str());
      continue;
    }
    runner::Failure const& f = *outcome.failure;
    runner::ReportOptions report;
    report.max_violations = opt.max_violations;
    report.full_dump      = opt.full_dump;
    report.runner         = name;
    std::printf("\n%s", runner::format_failure(f, report).c_str());
    std::printf(
        "\nreplay FAILED at step %zu of %zu (%s)\n", f.step, sched.steps.size(), name.c_str());
    if (failure_file) {
      auto const& rec = failure_file->failure;
      bool const same = rec.kind == f.kind && rec.check == f.check;
      std::printf("%s the recorded failure (step %llu, %s, %s)\n",
                  same ? (rec.step == f.step ? "reproduced:" : "reproduced (at another step):")
                       : "failed differently from",
                  static_cast<unsigned long long>(rec.step),
                  schedule::to_string(rec.kind),
                  rec.check.c_str());
    }
    status = std::max(status, 1);
    if (f.kind == runner::FailureKind::hang || !r->usable()) {
      std::printf("heaplab replay: a kernel hung; ending the process (exit status %d)\n",
                  kExitHang);
      std::fflush(stdout);
      std::_Exit(kExitHang);
    }
  }
  return status;
}

int show(std::string const& file, bool as_json) {
  schedule::Replayable loaded;
  try {
    loaded = schedule::load_replayable(file);
  } catch (schedule::schedule_error const& e) {
    std::fprintf(stderr, "heaplab show: %s\n", e.what());
    return 2;
  }
  auto const* failure_file        = std::get_if<schedule::FailureFile>(&loaded);
  schedule::Schedule const& sched = schedule::schedule_of(loaded);
  if (as_json) {
    std::cout << (failure_file ? schedule::dump(*failure_file) : schedule::dump(sched));
    return 0;
  }
  if (failure_file) {
    std::cout << "failure " << file << " (format " << schedule::kFailureFormatName << " version "
              << schedule::kFailureFormatVersion << ")\n";
    std::cout << failure_header(*failure_file);
  }
  auto const& c = sched.config;
  std::cout << (failure_file ? "its schedule" : "schedule " + file) << " (format "
            << schedule::kFormatName << " version " << schedule::kFormatVersion << ")\n";
  if (!sched.description.empty()) std::cout << "  " << sched.description << "\n";
  std::cout << "config: M = " << c.num_blocks << " blocks, n = " << c.defrag_factor
            << ", k1 = " << c.k1 << "\n";
  for (std::uint32_t t = 0; t < c.num_types(); ++t) {
    auto const& ty = c.types[t];
    std::cout << "  type " << t << " " << ty.name << ": ";
    if (ty.is_abstract)
      std::cout << "abstract, " << ty.size_bytes << " B";
    else
      std::cout << ty.size_bytes << " B, capacity " << c.capacity(t);
    if (ty.base) std::cout << ", base " << c.types[*ty.base].name;
    std::cout << "\n";
    auto const slots = c.pointer_slots(t);
    for (std::uint32_t s = 0; s < slots.size(); ++s)
      std::cout << "    slot " << s << ": " << schedule::slot_name(c, t, s) << " -> "
                << c.types[slots[s].pointee].name << "\n";
  }
  std::cout << "steps (" << sched.steps.size() << "):\n";
  for (std::size_t i = 0; i < sched.steps.size(); ++i)
    std::cout << "  " << i << ": " << schedule::describe(c, sched.steps[i]) << "\n";
  return 0;
}

}  // namespace

void add_replay(CLI::App& app) {
  auto opt  = std::make_shared<ReplayOptions>();
  auto* cmd = app.add_subcommand(
      "replay",
      "Replay a schedule file or a failure file (docs/replay.md). Runs the reference model\n"
      "always, the GPU runner where it is built and a GPU is present (otherwise a line says why\n"
      "not), and the runner a failure file names; one line per step (live objects, blocks in use,\n"
      "fragmentation F, what the step did), the whole invariant catalog after every step,\n"
      "CompactGpu's obligations after defrag steps, and for differential runners the comparison\n"
      "with the model. At a runner's first failure: kind, check, message, violations, the diff\n"
      "(step, block, field, expected, actual) and the relevant part of the snapshot. For a\n"
      "failure file it says whether the recorded failure reproduced.\n"
      "Exit status: 0 passed, 1 a runner failed, 2 unreadable or malformed file (or an explicitly\n"
      "requested runner cannot run here), 3 a kernel hung (the process ends at once).");
  cmd->add_option(
         "file", opt->file, "schedule file (heaplab-schedule) or failure file (heaplab-failure)")
      ->required();
  cmd->add_flag("--model", opt->model, "replay on the reference model only");
  cmd->add_option("--runner",
                  opt->runners,
                  "replay on these runners only (repeatable): model, differential-model, gpu");
  cmd->add_flag("--quiet,-q", opt->quiet, "print only failing steps and the result");
  cmd->add_flag("--full-dump", opt->full_dump, "on failure, dump the whole snapshot");
  cmd->add_option("--max-violations", opt->max_violations, "violations listed on failure")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--placement-seed",
                  opt->placement_seed,
                  "differential-model: seed of its random legal placements (default 1)");
  cmd->add_option("--watchdog-ms",
                  opt->watchdog_ms,
                  "gpu: budget of one step's kernels in ms (default HEAPLAB_WATCHDOG_MS or 5000)")
      ->check(CLI::Range(1, 86400000));
  cmd->callback([opt] { std::exit(replay(*opt)); });
}

void add_show(CLI::App& app) {
  auto file    = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto* cmd    = app.add_subcommand(
      "show",
      "Pretty-print a schedule file or a failure file: for a failure file its record (runner,\n"
         "GPU, commit, seed, origin, the failure); the config (types, capacities, pointer slots by\n"
         "index) and the steps, one line each. With --json, print the canonical JSON instead (what\n"
         "heaplab writes; reading it back gives the same file). Exit status 2 for a malformed file.");
  cmd->add_option("file", *file, "schedule file or failure file (JSON)")->required();
  cmd->add_flag("--json", *as_json, "print the canonical JSON form");
  cmd->callback([file, as_json] { std::exit(show(*file, *as_json)); });
}

}  // namespace heaplab::cli
