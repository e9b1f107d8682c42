/* main.c - the build-custom-op command: the command line becomes a request
 * (parse_command_line), and the request is carried out (carry_out). */
#define _DEFAULT_SOURCE /* getopt_long */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "buildcustomop.h"
#include "bundle_command.h"
#include "console.h"
#include "diag.h"
#include "fsutil.h"
#include "output_file.h"
#include "program.h"

enum { EXIT_BUILD_ERROR = 1, EXIT_USAGE = 2 };

static const char program[] = "build-custom-op";

static const char usage_text[] =
"Usage: build-custom-op [OPTIONS] --name NAME --op [FN=]SCHEMA... SOURCE...\n"
"       build-custom-op --emit-wrapper FILE --op [FN=]SCHEMA...\n"
"       build-custom-op bundle [OPTIONS] --name NAME --shape FILE... SOURCE...\n"
"\n"
"Builds GPSIMD custom operators: generates wrapper.cpp from the op schemas,\n"
"compiles the kernel sources and the wrapper, links one library (or eight,\n"
"one per core, with --multicore) and packs each.  Steps run in parallel and\n"
"only when their inputs or commands changed.  The artifacts are printed on\n"
"stdout, one per line; progress and errors go to stderr.\n"
"\n"
"Ops:\n"
"      --op [FN=]SCHEMA     an op: a PyTorch schema such as\n"
"                           'my_ops::relu(Tensor x) -> Tensor'; FN is the kernel\n"
"                           function (default: the op name in the schema).\n"
"                           Repeat for more ops; the order is the registration\n"
"                           order.  Argument types: Tensor, Scalar, number, int,\n"
"                           float, long long.  The return must be one Tensor.\n"
"      --name NAME          the library name (an extension is dropped: relu.so\n"
"                           builds relu.so, or relu_cpu0.so .. relu_cpu7.so)\n"
"\n"
"Build:\n"
"  -B, --build-dir DIR      where everything is written (default: build)\n"
"  -I DIR                   add an include directory for the kernel sources\n"
"                           (a value starting with '-' is passed as is)\n"
"  -D NAME[=VALUE]          define a macro (e.g. -D STACK_SIZE=65536)\n"
"      --cflag FLAG         pass FLAG to every compile; -g keeps the libraries\n"
"                           unpacked, as the original front-end does\n"
"      --ldflag FLAG        pass FLAG to every link, after the default flags\n"
"      --multicore          link eight libraries, one per GPSIMD core\n"
"      --target T           xtensa (the device, default) or host (this machine,\n"
"                           with the SDK emulator; run with run-custom-op)\n"
"      --sanitize LIST      host target: build the kernels and the wrapper with\n"
"                           address and/or undefined (address,undefined)\n"
"  -j N                     run N steps at once (default: the number of CPUs)\n"
"  -k, --keep-going         after a failure, go on with steps that do not need it\n"
"  -n, --dry-run            print the commands of the steps that would run,\n"
"                           shell-quoted, and run none; writes nothing\n"
"  -v, --verbose            print each command as it runs\n"
"      --launcher CMD       put CMD before each compile, e.g. ccache or distcc;\n"
"                           its words are split as a shell splits them, with\n"
"                           nothing expanded (default: $CUSTOM_OP_LAUNCHER)\n"
"      --emit-wrapper FILE  only write wrapper.cpp to FILE ('-' for stdout);\n"
"                           needs no toolchain and no SOURCE\n"
"\n";

