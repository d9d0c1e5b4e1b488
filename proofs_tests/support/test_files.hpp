// Files in tests: the data files under proofs_tests/ and fresh temporary directories.
#pragma once

#include <filesystem>
#include <random>
#include <string>
#include <system_error>

#if !defined(HEAPLAB_SOURCE_DIR)
#error "HEAPLAB_SOURCE_DIR must name the source tree (target_compile_definitions of the test)"
#endif

namespace heaplab::testing {

/// A file under proofs_tests/.
inline std::filesystem::path data_file(std::string const& relative) {
  return std::filesystem::path(HEAPLAB_SOURCE_DIR) / "proofs_tests" / relative;
}

/// A fresh empty directory under the system temp dir, removed when the object goes.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("heaplab-test-" + std::to_string(rd()) + "-" + std::to_string(rd()));
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

}  // namespace heaplab::testing
