// Reading schedule and failure files through the command line's own loading path
// (schedule::load_replayable, what `heaplab show`, `replay` and `minimize` call), on hostile input:
// every case runs the tool under an address-space limit and a wall-clock limit and asserts exit
// status 2, the exact message with FILE:line:col, and that it finished quickly. docs/schedules.md
// "Limits" lists the limits; docs/cli.md "Bad input" the messages.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_support.hpp"

namespace heaplab::test {
namespace {

// The tool's limits while reading a hostile file: 64 MiB of address space is ample for these
// files once depth and size are bounded (the unbounded reader needed 2.7 GB for 40,000 levels),
// and every case must end well within kQuick seconds (the kill comes later, at kKillAfter).
constexpr std::size_t kSmallMemoryMib = 64;
constexpr int kKillAfter              = 30;
constexpr double kQuick               = 5.0;

std::string const kDepthReason =
    "invalid JSON: arrays and objects nested deeper than 64 levels (the limit of heaplab files)";

/// "line:column" (1-based, columns count bytes) of byte `offset` of `text`: what the tool reports.
std::string position(std::string const& text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

/// position() of the first occurrence of `needle` (which must occur).
std::string position_of(std::string const& text, std::string const& needle) {
  auto const at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return position(text, at);
}

std::string write(TempDir const& dir, std::string const& name, std::string const& text) {
  auto const path = dir.path() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

std::string const kConfig =
    R"({"types": [{"name": "Node", "size": 8, "pointers": [{"name": "next", "pointee": "Node"}]}],)"
    R"( "num_blocks": 4, "n": 1, "k1": 0})";

/// A schedule file (one type Node with one pointer) with these step lines.
std::string schedule_text(std::string const& steps, std::string const& description = "test") {
  return "{\"format\": \"heaplab-schedule\", \"version\": 1,\n \"description\": \"" + description +
         "\",\n \"config\": " + kConfig + ",\n \"steps\": [\n" + steps + "\n ]}\n";
}

std::string const kTwoSteps =
    R"(  {"op": "alloc", "type": "Node", "threads": 32, "count": 1},)"
    "\n"
    R"(  {"op": "free", "select": {"type": "Node", "pattern": "fraction", "fraction": 0.5, "seed": 7}})";

/// kTwoSteps with the free wave's seed written as `seed`.
std::string with_seed(std::string const& seed) {
  std::string text = schedule_text(kTwoSteps);
  auto const at    = text.find("\"seed\": 7") + 8;
  text.replace(at, 1, seed);
  return text;
}

/// Asserts that the tool failed quickly with exit status 2 and exactly `message` (one line).
void expect_error(Result const& r, std::string const& message) {
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(r.output, message + "\n");
  EXPECT_LT(r.seconds, kQuick) << r.output;
}

// --------------------------------------------------------------------------------- nesting

TEST(CliParse, ArraysNestedAMillionDeepAreRejectedAtTheFirstBracketBeyondTheLimit) {
  TempDir dir;
  std::string const file =
      write(dir, "deep.json", std::string(1000000, '[') + std::string(1000000, ']'));
  auto const r = run_limited("show '" + file + "'", kSmallMemoryMib, kKillAfter);
  expect_error(r, "heaplab show: " + file + ":1:65: " + kDepthReason);
}

TEST(CliParse, ObjectsNested40000DeepInsideASchedulePointAtTheirLineAndColumn) {
  TempDir dir;
  std::string nested;
  for (int i = 0; i < 40000; ++i) nested += "{\"a\": ";
  nested += "1";
  nested += std::string(40000, '}');
  // The document object is level 1 and the step level 3 ("steps" is 2), so the 62nd nested
  // object is the first beyond 64 levels.
  std::string const text  = schedule_text("  {\"op\": \"check\", \"x\":\n" + nested + "}");
  std::string const file  = write(dir, "deep40k.json", text);
  std::size_t const first = text.find("{\"a\"");
  std::string const expected_position = position(text, first + 61 * 6);
  EXPECT_EQ(expected_position, "6:367");
  for (char const* command : {"show", "replay --model", "minimize"}) {
    auto const r =
        run_limited(std::string(command) + " '" + file + "'", kSmallMemoryMib, kKillAfter);
    std::string const name = std::string(command).substr(0, std::string(command).find(' '));
    expect_error(r,
                 "heaplab " + name + ": " + file + ":" + expected_position + ": " + kDepthReason);
  }
}

TEST(CliParse, NestingAtTheLimitIsReadAndBracketsInStringsDoNotCount) {
  TempDir dir;
  // 64 levels: read, then rejected for what it is (an array, not a schedule).
  std::string const file = write(dir, "at_limit.json", std::string(64, '[') + std::string(64, ']'));
  auto const r           = run_limited("show '" + file + "'", kSmallMemoryMib, kKillAfter);
  expect_error(r,
               "heaplab show: " + file +
                   ":1:1: expected a failure file (\"format\": \"heaplab-failure\") or a heap "
                   "schedule file (\"format\": \"heaplab-schedule\") or an interleaving "
                   "schedule file (\"format\": \"heaplab-interleaving\") or a malloc schedule "
                   "file (\"format\": \"heaplab-malloc-schedule\") or a rw schedule file "
                   "(\"format\": \"heaplab-rw-schedule\"), got an array");
  // A description full of brackets is text, not nesting.
  std::string const brackets =
      write(dir, "brackets.json", schedule_text(kTwoSteps, std::string(100000, '[') + "\\\"{{{"));
  auto const ok = run_limited("show '" + brackets + "'", kSmallMemoryMib, kKillAfter);
  EXPECT_EQ(ok.status, 0) << ok.output.substr(0, 300);
  EXPECT_NE(ok.output.find("steps (2):"), std::string::npos) << ok.output.substr(0, 300);
}

// ------------------------------------------------------------------------------ file size

TEST(CliParse, DevZeroIsRefusedAtTheSizeLimitWithBoundedMemory) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero here";
  // The default limit, 256 MiB: the tool reads 256 MiB + 1 byte and stops.
  auto const r = run_limited("show /dev/zero", 384, kKillAfter);
  expect_error(r,
               "heaplab show: /dev/zero: file is larger than the limit of 256 MiB "
               "(HEAPLAB_MAX_FILE_MIB sets another limit; docs/schedules.md \"Limits\")");
  // A lower limit: a small address space suffices.
  auto const small =
      run_limited("show /dev/zero", kSmallMemoryMib, kKillAfter, "HEAPLAB_MAX_FILE_MIB=1 ");
  expect_error(small,
               "heaplab show: /dev/zero: file is larger than the limit of 1 MiB "
               "(HEAPLAB_MAX_FILE_MIB sets another limit; docs/schedules.md \"Limits\")");
}

TEST(CliParse, AnEndlessPipeAndAFifoAreRefusedAtTheSizeLimit) {
  std::string const too_large =
      "file is larger than the limit of 2 MiB (HEAPLAB_MAX_FILE_MIB sets another limit; "
      "docs/schedules.md \"Limits\")";
  auto const piped =
      run_limited("show /dev/stdin", kSmallMemoryMib, kKillAfter, "yes | HEAPLAB_MAX_FILE_MIB=2 ");
  expect_error(piped, "heaplab show: /dev/stdin: " + too_large);

  TempDir dir;
  std::string const fifo = (dir.path() / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto const r =
      run_limited("replay --model '" + fifo + "'",
                  kSmallMemoryMib,
                  kKillAfter,
                  "(yes > '" + fifo + "' 2>/dev/null &) >/dev/null; HEAPLAB_MAX_FILE_MIB=2 ");
  expect_error(r, "heaplab replay: " + fifo + ": " + too_large);
}

// Issue 36, finding 3: a pipe hands out a few KiB per read, and each read used to keep a 1 MiB
// buffer: `yes | heaplab show /dev/stdin` took 4.2 GB for the 256 MiB limit, and a few hundred
// bytes trickled in one at a time took 1 MiB each. Memory is now what was read, plus 2 MiB.
TEST(CliParse, APipeCostsNoMoreMemoryThanItCarries) {
  auto const piped = run_limited("show /dev/stdin", 384, kKillAfter, "yes | ");
  expect_error(piped,
               "heaplab show: /dev/stdin: file is larger than the limit of 256 MiB "
               "(HEAPLAB_MAX_FILE_MIB sets another limit; docs/schedules.md \"Limits\")");
  // 300 one-byte reads: 300 MiB before, a few KiB now.
  auto const trickled =
      run_limited("show /dev/stdin",
                  kSmallMemoryMib,
                  kKillAfter,
                  "(for i in $(seq 300); do printf ' '; sleep 0.002; done; printf x) | ");
  EXPECT_EQ(trickled.status, 2) << trickled.output;
  EXPECT_NE(trickled.output.find("heaplab show: /dev/stdin:1:"), std::string::npos)
      << trickled.output;
  EXPECT_NE(trickled.output.find("invalid JSON"), std::string::npos) << trickled.output;
}

// A regular file is read straight into one string of its size: a 64 MiB file needs about 64 MiB
// (the tool itself about 30 more), where reading it through a scratch buffer and 1 MiB chunks
// took about twice its size (out of memory under 136 MiB of address space, 2026-11-28).
TEST(CliParse, ARegularFileCostsAboutItsSizeWhileRead) {
  TempDir dir;
  std::string const big = write(dir, "big.json", "x" + std::string(std::size_t{64} << 20, ' '));
  auto const r = run_limited("show '" + big + "'", 120, kKillAfter, "HEAPLAB_MAX_FILE_MIB=96 ");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("big.json:1:1: invalid JSON"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("out of memory"), std::string::npos) << r.output;
}

// Finding 20: a limit larger than the memory there is ends in a message that names the limit,
// not in std::bad_alloc.
TEST(CliParse, ALimitBeyondTheMemoryThereIsIsNamedWhenMemoryRunsOut) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero here";
  auto const r = run_limited("show /dev/zero", 256, kKillAfter, "HEAPLAB_MAX_FILE_MIB=1048576 ");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("heaplab show: /dev/zero: out of memory after reading "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("cannot hold a file of the limit of 1048576 MiB"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("bad_alloc"), std::string::npos) << r.output;
}

TEST(CliParse, AFileOneByteOverTheLimitIsRefusedAndOneAtTheLimitIsRead) {
  TempDir dir;
  std::size_t const limit = std::size_t{1} << 20;
  std::string text        = schedule_text(kTwoSteps);
  text += std::string(limit - text.size(), ' ');  // trailing white space is valid JSON
  std::string const at_limit = write(dir, "at_limit.json", text);
  std::string const over     = write(dir, "over.json", text + " ");
  auto const ok              = run_limited(
      "show '" + at_limit + "'", kSmallMemoryMib, kKillAfter, "HEAPLAB_MAX_FILE_MIB=1 ");
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("steps (2):"), std::string::npos) << ok.output;
  auto const r =
      run_limited("show '" + over + "'", kSmallMemoryMib, kKillAfter, "HEAPLAB_MAX_FILE_MIB=1 ");
  expect_error(r,
               "heaplab show: " + over +
                   ": file is larger than the limit of 1 MiB (HEAPLAB_MAX_FILE_MIB sets another "
                   "limit; docs/schedules.md \"Limits\")");
  auto const bad = run_limited(
      "show '" + at_limit + "'", kSmallMemoryMib, kKillAfter, "HEAPLAB_MAX_FILE_MIB=0 ");
  expect_error(bad,
               "heaplab show: " + at_limit +
                   ": HEAPLAB_MAX_FILE_MIB='0' must be a whole number of MiB from 1 to 1048576");
}

TEST(CliParse, DirectoriesAndMissingFilesSaySo) {
  TempDir dir;
  std::string const d = dir.path().string();
  expect_error(run_limited("show '" + d + "'", kSmallMemoryMib, kKillAfter),
               "heaplab show: " + d + ": is a directory, not a file");
  expect_error(
      run_limited("show '" + d + "/missing.json'", kSmallMemoryMib, kKillAfter),
      "heaplab show: " + d + "/missing.json: cannot open the file: No such file or directory");
}

// -------------------------------------------------------------------------------- numbers

TEST(CliParse, NumbersBeyondADoubleArePositionedErrors) {
  TempDir dir;
  std::string const digits(400, '9');
  for (std::string const& number : {std::string("1e400"),
                                    std::string("1e999"),
                                    std::string("-1e400"),
                                    std::string("1.5E+309"),
                                    digits}) {
    std::string const text  = with_seed(number);
    std::string const file  = write(dir, "number.json", text);
    std::string const shown = number.size() > 40 ? number.substr(0, 37) + "..." : number;
    auto const r            = run_limited("show '" + file + "'", kSmallMemoryMib, kKillAfter);
    expect_error(r,
                 "heaplab show: " + file + ":" + position_of(text, number) +
                     ": invalid JSON: the number " + shown +
                     " is out of range (beyond the largest double, about 1.8e308)");
  }
}

TEST(CliParse, IntegersBeyond64BitsAreOutOfRangeAtTheirPosition) {
  TempDir dir;
  std::string const two_to_64 = "18446744073709551616";
  std::string const text      = with_seed(two_to_64);
  std::string const file      = write(dir, "int.json", text);
  expect_error(run_limited("show '" + file + "'", kSmallMemoryMib, kKillAfter),
               "heaplab show: " + file + ":" + position_of(text, two_to_64) +
                   ": steps[1].select.seed: out of range: must be at most 18446744073709551615 "
                   "(2^64 - 1), got number 1.8446744073709552e+19");
  // The largest 64-bit integer is a valid seed.
  std::string const max = write(dir, "max.json", with_seed("18446744073709551615"));
  auto const ok         = run_limited("show '" + max + "'", kSmallMemoryMib, kKillAfter);
  EXPECT_EQ(ok.status, 0) << ok.output;
  std::string const negative = "-99999999999999999999";
  std::string const neg_text = with_seed(negative);
  std::string const neg      = write(dir, "neg.json", neg_text);
  expect_error(run_limited("show '" + neg + "'", kSmallMemoryMib, kKillAfter),
               "heaplab show: " + neg + ":" + position_of(neg_text, negative) +
                   ": steps[1].select.seed: must not be negative, got number -1e+20");
}

// ----------------------------------------------------------------------- broken text

TEST(CliParse, TruncatedAndEmptyFilesArePositioned) {
  TempDir dir;
  std::string const full = schedule_text(kTwoSteps);
  std::string const cut  = full.substr(0, full.find("0.5"));  // ends after "fraction":
  std::string const file = write(dir, "cut.json", cut);
  expect_error(run_limited("show '" + file + "'", kSmallMemoryMib, kKillAfter),
               "heaplab show: " + file + ":" + position(cut, cut.size()) +
                   ": invalid JSON: syntax error while parsing value - unexpected end of input; "
                   "expected '[', '{', or a literal");
  std::string const empty = write(dir, "empty.json", "");
  expect_error(run_limited("show '" + empty + "'", kSmallMemoryMib, kKillAfter),
               "heaplab show: " + empty + ":1:1: invalid JSON: the input is empty");
}

TEST(CliParse, InvalidUtf8AndNulBytesArePositionedAndNeverEchoedRaw) {
  TempDir dir;
  std::string const utf8_text = schedule_text(kTwoSteps, "Wa-\xff-Tor");
  std::string const utf8      = write(dir, "utf8.json", utf8_text);
  expect_error(run_limited("show '" + utf8 + "'", kSmallMemoryMib, kKillAfter),
               "heaplab show: " + utf8 + ":" + position_of(utf8_text, "\xff") +
                   ": invalid JSON: syntax error while parsing value - invalid string: ill-formed "
                   "UTF-8 byte; last read: '\"Wa-\\xff'");
  // A NUL byte, in a string or outside one, is an error where it is. (nlohmann-json alone takes
  // a NUL outside a string for the end of the input: whatever follows it was ignored.)
  std::string const nul_reason =
      ": invalid JSON: a NUL byte (JSON text never contains one; a binary file?)";
  std::string const nul_text = schedule_text(kTwoSteps, std::string("ab\0cd", 5));
  std::string const nul      = write(dir, "nul.json", nul_text);
  expect_error(
      run_limited("show '" + nul + "'", kSmallMemoryMib, kKillAfter),
      "heaplab show: " + nul + ":" + position_of(nul_text, std::string(1, '\0')) + nul_reason);
  std::string const trailing_text =
      schedule_text(kTwoSteps) + std::string("\0{\"not\": \"read\"", 15);
  std::string const trailing = write(dir, "trailing.json", trailing_text);
  expect_error(run_limited("show '" + trailing + "'", kSmallMemoryMib, kKillAfter),
               "heaplab show: " + trailing + ":" +
                   position_of(trailing_text, std::string(1, '\0')) + nul_reason);
}

TEST(CliParse, AFailureFileWithAHostileScheduleIsPositionedToo) {
  TempDir dir;
  std::string const schedule = with_seed("1e400");
  std::string const text =
      "{\"format\": \"heaplab-failure\", \"version\": 1, \"created\": \"2026-11-22T10:11:12Z\",\n"
      " \"git_commit\": \"x\", \"gpu\": \"none\", \"runner\": \"model\", \"seed\": 1,\n"
      " \"origin\": {\"command\": \"test\"},\n"
      " \"failure\": {\"step\": 1, \"kind\": \"crash\", \"check\": \"c\", \"message\": \"m\"},\n"
      " \"schedule\": " +
      schedule + "}\n";
  std::string const file = write(dir, "failure.json", text);
  expect_error(run_limited("replay --model '" + file + "'", kSmallMemoryMib, kKillAfter),
               "heaplab replay: " + file + ":" + position_of(text, "1e400") +
                   ": invalid JSON: the number 1e400 is out of range (beyond the largest double, "
                   "about 1.8e308)");
  std::string dup_text = text;
  dup_text.replace(dup_text.find("1e400"), 5, "7");
  dup_text.replace(
      dup_text.find("\"op\": \"alloc\""), 13, "\"op\": \"alloc\", \"\\u006fp\": \"free\"");
  std::string const dup = write(dir, "dup.json", dup_text);
  expect_error(run_limited("show '" + dup + "'", kSmallMemoryMib, kKillAfter),
               "heaplab show: " + dup + ":" + position_of(dup_text, "\"\\u006fp\"") +
                   ": schedule.steps[0].\\u006fp: duplicate key");
}

// ------------------------------------------------------------------------ linear time

/// `n` steps cycling through every kind of step, one per line.
std::string many_steps(std::size_t n) {
  std::string counts = "0";
  for (int lane = 1; lane < 32; ++lane) counts += "," + std::to_string(lane % 4);
  std::string const kinds[] = {
      R"({"op":"alloc","type":"Node","threads":64,"count":1,"links":[{"slot":0,"seed":3}]})",
      R"({"op":"alloc","type":"Node","threads":64,"divergence":{"pattern":"per_lane_counts","counts":[)" +
          counts + "]}}",
      R"({"op":"parallel_do","type":"Node","action":{"kind":"relink","slot":0,"null_fraction":0.25,"seed":10}})",
      R"({"op":"free","select":{"type":"Node","pattern":"fraction","fraction":0.5,"seed":7}})",
      R"({"op":"defrag","type":"Node","variant":"forwarding"})",
      R"({"op":"parallel_do","type":"Node","action":{"kind":"delete_self","fraction":0.3,"seed":8}})",
      R"({"op":"free","select":{"pattern":"every_kth","k":3,"offset":1}})",
      R"({"op":"check"})"};
  std::string steps;
  for (std::size_t i = 0; i < n; ++i) {
    steps += i ? ",\n  " : "  ";
    steps += kinds[i % 8];
  }
  return steps;
}

TEST(CliParse, AScheduleOf250000StepsLoadsInLinearTime) {
  // The quadratic reader took 8.6 s for 160,000 steps (7.6 s in the issue), so about 20 s for
  // 250,000; the linear one about 1.5 s on the same machine.
  TempDir dir;
  std::size_t const n    = 250000;
  std::string const text = schedule_text(many_steps(n));
  std::string const file = write(dir, "many.json", text);
  auto const r           = run_limited("show '" + file + "'", 1024, kKillAfter);
  EXPECT_EQ(r.status, 0) << r.output.substr(0, 500);
  EXPECT_NE(r.output.find("steps (250000):\n"), std::string::npos) << r.output.substr(0, 500);
  EXPECT_NE(r.output.find("\n  249999: check\n"), std::string::npos);
  EXPECT_LT(r.seconds, 6.0) << "250,000 steps";
  // And it scales linearly: a quarter of the steps takes about a quarter of the time (the
  // quadratic reader: 1.2 s and 15.6 s, 13 times as long; the slack absorbs start-up and noise).
  std::string const quarter = write(dir, "quarter.json", schedule_text(many_steps(n / 4)));
  auto const q              = run_limited("show '" + quarter + "'", 1024, kKillAfter);
  EXPECT_EQ(q.status, 0) << q.output.substr(0, 500);
  EXPECT_LT(r.seconds, 8 * q.seconds + 0.5)
      << "250,000 steps: " << r.seconds << " s, 62,500 steps: " << q.seconds << " s";

  // An error in the last step is found and located as quickly.
  std::string bad_text = text;
  auto const last      = bad_text.rfind(R"({"op":"check"})");
  bad_text.replace(last, 14, R"({"op":"check","graph_digets":"0x0"})");
  std::string const bad = write(dir, "bad.json", bad_text);
  auto const e          = run_limited("show '" + bad + "'", 1024, kKillAfter);
  EXPECT_EQ(e.status, 2);
  EXPECT_EQ(e.output,
            "heaplab show: " + bad + ":" + position(bad_text, bad_text.find("\"0x0\"")) +
                ": steps[249999].graph_digets: unknown key 'graph_digets' (did you mean "
                "'graph_digest'?); allowed here: op, graph_digest, snapshot_digest\n");
  EXPECT_LT(e.seconds, 6.0);
}

TEST(CliParse, TheMemoryLimitOfTheseTestsAppliesToTheTool) {
  // The control for every case above: a valid file that needs more than the small limit fails
  // under it (and loads under a generous one), so the limit is on the heaplab process itself.
  TempDir dir;
  std::string const file = write(dir, "many.json", schedule_text(many_steps(100000)));
  auto const limited     = run_limited("show '" + file + "'", kSmallMemoryMib, kKillAfter);
  EXPECT_NE(limited.status, 0);
  EXPECT_EQ(limited.output.find("steps (100000):"), std::string::npos);
  auto const generous = run_limited("show '" + file + "'", 1024, kKillAfter);
  EXPECT_EQ(generous.status, 0) << generous.output.substr(0, 300);
}

}  // namespace
}  // namespace heaplab::test
