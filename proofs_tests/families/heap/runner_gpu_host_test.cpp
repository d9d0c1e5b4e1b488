// The host side of the GPU runner, without a GPU (label cpu; built only where nvcc is present,
// since the runner library contains the universes' kernels): the type universes and their
// configs, matching a config to a universe with precise reasons, the snapshot translation of
// TypeMap fed correct and broken GPU snapshots, the config generators, and the registry entry's
// answer on a machine without a GPU. docs/gpu-runner.md.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "gpu_runner_support.hpp"
#include "heaplab/check/diff.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/families/heap/gpu/gpu_runner.hpp"
#include "heaplab/families/heap/gpu/type_map.hpp"
#include "heaplab/families/heap/gpu/universe_gen.hpp"
#include "heaplab/runner/environment.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/runner/stress.hpp"
#include "heaplab/schedule/generators.hpp"
#include "heaplab/schedule/json.hpp"

namespace {

namespace check       = heaplab::check;
namespace core        = heaplab::core;
namespace gpu         = heaplab::heap_family::gpu;
namespace runner      = heaplab::runner;
namespace heap_family = heaplab::heap_family;
namespace schedule    = heaplab::schedule;

using gpu_runner_test::kWatorJson;

std::size_t universe_index(std::string const& name) {
  for (std::size_t u = 0; u < gpu::universes().size(); ++u)
    if (gpu::universes()[u].name == name) return u;
  ADD_FAILURE() << "no universe " << name;
  return 0;
}

// ------------------------------------------------------------------------------------ universes

TEST(GpuUniverses, SixWrittenByHandThenThirtyTwoRandomLayouts) {
  std::vector<std::string> names;
  for (auto const& u : gpu::universes()) names.push_back(u.name);
  std::vector<std::string> want{"wator", "sizes", "tree", "head8", "head16", "head32"};
  for (int r = 0; r < 32; ++r) want.push_back((r < 10 ? "rand0" : "rand") + std::to_string(r));
  EXPECT_EQ(names, want);
  for (auto const& u : gpu::universes()) {
    EXPECT_EQ(gpu::is_random_layout(u), u.name.rfind("rand", 0) == 0) << u.name;
    if (!gpu::is_random_layout(u)) continue;
    // The generated universes: a hidden root of their own first, 2..5 classes, capacities >= 4.
    EXPECT_NO_THROW(u.config.validate()) << u.name;
    EXPECT_EQ(u.gpu_types.rfind("Root(", 0), 0u) << u.gpu_types;
    EXPECT_GE(u.config.min_defrag_capacity(), 4u) << u.name;
  }
  for (auto const& u : gpu::universes()) {
    if (gpu::is_random_layout(u)) continue;
    EXPECT_NO_THROW(u.config.validate()) << u.name;
    EXPECT_GT(u.gpu_block_bytes, 0u) << u.name;
    // The hidden tracked root comes first: Tracked (id, cookie: 16 B) or the layout universes'
    // Root (a 1-, 2- or 4-byte head before the id and the cookie).
    std::string const root = u.name == "head8"    ? "Root(17, abstract)"
                             : u.name == "head16" ? "Root(18, abstract)"
                             : u.name == "head32" ? "Root(20, abstract)"
                                                  : "Tracked(16, abstract)";
    EXPECT_EQ(u.gpu_types.rfind(root, 0), 0u) << u.gpu_types;
  }
}

TEST(GpuUniverses, TheLayoutUniversesHaveTheDocumentedCapacitiesAndSlots) {
  // Hand-computed from universes.cuh: GPU sizes A 27, B 55, C 64, D 44 for head8 (head16 +1,
  // head32 +3 each); N_T = min(64, floor(64 * size(A) / size)).
  struct Expected {
    char const* name;
    std::vector<std::uint32_t> caps;
  };
  for (auto const& e : {Expected{"head8", {64, 31, 27, 39}},
                        Expected{"head16", {64, 32, 27, 39}},
                        Expected{"head32", {64, 33, 28, 40}}}) {
    core::HeapConfig const c = gpu::universe_config(e.name, 4, 1, 0);
    std::vector<std::uint32_t> caps;
    for (std::uint32_t t = 0; t < c.num_types(); ++t) caps.push_back(c.capacity(t));
    EXPECT_EQ(caps, e.caps) << e.name;
    EXPECT_EQ(c.pointer_slots(0).size(), 1u) << e.name;  // A: next
    EXPECT_EQ(c.pointer_slots(1).size(), 4u) << e.name;  // B: A's next, then kids[3]
    EXPECT_EQ(c.pointer_slots(2).size(), 5u) << e.name;  // C: B's 4, then back
    EXPECT_EQ(c.pointer_slots(3).size(), 1u) << e.name;  // D: ref
    EXPECT_TRUE(c.is_subtype(2, 0)) << e.name;           // C : B : A
    EXPECT_FALSE(c.types[0].base.has_value()) << "A's base is the hidden root";
  }
}

TEST(GpuUniverses, WatorIsExactlyTheConfigOfWatorJson) {
  schedule::Schedule const file = schedule::parse(kWatorJson);
  core::HeapConfig const ours   = gpu::universe_config(
      "wator", file.config.num_blocks, file.config.defrag_factor, file.config.k1);
  EXPECT_TRUE(schedule::same_config(ours, file.config));
  EXPECT_EQ(gpu::type_difference(ours, file.config), "");
  auto const m = gpu::match_universe(file.config);
  ASSERT_TRUE(m.index.has_value()) << m.reason;
  EXPECT_EQ(gpu::universes()[*m.index].name, "wator");
}

TEST(GpuUniverses, CapacitiesAndPointerSlotsAreTheDocumentedOnes) {
  // Hand-computed from the GPU sizes in universes.cuh: N_T = min(64, floor(64 * 16 / size)) for
  // sizes (smallest Tiny, 16 B), floor(64 * 28 / size) for tree (smallest Leaf, 28 B).
  core::HeapConfig const sizes = gpu::universe_config("sizes", 4, 1, 0);
  std::vector<std::uint32_t> caps;
  for (std::uint32_t t = 0; t < sizes.num_types(); ++t) caps.push_back(sizes.capacity(t));
  EXPECT_EQ(caps, (std::vector<std::uint32_t>{64, 42, 25, 9, 5}));
  EXPECT_EQ(sizes.pointer_slots(3).size(), 7u);  // Wide: Pair's kids[2], link, then more[4]
  EXPECT_EQ(sizes.pointer_slots(3)[3].declaring_type, 3u);
  EXPECT_EQ(*sizes.types[3].base, 2u);

  core::HeapConfig const tree = gpu::universe_config("tree", 4, 1, 0);
  caps.clear();
  for (std::uint32_t t = 0; t < tree.num_types(); ++t) caps.push_back(tree.capacity(t));
  EXPECT_EQ(caps, (std::vector<std::uint32_t>{0, 32, 64, 19, 37}));
  EXPECT_TRUE(tree.types[0].is_abstract);
  EXPECT_EQ(tree.pointer_slots(3).size(), 9u);  // Twig: Node.parent, then siblings[8]
  EXPECT_TRUE(tree.is_subtype(3, 0));
}

TEST(GpuUniverses, UnknownNamesAndBadParametersAreClearErrors) {
  try {
    (void)gpu::universe_config("wa-tor", 4, 1, 0);
    FAIL() << "no error";
  } catch (core::precondition_error const& e) {
    EXPECT_NE(std::string(e.what()).find("unknown GPU type universe 'wa-tor'; universes: wator, "
                                         "sizes, tree, head8, head16, head32"),
              std::string::npos)
        << e.what();
  }
  // sizes: the smallest defragmentable capacity is 5 (Huge), so n = 5 is invalid.
  EXPECT_THROW((void)gpu::universe_config("sizes", 4, 5, 0), core::precondition_error);
  EXPECT_THROW((void)gpu::universe_config("sizes", 0, 1, 0), core::precondition_error);
}

// ------------------------------------------------------------------------------------ matching

TEST(GpuUniverses, AMismatchNamesTheFirstDifferenceForEveryUniverse) {
  core::HeapConfig c = schedule::parse(kWatorJson).config;
  c.types[2].pointer_fields.push_back({"mate", 2, 1});  // Fish gets a pointer field
  auto const m = gpu::match_universe(c);
  EXPECT_FALSE(m.index.has_value());
  EXPECT_NE(m.reason.find("wator: type 2 ('Fish'): 1 pointer fields here, 0 in the universe"),
            std::string::npos)
      << m.reason;
  EXPECT_NE(m.reason.find("sizes: 4 types here, 5 in the universe"), std::string::npos) << m.reason;
  EXPECT_NE(m.reason.find("tree: "), std::string::npos) << m.reason;

  core::HeapConfig d                 = schedule::parse(kWatorJson).config;
  d.types[3].pointer_fields[0].count = 2;  // Shark.prey[2]
  EXPECT_NE(gpu::match_universe(d).reason.find(
                "wator: type 3 ('Shark'): pointer field 0 ('prey') has count 2 here, 1 in the "
                "universe"),
            std::string::npos)
      << gpu::match_universe(d).reason;

  core::HeapConfig e     = schedule::parse(kWatorJson).config;
  e.types[1].is_abstract = false;  // Agent concrete
  EXPECT_NE(gpu::match_universe(e).reason.find(
                "wator: type 1 ('Agent'): concrete here, abstract in the universe"),
            std::string::npos);
}

TEST(GpuExecutorHost, SupportsSaysWhyNot) {
  gpu::GpuExecutor executor;
  EXPECT_EQ(executor.name(), "gpu");
  EXPECT_FALSE(executor.deterministic());
  core::HeapConfig c = gpu::universe_config("tree", 16, 2, 1);
  EXPECT_TRUE(executor.supports(c).supported) << executor.supports(c).reason;
  c.types[4].name = "Wood";
  auto const s    = executor.supports(c);
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("tree: type 4 ('Wood'): named 'Wood' here, 'Forest' in the universe"),
            std::string::npos)
      << s.reason;
  core::HeapConfig invalid = gpu::universe_config("tree", 16, 2, 1);
  invalid.defrag_factor    = 40;
  EXPECT_FALSE(executor.supports(invalid).supported);
  EXPECT_NE(executor.supports(invalid).reason.find("defragmentation factor n=40"),
            std::string::npos);
}

