/* test_exec.c - running steps: capture, status, failure, order, signals.
 *
 * The steps run small /bin/sh scripts; they prove overlap and order with
 * stamp files they write, never with timing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arena.h"
#include "buffer.h"
#include "check.h"
#include "diag.h"
#include "exec.h"
#include "fsutil.h"

static struct arena arena;
static char directory[] = "/tmp/test_exec.XXXXXX";
static struct buffer messages;
static char *no_environment[] = {"PATH=/usr/bin:/bin", NULL};

static void record_message(void *context, enum bco_message_kind kind, const char *text)
{
	static const char *const names[] = {"STATUS", "COMMAND", "OUTPUT", "WARNING", "FAILURE"};
	(void)context;
	buffer_printf(&messages, "%s: %s\n", names[kind], text);
}

static void explain(void *context, const struct step *step, struct buffer *report)
{
	(void)context;
	buffer_printf(report, "hint: %s needs a kernel\n", step->target);
}

static char *in_directory(const char *name)
{
	return arena_printf(&arena, "%s/%s", directory, name);
}

/* {"/bin/sh", "-c", script, "sh", arguments..., NULL}; see shell() */
static char **shell_words(const char *script, ...)
{
	struct strvec argv;
	strvec_init(&argv, &arena);
	strvec_push_copy(&argv, "/bin/sh");
	strvec_push_copy(&argv, "-c");
	strvec_push_copy(&argv, script);
	strvec_push_copy(&argv, "sh");
	va_list arguments;
	va_start(arguments, script);
	for (const char *argument; (argument = va_arg(arguments, const char *));)
		strvec_push_copy(&argv, argument);
	va_end(arguments);
	return argv.items;
}

/* The shell command running script with the given arguments as $1... */
#define shell(...) shell_words(__VA_ARGS__, (const char *)NULL)
/* The argv of the given words. */
#define words(...) words_list(__VA_ARGS__, (const char *)NULL)

static char **words_list(const char *first, ...)
{
	struct strvec argv;
	strvec_init(&argv, &arena);
	va_list arguments;
	va_start(arguments, first);
	for (const char *word = first; word; word = va_arg(arguments, const char *))
		strvec_push_copy(&argv, word);
	va_end(arguments);
	return argv.items;
}

static struct step *new_steps(size_t count)
{
	return arena_array(&arena, count, sizeof(struct step));
}

static void set_step(struct step *step, const char *target, char **argv)
{
	memset(step, 0, sizeof *step);
	step->action = "CC";
	step->target = target;
	step->argv = argv;
	step->state = STEP_PENDING;
}

static void set_output(struct step *step, const char *path)
{
	step->outputs = arena_array(&arena, 1, sizeof(char *));
	step->outputs[0] = arena_strdup(&arena, path);
	step->output_count = 1;
}

static void set_dependency(struct step *step, size_t index)
{
	step->dependencies = arena_array(&arena, 1, sizeof(size_t));
	step->dependencies[0] = index;
	step->dependency_count = 1;
}

static struct exec_options options(int jobs)
{
	struct exec_options result;
	memset(&result, 0, sizeof result);
	result.jobs = jobs;
	result.environment = no_environment;
	result.progress = record_message;
	result.explain_failure = explain;
	return result;
}

/* Runs the steps with fresh message and diag records. */
static int run(struct step *steps, size_t count, const struct exec_options *opts, struct diag *diag)
{
	buffer_init(&messages, &arena);
	diag_init(diag, &arena);
	return exec_run(&arena, steps, count, opts, diag);
}

static void write_file(const char *path, const char *text)
{
	FILE *file = fopen(path, "w");
	if (file) {
		fputs(text, file);
		fclose(file);
	}
}

static const char *read_text(const char *path)
{
	char *text;
	size_t length;
	if (fs_read_file(&arena, path, &text, &length) != 0)
		return "(missing)";
	return text;
}

static int count_open_descriptors(void)
{
	DIR *fds = opendir("/proc/self/fd");
	int count = 0;
	if (!fds)
		return -1;
	while (readdir(fds))
		count++;
	closedir(fds);
	return count;
}

