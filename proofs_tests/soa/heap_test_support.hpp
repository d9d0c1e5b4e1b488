// Helpers for the GPU heap tests: a host-side timeout for kernels that might hang, and snapshot
// queries (objects by id, catalog with a readable failure message).
#pragma once

#include "heaplab/core/atomics.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "heaplab/check/dump.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot.hpp"
#include "heaplab/cuda/detail/budget_wait.hpp"
#include "heaplab/cuda/error.hpp"

namespace heap_test {

/// The time a guarded kernel may take: HEAPLAB_WATCHDOG_MS when set (the watchdog's variable,
/// heaplab/cuda/watchdog.hpp); otherwise `seconds`, times 30 when a CUDA tool is injected
/// (cudart::under_cuda_tool: compute-sanitizer, profilers), which slows kernels down that much.
inline double hang_timeout_seconds(double seconds) {
  if (char const* ms = std::getenv("HEAPLAB_WATCHDOG_MS"); ms != nullptr && *ms != '\0')
    return std::strtod(ms, nullptr) / 1000.0;
  if (heaplab::cudart::under_cuda_tool()) return seconds * 30.0;
  return seconds;
}

/// Waits for everything queued on `stream`, polling cudaStreamQuery, at most
/// hang_timeout_seconds(seconds). On a timeout the process cannot recover the GPU (the kernel is
/// still running), so it prints a clear message and exits with status 3 (a reported hang, as
/// tools/mutant-sweep counts it) instead of hanging the test binary. std::_Exit skips static
/// destructors, which would block on the stuck context.
inline void wait_or_exit(cudaStream_t stream, double seconds, char const* what) {
  double const limit  = hang_timeout_seconds(seconds);
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
  for (;;) {
    cudaError_t const status = cudaStreamQuery(stream);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) HEAPLAB_CUDA_TRY(status);
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr,
                   "\n[heaplab] TIMEOUT: %s did not finish within %.1f s. The allocation path "
                   "does not terminate (independent thread scheduling hang?). Exiting with "
                   "status 3. (HEAPLAB_WATCHDOG_MS overrides the limit.)\n",
                   what,
                   limit);
      std::fflush(stderr);
      std::fflush(stdout);
      std::_Exit(3);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// n zeroed elements of T in device memory, freed on destruction; to_host() copies them back.
template <class T>
struct DeviceArray {
  explicit DeviceArray(std::size_t n) : size(n) {
    HEAPLAB_CUDA_TRY(cudaMalloc(&data, n * sizeof(T)));
    HEAPLAB_CUDA_TRY(cudaMemset(data, 0, n * sizeof(T)));
  }
  ~DeviceArray() { (void)cudaFree(data); }
  DeviceArray(DeviceArray const&)            = delete;
  DeviceArray& operator=(DeviceArray const&) = delete;
  std::vector<T> to_host() const {
    std::vector<T> h(size);
    HEAPLAB_CUDA_TRY(cudaMemcpy(h.data(), data, size * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  T* data = nullptr;
  std::size_t size;
};

/// Fails the current test with every violation (and a dump) if the catalog does not hold.
inline void expect_catalog_holds(heaplab::check::HeapSnapshot const& snap, char const* when) {
  auto const violations = heaplab::check::check_all(snap);
  if (violations.empty()) return;
  std::string text;
  for (std::size_t i = 0; i < violations.size() && i < 20; ++i)
    text += "  " + violations[i].to_string() + "\n";
  ADD_FAILURE() << "invariant catalog violated " << when << " (" << violations.size()
                << " violations):\n"
                << text << heaplab::check::dump(snap).substr(0, 4000);
}

struct LiveObject {
  heaplab::core::SlotRef at;
  std::uint32_t type                         = 0;
  heaplab::check::ObjectRecord const* record = nullptr;
};

/// Every live object of a snapshot with payloads, by id. Fails the test on a duplicate id.
inline std::map<std::uint64_t, LiveObject> objects_by_id(heaplab::check::HeapSnapshot const& snap) {
  std::map<std::uint64_t, LiveObject> out;
  for (std::uint32_t b = 0; b < snap.blocks.size(); ++b) {
    auto const& block = snap.blocks[b];
    for (std::uint32_t s = 0; s < block.objects.size(); ++s) {
      if (!block.objects[s]) continue;
      LiveObject o{{b, s}, block.type, &*block.objects[s]};
      bool const fresh = out.emplace(block.objects[s]->id, o).second;
      EXPECT_TRUE(fresh) << "object id " << block.objects[s]->id << " appears twice";
    }
  }
  return out;
}

/// Number of live objects per type id (from the payload records).
inline std::vector<std::uint64_t> count_by_type(heaplab::check::HeapSnapshot const& snap) {
  std::vector<std::uint64_t> n(snap.config.num_types(), 0);
  for (auto const& block : snap.blocks)
    for (auto const& o : block.objects)
      if (o) ++n.at(block.type);
  return n;
}

}  // namespace heap_test