// -------------------------------------------------------------------------------------- TypeMap

/// A TypeMap like the wator universe's, built here from a hand-written GPU config so that the
/// test does not take the map from the code under test: Tracked, Cell, Agent, Fish, Shark.
gpu::TypeMap hand_wator_map(std::uint32_t M) {
  core::HeapConfig g;
  g.types.push_back({"Tracked", 16, std::nullopt, true, {}});
  g.types.push_back({"Cell", 40, 0u, false, {{"agent", 2, 1}, {"neighbors", 1, 2}}});
  g.types.push_back({"Agent", 24, 0u, true, {{"home", 1, 1}}});
  g.types.push_back({"Fish", 40, 2u, false, {}});
  g.types.push_back({"Shark", 80, 2u, false, {{"prey", 3, 1}}});
  g.num_blocks    = M;
  g.defrag_factor = 2;
  g.k1            = 1;
  return gpu::TypeMap(g, {0}, {16, 16, 16, 32});
}

TEST(GpuTypeMap, RenumbersTypesAndDropsTheHiddenRoot) {
  gpu::TypeMap const map = hand_wator_map(8);
  EXPECT_EQ(gpu::type_difference(schedule::parse(kWatorJson).config, map.schedule()), "");
  EXPECT_EQ(map.to_gpu(0), 1u);
  EXPECT_EQ(map.to_gpu(3), 4u);
  EXPECT_FALSE(map.to_schedule(0).has_value());
  EXPECT_EQ(*map.to_schedule(2), 1u);
  EXPECT_FALSE(map.to_schedule(9).has_value());
  EXPECT_EQ(map.with_parameters(3, 1, 0).schedule().num_blocks, 3u);
  EXPECT_EQ(map.with_parameters(3, 1, 0).gpu().num_blocks, 3u);
}