/* The descriptors of this process a child would inherit, as "0 1 2 ...". */
static const char *inheritable_descriptors(void)
{
	DIR *fds = opendir("/proc/self/fd");
	struct buffer list;
	buffer_init(&list, &arena);
	if (!fds)
		return "";
	for (struct dirent *entry; (entry = readdir(fds));) {
		int fd = atoi(entry->d_name);
		if (entry->d_name[0] == '.' || fd == dirfd(fds))
			continue;
		/* 0, 1 and 2 are the pipe and /dev/null in the child. */
		if (fd > 2 && (fcntl(fd, F_GETFD) & FD_CLOEXEC))
			continue;
		buffer_printf(&list, "%d ", fd);
	}
	closedir(fds);
	return list.data;
}

/* Words of descriptor numbers, sorted numerically and joined by spaces. */
static const char *descriptor_list(const char *words_text)
{
	int numbers[256];
	size_t count = 0;
	for (const char *p = words_text; *p && count < 256;) {
		char *end;
		long number = strtol(p, &end, 10);
		if (end == p) {
			p++;
			continue;
		}
		size_t at = count++;
		while (at > 0 && numbers[at - 1] > number) {
			numbers[at] = numbers[at - 1];
			at--;
		}
		numbers[at] = (int)number;
		p = end;
	}
	struct buffer list;
	buffer_init(&list, &arena);
	for (size_t i = 0; i < count; i++)
		buffer_printf(&list, i ? " %d" : "%d", numbers[i]);
	return list.data;
}

static void test_capture(void)
{
	struct step *steps = new_steps(1);
	set_step(&steps[0], "a.cpp", shell("echo out; echo err >&2; echo more"));
	struct exec_options opts = options(1);
	struct diag diag;
	CHECK_INT(run(steps, 1, &opts, &diag), 0, "a succeeding step returns 0");
	CHECK_INT(steps[0].state, STEP_SUCCEEDED, "its state is SUCCEEDED");
	CHECK_INT(steps[0].exit_status, 0, "its exit status is 0");
	CHECK_STR(steps[0].output, "out\nerr\nmore\n", "stdout and stderr land in one capture, in order");
	CHECK_STR(messages.data, "STATUS: [1/1] CC a.cpp\nOUTPUT: out\nerr\nmore\n\n",
	          "a status line, then the output whole");

	set_step(&steps[0], "quiet", shell("exit 0"));
	CHECK_INT(run(steps, 1, &opts, &diag), 0, "a silent step succeeds");
	CHECK_STR(messages.data, "STATUS: [1/1] CC quiet\n", "no OUTPUT message for empty output");
	CHECK_STR(steps[0].output, "", "its output is empty, not NULL");
}

/* The standard signals (1-31) this process was started with ignored: a
 * child keeps those that exec does not reset (nohup's SIGHUP stays, so that
 * nohup still protects the tools). */
static unsigned long long ignored_at_start(void)
{
	unsigned long long mask = 0;
	FILE *status = fopen("/proc/self/status", "r");
	char line[256];
	while (status && fgets(line, sizeof line, status))
		if (sscanf(line, "SigIgn:\t%llx", &mask) == 1)
			break;
	if (status)
		fclose(status);
	return mask % (1ull << 31);
}

