/* buildcustomop.h - the C API of build-custom-op.
 *
 * One call builds one request: parse and validate the op schemas, generate
 * wrapper.cpp, compile, link (once, or once per core) and pack.  The library
 * never exits and never prints: errors come back as values, and progress
 * goes to a caller-supplied sink.  Nothing allocated during a call survives
 * it except the result and error objects handed to the caller, and every
 * signal disposition changed during a call is restored before it returns.
 *
 * Signals: from the moment a build takes its directory's lock until it
 * returns, SIGINT, SIGTERM and SIGHUP are caught (one the caller ignores
 * stays ignored): the running tools are stopped, their partial outputs
 * deleted, and the call returns BCO_ERROR_INTERRUPTED.  Meanwhile SIGCHLD is
 * neither ignored nor SA_NOCLDWAIT; the caller may keep it blocked.  A dry
 * run catches nothing.
 *
 * Threads: every function may be called from several threads at once.
 * Each call keeps its own state; the signal dispositions are process-wide,
 * taken over by the first build to start and restored by the last to end,
 * and a signal reaches every build running then.  Two builds of the same
 * directory take turns.  The progress sink is called on the calling
 * thread.  A call reads the environment and resolves relative paths against
 * the working directory: do not change either while a call runs. */
#ifndef BUILDCUSTOMOP_H
#define BUILDCUSTOMOP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BCO_VERSION "0.1.0"
/* The original front-end's version and compatibility metadata. */
#define BCO_COMPAT_VERSION "0.21.2.0"
#define BCO_ULIB_TO_UCODE_VERSION "1.21.1.0"
#define BCO_ULIB_TO_ISA_VERSION "1.0.2520.0"

enum bco_target {
	BCO_TARGET_XTENSA = 0, /* the device: xt-clang++ and xt-pkg-loadlib */
	BCO_TARGET_HOST = 1    /* this machine, with the host SDK emulator */
};

/* What went wrong, coarsely; the message says the rest. */
enum bco_error_kind {
	BCO_OK = 0,
	BCO_ERROR_INPUT,       /* a bad schema, name, option value or file */
	BCO_ERROR_USAGE,       /* the request itself is malformed */
	BCO_ERROR_TOOL,        /* a tool or SDK file could not be found */
	BCO_ERROR_STEP,        /* a compile, link or pack step failed */
	BCO_ERROR_INTERRUPTED, /* SIGINT, SIGTERM or SIGHUP arrived during the build */
	BCO_ERROR_SYSTEM       /* the operating system refused (I/O, memory) */
};

/* What a line given to the progress sink is. */
enum bco_message_kind {
	BCO_MESSAGE_STATUS,  /* "[k/N] CC src/relu.cpp": may replace the previous status */
	BCO_MESSAGE_COMMAND, /* a full command, shell-quoted (verbose and dry-run) */
	BCO_MESSAGE_OUTPUT,  /* the captured output of a finished step, whole */
	BCO_MESSAGE_WARNING, /* a warning about the input */
	BCO_MESSAGE_FAILURE  /* "FAILED: out", the command and its output */
};

typedef void (*bco_progress_fn)(void *context, enum bco_message_kind kind,
                                const char *text);

/* One build.  Zero-initialise, then set what you need.  Lists are arrays of
 * NUL-terminated strings with a count.  The strings are only read. */
struct bco_request {
	const char *name;                 /* library name; an extension is dropped */
	const char *const *functions;     /* one per schema (a NULL entry, or a NULL list: the name in the schema) */
	size_t function_count;
	const char *const *schemas;       /* "ns::fn(Tensor x) -> Tensor", one per op */
	size_t schema_count;
	const char *const *sources;       /* the kernel sources */
	size_t source_count;
	const char *build_dir;            /* NULL: "build" */
	const char *const *includes;      /* bare DIR becomes -IDIR; "-..." passes as is */
	size_t include_count;
	const char *const *cflags;        /* words, one per element */
	size_t cflag_count;
	const char *const *launcher;      /* words put before each compile (ccache, distcc) */
	size_t launcher_count;
	enum bco_target target;
	int multicore;                    /* link eight libraries, one per core */
	int jobs;                         /* parallel steps; 0: the number of online CPUs */
	int dry_run;                      /* report the commands of the steps that would run;
	                                     run none and write nothing */
	int verbose;                      /* report each command as it runs */
	int keep_going;                   /* after a failure, go on with independent steps */
	const char *sdk;                  /* NULL: $NEURON_CUSTOM_OP or the default (host: required) */
	const char *core;                 /* NULL: $Q7_CORE or ncore2gp */
	const char *xtensa_system;        /* NULL: $Q7_TOOLS or the default for the core */
	bco_progress_fn progress;         /* NULL: progress is dropped */
	void *progress_context;
	const char *const *ldflags;       /* words put at the end of every link, one per element */
	size_t ldflag_count;
	/* The sanitizers the kernels and the wrapper are built with (host
	 * target only): NULL or "" for none, else a comma-separated list of
	 * "address" and "undefined".  See build-custom-op(1), --sanitize. */
	const char *sanitize;
};

