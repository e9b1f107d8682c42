/* arguments.c - the op's arguments from --in and --scalar, for libruncustomop. */
#include "arguments.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "opsfile.h"

/* A whole decimal integer: optional sign, digits, nothing else; -2 when
 * it is beyond the int64 range. */
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


void arguments_tensor_of(const struct npy_array *array, struct rco_tensor *tensor)
{
	memset(tensor, 0, sizeof *tensor);
	/* npy numbers its dtypes in the order of the library's table
	 * (tests/run/test_dtypes checks). */
	tensor->dtype = rco_device_dtype((int)array->dtype)->code;
	tensor->rank = array->rank;
	int64_t stride = 1;
	for (int i = array->rank - 1; i >= 0; i--) {
		tensor->sizes[i] = (int64_t)array->shape[i];
		tensor->strides[i] = stride;
		stride *= (int64_t)array->shape[i];
	}
	tensor->data = array->data;
}

/* "Scalar a" for argument index of op, as the record writes it. */
static void argument_name(const rco_library *library, int op, int index, char *out, size_t size)
{
	struct op_record record = {(char *)rco_op_name(library, op), (char *)rco_op_kinds(library, op),
	                           (char *)rco_op_signature(library, op)};
	op_argument_text(&record, index, out, size);
}

int arguments_build(const rco_library *library, int op, const struct run_input *inputs, int count,
                    struct npy_array *arrays, struct rco_argument *arguments,
                    struct rco_error *error)
{
	const char *name = rco_op_name(library, op), *kinds = rco_op_kinds(library, op);
	for (int i = 0; i < count; i++) {
		memset(&arrays[i], 0, sizeof arrays[i]);
		memset(&arguments[i], 0, sizeof arguments[i]);
	}
	if (rco_check_argument_count(library, op, count, error) != 0)
		return error->status;
	for (int i = 0; i < count; i++) {
		char what[256];
		argument_name(library, op, i, what, sizeof what);
		int wants_tensor = kinds[i] == 'T';
		if (wants_tensor && inputs[i].is_scalar)
			return error_set(error, RCO_ERROR_ARGUMENT, NULL, "%s argument %d (%s) is "
			                 "a tensor: give it with --in FILE.npy, not --scalar %s",
			                 name, i + 1, what, inputs[i].text);
		if (!wants_tensor && !inputs[i].is_scalar)
			return error_set(error, RCO_ERROR_ARGUMENT, NULL, "%s argument %d (%s) is "
			                 "a number: give it with --scalar V, not --in %s", name,
			                 i + 1, what, inputs[i].text);
	}
	for (int i = 0; i < count; i++) {
		struct rco_argument *argument = &arguments[i];
		if (inputs[i].is_scalar) {
			char what[256];
			argument_name(library, op, i, what, sizeof what);
			int integer = parse_integer(inputs[i].text, &argument->integer);
			int real = parse_real(inputs[i].text, &argument->real);
			if (integer == 0)
				argument->type = RCO_ARGUMENT_INTEGER;
			else if (integer == -2)
				argument->type = RCO_ARGUMENT_LARGE_INTEGER; /* real holds it, rounded */
			else if (real == 0)
				argument->type = RCO_ARGUMENT_REAL;
			else if (real == -2 && kinds[i] != 'i' && kinds[i] != 'l')
				return error_set(error, RCO_ERROR_ARGUMENT, NULL, "%s argument %d "
				                 "(%s): --scalar %s is out of the float32 range",
				                 name, i + 1, what, inputs[i].text);
			else
				return error_set(error, RCO_ERROR_ARGUMENT, NULL, "%s argument %d "
				                 "(%s): --scalar %s is not %s", name, i + 1, what,
				                 inputs[i].text,
				                 kinds[i] == 'i' || kinds[i] == 'l' ? "an integer" : "a number");
			size_t size = strlen(inputs[i].text) + sizeof "--scalar ";
			char *text = malloc(size);
			if (!text)
				return error_set(error, RCO_ERROR_SYSTEM, NULL, "out of memory");
			snprintf(text, size, "--scalar %s", inputs[i].text);
			argument->text = text;
			continue;
		}
		if (npy_read_file(inputs[i].text, &arrays[i], error) != 0)
			return error->status;
		if (arrays[i].rank == 0)
			return error_set(error, RCO_ERROR_SYSTEM, NULL, "%s: a 0-dimensional "
			                 "array; a tensor argument needs at least 1 dimension "
			                 "(save it with shape (1,))", inputs[i].text);
		if (arrays[i].rank > RCO_MAX_RANK)
			return error_set(error, RCO_ERROR_SYSTEM, NULL, "%s: %d dimensions; a "
			                 "device tensor has at most %d", inputs[i].text,
			                 arrays[i].rank, RCO_MAX_RANK);
		argument->type = RCO_ARGUMENT_TENSOR;
		arguments_tensor_of(&arrays[i], &argument->tensor);
	}
	return 0;
}

void arguments_free(struct rco_argument *arguments, int count)
{
	for (int i = 0; arguments && i < count; i++) {
		free((char *)arguments[i].text);
		arguments[i].text = NULL;
	}
}
