// GPU tests of the malloc family (docs/malloc.md): every GPU runner of the family registered in
// this build (malloc-cuda, malloc-rw-gpu, and the peers whose CMake options are on) passes the
// catalog on generated schedules of the mixed and oom profiles (bounded for a subject without an
// out-of-memory path), the cases of `heaplab stress --runner NAME --seed 20261128 --heap-mib 64`
// (or the subject's smallest pool); and the planted adapter bugs around RW_malloc on
// the GPU are caught by the generic stress, as they are around the reference on the CPU
// (malloc_test.cpp). Without a usable GPU every test says SKIPPED.
//
// Cases per runner and profile: 40 (HEAPLAB_GPU_PROPERTY_CASES overrides); 4 under a CUDA tool.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/families/malloc/family.hpp"
#include "heaplab/families/malloc/gpu/gpu_subjects.hpp"
#include "heaplab/families/malloc/reference.hpp"
#include "heaplab/families/malloc/runner.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/runner/stress.hpp"

namespace hr = heaplab::runner;
namespace hm = heaplab::malloc_family;

namespace {

std::uint64_t property_cases() {
  if (char const* n = std::getenv("HEAPLAB_GPU_PROPERTY_CASES"); n != nullptr && *n != '\0')
    return static_cast<std::uint64_t>(std::max(1, std::atoi(n)));
  return heaplab::testing::under_cuda_tool() ? 4 : 40;
}

hr::StressOptions options(std::string const& runner,
                          std::string const& profile,
                          std::uint32_t heap_mib = 16) {
  hr::StressOptions o;
  o.request.profile  = profile;
  o.request.runner   = runner;
  o.request.heap_mib = heap_mib;
  o.seconds          = 600;  // the case count ends the run
  o.max_cases        = property_cases();
  o.seed             = 20261128;
  o.max_failures     = 3;
  char const* dir    = std::getenv("HEAPLAB_FAILURE_DIR");
  o.out_dir          = dir != nullptr && *dir != '\0' ? dir : "failures";
  return o;
}

/// A 30 s watchdog: CUDA's malloc takes milliseconds per request near a full heap, and the GPU may
/// be shared (an H200 running six of these tests at once took more than 5 s for one fill wave of
/// malloc-cuda, 2026-11-28); a hang still ends the case.
hr::RunnerOptions runner_options() {
  hr::RunnerOptions o;
  o.watchdog_ms = 30000;
  return o;
}

class MallocGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(MallocGpu, GeneratedSchedulesKeepTheCatalog) {
  HEAPLAB_REQUIRE_GPU();
  std::string const name = GetParam();
  std::string const why  = hr::unavailable_reason(name);
  ASSERT_TRUE(why.empty()) << "a GPU is present but " << name << " cannot run: " << why;
  // The subject's declarations choose the pool and the profiles: its smallest pool, and only
  // bounded demand for a subject without an out-of-memory path (docs/malloc.md "Out of memory").
  hm::SubjectInfo info;
  {
    std::unique_ptr<hr::Runner> const probe = hr::make_runner(name);
    auto const* malloc_runner               = dynamic_cast<hm::MallocRunner const*>(probe.get());
    ASSERT_NE(malloc_runner, nullptr) << name << " is not a MallocRunner";
    info = malloc_runner->subject_info();
  }
  // 64 MiB, the campaign's pool (docs/results.md): with 16 MiB, case 0's fill (128 threads x up to
  // 257 requests of 1 KiB) took CUDA's malloc more than 30 s on an H200 (2026-11-28).
  auto const heap_mib = static_cast<std::uint32_t>(
      std::max<std::uint64_t>(64, (info.min_pool + (1u << 20) - 1) >> 20));
  std::vector<std::string> const profiles = info.max_demand > 0
                                                ? std::vector<std::string>{"bounded"}
                                                : std::vector<std::string>{"mixed", "oom"};
  // Every profile gives malloc-cuda's cases the one pool of --heap-mib: CUDA malloc's heap size
  // is fixed per process.
  for (std::string const& profile : profiles) {
    hr::StressOptions const o = options(name, profile, heap_mib);
    hr::StressResult const r  = hr::run_stress(
        hm::family(), o, [&](unsigned) { return hr::make_runner(name, runner_options()); });
    for (auto const& f : r.failures)
      ADD_FAILURE() << name << " " << profile << ": " << f.failure.message
                    << "\n  failure file: " << f.path.string();
    EXPECT_EQ(r.stats.cases, o.max_cases) << r.stop_reason << " " << r.stats.skip_reason;
    auto const count = [&](char const* key) {
      return r.stats.counts.count(key) ? r.stats.counts.at(key) : 0u;
    };
    EXPECT_GT(count("granted"), 0u) << "nothing was allocated: the cases did not run";
    std::printf("%s %s: %llu cases, %llu granted, %llu null, %llu freed, %llu failures\n",
                name.c_str(),
                profile.c_str(),
                static_cast<unsigned long long>(r.stats.cases),
                static_cast<unsigned long long>(count("granted")),
                static_cast<unsigned long long>(count("nulls")),
                static_cast<unsigned long long>(count("freed")),
                static_cast<unsigned long long>(r.stats.failures));
  }
}

std::vector<std::string> gpu_runners() {
  std::vector<std::string> out;
  for (auto const* info : hr::Registry::instance().runners_of("malloc"))
    if (info->uses_gpu) out.push_back(info->name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Runners,
                         MallocGpu,
                         ::testing::ValuesIn(gpu_runners()),
                         [](auto const& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

struct PlantedCase {
  hm::PlantedBug bug;
  char const* profile;
  char const* check;
};

class MallocGpuPlanted : public ::testing::TestWithParam<PlantedCase> {};

TEST_P(MallocGpuPlanted, TheGenericStressCatchesThePlantedBugAroundRwMallocOnTheGpu) {
  HEAPLAB_REQUIRE_GPU();
  PlantedCase const c = GetParam();
  hr::StressOptions o = options("malloc-rw-gpu", c.profile);
  o.max_cases         = 200;
  o.max_failures      = 1;
  o.out_dir           = std::filesystem::temp_directory_path() /
              ("heaplab-malloc-gpu-planted-" + std::string(to_string(c.bug)));
  std::filesystem::remove_all(o.out_dir);
  auto const r = hr::run_stress(hm::family(), o, [&](unsigned) {
    return std::make_unique<hm::MallocRunner>(
        "planted",
        [&] { return hm::make_planted_subject(hm::make_rw_malloc_subject({}), c.bug); },
        false);
  });
  ASSERT_EQ(1u, r.failures.size())
      << to_string(c.bug) << " was not caught in " << r.stats.cases << " cases";
  EXPECT_EQ(c.check, r.failures.front().failure.check);
  std::printf("planted %s around rw-malloc: caught by %s after %llu cases\n",
              to_string(c.bug),
              r.failures.front().failure.check.c_str(),
              static_cast<unsigned long long>(r.stats.cases));
  std::filesystem::remove_all(o.out_dir);
}

// RW_malloc declares no null floor, so a lost free shows as a fill that does not recover.
INSTANTIATE_TEST_SUITE_P(
    Bugs,
    MallocGpuPlanted,
    ::testing::Values(PlantedCase{hm::PlantedBug::overlap, "mixed", "malloc-disjoint"},
                      PlantedCase{hm::PlantedBug::misaligned, "mixed", "malloc-aligned"},
                      PlantedCase{hm::PlantedBug::overrun, "mixed", "malloc-cookies-intact"},
                      PlantedCase{hm::PlantedBug::lost_free, "oom", "malloc-recovers"}),
    [](auto const& info) {
      std::string n = to_string(info.param.bug);
      std::replace(n.begin(), n.end(), '-', '_');
      return n;
    });

}  // namespace