TEST(GpuTypeMap, TranslatesAGpuSnapshotToTheModelsShape) {
  gpu::TypeMap const map = hand_wator_map(6);
  // The same heap built twice, independently: on the GPU config (types 1..4) and on the schedule
  // config (types 0..3). Block 1: Fish (GPU 3 / schedule 2), block 4: Shark (4 / 3), block 2:
  // Cell (1 / 0).
  check::HeapSnapshot gpu_snap      = check::make_empty_snapshot(map.gpu(), true);
  check::HeapSnapshot expected_snap = check::make_empty_snapshot(map.schedule(), true);
  std::uint64_t id = 1, id2 = 1;
  id  = check::make_block_allocated(gpu_snap, 1, 3, 0b1011, id);
  id2 = check::make_block_allocated(expected_snap, 1, 2, 0b1011, id2);
  id  = check::make_block_allocated(gpu_snap, 4, 4, ~0ull >> 32, id);
  id2 = check::make_block_allocated(expected_snap, 4, 3, ~0ull >> 32, id2);
  id  = check::make_block_allocated(gpu_snap, 2, 1, 1, id);
  id2 = check::make_block_allocated(expected_snap, 2, 0, 1, id2);
  ASSERT_EQ(id, id2);
  // A pointer: the Cell's agent (slot 0) refers to the Fish at 1:3 (same slots on both sides).
  gpu_snap.blocks[2].objects[0]->refs[0]      = core::SlotRef{1, 3};
  expected_snap.blocks[2].objects[0]->refs[0] = core::SlotRef{1, 3};
  gpu_snap.producer = expected_snap.producer = "gpu";
  ASSERT_TRUE(check::check_all(gpu_snap).empty());

  check::HeapSnapshot const translated = map.to_schedule_snapshot(gpu_snap);
  check::SnapshotDiff const d          = check::diff(expected_snap, translated);
  EXPECT_TRUE(d.empty()) << d.to_string();
  EXPECT_TRUE(check::check_all(translated).empty());
  EXPECT_EQ(translated.allocated.size(), 4u);
}

