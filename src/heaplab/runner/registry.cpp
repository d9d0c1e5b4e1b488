// registry.hpp.
#include "heaplab/runner/registry.hpp"

#include <algorithm>

#include "heaplab/core/expects.hpp"
#include "heaplab/schedule/text.hpp"

namespace heaplab::runner {

namespace {

std::string comma_joined(std::vector<std::string> const& names) {
  std::string out;
  for (auto const& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

Registry& Registry::instance() {
  static Registry registry;  // constructed on first use: registrations run before main
  return registry;
}

void Registry::add(Family const& family) {
  for (Family const* f : families_) {
    HEAPLAB_EXPECTS(f->name() != family.name(),
                    "two allocator families are named '" + family.name() + "'");
    HEAPLAB_EXPECTS(f->schedule_format() != family.schedule_format(),
                    "the families '" + f->name() + "' and '" + family.name() +
                        "' both read schedule files of format '" + family.schedule_format() + "'");
  }
  families_.push_back(&family);
  std::sort(families_.begin(), families_.end(), [](Family const* a, Family const* b) {
    return a->name() < b->name();
  });
}

void Registry::add(RunnerInfo info) {
  HEAPLAB_EXPECTS(!info.name.empty() && !info.family.empty() && info.make,
                  "a runner needs a name, a family and a way to make it");
  HEAPLAB_EXPECTS(runner(info.name) == nullptr, "two runners are named '" + info.name + "'");
  runners_.push_back(std::move(info));
}

std::vector<Family const*> Registry::families() const { return families_; }

Family const* Registry::family(std::string_view name) const {
  for (Family const* f : families_)
    if (f->name() == name) return f;
  return nullptr;
}

Family const* Registry::family_of_format(std::string_view schedule_format) const {
  for (Family const* f : families_)
    if (f->schedule_format() == schedule_format) return f;
  return nullptr;
}

std::vector<RunnerInfo const*> Registry::runners() const {
  std::vector<RunnerInfo const*> out;
  for (Family const* f : families_)
    for (auto const& r : runners_)
      if (r.family == f->name()) out.push_back(&r);
  for (auto const& r : runners_)  // runners of a family that never registered: listed last
    if (!family(r.family)) out.push_back(&r);
  return out;
}

std::vector<RunnerInfo const*> Registry::runners_of(std::string_view family) const {
  std::vector<RunnerInfo const*> out;
  for (auto const& r : runners_)
    if (r.family == family) out.push_back(&r);
  return out;
}

RunnerInfo const* Registry::runner(std::string_view name) const {
  for (auto const& r : runners_)
    if (r.name == name) return &r;
  return nullptr;
}

std::vector<std::string> Registry::runner_names() const {
  std::vector<std::string> names;
  for (RunnerInfo const* r : runners()) names.push_back(r->name);
  return names;
}

namespace {

/// The runner's entry, or a precondition_error naming the known runners and the closest one.
RunnerInfo const& known_runner(std::string const& name) {
  Registry const& registry = Registry::instance();
  if (RunnerInfo const* r = registry.runner(name)) {
    HEAPLAB_EXPECTS(registry.family(r->family) != nullptr,
                    "runner '" + name + "' belongs to the family '" + r->family +
                        "', which this heaplab does not have");
    return *r;
  }
  auto const names       = registry.runner_names();
  std::string const best = schedule::closest(name, names, 3);
  throw core::precondition_error("unknown runner '" + name + "'" +
                                 (best.empty() ? "" : " (did you mean '" + best + "'?)") +
                                 "; runners: " + comma_joined(names));
}

}  // namespace

std::unique_ptr<Runner> make_runner(std::string const& name, RunnerOptions const& options) {
  RunnerInfo const& info = known_runner(name);
  if (info.unavailable)
    if (std::string const why = info.unavailable(); !why.empty()) throw runner_unavailable(why);
  return info.make(options);
}

std::string unavailable_reason(std::string const& name) {
  try {
    RunnerInfo const& info = known_runner(name);
    return info.unavailable ? info.unavailable() : std::string();
  } catch (core::precondition_error const& e) {
    return e.what();
  }
}

Family const& family_of_runner(std::string const& name) {
  return *Registry::instance().family(known_runner(name).family);
}

}  // namespace heaplab::runner
