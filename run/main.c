/* main.c - run-custom-op: runs a host-built custom op on .npy inputs.
 *
 * A thin layer over libruncustomop (runcustomop.h): read the command line;
 * open the build; pick the op; read the inputs; run the op on every core at
 * once into one output; write and compare it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arguments.h"
#include "compare.h"
#include "console.h"
#include "npy.h"
#include "options.h"
#include "output_file.h"
#include "program.h"
#include "profile_report.h"
#include "runcustomop.h"
#include "sanitized.h"

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* Prints each line of a library message after "run-custom-op: ". */
static void report(const char *message)
{
	while (*message) {
		size_t length = strcspn(message, "\n");
		fprintf(stderr, "run-custom-op: %.*s\n", (int)length, message);
		message += length + (message[length] == '\n');
	}
}

static int exit_status_of(int status)
{
	return status == RCO_ERROR_USAGE || status == RCO_ERROR_ARGUMENT ? EXIT_USAGE : EXIT_FAILED;
}

/* Picks the op from --op, or the only one; returns -1 after reporting. */
static int choose_op(const struct run_options *options, const rco_library *library, int *status)
{
	char names[1024] = "";
	size_t used = 0;
	int count = rco_op_count(library);
	for (int i = 0; i < count && used < sizeof names; i++)
		used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
		                         rco_op_name(library, i));
	if (options->op) {
		int op = rco_op_index(library, options->op);
		if (op < 0) {
			fprintf(stderr, "run-custom-op: --op %s: %s has no such op (its ops, by kernel function: %s)\n",
			        options->op, options->library, names);
			*status = EXIT_USAGE;
		}
		return op;
	}
	if (count > 1) {
		fprintf(stderr, "run-custom-op: %s has %d ops (%s); choose one with --op NAME\n",
		        options->library, count, names);
		*status = EXIT_USAGE;
		return -1;
	}
	return 0;
}

