// Helpers for the workflow tests: small schedules built by hand, data files, a RapidCheck runner
// with a minimum number of cases, temporary directories.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "heaplab/schedule/schedule.hpp"
#include "property.hpp"

#if !defined(HEAPLAB_SOURCE_DIR)
#error "HEAPLAB_SOURCE_DIR must name the source tree (proofs_tests/workflow/CMakeLists.txt)"
#endif

namespace heaplab::workflow_test {

/// A file under proofs_tests/.
inline std::filesystem::path data_file(std::string const& relative) {
  return std::filesystem::path(HEAPLAB_SOURCE_DIR) / "proofs_tests" / relative;
}

/// One concrete type Node (8 B, capacity 64) with one pointer `next` to Node; M blocks, n = 1.
inline schedule::Schedule tiny_schedule(std::uint32_t num_blocks = 4) {
  schedule::Schedule s;
  s.config.types.push_back({"Node", 8, std::nullopt, false, {{"next", 0, 1}}});
  s.config.num_blocks    = num_blocks;
  s.config.defrag_factor = 1;
  s.config.k1            = 0;
  return s;
}

/// Types A (8 B) and B (16 B, capacity 32), no pointers; 8 blocks.
inline schedule::Schedule two_type_schedule() {
  schedule::Schedule s;
  s.config.types.push_back({"A", 8, std::nullopt, false, {}});
  s.config.types.push_back({"B", 16, std::nullopt, false, {}});
  s.config.num_blocks    = 8;
  s.config.defrag_factor = 1;
  return s;
}

/// An alloc wave of `threads` threads, one object each, of `type`; with a link seed, slot 0 of
/// each new object refers to a live object (never null).
inline schedule::Step alloc(std::uint32_t threads,
                            std::optional<std::uint64_t> link_seed = std::nullopt,
                            std::uint32_t type                     = 0) {
  schedule::AllocWave a;
  a.type    = type;
  a.threads = threads;
  a.count   = 1;
  if (link_seed) a.links.push_back({type, 0, *link_seed, 0.0});
  return a;
}

inline schedule::Step free_fraction(double fraction, std::uint64_t seed, std::uint32_t type = 0) {
  schedule::FreeWave f;
  f.select.type     = type;
  f.select.pattern  = schedule::SelectPattern::fraction;
  f.select.fraction = fraction;
  f.select.seed     = seed;
  return f;
}

inline schedule::Step defrag(std::uint32_t type) {
  schedule::Defrag d;
  d.type = type;
  return d;
}

/// check_property (property.hpp) without the success line.
template <class Testable>
void check_property(int min_cases, Testable&& testable) {
  heaplab::testing::check_property(min_cases, std::forward<Testable>(testable), {true, false});
}

/// A fresh empty directory under the system temp dir, removed when the object goes.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("heaplab-workflow-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(TempDir const&)            = delete;
  TempDir& operator=(TempDir const&) = delete;
  [[nodiscard]] std::filesystem::path const& path() const { return path_; }
  [[nodiscard]] std::size_t file_count() const {
    if (!std::filesystem::exists(path_)) return 0;
    return static_cast<std::size_t>(
        std::distance(std::filesystem::recursive_directory_iterator(path_),
                      std::filesystem::recursive_directory_iterator()));
  }

 private:
  std::filesystem::path path_;
};

}  // namespace heaplab::workflow_test
