// The interleaving family's runner (explore_runner.hpp).
#include "heaplab/families/interleaving/explore_runner.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <utility>
#include <vector>

#include "heaplab/core/expects.hpp"
#include "heaplab/core/protocol_check.hpp"
#include "heaplab/explore/controlled_run.hpp"
#include "heaplab/families/interleaving/family.hpp"
#include "heaplab/families/interleaving/workloads/programs.hpp"

namespace heaplab::interleaving_family {

using runner::Failure;
using runner::RunOutcome;
using runner::StepReport;

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

/// The messages' first words and the check each names (the workloads' own words:
/// workloads/heap_workload.hpp, bitmap_workload.hpp, rw_workload.hpp, page_ownership.hpp,
/// queue_workload.hpp, lemma5.hpp, claim_paths.hpp; core/protocol_check.hpp).
struct Prefix {
  char const* text;
  char const* check;
};
constexpr Prefix kPrefixes[] = {
    {"protocol violation: ", checks::kProtocol},
    {"catalog at the barrier: ", checks::kCatalogAtBarrier},
    {"at the barrier, slot ", checks::kBarrierOwnership},
    {"catalog at the end: ", checks::kCatalogAtEnd},
    {"capacity lost: ", checks::kCapacityLost},
    {"ownership log: ", checks::kOwnershipLog},
    {"allocate(", checks::kAllocationResult},
    {"allocate returned ", checks::kAllocationResult},
    {"reserve_slots(", checks::kAllocationResult},
    {"payload of ", checks::kPayload},
    {"oom-justified: ", checks::kOomJustified},
    {"Lemma 5 / ", checks::kLemma5},
    {"Def. 1: ", checks::kLemma5},
    {"bounded waiting: ", checks::kBoundedWaiting},
    {"claim paths: ", checks::kClaimPaths},
    {"tokens not conserved", checks::kBitmapTokens},
    {"clear_any returned ", checks::kBitmapTokens},
    {"token ", checks::kBitmapTokens},
    {"model: ", checks::kPageModel},
    {"rw catalog at ", checks::kRwCatalog},
    {"after the drain ", checks::kPagesLost},
    {"scheduler: ", checks::kScheduler},
};

/// Follows a schedule's decisions, then continues without preemption (PrefixStrategy's
/// continuation: the current thread while it may run on and did not yield, else the next
/// runnable one in round-robin order; reads take the latest store). The first decision that does
/// not fit the program ends the list: it is noted and the run goes on without preemption. (Never
/// an exception: the scheduler also decides at a thread's exit, where one would end the
/// process.)
class DecisionStrategy final : public explore::Strategy {
 public:
  explicit DecisionStrategy(std::vector<Decision> const& steps) : steps_(steps) {}
  [[nodiscard]] std::string describe() const override {
    return "decisions(" + std::to_string(steps_.size()) + ", then no preemption)";
  }
  void begin_run(std::uint32_t) override {
    position_ = 0;
    ended_    = steps_.empty();
    mismatch_.clear();
  }
  std::uint32_t pick(explore::Decision const& d) override {
    if (!ended_) {
      Decision const next = steps_[position_];
      if (next.kind == Decision::Kind::thread &&
          std::binary_search(d.runnable.begin(), d.runnable.end(), next.value))
        return advance(next.value);
      end_with(next.kind == Decision::Kind::read
                   ? "a read decision where the run makes a scheduling decision"
                   : "thread " + std::to_string(next.value) +
                         " cannot run at this decision point (runnable: " + list(d.runnable) + ")");
    }
    if (d.current_runnable && !d.current_yielded) return d.current;
    if (d.current == explore::kNoThread) return d.runnable.front();
    for (std::uint32_t t : d.runnable)
      if (t > d.current) return t;
    return d.runnable.front();
  }
  std::uint32_t pick_read(explore::ReadDecision const& r) override {
    if (ended_) return 0;
    Decision const next = steps_[position_];
    if (next.kind == Decision::Kind::read && next.value < r.options) return advance(next.value);
    end_with(next.kind == Decision::Kind::thread
                 ? "a scheduling decision where the run makes a read decision (T" +
                       std::to_string(r.thread) + " loads)"
                 : "read r" + std::to_string(next.value) + " but the load may read only " +
                       std::to_string(r.options) + " stores");
    return 0;
  }
  /// Decisions of the list the run followed.
  [[nodiscard]] std::size_t followed() const { return position_; }
  /// "" when every decision fitted, else the first that did not (its path and why).
  [[nodiscard]] std::string const& mismatch_path() const { return mismatch_path_; }
  [[nodiscard]] std::string const& mismatch() const { return mismatch_; }

 private:
  std::uint32_t advance(std::uint32_t choice) {
    ended_ = ++position_ == steps_.size();
    return choice;
  }
  void end_with(std::string why) {
    mismatch_path_ = "steps[" + std::to_string(position_) + "]";
    mismatch_      = std::move(why);
    ended_         = true;
  }
  static std::string list(std::vector<std::uint32_t> const& threads) {
    std::string out;
    for (std::uint32_t t : threads) out += (out.empty() ? "" : ", ") + std::to_string(t);
    return out;
  }

