/* test_library.c - libruncustomop through its C API (include/runcustomop.h).
 *
 * Two builds stand in for a user's: the fake core library of
 * tests/run/fake_core.c (fake.so and fake_cpu0.so .. fake_cpu7.so, with a
 * record written here), and tests/run/kernels/mischief.cpp built with
 * build-custom-op --target host against the real runtime, once single-core
 * (tests/run/mischief/single) and once multicore (tests/run/mischief/multi).
 * After each failed call, a good call on the same library must work,
 * except after a time limit.  The lost core (a kernel that blocks SIGURG
 * and never returns) comes last: its thread spins until the program ends. */
#define _GNU_SOURCE /* mkdtemp, setenv */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "library_id.h"
#include "runcustomop.h"
#include "../unit/check.h"

static char top[PATH_MAX];     /* tests/run, absolute */
static char work[PATH_MAX];    /* a fresh directory */
static char fake_multi[PATH_MAX + 64], fake_single[PATH_MAX + 64];
static char mischief_multi[PATH_MAX + 64], mischief_single[PATH_MAX + 64];

/* ---- what the callbacks received ---- */

struct capture {
	char printed[8][8192];
	int print_calls[8];
	char warnings[8192];
};

static void capture_print(void *context, int core, const char *text, size_t length)
{
	struct capture *capture = context;
	if (core < 0 || core > 7)
		return;
	capture->print_calls[core]++;
	size_t used = strlen(capture->printed[core]);
	snprintf(capture->printed[core] + used, sizeof capture->printed[core] - used, "%.*s",
	         (int)length, text);
}

static void capture_warn(void *context, int core, const char *text)
{
	struct capture *capture = context;
	size_t used = strlen(capture->warnings);
	snprintf(capture->warnings + used, sizeof capture->warnings - used, "%d|%s\n", core, text);
}

/* ---- fixtures ---- */

static const char fake_ops[] =
	"scale2\tT\t(Tensor x)\n"
	"axpby\tTTSfi\t(Tensor x, Tensor y, Scalar a, float b, int n)\n"
	"scalar_dtype\tS\t(Scalar s)\n"
	"fill\tl\t(long long v)\n"
	"chatter\tT\t(Tensor x)\n"
	"copies\tT\t(Tensor x)\n"
	"violation\tT\t(Tensor x)\n"
	"overflow\tT\t(Tensor x)\n"
	"far_overflow\tT\t(Tensor x)\n"
	"wild\tT\t(Tensor x)\n"
	"unguarded\tT\t(Tensor x)\n";

static void write_file(const char *path, const char *text)
{
	FILE *file = fopen(path, "w");
	if (!file || fputs(text, file) < 0 || fclose(file) != 0) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(1);
	}
}

/* BUILD/fake: links to the fake libraries (the eight of a multicore build,
 * or fake.so) and the record a build writes, with their ids. */
static void make_fake_build(const char *directory, int multicore)
{
	char path[PATH_MAX + 64], target[PATH_MAX + 64];
	char record[4096];
	size_t used = (size_t)snprintf(record, sizeof record, "# build-custom-op ops 2\ncores %d\n",
	                               multicore ? 8 : 1);
	mkdir(directory, 0755);
	for (int i = multicore ? 0 : -1; i < (multicore ? 8 : 0); i++) {
		char name[32];
		if (i < 0)
			snprintf(name, sizeof name, "fake.so");
		else
			snprintf(name, sizeof name, "fake_cpu%d.so", i);
		snprintf(target, sizeof target, "%s/fake/%s", top, name);
		snprintf(path, sizeof path, "%s/%s", directory, name);
		char id[LIBRARY_ID_SIZE];
		if (symlink(target, path) != 0 || library_id_of_file(path, id) != 0) {
			perror(path);
			exit(1);
		}
		used += (size_t)snprintf(record + used, sizeof record - used, "library %s %s\n", name, id);
	}
	snprintf(record + used, sizeof record - used, "%s", fake_ops);
	snprintf(path, sizeof path, "%s/fake.ops", directory);
	write_file(path, record);
}

static void set_up(const char *argv0)
{
	char program[PATH_MAX];
	if (!realpath(argv0, program)) {
		perror(argv0);
		exit(1);
	}
	*strrchr(program, '/') = '\0';
	snprintf(top, sizeof top, "%s", program);
	snprintf(work, sizeof work, "%s/rco-test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(work)) {
		perror("mkdtemp");
		exit(1);
	}
	char directory[PATH_MAX + 16];
	snprintf(directory, sizeof directory, "%s/multi", work);
	make_fake_build(directory, 1);
	snprintf(fake_multi, sizeof fake_multi, "%s/fake", directory);
	snprintf(directory, sizeof directory, "%s/single", work);
	make_fake_build(directory, 0);
	snprintf(fake_single, sizeof fake_single, "%s/fake", directory);
	snprintf(mischief_multi, sizeof mischief_multi, "%s/mischief/multi/mischief", top);
	snprintf(mischief_single, sizeof mischief_single, "%s/mischief/single/mischief", top);
	unsetenv(RCO_PRINT_BUFFER_VARIABLE);
}