static void test_child_state(void)
{
	/* The precondition of "no ignored standard signal": none was ignored
	 * when the test started, or the child may keep it (run under nohup). */
	unsigned long long inherited = ignored_at_start();
	if (inherited)
		printf("# started with ignored signals 0x%llx (nohup?): a child may keep those\n",
		       inherited);
	struct exec_options opts = options(1);
	struct diag diag;
	struct step *steps = new_steps(5);
	set_step(&steps[0], "signals", words("grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"));
	set_step(&steps[1], "env", words("env"));
	set_step(&steps[2], "stdin", words("readlink", "/proc/self/fd/0"));
	set_step(&steps[3], "fds", shell("ls /proc/$$/fd"));
	set_step(&steps[4], "group",
	         shell("set -- $(cat /proc/$$/stat); [ \"$5\" = $$ ] && echo own group"));
	/* What a Python parent looks like: SIGPIPE ignored, a signal blocked. */
	struct sigaction ignore, previous_pipe;
	memset(&ignore, 0, sizeof ignore);
	ignore.sa_handler = SIG_IGN;
	sigemptyset(&ignore.sa_mask);
	sigaction(SIGPIPE, &ignore, &previous_pipe);
	sigset_t blocked, previous_mask;
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGUSR1);
	sigprocmask(SIG_BLOCK, &blocked, &previous_mask);
	CHECK_INT(run(steps, 5, &opts, &diag), 0, "the probes run");
	sigprocmask(SIG_SETMASK, &previous_mask, NULL);
	sigaction(SIGPIPE, &previous_pipe, NULL);
	unsigned long long blocked_mask = 1, ignored_mask = 1;
	if (sscanf(steps[0].output, "SigBlk:\t%llx\nSigIgn:\t%llx", &blocked_mask, &ignored_mask) != 2)
		check_show("signal state", steps[0].output);
	CHECK(blocked_mask == 0, "a child has no blocked signal");
	/* Only signals 1-31: glibc's posix_spawn leaves its two internal
	 * real-time signals ignored, and no attribute can change that. */
	CHECK((ignored_mask % (1ull << 31) & ~inherited) == 0,
	      "a child has no ignored standard signal but those the test started with");
	CHECK_STR(steps[1].output, "PATH=/usr/bin:/bin\n", "a child gets exactly the given environment");
	CHECK_STR(steps[2].output, "/dev/null\n", "a child reads /dev/null");
	CHECK_STR(descriptor_list(steps[3].output), descriptor_list(inheritable_descriptors()),
	          "a child inherits no descriptor the run opened");
	CHECK_STR(steps[4].output, "own group\n", "a child leads its own process group");
}

static void test_failure(void)
{
	char *object = in_directory("fail.o");
	struct step *steps = new_steps(1);
	set_step(&steps[0], "fail.cpp",
	         shell("echo partial > \"$1\"; echo 'bad thing'; printf 'no newline'; exit 3", object));
	set_output(&steps[0], object);
	struct exec_options opts = options(2);
	struct diag diag;
	CHECK_INT(run(steps, 1, &opts, &diag), -1, "a failing step returns -1");
	CHECK_INT(diag.kind, BCO_ERROR_STEP, "the error is BCO_ERROR_STEP");
	CHECK_INT(steps[0].state, STEP_FAILED, "its state is FAILED");
	CHECK_INT(steps[0].exit_status, 3, "its exit status is kept");
	CHECK(!fs_exists(object), "its output is deleted");
	const char *report = arena_printf(&arena,
		"FAILED: %s\n"
		"/bin/sh -c 'echo partial > \"$1\"; echo '\\''bad thing'\\''; printf '\\''no newline'\\''; exit 3' sh %s\n"
		"bad thing\nno newline"
		"hint: fail.cpp needs a kernel\n", object, object);
	CHECK_STR(diag.message, report, "the error message is the failure report");
	CHECK_STR(messages.data,
	          arena_printf(&arena, "STATUS: [1/1] CC fail.cpp\nFAILURE: %s\n", report),
	          "a status line, then the failure report and no separate output");

	set_step(&steps[0], "killed", shell("kill -KILL $$"));
	steps[0].output_count = 0;
	CHECK_INT(run(steps, 1, &opts, &diag), -1, "a step killed by a signal fails");
	CHECK_INT(steps[0].exit_status, 128 + SIGKILL, "its exit status is 128 + the signal");
	CHECK_STR(diag.message, "FAILED: \n/bin/sh -c 'kill -KILL $$' sh\nhint: killed needs a kernel\n",
	          "the report of a step without outputs or output");
}

