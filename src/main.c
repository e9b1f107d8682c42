/* main.c - the build-custom-op command: options in, artifacts on stdout. */
#define _DEFAULT_SOURCE /* getopt_long */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arena.h"
#include "buffer.h"
#include "buildcustomop.h"
#include "diag.h"
#include "fsutil.h"

enum { EXIT_BUILD_ERROR = 1, EXIT_USAGE = 2 };

static const char program[] = "build-custom-op";

static const char usage_text[] =
"Usage: build-custom-op [OPTIONS] --name NAME --op [FN=]SCHEMA... SOURCE...\n"
"       build-custom-op --emit-wrapper FILE --op [FN=]SCHEMA...\n"
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
"      --multicore          link eight libraries, one per GPSIMD core\n"
"      --target T           xtensa (the device, default) or host (this machine,\n"
"                           with the SDK emulator; run with run-custom-op)\n"
"  -j N                     run N steps at once (default: the number of CPUs)\n"
"  -k, --keep-going         after a failure, go on with steps that do not need it\n"
"  -n, --dry-run            print the commands of the steps that would run,\n"
"                           shell-quoted, and run none; writes nothing\n"
"  -v, --verbose            print each command as it runs\n"
"      --launcher CMD       put CMD before each compile, e.g. ccache or distcc\n"
"                           (default: $CUSTOM_OP_LAUNCHER)\n"
"      --emit-wrapper FILE  only write wrapper.cpp to FILE ('-' for stdout);\n"
"                           needs no toolchain and no SOURCE\n"
"\n"
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
"Exit status: 0 built, 1 input or build error, 2 usage error,\n"
"129, 130 or 143 interrupted.  See build-custom-op(1).\n";

