/* check.c - an op's arguments and output, checked against its schema and made ready for the cores. */
#include "check.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

/* The bytes a tensor may span: far beyond any machine's memory, and safe
 * from overflow in the runtime's arithmetic. */
#define TENSOR_BYTES_LIMIT (INT64_MAX / 2)

static int fail(struct rco_error *error, const struct op_record *op, int argument,
                const char *format, ...) __attribute__((format(printf, 4, 5)));

static int fail(struct rco_error *error, const struct op_record *op, int argument,
                const char *format, ...)
{
	char message[RCO_MESSAGE_SIZE];
	va_list args;
	va_start(args, format);
	vsnprintf(message, sizeof message, format, args);
	va_end(args);
	error_set(error, RCO_ERROR_ARGUMENT, op->name, "%s", message);
	error->argument = argument;
	return RCO_ERROR_ARGUMENT;
}

int check_argument_count(const struct op_record *op, int count, struct rco_error *error)
{
	int expected = (int)strlen(op->kinds);
	if (count != expected)
		return fail(error, op, -1, "%s expects %s; got %d argument%s", op->name, op->signature,
		            count, count == 1 ? "" : "s");
	return 0;
}

/* The device dtypes, in the order messages list them. */
static const struct rco_dtype_info dtypes[RCO_DTYPE_COUNT] = {
	{"float32", RCO_FLOAT32, 4}, {"bfloat16", RCO_BFLOAT16, 2}, {"float16", RCO_FLOAT16, 2},
	{"int32", RCO_INT32, 4},     {"int8", RCO_INT8, 1},         {"int64", RCO_INT64, 8},
	{"int16", RCO_INT16, 2},     {"uint8", RCO_UINT8, 1},
};

const struct rco_dtype_info *rco_device_dtype(int index)
{
	return index >= 0 && index < RCO_DTYPE_COUNT ? &dtypes[index] : NULL;
}

int rco_fill_unwritten(int dtype, void *data, size_t count)
{
	size_t size = check_dtype_size(dtype);
	if (size == 0)
		return RCO_ERROR_USAGE;
	unsigned char *bytes = data;
	if (dtype != RCO_FLOAT32 && dtype != RCO_FLOAT16 && dtype != RCO_BFLOAT16) {
		memset(bytes, 0xA5, count * size);
		return 0;
	}
	uint32_t single = 0x7fc00000u;
	uint16_t half = dtype == RCO_FLOAT16 ? 0x7e00u : 0x7fc0u;
	const void *nan = dtype == RCO_FLOAT32 ? (const void *)&single : (const void *)&half;
	for (size_t i = 0; i < count; i++)
		memcpy(bytes + i * size, nan, size);
	return 0;
}

size_t check_dtype_size(int dtype)
{
	for (int i = 0; i < RCO_DTYPE_COUNT; i++)
		if (dtypes[i].code == dtype)
			return (size_t)dtypes[i].size;
	return 0;
}

/* An argument's or the output's name in messages (check_describe), written
 * only when a message needs it: a call whose arguments pass formats none. */
struct described {
	const struct op_record *op;
	const char *label;
	int index;
	char text[RCO_LABEL_SIZE + 320];
};

static void describe_later(struct described *what, const struct op_record *op, const char *label,
                           int index)
{
	what->op = op;
	what->label = label;
	what->index = index;
}

static const char *described_text(struct described *what)
{
	check_describe(what->op, what->label, what->index, what->text, sizeof what->text);
	return what->text;
}