static void test_spawn_failure(void)
{
	struct step *steps = new_steps(2);
	set_step(&steps[0], "missing", words("no-such-tool-for-test-exec", "-c", "x.c"));
	set_step(&steps[1], "not executable", words(in_directory("")));
	struct exec_options opts = options(1);
	opts.keep_going = 1;
	opts.explain_failure = NULL;
	struct diag diag;
	CHECK_INT(run(steps, 2, &opts, &diag), -1, "a tool that cannot be spawned fails the run");
	CHECK_INT(diag.kind, BCO_ERROR_STEP, "as a failed step");
	CHECK_INT(steps[0].state, STEP_FAILED, "its state is FAILED");
	CHECK_INT(steps[0].exit_status, 127, "its exit status is 127");
	/* Valgrind turns posix_spawn's vfork-like clone into a fork, so an exec
	 * failure shows up only as the child's exit status 127. */
	const char *preload = getenv("LD_PRELOAD");
	if (preload && strstr(preload, "vgpreload")) {
		printf("# under valgrind: the spawn error messages are not checked\n");
		return;
	}
	CHECK_STR(steps[0].output,
	          "build-custom-op: cannot run 'no-such-tool-for-test-exec': No such file or directory\n",
	          "its output says which tool and why");
	CHECK_STR(diag.message,
	          "FAILED: \nno-such-tool-for-test-exec -c x.c\n"
	          "build-custom-op: cannot run 'no-such-tool-for-test-exec': No such file or directory\n",
	          "the failure report");
	CHECK_STR(steps[1].output,
	          arena_printf(&arena, "build-custom-op: cannot run '%s/': Permission denied\n", directory),
	          "a directory cannot be run either");
}

static void test_not_run(void)
{
	char *survivor = in_directory("independent.o");
	struct step *steps = new_steps(4);
	set_step(&steps[0], "bad", shell("exit 1"));
	set_step(&steps[1], "after-bad", shell("exit 0"));
	set_dependency(&steps[1], 0);
	set_step(&steps[2], "independent", shell(": > \"$1\"", survivor));
	set_step(&steps[3], "after-after", shell("exit 0"));
	set_dependency(&steps[3], 1);
	struct exec_options opts = options(1);
	opts.explain_failure = NULL;
	struct diag diag;
	CHECK_INT(run(steps, 4, &opts, &diag), -1, "a failure fails the run");
	CHECK_INT(steps[1].state, STEP_NOT_RUN, "a dependent of a failed step is NOT_RUN");
	CHECK_INT(steps[3].state, STEP_NOT_RUN, "and so is its dependent");
	CHECK_INT(steps[2].state, STEP_NOT_RUN, "without keep_going an independent step does not start");
	CHECK(!fs_exists(survivor), "so its output was never written");
	CHECK_STR(messages.data, "STATUS: [1/4] CC bad\nFAILURE: FAILED: \n/bin/sh -c 'exit 1' sh\n\n",
	          "only the failed step was started");

	for (size_t i = 0; i < 4; i++)
		steps[i].state = STEP_PENDING;
	opts.keep_going = 1;
	CHECK_INT(run(steps, 4, &opts, &diag), -1, "with keep_going a failure still fails the run");
	CHECK_INT(diag.kind, BCO_ERROR_STEP, "with BCO_ERROR_STEP");
	CHECK_INT(steps[2].state, STEP_SUCCEEDED, "with keep_going an independent step runs");
	CHECK(fs_exists(survivor), "and writes its output");
	CHECK_INT(steps[1].state, STEP_NOT_RUN, "a dependent still does not run");
	CHECK_INT(steps[3].state, STEP_NOT_RUN, "nor its dependent");
	unlink(survivor);
}

