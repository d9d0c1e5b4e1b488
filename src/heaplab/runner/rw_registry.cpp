// Random-walk pool runners by name (rw_registry.hpp).
#include "heaplab/runner/rw_registry.hpp"

#include <algorithm>

#include "heaplab/core/expects.hpp"
#include "heaplab/runner/rw_cpu_pool.hpp"
#include "heaplab/runner/rw_model_pool.hpp"

namespace heaplab::runner {

namespace {

std::string comma_joined(std::vector<std::string> const& names) {
  std::string out;
  for (auto const& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// Why rw-gpu cannot run here. PLUG-IN rw-gpu: with rw::DevicePool (rw/device_pool.hpp) built,
/// this says "" where a GPU is present (cudart probe) and make_rw_runner's "rw-gpu" case below
/// returns RwRunner("rw-gpu", [o](cfg) { return std::make_unique<rw::DevicePool>(cfg, o.device);
/// }, its support function, false, the device's name).
std::string gpu_unavailable() {
  return "the rw GPU pool (rw::DevicePool, rw/device_pool.hpp) is not built in this tree";
}

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
  if (name == "rw-gpu") return gpu_unavailable();
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
        &cpu_pool_unsupported,
        false);
  // PLUG-IN rw-gpu (see gpu_unavailable above).
  throw runner_unavailable(gpu_unavailable());
}

std::vector<schedule::RwAlgorithm> rw_runner_algorithms(std::string const& name) {
  std::vector<schedule::RwAlgorithm> out;
  for (auto a : {schedule::RwAlgorithm::rw,
                 schedule::RwAlgorithm::rw_bm,
                 schedule::RwAlgorithm::corw,
                 schedule::RwAlgorithm::rw_malloc}) {
    if (name == "rw-cpu" && !cpu_pool_unsupported(to_rw(a)).empty()) continue;
    out.push_back(a);
  }
  return out;
}

}  // namespace heaplab::runner