enum option_code {
	OPTION_NAME = 256,
	OPTION_OP,
	OPTION_CFLAG,
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

/* How progress reaches the terminal. */
struct console {
	int status_on_terminal; /* rewrite the status line in place */
	int status_shown;       /* a status line is on screen, unterminated */
	size_t width;           /* the terminal's columns: longer status lines are cut */
	int color;
	int dry_run;
};

static void usage_error(const char *format, const char *argument)
{
	fprintf(stderr, "%s: ", program);
	fprintf(stderr, format, argument);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", program);
	exit(EXIT_USAGE);
}

static void clear_status(struct console *console)
{
	if (console->status_shown) {
		fputs("\r\033[K", stderr);
		console->status_shown = 0;
	}
}

static void show_progress(void *context, enum bco_message_kind kind, const char *text)
{
	struct console *console = context;
	switch (kind) {
	case BCO_MESSAGE_STATUS:
		if (console->status_on_terminal) {
			/* A line that wraps could not be rewritten in place. */
			size_t length = strlen(text);
			clear_status(console);
			if (console->width > 4 && length >= console->width)
				fprintf(stderr, "%.*s...", (int)(console->width - 4), text);
			else
				fputs(text, stderr);
			console->status_shown = 1;
		} else {
			fprintf(stderr, "%s\n", text);
		}
		break;
	case BCO_MESSAGE_COMMAND:
		if (console->dry_run) {
			printf("%s\n", text);
			break;
		}
		clear_status(console);
		fprintf(stderr, "%s\n", text);
		break;
	case BCO_MESSAGE_OUTPUT:
		clear_status(console);
		fputs(text, stderr);
		if (*text && text[strlen(text) - 1] != '\n')
			fputc('\n', stderr);
		break;
	case BCO_MESSAGE_WARNING:
		clear_status(console);
		fprintf(stderr, "%s: warning: %s\n", program, text);
		break;
	case BCO_MESSAGE_FAILURE:
		clear_status(console);
		if (console->color && strncmp(text, "FAILED:", 7) == 0)
			fprintf(stderr, "\033[31mFAILED:\033[0m%s", text + 7);
		else
			fputs(text, stderr);
		if (*text && text[strlen(text) - 1] != '\n')
			fputc('\n', stderr);
		break;
	}
	fflush(stderr);
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

static int parse_jobs(const char *text)
{
	char *end;
	errno = 0;
	long jobs = strtol(text, &end, 10);
	if (errno || end == text || *end || jobs < 1 || jobs > INT_MAX)
		usage_error("-j needs a positive number of jobs, not '%s'", text);
	return (int)jobs;
}

static int exit_code_of(int kind, const bco_error *error)
{
	switch (kind) {
	case BCO_OK:
		return 0;
	case BCO_ERROR_USAGE:
		return EXIT_USAGE;
	case BCO_ERROR_INTERRUPTED:
		return 128 + bco_error_signal(error);
	default:
		return EXIT_BUILD_ERROR;
	}
}

/* Prints an error from the library; a failed step was already shown whole. */
static void print_error(int kind, const bco_error *error)
{
	if (kind == BCO_ERROR_STEP)
		fprintf(stderr, "%s: build stopped: a step failed\n", program);
	else if (kind == BCO_ERROR_INTERRUPTED)
		fprintf(stderr, "%s: %s\n", program, error ? bco_error_message(error) : "interrupted");
	else
		fprintf(stderr, "%s: %s\n", program, error ? bco_error_message(error) : "out of memory");
	if (kind == BCO_ERROR_USAGE)
		fprintf(stderr, "Try '%s --help' for more information.\n", program);
}

/* Writes text to path ('-': stdout); returns an exit code. */
static int write_wrapper(const char *path, const char *text)
{
	if (strcmp(path, "-") == 0) {
		if (fputs(text, stdout) == EOF || fflush(stdout) != 0) {
			fprintf(stderr, "%s: cannot write the wrapper to stdout: %s\n", program, strerror(errno));
			return EXIT_BUILD_ERROR;
		}
		return 0;
	}
	jmp_buf out_of_memory;
	struct arena arena;
	arena_init(&arena, &out_of_memory);
	if (setjmp(out_of_memory)) {
		arena_release(&arena);
		fprintf(stderr, "%s: out of memory\n", program);
		return EXIT_BUILD_ERROR;
	}
	struct diag diag;
	diag_init(&diag, &arena);
	int status = fs_write_atomic(&arena, path, text, strlen(text), &diag);
	if (status != 0)
		fprintf(stderr, "%s: %s\n", program, diag.message);
	arena_release(&arena);
	return status == 0 ? 0 : EXIT_BUILD_ERROR;
}

/* Splits a launcher command at blanks: "ccache" or "distcc -j4". */
static void split_launcher(char *text, const char ***words, size_t *count)
{
	const char **list = calloc(strlen(text) / 2 + 2, sizeof *list);
	if (!list) {
		fprintf(stderr, "%s: out of memory\n", program);
		exit(EXIT_BUILD_ERROR);
	}
	size_t n = 0;
	for (char *word = strtok(text, " \t"); word; word = strtok(NULL, " \t"))
		list[n++] = word;
	*words = list;
	*count = n;
}

/* What the command line holds; main frees it on every path. */
struct command_line {
	const char **functions;
	const char **schemas;
	const char **cflags;
	const char **includes;
	char **defines;          /* the -D flags made from -D NAME */
	size_t define_count;
	const char **launcher;
	char *launcher_text;
};

static int run(int argc, char **argv, struct command_line *line)
{
	struct bco_request request = { 0 };
	const char **functions = line->functions, **schemas = line->schemas;
	const char **cflags = line->cflags, **includes = line->includes;
	const char *emit_wrapper = NULL;
	char *launcher_text = NULL;
	int option;
	opterr = 0; /* our own messages, with our name rather than argv[0] */
	while ((option = getopt_long(argc, argv, ":B:I:D:j:knvh", long_options, NULL)) != -1) {
		switch (option) {
		case OPTION_NAME:
			request.name = optarg;
			break;
		case OPTION_OP:
			split_op(optarg, &functions[request.schema_count], &schemas[request.schema_count]);
			request.schema_count++;
			break;
		case 'B':
			request.build_dir = optarg;
			break;
		case 'I':
			includes[request.include_count++] = optarg;
			break;
		case 'D': {
			char *flag = malloc(strlen(optarg) + 3);
			if (!flag) {
				fprintf(stderr, "%s: out of memory\n", program);
				return EXIT_BUILD_ERROR;
			}
			sprintf(flag, "-D%s", optarg);
			line->defines[line->define_count++] = flag;
			cflags[request.cflag_count++] = flag;
			break;
		}
		case OPTION_CFLAG:
			cflags[request.cflag_count++] = optarg;
			break;
		case OPTION_MULTICORE:
			request.multicore = 1;
			break;
		case 'j':
			request.jobs = parse_jobs(optarg);
			break;
		case 'k':
			request.keep_going = 1;
			break;
		case 'n':
			request.dry_run = 1;
			break;
		case 'v':
			request.verbose = 1;
			break;
		case OPTION_EMIT_WRAPPER:
			emit_wrapper = optarg;
			break;
		case OPTION_TARGET:
			if (strcmp(optarg, "xtensa") == 0)
				request.target = BCO_TARGET_XTENSA;
			else if (strcmp(optarg, "host") == 0)
				request.target = BCO_TARGET_HOST;
			else
				usage_error("unknown target '%s': use xtensa or host", optarg);
			break;
		case OPTION_SDK:
			request.sdk = optarg;
			break;
		case OPTION_CORE:
			request.core = optarg;
			break;
		case OPTION_XTENSA_SYSTEM:
			request.xtensa_system = optarg;
			break;
		case OPTION_LAUNCHER:
			launcher_text = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case OPTION_VERSION:
			printf("%s %s\n", program, BCO_VERSION);
			printf("compatible with build_custom_op.py %s (ulib_to_ucode_version %s, "
			       "ulib_to_isa_version %s)\n",
			       BCO_COMPAT_VERSION, BCO_ULIB_TO_UCODE_VERSION, BCO_ULIB_TO_ISA_VERSION);
			return 0;
		case ':':
			usage_error("option '%s' needs an argument", argv[optind - 1]);
			break;
		default:
			if (optopt)
				fprintf(stderr, "%s: unrecognized option '-%c'\n", program, optopt);
			else
				fprintf(stderr, "%s: unrecognized option '%s'\n", program, argv[optind - 1]);
			fprintf(stderr, "Try '%s --help' for more information.\n", program);
			return EXIT_USAGE;
		}
	}
	request.functions = functions;
	request.function_count = request.schema_count;
	request.schemas = schemas;
	request.cflags = cflags;
	request.includes = includes;
	request.sources = (const char *const *)argv + optind;
	request.source_count = (size_t)(argc - optind);

	if (request.schema_count == 0)
		usage_error("%s", "no ops: give at least one --op, such as "
		                  "--op 'my_ops::relu(Tensor x) -> Tensor'");

	struct console console = { 0 };
	console.dry_run = request.dry_run;
	console.status_on_terminal = isatty(STDERR_FILENO);
	console.color = console.status_on_terminal && !getenv("NO_COLOR");
	struct winsize size;
	if (console.status_on_terminal && ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0)
		console.width = size.ws_col;
	request.progress = show_progress;
	request.progress_context = &console;

	bco_error *error = NULL;
	int kind;
	if (emit_wrapper) {
		if (request.source_count)
			usage_error("--emit-wrapper takes no SOURCE, but '%s' was given", argv[optind]);
		char *text = NULL;
		kind = bco_generate_wrapper(&request, &text, &error);
		if (kind == BCO_OK) {
			kind = write_wrapper(emit_wrapper, text);
			bco_free(text);
			return kind;
		}
	} else {
		if (!request.name)
			usage_error("%s", "no library name: give --name NAME");
		if (request.source_count == 0)
			usage_error("%s", "no SOURCE: give the kernel's C++ files");
		if (!launcher_text)
			launcher_text = getenv("CUSTOM_OP_LAUNCHER");
		if (launcher_text) {
			line->launcher_text = strdup(launcher_text);
			if (!line->launcher_text) {
				fprintf(stderr, "%s: out of memory\n", program);
				return EXIT_BUILD_ERROR;
			}
			split_launcher(line->launcher_text, &line->launcher, &request.launcher_count);
			request.launcher = line->launcher;
		}
		bco_result *result = NULL;
		kind = bco_build(&request, &result, &error);
		clear_status(&console);
		for (size_t i = 0; !request.dry_run && i < bco_result_count(result); i++)
			printf("%s\n", bco_result_path(result, i));
		bco_result_free(result);
	}
	if (kind != BCO_OK)
		print_error(kind, error);
	int code = exit_code_of(kind, error);
	bco_error_free(error);
	return code;
}

int main(int argc, char **argv)
{
	struct command_line line = { 0 };
	size_t slots = (size_t)argc + 1;
	line.functions = calloc(slots, sizeof *line.functions);
	line.schemas = calloc(slots, sizeof *line.schemas);
	line.cflags = calloc(slots, sizeof *line.cflags);
	line.includes = calloc(slots, sizeof *line.includes);
	line.defines = calloc(slots, sizeof *line.defines);
	int code = EXIT_BUILD_ERROR;
	if (line.functions && line.schemas && line.cflags && line.includes && line.defines)
		code = run(argc, argv, &line);
	else
		fprintf(stderr, "%s: out of memory\n", program);
	for (size_t i = 0; i < line.define_count; i++)
		free(line.defines[i]);
	free(line.defines);
	free(line.launcher);
	free(line.launcher_text);
	free(line.functions);
	free(line.schemas);
	free(line.cflags);
	free(line.includes);
	return code;
}
