// Output that a signal does not lose (docs/cli.md "Signals"): heaplab_bench and heaplab_apps end
// with the default action on SIGTERM, SIGINT and SIGHUP (what `timeout`, Slurm's time limit,
// scancel, Ctrl-C and a dropped ssh session send), which discards whatever stdio still buffers. So
// their tables and CSV files are line-buffered: every line, a table row or a CSV row, is in the
// file (or the pipe) as soon as it is printed, and a run ended by a signal keeps every row it
// finished. Header-only, no CLI11.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>

namespace heaplab::program {

/// stdout line-buffered, also into a file or a pipe (where the C library would buffer 4 KiB).
/// Call it before anything is printed.
inline void line_buffered_stdout() { (void)std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ); }

/// fopen(path, "w") for a results file (a CSV), line-buffered; nullptr when it cannot be opened
/// (errno says why).
inline std::FILE* open_lines(std::string const& path) {
  std::FILE* const f = std::fopen(path.c_str(), "w");
  if (f != nullptr) (void)std::setvbuf(f, nullptr, _IOLBF, BUFSIZ);
  return f;
}

/// The file of a `--csv PATH` option: nullptr when no file is asked for (`path` empty); else
/// open_lines(path) with `header` and a newline written first (none when `header` is nullptr).
/// Throws std::runtime_error("cannot write PATH") when the file cannot be opened.
inline std::FILE* open_csv(std::string const& path, char const* header) {
  if (path.empty()) return nullptr;
  std::FILE* const f = open_lines(path);
  if (f == nullptr) throw std::runtime_error("cannot write " + path);
  if (header != nullptr) std::fprintf(f, "%s\n", header);
  return f;
}

}  // namespace heaplab::program
