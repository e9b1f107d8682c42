/* test_library.c - libruncustomop through its C API (include/runcustomop.h).
 *
 * Two builds stand in for a user's: the fake core library of
 * tests/run/fake_core.c (fake.so and fake_cpu0.so .. fake_cpu7.so, with a
 * record written here), and tests/run/kernels/mischief.cpp built with
 * build-custom-op --target host against the real runtime, once single-core
 * (tests/run/mischief/single) and once multicore (tests/run/mischief/multi).
 * After each failed call, a good call on the same library must work,
 * except after a stop (a time limit, SIGINT, rco_stop).  The lost cores
 * (kernels that block SIGURG with a system call of their own and never
 * return) come last: their threads sleep until the program ends. */
#define _GNU_SOURCE /* mkdtemp, setenv */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
/* The name run_on gives rco_run_named (NULL: it calls rco_run). */
static const char *run_name;

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
	if (run_name)
		return rco_run_named(library, rco_op_index(library, op), run_name, arguments,
		                     1 + extra_count, &output, timeout, &error);
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

/* Of the mappings of /proc/self/maps that name a file whose name ends
 * with suffix: how many are executable, or (pages) how many read-only
 * pages the others hold. */
static long mappings(const char *suffix, int pages)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	if (!maps)
		return -1;
	char line[PATH_MAX + 256];
	long count = 0;
	size_t suffix_length = strlen(suffix);
	while (fgets(line, sizeof line, maps)) {
		line[strcspn(line, "\n")] = '\0';
		unsigned long start = 0, end = 0;
		char permissions[8] = "";
		int name_at = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, permissions, &name_at) < 3 ||
		    name_at == 0)
			continue;
		size_t length = strlen(line);
		if (length < suffix_length || strcmp(line + length - suffix_length, suffix) != 0)
			continue;
		if (!pages && permissions[2] == 'x')
			count++;
		else if (pages && strcmp(permissions, "r--p") == 0)
			count += (long)((end - start) / (unsigned long)sysconf(_SC_PAGESIZE));
	}
	fclose(maps);
	return count;
}

static long code_mappings(const char *suffix)
{
	return mappings(suffix, 0);
}

/* The code mappings of the eight core libraries ending with prefix + "K" +
 * rest, core by core: "1 1 1 1 1 1 1 1". */
static const char *code_mappings_per_core(const char *prefix, const char *rest)
{
	static char text[64];
	size_t used = 0;
	for (int i = 0; i < 8; i++) {
		char suffix[128];
		snprintf(suffix, sizeof suffix, "%s%d%s", prefix, i, rest);
		used += (size_t)snprintf(text + used, sizeof text - used, "%s%ld", i ? " " : "",
		                         code_mappings(suffix));
	}
	return text;
}

/* The eight core libraries of a multicore build run one copy of their
 * code (core 0's pages), each with its own data; libraries whose code
 * differs keep their own. */
static void test_shared_code(void)
{
	rco_library *library = open_build(mischief_multi, 0, NULL);
	if (!library)
		return;
	CHECK_STR(code_mappings_per_core("/mischief_cpu", ".so"), "8 0 0 0 0 0 0 0",
	          "the eight libraries of a build run core 0's code pages");
	/* Of their read-only data, each keeps the pages that differ: the one
	 * with its core number, the one with its build id, and the one that
	 * holds what relocation wrote (read-only once written). */
	long most = 0;
	for (int i = 1; i < 8; i++) {
		char suffix[64];
		snprintf(suffix, sizeof suffix, "/mischief_cpu%d.so", i);
		long own = mappings(suffix, 1);
		most = own > most ? own : most;
	}
	char label[128];
	snprintf(label, sizeof label, "cores 1-7 keep at most 3 read-only pages of their own "
	         "(at most %ld)", most);
	CHECK(most >= 1 && most <= 3, label);
	check_good_call(library, "one copy of the code");
	/* The same build again: its own copies of the files, whose code is
	 * shared the same way (the first library's is unchanged). */
	rco_library *again = open_build(mischief_multi, 0, NULL);
	if (again) {
		CHECK_STR(code_mappings_per_core("/memfd:mischief_cpu", ".so (deleted)"),
		          "8 0 0 0 0 0 0 0", "a second opening of a build shares its copy's code");
		CHECK_STR(code_mappings_per_core("/mischief_cpu", ".so"), "8 0 0 0 0 0 0 0",
		          "the first opening's code is as it was");
		check_good_call(again, "the second opening, with its own data");
		check_good_call(library, "the first opening, after the second ran");
		rco_close(again);
	}
	rco_close(library);

	/* The fake's libraries have their core number in their code. */
	library = open_build(fake_multi, 0, NULL);
	if (!library)
		return;
	CHECK_STR(code_mappings_per_core("/fake_cpu", ".so"), "1 1 1 1 1 1 1 1",
	          "libraries whose code differs keep their own");
	check_good_call(library, "libraries with their own code");
	rco_close(library);
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
	options.threads = 9;
	check_open_error(fake_single, &options, RCO_ERROR_USAGE,
	                 "threads 9: expected 1 to 8 (or 0: as many as the machine has CPUs)",
	                 "nine threads");
	options.threads = 0;
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
	CHECK_INT(rco_check_arguments(library, 11, NULL, &t, 1, &output, &error), RCO_ERROR_USAGE,
	          "rco_check_arguments: an op index out of range");
	CHECK_STR(error.message, message, "rco_check_arguments names it as rco_run does");
	CHECK_INT(rco_check_argument_count(library, -1, 1, &error), RCO_ERROR_USAGE,
	          "rco_check_argument_count: an op index out of range");
	snprintf(message, sizeof message, "no op with index -1 (%s has 11)", fake_multi);
	CHECK_STR(error.message, message, "rco_check_argument_count names it as rco_run does");
	struct rco_tensor_description described;
	memset(&described, 0, sizeof described);
	int copy = 0;
	CHECK_INT(rco_accept_tensor(library, 11, NULL, 0, &described, &copy, &error),
	          RCO_ERROR_USAGE, "rco_accept_tensor: an op index out of range");
	snprintf(message, sizeof message, "no op with index 11 (%s has 11)", fake_multi);
	CHECK_STR(error.message, message, "rco_accept_tensor names it as rco_run does");
	CHECK_INT(rco_accept_tensor(library, 0, NULL, 0, NULL, &copy, &error), RCO_ERROR_USAGE,
	          "rco_accept_tensor without a tensor");
	CHECK_STR(error.message, "rco_accept_tensor needs a tensor", "says so");
	CHECK_INT(rco_run(NULL, 0, &t, 1, &output, 0, &error), RCO_ERROR_USAGE, "rco_run without a library");
	CHECK_STR(error.message, "rco_run needs a library", "says so");
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
	               "cores 0-7: op mischief: the kernel called abort() (SIGABRT), as a failed assert() does",
	               "abort() on every core at once: one line naming the cores");
	/* As a caller that knows the op by another name tells it (torch.ops). */
	run_name = "my_ops::mischief";
	check_mischief(library, 2, 6, RCO_ERROR_OP, "core 6: op my_ops::mischief: the kernel called "
	               "abort() (SIGABRT), as a failed assert() does",
	               "rco_run_named: the op as its caller names it");
	run_name = "my_ops::trouble";
	check_mischief(library, 1, 3, RCO_ERROR_OP, "core 3: op my_ops::trouble (kernel mischief): "
	               "segmentation fault (SIGSEGV) at address 0x10; the kernel used memory it does "
	               "not own", "with the kernel function beside it when that is another name");
	struct rco_argument too_big[2] = {integer_argument(1), integer_argument(1)};
	too_big[0].integer = 1LL << 40;
	float named_out[10];
	CHECK_INT(run_on(library, "mischief", named_out, 2, too_big, 0), RCO_ERROR_ARGUMENT,
	          "rco_run_named: an argument out of range");
	CHECK_STR(error.message, "my_ops::trouble (kernel mischief) argument 2 (int how): 1099511627776 "
	          "is out of the int32 range",
	          "is named as the caller names the op");
	CHECK_STR(error.op, "mischief", "error->op is the op's name in the build");
	run_name = NULL;
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