static const char usage_text_rest[] =
"Toolchain (xtensa target):\n"
"      --sdk DIR            the custom-op SDK (default: $NEURON_CUSTOM_OP or\n"
"                           /opt/aws/neuron/gpsimd/custom_op); for --target host,\n"
"                           the host SDK (default: the one beside this program)\n"
"      --core NAME          the Xtensa core (default: $Q7_CORE or ncore2gp)\n"
"      --xtensa-system DIR  the core's config (default: $Q7_TOOLS or\n"
"                           /opt/aws/neuron/gpsimd/tools/CORE/config)\n"
"  The tools xt-clang++ and xt-pkg-loadlib are looked up on PATH, then in\n"
"  $XTENSA_TOOLS/XtensaTools/bin, then in /opt/aws/neuron/gpsimd/bin.\n"
"\n"
"  -h, --help               show this help\n"
"      --version            show the version\n"
"\n"
"Example:\n"
"  build-custom-op --name relu --op 'my_ops::relu(Tensor x) -> Tensor' relu.cpp\n"
"  build-custom-op --emit-wrapper - --op 'relu=my_ops::relu(Tensor x) -> Tensor'\n"
"  build-custom-op --target host --multicore --name relu \\\n"
"      --op 'my_ops::relu(Tensor x) -> Tensor' relu.cpp\n"
"\n"
"bundle builds lib<NAME>.so, the bundle of custom_op.load_library(), from\n"
"shape sources (NEURON_LIBRARY) and kernel sources; it runs the Python\n"
"implementation and needs PyTorch.  See build-custom-op bundle --help.\n"
"\n"
"Exit status: 0 built, 1 input or build error, 2 usage error.  Interrupted\n"
"by a signal (SIGINT, SIGTERM, SIGHUP), it cleans up, then ends by that\n"
"signal (a shell reports 130, 143 or 129).  See build-custom-op(1).\n";

/* stdout's buffer while --help is written (see carry_out). */
static char help_buffer[sizeof usage_text + sizeof usage_text_rest];

enum option_code {
	OPTION_NAME = 256,
	OPTION_OP,
	OPTION_CFLAG,
	OPTION_LDFLAG,
	OPTION_SANITIZE,
	OPTION_MULTICORE,
	OPTION_EMIT_WRAPPER,
	OPTION_TARGET,
	OPTION_SDK,
	OPTION_CORE,
	OPTION_XTENSA_SYSTEM,
	OPTION_LAUNCHER,
	OPTION_VERSION,
};

static const struct option long_options[] = {
	{ "name", required_argument, NULL, OPTION_NAME },
	{ "op", required_argument, NULL, OPTION_OP },
	{ "build-dir", required_argument, NULL, 'B' },
	{ "cflag", required_argument, NULL, OPTION_CFLAG },
	{ "ldflag", required_argument, NULL, OPTION_LDFLAG },
	{ "sanitize", required_argument, NULL, OPTION_SANITIZE },
	{ "multicore", no_argument, NULL, OPTION_MULTICORE },
	{ "keep-going", no_argument, NULL, 'k' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "emit-wrapper", required_argument, NULL, OPTION_EMIT_WRAPPER },
	{ "target", required_argument, NULL, OPTION_TARGET },
	{ "sdk", required_argument, NULL, OPTION_SDK },
	{ "core", required_argument, NULL, OPTION_CORE },
	{ "xtensa-system", required_argument, NULL, OPTION_XTENSA_SYSTEM },
	{ "launcher", required_argument, NULL, OPTION_LAUNCHER },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPTION_VERSION },
	{ NULL, 0, NULL, 0 },
};

enum action { ACTION_BUILD, ACTION_EMIT_WRAPPER, ACTION_HELP, ACTION_VERSION };

/* What the command line asks for.  The request's lists point into argv and
 * into the arrays below, which command_free releases. */
struct command {
	enum action action;
	struct bco_request request;
	const char *emit_wrapper; /* --emit-wrapper FILE */
	const char *launcher;     /* --launcher CMD, else $CUSTOM_OP_LAUNCHER */
	const char **functions, **schemas, **cflags, **ldflags, **includes;
	char *sanitize;           /* the --sanitize lists, joined by commas */
	char **defines;           /* the -DNAME flags made from -D NAME */
	size_t define_count;
	char **launcher_words;    /* the launcher's words (bco_split_words) */
	int interrupted_by;       /* the signal that stopped the build, or 0 */
};

/* Prints a usage error with the hint to --help; returns the exit code. */
static int usage_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *format, ...)
{
	fprintf(stderr, "%s: ", program);
	va_list args;
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", program);
	return EXIT_USAGE;
}

static int out_of_memory(void)
{
	fprintf(stderr, "%s: out of memory\n", program);
	return EXIT_BUILD_ERROR;
}

/* Splits "FN=SCHEMA" when an '=' comes before the schema's "::". */
static void split_op(char *argument, const char **function, const char **schema)
{
	char *equals = strchr(argument, '=');
	char *colons = strstr(argument, "::");
	if (equals && (!colons || equals < colons)) {
		*equals = '\0';
		*function = argument;
		*schema = equals + 1;
	} else {
		*function = NULL;
		*schema = argument;
	}
}

