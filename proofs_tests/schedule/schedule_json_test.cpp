// The schedule file format: strict parsing with clear errors (field path, line and column), the
// canonical round trip, and the id-level semantics of plan_step on hand-made graphs.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "heaplab/schedule/choice.hpp"
#include "heaplab/schedule/generators.hpp"
#include "heaplab/schedule/json.hpp"
#include "heaplab/schedule/plan.hpp"
#include "property.hpp"

namespace heaplab::schedule {
namespace {

std::string const kData = std::string(HEAPLAB_SOURCE_DIR) + "/proofs_tests/model/data/";

// A valid document, one field per line so that error lines are predictable.
// Line numbers:  1 {   2 format   3 version   4 config {   5 types [   6 Cell {   7 name
//  8 size   9 pointers  10 }   11 Fish {  12 name  13 size  14 }  15 ]  16 num_blocks  17 n
// 18 k1  19 }  20 steps [  21 {  22 op  23 type  24 threads  25 count  26 }  27 {  28 op
// 29 type  30 action  31 }  32 ]  33 }
std::string const kValid = R"({
  "format": "heaplab-schedule",
  "version": 1,
  "config": {
    "types": [
      {
        "name": "Cell",
        "size": 16,
        "pointers": [{"name": "fish", "pointee": "Fish", "count": 2}]
      },
      {
        "name": "Fish",
        "size": 16
      }
    ],
    "num_blocks": 8,
    "n": 2,
    "k1": 0
  },
  "steps": [
    {
      "op": "alloc",
      "type": "Fish",
      "threads": 64,
      "count": 1
    },
    {
      "op": "parallel_do",
      "type": "Cell",
      "action": {"kind": "allocate_child", "child_type": "Fish", "parent_slot": 1}
    }
  ]
})";