/* The output's shape and dtype from the options, else the first tensor input. */
static int make_output(const struct run_options *options, const rco_library *library, int op,
                       const struct npy_array *arguments, struct npy_array *output)
{
	const char *kinds = rco_op_kinds(library, op);
	const struct npy_array *model = NULL;
	for (int i = 0; kinds[i] && !model; i++)
		if (kinds[i] == 'T')
			model = &arguments[i];
	memset(output, 0, sizeof *output);
	if (!model && (!options->have_out_shape || !options->have_out_dtype)) {
		fprintf(stderr, "run-custom-op: %s has no tensor argument to take the output's shape "
		        "and dtype from; give --out-shape and --out-dtype\n", rco_op_name(library, op));
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
	struct rco_tensor tensor;
	arguments_tensor_of(output, &tensor);
	rco_fill_unwritten(tensor.dtype, output->data, output->count);
	return 0;
}

/* The directory of path, whose last component starts at name. */
static void directory_of(const char *path, const char *name, char *out, size_t size)
{
	if (name == path)
		snprintf(out, size, ".");
	else
		snprintf(out, size, "%.*s", (int)(name - path), path);
}

/* Whether two names, not there yet, are one name in the same directory. */
static int one_new_name(const char *a, const char *b)
{
	struct stat first, second;
	const char *a_name = strrchr(a, '/'), *b_name = strrchr(b, '/');
	a_name = a_name ? a_name + 1 : a;
	b_name = b_name ? b_name + 1 : b;
	char a_directory[4096], b_directory[4096];
	directory_of(a, a_name, a_directory, sizeof a_directory);
	directory_of(b, b_name, b_directory, sizeof b_directory);
	return strcmp(a_name, b_name) == 0 && stat(a_directory, &first) == 0 &&
	       stat(b_directory, &second) == 0 && first.st_dev == second.st_dev &&
	       first.st_ino == second.st_ino;
}

/* Whether two paths name one file that writing either would replace: the
 * same regular file (by any name), or (when new_too) the same name, not
 * there yet, in the same directory, after the symbolic links that lead to
 * it (as output_file_write follows them).  A device or a FIFO is written
 * through, so two outputs may share one. */
static int one_file(const char *a, const char *b, int new_too)
{
	struct stat first, second;
	int a_there = stat(a, &first) == 0, b_there = stat(b, &second) == 0;
	if (a_there && b_there)
		return first.st_dev == second.st_dev && first.st_ino == second.st_ino &&
		       S_ISREG(first.st_mode);
	if (!new_too || a_there || b_there || errno != ENOENT)
		return 0;
	int a_exists = 1, b_exists = 1;
	char *a_target = output_file_resolve(a, &a_exists, &first);
	char *b_target = output_file_resolve(b, &b_exists, &second);
	int same = a_target && b_target && !a_exists && !b_exists &&
	           one_new_name(a_target, b_target);
	free(a_target);
	free(b_target);
	return same;
}

/* Refuses, before anything runs or is written, two of the files the run
 * writes (--out, --profile, --profile-svg) that are one file (one would
 * replace the other), and one of them that is --expect's (it would replace
 * the values the output is compared with, and every run would pass). */
static int refuse_one_file_twice(const struct run_options *options)
{
	const char *names[] = {"--out", "--profile", "--profile-svg"};
	const char *paths[] = {options->out, options->profile, options->profile_svg};
	for (int i = 0; i < 3; i++) {
		if (!paths[i])
			continue;
		if (options->expect && one_file(paths[i], options->expect, 0)) {
			fprintf(stderr, "run-custom-op: %s %s and --expect %s are the same file: the "
			        "output would replace the values it is compared with; write the output "
			        "elsewhere\n", names[i], paths[i], options->expect);
			return EXIT_USAGE;
		}
		for (int j = i + 1; j < 3; j++) {
			if (paths[j] && one_file(paths[i], paths[j], 1)) {
				fprintf(stderr, "run-custom-op: %s %s and %s %s are the same file: one "
				        "would replace the other; give each its own file\n", names[i],
				        paths[i], names[j], paths[j]);
				return EXIT_USAGE;
			}
		}
	}
	return 0;
}

/* Reads --expect before anything runs or is written. */
static int read_expectation(const struct run_options *options, struct npy_array *expected,
                            struct rco_error *error)
{
	if (npy_read_file(options->expect, expected, error) != 0) {
		fprintf(stderr, "run-custom-op: %s\n", error->message);
		return EXIT_FAILED;
	}
	return 0;
}

static int finish_output(const struct run_options *options, const struct npy_array *output,
                         const struct npy_array *expected, struct rco_error *error)
{
	if (options->out && npy_write_file(options->out, output, error) != 0) {
		fprintf(stderr, "run-custom-op: %s\n", error->message);
		return EXIT_FAILED;
	}
	if (!options->expect)
		return 0;
	char report_text[COMPARE_REPORT_SIZE];
	int differs = compare_arrays(output, expected, options->expect, options->rtol,
	                             options->atol, report_text);
	if (differs) {
		fprintf(stderr, "run-custom-op: %s\n", report_text);
		return EXIT_FAILED;
	}
	return 0;
}

/* Set in the environment when run-custom-op runs itself again with ASan's
 * runtime preloaded, so that it does so once at most. */
#define PRELOADED_VARIABLE "RUN_CUSTOM_OP_PRELOADED"

/* A build made with --sanitize=address needs AddressSanitizer's runtime
 * first in the process: run-custom-op runs itself again with it preloaded
 * (and the ASAN_OPTIONS the build needs).  Returns only when that is not
 * needed or not possible; rco_open then says what to run. */
static void preload_sanitizer(const struct run_options *options, char **argv)
{
	if (getenv(PRELOADED_VARIABLE))
		return;
	char runtime[4096];
	struct rco_error unfit;
	if (sanitized_runtime_of_build(options->library, options->cores, runtime, sizeof runtime) != 1 ||
	    !strchr(runtime, '/') ||
	    sanitized_check_process(options->library, runtime, &unfit) == 0)
		return;
	const char *preload = getenv("LD_PRELOAD");
	const char *asan_options = getenv("ASAN_OPTIONS");
	size_t size = strlen(runtime) + (preload ? strlen(preload) : 0) + (asan_options ? strlen(asan_options) : 0) +
	              sizeof SANITIZED_ASAN_OPTIONS + 2;
	char *preloads = malloc(size), *all_options = malloc(size);
	if (!preloads || !all_options) {
		free(preloads);
		free(all_options);
		return;
	}
	snprintf(preloads, size, "%s%s%s", runtime, preload && *preload ? ":" : "", preload ? preload : "");
	snprintf(all_options, size, "%s%s%s", asan_options ? asan_options : "",
	         asan_options && *asan_options ? ":" : "", SANITIZED_ASAN_OPTIONS);
	if (setenv("LD_PRELOAD", preloads, 1) == 0 && setenv("ASAN_OPTIONS", all_options, 1) == 0 &&
	    setenv(PRELOADED_VARIABLE, runtime, 1) == 0) {
		fflush(NULL);
		execv("/proc/self/exe", argv);
	}
	free(preloads);
	free(all_options);
}

/* Ctrl-C while the op runs: the library stops its cores, and rco_run
 * returns after handing the SIGINT on to this handler, which notes it; the
 * program then says which cores were stopped and ends by SIGINT, as a tool
 * does.  After the run SIGINT has the disposition it had before (its
 * default action); one the program was started to ignore stays ignored. */
static volatile sig_atomic_t interrupted;

static void note_interrupt(int signal_number)
{
	(void)signal_number;
	interrupted = 1;
}

static void end_by_interrupt(void)
{
	fflush(stdout);
	program_end_by_signal(SIGINT);
	_exit(EXIT_FAILED); /* not reached: SIGINT's default action ends the process */
}

/* Runs the op; returns rco_run's status. */
static int run_op(rco_library *library, int op, const struct rco_argument *arguments, int count,
                  const struct npy_array *output, struct rco_error *problem)
{
	struct rco_tensor output_tensor;
	arguments_tensor_of(output, &output_tensor);
	struct sigaction note, was;
	memset(&note, 0, sizeof note);
	note.sa_handler = note_interrupt;
	sigemptyset(&note.sa_mask);
	sigaction(SIGINT, NULL, &was);
	int ignored = !(was.sa_flags & SA_SIGINFO) && was.sa_handler == SIG_IGN;
	if (!ignored)
		sigaction(SIGINT, &note, NULL);
	int status = rco_run(library, op, arguments, count, &output_tensor, RCO_DEFAULT_TIMEOUT,
	                     problem);
	if (!ignored)
		sigaction(SIGINT, &was, NULL);
	if (status != 0)
		report(problem->message);
	if (interrupted) {
		rco_close(library);
		end_by_interrupt();
	}
	return status;
}

int main(int argc, char **argv)
{
	if (program_open_standard_descriptors() != 0)
		return EXIT_FAILED;
	struct run_options options;
	static struct rco_error problem; /* big: not on the stack */
	if (options_parse(argc, argv, &options, &problem) != 0) {
		fprintf(stderr, "run-custom-op: %s\n", problem.message);
		options_free(&options);
		return EXIT_USAGE;
	}
	if (options.help || options.version) {
		if (options.help)
			options_print_help();
		else
			printf("run-custom-op %s\n", RCO_VERSION);
		options_free(&options);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "run-custom-op: cannot write to standard output: %s\n",
			        strerror(errno ? errno : EIO));
			return EXIT_FAILED;
		}
		return 0;
	}

	preload_sanitizer(&options, argv);
	struct rco_options open_options;
	memset(&open_options, 0, sizeof open_options);
	open_options.cores = options.cores;
	open_options.core_stack = options.core_stack;
	open_options.timeout = options.timeout;
	open_options.output_checks = options.output_checks;
	open_options.print = console_print;
	open_options.warn = console_warn;
	open_options.stop_on_interrupt = 1;
	rco_library *library = NULL;
	open_options.context = &library;
	struct npy_array expected = {0};
	int status = refuse_one_file_twice(&options);
	if (status == 0 && options.expect)
		status = read_expectation(&options, &expected, &problem);
	if (status == 0 && rco_open(options.library, &open_options, &library, &problem) != 0) {
		report(problem.message);
		status = exit_status_of(problem.status);
	}
	int op = -1;
	if (status == 0)
		op = choose_op(&options, library, &status);
	int count = options.input_count;
	struct npy_array *arrays = NULL;
	struct rco_argument *arguments = NULL;
	struct npy_array output = {0};
	if (status == 0) {
		arrays = calloc((size_t)count + 1, sizeof *arrays);
		arguments = calloc((size_t)count + 1, sizeof *arguments);
		status = arrays && arguments ? arguments_build(library, op, options.inputs, count, arrays,
		                                               arguments, &problem)
		                             : RCO_ERROR_SYSTEM;
		if (status != 0) {
			fprintf(stderr, "run-custom-op: %s\n",
			        arrays && arguments ? problem.message : "out of memory");
			status = exit_status_of(status);
		}
	}
	if (status == 0)
		status = make_output(&options, library, op, arrays, &output);
	if (status == 0) {
		int failed = run_op(library, op, arguments, count, &output, &problem);
		if (failed)
			status = exit_status_of(failed);
		if ((failed == 0 || failed == RCO_ERROR_OP) &&
		    profile_report(library, options.profile, options.profile_svg) != 0 && status == 0)
			status = EXIT_FAILED;
	}
	if (status == 0)
		status = finish_output(&options, &output, &expected, &problem);
	if (console_stdout_error() && status != EXIT_USAGE) {
		fprintf(stderr, "run-custom-op: cannot write the kernel's output to standard output: %s\n",
		        strerror(console_stdout_error()));
		status = EXIT_FAILED;
	}

	rco_close(library);
	npy_free(&expected);
	npy_free(&output);
	for (int i = 0; arrays && i < count; i++)
		npy_free(&arrays[i]);
	arguments_free(arguments, count);
	free(arguments);
	free(arrays);
	options_free(&options);
	return status;
}
