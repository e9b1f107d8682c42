/* arguments.c - the op's arguments from --in and --scalar, checked against its schema.
 *
 * Scalars travel to the device as 1-element tensors, and the runtime's
 * next_int, next_float and next_longlong reinterpret the bytes without a
 * dtype check, so each --scalar must become exactly the dtype its kind
 * reads: int -> int32, float -> float32, long long -> int64.  A Scalar
 * (at::Scalar) keeps the tensor's type, so an integer literal becomes int64
 * (as torch.tensor(3) does) and any other number float32. */
#include "arguments.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <neuron/host_abi.h>

static int fail(int status, char error[ARGUMENTS_ERROR_SIZE], const char *format, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(int status, char error[ARGUMENTS_ERROR_SIZE], const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(error, ARGUMENTS_ERROR_SIZE, format, args);
	va_end(args);
	return status;
}

/* A whole decimal integer: optional sign, digits, nothing else. */
static int parse_integer(const char *text, long long *value)
{
	const char *digits = text + (text[0] == '-' || text[0] == '+');
	if (*digits < '0' || *digits > '9')
		return -1;
	char *end;
	errno = 0;
	long long parsed = strtoll(text, &end, 10);
	if (*end)
		return -1;
	if (errno == ERANGE)
		return -2;
	*value = parsed;
	return 0;
}

/* A whole number as strtod reads it (decimal, exponent, inf, nan); -2
 * when it is beyond the range of a double (1e400). */
static int parse_real(const char *text, double *value)
{
	char *end;
	if (!*text || *text == ' ')
		return -1;
	errno = 0;
	*value = strtod(text, &end);
	if (*end)
		return -1;
	return errno == ERANGE && isinf(*value) ? -2 : 0;
}

static int make_scalar(struct npy_array *array, enum npy_dtype dtype, const void *value)
{
	array->dtype = dtype;
	array->rank = 1;
	array->shape[0] = 1;
	if (npy_allocate(array) != 0)
		return -1;
	memcpy(array->data, value, npy_dtype_size(dtype));
	return 0;
}

static int build_scalar(const struct op_record *op, int index, const char *text,
                        struct npy_array *array, char error[ARGUMENTS_ERROR_SIZE])
{
	char what[256];
	op_argument_text(op, index, what, sizeof what);
	char kind = op->kinds[index];
	long long integer = 0;
	double real = 0;
	int integer_status = parse_integer(text, &integer);
	int made;
	if (kind == 'i' || kind == 'l') {
		if (integer_status == -1)
			return fail(2, error, "%s argument %d (%s): --scalar %s is not an integer", op->name,
			            index + 1, what, text);
		if (integer_status == -2 || (kind == 'i' && (integer < INT32_MIN || integer > INT32_MAX)))
			return fail(2, error, "%s argument %d (%s): --scalar %s is out of the %s range",
			            op->name, index + 1, what, text, kind == 'i' ? "int32" : "int64");
		if (kind == 'i') {
			int32_t narrow = (int32_t)integer;
			made = make_scalar(array, NPY_INT32, &narrow);
		} else {
			int64_t wide = integer;
			made = make_scalar(array, NPY_INT64, &wide);
		}
	} else if (kind == 'S' && integer_status != -1) {
		/* A whole number is an int64, as for long long. */
		if (integer_status == -2)
			return fail(2, error, "%s argument %d (%s): --scalar %s is out of the int64 range",
			            op->name, index + 1, what, text);
		int64_t wide = integer;
		made = make_scalar(array, NPY_INT64, &wide);
	} else {
		int real_status = parse_real(text, &real);
		if (real_status == -1)
			return fail(2, error, "%s argument %d (%s): --scalar %s is not a number", op->name,
			            index + 1, what, text);
		float single = (float)real;
		if (real_status == -2 || (isfinite(real) && !isfinite(single)))
			return fail(2, error, "%s argument %d (%s): --scalar %s is out of the float32 range",
			            op->name, index + 1, what, text);
		made = make_scalar(array, NPY_FLOAT32, &single);
	}
	if (made != 0)
		return fail(1, error, "out of memory");
	return 0;
}

int arguments_build(const struct op_record *op, const struct run_input *inputs, int count,
                    struct npy_array *arrays, char error[ARGUMENTS_ERROR_SIZE])
{
	int expected = (int)strlen(op->kinds);
	for (int i = 0; i < count; i++)
		memset(&arrays[i], 0, sizeof arrays[i]);
	if (count != expected)
		return fail(2, error, "%s expects %s; got %d argument%s", op->name, op->signature, count,
		            count == 1 ? "" : "s");
	for (int i = 0; i < count; i++) {
		char what[256];
		op_argument_text(op, i, what, sizeof what);
		int wants_tensor = op->kinds[i] == 'T';
		if (wants_tensor && inputs[i].is_scalar)
			return fail(2, error, "%s argument %d (%s) is a tensor: give it with --in FILE.npy, "
			                      "not --scalar %s", op->name, i + 1, what, inputs[i].text);
		if (!wants_tensor && !inputs[i].is_scalar)
			return fail(2, error, "%s argument %d (%s) is a number: give it with --scalar V, "
			                      "not --in %s", op->name, i + 1, what, inputs[i].text);
	}
	for (int i = 0; i < count; i++) {
		if (inputs[i].is_scalar) {
			int status = build_scalar(op, i, inputs[i].text, &arrays[i], error);
			if (status != 0)
				return status;
			continue;
		}
		char problem[NPY_ERROR_SIZE];
		if (npy_read_file(inputs[i].text, &arrays[i], problem) != 0)
			return fail(1, error, "%s", problem);
		if (arrays[i].rank == 0)
			return fail(1, error, "%s: a 0-dimensional array; a tensor argument needs at least "
			                      "1 dimension (save it with shape (1,))", inputs[i].text);
		if (arrays[i].rank > CUSTOMOP_HOST_MAX_RANK)
			return fail(1, error, "%s: %d dimensions; a device tensor has at most %d",
			            inputs[i].text, arrays[i].rank, CUSTOMOP_HOST_MAX_RANK);
	}
	return 0;
}