/* Reads -j's value; returns 0 with *jobs set, or a usage error. */
static int parse_jobs(const char *text, int *jobs)
{
	char *end;
	errno = 0;
	long value = strtol(text, &end, 10);
	if (errno || end == text || *end || value < 1 || value > INT_MAX)
		return usage_error("-j needs a positive number of jobs, not '%s'", text);
	*jobs = (int)value;
	return 0;
}

/* Adds -D VALUE to the cflags as the one word -DVALUE. */
static int add_define(struct command *command, const char *value)
{
	char *flag = malloc(strlen(value) + 3);
	if (!flag)
		return out_of_memory();
	sprintf(flag, "-D%s", value);
	command->defines[command->define_count++] = flag;
	command->cflags[command->request.cflag_count++] = flag;
	return 0;
}

/* Adds --sanitize's list to the ones before it (the library checks the
 * names): --sanitize=address --sanitize=undefined asks for both. */
static int add_sanitizers(struct command *command, const char *value)
{
	if (!*value)
		return usage_error("--sanitize needs a list of sanitizers: address, undefined or "
		                   "address,undefined");
	size_t length = command->sanitize ? strlen(command->sanitize) + 1 : 0;
	char *joined = realloc(command->sanitize, length + strlen(value) + 1);
	if (!joined)
		return out_of_memory();
	if (length)
		joined[length - 1] = ',';
	strcpy(joined + length, value);
	command->sanitize = joined;
	return 0;
}

/* Applies one option of the command line; returns 0 or an exit code. */
static int take_option(struct command *command, int option, char *value)
{
	struct bco_request *request = &command->request;
	switch (option) {
	case OPTION_NAME: request->name = value; return 0;
	case OPTION_OP:
		split_op(value, &command->functions[request->schema_count],
		         &command->schemas[request->schema_count]);
		request->schema_count++;
		return 0;
	case 'B': request->build_dir = value; return 0;
	case 'I':
		if (!*value) /* -I alone would take the compiler's next argument */
			return usage_error("-I needs a directory, not an empty value");
		command->includes[request->include_count++] = value;
		return 0;
	case 'D':
		if (!*value)
			return usage_error("-D needs NAME[=VALUE], not an empty value");
		return add_define(command, value);
	case OPTION_CFLAG: command->cflags[request->cflag_count++] = value; return 0;
	case OPTION_LDFLAG: command->ldflags[request->ldflag_count++] = value; return 0;
	case OPTION_SANITIZE: return add_sanitizers(command, value);
	case OPTION_MULTICORE: request->multicore = 1; return 0;
	case 'j': return parse_jobs(value, &request->jobs);
	case 'k': request->keep_going = 1; return 0;
	case 'n': request->dry_run = 1; return 0;
	case 'v': request->verbose = 1; return 0;
	case OPTION_EMIT_WRAPPER: command->emit_wrapper = value; return 0;
	case OPTION_TARGET:
		if (strcmp(value, "xtensa") == 0)
			request->target = BCO_TARGET_XTENSA;
		else if (strcmp(value, "host") == 0)
			request->target = BCO_TARGET_HOST;
		else
			return usage_error("unknown target '%s': use xtensa or host", value);
		return 0;
	case OPTION_SDK: request->sdk = value; return 0;
	case OPTION_CORE: request->core = value; return 0;
	case OPTION_XTENSA_SYSTEM: request->xtensa_system = value; return 0;
	case OPTION_LAUNCHER: command->launcher = value; return 0;
	case 'h': command->action = ACTION_HELP; return 0;
	case OPTION_VERSION: command->action = ACTION_VERSION; return 0;
	default: return EXIT_USAGE;
	}
}

/* Reports an option getopt did not accept; returns the exit code. */
static int option_error(int option, char **argv)
{
	if (option == ':')
		return usage_error("option '%s' needs an argument", argv[optind - 1]);
	if (optopt)
		return usage_error("unrecognized option '-%c'", optopt);
	return usage_error("unrecognized option '%s'", argv[optind - 1]);
}

/* Room for every list the command line can fill: at most argc entries each. */
static int command_allocate(struct command *command, int argc)
{
	size_t slots = (size_t)argc + 1;
	command->functions = calloc(slots, sizeof *command->functions);
	command->schemas = calloc(slots, sizeof *command->schemas);
	command->cflags = calloc(slots, sizeof *command->cflags);
	command->ldflags = calloc(slots, sizeof *command->ldflags);
	command->includes = calloc(slots, sizeof *command->includes);
	command->defines = calloc(slots, sizeof *command->defines);
	if (!command->functions || !command->schemas || !command->cflags || !command->ldflags ||
	    !command->includes || !command->defines)
		return out_of_memory();
	return 0;
}

