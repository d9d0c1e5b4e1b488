// The bump family's runner (bump_runner.hpp).
#include "bump_runner.hpp"

#include <exception>
#include <optional>
#include <utility>

namespace heaplab::bump_family {

namespace {

using runner::Failure;
using runner::RunOutcome;
using runner::StepReport;

Failure crash(std::size_t step, std::string description, std::string const& message) {
  Failure f;
  f.step             = step;
  f.kind             = runner::FailureKind::crash;
  f.check            = runner::checks::kException;
  f.message          = message;
  f.step_description = std::move(description);
  return f;
}

/// "step 3: alloc ... | live 20, top 480/4096 B | granted 8, nulls 0 | ok"
std::string step_line(StepReport const& r) {
  std::string line = "step " + std::to_string(r.index) + ": " + r.description + " | live " +
                     std::to_string(r.live) + ", top " + std::to_string(r.in_use) + "/" +
                     std::to_string(r.capacity) + " B";
  if (r.op == "alloc")
    line += " | granted " + std::to_string(r.count("granted")) + ", nulls " +
            std::to_string(r.count("nulls"));
  return line + (r.ok ? " | ok" : " | FAILED");
}

/// One run: the backend, the model and the outcome so far.
class BumpRun {
 public:
  BumpRun(BumpSchedule const& s, BumpBackend& backend, runner::StepCallback const& on_step)
      : s_(s), backend_(backend), model_(s.arena), on_step_(on_step) {}

  RunOutcome run() {
    RunOutcome out;
    for (std::size_t i = 0; i < s_.steps.size(); ++i) {
      StepReport report;
      report.index             = i;
      report.op                = step_name(s_.steps[i]);
      report.description       = describe(s_.steps[i]);
      std::optional<Failure> f = step(i, report);
      out.steps_run            = i + 1;
      report.ok                = !f;
      report.line              = step_line(report);
      if (on_step_) on_step_(report);
      if (f) {
        out.failure = std::move(f);
        return out;
      }
    }
    return out;
  }

 private:
  /// Runs step i on the backend, checks the state after it and commits it to the model.
  std::optional<Failure> step(std::size_t i, StepReport& report) {
    BumpState state;
    try {
      if (auto const* wave = std::get_if<BumpAlloc>(&s_.steps[i])) {
        std::vector<std::uint64_t> const answers = backend_.alloc_wave(*wave);
        state = model_.after_alloc(i, *wave, answers, backend_.top());
      } else {
        backend_.free_all();
        state = model_.after_free_all(backend_.top());
      }
    } catch (std::exception const& e) {
      return crash(i, report.description, e.what());
    } catch (...) {
      return crash(i, report.description, "an exception that is not a std::exception");
    }
    fill(report, state);
    auto violations = check_all(state);
    if (!violations.empty())
      return runner::failure_from_violations(i, report.description, std::move(violations));
    model_.commit(state);
    return std::nullopt;
  }

  void fill(StepReport& report, BumpState const& state) const {
    std::uint64_t bytes = 0;
    for (Range const& g : state.granted) bytes += g.size;
    report.live     = state.live_ranges().size() + state.granted.size();
    report.in_use   = state.reported_top;
    report.capacity = s_.arena;
    if (state.step == BumpState::Step::free_all) {
      report.add_count("free_alls", 1);
      return;
    }
    report.add_count("requests", state.granted.size() + state.nulls.size());
    report.add_count("granted", state.granted.size());
    report.add_count("nulls", state.nulls.size());
    report.add_count("bytes", bytes);
  }

  BumpSchedule const& s_;
  BumpBackend& backend_;
  BumpModel model_;
  runner::StepCallback const& on_step_;
};

}  // namespace

BumpRunner::BumpRunner(std::string name, BackendFactory make, bool deterministic)
    : name_(std::move(name)), make_(std::move(make)), deterministic_(deterministic) {}

runner::Support BumpRunner::supports(runner::AnySchedule const& s) const {
  (void)s.get<BumpSchedule>();  // throws for a schedule of another family
  return {};
}

RunOutcome BumpRunner::run(BumpSchedule const& s, runner::StepCallback const& on_step) {
  validate(s);
  std::unique_ptr<BumpBackend> backend;
  try {
    backend = make_(s.arena);
  } catch (std::exception const& e) {
    RunOutcome out;
    out.steps_run = s.steps.empty() ? 0 : 1;
    out.failure   = crash(0, "making the allocator", e.what());
    return out;
  }
  return BumpRun(s, *backend, on_step).run();
}

RunOutcome BumpRunner::run(runner::AnySchedule const& s, runner::StepCallback const& on_step) {
  return run(s.get<BumpSchedule>(), on_step);
}

}  // namespace heaplab::bump_family