typedef struct bco_error bco_error;
typedef struct bco_result bco_result;

/* Builds the request.  On success returns 0 and sets *result to the list of
 * artifacts (free with bco_result_free).  On failure returns the error kind,
 * sets *result to NULL and, when error is not NULL, sets *error (free with
 * bco_error_free).  An interrupt that arrives after the last step still
 * fails the call. */
int bco_build(const struct bco_request *request, bco_result **result,
              bco_error **error);

/* Validates the request's ops and returns the wrapper.cpp text in *text
 * (free with bco_free).  Needs no toolchain and no sources. */
int bco_generate_wrapper(const struct bco_request *request, char **text,
                         bco_error **error);

/* The number of artifacts in a result. */
size_t bco_result_count(const bco_result *result);
/* The path of artifact i, valid until the result is freed. */
const char *bco_result_path(const bco_result *result, size_t index);
/* A host build without sanitizers that ran no step (and found no input
 * dated in the future) lists what its being up to date rests on: every file and
 * directory the resolution of the compiler and the host SDK and the
 * up-to-date check looked at (for one that was missing, the nearest
 * directory above it that exists), the build directory, its log and the
 * .ops record, each once, in name order (a path relative to the working
 * directory when the request's was).  While every one of them is
 * unchanged (the caller tells by their stat: inode, size, mtime, ctime;
 * only for files whose ctime was older than the call's start by more than
 * the file system's timestamp granularity, or a change in that tick could
 * keep the stat), and the request, the environment, the working directory, the program
 * and this library are the same, the same call would do nothing and give
 * the same artifacts (a caller that skips it also skips the warnings it
 * would give).  Any other build lists nothing (count 0). */
size_t bco_result_settled_count(const bco_result *result);
/* Path i of that list, valid until the result is freed. */
const char *bco_result_settled_path(const bco_result *result, size_t index);
/* Frees a result; NULL is allowed. */
void bco_result_free(bco_result *result);

/* The kind of an error. */
enum bco_error_kind bco_error_kind(const bco_error *error);
/* The full message, possibly several lines, without a trailing newline. */
const char *bco_error_message(const bco_error *error);
/* The schema an error points into (0-based), or -1 when it is not about one. */
int bco_error_schema_index(const bco_error *error);
/* The 1-based column in that schema, or 0. */
int bco_error_column(const bco_error *error);
/* The signal that interrupted the build, or 0. */
int bco_error_signal(const bco_error *error);
/* Frees an error; NULL is allowed. */
void bco_error_free(bco_error *error);

/* Splits text into words as a POSIX shell splits a command line, with
 * nothing expanded ($, `, ~, *, # and the like are plain characters):
 * blanks (space, tab, newline) separate words; '...' keeps everything as
 * it is; "..." keeps everything but a backslash before $ ` " \ or a
 * newline; elsewhere a backslash keeps the next character; a backslash and
 * a newline join lines; '' is an empty word.  On success returns 0 and sets
 * *words to a NULL-terminated array of the *count words, one block freed
 * with bco_free; an unclosed quote is BCO_ERROR_INPUT.  The time is linear
 * in the length of text.  build-custom-op splits --launcher with it, and
 * the Python module its includes, cflags and launcher. */
int bco_split_words(const char *text, char ***words, size_t *count, bco_error **error);

/* Frees text returned by the library; NULL is allowed. */
void bco_free(void *pointer);
/* The library's version, BCO_VERSION. */
const char *bco_version(void);

#ifdef __cplusplus
}
#endif
#endif