/* Opens path with threads (0: as many as CPUs), stop_on_interrupt and a
 * default time limit. */
static rco_library *open_with(const char *path, int threads, int stop_on_interrupt,
                              double timeout)
{
	struct rco_options options;
	memset(&options, 0, sizeof options);
	options.threads = threads;
	options.stop_on_interrupt = stop_on_interrupt;
	options.timeout = timeout;
	static struct rco_error open_error;
	rco_library *library = NULL;
	if (rco_open(path, &options, &library, &open_error) != 0)
		printf("# rco_open %s: %s\n", path, open_error.message);
	return library;
}

/* "0 0 1 n n": each value, n for NaN (not written). */
static const char *written_text(const float *values, int count)
{
	static char text[512];
	size_t used = 0;
	text[0] = '\0';
	for (int i = 0; i < count && used < sizeof text; i++)
		used += (size_t)snprintf(text + used, sizeof text - used, "%s%s", i ? " " : "",
		                         isnan(values[i]) ? "n" : values[i] == 0 ? "0" : "v");
	return text;
}

/* The lines of cores first..last, each "core N: op mischief: " then what. */
/* "cores 0, 1 and 5", "cores 2-7", "core 3": the cores of bits, as the
 * library names the cores that failed alike. */
static const char *cores_named(unsigned bits)
{
	static char text[128];
	int items[8][2], count = 0;
	for (int core = 0; core < 8; core++) {
		if (!(bits >> core & 1))
			continue;
		if (count > 0 && items[count - 1][1] == core - 1)
			items[count - 1][1] = core;
		else
			items[count][0] = items[count][1] = core, count++;
	}
	size_t used = (size_t)snprintf(text, sizeof text, "%s", bits & (bits - 1) ? "cores" : "core");
	int shown = 0, total = 0;
	for (int k = 0; k < count; k++)
		total += items[k][1] - items[k][0] == 1 ? 2 : 1;
	for (int k = 0; k < count; k++) {
		int pair = items[k][1] - items[k][0] == 1;
		for (int part = 0; part < (pair ? 2 : 1); part++, shown++) {
			const char *before = shown == 0 ? " " : shown == total - 1 ? " and " : ", ";
			if (pair || items[k][0] == items[k][1])
				used += (size_t)snprintf(text + used, sizeof text - used, "%s%d", before,
				                         items[k][0] + part);
			else
				used += (size_t)snprintf(text + used, sizeof text - used, "%s%d-%d", before,
				                         items[k][0], items[k][1]);
		}
	}
	return text;
}

/* The line of op mischief's error for cores first to last, which failed alike. */
static const char *core_lines(int first, int last, const char *what)
{
	static char text[4096];
	unsigned bits = 0;
	for (int core = first; core <= last; core++)
		bits |= 1u << core;
	snprintf(text, sizeof text, "%s: op mischief: %s", cores_named(bits), what);
	return text;
}

