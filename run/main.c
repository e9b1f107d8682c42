/* main.c - run-custom-op: runs a host-built custom op on .npy inputs.
 *
 * Steps: read the command line; find the libraries and the .ops record;
 * check the arguments against the op's schema; load each core's library;
 * run the op on every core at once into one output; write and compare it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <neuron/host_abi.h>

#include "arguments.h"
#include "compare.h"
#include "cores.h"
#include "fault.h"
#include "npy.h"
#include "opsfile.h"
#include "options.h"

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

static int host_dtype(enum npy_dtype dtype)
{
	switch (dtype) {
	case NPY_FLOAT32: return CUSTOMOP_HOST_FLOAT32;
	case NPY_BFLOAT16: return CUSTOMOP_HOST_BFLOAT16;
	case NPY_FLOAT16: return CUSTOMOP_HOST_FLOAT16;
	case NPY_INT32: return CUSTOMOP_HOST_INT32;
	case NPY_INT8: return CUSTOMOP_HOST_INT8;
	case NPY_INT64: return CUSTOMOP_HOST_INT64;
	case NPY_INT16: return CUSTOMOP_HOST_INT16;
	case NPY_UINT8: return CUSTOMOP_HOST_UINT8;
	}
	return -1;
}

/* Describes array as the device sees a tensor: C-order strides in elements. */
static void to_host_tensor(const struct npy_array *array, struct customop_host_tensor *tensor)
{
	memset(tensor, 0, sizeof *tensor);
	tensor->dtype = host_dtype(array->dtype);
	tensor->rank = array->rank;
	int64_t stride = 1;
	for (int i = array->rank - 1; i >= 0; i--) {
		tensor->sizes[i] = (int64_t)array->shape[i];
		tensor->strides[i] = stride;
		stride *= (int64_t)array->shape[i];
	}
	tensor->data = array->data;
}

/* Fills the output so that elements no core writes stand out: NaN for the
 * floating dtypes, bytes 0xA5 for the integer ones. */
static void poison(struct npy_array *array)
{
	size_t size = npy_dtype_size(array->dtype);
	unsigned char *bytes = array->data;
	if (!npy_dtype_is_float(array->dtype)) {
		memset(bytes, 0xA5, array->count * size);
		return;
	}
	for (size_t i = 0; i < array->count; i++) {
		if (array->dtype == NPY_FLOAT32) {
			uint32_t nan = 0x7fc00000;
			memcpy(bytes + i * 4, &nan, 4);
		} else {
			uint16_t nan = array->dtype == NPY_FLOAT16 ? 0x7e00 : 0x7fc0;
			memcpy(bytes + i * 2, &nan, 2);
		}
	}
}

static int file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static char *path_with_suffix(const char *base, const char *suffix)
{
	size_t size = strlen(base) + strlen(suffix) + 1;
	char *path = malloc(size);
	if (!path) {
		fputs("run-custom-op: out of memory\n", stderr);
		exit(EXIT_FAILED);
	}
	snprintf(path, size, "%s%s", base, suffix);
	return path;
}

/* Picks 1 or 8 cores from --cores and the files present; returns 0 or an exit status. */
static int choose_core_count(const struct run_options *options, int *core_count)
{
	const char *base = options->library;
	char *single = path_with_suffix(base, ".so");
	char *first_core = path_with_suffix(base, "_cpu0.so");
	int have_single = file_exists(single), have_multi = file_exists(first_core);
	int status = 0;
	if (options->cores == 8 || (options->cores == 0 && have_multi)) {
		*core_count = 8;
		if (!have_multi) {
			fprintf(stderr, "run-custom-op: %s does not exist: --cores 8 needs a multicore "
			        "host build%s\n", first_core,
			        have_single ? " (this one is single-core: give --cores 1)" : "");
			status = EXIT_FAILED;
		}
	} else {
		*core_count = 1;
		if (!have_single && options->cores == 1) {
			fprintf(stderr, "run-custom-op: %s does not exist: --cores 1 needs a single-core "
			        "host build%s\n", single,
			        have_multi ? " (this one is multicore: leave out --cores)" : "");
			status = EXIT_FAILED;
		} else if (!have_single) {
			fprintf(stderr, "run-custom-op: no host build at %s: neither %s nor %s exists; "
			        "build it with build-custom-op --target host\n", base, single, first_core);
			status = EXIT_FAILED;
		}
	}
	free(single);
	free(first_core);
	return status;
}

