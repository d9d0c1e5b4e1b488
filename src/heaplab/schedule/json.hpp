// The versioned JSON form of a schedule (docs/schedules.md "File format").
//
//   {"format": "heaplab-schedule", "version": 1, "description": "...",
//    "config": {"types": [...], "num_blocks": M, "n": n, "k1": k1},
//    "steps": [{"op": "alloc", ...}, {"op": "free", ...}, ...]}
//
// Reading is strict: unknown keys, duplicate keys, wrong JSON types, missing fields, values out of
// range and invalid configurations are all errors (schedule_error) naming the offending field path
// ("steps[2].divergence.counts[5]") and, when reading text, the line and column. A malformed file
// never crashes the reader.
//
// Limits, checked before any JSON value is built (docs/schedules.md "Limits"): a file is read only
// up to kDefaultMaxFileMiB (or HEAPLAB_MAX_FILE_MIB) MiB, and arrays and objects nest at most
// kMaxNestingDepth deep. Reading is linear in the size of the text.
//
// to_json writes the canonical form: every field, optional ones only when set. For a canonical
// document j, to_json(from_json(j)) == j; for every valid schedule s, from_json(to_json(s)) == s.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "heaplab/schedule/schedule.hpp"

namespace heaplab::schedule {

/// The canonical form, keys in a fixed reading order ("format", "version", "description",
/// "config", "steps"; "op" first in a step).
nlohmann::ordered_json to_json(Schedule const& schedule);
nlohmann::ordered_json config_to_json(core::HeapConfig const& config);
nlohmann::ordered_json step_to_json(core::HeapConfig const& config, Step const& step);

/// Strict reader of a parsed document; errors name the field path (no line numbers).
Schedule from_json(nlohmann::json const& document);
Schedule from_json(nlohmann::ordered_json const& document);

/// How deep arrays and objects may nest in a schedule or failure file (a failure file needs 7).
inline constexpr std::size_t kMaxNestingDepth = 64;
/// How large a file may be, unless the environment variable HEAPLAB_MAX_FILE_MIB says otherwise
/// (a whole number of MiB, 1 .. kMaxFileMiBSetting). A canonical schedule of 2^20 steps (the most
/// a file may hold) takes about 230 MiB.
inline constexpr std::size_t kDefaultMaxFileMiB = 256;
inline constexpr std::size_t kMaxFileMiBSetting = 1u << 20;
/// The limit in force: HEAPLAB_MAX_FILE_MIB if set, else kDefaultMaxFileMiB. Throws
/// schedule_error if HEAPLAB_MAX_FILE_MIB is set to anything but a number in range.
std::size_t max_file_mib();

/// The whole content of `file`, read with bounded memory: a regular file larger than the limit is
/// refused before reading, and anything else (a pipe, a device such as /dev/zero) is read only up
/// to the limit plus one byte. Errors (schedule_error, source = the file name): cannot open,
/// is a directory, cannot read, larger than the limit.
std::string read_text_file(std::filesystem::path const& file);

/// Writes `text` to `file` so that no reader ever sees half a file and no failure leaves a
/// temporary file behind: a regular (or new) file is written to a uniquely named temporary file
/// in its directory, synced and renamed onto it; an existing special file (/dev/null, a pipe) is
/// written in place, since renaming onto it would replace the device. Throws std::runtime_error
/// naming the file (text_file.cpp).
void write_text_file(std::filesystem::path const& file, std::string const& text);

/// Writes `text` under the first of `candidates` (files in one directory) that does not exist yet,
/// without ever replacing a file: the text goes to a temporary file first, is synced, and is then
/// hard-linked to each candidate in turn until one is free; the temporary name is removed. No
/// reader ever sees an empty or partial file under a candidate's name. Returns the name used;
/// throws std::runtime_error when none is free or the directory is not writable.
std::filesystem::path write_new_text_file(std::vector<std::filesystem::path> const& candidates,
                                          std::string const& text);

/// Whether a file named `file` can be created in its directory: "" when a probe file could be
/// created there (and was removed at once), else the system's reason.
std::string probe_directory_for(std::filesystem::path const& file);

/// Parses JSON text into a document, strictly and in linear time: first a scan that rejects
/// nesting deeper than kMaxNestingDepth and NUL bytes (before nlohmann-json builds anything), then
/// nlohmann-json, then a scan for duplicate keys. Every error is a schedule_error with the line and
/// column (columns count bytes): syntax errors, invalid UTF-8, an empty input, numbers beyond the
/// range of a double (1e400), duplicate keys.
nlohmann::json parse_document(std::string_view text);

/// Parses JSON text strictly; errors carry the field path and the line and column.
Schedule parse(std::string_view text);

/// Reads a document that parse_document(text) returned; errors carry the line and column in
/// `text` (parse(text) is parse_document followed by this).
Schedule from_document(std::string_view text, nlohmann::json const& document);

/// Reads a file (read_text_file, then parse); errors start with the file name.
Schedule load(std::filesystem::path const& file);

/// The canonical text: to_json(schedule).dump(2) plus a final newline.
std::string dump(Schedule const& schedule);

/// 1-based line and column of byte `offset` (0-based) in `text`.
struct TextPosition {
  std::size_t line   = 0;
  std::size_t column = 0;
};
TextPosition position_of(std::string_view text, std::size_t offset);

/// Where the value at `path` ("steps[2].divergence", "" for the document) starts in JSON text;
/// if the path does not exist, where its deepest existing ancestor starts. Assumes valid JSON.
TextPosition locate(std::string_view text, std::string const& path);

}  // namespace heaplab::schedule