static void command_free(struct command *command)
{
	for (size_t i = 0; i < command->define_count; i++)
		free(command->defines[i]);
	free(command->defines);
	bco_free(command->launcher_words);
	free(command->functions);
	free(command->schemas);
	free(command->cflags);
	free(command->ldflags);
	free(command->sanitize);
	free(command->includes);
}

/* Checks what the options together ask for; returns 0 or a usage error. */
static int check_command(struct command *command, char **argv)
{
	const struct bco_request *request = &command->request;
	if (command->action == ACTION_HELP || command->action == ACTION_VERSION)
		return 0;
	if (request->schema_count == 0)
		return usage_error("no ops: give at least one --op, such as "
		                   "--op 'my_ops::relu(Tensor x) -> Tensor'");
	if (command->emit_wrapper) {
		command->action = ACTION_EMIT_WRAPPER;
		if (request->source_count)
			return usage_error("--emit-wrapper takes no SOURCE, but '%s' was given", argv[optind]);
		return 0;
	}
	if (!request->name)
		return usage_error("no library name: give --name NAME");
	if (request->source_count == 0)
		return usage_error("no SOURCE: give the kernel's C++ files");
	return 0;
}

/* Turns the command line into *command; returns 0, or the exit code after
 * the error is reported. */
static int parse_command_line(int argc, char **argv, struct command *command)
{
	memset(command, 0, sizeof *command);
	int status = command_allocate(command, argc);
	opterr = 0; /* our own messages, with our name rather than argv[0] */
	int option;
	while (status == 0 && command->action == ACTION_BUILD &&
	       (option = getopt_long(argc, argv, ":B:I:D:j:knvh", long_options, NULL)) != -1) {
		if (option == '?' || option == ':')
			return option_error(option, argv);
		status = take_option(command, option, optarg);
	}
	if (status != 0)
		return status;
	struct bco_request *request = &command->request;
	request->functions = command->functions;
	request->function_count = request->schema_count;
	request->schemas = command->schemas;
	request->cflags = command->cflags;
	request->ldflags = command->ldflags;
	request->sanitize = command->sanitize;
	request->includes = command->includes;
	request->sources = (const char *const *)argv + optind;
	request->source_count = (size_t)(argc - optind);
	if (!command->launcher)
		command->launcher = getenv("CUSTOM_OP_LAUNCHER");
	return check_command(command, argv);
}

/* Prints an error from the library and returns the exit code it means; a
 * failed step was already shown whole.  Notes an interrupting signal. */
static int report_error(struct command *command, int kind, const bco_error *error)
{
	const char *message = error ? bco_error_message(error) : "out of memory";
	if (kind == BCO_ERROR_STEP)
		fprintf(stderr, "%s: build stopped: a step failed\n", program);
	else
		fprintf(stderr, "%s: %s\n", program, message);
	if (kind == BCO_ERROR_USAGE) {
		fprintf(stderr, "Try '%s --help' for more information.\n", program);
		return EXIT_USAGE;
	}
	if (kind == BCO_ERROR_INTERRUPTED && bco_error_signal(error) > 0) {
		command->interrupted_by = bco_error_signal(error);
		return 128 + command->interrupted_by;
	}
	return EXIT_BUILD_ERROR;
}

/* Writes text to path ('-': stdout, checked by main) by the rule of
 * output_file.h: a device, FIFO or link is never replaced.  A regular file
 * that already holds the text is left alone, so it keeps its mtime (make
 * rebuilds nothing).  Returns an exit code. */
static int write_wrapper(const char *path, const char *text)
{
	if (strcmp(path, "-") == 0) {
		fputs(text, stdout);
		return 0;
	}
	jmp_buf out_of_memory_handler;
	struct arena arena;
	arena_init(&arena, &out_of_memory_handler);
	if (setjmp(out_of_memory_handler)) {
		arena_release(&arena);
		return out_of_memory();
	}
	int status = 0;
	if (!fs_holds(&arena, path, text, strlen(text))) {
		struct output_part part = { text, strlen(text) };
		struct diag diag;
		diag_init(&diag, &arena);
		if (output_file_write(path, &part, 1, &diag) != 0) {
			fprintf(stderr, "%s: %s\n", program, diag.message);
			status = EXIT_BUILD_ERROR;
		}
	}
	arena_release(&arena);
	return status;
}