static void test_time_limit(void)
{
	/* One thread: the caller runs the cores one after another. */
	rco_library *library = open_with(mischief_multi, 1, 0, 0);
	if (!library)
		return;
	float out[10];
	struct rco_argument extra[2] = {integer_argument(5), integer_argument(3)};
	CHECK_INT(run_on(library, "mischief", out, 2, extra, 0.2), RCO_ERROR_TIMEOUT,
	          "a kernel that never returns, on the caller's thread: the time limit");
	char message[PATH_MAX + 512];
	snprintf(message, sizeof message, "core 3: op mischief: still running when the time limit of "
	         "0.2 s passed: stopped\n%s",
	         core_lines(4, 7, "not started when the time limit of 0.2 s passed"));
	CHECK_STR(error.message, message,
	          "names the core that was still running, and the cores not started");
	CHECK(error.core == 3 && error.signal == SIGURG, "the core, and the signal that stopped it");
	CHECK_STR(written_text(out, 10), "0 0 0 0 0 n n n n n",
	          "cores 0 to 3 wrote their shares, the others never ran");
	check_good_call(library, "after the time limit, new cores");
	CHECK_INT(run_on(library, "mischief", out, 2, extra, 0.2), RCO_ERROR_TIMEOUT,
	          "the new cores stop at a time limit too");
	rco_close(library);

	/* Eight threads: after a call whose cores each took 20 ms, every core
	 * gets a thread of its own at once. */
	library = open_with(mischief_multi, 8, 0, 0);
	if (library) {
		check_good_call(library, "the build opened again after a time limit");
		extra[0] = integer_argument(27);
		extra[1] = integer_argument(-1);
		CHECK_INT(run_on(library, "mischief", out, 2, extra, 0), 0, "a call of 20 ms per core");
		extra[0] = integer_argument(6);
		CHECK_INT(run_on(library, "mischief", out, 2, extra, 0.1), RCO_ERROR_TIMEOUT,
		          "kernels blocked in a system call on every core, on eight threads");
		CHECK_STR(error.message, core_lines(0, 7, "still running when the time limit of 0.1 s "
		                                    "passed: stopped"), "are all stopped");
		rco_close(library);
	}

	library = open_with(mischief_single, 0, 0, 0.1);
	if (library) {
		extra[0] = integer_argument(5);
		extra[1] = integer_argument(0);
		CHECK_INT(run_on(library, "mischief", out, 2, extra, RCO_DEFAULT_TIMEOUT), RCO_ERROR_TIMEOUT,
		          "the library's time limit is the default of every call");
		CHECK_STR(error.message, "core 0: op mischief: still running when the time limit of 0.1 "
		          "s passed: stopped", "a single core is stopped on the caller's thread");
		rco_close(library);
	}

	/* A caller that blocks SIGURG itself: the library unblocks it while its
	 * cores run on the thread, and blocks it again after. */
	library = open_with(mischief_single, 0, 0, 0);
	if (library) {
		sigset_t urgent, before, after;
		sigemptyset(&urgent);
		sigaddset(&urgent, SIGURG);
		sigaddset(&urgent, SIGUSR2);
		pthread_sigmask(SIG_BLOCK, &urgent, &before);
		pthread_sigmask(SIG_BLOCK, NULL, &before);
		extra[0] = integer_argument(5);
		extra[1] = integer_argument(0);
		CHECK_INT(run_on(library, "mischief", out, 2, extra, 0.1), RCO_ERROR_TIMEOUT,
		          "a caller that blocks SIGURG still gets its time limit");
		pthread_sigmask(SIG_BLOCK, NULL, &after);
		int same = 1;
		for (int number = 1; number < 32; number++)
			same &= sigismember(&before, number) == sigismember(&after, number);
		CHECK(same && sigismember(&after, SIGURG), "and its signal mask is as it was");
		pthread_sigmask(SIG_UNBLOCK, &urgent, NULL);
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
	          "0|cores 0-7: op warn: the first warning\n0|cores 0-7: op warn: the second warning, 2\n",
	          "warnings reach warn once per call each, naming every core that gave them");
	memset(&capture, 0, sizeof capture);
	struct rco_argument own[2] = {integer_argument(29), integer_argument(-1)};
	CHECK_INT(run_on(library, "mischief", out, 2, own, 0), 0, "an op whose cores warn each its own");
	CHECK_STR(capture.warnings,
	          "0|core 0: op mischief: core 0 warns\n1|core 1: op mischief: core 1 warns\n"
	          "2|core 2: op mischief: core 2 warns\n3|core 3: op mischief: core 3 warns\n"
	          "4|core 4: op mischief: core 4 warns\n5|core 5: op mischief: core 5 warns\n"
	          "6|core 6: op mischief: core 6 warns\n7|core 7: op mischief: core 7 warns\n",
	          "warnings that differ come one by one, core by core");
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
	static const char *const refused[][3] = {
		{"100", "not a power of two", "a size that is not a power of two"},
		{"262144", "too big", "a size above 131072"},
		{"18446744073709551616", "too big", "a size beyond 64 bits is too big"},
		{"12x", "not a number", "a size that is not a number"},
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		char message[512];
		snprintf(message, sizeof message, "NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=%s: %s; the "
		         "device takes a power of two up to 131072 (the bytes of each core's printf "
		         "buffer), or 0 to print nothing", refused[i][0], refused[i][1]);
		setenv(RCO_PRINT_BUFFER_VARIABLE, refused[i][0], 1);
		check_open_error(fake_multi, &options, RCO_ERROR_USAGE, message, refused[i][2]);
	}
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

static volatile sig_atomic_t later_handler_calls;

static void later_handler(int signal_number)
{
	(void)signal_number;
	later_handler_calls++;
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
	sigaction(SIGABRT, NULL, &seen);
	CHECK(seen.sa_handler != own_handler, "while a library is open, its SIGABRT handler is the "
	      "process's");
	check_mischief(library, 2, 0, RCO_ERROR_OP, "core 0: op mischief: the kernel called abort() "
	               "(SIGABRT), as a failed assert() does", "abort() with a handler of the caller's");
	CHECK_INT(own_handler_calls, 0, "the caller's SIGABRT handler did not see the kernel's abort()");
	raise(SIGABRT);
	CHECK_INT(own_handler_calls, 1, "a SIGABRT not about a core goes on to the caller's handler");

	/* A SIGABRT for this thread during a call goes to the caller's handler. */
	struct hang_call call = {library, -1};
	pthread_t thread;
	pthread_create(&thread, NULL, run_hang, &call);
	usleep(100000);
	pthread_kill(pthread_self(), SIGABRT);
	pthread_join(thread, NULL);
	CHECK_INT(own_handler_calls, 2, "a signal not about a core went on to the caller's handler");
	CHECK_INT(call.status, RCO_ERROR_TIMEOUT, "while the call ran on");
	rco_close(library);

	/* A handler installed while the library is open, as Python's
	 * faulthandler.enable() does: the next call installs the library's
	 * again, and passes other signals on to the new one. */
	library = open_build(mischief_single, 0, NULL);
	if (!library)
		return;
	struct sigaction later;
	memset(&later, 0, sizeof later);
	later.sa_handler = later_handler;
	sigemptyset(&later.sa_mask);
	sigaction(SIGABRT, &later, NULL);
	sigaction(SIGSEGV, &later, NULL);
	check_mischief(library, 2, 0, RCO_ERROR_OP, "core 0: op mischief: the kernel called abort() "
	               "(SIGABRT), as a failed assert() does",
	               "abort() after the caller installed a handler of its own");
	check_mischief(library, 1, 0, RCO_ERROR_OP, "core 0: op mischief: segmentation fault (SIGSEGV) "
	               "at address 0x10; the kernel used memory it does not own",
	               "a fault after the caller installed a handler of its own");
	CHECK_INT(later_handler_calls, 0, "the handler installed after rco_open saw neither");
	raise(SIGABRT);
	CHECK(later_handler_calls == 1 && own_handler_calls == 2,
	      "a signal not about a core goes on to the handler installed last");
	rco_close(library);
	sigaction(SIGABRT, NULL, &seen);
	CHECK(seen.sa_handler == later_handler, "after rco_close the process's last handler is back");
	sigaction(SIGSEGV, &segv_before, NULL);
	sigaction(SIGSEGV, NULL, &seen);
	CHECK(same_disposition(&seen, &segv_before), "and SIGSEGV's is the caller's to put back");
	signal(SIGABRT, SIG_DFL);
}

/* In a child: a SIGABRT handler that, as faulthandler does, puts back the
 * disposition it found when it was installed (the library's) and raises
 * the signal again; each call writes a byte to chain_pipe. */
static int chain_pipe[2];
static struct sigaction chain_found;

static void chaining_handler(int signal_number)
{
	char byte = 'x';
	ssize_t wrote = write(chain_pipe[1], &byte, 1);
	(void)wrote;
	sigaction(signal_number, &chain_found, NULL);
	raise(signal_number);
}

static void test_handler_that_hands_back(void)
{
	if (pipe(chain_pipe) != 0)
		return;
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		alarm(10); /* a handler and the library passing the signal back and forth for ever */
		rco_library *library = open_build(mischief_single, 0, NULL);
		struct sigaction chaining;
		memset(&chaining, 0, sizeof chaining);
		chaining.sa_handler = chaining_handler;
		sigemptyset(&chaining.sa_mask);
		sigaction(SIGABRT, &chaining, &chain_found);
		float out[10];
		run_on(library, "relu", out, 0, NULL, 0); /* installs the library's again */
		raise(SIGABRT);
		_exit(0);
	}
	close(chain_pipe[1]);
	int status = 0;
	waitpid(child, &status, 0);
	char bytes[16];
	ssize_t got = read(chain_pipe[0], bytes, sizeof bytes);
	close(chain_pipe[0]);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && got == 1,
	      "a handler that hands the signal back to the library's ends by the default action, "
	      "once");
}

