// The random-walk family: its model interpreter, its runner, the CPU threads executor, and the
// generic stress loop and minimize on it (models/heaplab/model/rw_interpreter.hpp,
// src/heaplab/families/rw/). Every check of the runner is fed a executor broken in exactly its way
// and must name it.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <filesystem>
#include <set>

#include "heaplab/families/rw/cpu_pool.hpp"
#include "heaplab/families/rw/family.hpp"
#include "heaplab/families/rw/model_pool.hpp"
#include "heaplab/families/rw/rw_runner.hpp"
#include "heaplab/model/rw_interpreter.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/runner/minimize.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/runner/stress.hpp"
#include "heaplab/schedule/generators.hpp"
#include "heaplab/schedule/rw_json.hpp"

namespace hr   = heaplab::runner;
namespace hs   = heaplab::schedule;
namespace hf   = heaplab::rw_family;
namespace rw   = heaplab::rw;
namespace core = heaplab::core;

namespace {

/// A registered rw runner, typed.
std::unique_ptr<hf::RwRunner> make_rw(std::string const& name, hr::RunnerOptions const& o = {}) {
  auto r      = hr::make_runner(name, o);
  auto* typed = dynamic_cast<hf::RwRunner*>(r.get());
  if (!typed) throw std::logic_error(name + " is not an rw runner");
  (void)r.release();
  return std::unique_ptr<hf::RwRunner>(typed);
}

hr::RunnerOptions threads(unsigned n) {
  hr::RunnerOptions o;
  o.threads = n;
  return o;
}

/// A run with its StepReport counts summed ("pages", "out_of_pages", ...).
struct CountedRun {
  hr::RunOutcome outcome;
  std::map<std::string, std::uint64_t> counts;
};
CountedRun run_counted(hf::RwRunner& r, hs::RwSchedule const& s) {
  CountedRun out;
  out.outcome = r.run(s, [&](hr::StepReport const& step) {
    for (auto const& [key, n] : step.counts) out.counts[key] += n;
  });
  return out;
}

hs::RwSchedule simple_schedule(std::uint32_t pages, core::RwAlgorithm a, std::uint32_t threads) {
  hs::RwSchedule s;
  s.pool.num_pages = pages;
  s.pool.max_steps = 200;
  hs::RwAllocWave w;
  w.algorithm = a;
  w.threads   = threads;
  w.seed      = 11;
  s.steps.push_back(w);
  hs::RwFreeWave f;
  f.select   = hs::RwFreeSelect::fraction;
  f.fraction = 0.5;
  s.steps.push_back(f);
  w.seed = 12;
  s.steps.push_back(w);
  return s;
}

/// A ModelPool with one planted misbehaviour (each test below plants one).
enum class Break {
  none,
  same_page_twice,
  free_wrong_page,
  zero_steps,
  inactive_gets_page,
  leak_page,
  clear_padding_bit,
  short_result,
  throw_on_free
};

class BrokenPool final : public rw::StepExecutor {
 public:
  BrokenPool(rw::PoolConfig const& c, Break b) : inner_(c), break_(b) {}
  rw::PoolConfig const& config() const override { return inner_.config(); }
  std::string name() const override { return "broken"; }
  void mark_used(std::vector<std::uint32_t> const& p) override { inner_.mark_used(p); }
  rw::AllocResult allocate(rw::GetPageWave const& wave) override {
    auto r = inner_.allocate(wave);
    std::vector<std::uint32_t> got;
    for (std::uint32_t i = 0; i < r.first.size(); ++i)
      if (r.first[i] != rw::kNoPage) got.push_back(i);
    if (break_ == Break::same_page_twice && got.size() >= 2) r.first[got[1]] = r.first[got[0]];
    if (break_ == Break::zero_steps && !got.empty()) r.steps[got[0]] = 0;
    if (break_ == Break::short_result) r.steps.pop_back();
    if (break_ == Break::leak_page && !got.empty()) {  // used in the pool, but reported null
      r.first[got[0]] = rw::kNoPage;
      r.steps[got[0]] = config().max_steps;
    }
    if (break_ == Break::inactive_gets_page)
      for (std::uint32_t i = 0; i < r.first.size(); ++i)
        if (wave.pages[i] == 0) r.first[i] = 0;
    return r;
  }
  void free(rw::FreePageWave const& wave) override {
    if (break_ == Break::throw_on_free && !wave.first.empty())
      throw std::runtime_error("planted: free failed");
    rw::FreePageWave w = wave;
    if (break_ == Break::free_wrong_page && !w.first.empty()) {
      // Frees a pre-taken page instead of the first selected one.
      inner_.free(rw::FreePageWave{{0}, {1}});
      w.first.erase(w.first.begin());
      w.count.erase(w.count.begin());
    }
    inner_.free(w);
  }
  rw::PoolWords words() const override {
    auto w = inner_.words();
    if (break_ == Break::clear_padding_bit) w.used.back() &= ~(std::uint64_t{1} << 31);
    return w;
  }

