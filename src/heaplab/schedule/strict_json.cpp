// Strict JSON reading (strict_json.hpp).
#include "heaplab/schedule/strict_json.hpp"

#include <algorithm>
#include <utility>

#include "heaplab/schedule/text.hpp"

namespace heaplab::schedule::strict {

void fail(std::string const& path, std::string const& reason) {
  throw schedule_error(path, reason);
}

std::string child_path(std::string const& path, std::string const& key) {
  return path.empty() ? key : path + "." + key;
}

std::string index_path(std::string const& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string show(json const& j) {
  if (j.is_object()) return "an object";
  if (j.is_array()) return "an array";
  std::string text = j.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(j.type_name()) + " " + text;
}

std::string comma_list(std::vector<std::string> const& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out;
}

StrictObject::StrictObject(json const& j, std::string path, std::vector<std::string> allowed)
    : j_(j), path_(std::move(path)) {
  if (!j.is_object()) fail(path_, "expected an object, got " + show(j));
  for (auto const& item : j.items()) {
    if (std::find(allowed.begin(), allowed.end(), item.key()) != allowed.end()) continue;
    std::string reason     = "unknown key '" + item.key() + "'";
    std::string const best = closest(item.key(), allowed, 2);  // only close matches
    if (!best.empty()) reason += " (did you mean '" + best + "'?)";
    fail(child_path(path_, item.key()), reason + "; allowed here: " + comma_list(allowed));
  }
}

json const* StrictObject::find(std::string const& key) const {
  auto it = j_.find(key);
  return it == j_.end() ? nullptr : &*it;
}

json const& StrictObject::at(std::string const& key) const {
  if (auto const* v = find(key)) return *v;
  fail(child_path(path_, key), "missing required field '" + key + "'");
}

std::uint64_t as_u64(json const& j, std::string const& path) {
  if (j.is_number_unsigned()) return j.get<std::uint64_t>();
  if (j.is_number_integer()) fail(path, "must not be negative, got " + show(j));
  // nlohmann-json reads an integer beyond 64 bits as a double.
  if (j.is_number_float() && j.get<double>() >= 18446744073709551616.0)
    fail(path, "out of range: must be at most 18446744073709551615 (2^64 - 1), got " + show(j));
  if (j.is_number_float() && j.get<double>() <= -9223372036854775808.0)
    fail(path, "must not be negative, got " + show(j));
  fail(path, "expected a non-negative integer, got " + show(j));
}

std::uint32_t as_u32(json const& j, std::string const& path, std::uint64_t max) {
  std::uint64_t const v = as_u64(j, path);
  if (v > max) fail(path, "must be at most " + std::to_string(max) + ", got " + std::to_string(v));
  return static_cast<std::uint32_t>(v);
}

double as_unit(json const& j, std::string const& path) {
  if (!j.is_number()) fail(path, "expected a number in [0, 1], got " + show(j));
  double const v = j.get<double>();
  if (!(v >= 0.0 && v <= 1.0)) fail(path, "must be in [0, 1], got " + j.dump());
  return v;
}

bool as_bool(json const& j, std::string const& path) {
  if (!j.is_boolean()) fail(path, "expected true or false, got " + show(j));
  return j.get<bool>();
}

std::string as_string(json const& j, std::string const& path) {
  if (!j.is_string()) fail(path, "expected a string, got " + show(j));
  return j.get<std::string>();
}

std::string as_nonempty(json const& j, std::string const& path) {
  std::string s = as_string(j, path);
  if (s.empty()) fail(path, "must not be empty");
  return s;
}

json const& as_array(json const& j, std::string const& path) {
  if (!j.is_array()) fail(path, "expected an array, got " + show(j));
  return j;
}

void check_format(json const& document,
                  std::string const& what,
                  std::string const& format,
                  std::uint64_t version) {
  if (!document.is_object())
    fail("", what + " is a JSON object with \"format\": \"" + format + "\", got " + show(document));
  auto const f = document.find("format");
  if (f == document.end()) fail("format", "missing (expected \"" + format + "\")");
  if (as_string(*f, "format") != format)
    fail("format", "expected \"" + format + "\", got " + show(*f));
  auto const v            = document.find("version");
  std::string const reads = "this heaplab reads version " + std::to_string(version);
  if (v == document.end()) fail("version", "missing (" + reads + ")");
  if (std::uint64_t const n = as_u64(*v, "version"); n != version)
    fail("version", "unsupported version " + std::to_string(n) + "; " + reads);
}

}  // namespace heaplab::schedule::strict
