// `heaplab minimize FILE`: delta debugging of a failing schedule of any family
// (runner/minimize.hpp, docs/replay.md "Minimize"): ddmin over the steps, then the family's own
// reductions.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "files.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/runner/minimize.hpp"
#include "heaplab/runner/registry.hpp"
#include "options.hpp"

namespace heaplab::cli {
namespace {

struct MinimizeCli {
  std::string file;
  std::string runner;   // default: the failure file's runner, else the family's reference
  unsigned reruns = 0;  // default: 1 for deterministic runners, 5 otherwise
  std::string out;
  std::size_t max_runs         = 20000;
  double minutes               = 10;
  bool no_config               = false;
  bool no_sizes                = false;
  bool quiet                   = false;
  std::uint64_t placement_seed = 1;
  int watchdog_ms              = 0;
};

std::filesystem::path default_output(std::string const& input) {
  std::filesystem::path p(input);
  return p.parent_path() / (p.stem().string() + ".min.json");
}

/// Why minimize cannot write `out`, or "" when it can: the output must not be the input (however
/// spelled) and must pass output_file_problem. Checked before any minimization work.
std::string output_problem(std::filesystem::path const& out, std::filesystem::path const& input) {
  if (input == "-" && out.filename() == "-.min.json")
    return "the input is standard input (-): name the output with -o FILE";
  if (same_file(out, input))
    return "the output " + out.string() + " is the input file " + input.string() +
           "; refusing to overwrite the input (choose another -o)";
  if (auto const why = output_file_problem(out); !why.empty())
    return "cannot write the output " + out.string() + ": " + why;
  return {};
}

/// The runner to minimize with, or null (after saying why) when it cannot be made or runs
/// another family's schedules.
std::unique_ptr<runner::Runner> make_minimize_runner(MinimizeCli const& cli,
                                                     runner::Family const& family,
                                                     std::string const& runner_name) {
  runner::RunnerOptions ro;
  ro.seed = cli.placement_seed;
  if (cli.watchdog_ms > 0) ro.watchdog_ms = static_cast<unsigned>(cli.watchdog_ms);
  try {
    runner::Family const& of_runner = runner::family_of_runner(runner_name);
    if (&of_runner != &family)
      throw core::precondition_error("it runs " + of_runner.name() + " schedules; this is a " +
                                     family.name() + " file");
    return runner::make_runner(runner_name, ro);
  } catch (std::exception const& e) {
    std::fprintf(stderr,
                 "heaplab minimize: runner '%s': %s%s\n",
                 runner_name.c_str(),
                 e.what(),
                 cli.runner.empty() ? " (choose another with --runner)" : "");
    return nullptr;
  }
}

runner::MinimizeOptions minimize_options(MinimizeCli const& cli, runner::Runner const& r) {
  runner::MinimizeOptions mo;
  mo.reruns           = cli.reruns ? cli.reruns : (r.deterministic() ? 1u : 5u);
  mo.max_runs         = cli.max_runs;
  mo.seconds          = cli.minutes * 60;
  mo.reductions.heap  = !cli.no_config;
  mo.reductions.sizes = !cli.no_sizes;
  if (!cli.quiet)
    mo.log = [](std::string const& line) {
      std::printf("  %s\n", line.c_str());
      std::fflush(stdout);
    };
  return mo;
}

void print_minimize_start(MinimizeCli const& cli,
                          runner::AnySchedule const& input,
                          std::string const& runner_name,
                          runner::MinimizeOptions const& mo,
                          std::optional<runner::FailureSignature> const& target) {
  runner::Family const& family = input.family();
  std::printf(
      "heaplab minimize %s: %s schedule, %zu steps, %s, runner %s, %u run%s per candidate%s\n",
      schedule::terminal_safe(cli.file).c_str(),
      family.name().c_str(),
      family.steps(input),
      family.size_summary(input).c_str(),
      runner_name.c_str(),
      mo.reruns,
      mo.reruns == 1 ? "" : "s",
      target ? (", target: " + std::string(runner::to_string(target->kind)) + " " + target->check)
                   .c_str()
             : ", target: the first failure");
  std::fflush(stdout);
}

/// Writes the minimized file to `out`: a failure file (with a minimize origin) for a failure
/// file, a schedule file for a schedule file. False (after saying why) when it cannot.
bool write_minimized(MinimizeCli const& cli,
                     std::filesystem::path const& out,
                     runner::Replayable const& input,
                     runner::Runner const& r,
                     runner::MinimizeResult const& result) {
  runner::Family const& family = input.family();
  try {
    if (input.failure_file) {
      runner::FailureFile f   = *input.failure_file;
      f.created               = runner::utc_now_iso8601();
      f.git_commit            = runner::git_commit();
      f.gpu                   = r.device_name();
      f.runner                = r.name();
      f.origin                = {};
      f.origin.command        = "minimize";
      f.origin.minimized_from = cli.file;
      f.origin.original_steps = family.steps(input.schedule);
      f.failure               = result.failure.record();
      f.schedule              = result.schedule;
      runner::validate(f);
      write_file_atomically(out, runner::dump(f));
    } else {
      write_file_atomically(out, family.to_json(result.schedule).dump(2) + "\n");
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab minimize: %s; %s was not written\n", e.what(), out.c_str());
    return false;
  }
  return true;
}

void print_minimize_result(runner::AnySchedule const& input,
                           runner::MinimizeResult const& result,
                           double seconds,
                           std::filesystem::path const& out,
                           std::string const& runner_name) {
  runner::Family const& family = input.family();
  std::printf(
      "heaplab minimize: steps %zu -> %zu, %s -> %s; %zu runs in %.1f s%s\n"
      "  failure: step %zu, %s, check %s: %s\n"
      "  wrote %s\n  replay it: %s replay %s%s\n",
      result.original_steps,
      family.steps(result.schedule),
      family.size_summary(input).c_str(),
      family.size_summary(result.schedule).c_str(),
      result.runs,
      seconds,
      result.budget_exhausted ? " (budget exhausted: the result may shrink further; rerun on it)"
                              : "",
      result.failure.step,
      runner::to_string(result.failure.kind),
      result.failure.check.c_str(),
      result.failure.message.c_str(),
      out.c_str(),
      program_path().c_str(),
      out.c_str(),
      runner_name == family.reference_runner() ? "" : (" --runner " + runner_name).c_str());
}

[[noreturn]] void end_after_hang() {
  std::printf(
      "heaplab minimize: a candidate hung; the smallest failing file so far is written. The\n"
      "process ends now (exit status %d); run minimize on the written file to continue.\n",
      kExitHang);
  std::fflush(stdout);
  std::_Exit(kExitHang);
}

int minimize(MinimizeCli const& cli) {
  std::optional<runner::Replayable> loaded;
  try {
    loaded = runner::load_replayable(cli.file);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab minimize: %s\n", e.what());
    return kExitUsage;
  }
  std::filesystem::path const out =
      cli.out.empty() ? default_output(cli.file) : std::filesystem::path(cli.out);
  if (std::string const problem = output_problem(out, cli.file); !problem.empty()) {
    std::fprintf(stderr, "heaplab minimize: %s\n", problem.c_str());
    return kExitUsage;
  }
  runner::Family const& family            = loaded->family();
  auto const* failure_file                = loaded->failure_file ? &*loaded->failure_file : nullptr;
  std::string const runner_name           = !cli.runner.empty() ? cli.runner
                                            : failure_file      ? failure_file->runner
                                                                : family.reference_runner();
  std::unique_ptr<runner::Runner> const r = make_minimize_runner(cli, family, runner_name);
  if (!r) return kExitUsage;

  std::optional<runner::FailureSignature> target;
  if (failure_file)
    target = runner::FailureSignature{failure_file->failure.kind, failure_file->failure.check};
  runner::MinimizeOptions const mo = minimize_options(cli, *r);
  print_minimize_start(cli, loaded->schedule, runner_name, mo, target);
  auto const start = std::chrono::steady_clock::now();
  std::string why;
  bool input_ran    = false;
  auto const result = runner::minimize(*r, loaded->schedule, target, mo, &why, &input_ran);
  double const seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result && !input_ran) {
    std::printf("heaplab minimize: nothing was checked: %s (exit status %d)\n",
                why.c_str(),
                kExitNotChecked);
    return kExitNotChecked;
  }
  if (!result) {
    std::printf("heaplab minimize: nothing to minimize: %s\n", why.c_str());
    return kExitFailed;
  }
  if (!write_minimized(cli, out, *loaded, *r, *result)) return kExitUsage;
  print_minimize_result(loaded->schedule, *result, seconds, out, runner_name);
  if (result->hang_aborted) end_after_hang();
  return kExitPassed;
}

}  // namespace

void add_minimize(CLI::App& app) {
  auto cli  = std::make_shared<MinimizeCli>();
  auto* cmd = app.add_subcommand("minimize", "shrink a failing schedule or failure file");
  cmd->option_defaults()->always_capture_default();
  cmd->footer(
      "Shrinks a failing schedule or failure file of any family (docs/replay.md \"Minimize\"):\n"
      "cut the steps after the failure, ddmin over the steps, then the family's reductions (heap:\n"
      "the smallest M, smaller waves: threads, counts, fractions, simpler divergence, fewer\n"
      "links; rw: fewer threads, a smaller pool). A candidate counts as failing if one\n"
      "of K runs (--reruns) fails the same way: same failure kind and check name as the failure\n"
      "file records (for a schedule file: as its first failure). Writes the smaller file (a\n"
      "failure file for a failure file) and prints the step counts before and after.\n"
      "The output (-o, default FILE with .min.json) is checked before any work: it must not be\n"
      "the input file (however spelled) and its directory must exist and be writable; it is\n"
      "written to a temporary file in that directory and renamed (no .tmp is left behind).\n"
      "Exit status: 0 written, 1 the input does not fail the same way, 4 the budget ended before\n"
      "the input ran, 2 bad input, runner or\n"
      "output path, 3 a candidate hung (the smallest failing file so far is written first).\n"
      "Examples:\n"
      "  heaplab minimize failures/20261122T101112Z-9417744632.json\n"
      "  heaplab minimize proofs_tests/model/data/fails_digest.json -o /tmp/small.json\n"
      "  heaplab minimize gpu-failure.json --runner gpu --reruns 5 --minutes 30");
  cmd->add_option("file", cli->file, "failure file or schedule file")->required();
  cmd->add_option("--runner",
                  cli->runner,
                  "a runner of the file's family (heap: model, differential-model, gpu; rw: "
                  "rw-model, rw-cpu, rw-gpu; default: the failure file's runner, else the family's "
                  "reference runner)")
      ->check(CLI::Validator(
          [](std::string& name) -> std::string {
            return runner::Registry::instance().runner(name) ? std::string()
                                                             : runner::unavailable_reason(name);
          },
          "RUNNER"));
  cmd->add_option("--reruns",
                  cli->reruns,
                  "K: runs per candidate; failing once is enough (default 1 for deterministic "
                  "runners, 5 for the nondeterministic ones: gpu, rw-cpu, rw-gpu)")
      ->check(unsigned_integer(1, 1000))
      ->default_str("");
  cmd->add_option("-o,--output",
                  cli->out,
                  "output file (default: FILE with .min.json); never the input file, its directory "
                  "must exist and be writable (both checked before any work); written atomically");
  cmd->add_option("--max-runs", cli->max_runs, "budget: runs of the runner in all")
      ->check(unsigned_integer(1, 1000000000));
  cmd->add_option("--minutes", cli->minutes, "budget: wall-clock minutes")
      ->check(finite_number(0, 1e6, true));
  cmd->add_flag("--no-config", cli->no_config, "do not shrink the heap (heap: M; rw: the pool)");
  cmd->add_flag("--no-sizes", cli->no_sizes, "do not shrink the steps (wave sizes, fractions)");
  cmd->add_flag("--quiet,-q", cli->quiet, "do not list each reduction");
  cmd->add_option("--placement-seed",
                  cli->placement_seed,
                  "differential-model: seed of its random legal placements")
      ->check(unsigned_integer(0, std::numeric_limits<std::uint64_t>::max()));
  cmd->add_option("--watchdog-ms", cli->watchdog_ms, "gpu: budget of one step's kernels in ms")
      ->check(unsigned_integer(1, 86400000))
      ->default_str("");
  cmd->callback([cli] { std::exit(minimize(*cli)); });
}

}  // namespace heaplab::cli
