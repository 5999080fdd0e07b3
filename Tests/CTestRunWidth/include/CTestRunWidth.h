#ifndef C_TEST_RUN_WIDTH_H
#define C_TEST_RUN_WIDTH_H

/// The environment variable Swift Testing reads for its cap on test cases run at once.
#define COURIER_TEST_RUN_WIDTH_VARIABLE "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH"

/// The cap this package's test binary uses unless the environment sets one.
#define COURIER_TEST_RUN_WIDTH "32"

#endif
