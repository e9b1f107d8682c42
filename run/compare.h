/* compare.h - checking the output against --expect. */
#ifndef COMPARE_H
#define COMPARE_H

#include <stddef.h>

#include "npy.h"

#define COMPARE_REPORT_SIZE 1024

/* Compares actual with expected as numpy.allclose does: each element must
 * satisfy |a - e| <= atol + rtol * |e| (NaN never matches; infinities match
 * only themselves); integer dtypes must match exactly.  Shapes and dtypes
 * must be equal.  Returns 0 when they match, or 1 with report set to the
 * first difference (named by expected_name) and how many elements differ. */
int compare_arrays(const struct npy_array *actual, const struct npy_array *expected,
                   const char *expected_name, double rtol, double atol,
                   char report[COMPARE_REPORT_SIZE]);

#endif
