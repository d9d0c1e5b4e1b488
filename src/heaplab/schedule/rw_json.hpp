// The JSON form of random-walk schedules (docs/schedules.md "Random-walk schedules"):
//
//   {"format": "heaplab-rw-schedule", "version": 1, "description": "...",
//    "pool": {"pages": 4096, "page_bytes": 4096, "word_bits": 32, "max_steps": 1000,
//             "pretaken": {"count": 4076, "seed": 3}},          // or {"pages": [1, 5, 9]}
//    "steps": [{"op": "alloc", "algorithm": "rw-bm", "threads": 1000, "block_threads": 256,
//               "seed": 5, "lanes": {"pattern": "every_kth", "k": 2, "offset": 0},
//               "sizes": {"pattern": "fixed", "n": 1}},
//              {"op": "free", "select": {"pattern": "fraction", "fraction": 0.5, "seed": 3}}]}
//
// Read with the strict reader of heap schedules (strict_json.hpp, parse_document): bounded
// file size and nesting, unknown or duplicate keys refused, numbers checked as typed, every error
// a schedule_error with the field path and (from text) the line and column. `lanes` and `sizes`
// may be left out (every thread, one page); to_json writes every field.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "heaplab/schedule/rw_schedule.hpp"

namespace heaplab::schedule {

nlohmann::ordered_json to_json(RwSchedule const& schedule);
/// Strict reader of a parsed document (errors name the field path, no line numbers).
RwSchedule rw_from_json(nlohmann::json const& document);
/// rw_from_json with errors located in `text` (parse_document(text) gave `document`).
RwSchedule rw_from_document(std::string_view text, nlohmann::json const& document);
/// Parses JSON text strictly; errors carry the field path and the line and column.
RwSchedule parse_rw(std::string_view text);
/// Reads a file; errors start with the file name.
RwSchedule load_rw(std::filesystem::path const& file);
/// The canonical text: to_json(schedule).dump(2) plus a final newline.
std::string dump(RwSchedule const& schedule);

}  // namespace heaplab::schedule
