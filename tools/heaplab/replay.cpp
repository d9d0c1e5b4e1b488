// `heaplab replay FILE...` and `heaplab show FILE` (docs/replay.md, docs/schedules.md), for the
// files of every family: the file's family (its schedule's "format", or a failure file's
// "family") decides the runners; nothing here branches on a family.
//
// replay accepts schedule files and failure files. It runs the family's reference runner always
// and the family's replay runners (the GPU ones) where they can run here (otherwise one line says
// why not), plus any runner named with --runner; one line per step; at the first failure of a
// runner, the failure: kind, check, message, violations and the family's detail (for the heap: the
// diff against the model and the part of the snapshot it is about). For a failure file it also
// says whether the recorded failure reproduced, and whether the runner that recorded it could run
// at all. Several files (or directories) give one line per side and file, then a table of
// verdicts. Exit status: 0 every runner that ran passed (and for a failure file its recorded runner
// ran), 1 a runner failed, 2 the file is unreadable or malformed (or a runner named explicitly
// cannot run here), 3 a hang (the process ends at once, docs/workflow.md "Hangs"), 4 not checked:
// nothing failed but the recorded runner could not run here. Several files: the worst, in the
// order 3 2 1 4 0. show pretty-prints either kind of file (or its canonical JSON with --json).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "files.hpp"
#include "heaplab/core/enum_names.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/runner/registry.hpp"
#include "options.hpp"

