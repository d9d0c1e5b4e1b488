#include "heaplab/explore/explore.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/core/enum_names.hpp"

namespace heaplab::explore {

namespace {
constexpr core::EnumName<StrategyKind> kStrategyNames[] = {
    {StrategyKind::random, "random"},
    {StrategyKind::pct, "pct"},
    {StrategyKind::mixed, "mixed"},
    {StrategyKind::exhaustive, "exhaustive"}};
}  // namespace

char const* to_string(StrategyKind k) { return core::name_of(kStrategyNames, k); }

StrategyKind strategy_kind_from_string(std::string const& name) {
  if (auto const k = core::value_of(kStrategyNames, name)) return *k;
  throw std::invalid_argument("unknown strategy '" + name + "' (expected " +
                              core::names_of(kStrategyNames) + ")");
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
    std::string const item = (schedule[i] & kReadChoice) != 0
                                 ? "r" + std::to_string(schedule[i] & ~kReadChoice)
                                 : std::to_string(schedule[i]);
    out += (out.empty() ? "" : ",") + item + "*" + std::to_string(j - i);
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
      bool const read              = !item.empty() && item[0] == 'r';
      std::string const value_text = item.substr(read ? 1 : 0, star - (read ? 1 : 0));
      std::size_t used             = 0;
      unsigned long const value    = std::stoul(value_text, &used);
      if (used != value_text.size() || value >= kReadChoice) throw std::invalid_argument("value");
      std::string const count_text = item.substr(star + 1);
      unsigned long const count    = std::stoul(count_text, &used);
      if (used != count_text.size() || count == 0) throw std::invalid_argument("count");
      out.insert(out.end(), count, static_cast<std::uint32_t>(value) | (read ? kReadChoice : 0u));
    } catch (std::exception const&) {
      throw std::invalid_argument(
          "malformed schedule item '" + item +
          "' (expected thread*count or r<skipped stores>*count, e.g. 0*12,r1*1,1*5)");
    }
    pos = comma + 1;
  }
  return out;
}