/* The rules a kernel cannot break, on the caller's thread (single) and on
 * any thread (multi). */
static void test_kernel_rules(void)
{
	static const char *const rules[][2] = {
		{"20", "the kernel called pthread_exit(), which would end the thread that runs the core "
		       "on the host; a kernel ends by returning its result"},
		{"21", "the kernel called pthread_create(), which the device does not have (a core runs "
		       "its kernel on one thread; on the host a thread it starts would outlive the op)"},
		{"22", "the kernel called sigprocmask() to block SIGURG; the device has no signals, and "
		       "on the host the runner needs SIGURG, SIGINT and the fault signals to stop and "
		       "report a kernel"},
		{"23", "the kernel called sigaction() for SIGSEGV, which changes how the whole program "
		       "handles that signal, beyond the op; the device has no signals"},
		{"24", "the kernel called signal() for SIGINT, which changes how the whole program "
		       "handles that signal, beyond the op; the device has no signals"},
		{"26", "the kernel called sigwait() to take SIGINT; the device has no signals, and on "
		       "the host the runner needs SIGURG, SIGINT and the fault signals to stop and "
		       "report a kernel"},
	};
	const char *builds[2] = {mischief_single, mischief_multi};
	for (int b = 0; b < 2; b++) {
		rco_library *library = open_build(builds[b], 0, NULL);
		if (!library)
			continue;
		int core = b == 0 ? 0 : 2;
		for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
			char message[512], what[128];
			snprintf(message, sizeof message, "core %d: op mischief: %s", core, rules[i][1]);
			snprintf(what, sizeof what, "%s: mischief %s", b == 0 ? "one core" : "eight cores",
			         rules[i][0]);
			check_mischief(library, atoi(rules[i][0]), core, RCO_ERROR_OP, message, what);
		}
		rco_close(library);
	}
	struct sigaction interrupt_before, interrupt_after;
	sigaction(SIGINT, NULL, &interrupt_before);
	rco_library *library = open_build(mischief_single, 0, NULL);
	if (library) {
		float out[10];
		struct rco_argument extra[2] = {integer_argument(25), integer_argument(0)};
		sigset_t mask;
		CHECK_INT(run_on(library, "mischief", out, 2, extra, 0), 0,
		          "a kernel may block another signal, and read the mask and a disposition");
		pthread_sigmask(SIG_BLOCK, NULL, &mask);
		CHECK(!sigismember(&mask, SIGUSR1), "the signal is not blocked after the call");
		rco_close(library);
	}
	/* The mask goes back after a call that a violation ended, too: the
	 * caller's SIGUSR1 blocked again, the kernel's SIGUSR2 not. */
	library = open_build(mischief_single, 0, NULL);
	if (library) {
		float out[10];
		struct rco_argument extra[2] = {integer_argument(32), integer_argument(0)};
		sigset_t user, mask;
		sigemptyset(&user);
		sigaddset(&user, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &user, NULL);
		CHECK_INT(run_on(library, "mischief", out, 2, extra, 0), RCO_ERROR_OP,
		          "a kernel that changed the mask with sighold() and sigrelse() and then threw");
		pthread_sigmask(SIG_UNBLOCK, &user, &mask);
		CHECK(sigismember(&mask, SIGUSR1) && !sigismember(&mask, SIGUSR2),
		      "leaves the caller's mask as it was");
		rco_close(library);
	}
	sigaction(SIGINT, NULL, &interrupt_after);
	CHECK(same_disposition(&interrupt_before, &interrupt_after), "SIGINT's disposition is untouched");
}

/* A stack overflow on the caller's thread, which has an alternate signal
 * stack of its own: reported, and the caller's stack is back after. */
static void test_caller_stack(void)
{
	static char own_stack[64 * 1024];
	stack_t own, before, after;
	memset(&own, 0, sizeof own);
	own.ss_sp = own_stack;
	own.ss_size = sizeof own_stack;
	sigaltstack(&own, &before);
	rco_library *library = open_build(mischief_single, 0, NULL);
	if (library) {
		check_mischief(library, 28, 0, RCO_ERROR_OP, "core 0: op mischief: stack overflow in the "
		               "core stack (12288 bytes); build with a larger -DSTACK_SIZE=<bytes> "
		               "(see build-custom-op(1))", "a stack overflow on the caller's thread");
		rco_close(library);
	}
	sigaltstack(NULL, &after);
	CHECK(after.ss_sp == own_stack && after.ss_size == sizeof own_stack && !(after.ss_flags & SS_DISABLE),
	      "the caller's alternate signal stack is back after the call");
	sigaltstack(&before, NULL);
}

/* Faults, exceptions, exits, printf and warnings on every path: one core on
 * the caller's thread; eight on the caller's alone; eight shared with
 * workers (each core sleeps 20 ms first, so that the caller lets them in). */
static void test_every_path(void)
{
	static const struct {
		int threads, slow, core;
		const char *name;
	} paths[] = {
		{0, 0, 0, "one core"},
		{1, 0, 5, "eight cores on the caller's thread"},
		{8, 100, 5, "eight cores shared with workers"},
	};
	static const char *const failures[][2] = {
		{"1", "segmentation fault (SIGSEGV) at address 0x10; the kernel used memory it does not "
		      "own"},
		{"2", "the kernel called abort() (SIGABRT), as a failed assert() does"},
		{"3", "the kernel threw a C++ exception that it did not catch: std::runtime_error: the "
		      "kernel gave up"},
		{"13", "the kernel called exit(0), which would end the process on the host; a kernel "
		       "ends by returning its result"},
		{"28", "stack overflow in the core stack (12288 bytes); build with a larger "
		       "-DSTACK_SIZE=<bytes> (see build-custom-op(1))"},
	};
	for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
		struct capture capture;
		memset(&capture, 0, sizeof capture);
		struct rco_options options;
		memset(&options, 0, sizeof options);
		options.threads = paths[p].threads;
		options.print = capture_print;
		options.warn = capture_warn;
		options.context = &capture;
		rco_library *library = NULL;
		if (rco_open(p == 0 ? mischief_single : mischief_multi, &options, &library, &error) != 0)
			continue;
		int core = paths[p].core;
		for (size_t f = 0; f < sizeof failures / sizeof failures[0]; f++) {
			char message[512], what[160];
			snprintf(message, sizeof message, "core %d: op mischief: %s", core, failures[f][1]);
			snprintf(what, sizeof what, "%s: mischief %s", paths[p].name, failures[f][0]);
			check_mischief(library, paths[p].slow + atoi(failures[f][0]), core, RCO_ERROR_OP,
			               message, what);
		}
		memset(&capture, 0, sizeof capture);
		float out[10];
		struct rco_argument extra[2] = {integer_argument(paths[p].slow + 11), integer_argument(core)};
		run_on(library, "mischief", out, 2, extra, 0);
		char expected[128], what[160];
		snprintf(expected, sizeof expected, "core %d was here\n", core);
		snprintf(what, sizeof what, "%s: what a core printed before it faulted reaches print",
		         paths[p].name);
		CHECK_STR(capture.printed[core], expected, what);
		memset(&capture, 0, sizeof capture);
		extra[0] = integer_argument(paths[p].slow + 29);
		run_on(library, "mischief", out, 2, extra, 0);
		snprintf(expected, sizeof expected, "%d|core %d: op mischief: core %d warns\n", core, core,
		         core);
		snprintf(what, sizeof what, "%s: a warning reaches warn", paths[p].name);
		CHECK_STR(capture.warnings, expected, what);
		rco_close(library);
	}
}

