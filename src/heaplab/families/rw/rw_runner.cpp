// The differential runner of the random-walk pool (rw_runner.hpp).
#include "heaplab/families/rw/rw_runner.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "heaplab/check/rw_invariants.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/model/rw_interpreter.hpp"

namespace heaplab::rw_family {

rw::PoolConfig to_pool_config(schedule::RwPool const& pool) {
  rw::PoolConfig c;
  c.num_pages  = pool.num_pages;
  c.page_bytes = pool.page_bytes;
  c.word_bits  = pool.word_bits;
  c.max_steps  = pool.max_steps;
  return c;
}

std::string RwFailureDetail::report(Failure const&, runner::ReportOptions const&) const {
  return thread ? "  thread: " + std::to_string(*thread) + "\n" : std::string();
}

std::optional<std::uint32_t> thread_of(Failure const& failure) {
  auto const* d = dynamic_cast<RwFailureDetail const*>(failure.detail.get());
  return d ? d->thread : std::nullopt;
}

namespace {

/// A failure of wave `step` ("wave 3 thread 17: ..." as the message).
Failure rw_failure(std::size_t step,
                   std::optional<std::uint32_t> thread,
                   FailureKind kind,
                   std::string check,
                   std::string const& message,
                   std::vector<check::Violation> violations = {}) {
  Failure f;
  f.step    = step;
  f.kind    = kind;
  f.check   = std::move(check);
  f.message = "wave " + std::to_string(step) +
              (thread ? " thread " + std::to_string(*thread) : std::string()) + ": " + message;
  f.violations   = std::move(violations);
  auto detail    = std::make_shared<RwFailureDetail>();
  detail->thread = thread;
  f.detail       = std::move(detail);
  return f;
}

Failure crash(std::size_t step, std::string const& message) {
  return rw_failure(step, std::nullopt, FailureKind::crash, checks::kException, message);
}

/// One line for replay: "step 3: alloc rw-bm threads=... | held 12, pages 40/64 | granted 12,
/// nulls 0 | ok".
std::string wave_line(StepReport const& r) {
  std::string line = "step " + std::to_string(r.index) + ": " + r.description + " | held " +
                     std::to_string(r.live) + ", pages " + std::to_string(r.in_use) + "/" +
                     std::to_string(r.capacity);
  if (r.op == "alloc")
    line += " | granted " + std::to_string(r.count("granted")) + ", nulls " +
            std::to_string(r.count("nulls"));
  else
    line += " | freed " + std::to_string(r.count("freed"));
  return line + (r.ok ? " | ok" : " | FAILED");
}

/// One run: the executor, the model and the outcome so far.
class RwRun {
 public:
  RwRun(schedule::RwSchedule const& s, rw::StepExecutor& executor, StepCallback const& on_step)
      : s_(s), executor_(executor), model_(s.pool), on_step_(on_step) {}

  RunOutcome run() {
    try {
      executor_.mark_used(model_.pretaken());
    } catch (std::exception const& e) {
      return finish(crash(0, std::string("setup (pre-taken pages): ") + e.what()));
    }
    if (auto f = check_pool(0, "after setup, before wave 0: ")) return finish(std::move(f));
    for (std::size_t i = 0; i < s_.steps.size(); ++i) {
      StepReport report;
      report.index                   = i;
      report.op                      = schedule::step_name(s_.steps[i]);
      report.description             = schedule::describe(s_.steps[i]);
      std::uint64_t const oop_before = model_.out_of_pages();
      std::uint64_t const exh_before = model_.bounded_walk_exhaustions();
      std::optional<Failure> f =
          std::holds_alternative<schedule::RwAllocWave>(s_.steps[i])
              ? alloc(i, std::get<schedule::RwAllocWave>(s_.steps[i]), report)
              : free(i, std::get<schedule::RwFreeWave>(s_.steps[i]), report);
      if (!f) f = check_pool(i, "");
      steps_run_      = i + 1;
      report.ok       = !f;
      report.live     = model_.held().size();
      report.in_use   = model_.pages().num_pages() - model_.pages().free_count();
      report.capacity = model_.pages().num_pages();
      report.add_count("out_of_pages", model_.out_of_pages() - oop_before);
      report.add_count("exhaustions", model_.bounded_walk_exhaustions() - exh_before);
      report.line = wave_line(report);
      if (on_step_) on_step_(report);
      if (f) return finish(std::move(f));
    }
    return finish(std::nullopt);
  }

 private:
  RunOutcome finish(std::optional<Failure> f) {
    RunOutcome out;
    out.steps_run = steps_run_;
    if (f) out.failure.emplace(std::move(*f));
    return out;
  }

  /// rw-request-steps for thread i of an alloc wave; "" when its answer is well formed.
  std::string request_problem(core::RwAlgorithm a,
                              std::uint32_t asked,
                              std::uint32_t first,
                              std::uint32_t steps) const {
    std::uint32_t const max = s_.pool.max_steps;
    if (asked == 0)
      return first == rw::kNoPage && steps == 0
                 ? std::string()
                 : "an inactive thread reports page " +
                       (first == rw::kNoPage ? std::string("none") : std::to_string(first)) +
                       " and " + std::to_string(steps) + " steps (expected none and 0)";
    if (steps < 1 || steps > max)
      return "an active thread reports " + std::to_string(steps) + " steps (expected 1.." +
             std::to_string(max) + ")";
    bool const single_walker = a == core::RwAlgorithm::rw || a == core::RwAlgorithm::rw_bm;
    if (single_walker && first == rw::kNoPage && steps != max)
      return "a null after " + std::to_string(steps) + " steps (a walk gives up only after " +
             std::to_string(max) + ")";
    return {};
  }

