// The allocators an app can run on besides heaplab's heap (`--allocators`, docs/apps.md "Other
// allocators"; DynaSOAr Fig. 10): their names and the check of a list. Plain C++17 (CPU-tested in
// common_test.cpp); allocators.cuh maps a name to its adapter for the GPU code.
#pragma once

#include <string>
#include <vector>

namespace heaplab::apps {

/// Every name --allocators accepts, in the order a run uses them.
std::vector<std::string> const& allocator_names();

/// names without repeats, each one of allocator_names(); throws std::invalid_argument naming
/// the bad one and the accepted ones.
void validate_allocators(std::vector<std::string> const& names);

}  // namespace heaplab::apps
