// universe_gen.hpp.
#include "heaplab/families/heap/gpu/universe_gen.hpp"

#include <algorithm>

#include "heaplab/core/expects.hpp"
#include "heaplab/families/heap/gpu/gpu_runner.hpp"

namespace heaplab::heap_family::gpu {

rc::Gen<core::HeapConfig> universe_config_gen(std::size_t universe, std::uint32_t max_blocks) {
  HEAPLAB_EXPECTS(universe < universes().size(), "universe_config_gen: no such universe");
  HEAPLAB_EXPECTS(max_blocks >= 2, "universe_config_gen: max_blocks must be at least 2");
  return rc::gen::exec([universe, max_blocks] {
    Universe const& u      = universes()[universe];
    std::uint32_t const hi = max_blocks;
    std::uint32_t const M  = *rc::gen::weightedOneOf<std::uint32_t>(
        {{1, rc::gen::inRange<std::uint32_t>(2, std::min<std::uint32_t>(hi, 8) + 1)},
          {1, rc::gen::inRange<std::uint32_t>(2, hi + 1)}});
    std::uint32_t const max_n = std::min<std::uint32_t>(u.config.min_defrag_capacity() - 1, 6);
    std::uint32_t const n     = *rc::gen::weightedOneOf<std::uint32_t>(
        {{4, rc::gen::just<std::uint32_t>(1)},
             {2, rc::gen::just(std::min<std::uint32_t>(2, max_n))},
             {1, rc::gen::inRange<std::uint32_t>(1, max_n + 1)}});
    std::uint32_t const k1 =
        *rc::gen::weightedOneOf<std::uint32_t>({{3, rc::gen::just<std::uint32_t>(0)},
                                                {2, rc::gen::just<std::uint32_t>(1)},
                                                {1, rc::gen::inRange<std::uint32_t>(2, 5)}});
    return universe_config(u.name, M, n, k1);
  });
}

rc::Gen<core::HeapConfig> any_universe_config_gen(std::uint32_t max_blocks) {
  // Half of the draws go to the hand-written universes (each 1/12: the mutants they were written
  // for keep their detection rate), half to the random layouts (each 1/64; issue 34, class 2).
  // rc::gen::inRange scales with the generation size (small sizes give values near the lower
  // end), and stress runs small sizes first: pick at the nominal size so that every universe is
  // equally likely at every size.
  std::vector<std::size_t> written, random;
  for (std::size_t u = 0; u < universes().size(); ++u)
    (is_random_layout(universes()[u]) ? random : written).push_back(u);
  auto const pick = [](std::vector<std::size_t> const& from) {
    return rc::gen::resize(rc::kNominalSize, rc::gen::elementOf(from));
  };
  auto const universe =
      random.empty() ? pick(written)
                     : rc::gen::weightedOneOf<std::size_t>({{1, pick(written)}, {1, pick(random)}});
  return rc::gen::mapcat(
      universe, [max_blocks](std::size_t u) { return universe_config_gen(u, max_blocks); });
}

}  // namespace heaplab::heap_family::gpu
