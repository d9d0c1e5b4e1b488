#include "heaplab/explore/controlled_run.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/enum_names.hpp"

namespace heaplab::explore {

char const* to_string(Outcome o) {
  static constexpr core::EnumName<Outcome> kNames[] = {
      {Outcome::passed, "passed"},
      {Outcome::thread_error, "thread_error"},
      {Outcome::deadlock, "deadlock"},
      {Outcome::step_budget_exceeded, "step_budget_exceeded"},
      {Outcome::check_failed, "check_failed"}};
  return core::name_of(kNames, o);
}

namespace {

/// Thrown inside a logical thread to unwind it when the run is aborted; never escapes a worker.
struct RunAborted {};

thread_local std::uint32_t tls_logical_thread = kNoThread;

/// Baton passing. Invariant: at most one logical thread is outside a wait at any time (the one
/// with running_ == its index); every shared field below is accessed with mutex_ held, and the
/// baton hand-over goes through mutex_, so a run is race-free and deterministic.
class Controller final : public core::AtomicObserver {
 public:
  Controller(Program& program, Strategy& strategy, RunOptions const& options)
      : program_(program),
        strategy_(strategy),
        options_(options),
        workers_(program.threads.size()) {
    result_.strategy     = strategy.describe();
    result_.num_threads  = static_cast<std::uint32_t>(program.threads.size());
    result_.memory_model = options.memory_model;
    if (options.memory_model == MemoryModel::release_acquire) memory_.emplace(result_.num_threads);
  }

  RunResult run() {
    std::uint32_t const n = result_.num_threads;
    strategy_.begin_run(n);
    alive_ = n;
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) threads.emplace_back([this, i] { worker_main(i); });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (n > 0) {
        try {
          hand_over(lock, kNoThread);
        } catch (RunAborted const&) {
          // cannot happen at the start (no thread is waiting for a memory change yet)
        } catch (std::exception const& e) {
          abort(Outcome::thread_error, std::string("scheduler: ") + e.what());
        }
      }
      done_cv_.wait(lock, [this] { return alive_ == 0; });
    }
    for (auto& t : threads) t.join();

    result_.steps = steps_;
    if (result_.outcome == Outcome::passed && program_.check) {
      std::vector<std::string> const violations = program_.check(result_.events);
      if (!violations.empty()) {
        result_.outcome = Outcome::check_failed;
        for (auto const& v : violations)
          result_.message += (result_.message.empty() ? "" : "\n") + v;
      }
    }
    if (!result_.passed() || options_.format_passing_trace) {
      TraceFormatter formatter(program_.describe_address);
      result_.trace_text =
          formatter.format(result_.events, result_.passed() ? 0 : options_.trace_tail);
    }
    return std::move(result_);
  }

  void before_atomic(core::AtomicAccess const&) override {
    std::uint32_t const self = tls_logical_thread;
    std::unique_lock<std::mutex> lock(mutex_);
    if (aborting_) throw RunAborted{};
    if (++steps_ > options_.step_budget) {
      abort(Outcome::step_budget_exceeded,
            "step budget exceeded: " + std::to_string(options_.step_budget) +
                " atomic operations without finishing (livelock: a retry loop that never gives "
                "up, or a budget too small for the program)");
      throw RunAborted{};
    }
    hand_over(lock, self);
  }

  /// Weak-memory mode: the strategy picks which of the stores the load may read it returns.
  std::uint64_t load_value(core::AtomicAccess const& a, std::uint64_t latest) override {
    if (!memory_) return latest;
    std::uint32_t const self = tls_logical_thread;
    std::lock_guard<std::mutex> lock(mutex_);
    std::uint32_t const options = memory_->load_options(self, a, latest);
    std::uint32_t skip          = 0;
    if (options > 1) {
      ReadDecision r;
      r.step    = result_.events.size();
      r.thread  = self;
      r.options = options;
      skip      = strategy_.pick_read(r);
      if (skip >= options)
        throw std::logic_error("scheduling strategy " + strategy_.describe() +
                               " picked a read choice out of range");
      if (options_.record_decisions) {
        DecisionRecord rec;
        rec.decision.step    = r.step;
        rec.decision.current = self;
        rec.chosen           = kReadChoice | skip;
        rec.read_options     = options;
        result_.decisions.push_back(std::move(rec));
      }
    }
    pending_stale_ = skip;
    if (skip > 0) ++result_.stale_reads;
    return memory_->load(self, a, skip);
  }

  void after_atomic(core::AtomicAccess const& a,
                    std::uint64_t old_value,
                    std::uint64_t new_value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (memory_) {
      std::uint32_t const self = tls_logical_thread;
      switch (a.op) {
        case core::AtomicOp::load:
          break;
        case core::AtomicOp::store:
          memory_->store(self, a, old_value, new_value);
          break;
        case core::AtomicOp::compare_exchange:
          // It succeeded iff it read the expected value.
          memory_->rmw(self, a, old_value, new_value, old_value == a.expected);
          break;
        default:
          memory_->rmw(self, a, old_value, new_value, true);
          break;
      }
    }
    Event e;
    e.step      = result_.events.size();
    e.thread    = tls_logical_thread;
    e.op        = a.op;
    e.order     = a.order;
    e.width     = a.width;
    e.address   = a.address;
    e.operand   = a.operand;
    e.old_value = old_value;
    e.new_value = new_value;
    if (a.op == core::AtomicOp::load) e.stale = pending_stale_;
    pending_stale_ = 0;
    result_.events.push_back(e);
    if (old_value != new_value)
      for (auto& w : workers_) w.waiting_for_change = false;
  }