/* Strides: only a contiguous layout is run. */
static void test_strides(void)
{
	rco_library *library = open_build(fake_single, 0, NULL);
	if (!library)
		return;
	static float x[12], out[12];
	for (int i = 0; i < 12; i++)
		x[i] = (float)i;
	struct rco_argument t = tensor_argument(x, 6);
	t.tensor.rank = 2;
	t.tensor.sizes[0] = 2;
	t.tensor.sizes[1] = 3;
	t.tensor.strides[0] = 3;
	t.tensor.strides[1] = 1;
	struct rco_tensor output = t.tensor;
	output.data = out;
	CHECK_INT(rco_run(library, 0, &t, 1, &output, 0, &error), 0, "a contiguous 2x3 tensor runs");
	CHECK_STR(floats_text(out, 6), "out: 0 2 4 6 8 10", "and gives the right result");
	struct rco_argument column = tensor_argument(x, 2);
	column.tensor.strides[0] = 3;
	struct rco_tensor two = float_tensor(out, 2);
	check_argument_error(library, "scale2", &column, 1, &two, RCO_ERROR_ARGUMENT,
	                     "scale2 argument 1 (Tensor x) is not contiguous (dimension 0 has stride "
	                     "3 where a contiguous tensor has 1); pass a contiguous tensor",
	                     "a column of a 2x3 array is refused");
	CHECK_INT(last_argument, 0, "the error names the argument");
	struct rco_argument repeated = tensor_argument(x, 4);
	repeated.tensor.strides[0] = 0;
	struct rco_tensor four = float_tensor(out, 4);
	check_argument_error(library, "scale2", &repeated, 1, &four, RCO_ERROR_ARGUMENT,
	                     "scale2 argument 1 (Tensor x) is not contiguous (dimension 0 has stride "
	                     "0 where a contiguous tensor has 1); pass a contiguous tensor",
	                     "a stride of 0 over 4 elements is refused");
	struct rco_argument ones = t;
	ones.tensor.sizes[0] = 1;
	ones.tensor.sizes[1] = 6;
	ones.tensor.strides[0] = 1000;
	struct rco_tensor one_output = ones.tensor;
	one_output.data = out;
	one_output.strides[0] = 0;
	memset(out, 0, sizeof out);
	CHECK_INT(rco_run(library, 0, &ones, 1, &one_output, 0, &error), 0,
	          "a dimension of size 1 may have any stride");
	CHECK_STR(floats_text(out, 6), "out: 0 2 4 6 8 10", "and is read in order");
	struct rco_tensor transposed = output;
	transposed.sizes[0] = 3;
	transposed.sizes[1] = 2;
	transposed.strides[0] = 1;
	transposed.strides[1] = 3;
	check_argument_error(library, "scale2", &t, 1, &transposed, RCO_ERROR_ARGUMENT,
	                     "scale2's output is not contiguous (dimension 1 has stride 3 where a "
	                     "contiguous tensor has 1); pass a contiguous tensor",
	                     "a transposed output is refused");
	CHECK_INT(last_argument, -1, "the error is about the output");
	struct rco_argument empty = t;
	empty.tensor.sizes[0] = 0;
	empty.tensor.strides[1] = 7;
	struct rco_tensor empty_output = empty.tensor;
	empty_output.data = out;
	CHECK_INT(rco_run(library, 0, &empty, 1, &empty_output, 0, &error), 0,
	          "an empty tensor has no layout to refuse");
	rco_close(library);
}

/* An output that shares part of an input's memory: the cores would read
 * elements they have already written.  The same memory is allowed. */
static void test_overlap(void)
{
	rco_library *library = open_build(fake_single, 0, NULL);
	if (!library)
		return;
	static float buffer[7];
	for (int i = 0; i < 7; i++)
		buffer[i] = (float)(i + 1);
	struct rco_argument x = tensor_argument(buffer, 6);
	struct rco_tensor shifted = float_tensor(buffer + 1, 6);
	check_argument_error(library, "scale2", &x, 1, &shifted, RCO_ERROR_ARGUMENT,
	                     "scale2 argument 1 (Tensor x) and scale2's output share some of their "
	                     "memory: the cores would read elements they have already written; pass "
	                     "an output of its own, or the input itself",
	                     "an output one element past its input is refused");
	CHECK_INT(last_argument, 0, "the error names the argument");
	CHECK_STR(floats_text(buffer, 7), "out: 1 2 3 4 5 6 7", "and nothing was written");
	int scale2 = rco_op_index(library, "scale2");
	CHECK_INT(rco_check_arguments(library, scale2, "ns::scale2", &x, 1, &shifted, &error),
	          RCO_ERROR_ARGUMENT, "rco_check_arguments refuses it without running");
	CHECK_STR(error.message, "ns::scale2 argument 1 (Tensor x) and ns::scale2's output share "
	          "some of their memory: the cores would read elements they have already written; "
	          "pass an output of its own, or the input itself", "with rco_run's message");
	CHECK_INT(error.argument, 0, "naming the argument");
	struct rco_tensor same = float_tensor(buffer, 6);
	CHECK_INT(rco_check_arguments(library, scale2, NULL, &x, 1, &same, &error), 0,
	          "rco_check_arguments takes the input itself as the output");
	CHECK_STR(floats_text(buffer, 7), "out: 1 2 3 4 5 6 7", "and runs nothing");
	CHECK_INT(rco_run(library, 0, &x, 1, &same, 0, &error), 0, "the input itself as the output runs");
	CHECK_STR(floats_text(buffer, 7), "out: 2 4 6 8 10 12 7", "in place");
	struct rco_tensor after = float_tensor(buffer + 6, 1);
	struct rco_argument first = tensor_argument(buffer, 1);
	CHECK_INT(rco_run(library, 0, &first, 1, &after, 0, &error), 0,
	          "an output just past its input runs");
	CHECK_STR(floats_text(buffer, 7), "out: 2 4 6 8 10 12 4", "into its own memory");
	rco_close(library);
}