static void remove_tree(const char *path)
{
	char *argv[] = {"rm", "-rf", (char *)path, NULL};
	pid_t child = fork();
	if (child == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	int status;
	waitpid(child, &status, 0);
}

/* ---- helpers ---- */

static struct rco_tensor float_tensor(float *data, int64_t count)
{
	struct rco_tensor tensor;
	memset(&tensor, 0, sizeof tensor);
	tensor.dtype = RCO_FLOAT32;
	tensor.rank = 1;
	tensor.sizes[0] = count;
	tensor.strides[0] = 1;
	tensor.data = data;
	return tensor;
}

static struct rco_argument tensor_argument(float *data, int64_t count)
{
	struct rco_argument argument;
	memset(&argument, 0, sizeof argument);
	argument.type = RCO_ARGUMENT_TENSOR;
	argument.tensor = float_tensor(data, count);
	return argument;
}

static struct rco_argument integer_argument(long long value)
{
	struct rco_argument argument;
	memset(&argument, 0, sizeof argument);
	argument.type = RCO_ARGUMENT_INTEGER;
	argument.integer = value;
	return argument;
}

static struct rco_argument real_argument(double value)
{
	struct rco_argument argument;
	memset(&argument, 0, sizeof argument);
	argument.type = RCO_ARGUMENT_REAL;
	argument.real = value;
	return argument;
}

static rco_library *open_build(const char *path, int cores, struct capture *capture)
{
	struct rco_options options;
	memset(&options, 0, sizeof options);
	options.cores = cores;
	options.print = capture ? capture_print : NULL;
	options.warn = capture ? capture_warn : NULL;
	options.context = capture;
	static struct rco_error error;
	rco_library *library = NULL;
	if (rco_open(path, &options, &library, &error) != 0) {
		printf("# rco_open %s: %s\n", path, error.message);
		return NULL;
	}
	return library;
}

/* "out: 1 2 3" of count floats. */
static const char *floats_text(const float *values, int count)
{
	static char text[512];
	size_t used = (size_t)snprintf(text, sizeof text, "out:");
	for (int i = 0; i < count && used < sizeof text; i++)
		used += (size_t)snprintf(text + used, sizeof text - used, " %g", values[i]);
	return text;
}

static struct rco_error error; /* big: not on the stack */

/* Runs op on x (10 floats from -5) with the extra arguments; the output is
 * out (10 floats, NaN first).  Returns the status. */
static int run_on(rco_library *library, const char *op, float *out, int extra_count,
                  const struct rco_argument *extra, double timeout)
{
	static float x[10];
	for (int i = 0; i < 10; i++) {
		x[i] = (float)(i - 5);
		out[i] = 0.0f / 0.0f;
	}
	struct rco_argument arguments[RCO_MAX_ARGUMENTS];
	arguments[0] = tensor_argument(x, 10);
	for (int i = 0; i < extra_count; i++)
		arguments[1 + i] = extra[i];
	struct rco_tensor output = float_tensor(out, 10);
	return rco_run(library, rco_op_index(library, op), arguments, 1 + extra_count, &output,
	               timeout, &error);
}

/* A good call after a failed one: relu (mischief) or scale2 (fake) works. */
static void check_good_call(rco_library *library, const char *what)
{
	float out[10];
	int is_fake = rco_op_index(library, "scale2") >= 0;
	int status = run_on(library, is_fake ? "scale2" : "relu", out, 0, NULL, RCO_DEFAULT_TIMEOUT);
	char label[256];
	snprintf(label, sizeof label, "%s: the next call works", what);
	CHECK_STR(status == 0 ? floats_text(out, 10) : error.message,
	          is_fake ? "out: -10 -8 -6 -4 -2 0 2 4 6 8" : "out: 0 0 0 0 0 0 1 2 3 4", label);
}

/* ---- the tests ---- */

static void test_open_and_list(void)
{
	rco_library *library = open_build(fake_multi, 0, NULL);
	CHECK(library != NULL, "a multicore build opens");
	if (!library)
		return;
	CHECK_INT(rco_core_count(library), 8, "a build with NAME_cpu0.so runs on 8 cores");
	CHECK_INT(rco_op_count(library), 11, "the record's ops are listed");
	CHECK_STR(rco_op_name(library, 1), "axpby", "the ops in the record's order");
	CHECK_STR(rco_op_kinds(library, 1), "TTSfi", "an op's argument kinds");
	CHECK_STR(rco_op_signature(library, 1), "(Tensor x, Tensor y, Scalar a, float b, int n)",
	          "an op's argument list");
	CHECK_INT(rco_op_index(library, "fill"), 3, "an op found by name");
	CHECK_INT(rco_op_index(library, "relu"), -1, "an op that is not there");
	CHECK(rco_op_name(library, 11) == NULL && rco_op_kinds(library, -1) == NULL,
	      "an index out of range has no name");
	CHECK_INT(rco_print_buffer_size(library), -1, "the printf buffer: unset");
	rco_close(library);

	rco_close(NULL);
	CHECK_STR(rco_version(), RCO_VERSION, "the version");
}

static void check_open_error(const char *path, const struct rco_options *options, int status,
                             const char *message, const char *what)
{
	rco_library *library = (rco_library *)&error; /* must become NULL */
	int got = rco_open(path, options, &library, &error);
	CHECK_STR(error.message, message, what);
	char label[256];
	snprintf(label, sizeof label, "%s: status %d and no library", what, status);
	CHECK(got == status && (int)error.status == status && library == NULL, label);
}

static void test_open_errors(void)
{
	struct rco_options options;
	memset(&options, 0, sizeof options);
	char path[PATH_MAX + 128], message[4 * PATH_MAX];
	check_open_error(NULL, &options, RCO_ERROR_USAGE,
	                 "rco_open needs a path and a place for the library", "no path");
	snprintf(path, sizeof path, "%s.so", fake_multi);
	snprintf(message, sizeof message, "%s: name the build without a suffix, as BUILD_DIR/NAME "
	         "(e.g. build/relu for build/relu.so)", path);
	check_open_error(path, &options, RCO_ERROR_USAGE, message, "a path with .so");
	snprintf(path, sizeof path, "%s/nothing/relu", work);
	snprintf(message, sizeof message, "no host build at %s: neither %s.so nor %s_cpu0.so exists; "
	         "build it with build-custom-op --target host", path, path, path);
	check_open_error(path, &options, RCO_ERROR_BUILD, message, "no build");
	options.cores = 8;
	snprintf(message, sizeof message, "%s is a single-core build (%s.ops names one core "
	         "library): --cores 8 needs a multicore build; leave out --cores, or rebuild with "
	         "build-custom-op --target host --multicore", fake_single, fake_single);
	check_open_error(fake_single, &options, RCO_ERROR_BUILD, message, "8 cores of a single-core build");
	options.cores = 1;
	snprintf(message, sizeof message, "%s is a multicore build (%s.ops names 8 core libraries): "
	         "--cores 1 needs a single-core build; leave out --cores, or rebuild without "
	         "--multicore", fake_multi, fake_multi);
	check_open_error(fake_multi, &options, RCO_ERROR_BUILD, message, "1 core of a multicore build");
	options.cores = 3;
	check_open_error(fake_single, &options, RCO_ERROR_USAGE,
	                 "cores 3: expected 1 or 8 (or 0: as the build is)", "cores 3");
	options.cores = 0;
	options.core_stack = 100;
	check_open_error(fake_single, &options, RCO_ERROR_USAGE,
	                 "a core stack of 100 bytes: expected 4096 to 1073741824", "a tiny core stack");
	options.core_stack = 0;
	options.timeout = -1;
	check_open_error(fake_single, &options, RCO_ERROR_USAGE,
	                 "a time limit of -1 s: expected 0 (no limit) to 1e+09 seconds",
	                 "a negative time limit");
	options.timeout = 0;
	snprintf(path, sizeof path, "%s/norecord", work);
	mkdir(path, 0755);
	snprintf(message, sizeof message, "%s/fake/fake.so", top);
	snprintf(path, sizeof path, "%s/norecord/fake.so", work);
	if (symlink(message, path) != 0)
		perror("symlink");
	snprintf(path, sizeof path, "%s/norecord/fake", work);
	snprintf(message, sizeof message, "%s.ops not found: %s was not built for the host target by "
	         "build-custom-op; build it with build-custom-op --target host", path, path);
	check_open_error(path, &options, RCO_ERROR_BUILD, message, "no record");
}

static void test_runs(void)
{
	float out[10];
	rco_library *multi = open_build(fake_multi, 0, NULL);
	rco_library *single = open_build(fake_single, 0, NULL);
	if (!multi || !single)
		return;
	CHECK_INT(run_on(multi, "scale2", out, 0, NULL, 0), 0, "scale2 on 8 cores succeeds");
	CHECK_STR(floats_text(out, 10), "out: -10 -8 -6 -4 -2 0 2 4 6 8",
	          "each of the 8 cores wrote its share of one output");
	CHECK_INT(run_on(single, "scale2", out, 0, NULL, 0), 0, "scale2 on 1 core succeeds");
	CHECK_STR(floats_text(out, 10), "out: -10 -8 -6 -4 -2 0 2 4 6 8", "the single core wrote all");

	static float y[10];
	for (int i = 0; i < 10; i++)
		y[i] = 1;
	struct rco_argument extra[4] = {tensor_argument(y, 10), integer_argument(3), real_argument(0.5),
	                                integer_argument(7)};
	CHECK_INT(run_on(multi, "axpby", out, 4, extra, 0), 0, "axpby with every kind of argument");
	CHECK_STR(floats_text(out, 10), "out: -14.5 -11.5 -8.5 -5.5 -2.5 0.5 3.5 0 0 0",
	          "Scalar 3 (int64), float 0.5 and int 7 reach the kernel as the schema says");

	struct rco_argument scalar = real_argument(-2.5);
	struct rco_tensor two = float_tensor(out, 2);
	CHECK_INT(rco_run(multi, rco_op_index(multi, "scalar_dtype"), &scalar, 1, &two, 0, &error),
	          0, "an op without a tensor argument");
	CHECK_STR(floats_text(out, 2), "out: 6 -2.5", "a real given for a Scalar is float32 (dtype 6)");

	/* each copy of a library counts its own runs */
	for (int run = 0; run < 3; run++)
		run_on(multi, "copies", out, 0, NULL, 0);
	CHECK_STR(floats_text(out, 8), "out: 3 3 3 3 3 3 3 3",
	          "each core library is its own copy, loaded once for every call");
	rco_library *again = open_build(fake_multi, 0, NULL);
	if (again) {
		run_on(again, "copies", out, 0, NULL, 0);
		CHECK_STR(floats_text(out, 8), "out: 1 1 1 1 1 1 1 1",
		          "the same build opened twice: the second library has copies of its own");
		run_on(multi, "copies", out, 0, NULL, 0);
		CHECK_STR(floats_text(out, 8), "out: 4 4 4 4 4 4 4 4",
		          "and the first goes on with its own");
		rco_close(again);
	}
	rco_close(multi);
	rco_close(single);
}

static int last_argument;

static void check_argument_error(rco_library *library, const char *op,
                                 const struct rco_argument *arguments, int count,
                                 const struct rco_tensor *output, int status,
                                 const char *message, const char *what)
{
	int got = rco_run(library, rco_op_index(library, op), arguments, count, output, 0, &error);
	last_argument = error.argument;
	CHECK_STR(error.message, message, what);
	char label[256];
	snprintf(label, sizeof label, "%s: status %d", what, status);
	CHECK(got == status && (int)error.status == status, label);
	check_good_call(library, what);
}

static void test_bad_arguments(void)
{
	rco_library *library = open_build(fake_multi, 0, NULL);
	if (!library)
		return;
	static float x[10], out[10];
	struct rco_tensor output = float_tensor(out, 10);
	struct rco_argument a[6];
	a[0] = tensor_argument(x, 10);
	a[1] = tensor_argument(x, 10);
	a[2] = integer_argument(3);
	a[3] = real_argument(0.5);
	a[4] = integer_argument(7);
	check_argument_error(library, "axpby", a, 4, &output, RCO_ERROR_ARGUMENT,
	                     "axpby expects (Tensor x, Tensor y, Scalar a, float b, int n); got 4 "
	                     "arguments", "too few arguments");
	CHECK_INT(rco_check_argument_count(library, 1, 6, &error), RCO_ERROR_ARGUMENT,
	          "the count is checked on its own too");
	CHECK_STR(error.message, "axpby expects (Tensor x, Tensor y, Scalar a, float b, int n); got 6 "
	          "arguments", "with the same message");
	a[1] = integer_argument(1);
	check_argument_error(library, "axpby", a, 5, &output, RCO_ERROR_ARGUMENT,
	                     "axpby argument 2 (Tensor y) is a tensor, but the number 1 was given",
	                     "a number for a tensor");
	a[1] = tensor_argument(x, 10);
	a[2] = tensor_argument(x, 10);
	check_argument_error(library, "axpby", a, 5, &output, RCO_ERROR_ARGUMENT,
	                     "axpby argument 3 (Scalar a) is a number, but a tensor was given",
	                     "a tensor for a number");
	CHECK_INT(last_argument, 2, "the error names the argument's index");
	a[2] = integer_argument(3);
	a[4] = real_argument(2.5);
	a[4].text = "--scalar 2.5";
	check_argument_error(library, "axpby", a, 5, &output, RCO_ERROR_ARGUMENT,
	                     "axpby argument 5 (int n): --scalar 2.5 is not an integer",
	                     "a real for an int, in the caller's words");
	a[4] = integer_argument(3000000000LL);
	check_argument_error(library, "axpby", a, 5, &output, RCO_ERROR_ARGUMENT,
	                     "axpby argument 5 (int n): 3000000000 is out of the int32 range",
	                     "an int beyond int32");
	a[4] = real_argument(1e30);
	check_argument_error(library, "axpby", a, 5, &output, RCO_ERROR_ARGUMENT,
	                     "axpby argument 5 (int n): 1e+30 is out of the int32 range",
	                     "a whole real beyond int32");
	a[4] = integer_argument(7);
	a[3] = real_argument(1e99);
	check_argument_error(library, "axpby", a, 5, &output, RCO_ERROR_ARGUMENT,
	                     "axpby argument 4 (float b): 1e+99 is out of the float32 range",
	                     "a float beyond float32");
	a[3] = real_argument(0.1);
	a[2] = real_argument(1e39);
	check_argument_error(library, "axpby", a, 5, &output, RCO_ERROR_ARGUMENT,
	                     "axpby argument 3 (Scalar a): 1e+39 is out of the float32 range",
	                     "a Scalar real beyond float32");
	a[3] = real_argument(0.5);
	a[2] = real_argument(9223372036854775808.0);
	a[2].type = RCO_ARGUMENT_LARGE_INTEGER;
	a[2].text = "9223372036854775808";
	check_argument_error(library, "axpby", a, 5, &output, RCO_ERROR_ARGUMENT,
	                     "axpby argument 3 (Scalar a): 9223372036854775808 is out of the int64 range",
	                     "a whole number beyond int64 for a Scalar is refused, not made a float32");
	a[2] = integer_argument(3);
	struct rco_argument v = real_argument(0.1);
	check_argument_error(library, "fill", &v, 1, &output, RCO_ERROR_ARGUMENT,
	                     "fill argument 1 (long long v): 0.1 is not an integer",
	                     "a real for a long long, printed as the shortest text");

	struct rco_argument t = tensor_argument(x, 10);
	t.tensor.dtype = 7; /* float64 in at::ScalarType */
	check_argument_error(library, "scale2", &t, 1, &output, RCO_ERROR_ARGUMENT,
	                     "scale2 argument 1 (Tensor x) has dtype 7, which is not one of the "
	                     "device's 8 dtypes (float32, bfloat16, float16, int32, int8, int64, "
	                     "int16, uint8)", "a dtype the device does not have");
	t = tensor_argument(x, 10);
	t.tensor.rank = 0;
	check_argument_error(library, "scale2", &t, 1, &output, RCO_ERROR_ARGUMENT,
	                     "scale2 argument 1 (Tensor x) has 0 dimensions; a device tensor has 1 to 8",
	                     "a 0-dimensional tensor argument");
	t.tensor.rank = 9;
	check_argument_error(library, "scale2", &t, 1, &output, RCO_ERROR_ARGUMENT,
	                     "scale2 argument 1 (Tensor x) has 9 dimensions; a device tensor has 1 to 8",
	                     "9 dimensions");
	t = tensor_argument(x, 10);
	t.tensor.sizes[0] = -1;
	check_argument_error(library, "scale2", &t, 1, &output, RCO_ERROR_ARGUMENT,
	                     "scale2 argument 1 (Tensor x) has size -1 in dimension 0; sizes are >= 0",
	                     "a negative size");
	t = tensor_argument(x, 10);
	t.tensor.strides[0] = -1;
	check_argument_error(library, "scale2", &t, 1, &output, RCO_ERROR_ARGUMENT,
	                     "scale2 argument 1 (Tensor x) has stride -1 in dimension 0; strides are >= 0",
	                     "a negative stride");
	t = tensor_argument(NULL, 10);
	check_argument_error(library, "scale2", &t, 1, &output, RCO_ERROR_ARGUMENT,
	                     "scale2 argument 1 (Tensor x) has no data (a NULL pointer)",
	                     "a tensor without data");
	t = tensor_argument(x, 10);
	t.tensor.sizes[0] = INT64_MAX / 2;
	check_argument_error(library, "scale2", &t, 1, &output, RCO_ERROR_ARGUMENT,
	                     "scale2 argument 1 (Tensor x) is too large", "a tensor beyond memory");
	t = tensor_argument(x, 10);
	check_argument_error(library, "scale2", &t, 1, NULL, RCO_ERROR_ARGUMENT,
	                     "scale2: no output tensor given", "no output");
	struct rco_tensor bad_output = float_tensor(out, 10);
	bad_output.dtype = 11; /* bool */
	check_argument_error(library, "scale2", &t, 1, &bad_output, RCO_ERROR_ARGUMENT,
	                     "scale2's output has dtype 11, which is not one of the device's 8 dtypes "
	                     "(float32, bfloat16, float16, int32, int8, int64, int16, uint8)",
	                     "an output of a dtype the device does not have");
	CHECK_INT(rco_run(library, 11, &t, 1, &output, 0, &error), RCO_ERROR_USAGE,
	          "an op index out of range");
	char message[PATH_MAX + 128];
	snprintf(message, sizeof message, "no op with index 11 (%s has 11)", fake_multi);
	CHECK_STR(error.message, message, "is named with the count");
	check_good_call(library, "an op index out of range");
	rco_close(library);
}

/* Runs mischief how on core (-1: all) and checks the message and the next call. */
static void check_mischief(rco_library *library, int how, int core, int status, const char *message,
                           const char *what)
{
	float out[10];
	struct rco_argument extra[2] = {integer_argument(how), integer_argument(core)};
	int got = run_on(library, "mischief", out, 2, extra, RCO_DEFAULT_TIMEOUT);
	CHECK_STR(error.message, message, what);
	char label[256];
	snprintf(label, sizeof label, "%s: status %d, op and core named", what, status);
	CHECK(got == status && (int)error.status == status && strcmp(error.op, "mischief") == 0 &&
	      error.core == (core < 0 ? 0 : core), label);
	check_good_call(library, what);
}

static void test_failures(void)
{
	rco_library *fake = open_build(fake_multi, 0, NULL);
	if (fake) {
		float out[10];
		CHECK_INT(run_on(fake, "violation", out, 0, NULL, 0), RCO_ERROR_OP, "a violation fails the op");
		CHECK_STR(error.message, "core 2: op violation: tcm_malloc: the 16 KiB TCM pool is exhausted",
		          "as the runtime words it, naming the core");
		CHECK_INT(error.core, 2, "on core 2");
		check_good_call(fake, "a violation");
		CHECK_INT(run_on(fake, "wild", out, 0, NULL, 0), RCO_ERROR_OP, "a segfault in one core");
		CHECK_STR(error.message, "core 5: op wild: segmentation fault (SIGSEGV) at address 0x10; the "
		          "kernel used memory it does not own", "is named with its core and address");
		CHECK_INT(error.signal, SIGSEGV, "and its signal");
		check_good_call(fake, "a segfault in the fake library");
		CHECK_INT(run_on(fake, "overflow", out, 0, NULL, 0), RCO_ERROR_OP, "a stack overflow");
		CHECK_STR(error.message, "core 3: op overflow: stack overflow in the emulated core stack "
		          "(4096 bytes); build with a larger -DSTACK_SIZE=<bytes> (see build-custom-op(1))",
		          "is named with its stack");
		check_good_call(fake, "a stack overflow");
		rco_close(fake);
	}

	rco_library *library = open_build(mischief_multi, 0, NULL);
	if (!library)
		return;
	check_mischief(library, 1, 3, RCO_ERROR_OP, "core 3: op mischief: segmentation fault (SIGSEGV) "
	               "at address 0x10; the kernel used memory it does not own",
	               "a segfault in one core of a real build");
	check_mischief(library, 2, 6, RCO_ERROR_OP, "core 6: op mischief: the kernel called abort() "
	               "(SIGABRT), as a failed assert() does", "abort()");
	check_mischief(library, 2, -1, RCO_ERROR_OP,
	               "core 0: op mischief: the kernel called abort() (SIGABRT), as a failed assert() does\n"
	               "core 1: op mischief: the kernel called abort() (SIGABRT), as a failed assert() does\n"
	               "core 2: op mischief: the kernel called abort() (SIGABRT), as a failed assert() does\n"
	               "core 3: op mischief: the kernel called abort() (SIGABRT), as a failed assert() does\n"
	               "core 4: op mischief: the kernel called abort() (SIGABRT), as a failed assert() does\n"
	               "core 5: op mischief: the kernel called abort() (SIGABRT), as a failed assert() does\n"
	               "core 6: op mischief: the kernel called abort() (SIGABRT), as a failed assert() does\n"
	               "core 7: op mischief: the kernel called abort() (SIGABRT), as a failed assert() does",
	               "abort() on every core at once: one line per core");
	check_mischief(library, 3, 1, RCO_ERROR_OP, "core 1: op mischief: the kernel threw a C++ "
	               "exception that it did not catch: std::runtime_error: the kernel gave up",
	               "a C++ exception");
	check_mischief(library, 4, 0, RCO_ERROR_OP, "core 0: op mischief: the kernel threw a C++ "
	               "exception that it did not catch: int", "a C++ exception of no class");
	float out[10];
	struct rco_argument extra[2] = {integer_argument(8), integer_argument(4)};
	run_on(library, "mischief", out, 2, extra, 0);
	CHECK(strncmp(error.message, "core 4: op mischief: arithmetic exception (SIGFPE) at address 0x",
	              64) == 0 &&
	      strstr(error.message, ", such as an integer division by zero") != NULL,
	      "an integer division by zero");
	check_good_call(library, "SIGFPE");
	extra[0] = integer_argument(7);
	run_on(library, "mischief", out, 2, extra, 0);
	CHECK(strncmp(error.message, "core 4: op mischief: illegal instruction (SIGILL) at address 0x",
	              63) == 0, "__builtin_trap()");
	check_good_call(library, "SIGILL");
	static const char *const exits[][2] = {
		{"13", "exit(0)"}, {"14", "exit(3)"}, {"15", "_exit(0)"}, {"16", "_Exit(0)"},
		{"17", "quick_exit(0)"}, {"19", "exit(0)"},
	};
	for (size_t i = 0; i < sizeof exits / sizeof exits[0]; i++) {
		char message[256], what[64];
		snprintf(message, sizeof message, "core 2: op mischief: the kernel called %s, which would "
		         "end the process on the host; a kernel ends by returning its result", exits[i][1]);
		snprintf(what, sizeof what, "a kernel calling %s (mode %s)", exits[i][1], exits[i][0]);
		check_mischief(library, atoi(exits[i][0]), 2, RCO_ERROR_OP, message, what);
	}
	pid_t before = getpid();
	check_mischief(library, 18, 7, RCO_ERROR_OP, "core 7: op mischief: the kernel called fork(), "
	               "which the device does not have (on the host it would leave a second process "
	               "running the rest of the op)", "a kernel calling fork()");
	CHECK(getpid() == before, "no second process returned from the call");
	rco_close(library);

	/* The TCM a faulting kernel held goes back to the pool: twice in a row,
	 * 12 of the 16 KiB are there for it. */
	struct capture capture;
	memset(&capture, 0, sizeof capture);
	library = open_build(mischief_single, 0, &capture);
	if (!library)
		return;
	check_mischief(library, 9, 0, RCO_ERROR_OP, "core 0: op mischief: segmentation fault (SIGSEGV) at "
	               "address 0x10; the kernel used memory it does not own", "a fault holding TCM");
	check_mischief(library, 9, 0, RCO_ERROR_OP, "core 0: op mischief: segmentation fault (SIGSEGV) at "
	               "address 0x10; the kernel used memory it does not own", "the same fault again");
	CHECK_STR(capture.printed[0], "", "the TCM held by an abandoned kernel was given back");
	rco_close(library);
}

static void test_time_limit(void)
{
	rco_library *library = open_build(mischief_multi, 0, NULL);
	if (!library)
		return;
	float out[10];
	struct rco_argument extra[2] = {integer_argument(5), integer_argument(3)};
	CHECK_INT(run_on(library, "mischief", out, 2, extra, 0.2), RCO_ERROR_TIMEOUT,
	          "a kernel that never returns: the time limit");
	CHECK_STR(error.message, "core 3: op mischief: still running when the time limit of 0.2 s "
	          "passed: stopped", "names the core that was still running");
	CHECK(error.core == 3 && error.signal == SIGURG, "the core, and the signal that stopped it");
	CHECK_STR(out[0] == 0 && out[9] == 4 ? "written" : "not", "written",
	          "the other cores finished their shares");
	CHECK_INT(run_on(library, "relu", out, 0, NULL, 0), RCO_ERROR_UNUSABLE,
	          "after the time limit the library runs no more ops");
	char message[PATH_MAX + 512];
	snprintf(message, sizeof message, "%s runs no more ops: op mischief ran past the time limit "
	         "of 0.2 s on core 3, and a core that did not return cannot be taken back; close it "
	         "and open the build again", mischief_multi);
	CHECK_STR(error.message, message, "and says what to do");
	rco_close(library);

	library = open_build(mischief_multi, 0, NULL);
	if (library) {
		check_good_call(library, "the build opened again after a time limit");
		extra[0] = integer_argument(6);
		extra[1] = integer_argument(-1);
		CHECK_INT(run_on(library, "mischief", out, 2, extra, 0.1), RCO_ERROR_TIMEOUT,
		          "kernels blocked in a system call on every core");
		CHECK_STR(strstr(error.message, "core 7: op mischief: still running when the time limit "
		                 "of 0.1 s passed: stopped"), "core 7: op mischief: still running when the "
		          "time limit of 0.1 s passed: stopped", "are stopped too");
		rco_close(library);
	}

	struct rco_options options;
	memset(&options, 0, sizeof options);
	options.timeout = 0.1;
	library = NULL;
	rco_open(mischief_single, &options, &library, &error);
	if (library) {
		extra[0] = integer_argument(5);
		extra[1] = integer_argument(0);
		CHECK_INT(run_on(library, "mischief", out, 2, extra, RCO_DEFAULT_TIMEOUT), RCO_ERROR_TIMEOUT,
		          "the library's time limit is the default of every call");
		rco_close(library);
	}
}

static void test_printf_and_warnings(void)
{
	struct capture capture;
	memset(&capture, 0, sizeof capture);
	rco_library *library = open_build(mischief_multi, 0, &capture);
	if (!library)
		return;
	float out[10];
	struct rco_argument bytes = integer_argument(12);
	CHECK_INT(run_on(library, "chatter", out, 1, &bytes, 0), 0, "an op that prints");
	int once = 1;
	for (int core = 0; core < 8; core++) {
		char expected[64];
		snprintf(expected, sizeof expected, "core %d\n012345678901", core);
		once &= capture.print_calls[core] == 1 && strcmp(capture.printed[core], expected) == 0;
	}
	CHECK(once, "each core's output reaches print once, whole, with its core");
	CHECK_STR(capture.printed[5], "core 5\n012345678901", "core 5's output");
	CHECK_INT(run_on(library, "warn", out, 0, NULL, 0), 0, "an op that warns");
	CHECK_STR(capture.warnings,
	          "0|core 0: op warn: the first warning\n0|core 0: op warn: the second warning, 2\n"
	          "1|core 1: op warn: the first warning\n1|core 1: op warn: the second warning, 2\n"
	          "2|core 2: op warn: the first warning\n2|core 2: op warn: the second warning, 2\n"
	          "3|core 3: op warn: the first warning\n3|core 3: op warn: the second warning, 2\n"
	          "4|core 4: op warn: the first warning\n4|core 4: op warn: the second warning, 2\n"
	          "5|core 5: op warn: the first warning\n5|core 5: op warn: the second warning, 2\n"
	          "6|core 6: op warn: the first warning\n6|core 6: op warn: the second warning, 2\n"
	          "7|core 7: op warn: the first warning\n7|core 7: op warn: the second warning, 2\n",
	          "warnings reach warn, once per call each, core by core");
	memset(&capture, 0, sizeof capture);
	struct rco_argument extra[2] = {integer_argument(1), integer_argument(2)};
	bytes = integer_argument(3);
	run_on(library, "chatter", out, 1, &bytes, 0);
	memset(&capture, 0, sizeof capture);
	run_on(library, "mischief", out, 2, extra, 0);
	CHECK_STR(capture.printed[0], "", "a call that prints nothing hands over nothing");
	rco_close(library);
}

static void test_print_buffer(void)
{
	struct capture capture;
	memset(&capture, 0, sizeof capture);
	setenv(RCO_PRINT_BUFFER_VARIABLE, "16", 1);
	rco_library *library = open_build(fake_multi, 0, &capture);
	if (library) {
		CHECK_INT(rco_print_buffer_size(library), 16, "the printf buffer: 16 bytes per core");
		float out[10];
		run_on(library, "chatter", out, 0, NULL, 0);
		CHECK_STR(capture.printed[4], "[14 bytes of printf output lost: the buffer holds 16 bytes "
		          "(NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES)]\nllo\nand goodbye\n",
		          "past 16 bytes the oldest output is lost, and a line says how much");
		CHECK_INT(capture.print_calls[4], 1, "in one piece");
		rco_close(library);
	}
	memset(&capture, 0, sizeof capture);
	setenv(RCO_PRINT_BUFFER_VARIABLE, "0", 1);
	library = open_build(fake_multi, 0, &capture);
	if (library) {
		float out[10];
		run_on(library, "chatter", out, 0, NULL, 0);
		int calls = 0;
		for (int core = 0; core < 8; core++)
			calls += capture.print_calls[core];
		CHECK_INT(calls, 0, "0: nothing is printed");
		rco_close(library);
	}
	struct rco_options options;
	memset(&options, 0, sizeof options);
	setenv(RCO_PRINT_BUFFER_VARIABLE, "100", 1);
	check_open_error(fake_multi, &options, RCO_ERROR_USAGE,
	                 "NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=100: not a power of two; the device "
	                 "takes a power of two up to 131072 (the bytes of each core's printf buffer), or "
	                 "0 to print nothing", "a size that is not a power of two");
	setenv(RCO_PRINT_BUFFER_VARIABLE, "262144", 1);
	check_open_error(fake_multi, &options, RCO_ERROR_USAGE,
	                 "NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=262144: too big; the device takes a "
	                 "power of two up to 131072 (the bytes of each core's printf buffer), or 0 to "
	                 "print nothing", "a size above 131072");
	unsetenv(RCO_PRINT_BUFFER_VARIABLE);
}

/* ---- signals and threads ---- */

static volatile sig_atomic_t own_handler_calls;

static void own_handler(int signal_number)
{
	(void)signal_number;
	own_handler_calls++;
}

struct hang_call {
	rco_library *library;
	int status;
};

static void *run_hang(void *argument)
{
	struct hang_call *call = argument;
	static struct rco_error hang_error;
	static float x[10], out[10];
	struct rco_argument arguments[3] = {tensor_argument(x, 10), integer_argument(6),
	                                    integer_argument(0)};
	struct rco_tensor output = float_tensor(out, 10);
	call->status = rco_run(call->library, rco_op_index(call->library, "mischief"), arguments, 3,
	                       &output, 0.5, &hang_error);
	return NULL;
}

/* Whether two dispositions are the same handler with the same flags. */
static int same_disposition(const struct sigaction *a, const struct sigaction *b)
{
	return a->sa_handler == b->sa_handler && (a->sa_flags & SA_SIGINFO) == (b->sa_flags & SA_SIGINFO);
}

static void test_signal_dispositions(void)
{
	struct sigaction own, seen, segv_before;
	sigaction(SIGSEGV, NULL, &segv_before); /* SIG_DFL, or a sanitizer's */
	memset(&own, 0, sizeof own);
	own.sa_handler = own_handler;
	sigemptyset(&own.sa_mask);
	sigaction(SIGABRT, &own, NULL);
	rco_library *library = open_build(mischief_single, 0, NULL);
	if (!library)
		return;
	check_mischief(library, 2, 0, RCO_ERROR_OP, "core 0: op mischief: the kernel called abort() "
	               "(SIGABRT), as a failed assert() does", "abort() with a handler of the caller's");
	CHECK_INT(own_handler_calls, 0, "the caller's SIGABRT handler did not see the kernel's abort()");
	sigaction(SIGABRT, NULL, &seen);
	CHECK(seen.sa_handler == own_handler, "the caller's SIGABRT handler is back after the call");
	sigaction(SIGSEGV, NULL, &seen);
	CHECK(same_disposition(&seen, &segv_before), "SIGSEGV's handler is back to what it was after the call");

	/* A SIGABRT for this thread during a call goes to the caller's handler. */
	struct hang_call call = {library, -1};
	pthread_t thread;
	pthread_create(&thread, NULL, run_hang, &call);
	usleep(100000);
	pthread_kill(pthread_self(), SIGABRT);
	pthread_join(thread, NULL);
	CHECK_INT(own_handler_calls, 1, "a signal not about a core went on to the caller's handler");
	CHECK_INT(call.status, RCO_ERROR_TIMEOUT, "while the call ran on");
	rco_close(library);
	signal(SIGABRT, SIG_DFL);
}

struct loop {
	rco_library *library;
	const char *op;
	int calls;
	int wrong;
};

static void *run_loop(void *argument)
{
	struct loop *loop = argument;
	static _Thread_local struct rco_error loop_error;
	float x[10], out[10];
	for (int i = 0; i < 10; i++)
		x[i] = (float)(i - 5);
	struct rco_argument arguments[1] = {tensor_argument(x, 10)};
	struct rco_tensor output = float_tensor(out, 10);
	int op = rco_op_index(loop->library, loop->op);
	for (int call = 0; call < loop->calls; call++) {
		memset(out, 0, sizeof out);
		if (rco_run(loop->library, op, arguments, 1, &output, 0, &loop_error) != 0)
			loop->wrong++;
		else
			for (int i = 0; i < 10; i++)
				loop->wrong += strcmp(loop->op, "scale2") == 0 ? out[i] != 2 * x[i]
				                                                : out[i] != (x[i] > 0 ? x[i] : 0);
	}
	return NULL;
}

static void test_threads(void)
{
	struct sigaction segv_before, seen;
	sigaction(SIGSEGV, NULL, &segv_before);
	rco_library *fake = open_build(fake_multi, 0, NULL);
	rco_library *real = open_build(mischief_multi, 0, NULL);
	if (!fake || !real)
		return;
	struct loop loops[3] = {{fake, "scale2", 200, 0}, {fake, "scale2", 200, 0}, {real, "relu", 200, 0}};
	pthread_t threads[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&threads[i], NULL, run_loop, &loops[i]);
	for (int i = 0; i < 3; i++)
		pthread_join(threads[i], NULL);
	CHECK_INT(loops[0].wrong + loops[1].wrong, 0,
	          "two threads calling one library: every call right (they take turns)");
	CHECK_INT(loops[2].wrong, 0, "a third thread on another library at the same time: every call right");
	sigaction(SIGSEGV, NULL, &seen);
	CHECK(same_disposition(&seen, &segv_before), "after concurrent calls the process's handlers are back");
	rco_close(fake);
	rco_close(real);
}

static void test_fork(void)
{
	rco_library *library = open_build(fake_multi, 0, NULL);
	if (!library)
		return;
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		float out[10];
		int status = run_on(library, "scale2", out, 0, NULL, 0);
		char expected[PATH_MAX + 256];
		snprintf(expected, sizeof expected, "%s was opened before this process was forked, and "
		         "its cores run in the parent only; open the build again in this process",
		         fake_multi);
		int right = status == RCO_ERROR_UNUSABLE && strcmp(error.message, expected) == 0;
		rco_close(library);
		rco_library *again = open_build(fake_multi, 0, NULL);
		right = right && again && run_on(again, "scale2", out, 0, NULL, 0) == 0 && out[9] == 8;
		rco_close(again);
		_exit(right ? 0 : 1);
	}
	int status = -1;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "in a child of fork(), the parent's library refuses to run and closes; one opened there runs");
	check_good_call(library, "the parent's library after the fork");
	rco_close(library);
}