/* Checks one tensor; what names it: "relu argument 1 (Tensor x)" or "relu's output". */
static int check_tensor(const struct rco_tensor *tensor, int minimum_rank, struct described *what,
                        const struct op_record *op, int argument, struct rco_error *error)
{
	size_t size = check_dtype_size(tensor->dtype);
	if (size == 0)
		return fail(error, op, argument, "%s has dtype %d, which is not one of the device's 8 "
		            "dtypes (float32, bfloat16, float16, int32, int8, int64, int16, uint8)",
		            described_text(what), tensor->dtype);
	if (tensor->rank < minimum_rank || tensor->rank > RCO_MAX_RANK)
		return fail(error, op, argument, "%s has %d dimensions; a device tensor has %d to %d",
		            described_text(what), tensor->rank, minimum_rank, RCO_MAX_RANK);
	int64_t extent = 0; /* the farthest element, in elements */
	int empty = 0;
	for (int d = 0; d < tensor->rank; d++) {
		if (tensor->sizes[d] < 0)
			return fail(error, op, argument, "%s has size %lld in dimension %d; sizes are >= 0",
			            described_text(what), (long long)tensor->sizes[d], d);
		if (tensor->strides[d] < 0)
			return fail(error, op, argument, "%s has stride %lld in dimension %d; strides are "
			            ">= 0", described_text(what), (long long)tensor->strides[d], d);
		empty |= tensor->sizes[d] == 0;
	}
	for (int d = 0; d < tensor->rank && !empty; d++) {
		int64_t last = tensor->sizes[d] - 1;
		if (tensor->strides[d] > 0 && last > (TENSOR_BYTES_LIMIT / (int64_t)size - extent) /
		                                             tensor->strides[d])
			return fail(error, op, argument, "%s is too large", described_text(what));
		extent += last * tensor->strides[d];
	}
	if (!empty && !tensor->data)
		return fail(error, op, argument, "%s has no data (a NULL pointer)",
		            described_text(what));
	/* The runtime reads and writes a tensor's elements one after another
	 * from data: any other layout would give the kernel the wrong elements,
	 * and its writes would land outside the tensor.  A dimension of size 1
	 * may have any stride (it is never stepped over). */
	int64_t expected = 1;
	for (int d = tensor->rank - 1; d >= 0 && !empty; d--) {
		if (tensor->sizes[d] != 1 && tensor->strides[d] != expected)
			return fail(error, op, argument, "%s is not contiguous (dimension %d has stride %lld "
			            "where a contiguous tensor has %lld); pass a contiguous tensor",
			            described_text(what), d, (long long)tensor->strides[d], (long long)expected);
		if (d > 0)
			expected *= tensor->sizes[d]; /* within the extent checked above */
	}
	return 0;
}

int check_accept(const struct rco_tensor_description *tensor, int *copy)
{
	*copy = 0;
	if (!tensor->on_host)
		return CHECK_NOT_ON_HOST;
	if (!tensor->strided)
		return CHECK_NOT_STRIDED;
	if (check_dtype_size(tensor->dtype) == 0)
		return CHECK_NOT_A_DTYPE;
	if (tensor->rank < 0 || tensor->rank > RCO_MAX_RANK)
		return CHECK_TOO_MANY_DIMENSIONS;
	int64_t expected = 1;
	for (int d = tensor->rank - 1; d >= 0 && tensor->sizes && tensor->strides; d--) {
		if (tensor->sizes[d] == 0) {
			*copy = 0; /* no element: any layout is contiguous */
			break;
		}
		if (tensor->sizes[d] != 1 && tensor->strides[d] != expected)
			*copy = 1;
		expected *= tensor->sizes[d];
	}
	*copy |= tensor->computed != 0;
	return 0;
}

int check_refuse(const struct op_record *op, const char *label, int argument,
                 const struct rco_tensor_description *tensor, int problem,
                 struct rco_error *error)
{
	char what[RCO_LABEL_SIZE + 320];
	check_describe(op, label, argument, what, sizeof what);
	if (problem == CHECK_NOT_ON_HOST)
		return fail(error, op, argument, "%s is on %s; the emulated cores run on CPU tensors: "
		            "pass it with .cpu()", what, tensor->device ? tensor->device : "a device");
	if (problem == CHECK_NOT_STRIDED)
		return fail(error, op, argument, "%s is a %s tensor; the device takes dense (strided) "
		            "tensors: pass it with .to_dense()", what,
		            tensor->layout ? tensor->layout : "non-strided");
	if (problem == CHECK_NOT_A_DTYPE) {
		char names[128] = "";
		size_t used = 0;
		for (int i = 0; i < RCO_DTYPE_COUNT && used < sizeof names; i++)
			used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
			                         dtypes[i].name);
		return fail(error, op, argument, "%s has dtype %s, which the device does not have (its "
		            "dtypes: %s); convert it first, e.g. with .to(torch.float32)", what,
		            tensor->dtype_name ? tensor->dtype_name : "unknown", names);
	}
	return fail(error, op, argument, "%s has %d dimensions; a device tensor has at most %d: "
	            "reshape it", what, tensor->rank, RCO_MAX_RANK);
}