/* Picks the op from --op, or the only one; returns NULL after reporting. */
static const struct op_record *choose_op(const struct run_options *options,
                                         const struct ops_file *ops, const char *ops_path,
                                         int *status)
{
	char names[1024];
	ops_list_names(ops, names, sizeof names);
	if (ops->count == 0) {
		fprintf(stderr, "run-custom-op: %s lists no ops\n", ops_path);
		*status = EXIT_FAILED;
		return NULL;
	}
	if (options->op) {
		const struct op_record *op = ops_find(ops, options->op);
		if (!op) {
			fprintf(stderr, "run-custom-op: --op %s: %s has no such op (its ops: %s)\n",
			        options->op, options->library, names);
			*status = EXIT_USAGE;
		}
		return op;
	}
	if (ops->count > 1) {
		fprintf(stderr, "run-custom-op: %s has %d ops (%s); choose one with --op NAME\n",
		        options->library, ops->count, names);
		*status = EXIT_USAGE;
		return NULL;
	}
	return &ops->ops[0];
}

/* Checks that every library registers the ops the record lists, in order. */
static int check_registered_ops(const struct core_set *cores, const struct ops_file *ops,
                                const char *ops_path)
{
	for (int i = 0; i < cores->count; i++) {
		const struct core_library *library = &cores->libraries[i];
		int same = library->op_count == ops->count;
		for (int k = 0; same && k < ops->count; k++)
			same = strcmp(library->op_names[k], ops->ops[k].name) == 0;
		if (same)
			continue;
		char listed[1024], registered[1024] = "";
		ops_list_names(ops, listed, sizeof listed);
		size_t used = 0;
		for (int k = 0; k < library->op_count && used < sizeof registered; k++)
			used += (size_t)snprintf(registered + used, sizeof registered - used, "%s%s",
			                         k ? ", " : "", library->op_names[k]);
		fprintf(stderr, "run-custom-op: %s lists the ops (%s) but %s registers (%s); the "
		        "record is stale: rebuild with build-custom-op --target host\n", ops_path,
		        listed, library->path, registered);
		return -1;
	}
	return 0;
}

/* The output's shape and dtype from the options, else the first tensor input. */
static int make_output(const struct run_options *options, const struct op_record *op,
                       const struct npy_array *arguments, struct npy_array *output)
{
	const struct npy_array *model = NULL;
	for (int i = 0; op->kinds[i] && !model; i++)
		if (op->kinds[i] == 'T')
			model = &arguments[i];
	memset(output, 0, sizeof *output);
	if (!model && (!options->have_out_shape || !options->have_out_dtype)) {
		fprintf(stderr, "run-custom-op: %s has no tensor argument to take the output's shape "
		        "and dtype from; give --out-shape and --out-dtype\n", op->name);
		return EXIT_USAGE;
	}
	output->dtype = options->have_out_dtype ? options->out_dtype : model->dtype;
	if (options->have_out_shape) {
		output->rank = options->out_rank;
		memcpy(output->shape, options->out_shape, sizeof options->out_shape);
	} else {
		output->rank = model->rank;
		memcpy(output->shape, model->shape, sizeof model->shape);
	}
	if (npy_allocate(output) != 0) {
		fprintf(stderr, "run-custom-op: out of memory for the output\n");
		return EXIT_FAILED;
	}
	poison(output);
	return 0;
}

/* Runs the op and reports each core that failed; returns an exit status. */
static int run_op(const struct run_options *options, struct core_set *cores,
                  const struct op_record *op, const struct npy_array *arguments, int count,
                  struct npy_array *output)
{
	struct customop_host_tensor *args = calloc((size_t)count + 1, sizeof *args);
	if (!args) {
		fputs("run-custom-op: out of memory\n", stderr);
		return EXIT_FAILED;
	}
	for (int i = 0; i < count; i++)
		to_host_tensor(&arguments[i], &args[i]);
	struct customop_host_tensor output_tensor;
	to_host_tensor(output, &output_tensor);
	if (fault_install_handlers() != 0) {
		perror("run-custom-op: cannot install the fault handlers");
		free(args);
		return EXIT_FAILED;
	}
	struct core_result results[CORES_MAX];
	int failed = cores_run(cores, op->name, args, count, &output_tensor, options->core_stack,
	                       results);
	free(args);
	int faulted = 0;
	for (int i = 0; i < cores->count; i++) {
		if (results[i].outcome == CORE_DONE)
			continue;
		fprintf(stderr, "run-custom-op: %s\n", results[i].message);
		faulted |= results[i].outcome == CORE_FAULTED;
	}
	if (faulted) {
		/* An abandoned core's library is in no state to run its destructors. */
		fflush(NULL);
		_exit(EXIT_FAILED);
	}
	return failed ? EXIT_FAILED : 0;
}

