/* test_build.c - bco_build as a library inside another program: two
 * threads at once, a caller with SIGCHLD blocked or ignored, an interrupt
 * after the last step.  The builds use the fake Xtensa tools of tests/fake
 * and a fake SDK; run from the top of the source tree. */
#define _XOPEN_SOURCE 700 /* nftw: removing the test's directory */
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildcustomop.h"
#include "check.h"

static char directory[] = "/tmp/test_build.XXXXXX";

/* A fake SDK as tests/fake/sdk.sh makes it, the fake tools on PATH, and two
 * sources; the working directory becomes the test's directory. */
static int set_up(void)
{
	char top[4096];
	if (!getcwd(top, sizeof top) || !mkdtemp(directory))
		return -1;
	char tools[4200];
	snprintf(tools, sizeof tools, "%s/tests/fake", top);
	char probe[4300];
	snprintf(probe, sizeof probe, "%s/xt-clang++", tools);
	if (access(probe, X_OK) != 0) {
		printf("not ok - run from the top of the source tree: %s is missing\n", probe);
		return -1;
	}
	const char *path = getenv("PATH");
	char *search = malloc(strlen(tools) + strlen(path ? path : "") + 2);
	if (!search)
		return -1;
	sprintf(search, "%s:%s", tools, path ? path : "");
	setenv("PATH", search, 1);
	free(search);
	if (chdir(directory) != 0)
		return -1;
	static const char *const directories[] = {
		"sdk", "sdk/neuron", "sdk/c10", "sdk/c10/lib", "sdk/torch", "sdk/torch/include",
		"sdk/c10/include", "sdk/lsp_fll_load_cpus", "sdk/lsp_fll_load_cpus/lsp_fll_load_cpu_single", "src",
	};
	for (size_t i = 0; i < sizeof directories / sizeof directories[0]; i++)
		mkdir(directories[i], 0777);
	static const char *const files[] = {
		"sdk/neuron/wrapper_api.h", "sdk/neuron/libneuroncustomop.a", "sdk/neuron/libcweak.a",
		"sdk/c10/lib/libc10.a",
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		check_write_file(files[i], "");
	check_write_file("src/relu.cpp", "int relu;\n");
	check_write_file("src/axpy.cpp", "int axpy;\n");
	char sdk[4200];
	snprintf(sdk, sizeof sdk, "%s/sdk", directory);
	setenv("NEURON_CUSTOM_OP", sdk, 1);
	static const char *const unset[] = {
		"Q7_CORE", "Q7_TOOLS", "LM_LICENSE_FILE", "XTENSA_TOOLS", "CUSTOM_OP_LAUNCHER",
		"FAKE_LOG", "FAKE_STAMPS", "FAKE_FAIL", "FAKE_HANG", "FAKE_GATE",
	};
	for (size_t i = 0; i < sizeof unset / sizeof unset[0]; i++)
		unsetenv(unset[i]);
	return 0;
}

static const char *const schemas[] = { "my_ops::relu(Tensor x) -> Tensor", "my_ops::axpy(Tensor x) -> Tensor" };
static const char *const sources[] = { "src/relu.cpp", "src/axpy.cpp" };

static struct bco_request request_for(const char *build_dir)
{
	struct bco_request request;
	memset(&request, 0, sizeof request);
	request.name = "lib";
	request.schemas = schemas;
	request.schema_count = 2;
	request.sources = sources;
	request.source_count = 2;
	request.build_dir = build_dir;
	request.jobs = 2;
	return request;
}

/* Builds build_dir; returns 1 when the build succeeded with its artifact. */
static int builds(const char *build_dir)
{
	struct bco_request request = request_for(build_dir);
	bco_result *result = NULL;
	bco_error *error = NULL;
	int kind = bco_build(&request, &result, &error);
	char expected[64];
	snprintf(expected, sizeof expected, "%s/lib.packed.so", build_dir);
	int built = kind == BCO_OK && !error && bco_result_count(result) == 1 &&
	            strcmp(bco_result_path(result, 0), expected) == 0;
	if (!built)
		printf("# %s: kind %d: %s\n", build_dir, kind, error ? bco_error_message(error) : "(no error)");
	bco_result_free(result);
	bco_error_free(error);
	return built;
}

struct builder {
	const char *build_dir;
	int rounds;
	int built;
};

static void *build_rounds(void *argument)
{
	struct builder *builder = argument;
	for (int i = 0; i < builder->rounds; i++) {
		char command[128];
		snprintf(command, sizeof command, "%s/lib.so", builder->build_dir);
		unlink(command); /* so that each round links and packs again */
		builder->built += builds(builder->build_dir);
	}
	return NULL;
}

static void (*disposition(int signal_number))(int)
{
	struct sigaction current;
	sigaction(signal_number, NULL, &current);
	return current.sa_handler;
}

static void test_threads(void)
{
	/* As before, not SIG_DFL: under nohup SIGHUP starts ignored. */
	void (*before[3])(int) = { disposition(SIGINT), disposition(SIGTERM), disposition(SIGHUP) };
	struct builder one = { "one", 10, 0 }, two = { "two", 10, 0 };
	pthread_t first, second;
	pthread_create(&first, NULL, build_rounds, &one);
	pthread_create(&second, NULL, build_rounds, &two);
	pthread_join(first, NULL);
	pthread_join(second, NULL);
	CHECK_INT(one.built + two.built, 20, "two threads, 10 builds each into its own directory: all succeed");

	struct builder three = { "same", 5, 0 }, four = { "same", 5, 0 };
	pthread_create(&first, NULL, build_rounds, &three);
	pthread_create(&second, NULL, build_rounds, &four);
	pthread_join(first, NULL);
	pthread_join(second, NULL);
	CHECK_INT(three.built + four.built, 10, "two threads building one directory take turns: all succeed");
	CHECK(disposition(SIGINT) == before[0] && disposition(SIGTERM) == before[1] && disposition(SIGHUP) == before[2],
	      "and every disposition is as before");
}

static void test_child_signal(void)
{
	sigset_t blocked, previous;
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &blocked, &previous);
	int built = 0;
	for (int i = 0; i < 10; i++) {
		unlink("blocked/lib.so");
		unlink("blocked/relu.o");
		built += builds("blocked");
	}
	pthread_sigmask(SIG_SETMASK, &previous, NULL);
	CHECK_INT(built, 10, "with SIGCHLD blocked, 10 builds succeed");

	signal(SIGCHLD, SIG_IGN);
	setenv("FAKE_FAIL", "axpy.o", 1);
	struct bco_request request = request_for("ignored");
	bco_result *result = NULL;
	bco_error *error = NULL;
	int kind = bco_build(&request, &result, &error);
	unsetenv("FAKE_FAIL");
	CHECK_INT(kind, BCO_ERROR_STEP, "with SIGCHLD ignored, a failing step is still a failed step");
	CHECK(error && strstr(bco_error_message(error), "fake failure"), "with the tool's output");
	bco_error_free(error);
	CHECK(builds("ignored"), "and a good build succeeds");
	CHECK(disposition(SIGCHLD) == SIG_IGN, "SIGCHLD is ignored again afterwards");
	signal(SIGCHLD, SIG_DFL);
}

