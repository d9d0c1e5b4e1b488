// The controlled scheduler: runs a Program's logical threads (real std::threads) one at a time,
// passing a baton at every atomic operation of the portable core (core::ObservedAtomics calls
// this scheduler's AtomicObserver before and after each operation). A Strategy decides at each
// operation which thread runs next, so an interleaving is a pure function of the program and the
// strategy's seed, and a failing one replays exactly. docs/explorer.md.
//
// Failures a run reports (Outcome):
//   thread_error          a logical thread threw (a protocol check, a precondition, a test
//                         assertion in the thread such as "slot handed to two owners")
//   deadlock              every live thread waits in a retry loop for a memory change that no
//                         runnable thread can make (e.g. a set() on a bit nobody will clear)
//   step_budget_exceeded  the run executed more atomic operations than the budget: a livelock
//                         such as a retry loop that never gives up (the hang class of the
//                         original DynaSOAr on Hopper)
//   check_failed          the program's post-run check returned violations
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "heaplab/explore/memory_model.hpp"
#include "heaplab/explore/strategy.hpp"
#include "heaplab/explore/trace.hpp"

namespace heaplab::explore {

/// One execution's worth of state: the thread bodies and what to check afterwards. A
/// ProgramFactory builds a fresh one for every run (the explorer re-executes from scratch).
struct Program {
  std::vector<std::function<void()>> threads;
  /// Runs after every thread finished normally (not after an aborted run), on the calling thread
  /// with no observer installed. Returns the violations found; empty means the run passed.
  std::function<std::vector<std::string>(std::vector<Event> const& events)> check;
  /// Symbolic address names for the trace (core::HostHeap::describe_address and the like).
  AddressNamer describe_address;
};

enum class Outcome : std::uint8_t {
  passed,
  thread_error,
  deadlock,
  step_budget_exceeded,
  check_failed
};

[[nodiscard]] char const* to_string(Outcome o);

struct RunOptions {
  /// sequential_consistency: every load reads the latest store. release_acquire: the weak-memory
  /// mode (memory_model.hpp); a load may read an older store, the strategy picks which.
  MemoryModel memory_model = MemoryModel::sequential_consistency;
  /// Atomic operations after which a run is declared livelocked.
  std::uint64_t step_budget = 50'000;
  /// Keep each decision point's runnable set (the exhaustive search needs them).
  bool record_decisions = false;
  /// Format the trace of passing runs too (failing runs are always formatted).
  bool format_passing_trace = false;
  /// Lines of trace kept in the formatted text of a failure (0: all). Livelocks run to the
  /// budget; their tail is what matters.
  std::size_t trace_tail = 400;
};

/// A decision point as recorded for the exhaustive search: a scheduling decision (chosen is a
/// thread), or in the weak-memory mode a read decision (read_options > 0, chosen is
/// kReadChoice | the number of newer stores the load skipped; decision.runnable is empty).
struct DecisionRecord {
  Decision decision;
  std::uint32_t chosen       = kNoThread;
  std::uint32_t read_options = 0;

  [[nodiscard]] bool is_read() const { return read_options > 0; }
};

struct RunResult {
  Outcome outcome = Outcome::passed;
  std::string message;   // the failure ("" when passed)
  std::string strategy;  // Strategy::describe()
  MemoryModel memory_model  = MemoryModel::sequential_consistency;
  std::uint64_t steps       = 0;
  std::uint64_t stale_reads = 0;  // loads that read an older store (weak-memory mode)
  std::uint32_t num_threads = 0;
  std::uint32_t preemptions = 0;
  std::vector<Event> events;
  std::vector<DecisionRecord> decisions;  // with RunOptions::record_decisions
  std::string trace_text;                 // formatted trace (failures, or format_passing_trace)

  [[nodiscard]] bool passed() const { return outcome == Outcome::passed; }
};

/// Runs `program` once under `strategy`. Not reentrant across threads of the same program;
/// independent runs may proceed concurrently on different programs.
RunResult run_program(Program& program, Strategy& strategy, RunOptions const& options = {});

}  // namespace heaplab::explore
