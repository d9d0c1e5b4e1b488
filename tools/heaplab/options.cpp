// options.hpp.
#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace heaplab::cli {

CLI::Validator unsigned_integer(std::uint64_t min, std::uint64_t max) {
  std::string const range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::string const expected = "expected an integer in " + range + ", got '" + text + "'";
        if (text.empty() ||
            !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
          return expected;
        std::uint64_t value  = 0;
        auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size()) return expected;
        if (value < min || value > max) return expected;
        return {};
      },
      range);
}

CLI::Validator finite_number(double min, double max, bool min_exclusive) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s%g, %g]", min_exclusive ? "(" : "[", min, max);
  std::string const range = buf;
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::string const expected = "expected a number in " + range + ", got '" + text + "'";
        if (text.empty()) return expected;
        char* end          = nullptr;
        double const value = std::strtod(text.c_str(), &end);
        if (end != text.c_str() + text.size() || !std::isfinite(value)) return expected;
        if (value < min || value > max || (min_exclusive && value == min)) return expected;
        return {};
      },
      range);
}

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
