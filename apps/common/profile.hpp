// The memory profile every app of `heaplab_apps` writes with `--profile FILE` (docs/apps.md
// "The memory profile"): per iteration and concrete type the live objects, allocated blocks and
// bytes and the fragmentation F (CompactGpu sec. 2.2), a row `all` for the whole heap, and the
// iteration's time per phase (app code, defragmentation). Long format, one CSV for every app, so
// that tools/plot-app draws any of them and several runs (policies, ablations) side by side.
// Plain C++17 (CPU-tested in common_test.cpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "heaplab/soa/heap_statistics.hpp"

namespace heaplab::apps {

/// What one iteration cost, and what its defragmentation did.
struct IterationCost {
  double app_ms              = 0;  // the app's own phases (their parallel_do enumerations included)
  double defrag_ms           = 0;  // defragment() calls at the end of the iteration (total_ms)
  std::uint32_t defrag_calls = 0;
  std::uint32_t defrag_passes = 0;  // passes of those calls (CompactGpu Table 1 "#Passes")
  std::uint64_t objects_moved = 0;
  double rewrite_ms           = 0;  // the calls' pointer rewrites (Table 1 "Rewrite")
};

/// An app's own per-iteration CSV (`--csv`): closed when it goes out of scope.
using CsvFile = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

/// Creates `path` and writes `header` (one line, no newline) to it; no file (nullptr) when path is
/// empty. Throws std::runtime_error "<app>: cannot write <path>".
CsvFile open_csv(std::string const& path, std::string const& app, char const* header);

class ProfileCsv {
 public:
  /// The header line of every profile.
  static constexpr char const* kHeader =
      "app,variant,iteration,type,live_objects,allocated_blocks,allocated_bytes,fragmentation,"
      "app_ms,defrag_ms,defrag_calls,defrag_passes,objects_moved,rewrite_ms";

  /// No file: every call is a no-op.
  ProfileCsv() = default;
  /// Creates (truncates) `path` and writes the header. Throws std::runtime_error naming the path.
  ProfileCsv(std::string const& path, std::string app, std::uint64_t block_bytes);

  [[nodiscard]] bool enabled() const { return file_ != nullptr; }

  /// One row per concrete type (abstract types, capacity 0, are skipped) and one row `all`; the
  /// iteration's cost is repeated on each. Flushes, so a run that stops early keeps its rows.
  void write(std::string const& variant,
             std::uint64_t iteration,
             soa::HeapStatistics const& stats,
             IterationCost const& cost);

 private:
  struct Close {
    void operator()(std::FILE* f) const { (void)std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Close> file_;
  std::string app_;
  std::uint64_t block_bytes_ = 0;
};

}  // namespace heaplab::apps
