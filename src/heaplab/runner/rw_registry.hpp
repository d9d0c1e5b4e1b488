// Random-walk pool runners by name (heaplab stress/replay/minimize --runner; docs/cli.md):
//
//   rw-model  RwRunner over ModelPool: a sequential, deterministic pool (rw_model_pool.hpp); the
//             model-only self-check of the schedule layer, interpreter, runner and catalog
//   rw-cpu    RwRunner over CpuThreadsPool: the portable core (rw/page_pool.hpp) on free-running
//             CPU threads (rw_cpu_pool.hpp); rw and rw-bm now, corw and rw-malloc when they land
//   rw-gpu    RwRunner over rw::DevicePool (rw/device_pool.hpp): the marked slot in
//             rw_registry.cpp; until it is filled make_rw_runner throws runner_unavailable
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "heaplab/runner/registry.hpp"
#include "heaplab/runner/rw_runner.hpp"
#include "heaplab/schedule/rw_schedule.hpp"

namespace heaplab::runner {

struct RwRunnerOptions {
  unsigned os_threads = 0;  // rw-cpu: OS threads per wave (0: min(4, hardware threads))
  int device          = 0;  // rw-gpu: the CUDA device
};

/// rw-model, rw-cpu, rw-gpu.
std::vector<std::string> const& rw_runner_names();
/// Whether `name` is one of rw_runner_names().
bool is_rw_runner(std::string const& name);

/// Throws core::precondition_error for an unknown name and runner_unavailable for a runner that
/// cannot run here (rw-gpu in this tree).
std::unique_ptr<RwRunner> make_rw_runner(std::string const& name, RwRunnerOptions const& o = {});

/// "" when make_rw_runner(name) would succeed, else why not.
std::string rw_unavailable_reason(std::string const& name);

}  // namespace heaplab::runner