static void test_describe_argument(void)
{
	rco_library *library = open_build(fake_single, 0, NULL);
	if (!library)
		return;
	int scale2 = rco_op_index(library, "scale2");
	char text[128];
	CHECK_INT(rco_describe_argument(library, scale2, NULL, 0, text, sizeof text),
	          strlen("scale2 argument 1 (Tensor x)"), "an argument's description: its length");
	CHECK_STR(text, "scale2 argument 1 (Tensor x)", "the op, the argument's number and schema");
	rco_describe_argument(library, scale2, NULL, -1, text, sizeof text);
	CHECK_STR(text, "scale2's output", "-1: the output");
	rco_describe_argument(library, scale2, "ns::scale2", 0, text, sizeof text);
	CHECK_STR(text, "ns::scale2 argument 1 (Tensor x)", "the op as the caller calls it");
	rco_describe_argument(library, scale2, "ns::twice", 0, text, sizeof text);
	CHECK_STR(text, "ns::twice (kernel scale2) argument 1 (Tensor x)",
	          "with its kernel's name when that is another");
	CHECK_INT(rco_describe_argument(library, scale2, NULL, 0, text, 7), 28,
	          "a short buffer: the whole length");
	CHECK_STR(text, "scale2", "and the text cut");
	CHECK_INT(rco_describe_argument(library, scale2, NULL, 1, text, sizeof text), 0,
	          "no argument 2: nothing");
	CHECK_STR(text, "", "an empty text");
	CHECK_INT(rco_describe_argument(library, -1, NULL, 0, text, sizeof text), 0,
	          "no op -1: nothing");
	rco_close(library);
}

/* ---- interruption ---- */

static volatile sig_atomic_t interrupt_calls;

static void count_interrupt(int signal_number)
{
	(void)signal_number;
	interrupt_calls++;
}

struct later_signal {
	pthread_t thread;        /* where to send it */
	int signal_number;       /* 0: rco_stop */
	rco_library *library;
	useconds_t delay;        /* after the kernel said it started, when it says so */
	int wait_started;        /* mischief 5 and 6 say so (MISCHIEF_STARTED_FD) */
};

/* The pipe mischief 5 and 6 write a byte into as they start to loop or
 * block, so that the signal is sent during the call, however long the
 * call takes to start on a busy machine. */
static int started_pipe[2] = {-1, -1};

static void *send_later(void *argument)
{
	struct later_signal *later = argument;
	if (later->wait_started) {
		struct pollfd readable = {.fd = started_pipe[0], .events = POLLIN};
		char byte;
		if (poll(&readable, 1, 60000) == 1 && read(started_pipe[0], &byte, 1) != 1)
			perror("test_library: the started pipe");
	}
	usleep(later->delay);
	if (later->signal_number)
		pthread_kill(later->thread, later->signal_number);
	else
		rco_stop(later->library);
	return NULL;
}

/* Runs mischief how on core (-1: all) on library while, after delay, the
 * signal (or rco_stop) comes; returns the status. */
static int run_interrupted(rco_library *library, int how, int core, int signal_number,
                           useconds_t delay, double timeout, float *out)
{
	struct later_signal later = {pthread_self(), signal_number, library, delay,
	                             how == 5 || how == 6};
	pthread_t sender;
	pthread_create(&sender, NULL, send_later, &later);
	struct rco_argument extra[2] = {integer_argument(how), integer_argument(core)};
	int status = run_on(library, "mischief", out, 2, extra, timeout);
	pthread_join(sender, NULL);
	return status;
}

static void test_interrupt(void)
{
	struct sigaction counting, previous;
	memset(&counting, 0, sizeof counting);
	counting.sa_handler = count_interrupt;
	sigemptyset(&counting.sa_mask);
	sigaction(SIGINT, &counting, &previous);
	float out[10];
	char descriptor[32];
	if (pipe(started_pipe) != 0)
		perror("test_library: pipe");
	fcntl(started_pipe[0], F_SETFD, FD_CLOEXEC);
	fcntl(started_pipe[1], F_SETFD, FD_CLOEXEC);
	snprintf(descriptor, sizeof descriptor, "%d", started_pipe[1]);
	setenv("MISCHIEF_STARTED_FD", descriptor, 1);

	rco_library *library = open_with(mischief_single, 0, 1, 0);
	if (library) {
		check_good_call(library, "a library that stops on SIGINT");
		CHECK_INT(interrupt_calls, 0, "no SIGINT yet");
		raise(SIGINT);
		CHECK_INT(interrupt_calls, 1, "a SIGINT between calls goes to the process's handler at once");
		int status = run_interrupted(library, 5, 0, SIGINT, 100000, 0, out);
		CHECK_INT(status, RCO_ERROR_INTERRUPTED, "SIGINT stops a kernel that never returns");
		CHECK_STR(error.message, "core 0: op mischief: still running when the op was interrupted "
		          "(SIGINT): stopped", "names the core stopped");
		CHECK(error.core == 0 && error.signal == SIGURG, "the core, and the signal that stopped it");
		CHECK_INT(interrupt_calls, 2, "the SIGINT reached the process's handler when the call returned");
		check_good_call(library, "after an interrupt, new cores");
		rco_close(library);
	}

	library = open_with(mischief_multi, 1, 1, 0);
	if (library) {
		int status = run_interrupted(library, 6, 2, SIGINT, 100000, 0, out);
		CHECK_INT(status, RCO_ERROR_INTERRUPTED, "SIGINT stops eight cores on one thread");
		char message[1024];
		snprintf(message, sizeof message, "core 2: op mischief: still running when the op was "
		         "interrupted (SIGINT): stopped\n%s",
		         core_lines(3, 7, "not started when the op was interrupted (SIGINT)"));
		CHECK_STR(error.message, message, "the core stopped and those not started");
		CHECK_INT(interrupt_calls, 3, "and the SIGINT reached the process's handler");
		rco_close(library);
	}

	/* Without stop_on_interrupt, SIGINT is the process's at once. */
	library = open_with(mischief_single, 0, 0, 0);
	if (library) {
		int status = run_interrupted(library, 5, 0, SIGINT, 100000, 1.5, out);
		CHECK_INT(status, RCO_ERROR_TIMEOUT, "without stop_on_interrupt SIGINT does not stop the op");
		CHECK_INT(interrupt_calls, 4, "it goes to the process's handler as it comes");
		rco_close(library);
	}

	/* An op that ends before the SIGINT stops it: the call succeeds, and the
	 * signal reaches the process's handler when it returns. */
	library = open_with(mischief_single, 0, 1, 0);
	if (library) {
		int status = run_interrupted(library, 27, 0, SIGINT, 0, 0, out);
		CHECK(status == 0 || status == RCO_ERROR_INTERRUPTED, "a call interrupted as it ends");
		CHECK_INT(interrupt_calls, 5, "the SIGINT reaches the process's handler once");
		rco_close(library);
	}

	/* rco_stop, from another thread. */
	library = open_with(mischief_multi, 1, 0, 0);
	if (library) {
		rco_stop(library);
		check_good_call(library, "rco_stop with no call in progress changes nothing");
		int status = run_interrupted(library, 6, 0, 0, 100000, 0, out);
		CHECK_INT(status, RCO_ERROR_INTERRUPTED, "rco_stop stops the call in progress");
		char message[1024];
		snprintf(message, sizeof message, "core 0: op mischief: still running when rco_stop was "
		         "called: stopped\n%s", core_lines(1, 7, "not started when rco_stop was called"));
		CHECK_STR(error.message, message, "naming the cores");
		check_good_call(library, "after rco_stop, new cores");
		rco_close(library);
	}
	sigaction(SIGINT, NULL, &counting);
	CHECK(counting.sa_handler == count_interrupt,
	      "after rco_close the process's SIGINT handler is back");
	sigaction(SIGINT, &previous, NULL);
	unsetenv("MISCHIEF_STARTED_FD");
	close(started_pipe[0]);
	close(started_pipe[1]);
}

