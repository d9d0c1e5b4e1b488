// Output files and directories of the heaplab commands: checked before any work starts, written
// atomically, never leaving a temporary file behind (docs/cli.md "Files").
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace heaplab::cli {

/// "" when files can be created in `dir` (it exists and is a writable directory, or it does not
/// exist yet and its nearest existing ancestor is one); else why not. An empty path is refused.
std::string output_dir_problem(std::filesystem::path const& dir);

/// "" when `file` can be written by write_file_atomically; else why not: it is empty, a
/// directory, its directory does not exist, or a probe file cannot be created there (created and
/// removed at once). An existing special file (/dev/null, a pipe) must open for writing.
std::string output_file_problem(std::filesystem::path const& file);

/// Whether `a` and `b` name the same file, however spelled (another path, a symbolic or a hard
/// link); false when either does not exist and their canonical forms differ.
bool same_file(std::filesystem::path const& a, std::filesystem::path const& b);

/// Writes `text` to `file`. A regular file (or a new one) is written to a uniquely named
/// temporary file in its directory, synced and renamed onto it, so readers never see half a file
/// and no failure path (exceptions included) leaves the temporary file; an existing special file
/// (/dev/null, a pipe) is written in place, since renaming onto it would replace the device.
/// Throws std::runtime_error naming the file.
void write_file_atomically(std::filesystem::path const& file, std::string const& text);

/// The fields every machine-readable summary starts with (docs/cli.md "Machine-readable
/// results"): format, version, heaplab {version, commit}, started, ended (now).
nlohmann::ordered_json summary_header(std::string const& format,
                                      int version,
                                      std::string const& started);

/// `text` for XML attribute values and element text (JUnit reports): & < > " escaped; control
/// characters other than tab, newline and carriage return (which XML 1.0 does not allow) as '?'.
std::string xml_escaped(std::string const& text);

}  // namespace heaplab::cli
