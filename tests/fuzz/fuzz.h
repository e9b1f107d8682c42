/* fuzz.h - what every harness shares: libFuzzer's entry point, and the
 * copy of the input the code under test reads. */
#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Runs the code under test on one input; libFuzzer calls it again and again
 * in one process, so nothing may survive a call.  Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Returns a malloc'd copy of the input: exactly size bytes, so that ASan
 * sees any read past the end, plus a NUL when terminate is set (for code
 * that reads C strings).  NULL when out of memory. */
static inline char *fuzz_copy(const uint8_t *data, size_t size, int terminate)
{
	char *copy = malloc(size + (terminate ? 1 : 0) + (size == 0));
	if (!copy)
		return NULL;
	memcpy(copy, data, size);
	if (terminate)
		copy[size] = '\0';
	return copy;
}

#endif
