// The run-time planted-bug switches on the device (src/heaplab/core/mutants.hpp, a planting build:
// docs/mutants.md "One build for every planted bug"). This translation unit is compiled with
// HEAPLAB_MUTANT_RUNTIME, as every unit of a planting build is, inside the real build: plant()
// must reach the switches that kernels read, not only the host's, and clearing must take them
// back; otherwise a planting build's GPU checks would run the real code and the sweep would
// count a pass of the real code as "not caught".
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gpu_test.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/cuda/error.hpp"

#if !defined(HEAPLAB_MUTANT_RUNTIME)
#error "planting_gpu_test.cu checks the run-time switches: build it with HEAPLAB_MUTANT_RUNTIME"
#endif

namespace mutant = heaplab::core::mutant;

namespace {

/// What a kernel sees: out[0] the switch of delete_keeps_defrag_bit, out[1] that of
/// oom_scan_no_wrap, read through a host-device function as the protocol code reads them.
__host__ __device__ int read_through_protocol_code() { return mutant::oom_scan_no_wrap ? 1 : 0; }

__global__ void read_switches(int* out) {
  out[0] = mutant::delete_keeps_defrag_bit ? 1 : 0;
  out[1] = read_through_protocol_code();
}

struct Seen {
  int delete_keeps_defrag_bit = -1;
  int oom_scan_no_wrap        = -1;
};

Seen run_kernel() {
  int* d = nullptr;
  HEAPLAB_CUDA_TRY(cudaMalloc(&d, 2 * sizeof(int)));
  read_switches<<<1, 1>>>(d);
  HEAPLAB_CHECK_LAUNCH();
  int h[2] = {-1, -1};
  HEAPLAB_CUDA_TRY(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  HEAPLAB_CUDA_TRY(cudaFree(d));
  return {h[0], h[1]};
}

}  // namespace

TEST(PlantingGpu, PlantReachesTheSwitchesKernelsReadAndClearingTakesThemBack) {
  HEAPLAB_REQUIRE_GPU();
  EXPECT_EQ(run_kernel().delete_keeps_defrag_bit, 0) << "a switch is on before any plant()";

  ASSERT_EQ(mutant::plant("delete_keeps_defrag_bit"), "");
  Seen s = run_kernel();
  EXPECT_EQ(s.delete_keeps_defrag_bit, 1) << "the kernel did not see the planted bug";
  EXPECT_EQ(s.oom_scan_no_wrap, 0) << "another bug's switch is on on the device";
  EXPECT_STREQ(mutant::kPlanted, "delete_keeps_defrag_bit");

  ASSERT_EQ(mutant::plant("oom_scan_no_wrap"), "");  // one bug at a time: the first is cleared
  s = run_kernel();
  EXPECT_EQ(s.delete_keeps_defrag_bit, 0);
  EXPECT_EQ(s.oom_scan_no_wrap, 1) << "a host-device function did not read the device switch";
  EXPECT_EQ(read_through_protocol_code(), 1) << "the same function on the host";

  ASSERT_EQ(mutant::plant(""), "");
  s = run_kernel();
  EXPECT_EQ(s.delete_keeps_defrag_bit + s.oom_scan_no_wrap, 0) << "plant(\"\") left a switch on";
  EXPECT_EQ(read_through_protocol_code(), 0);
}

TEST(PlantingGpu, TheEnvironmentPlantsAndAnUnknownNameIsRefused) {
  HEAPLAB_REQUIRE_GPU();
  ASSERT_EQ(setenv("HEAPLAB_PLANT", "delete_keeps_defrag_bit", 1), 0);
  EXPECT_EQ(mutant::plant_from_environment(), "");
  EXPECT_EQ(run_kernel().delete_keeps_defrag_bit, 1);
  ASSERT_EQ(setenv("HEAPLAB_PLANT", "delete_keeps_defrag_bt", 1), 0);
  EXPECT_NE(mutant::plant_from_environment().find("names no planted bug"), std::string::npos);
  EXPECT_STREQ(mutant::kPlanted, "delete_keeps_defrag_bit") << "an unknown name changed the plant";
  ASSERT_EQ(unsetenv("HEAPLAB_PLANT"), 0);
  EXPECT_EQ(mutant::plant(""), "");
  EXPECT_EQ(run_kernel().delete_keeps_defrag_bit, 0);
}