  std::vector<Decision> const& steps_;
  std::size_t position_ = 0;
  bool ended_           = true;
  std::string mismatch_path_;
  std::string mismatch_;
};

/// The check of the first thread that threw a protocol_error or a precondition_error, noted
/// before the scheduler turns the exception into a message.
class ThrownBy {
 public:
  void note(char const* check) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (check_.empty()) check_ = check;
  }
  [[nodiscard]] std::string check() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return check_;
  }

 private:
  mutable std::mutex mutex_;
  std::string check_;
};

/// Wraps every thread body of `p` so that the type of what it throws is noted (the exception
/// itself goes on to the scheduler unchanged; its own unwinding signal is not caught here).
std::shared_ptr<ThrownBy> watch_threads(explore::Program& p) {
  auto seen = std::make_shared<ThrownBy>();
  for (auto& thread : p.threads)
    thread = [body = std::move(thread), seen] {
      try {
        body();
      } catch (core::protocol_error const&) {
        seen->note(checks::kProtocol);
        throw;
      } catch (core::precondition_error const&) {
        seen->note(checks::kPrecondition);
        throw;
      }
    };
  return seen;
}

std::unique_ptr<explore::Strategy> make_seeded(SeededStrategy const& s) {
  if (s.name == SeededStrategy::Name::random)
    return std::make_unique<explore::RandomStrategy>(s.seed);
  return std::make_unique<explore::PctStrategy>(s.seed, s.depth, s.step_estimate);
}

std::vector<std::string> lines_of(std::string const& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t const end = std::min(text.find('\n', pos), text.size());
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

/// The counts key of an outcome ("livelock" for an exceeded step budget).
char const* outcome_key(explore::Outcome o) {
  return o == explore::Outcome::step_budget_exceeded ? "livelock" : explore::to_string(o);
}

/// The record, violations and detail of a failed run (step and reproducer are the caller's).
Failure failure_of(InterleavingSchedule const& s,
                   explore::RunResult const& r,
                   std::string const& thrown,
                   std::string const& unfit) {
  bool const in_thread = r.outcome == explore::Outcome::thread_error;
  auto const lines     = lines_of(r.message);
  Failure f;
  f.kind    = runner::FailureKind::invariant_violation;
  f.message = lines.front();
  f.check   = r.outcome == explore::Outcome::deadlock               ? checks::kDeadlock
              : r.outcome == explore::Outcome::step_budget_exceeded ? checks::kLivelock
              : in_thread && !thrown.empty()                        ? thrown
                                             : check_of(lines.front(), in_thread);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    check::Violation v;
    v.invariant = i == 0 ? f.check : check_of(lines[i], in_thread);
    v.message   = lines[i];
    f.violations.push_back(std::move(v));
  }
  std::vector<Decision> decisions;
  for (auto const& d : r.decisions) decisions.push_back(Decision::decode(d.chosen));
  auto detail     = std::make_shared<ExploreFailureDetail>();
  detail->outcome = std::string(explore::to_string(r.outcome)) + " after " +
                    std::to_string(r.steps) + " atomic operations, " +
                    std::to_string(r.num_threads) + " threads, " + std::to_string(r.preemptions) +
                    " preemptions";
  detail->strategy = r.strategy;
  if (r.memory_model != explore::MemoryModel::sequential_consistency)
    detail->memory = std::string(explore::to_string(r.memory_model)) + " (" +
                     std::to_string(r.stale_reads) + " loads read an older store)";
  detail->workload  = describe_workload_of(s);
  detail->decisions = std::to_string(decisions.size()) + ": " + schedule_text(decisions);
  detail->unfit     = unfit;
  detail->trace     = r.trace_text;
  f.detail          = std::move(detail);
  return f;
}

/// Sets the failing step (and, where the run chose its decisions, the reproducer).
void place_failure(Failure& f,
                   InterleavingSchedule const& s,
                   explore::RunResult const& r,
                   std::size_t followed) {
  if (s.strategy || s.steps.empty()) {
    InterleavingSchedule rep = s;
    rep.strategy.reset();
    rep.steps.clear();
    for (auto const& d : r.decisions) rep.steps.push_back(Decision::decode(d.chosen));
    HEAPLAB_EXPECTS(!rep.steps.empty(), "a controlled run makes at least one decision");
    f.step             = rep.steps.size() - 1;
    f.step_description = "decision " + std::to_string(f.step) + ": " + describe(rep.steps.back());
    f.reproducer       = family().wrap(std::move(rep));
    return;
  }
  f.step             = followed > 0 ? followed - 1 : 0;
  f.step_description = "decision " + std::to_string(f.step) + ": " + describe(s.steps[f.step]);
}

/// "heap seed 7, pct(depth=1,steps=150,seed=7)" or "heap seed 7, 212 decisions".
std::string run_description(InterleavingSchedule const& s) {
  return std::string(workloads::to_string(s.workload)) + " seed " +
         std::to_string(s.workload_seed) + ", " +
         (s.strategy ? describe(*s.strategy) : std::to_string(s.steps.size()) + " decisions");
}