namespace heaplab::cli {
namespace {

struct ReplayOptions {
  std::vector<std::string> files;  // files and directories
  bool verbose = false;
  bool model   = false;
  std::vector<std::string> runners;
  bool quiet                   = false;
  bool no_perturb              = false;
  bool full_dump               = false;
  std::size_t max_violations   = 10;
  std::uint64_t placement_seed = 1;
  int watchdog_ms              = 0;
  unsigned reruns              = 0;  // 0: 1 for deterministic runners, 5 otherwise
  std::string json;                  // --json: the machine-readable summary's file
  std::string junit;                 // --junit: the same verdicts as JUnit XML
};

/// The record of a failure file: where it came from and what failed.
std::string failure_header(runner::FailureFile const& f) {
  std::ostringstream out;
  out << "failure file: family " << f.family().name() << ", runner " << f.runner << ", gpu "
      << f.gpu << ", commit " << f.git_commit << ", created " << f.created << ", seed " << f.seed;
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
      << runner::to_string(f.failure.kind) << ", check " << f.failure.check << ": "
      << f.failure.message << "\n";
  return out.str();
}

/// The runners to use: --model alone (the family's reference); else those named; else the
/// reference, the file's runner and the family's replay runners (each once).
std::vector<std::string> runners_for(ReplayOptions const& opt, runner::Replayable const& r) {
  runner::Family const& family = r.family();
  if (opt.model) return {family.reference_runner()};
  std::vector<std::string> out;  // each once, in the order given
  auto add = [&](std::string const& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  if (!opt.runners.empty()) {
    for (auto const& name : opt.runners) add(name);
    return out;
  }
  add(family.reference_runner());
  if (r.failure_file) add(r.failure_file->runner);
  for (auto const& name : family.replay_runners()) add(name);
  return out;
}

/// How bad an exit status is: a hang, then an error (unreadable file, a runner asked for that
/// cannot run), then a failure, then "not checked", then success.
int severity(int status) {
  switch (status) {
    case kExitHang:
      return 4;
    case kExitUsage:
      return 3;
    case kExitFailed:
      return 2;
    case kExitNotChecked:
      return 1;
    default:
      return 0;
  }
}

int worse(int a, int b) { return severity(b) > severity(a) ? b : a; }

enum class Verdict {
  passes,
  fails,
  still_fails,
  fails_differently,
  fixed,
  not_checked,
  hang,
  error
};

char const* to_string(Verdict v) {
  static constexpr core::EnumName<Verdict> kNames[] = {
      {Verdict::passes, "passes"},
      {Verdict::fails, "fails"},
      {Verdict::still_fails, "still fails"},
      {Verdict::fails_differently, "fails differently"},
      {Verdict::fixed, "fixed"},
      {Verdict::not_checked, "not checked"},
      {Verdict::hang, "hang"},
      {Verdict::error, "error"}};
  return core::name_of(kNames, v);
}

/// What one runner ("side") did with the file.
struct Side {
  enum class State { passed, failed, not_run };
  std::string name;
  State state = State::not_run;
  std::string reason;             // not_run: why
  bool same_as_recorded = false;  // failed: the kind and check the failure file records
  bool deterministic    = true;
  unsigned tries        = 1;  // passed: how many runs passed
};

struct FileResult {
  std::string file;
  std::string recorded;  // "gpu: divergence, check roots"; "schedule" for a schedule file
  std::vector<Side> sides;
  Verdict verdict = Verdict::error;
  std::string error;  // Verdict::error: the message
  /// A side's runner is unusable after a failure that is no hang (a crash that lost the CUDA
  /// context): the file gets its verdict from the sides that ran, then the process ends with it.
  bool runner_lost = false;
  int status       = kExitUsage;
  double seconds   = 0;  // wall time of the file's replay
};

std::string side_summary(Side const& s) {
  switch (s.state) {
    case Side::State::passed:
      return s.name + ": passes";
    case Side::State::not_run:
      return s.name + ": not run";
    case Side::State::failed:
      break;
  }
  return s.name + ": fails";
}

std::string join_names(std::vector<std::string> const& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

/// The last line of a replay of one file: its verdict and exit status.
std::string verdict_line(FileResult const& res,
                         runner::FailureFile const* failure_file,
                         bool recorded_asked) {
  std::vector<std::string> passed, failed, not_run;
  for (auto const& s : res.sides)
    (s.state == Side::State::passed   ? passed
     : s.state == Side::State::failed ? failed
                                      : not_run)
        .push_back(s.name);
  std::ostringstream out;
  switch (res.verdict) {
    case Verdict::passes:
      out << "verdict: passed on " << join_names(passed);
      if (!not_run.empty()) out << "; not run: " << join_names(not_run);
      break;
    case Verdict::fails:
      out << "verdict: FAILED on " << join_names(failed);
      break;
    case Verdict::still_fails:
      out << "verdict: STILL FAILS: the recorded failure (" << res.recorded << ") reproduced on ";
      {
        std::vector<std::string> same;
        for (auto const& s : res.sides)
          if (s.state == Side::State::failed && s.same_as_recorded) same.push_back(s.name);
        out << join_names(same);
      }
      break;
    case Verdict::fails_differently:
      out << "verdict: FAILS DIFFERENTLY: " << join_names(failed)
          << " failed, but not as recorded (" << res.recorded << ")";
      break;
    case Verdict::fixed: {
      out << "verdict: FIXED: the recorded failure (" << res.recorded << ") did not reproduce on "
          << failure_file->runner << ", and every side that ran passed";
      for (auto const& s : res.sides)
        if (s.name == failure_file->runner && !s.deterministic)
          out << " (" << s.name << " runs are nondeterministic: " << s.tries << " run"
              << (s.tries == 1 ? "" : "s")
              << " passed, but a failure may show only sometimes; replay with more --reruns or "
                 "minimize with --reruns)";
      break;
    }
    case Verdict::not_checked: {
      if (!failure_file) {
        out << "NOT CHECKED: no runner could run this schedule here (not run: "
            << join_names(not_run) << ")";
        break;
      }
      out << "NOT CHECKED: the recorded failure came from the " << failure_file->runner
          << " runner, which ";
      if (!recorded_asked) {
        out << "was not among the runners asked for (--model, --runner); ";
      } else {
        for (auto const& s : res.sides)
          if (s.name == failure_file->runner) out << "could not run here (" << s.reason << "); ";
      }
      if (passed.empty())
        out << "no side ran";
      else
        out << "the " << join_names(passed) << " side" << (passed.size() == 1 ? "" : "s")
            << " passed, which says nothing about the " << failure_file->runner << " failure";
      break;
    }
    case Verdict::hang:
    case Verdict::error:
      out << "verdict: " << to_string(res.verdict);
      break;
  }
  out << " (exit status " << res.status << ")";
  return out.str();
}

/// An error that ends the replay of a file: on stderr for one file (as before), else in its lines.
void report_error(bool detailed, char const* message) {
  if (detailed) {
    std::fflush(stdout);
    std::fprintf(stderr, "heaplab replay: %s\n", message);
  } else {
    std::printf("  error: %s\n", message);
  }
}

/// The file's first lines: what it is, its steps, its config (and a failure file's header).
void print_loaded(std::string const& file,
                  runner::Replayable const& r,
                  std::string const& recorded,
                  bool detailed) {
  runner::Family const& family = r.family();
  std::size_t const steps      = family.steps(r.schedule);
  if (detailed) {
    std::printf("replay %s: %s %s, %zu step%s; %s\n",
                schedule::terminal_safe(file).c_str(),
                family.name().c_str(),
                r.failure_file ? "failure file" : "schedule file",
                steps,
                steps == 1 ? "" : "s",
                family.config_summary(r.schedule).c_str());
    if (r.failure_file) std::printf("%s", failure_header(*r.failure_file).c_str());
  } else {
    std::printf("  %s %s, %zu step%s\n",
                family.name().c_str(),
                r.failure_file ? ("failure file (" + recorded + ")").c_str() : "schedule file",
                steps,
                steps == 1 ? "" : "s");
  }
}

void print_passed(std::string const& name,
                  std::size_t steps,
                  runner::FailureFile const* failure_file,
                  bool detailed) {
  if (!detailed) {
    std::printf("  %s side: passed, %zu steps\n", name.c_str(), steps);
  } else if (failure_file) {
    std::printf(
        "%s side passed: %zu steps, every check held after every step\n", name.c_str(), steps);
    std::printf("the recorded failure (runner %s) did not reproduce on %s\n",
                failure_file->runner.c_str(),
                name.c_str());
  } else {
    std::printf(
        "replay passed: %zu steps, every check held after every step (%s)\n", steps, name.c_str());
  }
}

/// "reproduced: the recorded failure (step 3, divergence, roots)" and its variants.
std::string comparison_text(runner::FailureRecord const& rec,
                            runner::Failure const& f,
                            bool same_as_recorded) {
  std::ostringstream c;
  c << (same_as_recorded ? (rec.step == f.step ? "reproduced:" : "reproduced (at another step):")
                         : "failed differently from")
    << " the recorded failure (step " << rec.step << ", " << runner::to_string(rec.kind) << ", "
    << rec.check << ")";
  return c.str();
}

void print_failed(std::string const& name,
                  runner::Failure const& f,
                  std::size_t steps,
                  std::string const& comparison,
                  ReplayOptions const& opt,
                  bool detailed) {
  if (detailed) {
    runner::ReportOptions report;
    report.max_violations = opt.max_violations;
    report.full_dump      = opt.full_dump;
    report.runner         = name;
    std::printf("\n%s", runner::format_failure(f, report).c_str());
    std::printf("\nreplay FAILED at step %zu of %zu (%s)\n", f.step, steps, name.c_str());
    if (!comparison.empty()) std::printf("%s\n", comparison.c_str());
  } else {
    std::printf("  %s side: FAILED at step %zu: %s, check %s: %s\n",
                name.c_str(),
                f.step,
                runner::to_string(f.kind),
                f.check.c_str(),
                f.message.c_str());
    if (!comparison.empty()) std::printf("    %s\n", comparison.c_str());
  }
}

/// The file's verdict from its sides (docs/cli.md "replay"); returns the exit status it implies.
int decide_verdict(FileResult& res, runner::FailureFile const* failure_file) {
  bool any_failed = false, any_same = false, recorded_ran = false, any_passed = false;
  for (auto const& s : res.sides) {
    any_failed = any_failed || s.state == Side::State::failed;
    any_passed = any_passed || s.state == Side::State::passed;
    any_same   = any_same || (s.state == Side::State::failed && s.same_as_recorded);
    if (failure_file && s.name == failure_file->runner && s.state != Side::State::not_run)
      recorded_ran = true;
  }
  if (!failure_file) {
    res.verdict = any_failed ? Verdict::fails : any_passed ? Verdict::passes : Verdict::not_checked;
    return any_failed ? kExitFailed : any_passed ? 0 : kExitNotChecked;
  }
  if (any_failed) {
    res.verdict = any_same ? Verdict::still_fails : Verdict::fails_differently;
    return kExitFailed;
  }
  res.verdict = recorded_ran ? Verdict::fixed : Verdict::not_checked;
  return recorded_ran ? 0 : kExitNotChecked;
}

/// The sides of one loaded file: each runs on its runner, and its outcome goes into the
/// FileResult (and is printed as it comes).
class SideReplay {
 public:
  SideReplay(FileResult& res,
             runner::Replayable const& file,
             ReplayOptions const& opt,
             bool detailed)
      : res_(res),
        file_(file),
        failure_file_(file.failure_file ? &*file.failure_file : nullptr),
        opt_(opt),
        detailed_(detailed),
        explicit_runners_(opt.model || !opt.runners.empty()) {}

  /// Replays side `name`; false when the file's replay ends here (an error, or a hang: the
  /// FileResult says which).
  bool run(std::string const& name) {
    Side side;
    side.name    = name;
    bool go_on   = true;
    auto const r = make_side_runner(side, go_on);
    if (!r) return go_on;
    side.deterministic = r->deterministic();
    if (auto const support = r->supports(file_.schedule); !support.supported) {
      not_run(side, "this schedule is not supported: " + support.reason);
      if (explicit_runners_) explicit_status_ = kExitUsage;
      return true;
    }
    std::string const device = r->device_name();
    if (detailed_)
      std::printf("\n== %s side (%s) ==\n",
                  name.c_str(),
                  device == "none" ? "CPU" : ("device: " + device).c_str());
    std::optional<runner::RunOutcome> outcome = run_tries(*r);
    if (!outcome) return false;
    return record(side, *r, *outcome);
  }

  /// kExitUsage when a runner asked for (--model, --runner) could not run, else 0.
  [[nodiscard]] int explicit_status() const { return explicit_status_; }

 private:
  /// Runs the side once for a deterministic runner, else up to --reruns times (default 5) until
  /// it fails; the steps of the first try are printed. Nullopt after an error (already reported).
  std::optional<runner::RunOutcome> run_tries(runner::Runner& r) {
    unsigned const tries = opt_.reruns ? opt_.reruns : (r.deterministic() ? 1u : 5u);
    runner::RunOutcome outcome;
    for (unsigned k = 0; k < tries && outcome.ok(); ++k) {
      try {
        outcome = r.run(file_.schedule, [&](runner::StepReport const& s) {
          if (detailed_ && k == 0 && (!opt_.quiet || !s.ok)) std::printf("%s\n", s.line.c_str());
          std::fflush(stdout);
        });
      } catch (std::bad_alloc const&) {
        error(("out of memory while running the schedule on " + r.name() +
               ": it needs more memory than this process may use (resource exhaustion, not a "
               "failure of the runner; a smaller schedule, or more memory)")
                  .c_str());
        return std::nullopt;
      } catch (std::exception const& e) {
        error(e.what());
        return std::nullopt;
      }
      if (!r.usable()) break;
      if (detailed_ && tries > 1 && !outcome.ok() && k > 0)
        std::printf("(failed in run %u of up to %u)\n", k + 1, tries);
    }
    tries_ = tries;
    return outcome;
  }

  void not_run(Side& side, std::string const& why) {
    side.reason = why;
    std::printf(detailed_ ? "\n%s side: not run: %s\n" : "  %s side: not run: %s\n",
                side.name.c_str(),
                why.c_str());
    res_.sides.push_back(side);
  }

  /// An error that ends the file's replay.
  void error(char const* what) {
    report_error(detailed_, what);
    res_.error   = what;
    res_.status  = kExitUsage;
    res_.verdict = Verdict::error;
  }

  /// The side's runner, or null: the side is not run (go_on stays true) or the file's replay
  /// ends with an error (go_on becomes false).
  std::unique_ptr<runner::Runner> make_side_runner(Side& side, bool& go_on) {
    runner::RunnerOptions ro;
    ro.seed    = opt_.placement_seed;
    ro.perturb = !opt_.no_perturb;
    if (opt_.watchdog_ms > 0) ro.watchdog_ms = static_cast<unsigned>(opt_.watchdog_ms);
    try {
      runner::Family const& family = runner::family_of_runner(side.name);
      if (&family != &file_.family())
        throw core::precondition_error("runner '" + side.name + "' runs " + family.name() +
                                       " schedules; this is a " + file_.family().name() + " file");
      return runner::make_runner(side.name, ro);
    } catch (runner::runner_unavailable const& e) {
      not_run(side, e.what());
      if (explicit_runners_) explicit_status_ = kExitUsage;
    } catch (std::exception const& e) {
      if (explicit_runners_) {
        error(e.what());
        go_on = false;
      } else {
        // A failure file from a runner this heaplab does not have (e.g. a test's fake).
        not_run(side, e.what());
      }
    }
    return nullptr;
  }

  /// A side that ran: passed, or failed (compared with the recorded failure). False on a hang
  /// (or a runner left unusable), which ends the file's replay.
  bool record(Side& side, runner::Runner const& r, runner::RunOutcome const& outcome) {
    if (outcome.ok()) {
      side.state = Side::State::passed;
      side.tries = tries_;
      res_.sides.push_back(side);
      print_passed(side.name, outcome.steps_run, failure_file_, detailed_);
      return true;
    }
    runner::Failure const& f = *outcome.failure;
    side.state               = Side::State::failed;
    std::string comparison;
    if (failure_file_) {
      // A hang is the same failure whichever guard saw it: a worker's stall in a stress run of
      // many workers (check stall) replays alone, where the watchdog sees it (check watchdog).
      side.same_as_recorded =
          failure_file_->failure.kind == f.kind &&
          (failure_file_->failure.check == f.check || f.kind == runner::FailureKind::hang);
      comparison = comparison_text(failure_file_->failure, f, side.same_as_recorded);
    }
    res_.sides.push_back(side);
    print_failed(side.name, f, file_.family().steps(file_.schedule), comparison, opt_, detailed_);
    if (f.kind == runner::FailureKind::hang) {
      res_.verdict = Verdict::hang;
      res_.status  = kExitHang;
      return false;
    }
    if (!r.usable()) {  // no other side may run in this process; the failure is what it is
      res_.runner_lost = true;
      return false;
    }
    return true;
  }

  FileResult& res_;
  runner::Replayable const& file_;
  runner::FailureFile const* failure_file_;
  ReplayOptions const& opt_;
  bool const detailed_;
  bool const explicit_runners_;
  int explicit_status_ = 0;  // kExitUsage when a runner asked for cannot run
  unsigned tries_      = 1;  // runs of the last side
};

/// Replays one file on every runner it asks for. `detailed`: today's output (steps, the first
/// failure in full); otherwise one line per side. A hang returns at once (Verdict::hang); the
/// caller ends the process.
FileResult replay_file(std::string const& file, ReplayOptions const& opt, bool detailed) {
  FileResult res;
  res.file = file;
  std::optional<runner::Replayable> loaded;
  try {
    loaded = runner::load_replayable(file);
  } catch (std::exception const& e) {  // schedule_error, or the file system's
    res.error = e.what();
    report_error(detailed, e.what());
    return res;
  }
  auto const* failure_file = loaded->failure_file ? &*loaded->failure_file : nullptr;
  res.recorded             = failure_file ? failure_file->recorded() : "schedule";
  print_loaded(file, *loaded, res.recorded, detailed);

  auto const names = runners_for(opt, *loaded);
  SideReplay sides(res, *loaded, opt, detailed);
  for (auto const& name : names)
    if (!sides.run(name)) {
      if (!res.runner_lost) return res;
      std::printf(detailed ? "\n%s" : "  %s",
                  "the runner cannot be used again in this process (e.g. a lost CUDA context): "
                  "no further side runs\n");
      break;
    }

  res.status = worse(decide_verdict(res, failure_file), sides.explicit_status());
  bool const recorded_asked =
      failure_file && std::find(names.begin(), names.end(), failure_file->runner) != names.end();
  std::string const line = verdict_line(res, failure_file, recorded_asked);
  std::printf(detailed ? "\n%s\n" : "  %s\n", line.c_str());
  return res;
}

/// The files the arguments name: a directory stands for its *.json files (sorted, not
/// recursive). A directory without any, or one that cannot be listed, is an error entry.
struct Input {
  std::string file;
  std::string error;  // not empty: this entry cannot be replayed
};

/// `heaplab replay failures/` after a stress run that found nothing: a folder argument (ending in
/// '/') that does not exist, and why; "" otherwise.
std::string missing_folder(std::string const& arg) {
  std::error_code ec;
  if (arg.empty() || arg.back() != '/' || std::filesystem::exists(arg, ec)) return {};
  return "no directory " + arg +
         " (heaplab stress creates its --out-dir only when it finds a failure)";
}

std::vector<Input> expand(std::vector<std::string> const& args) {
  std::vector<Input> out;
  for (auto const& arg : args) {
    std::error_code ec;
    if (auto const why = missing_folder(arg); !why.empty()) {
      out.push_back({arg, why});
      continue;
    }
    if (!std::filesystem::is_directory(arg, ec)) {
      out.push_back({arg, ""});
      continue;
    }
    std::vector<std::filesystem::path> files;
    std::filesystem::directory_iterator it(arg, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::error_code ignored;
      if (it->path().extension() == ".json" && it->is_regular_file(ignored))
        files.push_back(it->path());
    }
    if (ec) {
      out.push_back({arg, "cannot list the directory " + arg + ": " + ec.message()});
      continue;
    }
    if (files.empty()) {
      out.push_back({arg, "no *.json files in the directory " + arg});
      continue;
    }
    std::sort(files.begin(), files.end());
    for (auto const& f : files) out.push_back({f.string(), ""});
  }
  return out;
}

void print_table(std::vector<FileResult> const& results) {
  std::vector<std::array<std::string, 4>> rows;
  rows.push_back({"file", "recorded", "sides", "verdict"});
  for (auto const& r : results) {
    std::string sides;
    for (auto const& s : r.sides) sides += (sides.empty() ? "" : ", ") + side_summary(s);
    std::string verdict = to_string(r.verdict);
    if (r.verdict == Verdict::error) verdict += ": " + r.error;
    rows.push_back({schedule::terminal_safe(r.file),
                    r.recorded.empty() ? "-" : r.recorded,
                    sides.empty() ? "-" : sides,
                    schedule::terminal_safe(verdict)});
  }
  std::array<std::size_t, 3> width{};
  for (auto const& row : rows)
    for (std::size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (auto const& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < width.size(); ++c)
      line += row[c] + std::string(width[c] - row[c].size() + 2, ' ');
    std::printf("%s%s\n", line.c_str(), row[3].c_str());
  }
}

std::string counts(std::vector<FileResult> const& results) {
  std::string out;
  for (Verdict v : {Verdict::still_fails,
                    Verdict::fails_differently,
                    Verdict::fails,
                    Verdict::hang,
                    Verdict::not_checked,
                    Verdict::fixed,
                    Verdict::passes,
                    Verdict::error}) {
    auto const n = std::count_if(
        results.begin(), results.end(), [v](FileResult const& r) { return r.verdict == v; });
    if (n > 0)
      out += (out.empty() ? "" : ", ") + std::string(to_string(v)) + " " + std::to_string(n);
  }
  return out;
}

char const* to_string(Side::State s) {
  switch (s) {
    case Side::State::passed:
      return "passed";
    case Side::State::failed:
      return "failed";
    case Side::State::not_run:
      break;
  }
  return "not_run";
}

/// The machine-readable summary of a replay (`--json`, docs/cli.md "Machine-readable results").
std::string replay_json(std::vector<FileResult> const& results,
                        std::size_t files,
                        std::string const& started,
                        int status) {
  nlohmann::ordered_json j = summary_header("heaplab-replay-summary", 1, started);
  j["exit_status"]         = status;
  j["files_given"]         = files;
  j["files"]               = nlohmann::ordered_json::array();
  for (FileResult const& r : results) {
    nlohmann::ordered_json f;
    f["file"]        = r.file;
    f["recorded"]    = r.recorded;
    f["verdict"]     = to_string(r.verdict);
    f["exit_status"] = r.status;
    f["error"]       = r.error;
    f["sides"]       = nlohmann::ordered_json::array();
    for (Side const& side : r.sides)
      f["sides"].push_back({{"runner", side.name},
                            {"state", to_string(side.state)},
                            {"same_as_recorded", side.same_as_recorded},
                            {"deterministic", side.deterministic},
                            {"runs", side.state == Side::State::not_run ? 0u : side.tries},
                            {"reason", side.reason}});
    j["files"].push_back(std::move(f));
  }
  return j.dump(2) + "\n";
}

/// The verdicts as JUnit XML (`--junit`, docs/cli.md "Machine-readable results"): one
/// <testsuite> "heaplab.replay", one <testcase> per file; exit status 1 (fails, still fails,
/// fails differently) is a <failure>, 4 (not checked) <skipped>, 2 and 3 (error, hang) an <error>.
std::string replay_junit(std::vector<FileResult> const& results, std::size_t files) {
  int failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  std::string cases;
  for (FileResult const& r : results) {
    seconds += r.seconds;
    std::string sides;
    for (Side const& side : r.sides) sides += (sides.empty() ? "" : "; ") + side_summary(side);
    std::string const what = std::string(to_string(r.verdict)) +
                             (r.error.empty() ? "" : ": " + r.error) +
                             (sides.empty() ? "" : " (" + sides + ")");
    char time[32];
    std::snprintf(time, sizeof time, "%.3f", r.seconds);
    cases += "    <testcase classname=\"heaplab.replay\" name=\"" + xml_escaped(r.file) +
             "\" time=\"" + time + "\">\n";
    char const* element = r.status == kExitPassed       ? nullptr
                          : r.status == kExitFailed     ? "failure"
                          : r.status == kExitNotChecked ? "skipped"
                                                        : "error";
    if (element != nullptr) {
      (r.status == kExitFailed ? failures : r.status == kExitNotChecked ? skipped : errors) += 1;
      cases += "      <" + std::string(element) + " message=\"" + xml_escaped(what) + "\"/>\n";
    }
    cases += "      <system-out>" + xml_escaped("recorded: " + r.recorded + "; " + what) +
             "</system-out>\n    </testcase>\n";
  }
  char time[32];
  std::snprintf(time, sizeof time, "%.3f", seconds);
  // Files not replayed (a hang ended the run) are errors, so that the counts add up to the files.
  for (std::size_t i = results.size(); i < files; ++i) {
    ++errors;
    cases += "    <testcase classname=\"heaplab.replay\" name=\"(file " + std::to_string(i + 1) +
             " of " + std::to_string(files) +
             ")\" time=\"0.000\">\n      <error message=\"not replayed: a hang or an unusable "
             "runner ended the process before it\"/>\n    </testcase>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"heaplab replay\">\n"
         "  <testsuite name=\"heaplab.replay\" tests=\"" +
         std::to_string(files) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
         std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) + "\" time=\"" + time +
         "\">\n" + cases + "  </testsuite>\n</testsuites>\n";
}

/// Writes --json and --junit (those asked for) and returns the exit status: `status`, or 1 when
/// it was 0 or 4 and a summary could not be written (a result that was asked for and is missing
/// is a failure).
int write_summaries(ReplayOptions const& opt,
                    std::vector<FileResult> const& results,
                    std::size_t files,
                    std::string const& started,
                    int status) {
  struct Summary {
    std::string const& path;
    char const* what;
    std::string (*text)(std::vector<FileResult> const&, std::size_t, std::string const&, int);
  };
  Summary const summaries[] = {
      {opt.json, "JSON summary", replay_json},
      {opt.junit,
       "JUnit report",
       [](std::vector<FileResult> const& r, std::size_t n, std::string const&, int) {
         return replay_junit(r, n);
       }}};
  int out = status;
  for (Summary const& summary : summaries) {
    if (summary.path.empty()) continue;
    try {
      write_file_atomically(summary.path, summary.text(results, files, started, status));
      std::printf("heaplab replay: %s in %s\n",
                  summary.what,
                  schedule::terminal_safe(summary.path).c_str());
    } catch (std::exception const& e) {
      std::fprintf(stderr, "heaplab replay: the %s was not written: %s\n", summary.what, e.what());
      out = worse(out, kExitFailed);
    }
  }
  return out;
}

/// replay_file, with its wall time in FileResult::seconds.
FileResult timed_replay_file(std::string const& file, ReplayOptions const& opt, bool detailed) {
  auto const start = std::chrono::steady_clock::now();
  FileResult res   = replay_file(file, opt, detailed);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return res;
}

/// Whether the replay must end after this file (a hang, or a runner left unusable).
bool ends_the_process(FileResult const& r) { return r.verdict == Verdict::hang || r.runner_lost; }

/// After `last` ended the replay (ends_the_process): nothing more may run in this process (a
/// stuck kernel, a lost CUDA context), and static destructors could block on the context. Exit
/// status 3 after a hang, else `status` (the files' verdicts so far).
[[noreturn]] void end_the_process(FileResult const& last, int status) {
  bool const hang = last.verdict == Verdict::hang;
  if (hang) status = kExitHang;
  std::printf(
      "heaplab replay: %s; ending the process (exit status %d)\n",
      hang ? "a kernel hung" : "a runner cannot be used again (e.g. the device's context was lost)",
      status);
  std::fflush(stdout);
  std::_Exit(status);
}

int replay(ReplayOptions const& opt) {
  std::string const started = runner::utc_now_iso8601();
  for (auto const& [flag, path] : {std::pair{"--json", &opt.json}, {"--junit", &opt.junit}})
    if (!path->empty())
      if (auto const why = output_file_problem(*path); !why.empty()) {
        report_error(
            true, schedule::terminal_safe(std::string(flag) + " '" + *path + "': " + why).c_str());
        return kExitUsage;
      }
  bool table = opt.files.size() > 1;
  for (auto const& f : opt.files) {
    std::error_code ec;
    table = table || std::filesystem::is_directory(f, ec);
  }
  if (!table) {
    if (auto const why = missing_folder(opt.files.front()); !why.empty()) {
      report_error(true, schedule::terminal_safe(why).c_str());
      return kExitUsage;
    }
    std::vector<FileResult> const one{timed_replay_file(opt.files.front(), opt, true)};
    int const status = write_summaries(opt, one, 1, started, one.front().status);
    if (ends_the_process(one.front())) end_the_process(one.front(), status);
    return status;
  }

  auto const inputs = expand(opt.files);
  std::vector<FileResult> results;
  int status = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::printf(opt.verbose ? "\n== [%zu/%zu] %s ==\n" : "[%zu/%zu] %s\n",
                i + 1,
                inputs.size(),
                schedule::terminal_safe(inputs[i].file).c_str());
    FileResult res;
    if (!inputs[i].error.empty()) {
      res.file  = inputs[i].file;
      res.error = inputs[i].error;
      std::printf("  error: %s\n", schedule::terminal_safe(res.error).c_str());
    } else {
      res = timed_replay_file(inputs[i].file, opt, opt.verbose);
    }
    std::fflush(stdout);
    status = worse(status, res.status);
    results.push_back(std::move(res));
    if (ends_the_process(results.back())) {
      std::printf("\nheaplab replay: %zu of %zu files replayed; the rest are not:\n",
                  results.size(),
                  inputs.size());
      print_table(results);
      end_the_process(results.back(),
                      write_summaries(opt, results, inputs.size(), started, status));
    }
  }
  std::printf("\nheaplab replay: %zu files\n", results.size());
  print_table(results);
  std::printf("heaplab replay: %s; exit status %d\n", counts(results).c_str(), status);
  return write_summaries(opt, results, inputs.size(), started, status);
}

int show(std::string const& file, bool as_json) {
  std::optional<runner::Replayable> loaded;
  try {
    loaded = runner::load_replayable(file);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab show: %s\n", e.what());
    return kExitUsage;
  }
  runner::Family const& family = loaded->family();
  auto const* failure_file     = loaded->failure_file ? &*loaded->failure_file : nullptr;
  if (as_json) {
    std::cout << (failure_file ? runner::dump(*failure_file)
                               : family.to_json(loaded->schedule).dump(2) + "\n");
    return kExitPassed;
  }
  if (failure_file) {
    std::cout << "failure " << file << " (format " << runner::kFailureFormatName << " version "
              << runner::kFailureFormatVersion << ")\n";
    std::cout << failure_header(*failure_file);
  }
  std::cout << (failure_file ? "its schedule" : "schedule " + file) << " (family " << family.name()
            << ", format " << family.schedule_format() << ")\n";
  if (auto const d = family.description(loaded->schedule); !d.empty())
    std::cout << "  " << d << "\n";
  family.show(loaded->schedule, std::cout);
  return kExitPassed;
}

/// replay's --json and --junit.
void add_replay_summaries(CLI::App& cmd, ReplayOptions& opt) {
  cmd.add_option("--json",
                 opt.json,
                 "write a machine-readable summary here at the end (every file's verdict, exit "
                 "status and sides; docs/cli.md \"Machine-readable results\"), also when a hang "
                 "ends the process")
      ->default_str("");
  cmd.add_option("--junit",
                 opt.junit,
                 "write the verdicts as JUnit XML here at the end (one testcase per file: "
                 "failure, skipped when not checked, error), also when a hang ends the process")
      ->default_str("");
}

}  // namespace

void add_replay(CLI::App& app) {
  auto opt  = std::make_shared<ReplayOptions>();
  auto* cmd = app.add_subcommand(
      "replay", "replay schedule files and failure files, on every runner that can run here");
  cmd->option_defaults()->always_capture_default();
  cmd->footer(
      "Replays schedule files and failure files of any family (docs/replay.md). Runs the family's\n"
      "reference runner always (heap: model; rw: rw-model), its GPU runners where they are built\n"
      "and a GPU is present (otherwise a line says why not), and the runner a failure file names;\n"
      "one line per step, the family's invariant catalog after every step and, for differential\n"
      "runners, the comparison with the model. Nondeterministic runners (GPU, CPU threads) run up\n"
      "to --reruns times (default 5) until one run fails. At a runner's first failure: kind,\n"
      "check, message, violations and the family's detail (heap: the diff, step, block, field,\n"
      "expected, actual, and the relevant part of the snapshot). For a failure file it says\n"
      "whether the recorded failure reproduced, and a last line gives the verdict. Several files\n"
      "or a directory (its *.json files, sorted, not recursive): each is replayed with one line\n"
      "per runner (-v: in full), then a table gives each file's verdict: still fails, fails\n"
      "differently, fixed, not checked, passes (a schedule file), fails, error.\n"
      "Exit status (for several files the worst, in the order 3, 2, 1, 4, 0):\n"
      "  0 every runner that ran passed, and for a failure file its recorded runner ran;\n"
      "  1 a runner failed (the recorded failure reproduced, or another failure);\n"
      "  2 unreadable or malformed file, or a runner asked for with --runner cannot run here;\n"
      "  3 a kernel hung (the process ends at once);\n"
      "  4 NOT CHECKED: nothing failed, but the runner that recorded the failure could not run\n"
      "    here (e.g. a gpu failure file on a machine without a GPU).\n"
      "Examples:\n"
      "  heaplab replay failures/20261122T101112Z-9417744632.json\n"
      "  heaplab replay failures/                       # every file, then a table of verdicts\n"
      "  heaplab replay --model proofs_tests/model/data/wator.json\n"
      "  heaplab replay --runner gpu docs/results/failures/rewrite_filter_off_by_one.min.json\n"
      "  heaplab replay failures/ --json replay.json   # the verdicts for a script or CI\n"
      "  heaplab replay failures/ --junit replay.xml   # the verdicts for a CI's test report");
  cmd->add_option("files",
                  opt->files,
                  "schedule files of any family, failure files (heaplab-failure) or directories "
                  "of them (*.json)")
      ->required()
      ->default_str("");
  cmd->add_flag(
      "--verbose,-v", opt->verbose, "with several files: replay each in full, as for one file");
  cmd->add_flag("--model", opt->model, "replay on the family's reference runner only (the model)");
  cmd->add_option("--runner",
                  opt->runners,
                  "replay on these runners only (repeatable; runners of the file's family: heap: "
                  "model, differential-model, gpu; rw: rw-model, rw-cpu, rw-gpu)")
      ->allow_extra_args(false)
      ->default_str("");
  cmd->add_flag("--quiet,-q", opt->quiet, "print only failing steps and the result");
  cmd->add_option("--reruns",
                  opt->reruns,
                  "runs of a nondeterministic runner (until one fails); default 5, and 1 for "
                  "deterministic runners")
      ->check(unsigned_integer(1, 1000))
      ->default_str("");
  cmd->add_flag("--full-dump", opt->full_dump, "on failure, dump the whole snapshot");
  cmd->add_option("--max-violations", opt->max_violations, "violations listed on failure")
      ->check(unsigned_integer(1, 100000));
  cmd->add_option("--placement-seed",
                  opt->placement_seed,
                  "differential-model: seed of its random legal placements")
      ->check(unsigned_integer(0, std::numeric_limits<std::uint64_t>::max()));
  cmd->add_option("--watchdog-ms",
                  opt->watchdog_ms,
                  "gpu: budget of one step's kernels in ms (default HEAPLAB_WATCHDOG_MS or 5000)")
      ->check(unsigned_integer(1, 86400000))
      ->default_str("");
  cmd->add_flag(
      "--no-perturb",
      opt->no_perturb,
      "gpu: no warp-order perturbation (stress perturbs unless it was given --no-perturb)");
  add_replay_summaries(*cmd, *opt);
  cmd->callback([opt] { std::exit(replay(*opt)); });
}

void add_show(CLI::App& app) {
  auto file    = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto* cmd    = app.add_subcommand("show", "pretty-print a schedule file or a failure file");
  cmd->footer(
      "For a failure file: its record (family, runner, GPU, commit, seed, origin, the failure);\n"
      "then the schedule as its family shows it (heap: the config, types, capacities, pointer\n"
      "slots by index; rw: the pool) and the steps, one line each. With --json, the canonical "
      "JSON\n"
      "instead (what heaplab writes; reading it back gives the same file). Exit status 2 for an\n"
      "unreadable or malformed file (with FILE:LINE:COLUMN).\n"
      "Examples:\n"
      "  heaplab show proofs_tests/model/data/wator.json\n"
      "  heaplab show --json failures/20261122T101112Z-9417744632.json");
  cmd->add_option("file", *file, "schedule file or failure file (JSON)")->required();
  cmd->add_flag("--json", *as_json, "print the canonical JSON form");
  cmd->callback([file, as_json] { std::exit(show(*file, *as_json)); });
}

}  // namespace heaplab::cli
