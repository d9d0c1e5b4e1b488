// Cold-start fill (issue 13): how much of an empty heap ONE kernel launch can fill when every
// thread allocates one object at the same time. A burst of warps that all find no active block
// each claim a fresh block; the question is whether the population still fits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heaplab::bench {

struct FillBenchOptions {
  std::vector<std::uint32_t> blocks{256, 16384};  // heap sizes M
  std::vector<double> fractions{0.5, 0.75, 0.9, 0.95, 0.99, 1.0};
  std::vector<std::uint32_t> claim_wait_rounds{0, 16};  // 0: claim tickets off (DynaSOAr Alg. 1)
  int runs = 5;  // launches per (workload, M, fraction), each on a freshly reset heap
  std::string csv;
};

struct FillRow {
  char const* workload            = "";
  std::uint32_t blocks            = 0;
  std::uint32_t claim_wait_rounds = 0;
  double fraction                 = 0;  // blocks the packed population needs / M
  std::uint64_t requests          = 0;
  std::uint64_t worst_failed      = 0;  // nullptr answers, the worst of the runs
  double worst_used_fraction      = 0;  // blocks the placed objects fill when packed / M, worst run
  float median_ms                 = 0;  // the allocation kernel
};

/// One kernel launch per run, every thread one object. Workloads: "one-type" (16-B objects,
/// 64 per block) and "mixed" (16, 32 and 64-B objects chosen per thread by a hash of its id, so
/// a warp's lanes split into three coalescing groups).
std::vector<FillRow> cold_start_fill(FillBenchOptions const& o);

}  // namespace heaplab::bench
