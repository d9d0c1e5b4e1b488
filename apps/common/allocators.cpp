#include "common/allocators.hpp"

#include <algorithm>
#include <stdexcept>

namespace heaplab::apps {

std::vector<std::string> const& allocator_names() {
  // cuda-malloc: CUDA's device malloc; rw-malloc: heaplab's RW_malloc (RW Alg. 3, docs/rw.md);
  // scatteralloc: mallocMC's ScatterAlloc, only in a build with mallocMC (HEAPLAB_MALLOCMC_DIR,
  // apps/CMakeLists.txt; allocators.cuh maps the same names).
  static std::vector<std::string> const names {
    "cuda-malloc", "rw-malloc",
#if defined(HEAPLAB_APPS_HAVE_SCATTERALLOC)
        "scatteralloc",
#endif
  };
  return names;
}

void validate_allocators(std::vector<std::string> const& names) {
  auto const& known = allocator_names();
  std::string list;
  for (auto const& k : known) list += (list.empty() ? "" : ", ") + k;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (std::find(known.begin(), known.end(), names[i]) == known.end())
      throw std::invalid_argument("--allocators: unknown allocator '" + names[i] + "' (" + list +
                                  ")");
    if (std::find(names.begin(), names.begin() + static_cast<long>(i), names[i]) !=
        names.begin() + static_cast<long>(i))
      throw std::invalid_argument("--allocators: '" + names[i] + "' given twice");
  }
}

}  // namespace heaplab::apps
