/* fuzz_wrapper.c - the whole op-validation path, from raw (name, schema)
 * pairs to wrapper text, through the public API and for both targets.
 *
 * The input is split at NUL bytes into fields: name, schema, name, schema,
 * ... (an empty name is a NULL entry: the name in the schema; a field left
 * over at the end is a schema without a name).  The oracle: validation does
 * not depend on the target, a rejection says why and where, and accepted
 * input yields C++ that a compiler accepts against the stub SDK header in
 * tests/fuzz/stub.  Compiling is slow, so only a sample is compiled: the
 * first 100 accepted inputs (the seed corpus among them) and every Nth
 * after, N from $BCO_FUZZ_COMPILE_EVERY (default 100; 1 compiles all, 0
 * none).  The compiler is $BCO_FUZZ_CXX (default c++). */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buildcustomop.h"
#include "fuzz.h"
#include "validate.h"

#ifndef FUZZ_STUB_DIR
#define FUZZ_STUB_DIR "tests/fuzz/stub"
#endif
/* Far past the runtime's documented limit of 10, which only warns. */
#define MOST_OPS 64
#define DEFAULT_COMPILE_EVERY 100
/* Every one of the first accepted inputs is compiled: they hold the seeds. */
#define COMPILE_FIRST 100

extern char **environ;

static unsigned long accepted_count, compiled_count;

/* How much of the oracle ran, for the log: a run that compiled nothing
 * checked less than it seems. */
static void report_counts(void)
{
	fprintf(stderr, "fuzz_wrapper: %lu accepted inputs, %lu compiled\n", accepted_count,
	        compiled_count);
}

/* Warnings (more than ten ops, ...) must be whole lines. */
static void progress(void *context, enum bco_message_kind kind, const char *text)
{
	(void)context;
	if (kind != BCO_MESSAGE_WARNING || !*text)
		abort();
}

static unsigned long compile_every(void)
{
	const char *value = getenv("BCO_FUZZ_COMPILE_EVERY");
	if (!value || !*value)
		return DEFAULT_COMPILE_EVERY;
	return strtoul(value, NULL, 10);
}

/* Runs the C++ compiler's syntax check on text; aborts when it rejects it. */
static void check_compiles(const char *text, const char *target)
{
	char path[] = "/tmp/bco-fuzz-wrapper-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) {
		perror("fuzz_wrapper: mkstemp");
		exit(2);
	}
	size_t length = strlen(text);
	if (write(fd, text, length) != (ssize_t)length || close(fd) != 0) {
		perror("fuzz_wrapper: write");
		unlink(path);
		exit(2);
	}
	const char *compiler = getenv("BCO_FUZZ_CXX");
	if (!compiler || !*compiler)
		compiler = "c++";
	/* -m32: the device is 32-bit and the launcher casts a function to
	 * uint32_t; -w: only errors matter here. */
	char *argv[] = {(char *)compiler, "-m32", "-std=c++14", "-fsyntax-only", "-w",
	                "-I", FUZZ_STUB_DIR, "-x", "c++", path, NULL};
	pid_t pid;
	int error = posix_spawnp(&pid, compiler, NULL, NULL, argv, environ);
	if (error != 0) {
		fprintf(stderr, "fuzz_wrapper: cannot run %s: %s\n", compiler, strerror(error));
		unlink(path);
		exit(2);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		;
	unlink(path);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "fuzz_wrapper: %s rejects the %s wrapper it was given:\n%s\n",
		        compiler, target, text);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int reporting;
	if (!reporting)
		reporting = atexit(report_counts) == 0;
	/* One copy with a NUL after every field, the last one included. */
	char *copy = fuzz_copy(data, size, 1);
	if (!copy)
		return 0;
	const char *functions[MOST_OPS];
	const char *schemas[MOST_OPS];
	size_t count = 0;
	int any_name = 0;
	for (char *field = copy; field <= copy + size && count < MOST_OPS;) {
		size_t length = strlen(field);
		char *next = field + length + 1;
		if (next > copy + size) {
			/* A lone last field: a schema without a name. */
			functions[count] = NULL;
			schemas[count++] = field;
			break;
		}
		functions[count] = length ? field : NULL;
		any_name |= length != 0;
		schemas[count++] = next;
		field = next + strlen(next) + 1;
	}

	struct bco_request request;
	memset(&request, 0, sizeof request);
	/* With no name at all, the NULL list: every op named by its schema. */
	request.functions = any_name ? functions : NULL;
	request.function_count = any_name ? count : 0;
	request.schemas = schemas;
	request.schema_count = count;
	request.progress = progress;

	char *texts[2] = {NULL, NULL};
	const enum bco_target targets[2] = {BCO_TARGET_XTENSA, BCO_TARGET_HOST};
	int status[2];
	for (int t = 0; t < 2; t++) {
		request.target = targets[t];
		bco_error *error = NULL;
		status[t] = bco_generate_wrapper(&request, &texts[t], &error);
		if (status[t] == 0) {
			if (!texts[t] || error)
				abort();
			continue;
		}
		if (texts[t] || !error || !*bco_error_message(error))
			abort();
		enum bco_error_kind kind = bco_error_kind(error);
		int index = bco_error_schema_index(error);
		if ((kind != BCO_ERROR_INPUT && kind != BCO_ERROR_USAGE) || index < -1 ||
		    index >= (int)count || bco_error_column(error) < 0)
			abort();
		bco_error_free(error);
	}
	/* The targets take the same ops, but for their count: the host target
	 * refuses more than the device documents (its emulator runs no more). */
	if (count > OPS_DOCUMENTED_LIMIT ? status[1] == 0 : (status[0] == 0) != (status[1] == 0))
		abort();
	if (status[0] == 0) {
		unsigned long every = compile_every();
		unsigned long index = accepted_count++;
		if (every && (index < COMPILE_FIRST || index % every == 0)) {
			check_compiles(texts[0], "xtensa");
			if (status[1] == 0)
				check_compiles(texts[1], "host");
			compiled_count++;
		}
	}
	bco_free(texts[0]);
	bco_free(texts[1]);
	free(copy);
	return 0;
}