/// The report of the run's last step (the strategy's run, or the last decision followed): what
/// the whole run did. The decisions before it get a line each (report_decisions).
StepReport report_of(InterleavingSchedule const& s,
                     explore::RunResult const& r,
                     RunOutcome const& out,
                     std::string const& unfit) {
  StepReport rep;
  rep.index       = out.steps_run - 1;
  rep.op          = "run";
  rep.description = run_description(s);
  rep.ok          = !out.failure;
  rep.add_count("runs", 1);
  rep.add_count("atomic_operations", r.steps);
  rep.add_count("decisions", r.decisions.size());
  rep.add_count("preemptions", r.preemptions);
  rep.add_count("stale_reads", r.stale_reads);
  rep.add_count(outcome_key(r.outcome), 1);
  rep.line = "run: " + rep.description + " | " + std::to_string(r.decisions.size()) +
             " decisions, " + std::to_string(r.steps) + " atomic operations, " +
             std::to_string(r.preemptions) + " preemptions | " +
             (out.failure ? std::string("FAILED (") + outcome_key(r.outcome) + ")" : "passed") +
             (unfit.empty() ? std::string() : " | " + unfit);
  return rep;
}

}  // namespace

std::string check_of(std::string_view line, bool thread_error) {
  // A thread's failure reads "T<i> failed: <what>".
  if (std::size_t const at = line.find(" failed: ");
      at != std::string_view::npos && starts_with(line, "T"))
    line.remove_prefix(at + 9);
  if (contains(line, "the new owner reads")) return checks::kHappensBefore;
  for (Prefix const& p : kPrefixes)
    if (starts_with(line, p.text)) return p.check;
  if (contains(line, " still holds pages")) return checks::kPagesLost;
  if (contains(line, " took ") && contains(line, " steps (")) return checks::kRequestSteps;
  if (starts_with(line, "queue: ") || contains(line, ": queue: ")) return checks::kQueueRing;
  return thread_error ? checks::kThreadException : checks::kPostRunCheck;
}

std::string describe_workload_of(InterleavingSchedule const& s) {
  return workloads::describe_workload(s.workload, s.workload_seed);
}

std::string ExploreFailureDetail::report(Failure const&, runner::ReportOptions const&) const {
  auto indent = [](std::string const& text) {
    std::string out;
    for (char c : text) out += c == '\n' ? std::string("\n            ") : std::string(1, c);
    return out;
  };
  std::string out = "  outcome:  " + outcome + "\n  strategy: " + strategy + "\n";
  if (!memory.empty()) out += "  memory:   " + memory + "\n";
  out += "  workload: " + indent(workload) + "\n";
  constexpr std::size_t kShown = 2000;
  if (!unfit.empty()) out += "  note:     " + unfit + "\n";
  out +=
      "  decisions " +
      (decisions.size() <= kShown ? decisions
                                  : decisions.substr(0, kShown) + "... (heaplab show lists all)") +
      "\n";
  out += "  trace:\n" + trace;
  if (!trace.empty() && trace.back() != '\n') out += "\n";
  return out;
}

runner::Support ExploreRunner::supports(runner::AnySchedule const& s) const {
  (void)s.get<InterleavingSchedule>();
  return {};
}

RunOutcome ExploreRunner::run(InterleavingSchedule const& s, runner::StepCallback const& on_step) {
  validate(s);
  explore::Program program =
      workloads::workload_factory(s.workload, s.workload_seed)(s.workload_seed);
  auto const thrown = watch_threads(program);
  explore::RunOptions o;
  o.memory_model     = s.memory_model;
  o.step_budget      = s.step_budget;
  o.record_decisions = true;
  DecisionStrategy follow(s.steps);
  std::unique_ptr<explore::Strategy> const seeded = s.strategy ? make_seeded(*s.strategy) : nullptr;
  explore::RunResult const r = explore::run_program(program, seeded ? *seeded : follow, o);
  RunOutcome out;
  out.steps_run           = seeded ? 1 : follow.followed();
  std::string const unfit = seeded || follow.mismatch().empty()
                                ? std::string()
                                : follow.mismatch_path() + " did not fit (" + follow.mismatch() +
                                      "): the run followed " + std::to_string(follow.followed()) +
                                      " of " + std::to_string(s.steps.size()) +
                                      " decisions, then went on without preemption";
  if (!r.passed()) {
    out.failure = failure_of(s, r, thrown->check(), unfit);
    place_failure(*out.failure, s, r, out.steps_run);
  }
  if (on_step && out.steps_run > 0) {
    for (std::size_t i = 0; !seeded && i + 1 < out.steps_run; ++i) {
      StepReport d;
      d.index       = i;
      d.op          = "decision";
      d.description = describe(s.steps[i]);
      d.line        = "decision " + std::to_string(i) + ": " + d.description;
      on_step(d);
    }
    on_step(report_of(s, r, out, unfit));
  }
  return out;
}

RunOutcome ExploreRunner::run(runner::AnySchedule const& s, runner::StepCallback const& on_step) {
  return run(s.get<InterleavingSchedule>(), on_step);
}

}  // namespace heaplab::interleaving_family