  void on_backoff(core::Backoff kind) override {
    std::lock_guard<std::mutex> lock(mutex_);
    Worker& w = workers_[tls_logical_thread];
    // Weak-memory mode: a thread that backs off observes every store made so far (its view
    // moves to the latest message of every location). If that showed it something new, its
    // retry may succeed without any other thread writing, so it is not waiting for a change;
    // a thread marked waiting has seen the latest values, which keeps deadlock detection exact
    // and bounds how long a retry loop can keep reading stale values.
    bool const saw_new = memory_ && memory_->catch_up(tls_logical_thread);
    if (kind == core::Backoff::until_memory_changes)
      w.waiting_for_change = !saw_new;
    else
      w.yielded = true;
  }

 private:
  struct Worker {
    std::condition_variable cv;
    bool alive              = true;
    bool waiting_for_change = false;
    bool yielded            = false;
  };

  void worker_main(std::uint32_t self) {
    tls_logical_thread = self;
    core::ScopedAtomicObserver observe(this);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      workers_[self].cv.wait(lock, [&] { return running_ == self || aborting_; });
    }
    bool run_body = true;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      run_body = !aborting_;
    }
    if (run_body) {
      try {
        program_.threads[self]();
      } catch (RunAborted const&) {
      } catch (std::exception const& e) {
        std::lock_guard<std::mutex> lock(mutex_);
        abort(Outcome::thread_error, "T" + std::to_string(self) + " failed: " + e.what());
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        abort(Outcome::thread_error, "T" + std::to_string(self) + " threw a non-std exception");
      }
    }
    std::unique_lock<std::mutex> lock(mutex_);
    workers_[self].alive = false;
    --alive_;
    if (!aborting_ && alive_ > 0) {
      try {
        hand_over(lock, self);
      } catch (RunAborted const&) {
        // a deadlock among the remaining threads was detected while handing over
      }
    }
    if (alive_ == 0) done_cv_.notify_all();
  }

  /// With mutex_ held: a decision point reached by `self` (kNoThread: the start). Picks the next
  /// thread, hands it the baton and, if self is still alive, waits until self gets it back.
  void hand_over(std::unique_lock<std::mutex>& lock, std::uint32_t self) {
    Decision d;
    d.step         = result_.events.size();
    d.current      = self;
    bool any_alive = false;
    for (std::uint32_t i = 0; i < workers_.size(); ++i) {
      any_alive = any_alive || workers_[i].alive;
      if (workers_[i].alive && !workers_[i].waiting_for_change) d.runnable.push_back(i);
    }
    if (d.runnable.empty()) {
      if (any_alive) {
        std::string who;
        for (std::uint32_t i = 0; i < workers_.size(); ++i)
          if (workers_[i].alive) who += (who.empty() ? "T" : ", T") + std::to_string(i);
        abort(Outcome::deadlock,
              "deadlock: every live thread (" + who +
                  ") retries an operation that cannot succeed until another thread modifies "
                  "memory, and none can (an illegal set/clear multiset, DynaSOAr App. A.5 "
                  "Def. 3, or a missing update)");
        throw RunAborted{};
      }
      return;  // everyone finished
    }
    if (self != kNoThread) {
      Worker const& w    = workers_[self];
      d.current_runnable = w.alive && !w.waiting_for_change;
      d.current_yielded  = w.yielded;
    }
    std::uint32_t const chosen = strategy_.pick(d);
    if (!std::binary_search(d.runnable.begin(), d.runnable.end(), chosen))
      throw std::logic_error("scheduling strategy " + strategy_.describe() +
                             " picked a thread that is not runnable");
    if (d.is_preemption(chosen)) ++result_.preemptions;
    if (options_.record_decisions) result_.decisions.push_back(DecisionRecord{d, chosen});
    if (self != kNoThread) workers_[self].yielded = false;
    if (chosen == self) return;
    running_ = chosen;
    workers_[chosen].cv.notify_one();
    if (self == kNoThread || !workers_[self].alive) return;
    workers_[self].cv.wait(lock, [&] { return running_ == self || aborting_; });
    if (aborting_) throw RunAborted{};
  }

  /// With mutex_ held: records the first failure and wakes every waiting thread to unwind.
  void abort(Outcome outcome, std::string message) {
    if (aborting_) return;
    aborting_       = true;
    result_.outcome = outcome;
    result_.message = std::move(message);
    running_        = kNoThread;
    for (auto& w : workers_) w.cv.notify_one();
  }

  Program& program_;
  Strategy& strategy_;
  RunOptions const& options_;

  std::mutex mutex_;
  std::condition_variable done_cv_;
  std::vector<Worker> workers_;
  std::uint32_t running_ = kNoThread;
  std::uint32_t alive_   = 0;
  std::uint64_t steps_   = 0;
  bool aborting_         = false;
  std::optional<ReleaseAcquireMemory> memory_;  // weak-memory mode only
  std::uint32_t pending_stale_ = 0;             // the current load's skipped stores
  RunResult result_;
};

}  // namespace

RunResult run_program(Program& program, Strategy& strategy, RunOptions const& options) {
  Controller controller(program, strategy, options);
  return controller.run();
}

}  // namespace heaplab::explore