static int finish_output(const struct run_options *options, const struct npy_array *output)
{
	char error[NPY_ERROR_SIZE];
	if (options->out && npy_write_file(options->out, output, error) != 0) {
		fprintf(stderr, "run-custom-op: %s\n", error);
		return EXIT_FAILED;
	}
	if (!options->expect)
		return 0;
	struct npy_array expected;
	if (npy_read_file(options->expect, &expected, error) != 0) {
		fprintf(stderr, "run-custom-op: %s\n", error);
		return EXIT_FAILED;
	}
	char report[COMPARE_REPORT_SIZE];
	int differs = compare_arrays(output, &expected, options->expect, options->rtol,
	                             options->atol, report);
	npy_free(&expected);
	if (differs) {
		fprintf(stderr, "run-custom-op: %s\n", report);
		return EXIT_FAILED;
	}
	return 0;
}

static int has_suffix(const char *text, const char *suffix)
{
	size_t length = strlen(text), suffix_length = strlen(suffix);
	return length >= suffix_length && strcmp(text + length - suffix_length, suffix) == 0;
}

int main(int argc, char **argv)
{
	struct run_options options;
	char error[OPTIONS_ERROR_SIZE > ARGUMENTS_ERROR_SIZE ? OPTIONS_ERROR_SIZE
	                                                     : ARGUMENTS_ERROR_SIZE];
	if (options_parse(argc, argv, &options, error) != 0) {
		fprintf(stderr, "run-custom-op: %s\n", error);
		options_free(&options);
		return EXIT_USAGE;
	}
	if (options.help) {
		options_print_help();
		options_free(&options);
		return 0;
	}
	if (has_suffix(options.library, ".so") || has_suffix(options.library, ".ops")) {
		fprintf(stderr, "run-custom-op: %s: name the build without a suffix, as "
		        "BUILD_DIR/NAME (e.g. build/relu for build/relu.so)\n", options.library);
		options_free(&options);
		return EXIT_USAGE;
	}

	int core_count = 1;
	int status = choose_core_count(&options, &core_count);
	struct ops_file ops = {NULL, 0};
	char *ops_path = path_with_suffix(options.library, ".ops");
	const struct op_record *op = NULL;
	struct npy_array *arguments = NULL;
	struct npy_array output = {0};
	struct core_set cores = {0};
	char ops_error[OPSFILE_ERROR_SIZE];
	if (status == 0) {
		int read = ops_read_file(ops_path, &ops, ops_error);
		if (read == 1)
			fprintf(stderr, "run-custom-op: %s not found: %s was not built for the host target "
			        "by build-custom-op; build it with build-custom-op --target host\n",
			        ops_path, options.library);
		else if (read != 0)
			fprintf(stderr, "run-custom-op: %s\n", ops_error);
		status = read == 0 ? 0 : EXIT_FAILED;
	}
	if (status == 0)
		op = choose_op(&options, &ops, ops_path, &status);
	if (status == 0) {
		arguments = calloc((size_t)options.input_count + 1, sizeof *arguments);
		status = arguments ? arguments_build(op, options.inputs, options.input_count, arguments,
		                                     error)
		                   : EXIT_FAILED;
		if (status != 0)
			fprintf(stderr, "run-custom-op: %s\n", arguments ? error : "out of memory");
	}
	if (status == 0)
		status = make_output(&options, op, arguments, &output);
	if (status == 0) {
		if (cores_open(&cores, options.library, core_count, error, sizeof error) != 0) {
			fprintf(stderr, "run-custom-op: %s\n", error);
			status = EXIT_FAILED;
		} else if (check_registered_ops(&cores, &ops, ops_path) != 0) {
			status = EXIT_FAILED;
		}
	}
	if (status == 0)
		status = run_op(&options, &cores, op, arguments, options.input_count, &output);
	if (status == 0)
		status = finish_output(&options, &output);

	cores_close(&cores);
	npy_free(&output);
	for (int i = 0; arguments && i < options.input_count; i++)
		npy_free(&arguments[i]);
	free(arguments);
	ops_free(&ops);
	free(ops_path);
	options_free(&options);
	return status;
}
