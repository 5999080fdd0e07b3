// Caps how many test cases Swift Testing runs at once in this package's test binary.
//
// Uncapped, `swift test` starts every one of its thousand-odd test cases together; each starts
// a loopback server and a transport with threads of their own, so a two-core machine holds
// some 1,600 threads and the cooperative pool's queue grows to a minute of work. A test's
// wait on a timer or a socket then measures that queue. Capped, the run is shorter and each
// wait measures what it is about (Docs/Reliability.md, "A full swift test on 2 cores").
//
// The cap is a default: a width set in the environment wins, and so does
// `--experimental-maximum-parallelization-width`. It is set before `main`, so before Swift
// Testing reads its configuration, and only in this test binary: the CourierTesting library
// that users link sets nothing.

#include <stdlib.h>

#include "CTestRunWidth.h"

__attribute__((constructor)) static void courier_cap_test_run_width(void) {
  setenv(COURIER_TEST_RUN_WIDTH_VARIABLE, COURIER_TEST_RUN_WIDTH, 0);
}