 private:
  hf::ModelPool inner_;
  Break break_;
};

std::unique_ptr<hf::RwRunner> broken_runner(Break b) {
  return std::make_unique<hf::RwRunner>(
      "broken",
      [b](rw::PoolConfig const& c) { return std::make_unique<BrokenPool>(c, b); },
      [](core::RwAlgorithm) { return std::string(); },
      true);
}

hr::RunOutcome run_broken(Break b, hs::RwSchedule s) { return broken_runner(b)->run(s); }

}  // namespace

// ---------------------------------------------------------------------------- the interpreter

TEST(RwInterpreter, AcceptsLegalAnswersAndRefusesAPageHandedOutTwice) {
  hs::RwPool pool;
  pool.num_pages      = 8;
  pool.pretaken.pages = std::vector<std::uint32_t>{0};
  heaplab::model::RwModelInterpreter m(pool);
  std::uint32_t const none = rw::kNoPage;
  EXPECT_FALSE(m.alloc(0, {1, 1, 0, 1}, {3, 5, none, none}));
  ASSERT_EQ(m.held().size(), 2u);
  EXPECT_EQ(m.held()[1].first, 5u);
  EXPECT_EQ(m.held()[1].id, 1u);
  EXPECT_EQ(m.bounded_walk_exhaustions(), 1u);  // thread 3: null with pages free
  auto const twice = m.alloc(1, {1, 1}, {6, 6});
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->thread, 1u);
  EXPECT_NE(twice->message.find("handed out twice"), std::string::npos) << twice->message;
  auto const taken = m.alloc(2, {1}, {0});
  ASSERT_TRUE(taken);
  EXPECT_NE(taken->message.find("pre-taken"), std::string::npos) << taken->message;
  EXPECT_TRUE(m.alloc(3, {1}, {8}));   // beyond T
  EXPECT_TRUE(m.alloc(4, {0}, {4}));   // inactive thread with a page
  EXPECT_TRUE(m.alloc(5, {3}, {6}));   // a run of 3 at 6: 8 is beyond T
  EXPECT_FALSE(m.alloc(6, {2}, {1}));  // the run 1, 2
  auto const owners = m.owners();
  ASSERT_EQ(owners.size(), 1u + m.held().size());
  EXPECT_EQ(owners[0], std::vector<std::uint32_t>{0});
  EXPECT_EQ(owners.back(), (std::vector<std::uint32_t>{1, 2}));
}