/* Every open, fault and close gives back what it took: descriptors and
 * mappings. */
static int count_lines(const char *path)
{
	FILE *file = fopen(path, "r");
	int lines = 0;
	for (int c; file && (c = getc(file)) != EOF;)
		lines += c == '\n';
	if (file)
		fclose(file);
	return lines;
}

static int count_descriptors(void)
{
	int count = 0;
	for (int fd = 0; fd < 4096; fd++)
		count += fcntl(fd, F_GETFD) != -1;
	return count;
}

static void open_fault_close(int times)
{
	for (int i = 0; i < times; i++) {
		rco_library *library = open_build(mischief_single, 0, NULL);
		if (!library)
			return;
		float out[10];
		struct rco_argument extra[2] = {integer_argument(9), integer_argument(0)};
		run_on(library, "mischief", out, 2, extra, 0);
		rco_close(library);
	}
}

static void test_no_leak_per_fault(void)
{
	/* A second library of the same build keeps the first's file loaded, so
	 * that each cycle loads a private copy. */
	rco_library *first = open_build(mischief_single, 0, NULL);
	if (!first)
		return;
	open_fault_close(3);
	int descriptors = count_descriptors(), mappings = count_lines("/proc/self/maps");
	open_fault_close(100);
	CHECK_INT(count_descriptors() - descriptors, 0,
	          "100 cycles of open, fault and close leave no descriptor open");
	/* Each cycle used to leave its copy mapped, 8 mappings a time; under
	 * make check-asan the sanitizer's allocator may map a region of its own. */
	int grown = count_lines("/proc/self/maps") - mappings;
	CHECK(grown >= 0 && grown < 10, "and no mapping");
	if (grown)
		printf("# %d more mappings after 100 cycles\n", grown);
	rco_close(first);
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
	rco_close(fake);
	rco_close(real);
	sigaction(SIGSEGV, NULL, &seen);
	CHECK(same_disposition(&seen, &segv_before),
	      "after concurrent calls and rco_close the process's handlers are back");
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
		int right = run_on(library, "scale2", out, 0, NULL, 0) == 0 && out[9] == 8 &&
		            run_on(library, "scale2", out, 0, NULL, 0) == 0 && out[0] == -10;
		rco_close(library);
		rco_library *again = open_build(fake_multi, 0, NULL);
		right = right && again && run_on(again, "scale2", out, 0, NULL, 0) == 0 && out[9] == 8;
		rco_close(again);
		_exit(right ? 0 : 1);
	}
	int status = -1;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "in a child of fork(), the parent's library runs on cores of the child's own; one "
	      "opened there runs too");
	check_good_call(library, "the parent's library after the fork");
	rco_close(library);
}

/* Last: the lost cores' threads sleep until the program ends.  Eight
 * threads, after a call of 20 ms per core: each core gets a thread at once.
 * The kernel returns after 0.1 s on the caller's thread, marking its share
 * with 100; on the others it blocks SIGURG with a system call of its own
 * and never returns. */
static void test_lost_core(void)
{
	rco_library *library = open_with(mischief_multi, 8, 0, 0);
	if (!library)
		return;
	float out[10];
	struct rco_argument extra[2] = {integer_argument(27), integer_argument(-1)};
	run_on(library, "mischief", out, 2, extra, 0);
	extra[0] = integer_argument(10);
	extra[1] = integer_argument((long long)syscall(SYS_gettid));
	CHECK_INT(run_on(library, "mischief", out, 2, extra, 1), RCO_ERROR_TIMEOUT,
	          "kernels that block SIGURG and never return");
	/* Core c's share of 10 elements starts at 10 * c / 8. */
	char expected[4096] = "";
	int lost = 0;
	unsigned lost_cores = 0;
	for (int core = 0; core < 8; core++) {
		if (out[10 * core / 8] == 100)
			continue;
		lost++;
		lost_cores |= 1u << core;
	}
	snprintf(expected, sizeof expected, "%s: op mischief: still running when the time limit of "
	         "1 s passed, and it did not stop (it blocks SIGURG): it runs on, and may still read "
	         "and write the call's tensors", cores_named(lost_cores));
	CHECK(lost >= 1 && lost <= 7, "some ran on the caller's thread, the others on workers");
	CHECK_STR(error.message, expected, "are lost, and the error says what that means");
	check_good_call(library, "beside lost cores, new cores");
	rco_close(library);
	library = open_build(mischief_multi, 0, NULL);
	CHECK(library != NULL, "the build opens again beside the lost cores");
	if (library)
		check_good_call(library, "a build opened again beside lost cores");
	rco_close(library);
}

/* After a stop, a call starts new cores from the build's files: when they
 * cannot be loaded, the call says why, and a later one tries again. */