/* Last: the lost core's thread spins until the program ends. */
static void test_lost_core(void)
{
	rco_library *library = open_build(mischief_multi, 0, NULL);
	if (!library)
		return;
	float out[10];
	struct rco_argument extra[2] = {integer_argument(10), integer_argument(2)};
	CHECK_INT(run_on(library, "mischief", out, 2, extra, 0.1), RCO_ERROR_TIMEOUT,
	          "a kernel that blocks SIGURG and never returns");
	CHECK_STR(error.message, "core 2: op mischief: still running when the time limit of 0.1 s "
	          "passed, and it did not stop (it blocks SIGURG): it runs on, and may still read and "
	          "write the call's tensors", "is lost, and the error says what that means");
	rco_close(library);
	library = open_build(mischief_multi, 0, NULL);
	CHECK(library != NULL, "the build opens again beside the lost core");
	if (library)
		check_good_call(library, "a build opened again beside a lost core");
	rco_close(library);
}

/* A kernel that ended the process (exit(0) in a thread) would end this
 * program with status 0 and fewer checks: that is a failure. */
/* ---- the output checks and the profiles ---- */

static rco_library *open_checked(const char *path, int output_checks, struct capture *capture,
                                 int *status)
{
	struct rco_options options;
	memset(&options, 0, sizeof options);
	options.output_checks = output_checks;
	options.warn = capture ? capture_warn : NULL;
	options.context = capture;
	rco_library *library = NULL;
	*status = rco_open(path, &options, &library, &error);
	return library;
}