TEST(RwInterpreter, FreeWavesFreeTheSelectedHandlesAndNullsAreClassified) {
  hs::RwPool pool;
  pool.num_pages = 4;
  heaplab::model::RwModelInterpreter m(pool);
  std::uint32_t const none = rw::kNoPage;
  EXPECT_FALSE(m.alloc(0, {1, 1, 1, 1, 1}, {0, 1, 2, 3, none}));
  EXPECT_EQ(m.out_of_pages(), 1u);
  hs::RwFreeWave f;
  f.select   = hs::RwFreeSelect::oldest;
  f.count    = 2;
  auto freed = m.free(f);
  ASSERT_EQ(freed.size(), 2u);
  EXPECT_EQ(freed[0].first, 0u);
  EXPECT_EQ(freed[1].first, 1u);
  EXPECT_TRUE(m.pages().is_free(0));
  EXPECT_EQ(m.held().front().id, 2u);
  EXPECT_FALSE(m.alloc(1, {3}, {none}));  // no free run of 3: out of pages
  EXPECT_EQ(m.out_of_pages(), 2u);
  EXPECT_FALSE(m.alloc(2, {2}, {none}));  // a run of 2 is free: exhaustion
  EXPECT_EQ(m.bounded_walk_exhaustions(), 1u);
}

// ------------------------------------------------------------------------------- the runners

TEST(RwRunner, CorrectExecutorsPassFixedSchedules) {
  for (auto a : {core::RwAlgorithm::rw, core::RwAlgorithm::rw_bm}) {
    for (char const* name : {"rw-model", "rw-cpu"}) {
      auto r          = make_rw(name);
      auto s          = simple_schedule(300, a, 256);
      auto const run  = run_counted(*r, s);
      auto const& out = run.outcome;
      EXPECT_FALSE(out.failure) << name << ": " << out.failure->message;
      EXPECT_EQ(out.steps_run, 3u);
      EXPECT_GT(run.counts.at("pages"), 200u) << name;
    }
  }
}

RC_GTEST_PROP(RwRunner, RwModelAndRwCpuPassGeneratedSchedules, ()) {
  for (char const* name : {"rw-model", "rw-cpu"}) {
    auto runner        = make_rw(name, threads(2));
    auto const s       = *hs::gen::rw_schedule(hs::gen::all_rw_algorithms());
    auto const outcome = runner->run(s);
    RC_ASSERT_FALSE(outcome.failure.has_value());
    RC_ASSERT(outcome.steps_run == s.steps.size());
  }
}

TEST(RwRunner, EveryCheckNamesItsBrokenExecutor) {
  struct Case {
    Break brk;
    hr::FailureKind kind;
    std::string check;
    bool thread;
  };
  std::vector<Case> const cases = {
      {Break::same_page_twice, hr::FailureKind::divergence, "rw-getpage-refinement", true},
      {Break::zero_steps, hr::FailureKind::invariant_violation, "rw-request-steps", true},
      {Break::inactive_gets_page, hr::FailureKind::invariant_violation, "rw-request-steps", true},
      {Break::short_result, hr::FailureKind::invariant_violation, "rw-wave-result-shape", false},
      {Break::leak_page, hr::FailureKind::invariant_violation, "rw-freed-page-free", false},
      {Break::clear_padding_bit,
       hr::FailureKind::invariant_violation,
       "rw-no-page-beyond-pool",
       false},
      {Break::free_wrong_page, hr::FailureKind::invariant_violation, "rw-owned-page-used", false},
      {Break::throw_on_free, hr::FailureKind::crash, "exception", false},
  };
  for (auto const& c : cases) {
    auto s                                      = simple_schedule(100, core::RwAlgorithm::rw, 64);
    std::get<hs::RwAllocWave>(s.steps[0]).lanes = hs::RwLanes::every_kth;
    std::get<hs::RwAllocWave>(s.steps[0]).k     = 2;
    s.pool.pretaken.pages                       = std::vector<std::uint32_t>{0};
    auto const out                              = run_broken(c.brk, s);
    ASSERT_TRUE(out.failure) << static_cast<int>(c.brk);
    EXPECT_EQ(out.failure->kind, c.kind) << c.check << ": " << out.failure->message;
    EXPECT_EQ(out.failure->check, c.check) << out.failure->message;
    EXPECT_EQ(hf::thread_of(*out.failure).has_value(), c.thread) << out.failure->message;
  }
  EXPECT_FALSE(run_broken(Break::none, simple_schedule(100, core::RwAlgorithm::rw, 64)).failure);
}

