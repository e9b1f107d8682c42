/* options.c - the command line of run-custom-op. */
#include "options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <neuron/host_abi.h>

#include "errors.h"
#include "runcustomop.h"

/* The --core-stack bounds: one page at least; a GiB is far beyond the 4 MiB
 * the device's STACK_SIZE allows. */
#define CORE_STACK_MIN 4096
#define CORE_STACK_MAX (1024UL * 1024 * 1024)
/* About 31 years: anything longer is a mistake. */
#define TIMEOUT_MAX 1e9

void options_print_help(void)
{
	printf(
		"usage: run-custom-op [OPTION]... BUILD_DIR/NAME\n"
		"Runs a custom op built by build-custom-op --target host on .npy inputs,\n"
		"on the emulated GPSIMD cores (eight, or one).\n"
		"\n"
		"  --in FILE.npy       the next argument is a tensor read from FILE.npy\n"
		"  --scalar V          the next argument is the number V, converted to the\n"
		"                      kind the schema gives it (Scalar: int64 when V is an\n"
		"                      integer, else float32; int: int32; float: float32;\n"
		"                      long long: int64)\n"
		"  --op NAME           the op to run, by its kernel function's name (may be\n"
		"                      left out when there is one)\n"
		"  --cores 1|8         1 loads NAME.so, 8 loads NAME_cpu0.so .. NAME_cpu7.so\n"
		"                      (default: 8 when NAME_cpu0.so exists, else 1)\n"
		"  --out FILE.npy      write the output tensor to FILE.npy\n"
		"  --out-shape D,D,..  the output shape (default: the first tensor input's)\n"
		"  --out-dtype T       float32, bfloat16, float16, int32, int8, int64, int16\n"
		"                      or uint8 (default: the first tensor input's)\n"
		"  --expect FILE.npy   compare the output with FILE.npy, as numpy.allclose:\n"
		"                      |out - expect| <= atol + rtol * |expect|; integers exactly\n"
		"  --rtol R, --atol A  tolerances for --expect (default 1e-5 and 1e-8)\n"
		"  --core-stack BYTES  the emulated core stack (default %d)\n"
		"  --timeout SECONDS   give up on a kernel that runs longer, and name the\n"
		"                      cores that were still running (default: no limit);\n"
		"                      time the process is stopped (Ctrl-Z) is not counted\n"
		"  --output-checks error|warn|off\n"
		"                      what output elements written by no core, written by\n"
		"                      two cores, or read by one core while another writes\n"
		"                      them are: errors (the default, or $" RCO_OUTPUT_CHECKS_VARIABLE "),\n"
		"                      warnings, or not checked\n"
		"  --profile FILE      write the op's profile (counts per core, estimated\n"
		"                      device time by kind, and hints: what to change, with\n"
		"                      what it saves) to FILE as JSON, and a table to stderr\n"
		"  --profile-svg FILE  draw the estimated time per core, by kind, as SVG\n"
		"  -h, --help          show this help\n"
		"  --version           show the version\n"
		"\n"
		"The --in and --scalar options, in order, are the op's arguments; they are\n"
		"checked against the schema recorded in BUILD_DIR/NAME.ops.\n"
		"\n"
		"Example:\n"
		"  build-custom-op --target host --multicore --name relu \\\n"
		"      --op 'my_ops::relu(Tensor x) -> Tensor' relu.cpp\n"
		"  run-custom-op --in x.npy --out y.npy --expect want.npy build/relu\n"
		"\n"
		"Exit status: 0 success, 1 the op failed or the output differs, 2 usage error.\n"
		"See run-custom-op(1).\n",
		CUSTOMOP_HOST_DEFAULT_CORE_STACK);
}

