// The CUDA-free part of the watchdog (cuda/detail/budget_wait.hpp), driven by fake queries.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "heaplab/cuda/detail/budget_wait.hpp"

namespace heaplab::test {
namespace {

using namespace std::chrono_literals;
using cudart::PollResult;
using cudart::PollState;
using cudart::WaitStatus;

TEST(Watchdog, WorkThatFinishesIsReportedCompleted) {
  int polls    = 0;
  auto const r = cudart::wait_with_budget(
      [&] {
        return PollResult{++polls < 200 ? PollState::pending : PollState::done, {}};
      },
      5s);
  EXPECT_EQ(r.status, WaitStatus::completed);
  EXPECT_TRUE(r.completed());
  EXPECT_EQ(polls, 200);
  EXPECT_LT(r.seconds, 5.0);
}

TEST(Watchdog, WorkThatNeverFinishesIsAHangAfterTheBudget) {
  int polls    = 0;
  auto const t = std::chrono::steady_clock::now();
  auto const r = cudart::wait_with_budget(
      [&] {
        ++polls;
        return PollResult{PollState::pending, {}};
      },
      200ms);
  double const waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  EXPECT_EQ(r.status, WaitStatus::timed_out);
  EXPECT_TRUE(r.timed_out());
  EXPECT_GE(r.seconds, 0.2);
  EXPECT_GE(waited, 0.2);
  EXPECT_LT(waited, 1.0) << "the hang is noticed soon after the budget";
  EXPECT_GT(polls, 64) << "it keeps polling until the budget ends";
  EXPECT_LT(polls, 20000) << "after the first polls it sleeps instead of spinning";
}

TEST(Watchdog, AFailingQueryIsAnErrorWithItsMessage) {
  auto const r = cudart::wait_with_budget(
      [] {
        return PollResult{PollState::error, "cudaErrorIllegalAddress: an illegal memory access"};
      },
      1s);
  EXPECT_EQ(r.status, WaitStatus::error);
  EXPECT_EQ(r.error, "cudaErrorIllegalAddress: an illegal memory access");
}

TEST(Watchdog, AZeroBudgetStillPollsOnce) {
  int polls    = 0;
  auto const r = cudart::wait_with_budget(
      [&] {
        ++polls;
        return PollResult{PollState::done, {}};
      },
      0ms);
  EXPECT_EQ(r.status, WaitStatus::completed);
  EXPECT_EQ(polls, 1);
}

TEST(Watchdog, TheBudgetComesFromTheEnvironmentWhenValid) {
  EXPECT_EQ(cudart::parse_watchdog_ms("250"), std::optional<std::chrono::milliseconds>(250ms));
  for (char const* bad : {"", "0", "-5", "12x", "1.5", "99999999999999", " 5"})
    EXPECT_FALSE(cudart::parse_watchdog_ms(bad).has_value()) << "'" << bad << "'";
  EXPECT_FALSE(cudart::parse_watchdog_ms(nullptr).has_value());
  ::setenv("HEAPLAB_WATCHDOG_MS", "1234", 1);
  EXPECT_EQ(cudart::default_watchdog_budget(), 1234ms);
  ::setenv("HEAPLAB_WATCHDOG_MS", "nonsense", 1);
  EXPECT_EQ(cudart::default_watchdog_budget(),
            std::chrono::milliseconds(cudart::kDefaultWatchdogMs));
  ::unsetenv("HEAPLAB_WATCHDOG_MS");
  EXPECT_EQ(cudart::default_watchdog_budget(), 5000ms);
}

TEST(Watchdog, ACudaToolIsSeenThroughTheInjectionPathOrHeaplabsVariable) {
  char const* const injection = std::getenv("CUDA_INJECTION64_PATH");
  if (injection != nullptr) GTEST_SKIP() << "SKIPPED: this process runs under a CUDA tool";
  ::unsetenv("HEAPLAB_UNDER_CUDA_TOOL");
  EXPECT_FALSE(cudart::under_cuda_tool());
  ::setenv("HEAPLAB_UNDER_CUDA_TOOL", "0", 1);
  EXPECT_FALSE(cudart::under_cuda_tool());
  ::setenv("HEAPLAB_UNDER_CUDA_TOOL", "1", 1);
  EXPECT_TRUE(cudart::under_cuda_tool());
  ::unsetenv("HEAPLAB_UNDER_CUDA_TOOL");
  ::setenv("CUDA_INJECTION64_PATH", "/nonexistent/libtool.so", 1);
  EXPECT_TRUE(cudart::under_cuda_tool());
  ::unsetenv("CUDA_INJECTION64_PATH");
}

TEST(Watchdog, TheHangMessageNamesTheWorkAndTheBudget) {
  EXPECT_EQ(cudart::describe_hang("defrag pass 2", 1500ms),
            "'defrag pass 2' did not finish within 1.500 s (watchdog budget; set "
            "HEAPLAB_WATCHDOG_MS or --watchdog-ms to change it)");
}

}  // namespace
}  // namespace heaplab::test
