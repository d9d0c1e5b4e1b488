// check_property: a RapidCheck property run inside the current GoogleTest, the one way heaplab's
// tests run properties (docs/testing.md). Needs RapidCheck (header-only here: the test links it).
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>

namespace heaplab::testing {

struct PropertyOptions {
  /// Off for GPU runs: they are nondeterministic, so a shrunk schedule need not fail again (the
  /// failure file is the reproduction).
  bool shrink = true;
  /// Print RapidCheck's summary line on success.
  bool print = true;
};

/// Runs `testable` with at least `min_cases` successful cases and max_size <= 100; RC_PARAMS
/// (seed, reproduce, more cases) still applies. A failure fails the current test with
/// RapidCheck's message.
template <class Testable>
void check_property(int min_cases, Testable&& testable, PropertyOptions options = {}) {
  auto const* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id                   = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description          = info->name();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess             = std::max(params.maxSuccess, min_cases);
  params.maxSize                = std::min(params.maxSize, 100);
  params.disableShrinking       = params.disableShrinking || !options.shrink;
  auto const result             = rc::detail::checkProperty(
      rc::detail::toProperty(std::forward<Testable>(testable)), metadata, params);
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  if (!result.template is<rc::detail::SuccessResult>()) {
    FAIL() << message.str();
  } else {
    EXPECT_GE(result.template get<rc::detail::SuccessResult>().numSuccess, min_cases);
    if (options.print) std::cout << message.str() << "\n";
  }
}

}  // namespace heaplab::testing
