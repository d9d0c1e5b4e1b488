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
// to_json writes the canonical form: every field, optional ones only when set. For a canonical
// document j, to_json(from_json(j)) == j; for every valid schedule s, from_json(to_json(s)) == s.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

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

/// Parses JSON text strictly; errors carry the field path and the line and column.
Schedule parse(std::string_view text);

/// Reads a file; errors start with the file name.
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
