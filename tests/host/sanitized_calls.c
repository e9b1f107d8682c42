/* sanitized_calls.c - calls ops of a host build through libruncustomop's C
 * API, one after another in one process, for test_sanitize.sh: what
 * rco_open says of a sanitized build, and that each call after a sanitizer
 * report works (and reports again).
 *
 *   sanitized_calls [--reopen] BUILD OP=TYPE:VALUES...
 *
 * TYPE is f32 or i32, VALUES a comma-separated list: the op's one tensor
 * argument (the output has its shape).  Prints "OP: ok" or "OP: " and each
 * line of the error, per call.  --reopen: open the build a second time
 * (its own copy of each core library), close the first, and call the
 * second, as custom_op.load() then load_library() of its bundle do.  Exit
 * status: 2 when rco_open fails, else 0. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runcustomop.h"

enum { MAX_VALUES = 64 };

static void print_message(const char *label, const char *message)
{
	printf("%s: %s\n", label, message);
}

/* Runs "OP=TYPE:V,V,..." once. */
static void run_one(rco_library *library, char *call)
{
	char *equals = strchr(call, '=');
	if (!equals || (strncmp(equals + 1, "f32:", 4) != 0 && strncmp(equals + 1, "i32:", 4) != 0)) {
		fprintf(stderr, "sanitized_calls: expected OP=f32:VALUES or OP=i32:VALUES, not %s\n", call);
		exit(1);
	}
	*equals = '\0';
	int is_float = equals[1] == 'f';
	union {
		float f[MAX_VALUES];
		int32_t i[MAX_VALUES];
	} in, out;
	int count = 0;
	for (char *value = strtok(equals + 5, ","); value && count < MAX_VALUES; value = strtok(NULL, ",")) {
		if (is_float)
			in.f[count++] = strtof(value, NULL);
		else
			in.i[count++] = (int32_t)strtol(value, NULL, 10);
	}
	struct rco_argument argument;
	memset(&argument, 0, sizeof argument);
	argument.type = RCO_ARGUMENT_TENSOR;
	argument.tensor.dtype = is_float ? RCO_FLOAT32 : RCO_INT32;
	argument.tensor.rank = 1;
	argument.tensor.sizes[0] = count;
	argument.tensor.strides[0] = 1;
	argument.tensor.data = &in;
	struct rco_tensor output = argument.tensor;
	output.data = &out;
	static struct rco_error error;
	int op = rco_op_index(library, call);
	if (rco_run(library, op, &argument, 1, &output, RCO_DEFAULT_TIMEOUT, &error) == 0)
		printf("%s: ok\n", call);
	else
		print_message(call, error.message);
}

int main(int argc, char **argv)
{
	int reopen = argc > 1 && strcmp(argv[1], "--reopen") == 0;
	if (argc < 2 + reopen) {
		fprintf(stderr, "usage: sanitized_calls [--reopen] BUILD OP=TYPE:VALUES...\n");
		return 1;
	}
	const char *build = argv[1 + reopen];
	static struct rco_error error;
	rco_library *library = NULL;
	if (rco_open(build, NULL, &library, &error) != 0) {
		print_message("rco_open", error.message);
		return 2;
	}
	if (reopen) {
		rco_library *first = library;
		if (rco_open(build, NULL, &library, &error) != 0) {
			print_message("rco_open again", error.message);
			return 2;
		}
		rco_close(first);
	}
	for (int i = 2 + reopen; i < argc; i++)
		run_one(library, argv[i]);
	rco_close(library);
	return 0;
}
