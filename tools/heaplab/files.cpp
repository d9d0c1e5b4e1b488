// files.hpp.
#include "files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace fs = std::filesystem;

namespace heaplab::cli {

std::string output_dir_problem(fs::path const& dir) {
  if (dir.empty()) return "the directory name is empty";
  std::error_code ec;
  fs::path probe = fs::absolute(dir, ec);
  if (ec) return ec.message();
  // The nearest existing ancestor (the directory itself when it exists).
  while (!fs::exists(probe, ec)) {
    if (!probe.has_parent_path() || probe.parent_path() == probe) return "no existing parent";
    probe = probe.parent_path();
  }
  if (!fs::is_directory(probe, ec))
    return probe == fs::absolute(dir) ? "it exists and is not a directory"
                                      : probe.string() + " is not a directory";
  if (access(probe.c_str(), W_OK | X_OK) != 0)
    return probe.string() + " is not writable: " + std::strerror(errno);
  return {};
}

std::string output_file_problem(fs::path const& file) {
  if (file.empty()) return "the file name is empty";
  std::error_code ec;
  if (fs::is_directory(file, ec)) return "it is a directory";
  if (fs::exists(file, ec) && access(file.c_str(), W_OK) != 0)
    return std::string("it is not writable: ") + std::strerror(errno);
  fs::path const parent = fs::absolute(file, ec).parent_path();
  if (!fs::is_directory(parent, ec)) return "its directory " + parent.string() + " does not exist";
  if (access(parent.c_str(), W_OK | X_OK) != 0)
    return "its directory " + parent.string() + " is not writable: " + std::strerror(errno);
  return {};
}

void write_file_atomically(fs::path const& file, std::string const& text) {
  fs::path const dir  = fs::absolute(file).parent_path();
  std::string pattern = (dir / ("." + file.filename().string() + ".XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int const fd = mkstemp(name.data());
  if (fd < 0)
    throw std::runtime_error("cannot create a temporary file in " + dir.string() + ": " +
                             std::strerror(errno));
  fs::path const tmp(name.data());
  auto fail = [&](std::string const& what) {
    int const err = errno;
    close(fd);
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::runtime_error(what + " " + file.string() + ": " + std::strerror(err));
  };
  for (std::size_t done = 0; done < text.size();) {
    ssize_t const n = write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (fchmod(fd, 0644) != 0) fail("cannot set the mode of");
  if (close(fd) != 0) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::runtime_error("cannot write " + file.string() + ": " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) {
    int const err = errno;
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::runtime_error("cannot write " + file.string() + ": " + std::strerror(err));
  }
}

}  // namespace heaplab::cli
