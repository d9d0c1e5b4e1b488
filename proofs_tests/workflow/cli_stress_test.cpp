// Tests of the heaplab command line (see cli_test_support.hpp); filled in by the CLI issue's work.
#include "cli_test_support.hpp"
