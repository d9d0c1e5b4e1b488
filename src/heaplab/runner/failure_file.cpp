// Strict reading and canonical writing of failure files (failure_file.hpp, docs/replay.md).
#include "heaplab/runner/failure_file.hpp"

#include <ctime>
#include <limits>
#include <stdexcept>
#include <vector>

#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/schedule/json.hpp"
#include "heaplab/schedule/strict_json.hpp"

namespace heaplab::runner {

using nlohmann::json;
using ordered = nlohmann::ordered_json;
using schedule::schedule_error;
using namespace schedule::strict;  // the strict JSON readers (strict_json.hpp)
using Obj = StrictObject;

namespace {

std::vector<std::string> const kTopKeys = {"format",
                                           "version",
                                           "family",
                                           "created",
                                           "git_commit",
                                           "gpu",
                                           "runner",
                                           "seed",
                                           "rapidcheck",
                                           "origin",
                                           "failure",
                                           "schedule"};

/// The checks of validate() that do not look at the schedule; `steps`: its number of steps.
void validate_header(FailureFile const& f, std::size_t steps) {
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

ordered origin_to_json(FailureOrigin const& origin) {
  ordered o = {{"command", origin.command}};
  if (origin.run_seed) o["run_seed"] = *origin.run_seed;
  if (origin.case_index) o["case"] = *origin.case_index;
  if (!origin.profile.empty()) o["profile"] = origin.profile;
  if (origin.heap_mib) o["heap_mib"] = *origin.heap_mib;
  if (!origin.minimized_from.empty()) o["minimized_from"] = origin.minimized_from;
  if (origin.original_steps) o["original_steps"] = *origin.original_steps;
  return o;
}

/// "format" and "version": returns the version (1 or 2).
std::uint64_t check_format_and_version(json const& document) {
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
         "missing (this heaplab reads versions 1 and " + std::to_string(kFailureFormatVersion) +
             ")");
  std::uint64_t const v = as_u64(*version, "version");
  if (v != 1 && v != kFailureFormatVersion)
    fail("version",
         "unsupported version " + std::to_string(v) + "; this heaplab reads versions 1 and " +
             std::to_string(kFailureFormatVersion));
  return v;
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
  if (!parsed_kind)
    fail(fo.path("kind"),
         "unknown failure kind '" + kind +
             "'; expected one of: " + comma_list(failure_kind_names()));
  r.kind    = *parsed_kind;
  r.check   = as_nonempty(fo.at("check"), fo.path("check"));
  r.message = as_string(fo.at("message"), fo.path("message"));
  return r;
}

/// Every registered family's name, for error messages.
std::string family_names() {
  std::vector<std::string> names;
  for (Family const* f : Registry::instance().families()) names.push_back(f->name());
  return names.empty() ? std::string("none") : comma_list(names);
}

/// The "format" of a JSON object ("" when it has none or it is not a string).
std::string format_of(json const& document) {
  if (!document.is_object()) return {};
  auto const it = document.find("format");
  return it != document.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// The family of a failure document: its "family" (version 2) or its schedule's format
/// (version 1); the embedded schedule's format must be that family's.
Family const& family_of_failure(Obj const& o, std::uint64_t version) {
  Registry const& registry   = Registry::instance();
  std::string const embedded = format_of(o.at("schedule"));
  if (version == 1) {
    Family const* f = registry.family_of_format(embedded.empty() ? "heaplab-schedule" : embedded);
    if (!f)
      fail("schedule.format",
           "a version 1 failure file of an unknown schedule format '" + embedded +
               "'; this heaplab has the families " + family_names());
    return *f;
  }
  std::string const name = as_nonempty(o.at("family"), "family");
  Family const* f        = registry.family(name);
  if (!f)
    fail(
        "family",
        "unknown allocator family '" + name + "'; this heaplab has the families " + family_names());
  if (!embedded.empty() && embedded != f->schedule_format())
    fail("schedule.format",
         "the family '" + name + "' has schedules of format '" + f->schedule_format() + "', not '" +
             embedded + "'");
  return *f;
}

/// family.from_json with errors under "schedule.".
AnySchedule read_embedded(Family const& family, json const& j) {
  try {
    return family.from_json(j);
  } catch (schedule_error const& e) {
    throw schedule_error(child_path("schedule", e.path()), e.reason());
  }
}

/// Re-throws a schedule_error located in `text` (line and column of its path).
template <class Read>
auto located(std::string_view text, Read const& read) {
  try {
    return read();
  } catch (schedule_error const& e) {
    if (e.line() != 0) throw;
    schedule::TextPosition const p = schedule::locate(text, e.path());
    throw schedule_error(e.path(), e.reason(), p.line, p.column);
  }
}

/// Every registered family's schedule format, for "expected ..." messages.
std::string expected_formats() {
  std::string out = "a failure file (\"format\": \"" + std::string(kFailureFormatName) + "\")";
  for (Family const* f : Registry::instance().families()) {
    bool const vowel = f->name().find_first_of("aeiou") == 0;  // "an interleaving schedule file"
    out += (vowel ? " or an " : " or a ") + f->name() + " schedule file (\"format\": \"" +
           f->schedule_format() + "\")";
  }
  return out;
}

}  // namespace

std::string FailureFile::recorded() const {
  return runner + ": " + to_string(failure.kind) + ", check " + failure.check;
}

bool operator==(FailureFile const& a, FailureFile const& b) {
  if (a.schedule.empty() || b.schedule.empty()) return false;
  return a.created == b.created && a.git_commit == b.git_commit && a.gpu == b.gpu &&
         a.runner == b.runner && a.seed == b.seed && a.rapidcheck == b.rapidcheck &&
         a.origin == b.origin && a.failure == b.failure && &a.family() == &b.family() &&
         a.family().to_json(a.schedule) == b.family().to_json(b.schedule);
}

FailureFile stress_failure_file(std::string const& device,
                                std::string const& runner,
                                std::uint64_t case_seed,
                                RapidCheckParams const& rapidcheck,
                                std::uint64_t run_seed,
                                std::uint64_t case_index) {
  FailureFile f;
  f.created           = utc_now_iso8601();
  f.git_commit        = git_commit();
  f.gpu               = device;
  f.runner            = runner;
  f.seed              = case_seed;
  f.rapidcheck        = rapidcheck;
  f.origin.command    = "stress";
  f.origin.run_seed   = run_seed;
  f.origin.case_index = case_index;
  return f;
}

void validate(FailureFile const& f) {
  if (f.schedule.empty()) fail("schedule", "missing");
  validate_header(f, f.family().steps(f.schedule));
}

ordered to_json(FailureFile const& f) {
  ordered j = {{"format", kFailureFormatName},
               {"version", kFailureFormatVersion},
               {"family", f.family().name()},
               {"created", f.created},
               {"git_commit", f.git_commit},
               {"gpu", f.gpu},
               {"runner", f.runner},
               {"seed", f.seed}};
  if (f.rapidcheck) j["rapidcheck"] = {{"seed", f.rapidcheck->seed}, {"size", f.rapidcheck->size}};
  j["origin"]   = origin_to_json(f.origin);
  j["failure"]  = {{"step", f.failure.step},
                   {"kind", to_string(f.failure.kind)},
                   {"check", f.failure.check},
                   {"message", f.failure.message}};
  j["schedule"] = f.family().to_json(f.schedule);
  return j;
}

std::string dump(FailureFile const& file) { return to_json(file).dump(2) + "\n"; }

FailureFile failure_from_json(json const& document) {
  std::uint64_t const version = check_format_and_version(document);
  Obj const o(document, "", kTopKeys);
  if (version == 1 && o.find("family")) fail("family", "version 1 files have no family");
  Family const& family = family_of_failure(o, version);
  FailureFile f;
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
  f.origin   = read_origin(o.at("origin"));
  f.failure  = read_record(o.at("failure"));
  f.schedule = read_embedded(family, o.at("schedule"));
  validate(f);
  return f;
}

Replayable parse_replayable(std::string_view text) {
  json const document      = schedule::parse_document(text);
  std::string const format = format_of(document);
  if (format == kFailureFormatName) {
    Replayable r;
    r.failure_file = located(text, [&] { return failure_from_json(document); });
    r.schedule     = r.failure_file->schedule;
    return r;
  }
  if (Family const* family = Registry::instance().family_of_format(format))
    return {located(text, [&] { return family->from_json(document); }), std::nullopt};
  if (!document.is_object())
    throw schedule_error("", "expected " + expected_formats() + ", got " + show(document), 1, 1);
  schedule::TextPosition const p = schedule::locate(text, "format");
  throw schedule_error("format",
                       (format.empty() ? std::string("missing or not a string")
                                       : "unknown format '" + format + "'") +
                           "; expected " + expected_formats(),
                       p.line,
                       p.column);
}

Replayable load_replayable(std::filesystem::path const& file) {
  std::string const text = schedule::read_text_file(file);
  try {
    return parse_replayable(text);
  } catch (schedule_error const& e) {
    throw schedule_error(e.path(), e.reason(), e.line(), e.column(), file.string());
  }
}

FailureFile parse_failure(std::string_view text) {
  json const document = schedule::parse_document(text);
  return located(text, [&] { return failure_from_json(document); });
}

FailureFile load_failure(std::filesystem::path const& file) {
  std::string const text = schedule::read_text_file(file);
  try {
    return parse_failure(text);
  } catch (schedule_error const& e) {
    throw schedule_error(e.path(), e.reason(), e.line(), e.column(), file.string());
  }
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
  schedule::write_text_file(path, dump(file));
}

std::filesystem::path save_failure(FailureFile const& file,
                                   std::filesystem::path const& directory) {
  validate(file);
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec)
    throw std::runtime_error("cannot create the directory " + directory.string() + ": " +
                             ec.message());
  std::string const name = failure_file_name(file.created, file.seed);
  std::string const stem = name.substr(0, name.size() - 5);  // without ".json"
  std::vector<std::filesystem::path> candidates;
  for (int i = 1; i < 10000; ++i)
    candidates.push_back(directory / (i == 1 ? name : stem + "-" + std::to_string(i) + ".json"));
  return schedule::write_new_text_file(candidates, dump(file));
}

std::string utc_now_iso8601() {
  std::time_t const now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

}  // namespace heaplab::runner
