// Linked into every test binary (heaplab_add_test). Before the first test: in a planting build
// (-DHEAPLAB_MUTANT=runtime; docs/mutants.md "One build for every planted bug") plants the bug
// that HEAPLAB_PLANT names, on the host and in every CUDA translation unit of the binary, and says
// so on stderr (tools/mutant-sweep --planting counts a check as run with the bug only after that
// line); in any other build refuses HEAPLAB_PLANT, so that a pass of the real code is never taken
// for a pass with the bug. Either way a refusal ends the binary with status 2 before any test ran.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "heaplab/core/mutants.hpp"

namespace {

class PlantFromEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    std::string const failed = heaplab::core::mutant::plant_from_environment();
    if (failed.empty()) return;
    std::fprintf(stderr, "error: %s\n", failed.c_str());
    std::exit(2);
  }
};

[[maybe_unused]] ::testing::Environment* const kPlantFromEnvironment =
    ::testing::AddGlobalTestEnvironment(new PlantFromEnvironment);

}  // namespace