static void test_order(void)
{
	char *stamps = in_directory("order.stamps");
	struct step *steps = new_steps(4);
	const char *script = "echo \"$1 start\" >> \"$2\"; echo \"$1 end\" >> \"$2\"";
	set_step(&steps[0], "s0", shell(script, "s0", stamps));
	set_dependency(&steps[0], 3);
	set_step(&steps[1], "s1", shell(script, "s1", stamps));
	set_step(&steps[2], "s2", shell(script, "s2", stamps));
	set_step(&steps[3], "s3", shell(script, "s3", stamps));
	steps[2].state = STEP_UP_TO_DATE;
	struct exec_options opts = options(1);
	opts.verbose = 1;
	struct diag diag;
	CHECK_INT(run(steps, 4, &opts, &diag), 0, "steps with a dependency succeed");
	CHECK_STR(read_text(stamps), "s1 start\ns1 end\ns3 start\ns3 end\ns0 start\ns0 end\n",
	          "one job at a time, ready steps in index order, an up-to-date step not run");
	CHECK_INT(steps[2].state, STEP_UP_TO_DATE, "an up-to-date step stays so");
	const char *quoted = arena_printf(&arena,
		"'echo \"$1 start\" >> \"$2\"; echo \"$1 end\" >> \"$2\"' sh");
	CHECK_STR(messages.data, arena_printf(&arena,
		"COMMAND: /bin/sh -c %s s1 %s\nSTATUS: [1/3] CC s1\n"
		"COMMAND: /bin/sh -c %s s3 %s\nSTATUS: [2/3] CC s3\n"
		"COMMAND: /bin/sh -c %s s0 %s\nSTATUS: [3/3] CC s0\n",
		quoted, stamps, quoted, stamps, quoted, stamps),
		"verbose: each command before its status, N counts the steps to run");

	/* Each waits (boundedly) for the other to have started: if they did
	 * not overlap, the first would write its end before the second starts. */
	const char *meet = "echo \"$1 start\" >> \"$4\"; : > \"$2\"; i=0; "
	                   "while [ ! -e \"$3\" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; "
	                   "echo \"$1 end\" >> \"$4\"";
	char *overlap = in_directory("overlap.stamps");
	char *a_started = in_directory("a.started"), *b_started = in_directory("b.started");
	steps = new_steps(3);
	set_step(&steps[0], "a", shell(meet, "a", a_started, b_started, overlap));
	set_step(&steps[1], "b", shell(meet, "b", b_started, a_started, overlap));
	set_step(&steps[2], "c", shell("echo \"c start\" >> \"$1\"", overlap));
	opts = options(2);
	CHECK_INT(run(steps, 3, &opts, &diag), 0, "three steps on two jobs succeed");
	const char *text = read_text(overlap);
	/* c cannot start before a or b ends, since a and b wait for each other. */
	const char *first_end = strstr(text, " end\n"), *c_start = strstr(text, "c start\n");
	CHECK(first_end && c_start && c_start > first_end && !strstr(c_start + 1, "c start"),
	      "the third step starts once, after a job slot frees");
	if (c_start) {
		/* Leave only a's and b's lines for the check below. */
		char *rest = arena_strdup(&arena, text);
		size_t at = (size_t)(c_start - text);
		memmove(rest + at, rest + at + strlen("c start\n"), strlen(rest + at + strlen("c start\n")) + 1);
		text = rest;
	}
	int overlapped = strcmp(text, "a start\nb start\na end\nb end\n") == 0 ||
	                 strcmp(text, "a start\nb start\nb end\na end\n") == 0 ||
	                 strcmp(text, "b start\na start\na end\nb end\n") == 0 ||
	                 strcmp(text, "b start\na start\nb end\na end\n") == 0;
	CHECK(overlapped, "with two jobs both start before either ends");
	if (!overlapped)
		check_show("stamps", text);
	unlink(stamps);
	unlink(overlap);
	unlink(a_started);
	unlink(b_started);
}

static void test_edge_cases(void)
{
	struct diag diag;
	struct exec_options opts = options(1);
	struct step *steps = new_steps(2);
	set_step(&steps[0], "done", shell("exit 1"));
	steps[0].state = STEP_UP_TO_DATE;
	CHECK_INT(run(steps, 1, &opts, &diag), 0, "nothing to run succeeds");
	CHECK_STR(messages.data, "", "and reports nothing");

	set_step(&steps[0], "x", shell("exit 0"));
	set_dependency(&steps[0], 1);
	set_step(&steps[1], "y", shell("exit 0"));
	set_dependency(&steps[1], 0);
	CHECK_INT(run(steps, 2, &opts, &diag), -1, "a dependency cycle fails");
	CHECK_INT(diag.kind, BCO_ERROR_SYSTEM, "as a system error");
	CHECK_INT(steps[0].state, STEP_NOT_RUN, "and runs nothing");
	CHECK_STR(messages.data, "", "nothing is reported for it");

	set_step(&steps[0], "out-of-range", shell("exit 0"));
	set_dependency(&steps[0], 7);
	CHECK_INT(run(steps, 1, &opts, &diag), -1, "a dependency out of range fails");
	CHECK_INT(steps[0].state, STEP_NOT_RUN, "and the step does not run");

	set_step(&steps[0], "no progress sink", shell("echo quiet"));
	steps[0].dependency_count = 0;
	opts.progress = NULL;
	CHECK_INT(run(steps, 1, &opts, &diag), 0, "a NULL progress sink is allowed");
	CHECK_STR(steps[0].output, "quiet\n", "and output is still captured");
}

