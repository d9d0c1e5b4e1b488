// Random-walk schedules: names, descriptions, validation and the deterministic choices
// (rw_schedule.hpp).
#include "heaplab/schedule/rw_schedule.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "heaplab/core/enum_names.hpp"
#include "heaplab/schedule/choice.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace heaplab::schedule {

namespace {

template <class E>
using Named = core::EnumName<E>;

constexpr Named<RwLanes> kLanes[] = {{RwLanes::all, "all"},
                                     {RwLanes::every_kth, "every_kth"},
                                     {RwLanes::random_subset, "random_subset"}};
constexpr Named<RwSizes> kSizes[] = {
    {RwSizes::fixed, "fixed"}, {RwSizes::cycle, "cycle"}, {RwSizes::uniform, "uniform"}};
constexpr Named<RwFreeSelect> kSelects[] = {{RwFreeSelect::all, "all"},
                                            {RwFreeSelect::fraction, "fraction"},
                                            {RwFreeSelect::oldest, "oldest"}};

[[noreturn]] void bad(std::string const& path, std::string const& reason) {
  throw schedule_error(path, reason);
}

void expect_range(std::string const& path, std::uint64_t v, std::uint64_t lo, std::uint64_t hi) {
  if (v < lo || v > hi)
    bad(path,
        "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
            std::to_string(v));
}

void validate_pool(RwPool const& p) {
  expect_range("pool.pages", p.num_pages, 1, kRwMaxPages);
  if (p.page_bytes == 0 || (p.page_bytes & (p.page_bytes - 1)) != 0)
    bad("pool.page_bytes", "must be a power of two, got " + std::to_string(p.page_bytes));
  if (p.word_bits != 32 && p.word_bits != 64)
    bad("pool.word_bits", "must be 32 or 64 (RW sec. 4.1), got " + std::to_string(p.word_bits));
  expect_range("pool.max_steps", p.max_steps, 1, kRwMaxWalkSteps);
  if (!p.pretaken.pages) {
    expect_range("pool.pretaken.count", p.pretaken.count, 0, p.num_pages);
    return;
  }
  std::vector<std::uint32_t> sorted = *p.pretaken.pages;
  for (std::size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] >= p.num_pages)
      bad("pool.pretaken.pages[" + std::to_string(i) + "]",
          "page " + std::to_string(sorted[i]) +
              " is beyond the pool (T = " + std::to_string(p.num_pages) + ")");
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    bad("pool.pretaken.pages", "a page is listed twice");
}

void validate_sizes(std::string const& at, RwAllocWave const& a, std::uint32_t max_run) {
  switch (a.sizes) {
    case RwSizes::fixed:
      expect_range(at + ".n", a.n, 1, max_run);
      break;
    case RwSizes::cycle:
      if (a.size_list.empty() || a.size_list.size() > 32)
        bad(at + ".size_list", "needs 1 to 32 entries");
      for (std::size_t i = 0; i < a.size_list.size(); ++i)
        expect_range(at + ".size_list[" + std::to_string(i) + "]", a.size_list[i], 1, max_run);
      break;
    case RwSizes::uniform:
      expect_range(at + ".nmax", a.nmax, 1, max_run);
      break;
  }
}

void validate_alloc(std::string const& at, RwAllocWave const& a, RwPool const& pool) {
  expect_range(at + ".threads", a.threads, 1, kRwMaxThreads);
  expect_range(at + ".block_threads", a.block_threads, 32, 1024);
  if (a.block_threads % 32 != 0) bad(at + ".block_threads", "must be a multiple of 32");
  if (a.lanes == RwLanes::every_kth) {
    expect_range(at + ".k", a.k, 1, 32);
    expect_range(at + ".offset", a.offset, 0, a.k - 1);
  }
  bool const runs = a.algorithm == core::RwAlgorithm::rw_malloc;
  if (!runs && (a.sizes != RwSizes::fixed || a.n != 1))
    bad(at + ".sizes",
        std::string(to_string(a.algorithm)) +
            " hands out one page per request: sizes must be fixed with n = 1");
  validate_sizes(at, a, std::min(kRwMaxRunPages, pool.num_pages));
}

void validate_free(std::string const& at, RwFreeWave const& f) {
  if (f.select == RwFreeSelect::fraction && !(f.fraction >= 0 && f.fraction <= 1))
    bad(at + ".fraction", "must be in [0, 1]");
}

}  // namespace

char const* to_string(core::RwAlgorithm a) { return core::name_of(core::kRwAlgorithmNames, a); }
char const* to_string(RwLanes l) { return core::name_of(kLanes, l); }
char const* to_string(RwSizes s) { return core::name_of(kSizes, s); }
char const* to_string(RwFreeSelect s) { return core::name_of(kSelects, s); }
std::optional<core::RwAlgorithm> rw_algorithm_from_string(std::string const& s) {
  return core::value_of(core::kRwAlgorithmNames, s);
}
std::optional<RwLanes> rw_lanes_from_string(std::string const& s) {
  return core::value_of(kLanes, s);
}
std::optional<RwSizes> rw_sizes_from_string(std::string const& s) {
  return core::value_of(kSizes, s);
}
std::optional<RwFreeSelect> rw_free_select_from_string(std::string const& s) {
  return core::value_of(kSelects, s);
}

