// outcome.hpp.
#include "heaplab/runner/outcome.hpp"

#include <sstream>

#include "heaplab/core/enum_names.hpp"

namespace heaplab::runner {

namespace {

constexpr core::EnumName<FailureKind> kKindNames[] = {
    {FailureKind::invariant_violation, "invariant_violation"},
    {FailureKind::divergence, "divergence"},
    {FailureKind::digest_mismatch, "digest_mismatch"},
    {FailureKind::hang, "hang"},
    {FailureKind::crash, "crash"},
};

}  // namespace

char const* to_string(FailureKind kind) { return core::name_of(kKindNames, kind); }

std::optional<FailureKind> failure_kind_from_string(std::string const& s) {
  return core::value_of(kKindNames, s);
}

std::vector<std::string> failure_kind_names() {
  std::vector<std::string> names;
  for (auto const& row : kKindNames) names.push_back(row.name);
  return names;
}

std::uint64_t StepReport::count(std::string_view key) const {
  for (auto const& [k, n] : counts)
    if (k == key) return n;
  return 0;
}

void StepReport::add_count(std::string const& key, std::uint64_t n) {
  for (auto& [k, v] : counts)
    if (k == key) {
      v += n;
      return;
    }
  counts.emplace_back(key, n);
}

Failure failure_from_violations(std::size_t step,
                                std::string description,
                                std::vector<check::Violation> violations,
                                FailureKind (*kind_of)(check::Violation const&)) {
  Failure f;
  f.step             = step;
  f.step_description = std::move(description);
  f.kind             = kind_of ? kind_of(violations.front()) : FailureKind::invariant_violation;
  f.check            = violations.front().invariant;
  f.message          = violations.front().to_string();
  if (violations.size() > 1)
    f.message += " (and " + std::to_string(violations.size() - 1) + " more)";
  f.violations = std::move(violations);
  return f;
}

std::string format_failure(Failure const& f, ReportOptions const& o) {
  std::ostringstream out;
  out << "FIRST FAILURE at step " << f.step << ": " << f.step_description << "\n";
  out << "  kind " << to_string(f.kind) << ", check " << f.check << "\n";
  out << "  message: " << f.message << "\n";
  if (!f.violations.empty()) {
    out << "  violations (" << f.violations.size() << "):\n";
    std::size_t shown = 0;
    for (auto const& v : f.violations) {
      if (shown++ == o.max_violations) {
        out << "    ... and " << f.violations.size() - o.max_violations << " more\n";
        break;
      }
      out << "    " << v.to_string() << "\n";
    }
  }
  if (f.detail) out << f.detail->report(f, o);
  return out.str();
}

}  // namespace heaplab::runner
