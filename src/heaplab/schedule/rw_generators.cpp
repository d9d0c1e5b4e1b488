// RapidCheck generators of random-walk pool schedules (generators.hpp).
#include <algorithm>
#include <utility>

#include "heaplab/schedule/generators.hpp"
#include "heaplab/schedule/rw_json.hpp"

namespace heaplab::schedule::gen {

namespace {

std::uint64_t any_seed() { return *rc::gen::inRange<std::uint64_t>(0, 100000); }

/// Uniform in [0, n), whatever RapidCheck's size (rc::gen::inRange narrows its range at small
/// sizes, which would hide the later kinds of a choice).
int any_below(int n) {
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
  return *rc::gen::elementOf(all);
}

template <class T>
T pick_one(std::vector<T> const& items) {
  return items[static_cast<std::size_t>(any_below(static_cast<int>(items.size())))];
}

void gen_lanes(RwAllocWave& a) {
  a.lanes = static_cast<RwLanes>(any_below(3));
  if (a.lanes == RwLanes::every_kth) {
    a.k      = *rc::gen::inRange<std::uint32_t>(1, 33);
    a.offset = *rc::gen::inRange<std::uint32_t>(0, a.k);
  }
  if (a.lanes == RwLanes::random_subset) a.lane_seed = any_seed();
}

void gen_sizes(RwAllocWave& a, std::uint32_t num_pages) {
  std::uint32_t const max_run = std::min<std::uint32_t>(8, num_pages);
  a.sizes                     = static_cast<RwSizes>(any_below(3));
  if (a.sizes == RwSizes::fixed) a.n = *rc::gen::inRange<std::uint32_t>(1, max_run + 1);
  if (a.sizes == RwSizes::uniform) {
    a.nmax      = *rc::gen::inRange<std::uint32_t>(1, max_run + 1);
    a.size_seed = any_seed();
  }
  if (a.sizes == RwSizes::cycle) {
    std::size_t const k = *rc::gen::inRange<std::size_t>(1, 9);
    for (std::size_t i = 0; i < k; ++i)
      a.size_list.push_back(*rc::gen::inRange<std::uint32_t>(1, max_run + 1));
  }
}

RwAllocWave make_alloc(std::vector<core::RwAlgorithm> const& algorithms,
                       std::uint32_t max_threads,
                       std::uint32_t num_pages) {
  RwAllocWave a;
  a.algorithm     = pick_one(algorithms);
  a.threads       = *rc::gen::inRange<std::uint32_t>(1, max_threads + 1);
  a.block_threads = 32 * *rc::gen::inRange<std::uint32_t>(1, 9);
  a.seed          = any_seed();
  gen_lanes(a);
  if (a.algorithm == core::RwAlgorithm::rw_malloc) gen_sizes(a, num_pages);
  return a;
}

RwFreeWave make_free() {
  RwFreeWave f;
  f.select = static_cast<RwFreeSelect>(any_below(3));
  if (f.select == RwFreeSelect::fraction) {
    f.fraction = *rc::gen::inRange(0, 9) / 8.0;
    f.seed     = any_seed();
  }
  if (f.select == RwFreeSelect::oldest) f.count = *rc::gen::inRange<std::uint32_t>(0, 600);
  return f;
}

/// Waves: 1 + size / 4 of them (at most 24), mostly allocations, a free wave about every third.
std::vector<RwStep> make_waves(std::vector<core::RwAlgorithm> const& algorithms,
                               std::uint32_t max_threads,
                               std::uint32_t num_pages,
                               int size) {
  std::size_t const n = 1 + static_cast<std::size_t>(std::clamp(size, 0, 92)) / 4;
  std::vector<RwStep> out;
  for (std::size_t i = 0; i < n; ++i) {
    if (any_below(3) == 0)
      out.push_back(make_free());
    else
      out.push_back(make_alloc(algorithms, max_threads, num_pages));
  }
  return out;
}

/// Near exhaustion: 0.5 % of the pool left free (at least one page), waves asking for 1-3 times
/// what is left, a high bound on steps (RW's TAS at A/T = 0.5 % is about 200, RW sec. 3.2.1).
RwSchedule near_exhaustion(std::vector<core::RwAlgorithm> const& algorithms) {
  RwSchedule s;
  s.pool.num_pages               = *rc::gen::inRange<std::uint32_t>(512, 4097);
  s.pool.word_bits               = *rc::gen::element<std::uint32_t>(32, 64);
  s.pool.max_steps               = 2000;
  std::uint32_t const free_pages = std::max<std::uint32_t>(1, s.pool.num_pages / 200);
  s.pool.pretaken.count          = s.pool.num_pages - free_pages;
  s.pool.pretaken.seed           = any_seed();
  std::size_t const waves        = *rc::gen::inRange<std::size_t>(1, 5);
  for (std::size_t i = 0; i < waves; ++i) {
    RwAllocWave a = make_alloc(algorithms, 3 * free_pages, s.pool.num_pages);
    a.threads     = free_pages * *rc::gen::inRange<std::uint32_t>(1, 4);
    s.steps.push_back(a);
    if (any_below(2) == 0) s.steps.push_back(make_free());
  }
  s.description = "near exhaustion";
  return s;
}

/// One schedule of a random shape (rw_schedule in generators.hpp).
RwSchedule any_shape(std::vector<core::RwAlgorithm> const& algorithms, int size) {
  int const shape = any_below(10);
  if (shape == 0) return near_exhaustion(algorithms);
  RwSchedule s;
  s.pool                             = *rw_pool();
  std::vector<core::RwAlgorithm> use = algorithms;
  bool const runs = std::find(use.begin(), use.end(), core::RwAlgorithm::rw_malloc) != use.end();
  if (shape == 1 && runs) use = {core::RwAlgorithm::rw_malloc};  // mixed sizes
  s.steps = make_waves(use, shape <= 3 ? 512 : 128, s.pool.num_pages, size);
  return s;
}

}  // namespace

std::vector<core::RwAlgorithm> all_rw_algorithms() {
  return {core::RwAlgorithm::rw,
          core::RwAlgorithm::rw_bm,
          core::RwAlgorithm::corw,
          core::RwAlgorithm::rw_malloc};
}

rc::Gen<RwPool> rw_pool() {
  return rc::gen::exec([] {
    RwPool p;
    p.num_pages =
        *rc::gen::weightedOneOf<std::uint32_t>({{3, rc::gen::inRange<std::uint32_t>(1, 130)},
                                                {1, rc::gen::inRange<std::uint32_t>(1, 4097)}});
    p.word_bits    = *rc::gen::element<std::uint32_t>(32, 64);
    p.page_bytes   = std::uint64_t{1} << *rc::gen::inRange(6, 17);
    p.max_steps    = *rc::gen::element<std::uint32_t>(4, 16, 64, 500, 2000);
    int const kind = any_below(4);
    if (kind == 1) {
      p.pretaken.count = *rc::gen::inRange<std::uint32_t>(0, p.num_pages / 2 + 1);
      p.pretaken.seed  = any_seed();
    } else if (kind == 2) {
      std::vector<std::uint32_t> pages;
      for (std::uint32_t q = 0; q < p.num_pages && pages.size() < 16;
           q += 1 + *rc::gen::inRange(0, 9))
        pages.push_back(q);
      p.pretaken.pages = std::move(pages);
    }
    return p;
  });
}

rc::Gen<RwAllocWave> rw_alloc_wave(std::vector<core::RwAlgorithm> const& algorithms) {
  return rc::gen::exec([algorithms] { return make_alloc(algorithms, 512, 64); });
}

rc::Gen<RwFreeWave> rw_free_wave() {
  return rc::gen::exec([] { return make_free(); });
}

rc::Gen<RwSchedule> rw_schedule(std::vector<core::RwAlgorithm> const& algorithms) {
  return rc::gen::withSize([algorithms](int size) {
    return rc::gen::exec([algorithms, size] { return any_shape(algorithms, size); });
  });
}

rc::Gen<RwSchedule> rw_schedule() { return rw_schedule(all_rw_algorithms()); }

}  // namespace heaplab::schedule::gen

namespace heaplab::schedule {
void showValue(RwSchedule const& schedule, std::ostream& os) {
  os << "(save as a file and run `heaplab replay FILE`)\n" << dump(schedule);
}
}  // namespace heaplab::schedule
