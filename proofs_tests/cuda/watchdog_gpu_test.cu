// The watchdog on a real GPU (cuda/watchdog.hpp): a kernel that spins until the host releases it
// is reported as a hang within the budget; the host then releases it (the flag lives in mapped
// host memory), so the kernel ends and the GPU is left clean. A kernel that ends in time is
// reported completed.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <chrono>

#include "gpu_test.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

/// Spins until *release != 0 (read through the volatile mapped pointer on every iteration).
__global__ void spin_until_released(int volatile* release, unsigned long long* spins) {
  unsigned long long n = 0;
  while (*release == 0) {
    ++n;
    __nanosleep(1000);
  }
  *spins = n;
}

struct MappedFlag {
  int* host                 = nullptr;
  int* device               = nullptr;
  unsigned long long* spins = nullptr;
  MappedFlag() {
    HEAPLAB_CUDA_TRY(cudaHostAlloc(&host, sizeof(int), cudaHostAllocMapped));
    *host = 0;
    HEAPLAB_CUDA_TRY(cudaHostGetDevicePointer(&device, host, 0));
    HEAPLAB_CUDA_TRY(cudaMalloc(&spins, sizeof(unsigned long long)));
  }
  ~MappedFlag() {
    cudaFree(spins);
    cudaFreeHost(host);
  }
};

TEST(WatchdogGpu, ASpinningKernelIsReportedAsAHangAndThenReleased) {
  HEAPLAB_REQUIRE_GPU();
  MappedFlag flag;
  cudaStream_t stream = nullptr;
  HEAPLAB_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  spin_until_released<<<1, 1, 0, stream>>>(flag.device, flag.spins);
  // Not HEAPLAB_CHECK_LAUNCH(): in the debug preset it synchronizes the device, which would wait
  // for this kernel forever (it spins until released below); the watchdog is the waiting here.
  HEAPLAB_CUDA_TRY(cudaGetLastError());

  heaplab::cudart::Watchdog const dog(300ms);
  auto const hang = dog.wait(stream);
  EXPECT_EQ(hang.status, heaplab::cudart::WaitStatus::timed_out) << hang.error;
  EXPECT_GE(hang.seconds, 0.3);
  EXPECT_LT(hang.seconds, 2.0);

  // Release the kernel (the watchdog has fired), and check that it really ends.
  reinterpret_cast<int volatile*>(flag.host)[0] = 1;
  heaplab::cudart::Watchdog const generous(10s);
  auto const done = generous.wait(stream);
  EXPECT_EQ(done.status, heaplab::cudart::WaitStatus::completed) << done.error;
  unsigned long long spins = 0;
  HEAPLAB_CUDA_TRY(cudaMemcpy(&spins, flag.spins, sizeof spins, cudaMemcpyDeviceToHost));
  EXPECT_GT(spins, 0u) << "the kernel was spinning while the watchdog waited";
  HEAPLAB_CUDA_TRY(cudaStreamDestroy(stream));
}

TEST(WatchdogGpu, AKernelThatEndsInTimeIsCompleted) {
  HEAPLAB_REQUIRE_GPU();
  MappedFlag flag;
  *flag.host = 1;  // released from the start
  spin_until_released<<<1, 1>>>(flag.device, flag.spins);
  HEAPLAB_CHECK_LAUNCH();
  heaplab::cudart::Watchdog const dog(5s);
  auto const r = dog.wait(cudaStream_t{nullptr});
  EXPECT_EQ(r.status, heaplab::cudart::WaitStatus::completed) << r.error;
  EXPECT_LT(r.seconds, 5.0);
}

}  // namespace