TEST(RwRunner, AFailureRightAfterSetupIsReportedAtStepZero) {
  auto s = simple_schedule(40, core::RwAlgorithm::rw, 4);  // 40 % 32 != 0: padding bits exist
  auto const out = run_broken(Break::clear_padding_bit, s);
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->step, 0u);
  EXPECT_EQ(out.steps_run, 0u);
  EXPECT_NE(out.failure->message.find("after setup"), std::string::npos) << out.failure->message;
}

TEST(RwRunner, EveryRunnerRunsEveryAlgorithmAndRwGpuSaysWhyItCannotRun) {
  for (auto a : hs::gen::all_rw_algorithms()) {
    auto const s = simple_schedule(64, a, 32);
    EXPECT_TRUE(make_rw("rw-cpu")->unsupported(s).empty()) << hs::to_string(a);
    EXPECT_TRUE(make_rw("rw-model")->unsupported(s).empty()) << hs::to_string(a);
    auto const out = make_rw("rw-cpu")->run(s);  // CoRW, RW_malloc: lock-step warps
    EXPECT_FALSE(out.failure) << out.failure->message;
    EXPECT_EQ(out.steps_run, s.steps.size()) << hs::to_string(a);
  }
  // rw-gpu runs where a GPU is present and names the reason elsewhere.
  std::string const why = hr::unavailable_reason("rw-gpu");
  if (why.empty())
    EXPECT_NO_THROW(hr::make_runner("rw-gpu"));
  else
    EXPECT_THROW(hr::make_runner("rw-gpu"), hr::runner_unavailable) << why;
  EXPECT_THROW(hr::make_runner("rw-nope"), heaplab::core::precondition_error);
}

// ----------------------------------------------------------------------- the CPU threads pool

TEST(CpuThreadsPool, AWaveOf100kThreadsGetsDistinctPagesOnFourOsThreads) {
  rw::PoolConfig c;
  c.num_pages = 1u << 18;
  c.max_steps = 1000;
  for (auto a : {core::RwAlgorithm::rw, core::RwAlgorithm::rw_bm}) {
    hf::CpuThreadsPool pool(c, 4);
    rw::GetPageWave w;
    w.algorithm = a;
    w.pages.assign(100000, 1);
    w.seed       = 3;
    auto const r = pool.allocate(w);
    std::set<std::uint32_t> pages;
    for (std::uint32_t i = 0; i < 100000; ++i) {
      ASSERT_NE(r.first[i], rw::kNoPage) << i;
      ASSERT_GE(r.steps[i], 1u);
      pages.insert(r.first[i]);
    }
    EXPECT_EQ(pages.size(), 100000u) << core::rw_algorithm_name(a);
    std::uint64_t used = 0;
    for (auto word : pool.words().used)
      used += static_cast<std::uint64_t>(__builtin_popcountll(word));
    EXPECT_EQ(used, 100000u);
  }
}

TEST(CpuThreadsPool, NearExhaustionEveryFreePageIsHandedOutOnceAndNullsTakeMaxSteps) {
  hs::RwSchedule s;
  s.pool.num_pages      = 4000;
  s.pool.max_steps      = 3000;
  s.pool.pretaken.count = 3980;  // 0.5 % free
  s.pool.pretaken.seed  = 9;
  hs::RwAllocWave w;
  w.algorithm = core::RwAlgorithm::rw_bm;
  w.threads   = 60;
  s.steps.push_back(w);
  auto const run = run_counted(*make_rw("rw-cpu", threads(4)), s);
  ASSERT_FALSE(run.outcome.failure) << run.outcome.failure->message;
  EXPECT_EQ(run.counts.at("pages"), 20u);
  EXPECT_EQ(run.counts.at("out_of_pages"), 40u);
}