std::string replace(std::string text, std::string const& from, std::string const& to) {
  auto const pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

/// Parses `text`, expecting an error whose message contains every part of `parts`.
void expect_error(std::string const& text,
                  std::vector<std::string> const& parts,
                  std::size_t line = 0) {
  try {
    parse(text);
    FAIL() << "accepted a malformed document; expected: " << parts.front();
  } catch (schedule_error const& e) {
    std::string const what = e.what();
    for (auto const& p : parts)
      EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
    if (line) {
      EXPECT_EQ(e.line(), line) << what;
    }
  }
}

TEST(ScheduleJson, ReadsAValidDocument) {
  Schedule const s = parse(kValid);
  ASSERT_EQ(s.config.num_types(), 2u);
  EXPECT_EQ(s.config.types[0].pointer_fields[0].pointee, 1u);  // forward reference by name
  ASSERT_EQ(s.steps.size(), 2u);
  auto const& a = std::get<AllocWave>(s.steps[0]);
  EXPECT_EQ(a.type, std::optional<std::uint32_t>(1));
  EXPECT_EQ(a.threads, 64u);
  EXPECT_EQ(a.divergence, Divergence::all);  // default
  auto const& p = std::get<ParallelDo>(s.steps[1]);
  EXPECT_EQ(p.action, Action::allocate_child);
  EXPECT_EQ(p.parent_slot, 1u);
  EXPECT_EQ(p.fraction, 1.0);  // default: every visited object acts
}

TEST(ScheduleJson, SyntaxErrorsGiveLineAndColumn) {
  expect_error(replace(kValid, R"("size": 16,)", R"("size": 16,,)"),
               {"line 8, column", "invalid JSON", "syntax error"},
               8);
  expect_error("", {"invalid JSON"});
  expect_error("{\"format\": \"heaplab-schedule\"", {"invalid JSON", "line 1"});
}

TEST(ScheduleJson, UnknownKeysAreNamedWithASuggestion) {
  expect_error(replace(kValid, R"("threads": 64)", R"("treads": 64)"),
               {"steps[0].treads", "unknown key 'treads'", "did you mean 'threads'?"},
               24);
  expect_error(
      replace(kValid, R"("k1": 0)", R"("k1": 0, "k2": 3)"), {"config.k2", "unknown key 'k2'"}, 18);
}

TEST(ScheduleJson, WrongJsonTypesAreNamed) {
  expect_error(replace(kValid, R"("threads": 64)", R"("threads": "many")"),
               {"steps[0].threads", "expected a non-negative integer, got string \"many\""},
               24);
  expect_error(replace(kValid, R"("threads": 64)", R"("threads": 64.0)"),
               {"steps[0].threads", "expected a non-negative integer"},
               24);
  expect_error(replace(kValid, R"("count": 1)", R"("count": -1)"),
               {"steps[0].count", "must not be negative"},
               25);
  expect_error(replace(kValid, R"("steps": [)", R"("steps": {"a": [)"), {"invalid JSON"});
  expect_error("[]", {"a schedule file is a JSON object"});
}

TEST(ScheduleJson, MissingFieldsAreNamed) {
  expect_error(replace(kValid, R"("threads": 64,)", ""),
               {"steps[0].threads", "missing required field 'threads'"},
               21);
  expect_error(replace(kValid, R"("format": "heaplab-schedule",)", ""),
               {"format", "not a heaplab schedule"});
}

TEST(ScheduleJson, OutOfRangeValuesAreNamed) {
  expect_error(replace(kValid, R"("count": 1)", R"("count": 65)"),
               {"steps[0].count", "must be in [0, 64], got 65"},
               25);
  expect_error(
      replace(kValid, R"("parent_slot": 1)", R"("parent_slot": 2)"),
      {"steps[1].action.parent_slot", "pointer slot 2 out of range", "has 2 pointer slots"},
      30);
  expect_error(replace(kValid, R"("parent_slot": 1})", R"("parent_slot": 1, "fraction": 1.5})"),
               {"steps[1].action.fraction", "must be in [0, 1], got 1.5"},
               30);
  expect_error(replace(kValid, R"("num_blocks": 8)", R"("num_blocks": 70000)"),
               {"config.num_blocks", "must be at most 65536"},
               16);
  expect_error(replace(kValid, R"("version": 1)", R"("version": 2)"),
               {"version", "unsupported version 2"},
               3);
}

TEST(ScheduleJson, InvalidConfigsAreRejectedWithTheConfigsOwnMessage) {
  // n must be below the smallest capacity among concrete types (64 here).
  expect_error(replace(kValid, R"("n": 2)", R"("n": 64)"),
               {"config", "defragmentation factor n=64 must satisfy 1 <= n < 64"},
               4);
  expect_error(replace(kValid,
                       R"("size": 16
      })",
                       R"("size": 2048
      })"),
               {"more than 64x the smallest type"});
  expect_error(replace(kValid, R"("pointee": "Fish")", R"("pointee": "Fsh")"),
               {"config.types[0].pointers[0].pointee", "unknown type 'Fsh'; types: Cell, Fish"},
               9);
  expect_error(replace(kValid, R"("name": "Fish")", R"("name": "Cell")"),
               {"config.types[1].name", "two types are named 'Cell'"},
               12);
}

TEST(ScheduleJson, DuplicateKeysAreErrors) {
  expect_error(replace(kValid, R"("count": 1)", R"("count": 1, "count": 2)"),
               {"steps[0].count", "duplicate key"},
               25);
}

TEST(ScheduleJson, SemanticRulesOfStepsAreChecked) {
  // delete_other_type may not target the iterated types (DynaSOAr sec. 2.1).
  expect_error(replace(kValid,
                       R"({"kind": "allocate_child", "child_type": "Fish", "parent_slot": 1})",
                       R"({"kind": "delete_other_type", "victim_type": "Cell"})"),
               {"steps[1].action.victim_type", "only `this`"},
               30);
  // Keys of another pattern are unknown keys.
  expect_error(
      replace(
          kValid, R"("count": 1)", R"("count": 1, "divergence": {"pattern": "all", "seed": 3})"),
      {"steps[0].divergence.seed", "unknown key 'seed'"},
      25);
  expect_error(replace(kValid, R"("op": "alloc")", R"("op": "allocate")"),
               {"steps[0].op", "unknown step 'allocate'"},
               22);
}