static void test_output_checks(void)
{
	const char *unwritten = "op copies: output coverage: elements [8, 10) of the output were written "
	                        "by no core (on the device they keep what the output buffer held before "
	                        "the op)";
	float out[10];
	struct capture capture;
	memset(&capture, 0, sizeof capture);
	int status;
	rco_library *library = open_checked(fake_multi, 0, &capture, &status);
	if (!library)
		return;
	CHECK_INT(run_on(library, "copies", out, 0, NULL, 0), RCO_ERROR_OP,
	          "8 cores writing one element each of 10: an error by default");
	CHECK_STR(error.message, unwritten, "it names the elements no core wrote");
	CHECK_INT(error.core, -1, "and no core");
	CHECK_STR(capture.warnings, "", "and warns of nothing");
	check_good_call(library, "output checks");
	rco_close(library);

	library = open_checked(fake_multi, RCO_OUTPUT_CHECKS_WARN, &capture, &status);
	if (!library)
		return;
	CHECK_INT(run_on(library, "copies", out, 0, NULL, 0), 0, "RCO_OUTPUT_CHECKS_WARN: the call succeeds");
	char expected[1024];
	snprintf(expected, sizeof expected, "-1|%s\n", unwritten);
	CHECK_STR(capture.warnings, expected, "with the finding as a warning of core -1");
	rco_close(library);

	memset(&capture, 0, sizeof capture);
	library = open_checked(fake_multi, RCO_OUTPUT_CHECKS_OFF, &capture, &status);
	if (!library)
		return;
	CHECK_INT(run_on(library, "copies", out, 0, NULL, 0), 0, "RCO_OUTPUT_CHECKS_OFF: the call succeeds");
	CHECK_STR(capture.warnings, "", "and nothing is said");
	rco_close(library);

	CHECK(open_checked(fake_multi, 9, NULL, &status) == NULL && status == RCO_ERROR_USAGE,
	      "another output_checks value is refused");
	CHECK_STR(error.message, "output_checks 9: expected RCO_OUTPUT_CHECKS_ERROR, _WARN or _OFF (or 0: "
	          "from BUILD_CUSTOM_OP_OUTPUT_CHECKS)", "naming the values");
	setenv(RCO_OUTPUT_CHECKS_VARIABLE, "sometimes", 1);
	CHECK(open_checked(fake_multi, 0, NULL, &status) == NULL && status == RCO_ERROR_USAGE,
	      "a bad BUILD_CUSTOM_OP_OUTPUT_CHECKS is refused by rco_open");
	CHECK_STR(error.message, "BUILD_CUSTOM_OP_OUTPUT_CHECKS=sometimes: expected error (the default), "
	          "warn or off", "naming the variable and its values");
	setenv(RCO_OUTPUT_CHECKS_VARIABLE, "warn", 1);
	memset(&capture, 0, sizeof capture);
	library = open_checked(fake_multi, 0, &capture, &status);
	if (library) {
		CHECK_INT(run_on(library, "copies", out, 0, NULL, 0), 0,
		          "BUILD_CUSTOM_OP_OUTPUT_CHECKS=warn: the call succeeds");
		CHECK_STR(capture.warnings, expected, "with the warning");
		rco_close(library);
	}
	library = open_checked(fake_multi, RCO_OUTPUT_CHECKS_ERROR, NULL, &status);
	if (library) {
		CHECK_INT(run_on(library, "copies", out, 0, NULL, 0), RCO_ERROR_OP,
		          "rco_options.output_checks wins over the variable");
		rco_close(library);
	}
	unsetenv(RCO_OUTPUT_CHECKS_VARIABLE);
}