static int emit_wrapper(struct command *command, struct console *console)
{
	char *text = NULL;
	bco_error *error = NULL;
	command->request.progress = console_show;
	command->request.progress_context = console;
	int kind = bco_generate_wrapper(&command->request, &text, &error);
	int code = kind == BCO_OK ? write_wrapper(command->emit_wrapper, text)
	                          : report_error(command, kind, error);
	bco_free(text);
	bco_error_free(error);
	return code;
}

/* Cuts the launcher command into words as a shell would, expanding
 * nothing: "ccache", "distcc -j4" or "'/opt/my tools/ccache'". */
static int split_launcher(struct command *command)
{
	bco_error *error = NULL;
	int kind = bco_split_words(command->launcher, &command->launcher_words,
	                           &command->request.launcher_count, &error);
	if (kind != BCO_OK)
		fprintf(stderr, "%s: the launcher '%s' cannot be split into words: %s\n", program,
		        command->launcher, error ? bco_error_message(error) : "out of memory");
	bco_error_free(error);
	command->request.launcher = (const char *const *)command->launcher_words;
	return kind == BCO_OK ? 0 : EXIT_BUILD_ERROR;
}

static int build(struct command *command, struct console *console)
{
	struct bco_request *request = &command->request;
	if (command->launcher && split_launcher(command) != 0)
		return EXIT_BUILD_ERROR;
	request->progress = console_show;
	request->progress_context = console;
	bco_result *result = NULL;
	bco_error *error = NULL;
	int kind = bco_build(request, &result, &error);
	console_clear(console);
	for (size_t i = 0; !request->dry_run && i < bco_result_count(result); i++)
		printf("%s\n", bco_result_path(result, i));
	bco_result_free(result);
	int code = kind == BCO_OK ? 0 : report_error(command, kind, error);
	bco_error_free(error);
	return code;
}

/* Does what the command asks; returns the exit code. */
static int carry_out(struct command *command)
{
	struct console console;
	console_init(&console, command->request.dry_run);
	switch (command->action) {
	case ACTION_HELP:
		/* Written whole at the end, so that a failed write is seen, with
		 * its reason, by finish_stdout (the help is longer than the default
		 * buffer). */
		setvbuf(stdout, help_buffer, _IOFBF, sizeof help_buffer);
		fputs(usage_text, stdout);
		fputs(usage_text_rest, stdout);
		return 0;
	case ACTION_VERSION:
		printf("%s %s\n", program, BCO_VERSION);
		printf("compatible with build_custom_op.py %s (ulib_to_ucode_version %s, "
		       "ulib_to_isa_version %s)\n",
		       BCO_COMPAT_VERSION, BCO_ULIB_TO_UCODE_VERSION, BCO_ULIB_TO_ISA_VERSION);
		return 0;
	case ACTION_EMIT_WRAPPER:
		return emit_wrapper(command, &console);
	case ACTION_BUILD:
		return build(command, &console);
	}
	return EXIT_BUILD_ERROR;
}

/* Everything for stdout is written by now: a failed write (a full disk,
 * /dev/full) is an error, never a silent success. */
static int finish_stdout(int code)
{
	int flushed = fflush(stdout) == 0;
	int saved = errno;
	if (flushed && !ferror(stdout))
		return code;
	fprintf(stderr, "%s: cannot write to stdout: %s\n", program,
	        flushed ? "a write failed" : strerror(saved));
	return code == 0 ? EXIT_BUILD_ERROR : code;
}

int main(int argc, char **argv)
{
	if (program_open_standard_descriptors() != 0)
		return EXIT_BUILD_ERROR;
	if (argc > 1 && strcmp(argv[1], "bundle") == 0)
		return bundle_command(argc - 1, argv + 1);
	struct command command;
	int code = parse_command_line(argc, argv, &command);
	if (code == 0)
		code = carry_out(&command);
	int interrupted_by = command.interrupted_by;
	command_free(&command);
	code = finish_stdout(code);
	fflush(stderr);
	/* The build stopped for a signal and cleaned up: end by that signal. */
	if (interrupted_by)
		program_end_by_signal(interrupted_by);
	return code;
}
