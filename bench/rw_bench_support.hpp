// Shared by the `heaplab_bench rw` figures (rw_bench.cu, rw_hash_join.cu): the pool size, the
// statistics over runs, the CSV file, progress lines on stderr, the wrong-output exit. Host code.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/cuda/error.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "program_output.hpp"
#include "rw_bench.hpp"

namespace heaplab::bench::rwb {

/// Pages of the benchmark pool: --pool-bytes, or min(8 GiB, 40 % of the free device memory),
/// divided by the page size; 1 .. kMaxPages.
inline std::uint32_t pool_pages(RwBenchOptions const& o) {
  std::uint64_t bytes = o.pool_bytes;
  if (bytes == 0) {
    std::size_t free_bytes = 0, total_bytes = 0;
    HEAPLAB_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    bytes = std::min<std::uint64_t>(std::uint64_t{8} << 30, free_bytes / 10 * 4);
  }
  std::uint64_t const pages = bytes / o.page_bytes;
  if (pages == 0)
    throw std::runtime_error("the pool holds no page of " + std::to_string(o.page_bytes) +
                             " bytes");
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(pages, rw::kMaxPages));
}

/// A free fraction in percent of T, as a page count (at least 1).
inline std::uint32_t free_pages_of(std::uint32_t t, double percent) {
  auto const a = static_cast<std::uint32_t>(std::llround(static_cast<double>(t) * percent / 100.0));
  return std::max<std::uint32_t>(a, 1);
}

/// Kernel times of the timed runs of one cell.
struct Times {
  std::vector<float> ms;
  [[nodiscard]] double median() const {
    if (ms.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::vector<float> s = ms;
    std::sort(s.begin(), s.end());
    return s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
  }
  [[nodiscard]] double mean() const {
    if (ms.empty()) return std::numeric_limits<double>::quiet_NaN();
    return std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  }
  [[nodiscard]] double min() const {
    return ms.empty() ? NAN : *std::min_element(ms.begin(), ms.end());
  }
  [[nodiscard]] double max() const {
    return ms.empty() ? NAN : *std::max_element(ms.begin(), ms.end());
  }
  /// "runs,median,mean,min,max" for a CSV row (ms, five decimals; nan where no run).
  [[nodiscard]] std::string csv() const {
    char row[160];
    std::snprintf(
        row, sizeof row, "%zu,%.5f,%.5f,%.5f,%.5f", ms.size(), median(), mean(), min(), max());
    return row;
  }
};

/// The CSV file of --csv (none when empty): a header, then rows.
class Csv {
 public:
  Csv(std::string const& path, char const* header)
      : file_(heaplab::program::open_csv(path, header)) {}
  ~Csv() {
    if (file_) std::fclose(file_);
  }
  Csv(Csv const&)            = delete;
  Csv& operator=(Csv const&) = delete;
  [[nodiscard]] std::FILE* file() const { return file_; }

 private:
  std::FILE* file_ = nullptr;
};

/// A number for a table cell: "inf", "n/a" (NaN) or the value.
inline std::string cell(double v, char const* format = "%.3f") {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return "inf";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

/// The seed of run r of cell c (distinct per run and cell, fixed by --seed).
inline std::uint64_t run_seed(std::uint64_t seed, std::uint64_t cell_index, int run) {
  return seed * 1000003u + cell_index * 7919u + static_cast<std::uint64_t>(run);
}

/// A wave's output handed out a page twice or a page beyond the pool: the run is wrong.
class wrong_output : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Runs a figure; a wrong output is exit status 1 with the reason on stderr.
template <class F>
int reporting_wrong_output(F&& f) {
  try {
    return f();
  } catch (wrong_output const& e) {
    std::fprintf(stderr, "heaplab_bench rw: WRONG OUTPUT: %s\n", e.what());
    return 1;
  }
}

}  // namespace heaplab::bench::rwb
