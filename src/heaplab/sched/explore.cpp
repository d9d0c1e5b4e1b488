#include "heaplab/sched/explore.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace heaplab::sched {

char const* to_string(StrategyKind k) {
  switch (k) {
    case StrategyKind::random:
      return "random";
    case StrategyKind::pct:
      return "pct";
    case StrategyKind::mixed:
      return "mixed";
    case StrategyKind::exhaustive:
      return "exhaustive";
  }
  return "?";
}

StrategyKind strategy_kind_from_string(std::string const& name) {
  for (StrategyKind k :
       {StrategyKind::random, StrategyKind::pct, StrategyKind::mixed, StrategyKind::exhaustive})
    if (name == to_string(k)) return k;
  throw std::invalid_argument("unknown strategy '" + name +
                              "' (expected random, pct, mixed or exhaustive)");
}

std::unique_ptr<Strategy> make_strategy(StrategyKind kind,
                                        std::uint64_t seed,
                                        ExploreOptions const& options) {
  switch (kind) {
    case StrategyKind::random:
      return std::make_unique<RandomStrategy>(seed);
    case StrategyKind::pct:
      return std::make_unique<PctStrategy>(seed, options.pct_depth, options.pct_steps);
    case StrategyKind::mixed:
      if (seed % 2 == 0) return std::make_unique<RandomStrategy>(seed);
      return std::make_unique<PctStrategy>(
          seed, 1 + static_cast<std::uint32_t>((seed / 2) % 3), options.pct_steps);
    case StrategyKind::exhaustive:
      break;
  }
  throw std::invalid_argument("make_strategy: exhaustive search has no per-seed strategy");
}

std::string format_schedule(std::vector<std::uint32_t> const& schedule) {
  std::string out;
  for (std::size_t i = 0; i < schedule.size();) {
    std::size_t j = i;
    while (j < schedule.size() && schedule[j] == schedule[i]) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(schedule[i]) + "*" + std::to_string(j - i);
    i = j;
  }
  return out;
}

std::vector<std::uint32_t> parse_schedule(std::string const& text) {
  std::vector<std::uint32_t> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t const comma = std::min(text.find(',', pos), text.size());
    std::string const item  = text.substr(pos, comma - pos);
    std::size_t const star  = item.find('*');
    try {
      if (star == std::string::npos) throw std::invalid_argument("no '*'");
      std::size_t used           = 0;
      unsigned long const thread = std::stoul(item.substr(0, star), &used);
      if (used != star) throw std::invalid_argument("thread");
      std::string const count_text = item.substr(star + 1);
      unsigned long const count    = std::stoul(count_text, &used);
      if (used != count_text.size() || count == 0) throw std::invalid_argument("count");
      out.insert(out.end(), count, static_cast<std::uint32_t>(thread));
    } catch (std::exception const&) {
      throw std::invalid_argument("malformed schedule item '" + item +
                                  "' (expected thread*count, e.g. 0*12,1*5)");
    }
    pos = comma + 1;
  }
  return out;
}

