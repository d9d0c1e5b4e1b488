// Which GPU is present (device 0, or another index), or why none is usable. Host-only; never
// throws.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

namespace heaplab::cudart {

struct DeviceInfo {
  bool available = false;
  std::string reason;  // why not available, starting with "no CUDA device"; empty when available
  std::string name;    // e.g. "NVIDIA H100 80GB HBM3"
  int cc_major                    = 0;
  int cc_minor                    = 0;
  int multiprocessors             = 0;
  std::size_t global_memory_bytes = 0;
};

/// The properties of device `device` (default 0), or why it is not usable.
inline DeviceInfo probe_device(int device = 0) {
  DeviceInfo info;
  int count                = 0;
  cudaError_t const status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    info.reason = std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorName(status) +
                  ": " + cudaGetErrorString(status) + ")";
    (void)cudaGetLastError();
    return info;
  }
  if (count == 0) {
    info.reason = "no CUDA device (cudaGetDeviceCount reports 0 devices)";
    return info;
  }
  if (device < 0 || device >= count) {
    info.reason = "no CUDA device " + std::to_string(device) + " (cudaGetDeviceCount reports " +
                  std::to_string(count) + ")";
    return info;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    info.reason = "no CUDA device (cudaGetDeviceProperties failed)";
    (void)cudaGetLastError();
    return info;
  }
  info.available           = true;
  info.name                = prop.name;
  info.cc_major            = prop.major;
  info.cc_minor            = prop.minor;
  info.multiprocessors     = prop.multiProcessorCount;
  info.global_memory_bytes = prop.totalGlobalMem;
  return info;
}

/// The line benchmarks and applications print first: "device: NAME (sm_XY, N SMs, G GiB)".
inline std::string device_line(DeviceInfo const& d) {
  char buffer[256];
  std::snprintf(buffer,
                sizeof buffer,
                "device: %s (sm_%d%d, %d SMs, %.1f GiB)",
                d.name.c_str(),
                d.cc_major,
                d.cc_minor,
                d.multiprocessors,
                static_cast<double>(d.global_memory_bytes) / (1u << 30));
  return buffer;
}

}  // namespace heaplab::cudart
