// write_text_file and probe_directory_for (json.hpp): atomic writes of heaplab's files.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <vector>

#include "heaplab/schedule/json.hpp"

namespace heaplab::schedule {
namespace {

namespace fs = std::filesystem;

fs::path directory_of(fs::path const& file) {
  return file.has_parent_path() ? file.parent_path() : fs::path(".");
}

/// An existing file that is neither regular nor a directory.
bool is_special(fs::path const& file) {
  std::error_code ec;
  auto const st = fs::status(file, ec);
  return !ec && fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st);
}

/// A new file next to `target` with a unique name ending in .tmp, removed when the object goes
/// unless commit() renamed it onto the target.
class TempFile {
 public:
  explicit TempFile(fs::path const& target) {
    std::random_device rd;
    for (int attempt = 0; attempt < 100; ++attempt) {
      char suffix[32];
      std::snprintf(suffix, sizeof suffix, ".%08x.tmp", static_cast<unsigned>(rd()));
      path_ = target.string() + suffix;
      fd_   = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd_ >= 0 || errno != EEXIST) break;
    }
    if (fd_ < 0)
      throw std::runtime_error("cannot create a file in " + directory_of(target).string() + ": " +
                               std::strerror(errno));
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  TempFile(TempFile const&)            = delete;
  TempFile& operator=(TempFile const&) = delete;

  void write(std::string const& text) {
    std::size_t done = 0;
    while (done < text.size()) {
      ssize_t const n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
  }
  /// Makes the contents durable and renames the file onto `target` (atomic within a directory).
  void commit(fs::path const& target) {
    int const fd = fd_;
    fd_          = -1;
    if (::fsync(fd) != 0 || ::close(fd) != 0)
      throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(errno));
    if (::rename(path_.c_str(), target.c_str()) != 0)
      throw std::runtime_error("cannot rename " + path_ + " to " + target.string() + ": " +
                               std::strerror(errno));
    committed_ = true;
  }

  /// Makes the contents durable; the file keeps its temporary name (removed when the object
  /// goes) until link_new() gives it a final one.
  void sync() {
    int const fd = fd_;
    fd_          = -1;
    if (::fsync(fd) != 0 || ::close(fd) != 0)
      throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(errno));
  }
  /// Gives the synced file the name `target` only if no file of that name exists (link(2) never
  /// replaces one). False when `target` exists.
  bool link_new(fs::path const& target) {
    if (::link(path_.c_str(), target.c_str()) == 0) return true;
    if (errno == EEXIST) return false;
    throw std::runtime_error("cannot create " + target.string() + ": " + std::strerror(errno));
  }

 private:
  std::string path_;
  int fd_         = -1;
  bool committed_ = false;
};

}  // namespace

void write_text_file(fs::path const& file, std::string const& text) {
  if (is_special(file)) {
    std::ofstream stream(file, std::ios::binary);
    stream << text;
    if (!stream.flush()) throw std::runtime_error("cannot write " + file.string());
    return;
  }
  TempFile tmp(file);
  tmp.write(text);
  tmp.commit(file);
}

fs::path write_new_text_file(std::vector<fs::path> const& candidates, std::string const& text) {
  if (candidates.empty()) throw std::runtime_error("write_new_text_file: no file name given");
  TempFile tmp(candidates.front());
  tmp.write(text);
  tmp.sync();
  // The text is complete and durable before any final name exists: a reader, or a process killed
  // at any point, sees no file or the whole file, never an empty claim; the temporary name is
  // removed when `tmp` goes.
  for (auto const& name : candidates)
    if (tmp.link_new(name)) return name;
  throw std::runtime_error("the file names " + candidates.front().string() + " ... " +
                           candidates.back().string() + " are all taken");
}

std::string probe_directory_for(fs::path const& file) {
  if (is_special(file)) {
    int const fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return std::string("cannot open it for writing: ") + std::strerror(errno);
    ::close(fd);
    return {};
  }
  try {
    TempFile probe(file);  // removed again at the end of this scope
  } catch (std::exception const& e) {
    return e.what();
  }
  return {};
}

}  // namespace heaplab::schedule
