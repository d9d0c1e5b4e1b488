// options.hpp.
#include "options.hpp"

#include <string>
#include <utility>

namespace heaplab::cli {

namespace {
std::string& program_path_storage() {
  static std::string path = "heaplab";
  return path;
}
}  // namespace

std::string const& program_path() { return program_path_storage(); }
void set_program_path(std::string path) {
  if (!path.empty()) program_path_storage() = std::move(path);
}

}  // namespace heaplab::cli