/* A decimal number without sign, suffix or spaces. */
static int parse_unsigned(const char *text, unsigned long long maximum, unsigned long long *value)
{
	if (text[0] < '0' || text[0] > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long parsed = strtoull(text, &end, 10);
	if (errno || *end || parsed > maximum)
		return -1;
	*value = parsed;
	return 0;
}

static int parse_tolerance(const char *option, const char *text, double *value,
                           struct rco_error *error)
{
	char *end;
	errno = 0;
	double parsed = strtod(text, &end);
	if (end == text || *end || errno || !isfinite(parsed) || parsed < 0)
		return error_fail(error, RCO_ERROR_USAGE, "%s %s: expected a finite number >= 0, "
		                  "e.g. %s 1e-6", option, text, option);
	*value = parsed;
	return 0;
}

static int parse_timeout(const char *text, double *value, struct rco_error *error)
{
	char *end;
	errno = 0;
	double parsed = text[0] >= '0' && text[0] <= '9' ? strtod(text, &end) : 0;
	if (text[0] < '0' || text[0] > '9' || *end || errno || !(parsed > 0) || parsed > TIMEOUT_MAX)
		return error_fail(error, RCO_ERROR_USAGE, "--timeout %s: expected a number of "
		                  "seconds above 0 (at most %g), e.g. --timeout 2.5", text,
		                  TIMEOUT_MAX);
	*value = parsed;
	return 0;
}

static int parse_shape(const char *text, struct run_options *options,
                       struct rco_error *error)
{
	const char *at = text;
	options->out_rank = 0;
	for (;;) {
		char digits[32];
		size_t length = strcspn(at, ",");
		unsigned long long dimension;
		int whole_number = length > 0 && strspn(at, "0123456789") >= length;
		if (length == 0 || (length >= sizeof digits && !whole_number))
			goto bad;
		if (length < sizeof digits) {
			memcpy(digits, at, length);
			digits[length] = '\0';
		}
		if (length >= sizeof digits || parse_unsigned(digits, UINT32_MAX, &dimension) != 0) {
			if (!whole_number)
				goto bad;
			return error_fail(error, RCO_ERROR_USAGE, "--out-shape %s: dimension %d is "
			                  "%.*s: a dimension is at most 4294967295 (2^32-1)", text,
			                  options->out_rank, (int)length, at);
		}
		if (options->out_rank == OPTIONS_MAX_OUT_RANK)
			return error_fail(error, RCO_ERROR_USAGE, "--out-shape %s: a tensor has at "
			                  "most %d dimensions", text, OPTIONS_MAX_OUT_RANK);
		options->out_shape[options->out_rank++] = dimension;
		at += length;
		if (*at == '\0')
			return 0;
		at++;
	}
bad:
	return error_fail(error, RCO_ERROR_USAGE, "--out-shape %s: expected dimensions separated "
	                  "by commas, e.g. --out-shape 4,1024", text);
}

static int add_input(struct run_options *options, int is_scalar, const char *text,
                     struct rco_error *error)
{
	struct run_input *grown = realloc(options->inputs,
	                                  (size_t)(options->input_count + 1) * sizeof *grown);
	if (!grown)
		return error_fail(error, RCO_ERROR_SYSTEM, "out of memory");
	options->inputs = grown;
	options->inputs[options->input_count].is_scalar = is_scalar;
	options->inputs[options->input_count].text = text;
	options->input_count++;
	return 0;
}

static const char *const value_options[] = {
	"--cores", "--op", "--in", "--scalar", "--out", "--out-shape", "--out-dtype",
	"--expect", "--rtol", "--atol", "--core-stack", "--timeout", "--output-checks", "--profile",
	"--profile-svg", NULL
};

/* Handles one option that takes a value. */
static int apply_option(struct run_options *options, const char *name, const char *value,
                        unsigned *given, struct rco_error *error)
{
	int index = 0;
	while (strcmp(value_options[index], name) != 0)
		index++;
	int repeatable = strcmp(name, "--in") == 0 || strcmp(name, "--scalar") == 0;
	if (!repeatable && (*given & (1u << index)))
		return error_fail(error, RCO_ERROR_USAGE, "%s given twice", name);
	*given |= 1u << index;

	unsigned long long number;
	if (strcmp(name, "--cores") == 0) {
		if (strcmp(value, "1") != 0 && strcmp(value, "8") != 0)
			return error_fail(error, RCO_ERROR_USAGE, "--cores %s: expected 1 or 8",
			                  value);
		options->cores = value[0] - '0';
	} else if (strcmp(name, "--op") == 0) {
		options->op = value;
	} else if (strcmp(name, "--in") == 0) {
		return add_input(options, 0, value, error);
	} else if (strcmp(name, "--scalar") == 0) {
		return add_input(options, 1, value, error);
	} else if (strcmp(name, "--out") == 0) {
		options->out = value;
	} else if (strcmp(name, "--out-shape") == 0) {
		options->have_out_shape = 1;
		return parse_shape(value, options, error);
	} else if (strcmp(name, "--out-dtype") == 0) {
		options->have_out_dtype = 1;
		if (npy_dtype_from_name(value, &options->out_dtype) != 0)
			return error_fail(error, RCO_ERROR_USAGE, "--out-dtype %s: expected "
			                  "float32, bfloat16, float16, int32, int8, int64, int16 "
			                  "or uint8", value);
	} else if (strcmp(name, "--expect") == 0) {
		options->expect = value;
	} else if (strcmp(name, "--rtol") == 0) {
		return parse_tolerance(name, value, &options->rtol, error);
	} else if (strcmp(name, "--atol") == 0) {
		return parse_tolerance(name, value, &options->atol, error);
	} else if (strcmp(name, "--timeout") == 0) {
		return parse_timeout(value, &options->timeout, error);
	} else if (strcmp(name, "--output-checks") == 0) {
		static const char *const modes[] = {"error", "warn", "off"};
		for (int mode = 0; mode < 3; mode++)
			if (strcmp(value, modes[mode]) == 0)
				options->output_checks = RCO_OUTPUT_CHECKS_ERROR + mode;
		if (!options->output_checks)
			return error_fail(error, RCO_ERROR_USAGE, "--output-checks %s: expected "
			                  "error, warn or off", value);
	} else if (strcmp(name, "--profile") == 0) {
		options->profile = value;
	} else if (strcmp(name, "--profile-svg") == 0) {
		options->profile_svg = value;
	} else {
		if (parse_unsigned(value, CORE_STACK_MAX, &number) != 0 || number < CORE_STACK_MIN)
			return error_fail(error, RCO_ERROR_USAGE, "--core-stack %s: expected a "
			                  "number of bytes from %d to %lu, e.g. --core-stack 65536",
			                  value, CORE_STACK_MIN, CORE_STACK_MAX);
		options->core_stack = (size_t)number;
	}
	return 0;
}

int options_parse(int argc, char **argv, struct run_options *options,
                  struct rco_error *error)
{
	memset(options, 0, sizeof *options);
	options->rtol = 1e-5;
	options->atol = 1e-8;
	unsigned given = 0;
	int only_operands = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (only_operands || arg[0] != '-' || strcmp(arg, "-") == 0) {
			if (options->library)
				return error_fail(error, RCO_ERROR_USAGE, "extra argument '%s': "
				                  "give one BUILD_DIR/NAME", arg);
			options->library = arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			only_operands = 1;
			continue;
		}
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			options->help = 1;
			continue;
		}
		if (strcmp(arg, "--version") == 0) {
			options->version = 1;
			continue;
		}
		char name[32];
		const char *equals = strchr(arg, '=');
		size_t name_length = equals ? (size_t)(equals - arg) : strlen(arg);
		int known = 0;
		if (name_length < sizeof name) {
			memcpy(name, arg, name_length);
			name[name_length] = '\0';
			for (int k = 0; value_options[k]; k++)
				known |= strcmp(value_options[k], name) == 0;
		}
		if (!known)
			return error_fail(error, RCO_ERROR_USAGE, "unknown option '%s' (see "
			                  "run-custom-op --help)", arg);
		const char *value;
		if (equals) {
			value = equals + 1;
		} else {
			if (i + 1 == argc)
				return error_fail(error, RCO_ERROR_USAGE, "%s needs a value (see "
				                  "run-custom-op --help)", name);
			value = argv[++i];
		}
		if (apply_option(options, name, value, &given, error) != 0)
			return -1;
	}
	if (options->help || options->version)
		return 0;
	if (!options->library)
		return error_fail(error, RCO_ERROR_USAGE, "no library given: name it as "
		                  "BUILD_DIR/NAME, e.g. run-custom-op --in x.npy build/relu");
	/* 8 and 9: the places of --rtol and --atol in value_options */
	int have_rtol = (int)((given >> 8) & 1), have_atol = (int)((given >> 9) & 1);
	if ((have_rtol || have_atol) && !options->expect)
		return error_fail(error, RCO_ERROR_USAGE, "%s without --expect: the tolerances "
		                  "apply to --expect only", have_rtol ? "--rtol" : "--atol");
	return 0;
}

void options_free(struct run_options *options)
{
	free(options->inputs);
	options->inputs = NULL;
	options->input_count = 0;
}
