// Random-walk pool runners by name (rw_registry.hpp).
#include "heaplab/runner/rw_registry.hpp"

#include <algorithm>

#include "heaplab/core/expects.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/rw_cpu_pool.hpp"
#include "heaplab/runner/rw_model_pool.hpp"
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
#include "heaplab/rw/device_pool.hpp"
#endif

namespace heaplab::runner {

namespace {

std::string comma_joined(std::vector<std::string> const& names) {
  std::string out;
  for (auto const& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// Every algorithm runs on every rw backend.
std::string supports_all(rw::Algorithm) { return {}; }

}  // namespace

std::vector<std::string> const& rw_runner_names() {
  static std::vector<std::string> const names = {"rw-model", "rw-cpu", "rw-gpu"};
  return names;
}

bool is_rw_runner(std::string const& name) {
  auto const& n = rw_runner_names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

std::string rw_unavailable_reason(std::string const& name) {
  if (!is_rw_runner(name))
    return "unknown runner '" + name + "'; runners: " + comma_joined(rw_runner_names());
  if (name == "rw-gpu") return gpu_unavailable_reason();
  return {};
}

std::unique_ptr<RwRunner> make_rw_runner(std::string const& name, RwRunnerOptions const& o) {
  HEAPLAB_EXPECTS(is_rw_runner(name),
                  "unknown runner '" + name + "'; runners: " + comma_joined(rw_runner_names()));
  if (name == "rw-model")
    return std::make_unique<RwRunner>(
        "rw-model",
        [](rw::PoolConfig const& c) { return std::make_unique<ModelPool>(c); },
        [](rw::Algorithm) { return std::string(); },
        true);
  if (name == "rw-cpu")
    return std::make_unique<RwRunner>(
        "rw-cpu",
        [threads = o.os_threads](rw::PoolConfig const& c) {
          return std::make_unique<CpuThreadsPool>(c, threads);
        },
        &supports_all,
        false);
  // rw-gpu: rw::DevicePool (one kernel per wave) on device 0 where a GPU is present.
  if (std::string const why = gpu_unavailable_reason(); !why.empty()) throw runner_unavailable(why);
#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
  return std::make_unique<RwRunner>(
      "rw-gpu",
      [](rw::PoolConfig const& c) { return std::make_unique<rw::DevicePool>(c); },
      &supports_all,
      false,
      gpu_name());
#else
  throw runner_unavailable(gpu_unavailable_reason());  // not reached: the reason is never ""
#endif
}

}  // namespace heaplab::runner
