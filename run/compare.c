/* compare.c - checking the output against --expect. */
#include "compare.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void format_shape(char *out, size_t out_size, const struct npy_array *array)
{
	size_t used = (size_t)snprintf(out, out_size, "(");
	for (int i = 0; i < array->rank && used < out_size; i++)
		used += (size_t)snprintf(out + used, out_size - used, "%s%" PRIu64, i ? ", " : "",
		                         array->shape[i]);
	if (used < out_size)
		snprintf(out + used, out_size - used, array->rank == 1 ? ",)" : ")");
}

/* Writes flat index as a C-order multi-index: "[3, 1]". */
static void format_index(char *out, size_t out_size, const struct npy_array *array, size_t flat)
{
	uint64_t index[NPY_MAX_RANK] = {0};
	for (int i = array->rank - 1; i >= 0; i--) {
		index[i] = flat % array->shape[i];
		flat /= array->shape[i];
	}
	size_t used = (size_t)snprintf(out, out_size, "[");
	for (int i = 0; i < array->rank && used < out_size; i++)
		used += (size_t)snprintf(out + used, out_size - used, "%s%" PRIu64, i ? ", " : "",
		                         index[i]);
	if (used < out_size)
		snprintf(out + used, out_size - used, "]");
}

static void format_value(char *out, size_t out_size, const struct npy_array *array, size_t index)
{
	if (npy_dtype_is_float(array->dtype))
		snprintf(out, out_size, "%.9g", npy_get_double(array, index));
	else
		snprintf(out, out_size, "%" PRId64, npy_get_int(array, index));
}

static int floats_close(double actual, double expected, double rtol, double atol)
{
	if (isnan(actual) || isnan(expected))
		return 0;
	if (isinf(actual) || isinf(expected))
		return actual == expected;
	return fabs(actual - expected) <= atol + rtol * fabs(expected);
}

int compare_arrays(const struct npy_array *actual, const struct npy_array *expected,
                   const char *expected_name, double rtol, double atol,
                   char report[COMPARE_REPORT_SIZE])
{
	char actual_shape[256], expected_shape[256];
	format_shape(actual_shape, sizeof actual_shape, actual);
	format_shape(expected_shape, sizeof expected_shape, expected);
	if (strcmp(actual_shape, expected_shape) != 0) {
		snprintf(report, COMPARE_REPORT_SIZE, "%s has shape %s but the output has shape %s",
		         expected_name, expected_shape, actual_shape);
		return 1;
	}
	if (actual->dtype != expected->dtype) {
		snprintf(report, COMPARE_REPORT_SIZE, "%s is %s but the output is %s; give --out-dtype "
		         "%s or save the expected values as %s", expected_name,
		         npy_dtype_name(expected->dtype), npy_dtype_name(actual->dtype),
		         npy_dtype_name(expected->dtype), npy_dtype_name(actual->dtype));
		return 1;
	}
	int is_float = npy_dtype_is_float(actual->dtype);
	size_t first = 0, differing = 0;
	for (size_t i = 0; i < actual->count; i++) {
		int same = is_float ? floats_close(npy_get_double(actual, i), npy_get_double(expected, i),
		                                   rtol, atol)
		                    : npy_get_int(actual, i) == npy_get_int(expected, i);
		if (!same && differing++ == 0)
			first = i;
	}
	if (differing == 0)
		return 0;
	char index[NPY_MAX_RANK * 22 + 4], got[40], want[40], tolerance[80] = "";
	format_index(index, sizeof index, actual, first);
	format_value(got, sizeof got, actual, first);
	format_value(want, sizeof want, expected, first);
	if (is_float)
		snprintf(tolerance, sizeof tolerance, "; rtol %g, atol %g", rtol, atol);
	snprintf(report, COMPARE_REPORT_SIZE, "output differs from %s at %s: got %s, expected %s "
	         "(%zu of %zu elements differ%s)", expected_name, index, got, want, differing,
	         actual->count, tolerance);
	return 1;
}
