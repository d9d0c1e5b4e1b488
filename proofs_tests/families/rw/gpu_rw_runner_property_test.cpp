// GPU properties of the random-walk pool (issue 11 "Verify (GPU)"; docs/rw.md "Schedules and
// runners"): generated rw schedules (schedule::gen::rw_schedule over all four algorithms: getpage
// waves of RW, RW-BM and CoRW, RW_malloc waves of mixed sizes, free waves; every lane pattern
// (all, every k-th, seeded random subsets: divergence); pools down to 0.5 % free) run on the
// rw-gpu runner, runner::RwRunner over rw::DevicePool. After setup and every wave the runner
// checks each request (steps in 1..max_steps, none for an inactive thread), the model accepts
// every page or run by refinement with ownership matching exactly, and the rw catalog holds on the
// words copied back. The cases are those of `heaplab stress --runner rw-gpu --seed 20261124`, so a
// failing case is an rw failure file (under $HEAPLAB_FAILURE_DIR, default failures/) that
// `heaplab replay` runs again.
//
// Cases: 300 (HEAPLAB_GPU_PROPERTY_CASES overrides); 10 under a CUDA tool such as
// compute-sanitizer, where kernels run 10-100x slower.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "gpu_test.hpp"
#include "heaplab/families/rw/family.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/runner/stress.hpp"

namespace hr = heaplab::runner;

namespace {

std::uint64_t property_cases() {
  if (char const* n = std::getenv("HEAPLAB_GPU_PROPERTY_CASES"); n != nullptr && *n != '\0')
    return static_cast<std::uint64_t>(std::max(1, std::atoi(n)));
  return heaplab::testing::under_cuda_tool() ? 10 : 300;
}

TEST(RwGpuProperties, GeneratedSchedulesRefineTheModelAndKeepTheCatalog) {
  HEAPLAB_REQUIRE_GPU();
  std::string const why = hr::unavailable_reason("rw-gpu");
  ASSERT_TRUE(why.empty()) << "a GPU is present but rw-gpu cannot run: " << why;
  hr::StressOptions o;
  o.request.profile        = "mixed";
  o.request.runner         = "rw-gpu";
  o.seconds                = 600;  // the case count ends the run
  o.max_cases              = property_cases();
  o.seed                   = 20261124;
  o.max_failures           = 3;
  char const* dir          = std::getenv("HEAPLAB_FAILURE_DIR");
  o.out_dir                = dir != nullptr && *dir != '\0' ? dir : "failures";
  hr::StressResult const r = hr::run_stress(
      heaplab::rw_family::family(), o, [](unsigned) { return hr::make_runner("rw-gpu"); });
  for (auto const& f : r.failures)
    ADD_FAILURE() << f.failure.message << "\n  failure file: "
                  << (f.path.empty() ? "(not written: " + f.save_error + ")" : f.path.string())
                  << "\n  replay: heaplab replay " << f.path.string();
  EXPECT_EQ(r.stats.cases, o.max_cases) << r.stop_reason;
  EXPECT_GT(r.stats.counts.count("pages") ? r.stats.counts.at("pages") : 0u, 0u)
      << "no page was handed out: the cases did not run";
  std::printf("rw-gpu: %llu cases, %llu pages handed out, %llu failures\n",
              static_cast<unsigned long long>(r.stats.cases),
              static_cast<unsigned long long>(r.stats.counts.at("pages")),
              static_cast<unsigned long long>(r.stats.failures));
}

}  // namespace