TEST(GpuTypeMap, AHiddenTypeInABlockHeaderShowsAsAViolation) {
  gpu::TypeMap const map       = hand_wator_map(4);
  check::HeapSnapshot gpu_snap = check::make_empty_snapshot(map.gpu(), true);
  check::make_block_allocated(gpu_snap, 1, 3, 0b11, 1);
  gpu_snap.blocks[1].type     = 0;  // corrupt: the header names Tracked (abstract, hidden)
  check::HeapSnapshot const t = map.to_schedule_snapshot(gpu_snap);
  EXPECT_EQ(t.blocks[1].type, gpu::kHiddenTypeInSnapshot);
  auto const v = check::check_all(t);
  ASSERT_FALSE(v.empty());
  bool names_block_1 = false;
  for (auto const& x : v) names_block_1 = names_block_1 || x.block == 1;
  EXPECT_TRUE(names_block_1) << v.front().to_string();
}

TEST(GpuTypeMap, RejectsSnapshotsOfAnotherShapeAndHiddenStateBits) {
  gpu::TypeMap const map = hand_wator_map(4);
  EXPECT_THROW((void)map.to_schedule_snapshot(check::make_empty_snapshot(map.schedule(), true)),
               std::invalid_argument);
  check::HeapSnapshot wrong_m =
      check::make_empty_snapshot(map.with_parameters(5, 2, 1).gpu(), true);
  EXPECT_THROW((void)map.to_schedule_snapshot(wrong_m), std::invalid_argument);
  check::HeapSnapshot hidden_bit       = check::make_empty_snapshot(map.gpu(), true);
  hidden_bit.allocated[0]              = hidden_bit.allocated[1];  // Tracked gets a bitmap ...
  hidden_bit.allocated[0].levels[0][0] = 1;                        // ... with block 0 set
  try {
    (void)map.to_schedule_snapshot(hidden_bit);
    FAIL() << "no error";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("hidden abstract type 0 ('Tracked') has a bit set"),
              std::string::npos)
        << e.what();
  }
}

TEST(GpuTypeMap, RejectsUniverseDefinitionsThatCannotMatch) {
  core::HeapConfig g;
  g.types.push_back({"Tracked", 16, std::nullopt, true, {}});
  g.types.push_back({"A", 24, 0u, false, {{"next", 1, 1}}});
  g.types.push_back({"B", 48, 0u, false, {}});
  g.num_blocks = 4;
  // Schedule sizes 8 and 24 give B capacity 21, the GPU 32.
  try {
    gpu::TypeMap const bad(g, {0}, {8, 24});
    FAIL() << "no error";
  } catch (std::logic_error const& e) {
    EXPECT_NE(std::string(e.what()).find("type 1 ('B') has capacity 21 in the schedule config but "
                                         "32 on the GPU"),
              std::string::npos)
        << e.what();
  }
  core::HeapConfig p                   = g;
  p.types[1].pointer_fields[0].pointee = 0;  // a pointer to the hidden Tracked
  EXPECT_THROW(gpu::TypeMap(p, {0}), std::logic_error);
  EXPECT_THROW(gpu::TypeMap(g, {1}), std::logic_error);  // a concrete type cannot be hidden
  EXPECT_NO_THROW(gpu::TypeMap(g, {0}, {16, 32}));
}

// ----------------------------------------------------------------------------------- generators

