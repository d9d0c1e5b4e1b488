// A planted bug of the bump family, in its own OBJECT library (heaplab_family_bump_planted, never
// linked into the runner conformance suite): the runner "bump-cpu-planted", the bump-cpu runner
// over RacyBump, a bump allocator that advances its pointer with a load and a store instead of a
// compare-and-swap. Two threads that load the same pointer hand out overlapping ranges (and the
// later store can move the pointer back), which the catalog reports as bump-disjoint. heaplab
// stress must find it; the end-to-end test (bump_cli_test.cpp) shows that it does.
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "bump_allocator.hpp"
#include "bump_family.hpp"
#include "heaplab/runner/registry.hpp"

namespace heaplab::bump_family {
namespace {

/// BUG (planted): alloc is not atomic. Between the load of the pointer and the store of the new
/// one, another thread may load the same value: both get the same start. The sleep stands for a
/// preemption at that moment, so the race shows within a few waves rather than a few million.
class RacyBump final : public ConcurrentBump {
 public:
  explicit RacyBump(std::uint64_t arena) : arena_(arena) {}
  std::uint64_t alloc(std::uint64_t size, std::uint64_t align) override {
    std::uint64_t const top = top_.load(std::memory_order_relaxed);
    if (!fits(top, size, align, arena_)) return kNull;
    std::uint64_t const start = align_up(top, align);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    top_.store(start + size, std::memory_order_relaxed);  // BUG: a store, not a CAS from `top`
    return start;
  }
  void free_all() override { top_.store(0, std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t top() const override { return top_.load(std::memory_order_relaxed); }

 private:
  std::uint64_t const arena_;
  std::atomic<std::uint64_t> top_{0};
};

/// PLANTED (test-only): a runner whose first step crashes in a way that leaves it unusable, as a
/// GPU runner after a device fault that lost its CUDA context (usable() false after a failure that
/// is no hang). Replay must give the file its verdict (a failure: exit 1, not a hang's 3) and end
/// the process without running another side or file (bump_cli_test.cpp).
class LostRunner final : public runner::Runner {
 public:
  [[nodiscard]] std::string name() const override { return "bump-cpu-lost"; }
  [[nodiscard]] runner::Support supports(runner::AnySchedule const&) const override { return {}; }
  [[nodiscard]] bool deterministic() const override { return true; }
  [[nodiscard]] bool usable() const override { return usable_; }
  runner::RunOutcome run(runner::AnySchedule const&, runner::StepCallback const&) override {
    usable_ = false;
    runner::Failure f;
    f.kind    = runner::FailureKind::crash;
    f.check   = runner::checks::kException;
    f.message = "planted: the device's context was lost (test-only)";
    runner::RunOutcome out;
    out.failure = f;
    return out;
  }

 private:
  bool usable_ = true;
};

runner::RunnerRegistration const lost{runner::RunnerInfo(
    "bump-cpu-lost",
    "bump",
    "PLANTED: crashes at step 0 and cannot be used again, as after a lost CUDA context "
    "(test-only)",
    [](runner::RunnerOptions const&) { return std::make_unique<LostRunner>(); })};

runner::RunnerRegistration const planted{cpu_runner_info(
    "bump-cpu-planted",
    "PLANTED BUG: bump-cpu with a load/store bump pointer instead of a CAS (test-only)",
    [](std::uint64_t arena) { return std::make_unique<RacyBump>(arena); })};

}  // namespace
}  // namespace heaplab::bump_family
