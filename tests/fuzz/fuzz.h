/* fuzz.h - what every harness shares: libFuzzer's entry point. */
#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Runs the code under test on one input; libFuzzer calls it again and again
 * in one process, so nothing may survive a call.  Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