TEST(GpuUniverseGen, ConfigsMatchTheirUniverseAndSchedulesValidate) {
  for (std::size_t u = 0; u < gpu::universes().size(); ++u) {
    rc::Random random(1234 + u);
    for (int k = 0; k < 60; ++k) {
      core::HeapConfig const c =
          gpu::universe_config_gen(u, 40)(random.split(), 1 + k % 100).value();
      auto const m = gpu::match_universe(c);
      ASSERT_TRUE(m.index.has_value()) << m.reason;
      EXPECT_EQ(*m.index, u);
      EXPECT_GE(c.num_blocks, 2u);
      EXPECT_LE(c.num_blocks, 40u);
      EXPECT_LT(c.defrag_factor, c.min_defrag_capacity());
      schedule::Schedule const s =
          schedule::gen::schedule_for(c)(random.split(), 1 + k % 100).value();
      EXPECT_NO_THROW(schedule::validate(s));
    }
  }
  EXPECT_EQ(universe_index("tree"), 2u);
}

// ---------------------------------------------------------------- the GPU tests' schedules
// The schedules and the property pipeline of the GPU tests, run here on the differential-model
// runner (the GPU runner's comparison path with a second model in place of the GPU): they are
// valid, the model side accepts them, and the failure-file path works, so a GPU failure of them
// is about the GPU.

std::unique_ptr<heap_family::HeapRunner> differential_model() {
  return heap_family::make_runner("differential-model");
}

TEST(GpuRunnerSchedules, WatorVariantsPassOnTheModelSide) {
  schedule::Schedule const prefix = gpu_runner_test::prefix_before_defrag(gpu_runner_test::wator());
  schedule::Schedule const none   = gpu_runner_test::without_defrag(gpu_runner_test::wator());
  EXPECT_EQ(prefix.steps.size(), 7u);
  EXPECT_EQ(none.steps.size(), 16u);
  for (auto const* s : {&prefix, &none}) {
    EXPECT_TRUE(heap_family::make_runner("model")->run(*s).ok());
    EXPECT_TRUE(differential_model()->run(*s).ok());
  }
}

TEST(GpuRunnerSchedules, DivergentSchedulesCoverEveryCountAndPassOnTheModelSide) {
  for (auto const& u : gpu::universes()) {
    schedule::Schedule const big = gpu_runner_test::divergent_schedule(u.name, 1024);
    auto const& even             = std::get<schedule::AllocWave>(big.steps[0]).lane_counts;
    auto const& odd              = std::get<schedule::AllocWave>(big.steps[1]).lane_counts;
    std::vector<bool> seen(64, false);
    for (auto c : even) seen.at(c) = true;
    for (auto c : odd) seen.at(c) = true;
    EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 64) << "per-lane counts 0..63";
    for (std::uint32_t M : {3u, 256u}) {
      SCOPED_TRACE(u.name + " M=" + std::to_string(M));
      gpu_runner_test::StepStats stats;
      auto r                     = differential_model();
      schedule::Schedule const s = gpu_runner_test::divergent_schedule(u.name, M);
      auto const outcome = r->run(s, [&](runner::StepReport const& rep) { stats.add(rep); });
      EXPECT_TRUE(outcome.ok()) << runner::format_failure(*outcome.failure);
      EXPECT_EQ(stats.steps, s.steps.size());
      if (M == 3) {
        EXPECT_GT(stats.out_of_memory, 0u);
      }
    }
  }
}

TEST(GpuRunnerSchedules, ThePropertyPipelinePassesOnTheModelSide) {
  // The GPU property's generators and schedules on differential-model, 30 cases per universe;
  // prints the host-side time per case (the GPU run adds its kernels and copies to it).
  for (std::size_t u = 0; u < gpu::universes().size(); ++u) {
    auto r = differential_model();
    gpu_runner_test::StepStats stats;
    auto const start = std::chrono::steady_clock::now();
    gpu_runner_test::check_property_noshrink(30, [&] {
      core::HeapConfig const config = *gpu::universe_config_gen(u);
      schedule::Schedule const s    = *schedule::gen::schedule_for(config);
      ++stats.runs;
      auto const outcome = r->run(s, [&](runner::StepReport const& rep) { stats.add(rep); });
      RC_ASSERT(outcome.ok());
    });
    double const seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "[ STATS    ] " << gpu::universes()[u].name
              << " on differential-model: " << stats.to_string() << "; " << seconds << " s\n";
    EXPECT_GT(stats.created, 0u);
  }
}