/* The bytes a tensor checked by check_tensor spans from its data. */
static uint64_t tensor_bytes(const struct rco_tensor *tensor)
{
	uint64_t count = 1;
	for (int d = 0; d < tensor->rank; d++)
		count *= (uint64_t)tensor->sizes[d];
	return count * check_dtype_size(tensor->dtype);
}

/* Whether two tensors share some of their memory but are not the same memory. */
static int overlap_in_part(const struct rco_tensor *a, const struct rco_tensor *b)
{
	uintptr_t a_begin = (uintptr_t)a->data, b_begin = (uintptr_t)b->data;
	uint64_t a_bytes = tensor_bytes(a), b_bytes = tensor_bytes(b);
	if (a_bytes == 0 || b_bytes == 0 || (a_begin == b_begin && a_bytes == b_bytes))
		return 0;
	return a_begin < b_begin ? b_begin - a_begin < a_bytes : a_begin - b_begin < b_bytes;
}

/* The number as the caller wrote it. */
static void number_text(const struct rco_argument *argument, char *out, size_t size)
{
	if (argument->text) {
		snprintf(out, size, "%s", argument->text);
	} else if (argument->type == RCO_ARGUMENT_INTEGER) {
		snprintf(out, size, "%lld", argument->integer);
	} else {
		snprintf(out, size, "%.15g", argument->real);
		if (strtod(out, NULL) != argument->real)
			snprintf(out, size, "%.17g", argument->real);
	}
}

static void make_scalar(struct customop_host_tensor *tensor, int dtype, void *bytes,
                        const void *value, size_t size)
{
	memset(tensor, 0, sizeof *tensor);
	tensor->dtype = dtype;
	tensor->rank = 1;
	tensor->sizes[0] = 1;
	tensor->strides[0] = 1;
	memcpy(bytes, value, size);
	tensor->data = bytes;
}

/* Converts a number by its kind into a 1-element tensor. */
static int convert_number(const struct op_record *op, int index, struct described *what,
                          const struct rco_argument *argument, struct customop_host_tensor *tensor,
                          void *bytes, struct rco_error *error)
{
	char kind = op->kinds[index];
	char text[128];
	number_text(argument, text, sizeof text);
	int integer = argument->type == RCO_ARGUMENT_INTEGER;
	double real = argument->real;
	if (argument->type == RCO_ARGUMENT_LARGE_INTEGER && kind != 'f')
		return fail(error, op, index, "%s: %s is out of the %s range", described_text(what),
		            text, kind == 'i' ? "int32" : "int64");
	if (kind == 'i' || kind == 'l') {
		if (!integer) {
			/* A whole number too large for an integer (1e30) is out of range;
			 * any other real is not an integer. */
			double bound = kind == 'i' ? 2147483648.0 : 9223372036854775808.0;
			if (isfinite(real) && real == floor(real) && (real >= bound || real < -bound))
				return fail(error, op, index, "%s: %s is out of the %s range",
				            described_text(what), text, kind == 'i' ? "int32" : "int64");
			return fail(error, op, index, "%s: %s is not an integer", described_text(what),
			            text);
		}
		if (kind == 'i') {
			if (argument->integer < INT32_MIN || argument->integer > INT32_MAX)
				return fail(error, op, index, "%s: %s is out of the int32 range",
				            described_text(what), text);
			int32_t narrow = (int32_t)argument->integer;
			make_scalar(tensor, RCO_INT32, bytes, &narrow, sizeof narrow);
		} else {
			int64_t wide = argument->integer;
			make_scalar(tensor, RCO_INT64, bytes, &wide, sizeof wide);
		}
		return 0;
	}
	if (kind == 'S' && integer) {
		int64_t wide = argument->integer;
		make_scalar(tensor, RCO_INT64, bytes, &wide, sizeof wide);
		return 0;
	}
	if (integer)
		real = (double)argument->integer;
	float single = (float)real;
	if (isfinite(real) && !isfinite(single))
		return fail(error, op, index, "%s: %s is out of the float32 range",
		            described_text(what), text);
	make_scalar(tensor, RCO_FLOAT32, bytes, &single, sizeof single);
	return 0;
}

