/* output.h - the files run-custom-op writes (--out, --profile, --profile-svg). */
#ifndef OUTPUT_H
#define OUTPUT_H

#include <stddef.h>

#include "runcustomop.h"

/* Writes length bytes to path by the rule of src/output_file.h (a regular
 * file atomically, a device or FIFO through, never deleted).  Returns 0, or
 * -1 with error set (RCO_ERROR_SYSTEM): "cannot write PATH: REASON". */
int output_write(const char *path, const void *bytes, size_t length, struct rco_error *error);

#endif