static void test_profiles(void)
{
	struct rco_profile profile;
	rco_library *library = open_build(mischief_multi, 0, NULL);
	if (!library)
		return;
	CHECK_INT(rco_last_profile(library, &profile), RCO_ERROR_USAGE, "no profile before the first call");
	size_t first;
	CHECK_INT(rco_profile_collect_begin(&first), 0, "a collection opens");
	float out[10];
	CHECK_INT(run_on(library, "relu", out, 0, NULL, 0), 0, "relu on 8 cores");
	CHECK_INT(rco_last_profile(library, &profile), 0, "its profile");
	CHECK_STR(profile.op, "relu", "names the op");
	CHECK_INT(profile.core_count, 8, "and has 8 cores");
	/* 10 elements: shares of 1, 1, 1, 2, 1, 1, 1, 2, each copied in and out
	 * once through a 256-float buffer. */
	char text[512];
	snprintf(text, sizeof text, "%d %llu %llu %llu %llu %lld %llu", profile.cores[3].core,
	         (unsigned long long)profile.cores[3].tensor_to_tcm_calls,
	         (unsigned long long)profile.cores[3].tensor_to_tcm_bytes,
	         (unsigned long long)profile.cores[3].tcm_to_tensor_bytes,
	         (unsigned long long)profile.cores[3].tcm_peak_bytes,
	         (long long)profile.cores[3].output_elements_written,
	         (unsigned long long)profile.cores[3].element_reads);
	CHECK_STR(text, "3 1 8 8 1024 2 0", "core 3's counts: 1 copy of 8 bytes each way, 1 KiB of TCM, 2 elements");
	snprintf(text, sizeof text, "%.6f %.6f %.3f", profile.estimated_device_us,
	         profile.cores[7].estimated_device_us, profile.imbalance);
	char expected[512];
	snprintf(expected, sizeof expected, "%.6f %.6f 1.600", profile.cores[3].estimated_device_us,
	         profile.cores[3].estimated_device_us);
	CHECK_STR(text, expected, "the op's estimate is the slowest core's; imbalance 2 / 1.25");
	size_t length = rco_profile_json(&profile, NULL, 0);
	char *json = malloc(length + 1);
	CHECK(json && rco_profile_json(&profile, json, length + 1) == length && strlen(json) == length,
	      "rco_profile_json measures its text, and writes it whole");
	if (json)
		CHECK(strncmp(json, "{\"op\": \"relu\", \"cores\": [\n  {\"core\": 0, \"element_reads\": 0,", 45) == 0,
		      "the JSON starts as documented");
	free(json);
	char small[10];
	CHECK(rco_profile_table(&profile, small, sizeof small) > sizeof small &&
	      strcmp(small, "profile o") == 0, "a short buffer gets the start, terminated");

	rco_library *fake = open_build(fake_multi, 0, NULL);
	if (fake) {
		size_t inner;
		CHECK_INT(rco_profile_collect_begin(&inner), 0, "a second collection opens inside the first");
		CHECK_INT(inner, first + 1, "after the first's one profile");
		CHECK_INT(run_on(fake, "scale2", out, 0, NULL, 0), 0, "a call on another library");
		CHECK_INT(rco_profile_collect_end(), 0, "the inner collection closes");
		CHECK_INT(rco_profile_collected(), first + 2, "both calls were collected");
		CHECK(rco_profile_collected_get(first, &profile) == 0 && strcmp(profile.op, "relu") == 0,
		      "the first is relu's");
		CHECK(rco_profile_collected_get(first + 1, &profile) == 0 && strcmp(profile.op, "scale2") == 0 &&
		      profile.core_count == 8 && profile.cores[7].output_elements_written == 2,
		      "the second is scale2's, with what the fake core reported");
		rco_close(fake);
	}
	CHECK_INT(rco_profile_collect_end(), 0, "the outer collection closes");
	CHECK_INT(rco_profile_collected(), 0, "the last to close frees the profiles");
	CHECK_INT(rco_profile_collected_get(0, &profile), RCO_ERROR_USAGE, "none is left");
	CHECK_INT(rco_profile_collect_end(), RCO_ERROR_USAGE, "closing a collection that is not open");
	CHECK_INT(run_on(library, "relu", out, 0, NULL, 0), 0, "a call with no collection open");
	CHECK_INT(rco_profile_collected(), 0, "is not collected");

	struct rco_argument extra[2] = {integer_argument(1), integer_argument(2)};
	CHECK_INT(run_on(library, "mischief", out, 2, extra, 0), RCO_ERROR_OP, "a call that faults on core 2");
	CHECK_INT(rco_last_profile(library, &profile), RCO_ERROR_USAGE, "has no profile");
	rco_close(library);
	size_t count;
	const struct rco_cost_constant *model = rco_cost_model(&count);
	CHECK(count == 12 && strcmp(model[6].name, "HBM element access") == 0 && model[6].value > 200 &&
	      model[6].value < 300, "the cost model's table");
	/* run-custom-op(1) lists each constant as .B "NAME: VALUE UNIT". */
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/../../man/run-custom-op.1", top);
	FILE *page = fopen(path, "r");
	static char manual[256 * 1024];
	size_t read = page ? fread(manual, 1, sizeof manual - 1, page) : 0;
	manual[read] = '\0';
	if (page)
		fclose(page);
	char missing[2048] = "";
	for (size_t i = 0; i < count; i++) {
		char line[256];
		snprintf(line, sizeof line, "\n.B \"%s: %g %s\"\n", model[i].name, model[i].value, model[i].unit);
		if (!strstr(manual, line) && strlen(missing) + strlen(line) < sizeof missing)
			strcat(missing, line + 1);
	}
	CHECK_STR(missing, "", "run-custom-op(1) lists every constant of the cost model with its value");
}

static int reached_the_end;

static void check_the_end_was_reached(void)
{
	if (!reached_the_end) {
		printf("not ok - the program ended before its last test\n");
		fflush(stdout);
		_exit(1);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	atexit(check_the_end_was_reached);
	set_up(argv[0]);
	test_open_and_list();
	test_open_errors();
	test_runs();
	test_bad_arguments();
	test_failures();
	test_time_limit();
	test_printf_and_warnings();
	test_print_buffer();
	test_output_checks();
	test_profiles();
	test_signal_dispositions();
	test_threads();
	test_fork();
	test_lost_core();
	remove_tree(work);
	reached_the_end = 1;
	return check_failures != 0;
}
