// Free-running std::threads on the very same protocol code (HostAtomics: the production host
// policy, cuda::atomic_ref where libcu++ is present). Run under the tsan preset, this is the
// ThreadSanitizer check of the memory orders: each object's owner writes and reads a plain
// payload word, so a missing happens-before between a free (release) and the next reservation
// of the slot (acquire), or across a hand-over, is a reported data race.
//   HEAPLAB_STRESS_WORKLOADS=<n>  number of random workloads (default 150)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "heaplab/families/interleaving/workloads/bitmap_workload.hpp"
#include "heaplab/families/interleaving/workloads/heap_workload.hpp"
#include "heaplab/families/interleaving/workloads/workload_gen.hpp"

namespace workloads = heaplab::interleaving_family::workloads;
namespace core      = heaplab::core;

namespace {

std::uint64_t workloads_from_env(std::uint64_t fallback) {
  char const* v = std::getenv("HEAPLAB_STRESS_WORKLOADS");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

/// Runs `workload` on free-running std::threads (HostAtomics) and returns the violations found.
std::vector<std::string> run_free(workloads::HeapWorkload const& workload) {
  workloads::HeapRun<core::HostAtomics> run(workload);
  std::mutex m;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (std::uint32_t i = 0; i < workload.threads.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        run.thread_body(i);
      } catch (std::exception const& e) {
        std::lock_guard<std::mutex> lock(m);
        failures.push_back("T" + std::to_string(i) + " failed: " + e.what());
        run.abandon();
      }
    });
  for (auto& t : threads) t.join();
  if (!failures.empty()) return failures;  // a failed thread left the heap mid-operation
  return run.final_check(nullptr);
}

std::string joined(std::vector<std::string> const& v) {
  std::string s;
  for (auto const& x : v) s += x + "\n";
  return s;
}

}  // namespace

TEST(FreeRunningStress, RandomHeapWorkloads) {
  workloads::WorkloadLimits lim;
  lim.min_threads       = 2;
  lim.max_threads       = 4;
  lim.max_ops           = 24;
  std::uint64_t const n = workloads_from_env(150);
  for (std::uint64_t seed = 1; seed <= n; ++seed) {
    auto const w        = workloads::random_heap_workload(seed, lim);
    auto const failures = run_free(w);
    ASSERT_TRUE(failures.empty()) << "workload seed " << seed << ":\n"
                                  << w << "\n"
                                  << joined(failures);
  }
}

TEST(FreeRunningStress, LongContendedRunOnASmallHeap) {
  // 4 threads x 4000 operations (alloc + free-newest pairs, allocs freed later, hand-overs) on 3
  // blocks of capacity 2 or 4: blocks fill, empty, get invalidated and change type all the time.
  workloads::HeapWorkload w;
  w.config         = workloads::make_config({8, 128, 256}, 3, 1);
  w.active_lookups = 2;
  w.seed_salt      = 99;
  using K          = workloads::ThreadOp::Kind;
  for (std::uint32_t i = 0; i < 4; ++i) {
    std::vector<workloads::ThreadOp> ops;
    for (std::uint32_t k = 0; k < 800; ++k) {
      std::uint32_t const t = 1 + (i + k) % 2;
      ops.push_back({K::allocate, t});
      ops.push_back({K::free_own, 0});
      ops.push_back({K::allocate, t});
      ops.push_back({k % 3 == 0 ? K::give : K::free_own, k % 4});
      ops.push_back({K::take_and_free, (i * 7 + k) % 64});
    }
    w.threads.push_back(std::move(ops));
  }
  workloads::assign_mailbox_cells(w);
  for (int round = 0; round < 10; ++round) {
    auto const failures = run_free(w);
    ASSERT_TRUE(failures.empty()) << joined(failures);
  }
}

TEST(FreeRunningStress, BitmapTokens) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    auto const w = workloads::random_bitmap_workload(seed);
    workloads::BitmapRun<core::HostAtomics> run(w);
    std::vector<std::thread> threads;
    std::vector<std::string> errors(w.threads.size());
    for (std::uint32_t i = 0; i < w.threads.size(); ++i)
      threads.emplace_back([&, i] {
        try {
          run.thread_body(i);
        } catch (std::exception const& e) {
          errors[i] = e.what();
        }
      });
    for (auto& t : threads) t.join();
    for (auto const& e : errors) ASSERT_EQ(e, "") << "seed " << seed;
    auto const failures = run.final_check(nullptr);
    ASSERT_TRUE(failures.empty()) << "seed " << seed << ":\n" << joined(failures);
  }
}
