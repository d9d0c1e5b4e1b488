// files.hpp.
#include "files.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/schedule/json.hpp"

namespace fs = std::filesystem;

namespace heaplab::cli {
namespace {

fs::path directory_of(fs::path const& file) {
  return file.has_parent_path() ? file.parent_path() : fs::path(".");
}

}  // namespace

std::string output_dir_problem(fs::path const& dir) {
  if (dir.empty()) return "the directory name is empty";
  std::error_code ec;
  fs::path const absolute = fs::absolute(dir, ec);
  if (ec) return ec.message();
  fs::path probe = absolute;  // the nearest existing ancestor (the directory itself if it exists)
  while (!fs::exists(probe, ec)) {
    if (!probe.has_parent_path() || probe.parent_path() == probe) return "no existing parent";
    probe = probe.parent_path();
  }
  if (!fs::is_directory(probe, ec))
    return probe == absolute ? "it exists and is not a directory"
                             : probe.string() + " is not a directory";
  if (::access(probe.c_str(), W_OK | X_OK) != 0)
    return probe.string() + " is not writable: " + std::strerror(errno);
  // access() answers for the permission bits only: for root it says yes to /proc and to
  // read-only mounts. Creating (and removing) a file there is the real test.
  if (auto const why = schedule::probe_directory_for(probe / ".heaplab-probe"); !why.empty())
    return probe.string() + " is not writable: " + why;
  return {};
}

std::string output_file_problem(fs::path const& file) {
  if (file.empty()) return "the file name is empty";
  std::error_code ec;
  if (fs::is_directory(file, ec)) return "it is a directory";
  auto const dir = directory_of(file);
  if (fs::exists(file, ec) || fs::is_directory(dir, ec)) return schedule::probe_directory_for(file);
  return "its directory " + dir.string() + " does not exist";
}

bool same_file(fs::path const& a, fs::path const& b) {
  std::error_code ec;
  bool const same_name = fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
  if (!ec && same_name) return true;
  std::error_code eq;
  return fs::exists(a, eq) && fs::exists(b, eq) && fs::equivalent(a, b, eq) && !eq;
}

void write_file_atomically(fs::path const& file, std::string const& text) {
  schedule::write_text_file(file, text);
}

nlohmann::ordered_json summary_header(std::string const& format,
                                      int version,
                                      std::string const& started) {
  nlohmann::ordered_json j;
  j["format"]  = format;
  j["version"] = version;
  j["heaplab"] = {{"version", runner::version()}, {"commit", runner::git_commit()}};
  j["started"] = started;
  j["ended"]   = runner::utc_now_iso8601();
  return j;
}

std::string xml_escaped(std::string const& text) {
  std::string out;
  for (char const c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // XML 1.0 allows no other control characters than tab, newline and carriage return.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
          out += '?';
        else
          out += c;
    }
  }
  return out;
}

}  // namespace heaplab::cli