/* Runs 40 quick steps on 2 jobs, every fifth exiting 3; returns 1 when each
 * ended with the right state and exit status. */
static int run_quick_steps(const char *what)
{
	enum { STEPS = 40 };
	struct step *steps = new_steps(STEPS);
	for (size_t i = 0; i < STEPS; i++)
		set_step(&steps[i], "quick", shell(i % 5 == 4 ? "exit 3" : "echo out"));
	struct exec_options opts = options(2);
	opts.keep_going = 1;
	opts.explain_failure = NULL;
	struct diag diag;
	CHECK_INT(run(steps, STEPS, &opts, &diag), -1, arena_printf(&arena, "%s: the run ends, failing", what));
	int right = 1;
	for (size_t i = 0; i < STEPS; i++) {
		int failing = i % 5 == 4;
		if (steps[i].state != (failing ? STEP_FAILED : STEP_SUCCEEDED) ||
		    steps[i].exit_status != (failing ? 3 : 0) || strcmp(steps[i].output, failing ? "" : "out\n") != 0)
			right = 0;
	}
	return right;
}

/* A caller that blocks SIGCHLD (an event loop reading it from a signalfd,
 * a thread pool) or ignores it: the run neither hangs nor loses a status. */
static void test_child_signal(void)
{
	check_watchdog(60, "the runs end (waiting for a wakeup that never came)");

	sigset_t blocked, previous_mask;
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGCHLD);
	sigprocmask(SIG_BLOCK, &blocked, &previous_mask);
	CHECK(run_quick_steps("SIGCHLD blocked"), "with SIGCHLD blocked, 40 steps end with their own statuses");
	sigprocmask(SIG_SETMASK, &previous_mask, NULL);

	struct sigaction ignore, previous_child, after;
	memset(&ignore, 0, sizeof ignore);
	ignore.sa_handler = SIG_IGN;
	sigemptyset(&ignore.sa_mask);
	sigaction(SIGCHLD, &ignore, &previous_child);
	CHECK(run_quick_steps("SIGCHLD ignored"), "with SIGCHLD ignored, the exit statuses are not lost");
	sigaction(SIGCHLD, &previous_child, &after);
	CHECK(after.sa_handler == SIG_IGN, "and SIGCHLD is ignored again afterwards");

	ignore.sa_handler = SIG_DFL;
	ignore.sa_flags = SA_NOCLDWAIT;
	sigaction(SIGCHLD, &ignore, &previous_child);
	CHECK(run_quick_steps("SA_NOCLDWAIT"), "with SA_NOCLDWAIT, the exit statuses are not lost");
	sigaction(SIGCHLD, &previous_child, &after);
	CHECK(after.sa_flags & SA_NOCLDWAIT, "and SA_NOCLDWAIT is back afterwards");

	check_watchdog(0, "");
}

static int test_handler_calls;

static void test_handler(int signal_number)
{
	(void)signal_number;
	test_handler_calls++;
}

static int same_action(const struct sigaction *a, const struct sigaction *b)
{
	return a->sa_handler == b->sa_handler && a->sa_flags == b->sa_flags;
}

/* A step signals this process; the running steps must be killed, their
 * outputs deleted, and the caller's handlers put back. */
