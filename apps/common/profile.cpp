#include "common/profile.hpp"
#include "program_output.hpp"

#include <cinttypes>
#include <stdexcept>
#include <utility>

namespace heaplab::apps {

CsvFile open_csv(std::string const& path, std::string const& app, char const* header) {
  CsvFile csv(nullptr, &std::fclose);
  if (path.empty()) return csv;
  csv.reset(heaplab::program::open_lines(path));
  if (!csv) throw std::runtime_error(app + ": cannot write " + path);
  std::fprintf(csv.get(), "%s\n", header);
  return csv;
}

ProfileCsv::ProfileCsv(std::string const& path, std::string app, std::uint64_t block_bytes)
    : file_(heaplab::program::open_lines(path)), app_(std::move(app)), block_bytes_(block_bytes) {
  if (!file_) throw std::runtime_error("--profile: cannot write " + path);
  std::fprintf(file_.get(), "%s\n", kHeader);
}

void ProfileCsv::write(std::string const& variant,
                       std::uint64_t iteration,
                       soa::HeapStatistics const& stats,
                       IterationCost const& cost) {
  if (!file_) return;
  auto const row =
      [&](std::string const& type, std::uint64_t live, std::uint64_t blocks, double f) {
        std::fprintf(file_.get(),
                     "%s,%s,%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64
                     ",%.6f,%.4f,%.4f,%u,%u,%" PRIu64 ",%.4f\n",
                     app_.c_str(),
                     variant.c_str(),
                     iteration,
                     type.c_str(),
                     live,
                     blocks,
                     blocks * block_bytes_,
                     f,
                     cost.app_ms,
                     cost.defrag_ms,
                     cost.defrag_calls,
                     cost.defrag_passes,
                     cost.objects_moved,
                     cost.rewrite_ms);
      };
  for (auto const& t : stats.types)
    if (t.capacity > 0) row(t.name, t.used_slots, t.allocated_blocks, t.fragmentation);
  row("all", stats.used_slots, stats.allocated_blocks, stats.fragmentation);
  std::fflush(file_.get());
}

}  // namespace heaplab::apps