std::string format_failure(RunResult const& r, std::uint64_t seed, StrategyKind kind) {
  std::string out = "heaplab explorer: FAILURE\n";
  out += "  strategy: " + r.strategy + "\n";
  if (kind != StrategyKind::exhaustive)
    out += "  seed:     " + std::to_string(seed) + "  (replay: --strategy " + to_string(kind) +
           " --seed " + std::to_string(seed) + ")\n";
  else {
    std::vector<std::uint32_t> schedule;
    for (auto const& d : r.decisions) schedule.push_back(d.chosen);
    out += "  schedule: " + format_schedule(schedule) + "  (replay: --schedule <this>)\n";
  }
  out += "  outcome:  " + std::string(to_string(r.outcome)) + " after " + std::to_string(r.steps) +
         " atomic operations, " + std::to_string(r.num_threads) + " threads, " +
         std::to_string(r.preemptions) + " preemptions\n";
  out += "  what:     ";
  for (char c : r.message) {
    out += c;
    if (c == '\n') out += "            ";
  }
  out += "\n  trace:\n" + r.trace_text;
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool out_of_time(ExploreOptions const& o, Clock::time_point start) {
  return o.time_budget_s > 0 && seconds_since(start) > o.time_budget_s;
}

ExploreReport explore_seeded(ProgramFactory const& factory, ExploreOptions const& options) {
  ExploreReport report;
  auto const start = Clock::now();
  for (std::uint64_t i = 0; i < options.max_runs && !out_of_time(options, start); ++i) {
    std::uint64_t const seed = options.seed + i;
    Program program          = factory(seed);
    auto strategy            = make_strategy(options.strategy, seed, options);
    RunResult result         = run_program(program, *strategy, options.run);
    ++report.runs;
    report.steps += result.steps;
    if (!result.passed()) {
      report.failing_seed   = seed;
      report.failure_report = format_failure(result, seed, options.strategy);
      report.failure        = std::move(result);
      break;
    }
  }
  report.seconds = seconds_since(start);
  return report;
}

/// Depth-first search over decision points with a preemption bound. A frame per decision point
/// of the current path: its runnable threads in the order tried (the non-preemptive default
/// first) and the cost (preemptions) of the path before it.
ExploreReport explore_exhaustive(ProgramFactory const& factory, ExploreOptions const& options) {
  struct Frame {
    Decision decision;
    std::vector<std::uint32_t> order;  // choices in the order they are tried
    std::size_t next          = 0;     // index of the next untried choice
    std::uint32_t chosen      = kNoThread;
    std::uint32_t cost_before = 0;
  };
  ExploreReport report;
  auto const start             = Clock::now();
  RunOptions run_options       = options.run;
  run_options.record_decisions = true;
  std::vector<Frame> stack;
  std::vector<std::uint32_t> prefix;
  for (;;) {
    if (report.runs >= options.max_runs || out_of_time(options, start)) break;
    Program program = factory(0);
    PrefixStrategy strategy(prefix);
    RunResult result = run_program(program, strategy, run_options);
    ++report.runs;
    report.steps += result.steps;
    if (!result.passed()) {
      result.strategy = "exhaustive(preemption bound " + std::to_string(options.preemption_bound) +
                        "), interleaving #" + std::to_string(report.runs);
      for (auto const& d : result.decisions) report.failing_schedule.push_back(d.chosen);
      report.failure_report = format_failure(result, 0, StrategyKind::exhaustive);
      report.failure        = std::move(result);
      break;
    }
    // Extend the path with this run's decisions beyond the prefix.
    std::uint32_t cost =
        stack.empty() ? 0
                      : stack.back().cost_before +
                            (stack.back().decision.is_preemption(stack.back().chosen) ? 1 : 0);
    if (result.decisions.size() < prefix.size())
      throw std::logic_error(
          "exhaustive search: a replayed run made fewer decisions than its prefix");
    for (std::size_t i = prefix.size(); i < result.decisions.size(); ++i) {
      DecisionRecord const& rec = result.decisions[i];
      Frame f;
      f.decision    = rec.decision;
      f.chosen      = rec.chosen;
      f.cost_before = cost;
      f.order.push_back(rec.chosen);
      // Fairness (as in CHESS): a thread that just gave up an attempt (Backoff::retry) is not
      // rescheduled while another thread can run; otherwise a retry loop would make the
      // space of schedules infinite.
      bool const others = rec.decision.runnable.size() > 1;
      for (std::uint32_t t : rec.decision.runnable)
        if (t != rec.chosen &&
            !(others && rec.decision.current_yielded && t == rec.decision.current))
          f.order.push_back(t);
      f.next = 1;
      cost += rec.decision.is_preemption(rec.chosen) ? 1 : 0;
      stack.push_back(std::move(f));
    }
    // Backtrack to the deepest frame with an untried choice within the bound.
    bool advanced = false;
    while (!stack.empty() && !advanced) {
      Frame& f = stack.back();
      while (f.next < f.order.size()) {
        std::uint32_t const c = f.order[f.next++];
        if (f.cost_before + (f.decision.is_preemption(c) ? 1 : 0) <= options.preemption_bound) {
          f.chosen = c;
          advanced = true;
          break;
        }
      }
      if (!advanced) stack.pop_back();
    }
    if (!advanced) {
      report.exhausted = true;
      break;
    }
    prefix.clear();
    for (Frame const& f : stack) prefix.push_back(f.chosen);
  }
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace

ExploreReport explore(ProgramFactory const& factory, ExploreOptions const& options) {
  if (options.strategy == StrategyKind::exhaustive) return explore_exhaustive(factory, options);
  return explore_seeded(factory, options);
}

RunResult replay_schedule(ProgramFactory const& factory,
                          std::vector<std::uint32_t> const& schedule,
                          ExploreOptions const& options) {
  Program program = factory(0);
  PrefixStrategy strategy(schedule);
  RunOptions run_options       = options.run;
  run_options.record_decisions = true;
  return run_program(program, strategy, run_options);
}

RunResult replay(ProgramFactory const& factory,
                 StrategyKind kind,
                 std::uint64_t seed,
                 ExploreOptions const& options) {
  Program program = factory(seed);
  auto strategy   = make_strategy(kind, seed, options);
  return run_program(program, *strategy, options.run);
}

}  // namespace heaplab::sched