static volatile sig_atomic_t own_interrupts;

static void own_handler(int signal_number)
{
	(void)signal_number;
	own_interrupts++;
}

/* Raises SIGINT at the first message of the given kind. */
static void interrupt_at(void *context, enum bco_message_kind kind, const char *text)
{
	int *at = context;
	(void)text;
	if ((int)kind == *at) {
		*at = -1;
		raise(SIGINT);
	}
}

static void test_error_without_result(void)
{
	struct sigaction own, previous;
	memset(&own, 0, sizeof own);
	own.sa_handler = own_handler;
	sigemptyset(&own.sa_mask);
	sigaction(SIGINT, &own, &previous);

	/* A no-op build whose only message, a warning of a source dated in the
	 * future, comes after the last step. */
	CHECK(builds("late"), "a build to repeat");
	struct timespec times[2] = { { 4102444800, 0 }, { 4102444800, 0 } }; /* 2100-01-01 */
	utimensat(AT_FDCWD, "src/relu.cpp", times, 0);
	CHECK(builds("late"), "a build with a source from the future");
	struct bco_request request = request_for("late");
	int at = BCO_MESSAGE_WARNING;
	request.progress = interrupt_at;
	request.progress_context = &at;
	bco_result *result = (bco_result *)&request; /* must be overwritten */
	bco_error *error = NULL;
	int kind = bco_build(&request, &result, &error);
	CHECK_INT(at, -1, "the warning came, and SIGINT with it");
	CHECK_INT(kind, BCO_ERROR_INTERRUPTED, "a SIGINT after the last step fails the build");
	CHECK(result == NULL, "and there is no result with the error");
	CHECK_INT(error ? bco_error_signal(error) : 0, SIGINT, "the error names SIGINT");
	CHECK_INT(own_interrupts, 0, "the build caught it, not the caller's handler");
	bco_error_free(error);

	/* A dry run writes nothing and catches nothing: the caller's handler
	 * gets the signal, and the dry run succeeds. */
	request = request_for("dry");
	request.dry_run = 1;
	at = BCO_MESSAGE_COMMAND;
	request.progress = interrupt_at;
	request.progress_context = &at;
	error = NULL;
	kind = bco_build(&request, &result, &error);
	CHECK(kind == BCO_OK ? result != NULL && error == NULL : result == NULL && error != NULL,
	      "a dry run returns a result or an error, never both");
	CHECK_INT(own_interrupts, 1, "a dry run leaves SIGINT to the caller");
	bco_result_free(result);
	bco_error_free(error);
	sigaction(SIGINT, &previous, NULL);
	struct timespec now[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };
	utimensat(AT_FDCWD, "src/relu.cpp", now, 0);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (set_up() != 0) {
		printf("not ok - cannot set up a fake SDK in %s\n", directory);
		return 1;
	}
	check_watchdog(120, "every build returns");
	test_threads();
	test_child_signal();
	test_error_without_result();
	check_watchdog(0, "");
	if (chdir("/") != 0 || nftw(directory, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		printf("# cannot remove %s\n", directory);
	return check_failures != 0;
}