char const* step_name(RwStep const& step) {
  return std::holds_alternative<RwAllocWave>(step) ? "alloc" : "free";
}

std::string describe(RwStep const& step) {
  if (auto const* f = std::get_if<RwFreeWave>(&step)) {
    std::string s = std::string("free ") + to_string(f->select);
    if (f->select == RwFreeSelect::fraction)
      s += "(" + std::to_string(f->fraction) + ", seed=" + std::to_string(f->seed) + ")";
    if (f->select == RwFreeSelect::oldest) s += "(" + std::to_string(f->count) + ")";
    return s;
  }
  auto const& a = std::get<RwAllocWave>(step);
  std::string s = std::string("alloc ") + to_string(a.algorithm) +
                  " threads=" + std::to_string(a.threads) + " lanes=" + to_string(a.lanes);
  if (a.lanes == RwLanes::every_kth)
    s += "(k=" + std::to_string(a.k) + ",offset=" + std::to_string(a.offset) + ")";
  if (a.lanes == RwLanes::random_subset) s += "(seed=" + std::to_string(a.lane_seed) + ")";
  if (a.algorithm == core::RwAlgorithm::rw_malloc) {
    s += std::string(" sizes=") + to_string(a.sizes);
    if (a.sizes == RwSizes::fixed) s += "(" + std::to_string(a.n) + ")";
    if (a.sizes == RwSizes::uniform) s += "(1.." + std::to_string(a.nmax) + ")";
    if (a.sizes == RwSizes::cycle) s += "(" + std::to_string(a.size_list.size()) + " sizes)";
  }
  return s + " seed=" + std::to_string(a.seed);
}

void validate(RwSchedule const& s) {
  validate_pool(s.pool);
  if (s.steps.size() > kRwMaxWaves)
    bad("steps", "at most " + std::to_string(kRwMaxWaves) + " steps");
  std::uint64_t total_threads = 0;
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    std::string const at = "steps[" + std::to_string(i) + "]";
    if (auto const* a = std::get_if<RwAllocWave>(&s.steps[i])) {
      validate_alloc(at, *a, s.pool);
      total_threads += a->threads;
      if (total_threads > kRwMaxTotalThreads)
        bad(at + ".threads",
            "the alloc waves ask for more than " + std::to_string(kRwMaxTotalThreads) +
                " threads in all");
    } else {
      validate_free(at, std::get<RwFreeWave>(s.steps[i]));
    }
  }
}

std::vector<std::uint32_t> rw_requests(RwAllocWave const& a) {
  std::vector<std::uint32_t> out(a.threads, 0);
  for (std::uint32_t i = 0; i < a.threads; ++i) {
    std::uint32_t const lane = i % kWarpSize, warp = i / kWarpSize;
    bool active = true;
    if (a.lanes == RwLanes::every_kth) active = lane % a.k == a.offset;
    if (a.lanes == RwLanes::random_subset) active = ((mix(a.lane_seed, warp, 0) >> lane) & 1) != 0;
    if (!active) continue;
    switch (a.sizes) {
      case RwSizes::fixed:
        out[i] = a.n;
        break;
      case RwSizes::cycle:
        out[i] = a.size_list[i % a.size_list.size()];
        break;
      case RwSizes::uniform:
        out[i] = 1 + static_cast<std::uint32_t>(pick(a.nmax, a.size_seed, i, 0));
        break;
    }
  }
  return out;
}

std::vector<std::uint32_t> rw_pretaken_pages(RwPool const& pool) {
  if (pool.pretaken.pages) {
    std::vector<std::uint32_t> out = *pool.pretaken.pages;
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<std::uint32_t> all(pool.num_pages);
  std::iota(all.begin(), all.end(), 0u);
  std::uint32_t const count = std::min(pool.pretaken.count, pool.num_pages);
  for (std::uint32_t i = 0; i < count; ++i) {
    std::size_t const j = i + pick(pool.num_pages - i, pool.pretaken.seed, i, 0);
    std::swap(all[i], all[j]);
  }
  all.resize(count);
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<std::size_t> rw_free_selection(RwFreeWave const& f,
                                           std::vector<std::uint64_t> const& held_ids) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < held_ids.size(); ++i) {
    bool take = true;
    if (f.select == RwFreeSelect::fraction)
      take = selected(f.fraction, f.seed, held_ids[i], kSaltSelect);
    if (f.select == RwFreeSelect::oldest) take = i < f.count;
    if (take) out.push_back(i);
  }
  return out;
}

}  // namespace heaplab::schedule
