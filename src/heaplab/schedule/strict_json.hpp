// The strict JSON reading of every heaplab file: schedule files of every family and failure
// files (runner/failure_file.cpp). Every error is a schedule_error naming the JSON path
// ("steps[3].type"), unknown keys are refused with the closest known one, numbers are checked as
// typed. A family reads its schedule documents with these (docs/families.md "JSON form").
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/schedule/json.hpp"

namespace heaplab::schedule::strict {

using nlohmann::json;

[[noreturn]] void fail(std::string const& path, std::string const& reason);

std::string child_path(std::string const& path, std::string const& key);
std::string index_path(std::string const& path, std::size_t i);

/// A short rendering of a value for error messages (never recurses into containers).
std::string show(json const& j);

/// "a, b, c"
std::string comma_list(std::vector<std::string> const& items);

/// An object whose keys must all be in `allowed` (else: "unknown key 'x' (did you mean 'y'?);
/// allowed here: ...").
class StrictObject {
 public:
  StrictObject(json const& j, std::string path, std::vector<std::string> allowed);
  [[nodiscard]] json const* find(std::string const& key) const;
  /// The value of a required key (else: "missing required field").
  [[nodiscard]] json const& at(std::string const& key) const;
  [[nodiscard]] std::string path(std::string const& key) const { return child_path(path_, key); }
  [[nodiscard]] std::string const& path() const { return path_; }

 private:
  json const& j_;
  std::string path_;
};

std::uint64_t as_u64(json const& j, std::string const& path);
std::uint32_t as_u32(json const& j,
                     std::string const& path,
                     std::uint64_t max = std::numeric_limits<std::uint32_t>::max());
/// A number in [0, 1].
double as_unit(json const& j, std::string const& path);
bool as_bool(json const& j, std::string const& path);
std::string as_string(json const& j, std::string const& path);
std::string as_nonempty(json const& j, std::string const& path);
json const& as_array(json const& j, std::string const& path);

/// A family's schedule document: a JSON object whose "format" is `format` and whose "version" is
/// `version`, checked before anything else (a newer file says so before its new keys are
/// refused). `what` names the document in the error ("a random-walk schedule").
void check_format(json const& document,
                  std::string const& what,
                  std::string const& format,
                  std::uint64_t version);

/// A string naming one of an enum's values (`from` parses it; `names` lists the valid ones).
template <class E>
E as_enum(json const& j,
          std::string const& path,
          std::optional<E> (*from)(std::string const&),
          std::vector<std::string> const& names) {
  std::string const s = as_string(j, path);
  if (auto v = from(s)) return *v;
  fail(path, "unknown value '" + s + "'; expected one of: " + comma_list(names));
}

}  // namespace heaplab::schedule::strict