  std::optional<Failure> check_requests(std::size_t i,
                                        rw::GetPageWave const& wave,
                                        rw::AllocResult const& r,
                                        StepReport& report) {
    auto const n = wave.pages.size();
    if (r.first.size() != n || r.steps.size() != n)
      return rw_failure(i,
                        std::nullopt,
                        FailureKind::invariant_violation,
                        checks::kRwResultShape,
                        "the executor answered " + std::to_string(r.first.size()) + " pages and " +
                            std::to_string(r.steps.size()) + " step counts for " +
                            std::to_string(n) + " threads");
    for (std::uint32_t t = 0; t < n; ++t) {
      std::string const why =
          request_problem(wave.algorithm, wave.pages[t], r.first[t], r.steps[t]);
      if (!why.empty())
        return rw_failure(i, t, FailureKind::invariant_violation, checks::kRwRequestSteps, why);
      if (wave.pages[t] == 0) continue;
      report.add_count("requests", 1);
      report.add_count("walk_steps", r.steps[t]);
      if (r.first[t] == rw::kNoPage) {
        report.add_count("nulls", 1);
      } else {
        report.add_count("granted", 1);
        report.add_count("pages", wave.pages[t]);
      }
    }
    return std::nullopt;
  }

  std::optional<Failure> alloc(std::size_t i,
                               schedule::RwAllocWave const& step,
                               StepReport& report) {
    rw::GetPageWave wave;
    wave.algorithm     = step.algorithm;
    wave.pages         = schedule::rw_requests(step);
    wave.block_threads = step.block_threads;
    wave.seed          = step.seed;
    rw::AllocResult r;
    try {
      r = executor_.allocate(wave);
    } catch (std::exception const& e) {
      return crash(i, std::string("allocate: ") + e.what());
    }
    if (auto f = check_requests(i, wave, r, report)) return f;
    if (auto rej = model_.alloc(static_cast<std::uint32_t>(i), wave.pages, r.first))
      return rw_failure(
          i, rej->thread, FailureKind::divergence, checks::kRwRefinement, rej->message);
    return std::nullopt;
  }

  std::optional<Failure> free(std::size_t i, schedule::RwFreeWave const& step, StepReport& report) {
    auto const freed = model_.free(step);
    rw::FreePageWave wave;
    for (auto const& h : freed) {
      wave.first.push_back(h.first);
      wave.count.push_back(h.count);
    }
    report.add_count("freed", freed.size());
    try {
      executor_.free(wave);
    } catch (std::exception const& e) {
      return crash(i, std::string("free: ") + e.what());
    }
    return std::nullopt;
  }

  /// The catalog on the executor's words against the model's owners.
  std::optional<Failure> check_pool(std::size_t i, std::string const& when) {
    rw::PoolWords words;
    try {
      words = executor_.words();
    } catch (std::exception const& e) {
      return crash(i, std::string("words: ") + e.what());
    }
    check::RwPoolSnapshot snap;
    snap.num_pages  = s_.pool.num_pages;
    snap.word_bits  = s_.pool.word_bits;
    snap.used_words = std::move(words.used);
    snap.lock_words = std::move(words.locks);
    auto violations = check::rw_check_all(snap, model_.owners());
    if (violations.empty()) return std::nullopt;
    std::string const check   = violations.front().invariant;
    std::string const message = when + violations.front().to_string();
    return rw_failure(
        i, std::nullopt, FailureKind::invariant_violation, check, message, std::move(violations));
  }

  schedule::RwSchedule const& s_;
  rw::StepExecutor& executor_;
  model::RwModelInterpreter model_;
  StepCallback const& on_step_;
  std::size_t steps_run_ = 0;
};

}  // namespace

RwRunner::RwRunner(std::string name,
                   RwExecutorFactory make,
                   RwSupport support,
                   bool deterministic,
                   std::string device)
    : name_(std::move(name)),
      make_(std::move(make)),
      support_(std::move(support)),
      deterministic_(deterministic),
      device_(std::move(device)) {}

std::string RwRunner::unsupported(schedule::RwSchedule const& s) const {
  for (std::size_t i = 0; i < s.steps.size(); ++i)
    if (auto const* a = std::get_if<schedule::RwAllocWave>(&s.steps[i]))
      if (auto why = support_ ? support_(a->algorithm) : std::string(); !why.empty())
        return "steps[" + std::to_string(i) + "]: " + why;
  return {};
}

RunOutcome RwRunner::run(schedule::RwSchedule const& s, StepCallback const& on_step) {
  schedule::validate(s);
  if (auto const why = unsupported(s); !why.empty())
    throw core::precondition_error("runner '" + name_ + "' cannot run this schedule: " + why);
  std::unique_ptr<rw::StepExecutor> executor;
  try {
    executor = make_(to_pool_config(s.pool));
  } catch (std::exception const& e) {
    RunOutcome out;
    out.steps_run = 1;
    out.failure   = crash(0, std::string("making the pool: ") + e.what());
    return out;
  }
  return RwRun(s, *executor, on_step).run();
}

RunOutcome RwRunner::run(runner::AnySchedule const& s, StepCallback const& on_step) {
  return run(s.get<schedule::RwSchedule>(), on_step);
}

Support RwRunner::supports(runner::AnySchedule const& s) const {
  std::string const why = unsupported(s.get<schedule::RwSchedule>());
  return {why.empty(), why};
}

}  // namespace heaplab::rw_family
