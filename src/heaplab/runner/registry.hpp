// Families and runners by name (docs/families.md "Registering"). A family and each of its
// runners register themselves from their own folder, with a static registration object:
//
//   namespace { runner::FamilyRegistration const family{the_family()}; }
//   namespace { runner::RunnerRegistration const gpu{{"gpu", "heap", "...", make_gpu, ...}}; }
//
// and the library that holds them is linked whole into the tools and tests that should have
// them (CMake: heaplab_link_families). The command line looks a runner or a file's family up
// here once and never branches on a family; this registry names no family and no runner.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "heaplab/runner/family.hpp"

namespace heaplab::runner {

/// A runner as the command line knows it before making one.
struct RunnerInfo {
  using Make = std::function<std::unique_ptr<Runner>(RunnerOptions const&)>;

  RunnerInfo() = default;
  RunnerInfo(std::string name_, std::string family_, std::string help_, Make make_)
      : name(std::move(name_)),
        family(std::move(family_)),
        help(std::move(help_)),
        make(std::move(make_)) {}

  std::string name;    // "gpu": unique over every family (`--runner NAME`)
  std::string family;  // its family's name
  std::string help;    // one line for --help and docs
  /// Makes one (every call a fresh runner). Throws runner_unavailable when it cannot run here.
  Make make;
  /// "" when make() would succeed, else why not (without making one). Null: always available.
  std::function<std::string()> unavailable;
  /// It uses a GPU: stress defaults to one worker per hardware thread per visible GPU (1 to 16).
  bool uses_gpu = false;
  /// Its implementation's state belongs to the whole process (CUDA's device malloc heap, a peer
  /// allocator's global state), so two runners in one process would share it: stress runs one
  /// worker (several processes with --shard run in parallel) and refuses --jobs above 1.
  bool one_per_process = false;
  /// Stress defaults for this runner ("" / 0: the family's).
  std::string default_profile;
  std::uint32_t default_max_size = 0;
  /// The smallest heap (stress `--heap-mib`) its runs accept; 0: any. Its runner's supports()
  /// refuses smaller schedules with the reason; the conformance suite generates its cases at
  /// least this large (a peer whose set-up needs a large pool: malloc-gallatin, 1024).
  std::uint32_t min_heap_mib = 0;
};

class Registry {
 public:
  /// The process's registry (filled before main by the registration objects).
  static Registry& instance();

  /// Throws core::precondition_error for a family or schedule format that is already taken.
  void add(Family const& family);
  /// Throws core::precondition_error for a name that is taken or a family that is unknown at
  /// lookup time (runners may register before their family: the check is in runner()).
  void add(RunnerInfo info);

  /// In registration order of names (sorted), for listings.
  [[nodiscard]] std::vector<Family const*> families() const;
  [[nodiscard]] Family const* family(std::string_view name) const;
  /// The family whose schedule files have this "format", or null.
  [[nodiscard]] Family const* family_of_format(std::string_view schedule_format) const;

  /// Every runner, sorted by family, then in registration order.
  [[nodiscard]] std::vector<RunnerInfo const*> runners() const;
  [[nodiscard]] std::vector<RunnerInfo const*> runners_of(std::string_view family) const;
  /// Null for an unknown name.
  [[nodiscard]] RunnerInfo const* runner(std::string_view name) const;
  /// Every runner's name (for --runner's check and "did you mean").
  [[nodiscard]] std::vector<std::string> runner_names() const;

 private:
  std::vector<Family const*> families_;
  std::vector<RunnerInfo> runners_;
};

/// The runner `name`, or throws core::precondition_error (an unknown name, with the known ones
/// and the closest) or runner_unavailable (it cannot run here).
std::unique_ptr<Runner> make_runner(std::string const& name, RunnerOptions const& options = {});

/// "" when make_runner(name) would succeed, else why not; an unknown name says so.
std::string unavailable_reason(std::string const& name);

/// The family of runner `name`; throws core::precondition_error for an unknown name.
Family const& family_of_runner(std::string const& name);

/// Registers a family for the lifetime of the process (a static object in the family's folder).
struct FamilyRegistration {
  explicit FamilyRegistration(Family const& family) { Registry::instance().add(family); }
};

/// Registers a runner (a static object next to the runner).
struct RunnerRegistration {
  explicit RunnerRegistration(RunnerInfo info) { Registry::instance().add(std::move(info)); }
};

}  // namespace heaplab::runner