static void test_new_cores_fail(void)
{
	char directory[PATH_MAX + 32], build[PATH_MAX + 64], library_link[PATH_MAX + 64];
	char target[PATH_MAX + 64];
	snprintf(directory, sizeof directory, "%s/restart", work);
	mkdir(directory, 0755);
	const char *names[] = {"mischief.so", "mischief.ops"};
	for (int i = 0; i < 2; i++) {
		snprintf(target, sizeof target, "%s/mischief/single/%s", top, names[i]);
		snprintf(build, sizeof build, "%s/%s", directory, names[i]);
		if (symlink(target, build) != 0)
			perror(build);
	}
	snprintf(build, sizeof build, "%s/mischief", directory);
	snprintf(library_link, sizeof library_link, "%s/mischief.so", directory);
	rco_library *library = open_with(build, 0, 0, 0);
	if (!library)
		return;
	float out[10];
	struct rco_argument extra[2] = {integer_argument(5), integer_argument(0)};
	CHECK_INT(run_on(library, "mischief", out, 2, extra, 0.2), RCO_ERROR_TIMEOUT,
	          "a kernel that never returns");
	snprintf(target, sizeof target, "%s/fake/fake.so", top);
	unlink(library_link);
	if (symlink(target, library_link) != 0)
		perror(library_link);
	CHECK_INT(run_on(library, "relu", out, 0, NULL, 0), RCO_ERROR_UNUSABLE,
	          "the core library was replaced since: no new cores");
	char message[4 * PATH_MAX + 512], found_id[LIBRARY_ID_SIZE], built_id[LIBRARY_ID_SIZE];
	library_id_of_file(library_link, found_id);
	snprintf(target, sizeof target, "%s/mischief/single/mischief.so", top);
	library_id_of_file(target, built_id);
	snprintf(message, sizeof message, "%s runs no more ops: op mischief ran past the time limit "
	         "of 0.2 s on core 0, and new cores could not be started: %s.so is not the library "
	         "%s.ops was written for (its id is %s, the record's %s): it changed after the build, "
	         "or the last build did not finish; rebuild with build-custom-op --target host",
	         build, build, build, found_id, built_id);
	CHECK_STR(error.message, message, "says why");
	CHECK_INT(run_on(library, "relu", out, 0, NULL, 0), RCO_ERROR_UNUSABLE, "and again");
	CHECK_STR(error.message, message, "says the same");
	snprintf(target, sizeof target, "%s/mischief/single/mischief.so", top);
	unlink(library_link);
	if (symlink(target, library_link) != 0)
		perror(library_link);
	check_good_call(library, "the library put back: new cores");
	rco_close(library);
}

/* Set when main has run every test (see check_the_end_was_reached). */
static int reached_the_end;

/* Memory freed while a lost core still uses it is given out again: the
 * small chunks mallocs at the very end of exit() get must stay as written
 * (16 of each size up to 504 bytes: the bins the frees of exit() fill). */
static void nothing_freed_under_a_lost_core(void)
{
	enum { SIZES = 32, EACH = 16 };
	static unsigned char *chunks[SIZES][EACH];
	for (int s = 0; s < SIZES; s++)
		for (int i = 0; i < EACH; i++)
			if ((chunks[s][i] = malloc(8 + 16 * (size_t)s)) != NULL)
				memset(chunks[s][i], 0x5a, 8 + 16 * (size_t)s);
	struct timespec wait = {0, 100000000};
	nanosleep(&wait, NULL);
	for (int s = 0; s < SIZES; s++)
		for (int i = 0; i < EACH; i++)
			for (size_t b = 0; chunks[s][i] && b < 8 + 16 * (size_t)s; b++)
				if (chunks[s][i][b] != 0x5a)
					_exit(3);
}

/* Mischief 30 on a worker blocks SIGURG and writes into its share of the
 * output for ever, through the runtime (the core ledger records each
 * write).  exit() then runs the static destructors of every library: those
 * of the runtime in the lost core's library must free nothing it uses.  In
 * a child, whose lost cores end with it. */
static void test_exit_with_a_lost_core(void)
{
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		reached_the_end = 1; /* the parent's check is the parent's */
		/* Registered before the core libraries are loaded: runs after
		 * their destructors. */
		atexit(nothing_freed_under_a_lost_core);
		rco_library *library = open_with(mischief_multi, 8, 0, 0);
		if (!library)
			_exit(5);
		static float out[10];
		struct rco_argument extra[2] = {integer_argument(27), integer_argument(-1)};
		run_on(library, "mischief", out, 2, extra, 0);
		extra[0] = integer_argument(30);
		extra[1] = integer_argument((long long)syscall(SYS_gettid));
		if (run_on(library, "mischief", out, 2, extra, 1) != RCO_ERROR_TIMEOUT ||
		    !strstr(error.message, "it runs on"))
			_exit(6);
		rco_close(library);
		exit(0);
	}
	int status = 0;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "exit() with a lost core that writes through the runtime frees nothing it uses");
	if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		printf("# the child %s %d\n", WIFEXITED(status) ? "exited with" : "died by signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
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
	int mode = -1;
	const char *was = getenv(RCO_OUTPUT_CHECKS_VARIABLE);
	char kept[64];
	snprintf(kept, sizeof kept, "%s", was ? was : "");
	static const struct {
		const char *value;
		int status, mode;
	} modes[] = {{NULL, 0, RCO_OUTPUT_CHECKS_ERROR}, {"error", 0, RCO_OUTPUT_CHECKS_ERROR},
	             {"warn", 0, RCO_OUTPUT_CHECKS_WARN}, {"off", 0, RCO_OUTPUT_CHECKS_OFF},
	             {"loud", RCO_ERROR_USAGE, -1}};
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		if (modes[i].value)
			setenv(RCO_OUTPUT_CHECKS_VARIABLE, modes[i].value, 1);
		else
			unsetenv(RCO_OUTPUT_CHECKS_VARIABLE);
		mode = -1;
		char what[128];
		snprintf(what, sizeof what, "rco_output_checks_default with the variable %s",
		         modes[i].value ? modes[i].value : "unset");
		CHECK_INT(rco_output_checks_default(&mode, &error), modes[i].status, what);
		if (modes[i].status == 0)
			CHECK_INT(mode, modes[i].mode, what);
	}
	CHECK_STR(error.message, RCO_OUTPUT_CHECKS_VARIABLE "=loud: expected error (the default), "
	          "warn or off", "a value that is no mode: rco_open's message");
	if (was)
		setenv(RCO_OUTPUT_CHECKS_VARIABLE, kept, 1);
	else
		unsetenv(RCO_OUTPUT_CHECKS_VARIABLE);
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
	test_shared_code();
	test_runs();
	test_bad_arguments();
	test_failures();
	test_time_limit();
	test_printf_and_warnings();
	test_print_buffer();
	test_output_checks();
	test_profiles();
	test_signal_dispositions();
	test_handler_that_hands_back();
	test_kernel_rules();
	test_every_path();
	test_caller_stack();
	test_strides();
	test_overlap();
	test_describe_argument();
	test_interrupt();
	test_no_leak_per_fault();
	test_threads();
	test_fork();
	test_exit_with_a_lost_core();
	test_lost_core();
	test_new_cores_fail();
	remove_tree(work);
	reached_the_end = 1;
	return check_failures != 0;
}