TEST(GpuRunnerHarness, AFailureBecomesAFileWithTheReplayCommand) {
  std::filesystem::path const dir =
      std::filesystem::temp_directory_path() /
      ("heaplab-gpu-runner-" + std::to_string(std::random_device{}()));
  ::setenv("HEAPLAB_FAILURE_DIR", dir.c_str(), 1);
  schedule::Schedule const s = gpu_runner_test::prefix_before_defrag(gpu_runner_test::wator());
  runner::Failure f;
  f.step                   = 4;
  f.kind                   = runner::FailureKind::divergence;
  f.check                  = heap_family::checks::kSnapshotDiff;
  f.message                = "1 differences from the model; first: ...";
  f.step_description       = "parallel_do<Cell> ...";
  auto model               = heap_family::make_runner("model");
  std::string const report = gpu_runner_test::save_failure(*model, s, f, "property", 17);
  ::unsetenv("HEAPLAB_FAILURE_DIR");
  std::vector<std::filesystem::path> files;
  for (auto const& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u) << report;
  runner::FailureFile const back = runner::load_failure(files.front());
  EXPECT_EQ(back.runner, "model");
  EXPECT_EQ(back.seed, 17u);
  EXPECT_EQ(back.origin.command, "property");
  EXPECT_EQ(back.failure, f.record());
  EXPECT_EQ(heap_family::HeapFamily::unwrap(back.schedule), s);
  EXPECT_NE(report.find("failure file: " + files.front().string()), std::string::npos) << report;
  EXPECT_NE(report.find("tools/heaplab replay " + files.front().string()), std::string::npos)
      << report;
  std::filesystem::remove_all(dir);
}

// ------------------------------------------------------------------------------------- registry

TEST(GpuRunnerRegistry, SaysWhyTheGpuRunnerCannotRunHere) {
  if (runner::visible_gpu_count() > 0) {
    EXPECT_EQ(runner::unavailable_reason("gpu"), "");
    EXPECT_EQ(gpu::gpu_runner_unavailable_reason(), "");
    return;
  }
  // No GPU: the runner is built, and says so by naming the missing device, not "not built".
  std::string const why = runner::unavailable_reason("gpu");
  EXPECT_EQ(why.rfind("no CUDA device", 0), 0u) << why;
  try {
    (void)runner::make_runner("gpu");
    FAIL() << "no error";
  } catch (runner::runner_unavailable const& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
}

// `heaplab stress --runner gpu` draws its configs from config_gen_for("gpu"): every case of every
// profile must be one the GPU runner supports (a universe's types), or the whole run is skipped.
TEST(GpuRunnerRegistry, StressCasesForTheGpuRunnerAreUniverseConfigs) {
  runner::StressOptions o;
  o.seed             = 5;
  o.request.runner   = "gpu";
  o.request.max_size = schedule::kMaxBlocks;
  std::vector<int> seen(gpu::universes().size(), 0);
  for (char const* profile : {"small", "large", "near-oom", "mixed"}) {
    o.request.profile = profile;
    for (std::uint64_t k = 0; k < 30; ++k) {
      auto const c     = runner::make_case(heap_family::family(), o, k);
      auto const& s    = heap_family::HeapFamily::unwrap(c.schedule);
      auto const match = gpu::match_universe(s.config);
      ASSERT_TRUE(match.index.has_value()) << profile << " case " << k << ": " << match.reason;
      ++seen[*match.index];
      EXPECT_NO_THROW(schedule::validate(s));
    }
  }
  // Every universe written by hand is drawn; the random layouts take half of the draws.
  int random_draws = 0, random_layouts = 0;
  for (std::size_t u = 0; u < seen.size(); ++u) {
    if (gpu::is_random_layout(gpu::universes()[u])) {
      random_draws += seen[u];
      random_layouts += seen[u] > 0;
    } else {
      EXPECT_GT(seen[u], 0) << "universe " << gpu::universes()[u].name << " never drawn";
    }
  }
  EXPECT_GT(random_draws, 30) << "of 120 cases";
  EXPECT_LT(random_draws, 90) << "of 120 cases";
  EXPECT_GE(random_layouts, 16) << "distinct random layouts drawn in 120 cases";
  // The cases of another runner draw arbitrary type lists, which the GPU runner mostly refuses.
  o.request.runner  = "model";
  o.request.profile = "small";
  int others        = 0;
  for (std::uint64_t k = 0; k < 30; ++k) {
    auto const c = runner::make_case(heap_family::family(), o, k);
    others +=
        !gpu::match_universe(heap_family::HeapFamily::unwrap(c.schedule).config).index.has_value();
  }
  EXPECT_GT(others, 0);
}

}  // namespace