static void test_interrupt(int signal_number, const char *name, int ignores_term)
{
	struct sigaction mine, before_int, before_term, before_hup, before_child, after_int, after_term,
		after_hup, after_child;
	memset(&mine, 0, sizeof mine);
	mine.sa_handler = test_handler;
	sigemptyset(&mine.sa_mask);
	mine.sa_flags = SA_RESTART;
	/* Set all three, so an earlier run that failed to restore them cannot
	 * hide this one failing too. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigaction(signal_number, &mine, NULL);
	sigaction(SIGINT, NULL, &before_int);
	sigaction(SIGTERM, NULL, &before_term);
	sigaction(SIGHUP, NULL, &before_hup);
	sigaction(SIGCHLD, NULL, &before_child);

	char *sender_output = in_directory("sender.o");
	char *sleeper_output = in_directory("sleeper.o");
	char *after_output = in_directory("after.o");
	char *pid = arena_printf(&arena, "%ld", (long)getpid());
	struct step *steps = new_steps(3);
	/* The sender waits for the sleeper's output to exist, so both are
	 * running with an output on disk when the signal arrives. */
	set_step(&steps[0], "sender",
	         shell("echo partial > \"$1\"; i=0; while [ ! -e \"$2\" ] && [ $i -lt 1000 ]; "
	               "do sleep 0.01; i=$((i+1)); done; kill -s \"$3\" \"$4\"; sleep 30",
	               sender_output, sleeper_output, name, pid));
	set_output(&steps[0], sender_output);
	set_step(&steps[1], "sleeper",
	         shell(ignores_term ? "trap '' TERM; echo partial > \"$1\"; sleep 30"
	                            : "echo partial > \"$1\"; sleep 30",
	               sleeper_output));
	set_output(&steps[1], sleeper_output);
	set_step(&steps[2], "after", shell(": > \"$1\"", after_output));
	set_output(&steps[2], after_output);
	struct exec_options opts = options(2);
	struct diag diag;
	const char *what = ignores_term ? " (a job ignores SIGTERM)" : "";
	CHECK_INT(run(steps, 3, &opts, &diag), -1,
	          arena_printf(&arena, "%s interrupts the run%s", name, what));
	CHECK_INT(diag.kind, BCO_ERROR_INTERRUPTED, "with BCO_ERROR_INTERRUPTED");
	CHECK_INT(diag.signal, signal_number, "diag.signal names the signal");
	CHECK_STR(diag.message, arena_printf(&arena, "interrupted by SIG%s", name), "the message");
	CHECK(!fs_exists(sender_output) && !fs_exists(sleeper_output),
	      "the running steps' outputs are deleted");
	CHECK_INT(steps[0].state, STEP_FAILED, "a killed step is FAILED");
	CHECK_INT(steps[1].exit_status, ignores_term ? 128 + SIGKILL : 128 + SIGTERM,
	          ignores_term ? "a job ignoring SIGTERM is killed with SIGKILL"
	                       : "a job is killed with SIGTERM");
	CHECK_INT(steps[2].state, STEP_NOT_RUN, "nothing starts after an interrupt");
	CHECK(!fs_exists(after_output), "so its output was never written");
	CHECK_INT(test_handler_calls, 0, "the caller's handler did not see the signal");
	CHECK(strstr(messages.data, "FAILURE") == NULL, "killed steps are not reported as failures");

	sigaction(SIGINT, NULL, &after_int);
	sigaction(SIGTERM, NULL, &after_term);
	sigaction(SIGHUP, NULL, &after_hup);
	sigaction(SIGCHLD, NULL, &after_child);
	CHECK(same_action(&before_int, &after_int) && same_action(&before_term, &after_term) &&
	      same_action(&before_hup, &after_hup) && same_action(&before_child, &after_child),
	      "SIGINT, SIGTERM, SIGHUP and SIGCHLD dispositions are restored");
	raise(signal_number);
	CHECK_INT(test_handler_calls, 1, "the caller's handler works again");
	test_handler_calls = 0;
	signal(signal_number, SIG_DFL);
}

int main(void)
{
	jmp_buf out_of_memory;
	if (setjmp(out_of_memory)) {
		printf("not ok - out of memory\n");
		return 1;
	}
	arena_init(&arena, &out_of_memory);
	if (!mkdtemp(directory)) {
		printf("not ok - cannot create a temporary directory\n");
		return 1;
	}
	int descriptors = count_open_descriptors();
	test_capture();
	test_child_state();
	test_failure();
	test_spawn_failure();
	test_not_run();
	test_order();
	test_edge_cases();
	test_interrupt(SIGINT, "INT", 0);
	test_interrupt(SIGTERM, "TERM", 0);
	test_interrupt(SIGINT, "INT", 1);
	test_interrupt(SIGHUP, "HUP", 0);
	test_child_signal();
	CHECK_INT(count_open_descriptors(), descriptors, "no descriptor leaks");
	errno = 0;
	CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "no child is left, not even a zombie");
	write_file(in_directory("unused"), "");
	unlink(in_directory("unused"));
	rmdir(directory);
	arena_release(&arena);
	return check_failures != 0;
}