TEST(CpuThreadsPool, ADoubleFreeIsACrashOfThatWave) {
  rw::PoolConfig c;
  c.num_pages = 64;
  hf::CpuThreadsPool pool(c, 2);
  pool.mark_used({5});
  pool.free(rw::FreePageWave{{5}, {1}});
  EXPECT_THROW(pool.free(rw::FreePageWave{{5}, {1}}), heaplab::core::protocol_error);
}

// ------------------------------------------------------------------- stress and minimize

hr::StressOptions rw_options(std::filesystem::path dir) {
  hr::StressOptions o;
  o.request.profile = "mixed";
  o.request.runner  = "rw-model";
  o.seconds         = 60;
  o.out_dir         = std::move(dir);
  return o;
}

TEST(RwStress, FindsAPlantedBugWritesReplayableFilesAndMinimizes) {
  auto const dir = std::filesystem::temp_directory_path() / "heaplab_rw_stress_test";
  std::filesystem::remove_all(dir);
  hr::StressOptions o = rw_options(dir);
  o.seed              = 5;
  o.max_cases         = 40;
  o.max_failures      = 1;
  auto const res      = hr::run_stress(
      hf::family(), o, [](unsigned) { return broken_runner(Break::same_page_twice); });
  ASSERT_EQ(res.failures.size(), 1u);
  auto const& f = res.failures.front();
  ASSERT_FALSE(f.path.empty()) << f.save_error;
  auto const file = hr::load_failure(f.path);
  EXPECT_EQ(file, f.file);
  EXPECT_EQ(&file.family(), &hf::family());
  EXPECT_EQ(file.failure.check, "rw-getpage-refinement");
  // The case regenerates from its seed alone.
  auto const& sched = hf::RwFamily::unwrap(file.schedule);
  auto regenerated =
      hf::RwFamily::unwrap(hr::make_case(hf::family(), o, *file.origin.case_index).schedule);
  regenerated.description = sched.description;
  EXPECT_EQ(regenerated, sched);
  auto runner      = broken_runner(Break::same_page_twice);
  auto const again = runner->run(sched);
  ASSERT_TRUE(again.failure);
  EXPECT_EQ(again.failure->check, file.failure.check);

  auto const m = hr::minimize(*runner, file.schedule, std::nullopt, {});
  ASSERT_TRUE(m.has_value());
  auto const& small = hf::RwFamily::unwrap(m->schedule);
  EXPECT_EQ(small.steps.size(), 1u);
  EXPECT_LE(std::get<hs::RwAllocWave>(small.steps[0]).threads, 2u);
  EXPECT_LE(small.pool.num_pages, 2u);
  EXPECT_EQ(m->failure.check, "rw-getpage-refinement");
  std::filesystem::remove_all(dir);
}

TEST(RwStress, CorrectRunnersPassAndCountCoverage) {
  hr::StressOptions o =
      rw_options(std::filesystem::temp_directory_path() / "heaplab_rw_stress_none");
  o.seed      = 9;
  o.max_cases = 30;
  for (char const* name : {"rw-model", "rw-cpu"}) {
    o.request.runner = name;
    auto const res =
        hr::run_stress(hf::family(), o, [&](unsigned) { return hr::make_runner(name); });
    EXPECT_EQ(res.stats.cases, 30u);
    EXPECT_TRUE(res.failures.empty()) << name << ": " << res.failures.front().file.failure.message;
    EXPECT_EQ(res.stop_reason, "--cases reached");
    EXPECT_GT(res.stats.counts.at("pages"), 0u);
    EXPECT_FALSE(res.stats.coverage.counts.at("frees").empty());
  }
}