std::string format_failure(RunResult const& r, std::uint64_t seed, StrategyKind kind) {
  bool const weak = r.memory_model != MemoryModel::sequential_consistency;
  std::string const model_option =
      weak ? std::string(" --memory-model ") + to_string(r.memory_model) : std::string();
  std::string out = "heaplab explorer: FAILURE\n";
  out += "  strategy: " + r.strategy + "\n";
  if (weak)
    out += "  memory:   " + std::string(to_string(r.memory_model)) + " (" +
           std::to_string(r.stale_reads) + " loads read an older store)\n";
  if (kind != StrategyKind::exhaustive)
    out += "  seed:     " + std::to_string(seed) + "  (replay: --strategy " + to_string(kind) +
           " --seed " + std::to_string(seed) + model_option + ")\n";
  else {
    std::vector<std::uint32_t> schedule;
    for (auto const& d : r.decisions) schedule.push_back(d.chosen);
    out += "  schedule: " + format_schedule(schedule) + "  (replay: --schedule <this>" +
           model_option + ")\n";
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

/// A decision point of the exhaustive search's current path: its choices in the order tried (the
/// non-preemptive default, or the latest store, first) and the costs (preemptions, stale reads)
/// of the path before it.
struct Frame {
  Decision decision;
  std::uint32_t read_options = 0;    // > 0: a read decision
  std::vector<std::uint32_t> order;  // choices in the order they are tried
  std::size_t next           = 0;    // index of the next untried choice
  std::uint32_t chosen       = kNoThread;
  std::uint32_t cost_before  = 0;  // preemptions
  std::uint32_t stale_before = 0;  // stale reads

  [[nodiscard]] std::uint32_t cost_of(std::uint32_t c) const {
    return read_options == 0 && decision.is_preemption(c) ? 1 : 0;
  }
  [[nodiscard]] std::uint32_t stale_of(std::uint32_t c) const {
    return read_options > 0 && c != kReadChoice ? 1 : 0;
  }

  /// The frame of a decision a run made (its choice tried first), after a path of these costs.
  static Frame of(DecisionRecord const& rec, std::uint32_t cost, std::uint32_t stale) {
    Frame f;
    f.decision     = rec.decision;
    f.read_options = rec.read_options;
    f.chosen       = rec.chosen;
    f.cost_before  = cost;
    f.stale_before = stale;
    f.order.push_back(rec.chosen);
    if (rec.is_read()) {
      // The other stores the load may read, newest first.
      for (std::uint32_t k = 0; k < rec.read_options; ++k)
        if ((kReadChoice | k) != rec.chosen) f.order.push_back(kReadChoice | k);
    } else {
      // Fairness (as in CHESS): a thread that just gave up an attempt (Backoff::retry) is
      // not rescheduled while another thread can run; otherwise a retry loop would make the
      // space of schedules infinite.
      bool const others = rec.decision.runnable.size() > 1;
      for (std::uint32_t t : rec.decision.runnable)
        if (t != rec.chosen &&
            !(others && rec.decision.current_yielded && t == rec.decision.current))
          f.order.push_back(t);
    }
    f.next = 1;
    return f;
  }
};

/// The current path of the exhaustive search, a Frame per decision point.
class SearchPath {
 public:
  /// Extends the path with a run's decisions beyond the prefix it replayed.
  void extend(RunResult const& result, std::size_t prefix_size) {
    std::uint32_t cost  = 0;
    std::uint32_t stale = 0;
    if (!stack_.empty()) {
      Frame const& top = stack_.back();
      cost             = top.cost_before + top.cost_of(top.chosen);
      stale            = top.stale_before + top.stale_of(top.chosen);
    }
    if (result.decisions.size() < prefix_size)
      throw std::logic_error(
          "exhaustive search: a replayed run made fewer decisions than its prefix");
    for (std::size_t i = prefix_size; i < result.decisions.size(); ++i) {
      DecisionRecord const& rec = result.decisions[i];
      Frame f                   = Frame::of(rec, cost, stale);
      cost += f.cost_of(rec.chosen);
      stale += f.stale_of(rec.chosen);
      stack_.push_back(std::move(f));
    }
  }

  /// Backtracks to the deepest frame with an untried choice within the bounds; false when there
  /// is none (the search is exhausted).
  bool backtrack(ExploreOptions const& options) {
    while (!stack_.empty()) {
      Frame& f = stack_.back();
      while (f.next < f.order.size()) {
        std::uint32_t const c = f.order[f.next++];
        if (f.cost_before + f.cost_of(c) <= options.preemption_bound &&
            f.stale_before + f.stale_of(c) <= options.stale_read_bound) {
          f.chosen = c;
          return true;
        }
      }
      stack_.pop_back();
    }
    return false;
  }

  /// The choices of the path, for the next run to replay.
  [[nodiscard]] std::vector<std::uint32_t> prefix() const {
    std::vector<std::uint32_t> out;
    for (Frame const& f : stack_) out.push_back(f.chosen);
    return out;
  }

 private:
  std::vector<Frame> stack_;
};

std::string exhaustive_strategy_name(ExploreOptions const& options, std::uint64_t run) {
  return "exhaustive(preemption bound " + std::to_string(options.preemption_bound) +
         (options.run.memory_model == MemoryModel::sequential_consistency
              ? std::string()
              : ", stale-read bound " + std::to_string(options.stale_read_bound)) +
         "), interleaving #" + std::to_string(run);
}

/// Depth-first search over decision points with a preemption bound (and, in the weak-memory
/// mode, a bound on loads that read an older store), along a SearchPath.
ExploreReport explore_exhaustive(ProgramFactory const& factory, ExploreOptions const& options) {
  ExploreReport report;
  auto const start             = Clock::now();
  RunOptions run_options       = options.run;
  run_options.record_decisions = true;
  SearchPath path;
  std::vector<std::uint32_t> prefix;
  for (;;) {
    if (report.runs >= options.max_runs || out_of_time(options, start)) break;
    Program program = factory(0);
    PrefixStrategy strategy(prefix);
    RunResult result = run_program(program, strategy, run_options);
    ++report.runs;
    report.steps += result.steps;
    if (!result.passed()) {
      result.strategy = exhaustive_strategy_name(options, report.runs);
      for (auto const& d : result.decisions) report.failing_schedule.push_back(d.chosen);
      report.failure_report = format_failure(result, 0, StrategyKind::exhaustive);
      report.failure        = std::move(result);
      break;
    }
    path.extend(result, prefix.size());
    if (!path.backtrack(options)) {
      report.exhausted = true;
      break;
    }
    prefix = path.prefix();
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

}  // namespace heaplab::explore
