// Strict reading and canonical writing of failure files (failure_file.hpp, docs/replay.md).
#include "heaplab/schedule/failure_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <vector>

#include "heaplab/schedule/detail/strict_json.hpp"
#include "heaplab/schedule/json.hpp"
#include "heaplab/schedule/rw_json.hpp"
#include "heaplab/schedule/text.hpp"

namespace heaplab::schedule {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

namespace {

constexpr std::pair<FailureKind, char const*> kKindNames[] = {
    {FailureKind::invariant_violation, "invariant_violation"},
    {FailureKind::divergence, "divergence"},
    {FailureKind::digest_mismatch, "digest_mismatch"},
    {FailureKind::hang, "hang"},
    {FailureKind::crash, "crash"},
};

// Strict reading (detail/strict_json.hpp, shared with schedule files).
using detail::as_nonempty;
using detail::as_string;
using detail::as_u32;
using detail::as_u64;
using detail::child_path;
using detail::comma_list;
using detail::fail;
using detail::show;
using Obj = detail::StrictObject;

/// failure_from_json with errors located in `text`.
FailureFile failure_from_document(std::string_view text, json const& document);

std::vector<std::string> const kTopKeys = {"format",
                                           "version",
                                           "created",
                                           "git_commit",
                                           "gpu",
                                           "runner",
                                           "seed",
                                           "rapidcheck",
                                           "origin",
                                           "failure",
                                           "schedule"};

}  // namespace

char const* to_string(FailureKind kind) {
  for (auto const& [k, name] : kKindNames)
    if (k == kind) return name;
  return "?";
}

std::optional<FailureKind> failure_kind_from_string(std::string const& s) {
  for (auto const& [k, name] : kKindNames)
    if (s == name) return k;
  return std::nullopt;
}

bool operator==(FailureHeader const& a, FailureHeader const& b) {
  return a.created == b.created && a.git_commit == b.git_commit && a.gpu == b.gpu &&
         a.runner == b.runner && a.seed == b.seed && a.rapidcheck == b.rapidcheck &&
         a.origin == b.origin && a.failure == b.failure;
}

bool operator==(FailureFile const& a, FailureFile const& b) {
  return static_cast<FailureHeader const&>(a) == static_cast<FailureHeader const&>(b) &&
         a.schedule == b.schedule;
}

bool operator==(RwFailureFile const& a, RwFailureFile const& b) {
  return static_cast<FailureHeader const&>(a) == static_cast<FailureHeader const&>(b) &&
         a.schedule == b.schedule;
}

namespace {

/// The checks of validate() that do not look at the schedule; `steps`: its number of steps.
void validate_header(FailureHeader const& f, std::size_t steps) {
  if (f.created.empty()) fail("created", "must not be empty");
  if (f.git_commit.empty()) fail("git_commit", "must not be empty (write \"unknown\")");
  if (f.gpu.empty()) fail("gpu", "must not be empty (write \"none\")");
  if (f.runner.empty()) fail("runner", "must not be empty");
  if (f.origin.command.empty()) fail("origin.command", "must not be empty");
  if (f.failure.check.empty()) fail("failure.check", "must not be empty");
  if (f.failure.step >= steps)
    fail("failure.step",
         "step " + std::to_string(f.failure.step) + " is outside the schedule, which has " +
             std::to_string(steps) + " steps");
}

/// validate(schedule) with errors under "schedule.".
template <class S>
void validate_embedded(S const& schedule) {
  try {
    validate(schedule);
  } catch (schedule_error const& e) {
    throw schedule_error(child_path("schedule", e.path()), e.reason());
  }
}

ordered header_to_json(FailureHeader const& f) {
  ordered j = {{"format", kFailureFormatName},
               {"version", kFailureFormatVersion},
               {"created", f.created},
               {"git_commit", f.git_commit},
               {"gpu", f.gpu},
               {"runner", f.runner},
               {"seed", f.seed}};
  if (f.rapidcheck) j["rapidcheck"] = {{"seed", f.rapidcheck->seed}, {"size", f.rapidcheck->size}};
  ordered origin = {{"command", f.origin.command}};
  if (f.origin.run_seed) origin["run_seed"] = *f.origin.run_seed;
  if (f.origin.case_index) origin["case"] = *f.origin.case_index;
  if (!f.origin.profile.empty()) origin["profile"] = f.origin.profile;
  if (f.origin.heap_mib) origin["heap_mib"] = *f.origin.heap_mib;
  if (!f.origin.minimized_from.empty()) origin["minimized_from"] = f.origin.minimized_from;
  if (f.origin.original_steps) origin["original_steps"] = *f.origin.original_steps;
  j["origin"]  = std::move(origin);
  j["failure"] = {{"step", f.failure.step},
                  {"kind", to_string(f.failure.kind)},
                  {"check", f.failure.check},
                  {"message", f.failure.message}};
  return j;
}

void check_format_and_version(json const& document) {
  if (!document.is_object())
    fail("",
         "a failure file is a JSON object with \"format\": \"" + std::string(kFailureFormatName) +
             "\", got " + show(document));
  auto const format = document.find("format");
  if (format == document.end())
    fail("format",
         "missing: not a heaplab failure file (expected \"format\": \"" +
             std::string(kFailureFormatName) + "\")");
  if (as_string(*format, "format") != kFailureFormatName)
    fail("format", "expected \"" + std::string(kFailureFormatName) + "\", got " + show(*format));
  auto const version = document.find("version");
  if (version == document.end())
    fail("version",
         "missing (this heaplab reads version " + std::to_string(kFailureFormatVersion) + ")");
  std::uint64_t const v = as_u64(*version, "version");
  if (v != kFailureFormatVersion)
    fail("version",
         "unsupported version " + std::to_string(v) + "; this heaplab reads version " +
             std::to_string(kFailureFormatVersion));
}

FailureOrigin read_origin(json const& j) {
  Obj const oo(
      j,
      "origin",
      {"command", "run_seed", "case", "profile", "heap_mib", "minimized_from", "original_steps"});
  FailureOrigin origin;
  origin.command = as_nonempty(oo.at("command"), oo.path("command"));
  if (auto const* x = oo.find("run_seed")) origin.run_seed = as_u64(*x, oo.path("run_seed"));
  if (auto const* x = oo.find("case")) origin.case_index = as_u64(*x, oo.path("case"));
  if (auto const* x = oo.find("profile")) origin.profile = as_nonempty(*x, oo.path("profile"));
  if (auto const* x = oo.find("heap_mib")) origin.heap_mib = as_u32(*x, oo.path("heap_mib"));
  if (auto const* x = oo.find("minimized_from"))
    origin.minimized_from = as_nonempty(*x, oo.path("minimized_from"));
  if (auto const* x = oo.find("original_steps"))
    origin.original_steps = as_u64(*x, oo.path("original_steps"));
  return origin;
}

FailureRecord read_record(json const& j) {
  Obj const fo(j, "failure", {"step", "kind", "check", "message"});
  FailureRecord r;
  r.step                 = as_u64(fo.at("step"), fo.path("step"));
  std::string const kind = as_string(fo.at("kind"), fo.path("kind"));
  auto const parsed_kind = failure_kind_from_string(kind);
  if (!parsed_kind) {
    std::vector<std::string> names;
    for (auto const& [k, name] : kKindNames) names.push_back(name);
    fail(fo.path("kind"),
         "unknown failure kind '" + kind + "'; expected one of: " + comma_list(names));
  }
  r.kind    = *parsed_kind;
  r.check   = as_nonempty(fo.at("check"), fo.path("check"));
  r.message = as_string(fo.at("message"), fo.path("message"));
  return r;
}

/// Everything but the schedule of a document whose format and version were checked.
FailureHeader read_header(Obj const& o) {
  FailureHeader f;
  f.created    = as_nonempty(o.at("created"), "created");
  f.git_commit = as_nonempty(o.at("git_commit"), "git_commit");
  f.gpu        = as_nonempty(o.at("gpu"), "gpu");
  f.runner     = as_nonempty(o.at("runner"), "runner");
  f.seed       = as_u64(o.at("seed"), "seed");
  if (auto const* rc = o.find("rapidcheck")) {
    Obj const ro(*rc, "rapidcheck", {"seed", "size"});
    f.rapidcheck = RapidCheckParams{as_u64(ro.at("seed"), ro.path("seed")),
                                    as_u32(ro.at("size"), ro.path("size"))};
  }
  f.origin  = read_origin(o.at("origin"));
  f.failure = read_record(o.at("failure"));
  return f;
}

/// Reads the embedded schedule with errors under "schedule.".
template <class S, class Read>
S read_embedded(Obj const& o, Read read) {
  try {
    return read(o.at("schedule"));
  } catch (schedule_error const& e) {
    throw schedule_error(child_path("schedule", e.path()), e.reason());
  }
}

}  // namespace

void validate(FailureFile const& f) {
  validate_header(f, std::numeric_limits<std::size_t>::max());
  validate_embedded(f.schedule);
  validate_header(f, f.schedule.steps.size());
}

void validate(RwFailureFile const& f) {
  validate_header(f, std::numeric_limits<std::size_t>::max());
  validate_embedded(f.schedule);
  validate_header(f, f.schedule.steps.size());
}

ordered to_json(FailureFile const& f) {
  ordered j     = header_to_json(f);
  j["schedule"] = to_json(f.schedule);
  return j;
}

ordered to_json(RwFailureFile const& f) {
  ordered j     = header_to_json(f);
  j["schedule"] = to_json(f.schedule);
  return j;
}

FailureFile failure_from_json(json const& document) {
  check_format_and_version(document);
  Obj const o(document, "", kTopKeys);
  FailureFile f;
  static_cast<FailureHeader&>(f) = read_header(o);
  f.schedule = read_embedded<Schedule>(o, [](json const& j) { return from_json(j); });
  validate(f);
  return f;
}

RwFailureFile rw_failure_from_json(json const& document) {
  check_format_and_version(document);
  Obj const o(document, "", kTopKeys);
  RwFailureFile f;
  static_cast<FailureHeader&>(f) = read_header(o);
  f.schedule = read_embedded<RwSchedule>(o, [](json const& j) { return rw_from_json(j); });
  validate(f);
  return f;
}

namespace {
FailureFile failure_from_document(std::string_view text, json const& document) {
  try {
    return failure_from_json(document);
  } catch (schedule_error const& e) {
    TextPosition const p = locate(text, e.path());
    throw schedule_error(e.path(), e.reason(), p.line, p.column);
  }
}
}  // namespace

FailureFile parse_failure(std::string_view text) {
  return failure_from_document(text, parse_document(text));
}

FailureFile load_failure(std::filesystem::path const& file) {
  std::string const text = read_text_file(file);
  try {
    return parse_failure(text);
  } catch (schedule_error const& e) {
    throw schedule_error(e.path(), e.reason(), e.line(), e.column(), file.string());
  }
}

std::string dump(FailureFile const& file) { return to_json(file).dump(2) + "\n"; }

namespace {

/// The format of a document ("" when it has none) and, for a failure file, its schedule's.
std::string format_of(json const& document) {
  if (!document.is_object()) return {};
  auto const it = document.find("format");
  return it != document.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool is_rw_failure(json const& document) {
  auto const it = document.find("schedule");
  return it != document.end() && format_of(*it) == kRwFormatName;
}

Replayable replayable_from_document(std::string_view text, json const& document) {
  std::string const format = format_of(document);
  if (format == kFailureFormatName) return failure_from_document(text, document);
  if (format == kFormatName) return from_document(text, document);
  std::string const expected = "a schedule file (\"format\": \"" + std::string(kFormatName) +
                               "\") or a failure file (\"format\": \"" + kFailureFormatName + "\")";
  if (!document.is_object())
    throw schedule_error("", "expected " + expected + ", got " + show(document), 1, 1);
  TextPosition const p = locate(text, "format");
  throw schedule_error("format",
                       (format.empty() ? std::string("missing or not a string")
                                       : "unknown format '" + format + "'") +
                           "; expected " + expected,
                       p.line,
                       p.column);
}

RwFailureFile rw_failure_from_document(std::string_view text, json const& document) {
  try {
    return rw_failure_from_json(document);
  } catch (schedule_error const& e) {
    TextPosition const p = locate(text, e.path());
    throw schedule_error(e.path(), e.reason(), p.line, p.column);
  }
}

}  // namespace

Replayable load_replayable(std::filesystem::path const& file) {
  std::string const text = read_text_file(file);
  try {
    // One parse: the document decides the format and is then read as that format.
    return replayable_from_document(text, parse_document(text));
  } catch (schedule_error const& e) {
    throw schedule_error(e.path(), e.reason(), e.line(), e.column(), file.string());
  }
}

AnyReplayable load_any_replayable(std::filesystem::path const& file) {
  std::string const text = read_text_file(file);
  try {
    json const document      = parse_document(text);
    std::string const format = format_of(document);
    if (format == kRwFormatName) return RwReplayable(rw_from_document(text, document));
    if (format == kFailureFormatName && is_rw_failure(document))
      return RwReplayable(rw_failure_from_document(text, document));
    return replayable_from_document(text, document);
  } catch (schedule_error const& e) {
    throw schedule_error(e.path(), e.reason(), e.line(), e.column(), file.string());
  }
}

Schedule const& schedule_of(Replayable const& r) {
  if (auto const* f = std::get_if<FailureFile>(&r)) return f->schedule;
  return std::get<Schedule>(r);
}

RwSchedule const& schedule_of(RwReplayable const& r) {
  if (auto const* f = std::get_if<RwFailureFile>(&r)) return f->schedule;
  return std::get<RwSchedule>(r);
}

std::string failure_file_name(std::string const& created_iso, std::uint64_t seed) {
  std::string compact;
  for (char c : created_iso)
    if (c != '-' && c != ':') compact += c;
  if (compact.empty()) compact = "unknown-time";
  return compact + "-" + std::to_string(seed) + ".json";
}

void write_failure(FailureFile const& file, std::filesystem::path const& path) {
  validate(file);
  write_text_file(path, dump(file));
}

void write_failure(RwFailureFile const& file, std::filesystem::path const& path) {
  validate(file);
  write_text_file(path, dump(file));
}

std::string dump(RwFailureFile const& file) { return to_json(file).dump(2) + "\n"; }

namespace {

/// save_failure for either kind of file: claims a free name, then writes it (write_failure).
template <class F>
std::filesystem::path save_claimed(F const& file, std::filesystem::path const& directory) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec)
    throw std::runtime_error("cannot create the directory " + directory.string() + ": " +
                             ec.message());
  std::string const name = failure_file_name(file.created, file.seed);
  std::string const stem = name.substr(0, name.size() - 5);  // without ".json"
  // Claim the name exclusively ("x": fail if it exists), so that concurrent writers (stress
  // shards, two processes) never overwrite each other's files; then replace the empty claim.
  for (int i = 1; i < 10000; ++i) {
    std::filesystem::path const path =
        directory / (i == 1 ? name : stem + "-" + std::to_string(i) + ".json");
    if (std::FILE* claim = std::fopen(path.c_str(), "wx")) {
      std::fclose(claim);
      try {
        write_failure(file, path);
      } catch (...) {
        std::error_code ignored;
        std::filesystem::remove(path, ignored);
        throw;
      }
      return path;
    }
    if (errno != EEXIST)
      throw std::runtime_error("cannot create " + path.string() + ": " + std::strerror(errno));
  }
  throw std::runtime_error("cannot find a free file name for " + name + " in " +
                           directory.string());
}

}  // namespace

std::filesystem::path save_failure(FailureFile const& file,
                                   std::filesystem::path const& directory) {
  return save_claimed(file, directory);
}

std::filesystem::path save_failure(RwFailureFile const& file,
                                   std::filesystem::path const& directory) {
  return save_claimed(file, directory);
}

std::string utc_now_iso8601() {
  std::time_t const now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

}  // namespace heaplab::schedule
