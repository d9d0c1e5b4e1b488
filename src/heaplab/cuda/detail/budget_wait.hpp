// The CUDA-free core of the watchdog (watchdog.hpp): poll a completion query until it reports
// done, an error, or a wall-clock budget runs out. Kept free of CUDA headers so that CPU tests
// can drive it with fake queries.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

namespace heaplab::cudart {

/// What one poll of the awaited work says.
enum class PollState { done, pending, error };

struct PollResult {
  PollState state = PollState::pending;
  std::string error;  // PollState::error only
};

enum class WaitStatus {
  completed,  // the work finished within the budget
  timed_out,  // still running when the budget ran out: a hang
  error,      // the query failed (e.g. the kernel faulted)
};

struct WaitResult {
  WaitStatus status = WaitStatus::completed;
  double seconds    = 0;  // how long the wait took
  std::string error;      // WaitStatus::error only
  [[nodiscard]] bool completed() const { return status == WaitStatus::completed; }
  [[nodiscard]] bool timed_out() const { return status == WaitStatus::timed_out; }
};

/// Polls `query` (a callable returning PollResult) until it is not pending or `budget` has
/// passed. The first polls spin (short kernels return fast); then it sleeps, doubling from 20 us
/// to at most 1 ms between polls, so a long wait costs little CPU and is noticed within 1 ms.
/// The query is always polled at least once, and once more after the budget ran out (work that
/// finished during the last sleep counts as completed).
template <class Query>
WaitResult wait_with_budget(Query&& query, std::chrono::nanoseconds budget) {
  using clock      = std::chrono::steady_clock;
  auto const start = clock::now();
  auto const since = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };
  auto sleep       = std::chrono::microseconds(20);
  for (int poll = 0;; ++poll) {
    bool const out_of_time = clock::now() - start >= budget;
    PollResult const r     = query();
    if (r.state == PollState::done) return {WaitStatus::completed, since(), {}};
    if (r.state == PollState::error) return {WaitStatus::error, since(), r.error};
    if (out_of_time) return {WaitStatus::timed_out, since(), {}};
    if (poll < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::microseconds(1000));
    }
  }
}

/// True when a CUDA tool (compute-sanitizer, a profiler) runs this process, which slows kernels
/// down 10-100x: CUDA_INJECTION64_PATH is set (a tool injected through it), or
/// HEAPLAB_UNDER_CUDA_TOOL=1 (set by the sanitize.* ctest entries and tools/gpu-tier --sanitize:
/// a test under compute-sanitizer on the H200 box, 2026-12-02, saw no CUDA_INJECTION64_PATH and
/// timed out at its plain budget). Watchdog budgets scale
/// by 30 then, unless HEAPLAB_WATCHDOG_MS says otherwise.
inline bool under_cuda_tool() {
  if (std::getenv("CUDA_INJECTION64_PATH") != nullptr) return true;
  char const* const v = std::getenv("HEAPLAB_UNDER_CUDA_TOOL");
  return v != nullptr && std::string(v) == "1";
}

/// The default budget of one wait: HEAPLAB_WATCHDOG_MS from the environment when it is a
/// positive integer (milliseconds), else 5000 ms.
inline constexpr long kDefaultWatchdogMs = 5000;

/// Parses a budget in milliseconds: a positive decimal integer (at most 24 hours); nullopt for
/// anything else (empty, negative, zero, trailing characters, overflow).
inline std::optional<std::chrono::milliseconds> parse_watchdog_ms(char const* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  long long value = 0;
  for (char const* p = text; *p; ++p) {
    if (*p < '0' || *p > '9') return std::nullopt;
    value = value * 10 + (*p - '0');
    if (value > 24ll * 3600 * 1000) return std::nullopt;
  }
  if (value <= 0) return std::nullopt;
  return std::chrono::milliseconds(value);
}

inline std::chrono::milliseconds default_watchdog_budget() {
  if (auto parsed = parse_watchdog_ms(std::getenv("HEAPLAB_WATCHDOG_MS"))) return *parsed;
  return std::chrono::milliseconds(kDefaultWatchdogMs);
}

/// "kernel 'defrag pass 2' did not finish within 5.000 s (watchdog budget; HEAPLAB_WATCHDOG_MS)".
inline std::string describe_hang(std::string const& what, std::chrono::nanoseconds budget) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", std::chrono::duration<double>(budget).count());
  return "'" + what + "' did not finish within " + buf +
         " s (watchdog budget; set HEAPLAB_WATCHDOG_MS or --watchdog-ms to change it)";
}

}  // namespace heaplab::cudart