size_t check_describe(const struct op_record *op, const char *label, int index, char *text,
                      size_t size)
{
	int length;
	if (index < 0) {
		length = snprintf(text, size, "%s's output", label);
	} else {
		char name[256];
		op_argument_text(op, index, name, sizeof name);
		length = snprintf(text, size, "%s argument %d (%s)", label, index + 1, name);
	}
	return length < 0 ? 0 : (size_t)length;
}

int check_arguments(const struct op_record *op, const struct rco_argument *arguments, int count,
                    const struct rco_tensor *output, struct customop_host_tensor *args,
                    struct check_scalars *scalars, struct customop_host_tensor *host_output,
                    const char *label, struct rco_error *error)
{
	int status = check_argument_count(op, count, error);
	if (status != 0)
		return status;
	if (count > RCO_MAX_ARGUMENTS)
		return fail(error, op, -1, "%s has %d arguments; the device passes at most %d", label,
		            count, RCO_MAX_ARGUMENTS);
	if (count > 0 && !arguments)
		return fail(error, op, -1, "%s: the arguments are missing (a NULL pointer)", label);
	for (int i = 0; i < count; i++) {
		struct described what;
		describe_later(&what, op, label, i);
		const struct rco_argument *argument = &arguments[i];
		int wants_tensor = op->kinds[i] == 'T';
		if (argument->type != RCO_ARGUMENT_TENSOR && argument->type != RCO_ARGUMENT_INTEGER &&
		    argument->type != RCO_ARGUMENT_REAL && argument->type != RCO_ARGUMENT_LARGE_INTEGER)
			return fail(error, op, i, "%s has an unknown type %d", described_text(&what),
			            (int)argument->type);
		if (wants_tensor && argument->type != RCO_ARGUMENT_TENSOR) {
			char text[128];
			number_text(argument, text, sizeof text);
			return fail(error, op, i, "%s is a tensor, but the number %s was given",
			            described_text(&what), text);
		}
		if (!wants_tensor && argument->type == RCO_ARGUMENT_TENSOR)
			return fail(error, op, i, "%s is a number, but a tensor was given",
			            described_text(&what));
		if (wants_tensor) {
			status = check_tensor(&argument->tensor, 1, &what, op, i, error);
			if (status != 0)
				return status;
			memcpy(&args[i], &argument->tensor, sizeof args[i]);
		} else {
			status = convert_number(op, i, &what, argument, &args[i], scalars->bytes[i], error);
			if (status != 0)
				return status;
		}
	}
	if (!output)
		return fail(error, op, -1, "%s: no output tensor given", label);
	struct described what;
	describe_later(&what, op, label, -1);
	status = check_tensor(output, 0, &what, op, -1, error);
	if (status != 0)
		return status;
	/* The kernel reads its inputs while it writes the output: an output one
	 * element past an input would read elements already written. */
	for (int i = 0; i < count; i++) {
		if (op->kinds[i] != 'T' || !overlap_in_part(&arguments[i].tensor, output))
			continue;
		char input[RCO_LABEL_SIZE + 320];
		check_describe(op, label, i, input, sizeof input);
		return fail(error, op, i, "%s and %s share some of their memory: the cores would read "
		            "elements they have already written; pass an output of its own, or the input "
		            "itself", input, described_text(&what));
	}
	memcpy(host_output, output, sizeof *host_output);
	return 0;
}
