// Output files and directories of the heaplab commands: checked before any work starts, written
// atomically (docs/cli.md "Files").
#pragma once

#include <filesystem>
#include <string>

namespace heaplab::cli {

/// "" when files can be created in `dir` (it exists and is a writable directory, or it does not
/// exist yet and its nearest existing ancestor is one); else why not. An empty path is refused.
std::string output_dir_problem(std::filesystem::path const& dir);

/// "" when `file` can be written (not a directory; its directory passes output_dir_problem);
/// else why not.
std::string output_file_problem(std::filesystem::path const& file);

/// Writes `text` to a uniquely named temporary file beside `file` and renames it over `file`;
/// on any error the temporary file is removed and the error rethrown (std::runtime_error).
void write_file_atomically(std::filesystem::path const& file, std::string const& text);

}  // namespace heaplab::cli