TEST(ScheduleJson, HostileInputNeverCrashes) {
  // Nesting is bounded (kMaxNestingDepth = 64) before any value is built; the error points at
  // the first bracket beyond the limit.
  expect_error(
      std::string(100000, '[') + std::string(100000, ']'),
      {"line 1, column 65: invalid JSON: arrays and objects nested deeper than 64 levels"});
  expect_error(std::string("{\"format\": \"heaplab-schedule\", \"version\": 1, \"config\": ") +
                   std::string(50000, '[') + std::string(50000, ']') + "}",
               {"line 1, column 119: invalid JSON: arrays and objects nested deeper than 64"});
  // Exactly at the limit the document is read, and rejected for what it is.
  expect_error(std::string(64, '[') + std::string(64, ']'), {"a schedule file is a JSON object"});
  expect_error(std::string("{\"format\": \"heaplab-schedule\", \"version\": 1, \"config\": ") +
                   std::string(63, '[') + std::string(63, ']') + "}",
               {"config", "expected an object, got an array"});
  // Brackets inside strings do not count.
  expect_error("[\"" + std::string(1000, '[') + "\"]", {"a schedule file is a JSON object"});
  expect_error(std::string("\x00\xff\xfe", 3), {"invalid JSON"});
}

TEST(ScheduleJson, FilesNameThemselvesInErrors) {
  try {
    load(kData + "bad_unknown_key.json");
    FAIL();
  } catch (schedule_error const& e) {
    EXPECT_NE(std::string(e.what()).find("bad_unknown_key.json:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load(kData + "no_such_file.json"), schedule_error);
  EXPECT_THROW(load(kData), schedule_error);  // a directory
}

TEST(ScheduleJson, TheSampleFileIsCanonicalUpToFormatting) {
  Schedule const s = load(kData + "wator.json");
  EXPECT_EQ(s.steps.size(), 20u);
  // Canonical round trip: text -> schedule -> canonical json -> schedule.
  EXPECT_EQ(from_json(to_json(s)), s);
  EXPECT_EQ(parse(dump(s)), s);
}

// The work budget (docs/schedules.md "Limits"; issue 36, finding 4): a wave asking for more than
// kMaxWaveRequests, or waves together more than kMaxScheduleRequests, is refused at load, at the
// wave that passes it; a wave exactly at the budget is read.
TEST(ScheduleJson, TheWorkBudgetIsCheckedAtLoad) {
  std::string const at_budget =
      replace(replace(kValid, R"("threads": 64)", R"("threads": 1048576)"),
              R"("count": 1)",
              R"("count": 4)");
  EXPECT_EQ(wave_requests(std::get<AllocWave>(parse(at_budget).steps[0])), 4194304u);
  expect_error(replace(at_budget, R"("count": 4)", R"("count": 5)"),
               {"steps[0]", "asks for up to 5,242,880 allocations", "budget is 4,194,304 per wave"},
               21);
  // per_lane_counts: the largest lane's count bounds a thread's requests.
  AllocWave lanes;
  lanes.type           = 1;
  lanes.threads        = 100;
  lanes.divergence     = Divergence::per_lane_counts;
  lanes.lane_counts    = std::vector<std::uint32_t>(kWarpSize, 1);
  lanes.lane_counts[7] = 9;
  EXPECT_EQ(wave_requests(lanes), 900u);
  // 64 waves at the wave budget are the schedule's budget; any step after them passes it (a free
  // wave counts the objects that can be live: all of this heap's 8 x 64).
  Schedule s = parse(at_budget);
  s.steps.erase(s.steps.begin() + 1);
  for (int i = 1; i < 64; ++i) s.steps.push_back(s.steps.front());
  EXPECT_EQ(schedule_work(s), kMaxScheduleWork);
  EXPECT_NO_THROW(validate(s));
  s.steps.push_back(FreeWave{});
  try {
    validate(s);
    ADD_FAILURE() << "a schedule over the budget was accepted";
  } catch (schedule_error const& e) {
    EXPECT_EQ(e.path(), "steps[64]");
    EXPECT_NE(std::string(e.what()).find("work to 268,435,968 object visits; the work budget is "
                                         "268,435,456 per schedule"),
              std::string::npos)
        << e.what();
  }
}

// schedule_work: a wave counts its requests; every other step the objects that can be live before
// it, at most the heap's capacity (2 blocks x 64 Node here); allocate_child can double them.
TEST(ScheduleJson, ScheduleWorkBoundsTheLiveObjectsStepByStep) {
  Schedule s;
  s.config.types.push_back({"Node", 8, std::nullopt, false, {{"next", 0, 1}}});
  s.config.num_blocks = 2;
  AllocWave wave;
  wave.type    = 0;
  wave.threads = 20;
  wave.count   = 2;
  ParallelDo child;
  child.action = Action::allocate_child;
  s.steps      = {wave, child, FreeWave{}, Check{}};  // 40 + 40 + 80 + 80
  EXPECT_EQ(schedule_work(s), 240u);
  s.steps = {wave, wave, wave, wave, child, Check{}};  // 4 x 40 + 128 + 128: capped at 128 live
  EXPECT_EQ(schedule_work(s), 416u);
}

// Every generator profile stays within the work budget, on the largest heap a profile makes.
TEST(ScheduleJson, EveryProfileStaysWithinTheWorkBudget) {
  for (auto const& profile : gen::profile_names())
    heaplab::testing::check_property(30, [&] {
      Schedule const s = *gen::profile_schedule(profile, 1u << 20, kMaxBlocks, gen::config());
      RC_ASSERT(schedule_work(s) <= kMaxScheduleWork);
      validate(s);
    });
}

TEST(ScheduleJson, CanonicalRoundTripProperty) {
  heaplab::testing::check_property(200, [] {
    Schedule const s               = *gen::schedule();
    nlohmann::ordered_json const j = to_json(s);
    RC_ASSERT(from_json(j) == s);
    RC_ASSERT(to_json(from_json(j)) == j);
    RC_ASSERT(parse(dump(s)) == s);
  });
}

// The candidate order of a defrag step (core::CandidateOrder): optional, "block-id" by default,
// written only when it is "fill", and any other name refused with the valid ones.
TEST(ScheduleJson, TheDefragCandidateOrderIsOptionalAndNamed) {
  std::string const defrag_step =
      R"({"op": "parallel_do",
      "type": "Cell",
      "action": {"kind": "allocate_child", "child_type": "Fish", "parent_slot": 1}
    },
    {"op": "defrag", "type": "Fish", "variant": "forwarding")";
  std::string const with_defrag = replace(kValid,
                                          R"({
      "op": "parallel_do",
      "type": "Cell",
      "action": {"kind": "allocate_child", "child_type": "Fish", "parent_slot": 1}
    )",
                                          defrag_step);
  Schedule const plain          = parse(with_defrag);
  ASSERT_EQ(plain.steps.size(), 3u);
  EXPECT_EQ(std::get<Defrag>(plain.steps[2]).order, core::CandidateOrder::block_id);
  EXPECT_EQ(step_to_json(plain.config, plain.steps[2]).count("order"), 0u);

  Schedule const fill = parse(replace(
      with_defrag, R"("variant": "forwarding")", R"("variant": "forwarding", "order": "fill")"));
  EXPECT_EQ(std::get<Defrag>(fill.steps[2]).order, core::CandidateOrder::by_fill);
  EXPECT_EQ(step_to_json(fill.config, fill.steps[2]).at("order"), "fill");
  EXPECT_FALSE(fill == plain);
  EXPECT_EQ(parse(dump(fill)), fill);

  expect_error(replace(with_defrag,
                       R"("variant": "forwarding")",
                       R"("variant": "forwarding", "order": "by_fill")"),
               {"steps[2].order", "unknown value 'by_fill'", "block-id, fill"});
}

// ------------------------------------------------------------------------ plan_step

core::HeapConfig two_types() {
  core::HeapConfig c;
  c.types.push_back({"Cell", 16, std::nullopt, false, {{"fish", 1, 2}}});
  c.types.push_back({"Fish", 16, std::nullopt, false, {{"home", 0, 1}}});
  c.num_blocks    = 8;
  c.defrag_factor = 1;
  return c;
}

TEST(PlanStep, AllocWaveIdsAreThreadMajorAndLanesFollowThePattern) {
  AllocWave a;
  a.type          = 1;
  a.threads       = 64;
  a.count         = 2;
  a.divergence    = Divergence::alternate;
  auto const plan = plan_step(two_types(), {}, a, 10);
  // 32 even lanes x 2 objects; thread 0 gets ids 10, 11; thread 2 gets 12, 13; ...
  ASSERT_EQ(plan.allocations.size(), 64u);
  EXPECT_EQ(plan.allocations[0].id, 10u);
  EXPECT_EQ(plan.allocations[0].thread, 0u);
  EXPECT_EQ(plan.allocations[2].id, 12u);
  EXPECT_EQ(plan.allocations[2].thread, 2u);
  EXPECT_EQ(plan.allocations[63].thread, 62u);
  EXPECT_EQ(plan.next_id, 74u);

  a.divergence     = Divergence::per_lane_counts;
  a.count          = std::nullopt;
  a.lane_counts    = std::vector<std::uint32_t>(32, 0);
  a.lane_counts[5] = 3;
  auto const lanes = plan_step(two_types(), {}, a, 1);
  ASSERT_EQ(lanes.allocations.size(), 6u);  // lanes 5 of warps 0 and 1
  EXPECT_EQ(lanes.allocations[0].thread, 5u);
  EXPECT_EQ(lanes.allocations[3].thread, 37u);

  a.divergence     = Divergence::mixed_types;
  a.type           = std::nullopt;
  a.count          = 1;
  a.lane_counts    = {};
  a.lane_types     = {0, 1, 1};
  a.threads        = 4;
  auto const mixed = plan_step(two_types(), {}, a, 1);
  ASSERT_EQ(mixed.allocations.size(), 4u);
  EXPECT_EQ(mixed.allocations[0].type, 0u);
  EXPECT_EQ(mixed.allocations[1].type, 1u);
  EXPECT_EQ(mixed.allocations[2].type, 1u);
  EXPECT_EQ(mixed.allocations[3].type, 0u);

  // random_mask: lane l of warp w allocates iff bit l of mix(seed, w, 0) is set.
  a.divergence         = Divergence::random_mask;
  a.type               = 1;
  a.lane_types         = {};
  a.mask_seed          = 99;
  a.threads            = 32;
  auto const masked    = plan_step(two_types(), {}, a, 1);
  auto const mask      = static_cast<std::uint32_t>(mix(99, 0, 0));
  std::size_t expected = 0;
  for (std::uint32_t l = 0; l < 32; ++l) expected += (mask >> l) & 1u;
  EXPECT_EQ(masked.allocations.size(), expected);
}

TEST(PlanStep, LinksChooseAmongLiveObjectsOfACompatibleTypeById) {
  IdGraph g;
  g.objects[4] = {0, {std::nullopt, std::nullopt}};  // a Cell
  g.objects[7] = {1, {std::nullopt}};                // a Fish
  g.objects[9] = {1, {std::nullopt}};                // a Fish
  AllocWave a;
  a.type          = 0;
  a.threads       = 1;
  a.count         = 1;
  a.links         = {{0, 1, 5, 0.0}};  // Cell.fish[1] := one of the fish {7, 9}
  auto const plan = plan_step(two_types(), g, a, 10);
  ASSERT_EQ(plan.allocations.size(), 1u);
  std::vector<ObjectId> const fish = {7, 9};
  EXPECT_EQ(plan.allocations[0].refs[0], std::nullopt);
  EXPECT_EQ(plan.allocations[0].refs[1], fish[mix(5, 10, link_target_salt(1)) % 2]);
  a.links[0].null_fraction = 1.0;
  EXPECT_EQ(plan_step(two_types(), g, a, 10).allocations[0].refs[1], std::nullopt);
}

TEST(PlanStep, FreeWaveNullsEveryReferenceToTheDoomedFirst) {
  IdGraph g;
  g.objects[1] = {0, {2, 3}};
  g.objects[2] = {1, {1}};
  g.objects[3] = {1, {std::nullopt}};
  g.roots      = {3, 1};
  FreeWave f;
  f.select.type    = 1;  // fish
  f.select.pattern = SelectPattern::every_kth;
  f.select.k       = 2;  // the 0th and 2nd candidate: fish 2 (and there is no third)
  auto const plan  = plan_step(two_types(), g, f, 1);
  EXPECT_EQ(plan.deletes, (std::vector<ObjectId>{2}));
  ASSERT_EQ(plan.null_refs.size(), 1u);
  EXPECT_EQ(plan.null_refs[0].object, 1u);
  EXPECT_EQ(plan.null_refs[0].slot, 0u);
  EXPECT_TRUE(plan.null_roots.empty());
  f.select.offset  = 1;  // fish 3
  auto const plan3 = plan_step(two_types(), g, f, 1);
  EXPECT_EQ(plan3.deletes, (std::vector<ObjectId>{3}));
  EXPECT_EQ(plan3.null_roots, (std::vector<std::size_t>{0}));
}

TEST(PlanStep, DeleteOtherTypeGivesEveryDeleterADistinctVictim) {
  IdGraph g;
  for (ObjectId id : {1, 2, 3}) g.objects[id] = {0, {std::nullopt, std::nullopt}};  // cells
  for (ObjectId id : {10, 11}) g.objects[id] = {1, {std::nullopt}};                 // fish
  ParallelDo d;
  d.type          = 0;
  d.action        = Action::delete_other_type;
  d.victim_type   = 1;
  auto const plan = plan_step(two_types(), g, d, 20);
  ASSERT_EQ(plan.visits.size(), 3u);
  EXPECT_EQ(plan.visits[0].victim, std::optional<ObjectId>(10));
  EXPECT_EQ(plan.visits[1].victim, std::optional<ObjectId>(11));
  EXPECT_EQ(plan.visits[2].victim, std::nullopt);  // no third fish
  EXPECT_EQ(plan.deletes, (std::vector<ObjectId>{10, 11}));
}

TEST(Digest, GraphDigestSeesIdsTypesPointersAndRoots) {
  IdGraph g;
  g.objects[1]             = {0, {std::nullopt, std::nullopt}};
  std::uint64_t const base = graph_digest(g);
  IdGraph h                = g;
  h.objects[1].refs[1]     = 1;
  EXPECT_NE(graph_digest(h), base);
  h       = g;
  h.roots = {1};
  EXPECT_NE(graph_digest(h), base);
  EXPECT_EQ(parse_digest(format_digest(base)), std::optional<std::uint64_t>(base));
  EXPECT_EQ(parse_digest("0x123"), std::nullopt);
  EXPECT_EQ(parse_digest("0X0123456789abcdef"), std::nullopt);
}

}  // namespace
}  // namespace heaplab::schedule
