/* build.c - one build request, start to end: the only room that knows every other. */
#define _DEFAULT_SOURCE /* flock: one build of a directory at a time */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "buffer.h"
#include "buildcustomop.h"
#include "buildlog.h"
#include "codegen.h"
#include "compdb.h"
#include "diag.h"
#include "exec.h"
#include "fsutil.h"
#include "inputs.h"
#include "interrupt.h"
#include "opsrecord.h"
#include "plan.h"
#include "sanitize.h"
#include "state.h"
#include "target.h"
#include "validate.h"

struct bco_result {
	size_t count;
	char **paths;
	size_t settled_count;  /* see bco_result_settled_path */
	char **settled;
};

/* Everything one call holds; on the heap, so it survives an out-of-memory
 * longjmp with its values intact. */
struct call {
	struct arena arena;
	jmp_buf out_of_memory;
	struct diag diag;
	const struct bco_request *request;
	int lock_fd;
	struct buildlog *log; /* its append descriptor is closed at the end */
	struct interrupt_guard interrupts; /* from the lock to the end of the call */
	int catching_interrupts;
	struct op *ops;
	size_t op_count;
	struct toolchain toolchain; /* once resolved; zero (xtensa) before */
};

static struct call *call_begin(const struct bco_request *request)
{
	struct call *call = calloc(1, sizeof *call);
	if (!call)
		return NULL;
	arena_init(&call->arena, &call->out_of_memory);
	diag_init(&call->diag, &call->arena);
	call->request = request;
	call->lock_fd = -1;
	return call;
}

/* Ends the call: releases the lock and the arena, and exports the error. */
static int call_end(struct call *call, int status, bco_error **error)
{
	if (call->catching_interrupts) {
		/* A Ctrl-C is never lost, even one that came after the last step. */
		int caught = interrupt_release(&call->interrupts);
		if (caught && (status == 0 || call->diag.kind != BCO_ERROR_INTERRUPTED)) {
			diag_init(&call->diag, &call->arena);
			status = interrupt_fail(&call->diag, caught);
		}
	}
	if (call->log)
		buildlog_close_append(call->log);
	if (call->lock_fd >= 0)
		close(call->lock_fd); /* closing the descriptor releases the flock */
	if (status != 0 && call->diag.kind == BCO_OK)
		call->diag.kind = BCO_ERROR_SYSTEM;
	int kind = status == 0 ? BCO_OK : (int)call->diag.kind;
	if (error)
		*error = status == 0 ? NULL : diag_export(&call->diag);
	arena_release(&call->arena);
	free(call);
	return kind;
}

/* Ends a call whose arena ran out of memory (its setjmp returned again). */
static int call_end_out_of_memory(struct call *call, bco_error **error)
{
	diag_init(&call->diag, NULL);
	call->diag.kind = BCO_ERROR_SYSTEM;
	call->diag.message = "out of memory";
	return call_end(call, -1, error);
}

static int out_of_memory(bco_error **error)
{
	struct diag diag;
	diag_init(&diag, NULL);
	diag.kind = BCO_ERROR_SYSTEM;
	diag.message = "out of memory";
	if (error)
		*error = diag_export(&diag);
	return BCO_ERROR_SYSTEM;
}

static void report(const struct bco_request *request, enum bco_message_kind kind, const char *text)
{
	if (request->progress)
		request->progress(request->progress_context, kind, text);
}

static int validate_request_ops(struct call *call)
{
	const struct bco_request *r = call->request;
	if (inputs_check_lists(r, &call->diag) != 0)
		return -1;
	return validate_ops(&call->arena, r->target, r->functions, r->function_count, r->schemas,
	                    r->schema_count, r->progress, r->progress_context, &call->ops,
	                    &call->op_count, &call->diag);
}

static int cflags_contain(const struct bco_request *request, const char *flag)
{
	for (size_t i = 0; i < request->cflag_count; i++)
		if (strcmp(request->cflags[i], flag) == 0)
			return 1;
	return 0;
}

/* Waits while a process group named in the lock file lives: the tools that
 * a build killed outright (SIGKILL) left running, which would otherwise
 * overwrite this build's outputs.  A tool that started a session of its own
 * (a compiler cache's server) is not waited for. */
static int wait_for_orphans(struct call *call, const char *build_dir)
{
	char text[4096];
	ssize_t length = pread(call->lock_fd, text, sizeof text - 1, 0);
	if (length <= 0)
		return 0;
	text[length] = '\0';
	int reported = 0;
	for (char *line = text, *end; *line; line = end) {
		long group = strtol(line, &end, 10);
		if (end == line)
			break;
		while (group > 1 && (kill((pid_t)-group, 0) == 0 || errno == EPERM)) {
			if (interrupt_caught())
				return interrupt_fail(&call->diag, interrupt_caught());
			if (!reported) {
				report(call->request, BCO_MESSAGE_STATUS,
				       arena_printf(&call->arena, "waiting for the tools of a killed build of %s to "
				                    "end (process group %ld)", build_dir, group));
				reported = 1;
			}
			struct timespec pause = { 0, 50L * 1000 * 1000 };
			nanosleep(&pause, NULL);
		}
	}
	return 0;
}

/* Takes the build directory's lock, waiting for another build to finish;
 * an interrupt ends the wait. */
static int take_lock(struct call *call, const char *build_dir)
{
	char *path = arena_printf(&call->arena, "%s/.build-custom-op.lock", build_dir);
	call->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (call->lock_fd < 0)
		return diag_fail(&call->diag, BCO_ERROR_SYSTEM, "cannot open %s: %s", path, strerror(errno));
	int reported = 0;
	for (;;) {
		if (flock(call->lock_fd, LOCK_EX | LOCK_NB) == 0)
			return wait_for_orphans(call, build_dir);
		if (errno != EWOULDBLOCK && errno != EINTR)
			return diag_fail(&call->diag, BCO_ERROR_SYSTEM, "cannot lock %s: %s", path, strerror(errno));
		if (interrupt_caught())
			return interrupt_fail(&call->diag, interrupt_caught());
		if (!reported) {
			report(call->request, BCO_MESSAGE_STATUS,
			       arena_printf(&call->arena, "waiting for another build of %s to finish", build_dir));
			reported = 1;
		}
		/* Polling, because a blocking flock is restarted after our handler. */
		struct timespec pause = { 0, 50L * 1000 * 1000 };
		nanosleep(&pause, NULL);
	}
}

/* Passes the steps' messages on; after a host compile's output, the note
 * on its warnings that only a 64-bit host gives. */
static void report_step(void *context, enum bco_message_kind kind, const char *text)
{
	struct call *call = context;
	const struct bco_request *request = call->request;
	if (kind == BCO_MESSAGE_OUTPUT) {
		struct buffer noted;
		buffer_init(&noted, &call->arena);
		buffer_puts(&noted, text);
		target_explain_output(&call->toolchain, text, &noted);
		text = noted.data;
	}
	request->progress(request->progress_context, kind, text);
}

/* Adds what the schema requires when a link failed on an undefined kernel,
 * and the note on a host compile's warnings. */
static void explain_failure(void *context, const struct step *step, struct buffer *report_text)
{
	const struct call *call = context;
	if (strcmp(step->action, "CC") == 0)
		target_explain_output(&call->toolchain, step->output, report_text);
	if (strcmp(step->action, "LINK") != 0 || !step->output)
		return;
	for (size_t i = 0; i < call->op_count; i++) {
		const struct op *op = &call->ops[i];
		/* GNU ld quotes `fn(args)', lld writes "symbol: fn(args)". */
		const char *patterns[] = { "`%s(", "'%s(", "symbol: %s(" };
		for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
			char *needle = arena_printf(report_text->arena, patterns[p], op->function);
			if (strstr(step->output, needle)) {
				buffer_printf(report_text, "%s must be defined as: %s\n", op->function,
				              codegen_declaration(report_text->arena, op));
				break;
			}
		}
	}
}

/* Records each step in the build log as it finishes, so that a build
 * killed half-way redoes only what was not finished; keeps the process
 * groups of the running steps in the lock file (see wait_for_orphans). */
struct recorder {
	struct state *state;
	struct diag diag;  /* the first failure to write the log */
	int failed;
	int lock_fd;
	pid_t *groups;     /* per step: its process group while it runs, else 0 */
};

/* Rewrites the lock file with the running steps' process groups.  At
 * worst a failure leaves stale numbers, which the next build finds dead. */
static void note_running(struct recorder *recorder)
{
	char text[4096];
	size_t length = 0;
	const struct plan *plan = recorder->state->plan;
	for (size_t i = 0; i < plan->step_count && length + 24 < sizeof text; i++)
		if (recorder->groups[i])
			length += (size_t)snprintf(text + length, sizeof text - length, "%ld\n",
			                           (long)recorder->groups[i]);
	if (length && pwrite(recorder->lock_fd, text, length, 0) != (ssize_t)length)
		return;
	if (ftruncate(recorder->lock_fd, (off_t)length) != 0)
		return;
}

static void step_spawned(void *context, size_t index, pid_t group)
{
	struct recorder *recorder = context;
	recorder->groups[index] = group;
	note_running(recorder);
}

static void step_starting(void *context, size_t index)
{
	struct recorder *recorder = context;
	state_step_starting(recorder->state, index);
}

static void step_finished(void *context, size_t index)
{
	struct recorder *recorder = context;
	struct state *state = recorder->state;
	const struct plan *plan = state->plan;
	const struct step *step = &plan->steps[index];
	if (recorder->groups[index]) {
		recorder->groups[index] = 0;
		note_running(recorder);
	}
	uint64_t inputs;
	if (step->state != STEP_SUCCEEDED || recorder->failed || !state_step_finished(state, index, &inputs))
		return;
	char **names = arena_array(state->arena, step->output_count + 1, sizeof(char *));
	for (size_t o = 0; o < step->output_count; o++)
		names[o] = (char *)plan_output_name(plan, step->outputs[o]);
	if (buildlog_append(state->log, names, step->output_count, state->library,
	                    state_command_hash(plan, index, state->toolchain), inputs, &recorder->diag) != 0)
		recorder->failed = 1;
}

static int ends_with(const char *text, const char *suffix)
{
	size_t length = strlen(text), suffix_length = strlen(suffix);
	return length > suffix_length && strcmp(text + length - suffix_length, suffix) == 0;
}

/* Whether name (in the build directory) is a step's output this time. */
static int build_makes(const struct plan *plan, const char *name)
{
	for (size_t i = 0; i < plan->step_count; i++)
		for (size_t o = 0; o < plan->steps[i].output_count; o++)
			if (strcmp(plan_output_name(plan, plan->steps[i].outputs[o]), name) == 0)
				return 1;
	return 0;
}

/* Deletes what an earlier build of this library recorded and this one does
 * not make (the other layout's libraries, the objects of a dropped source),
 * as ninja -t cleandead does, so that nothing stale passes for this build's
 * output.  Other libraries' outputs in the directory stay. */
static int remove_dead_outputs(struct call *call, const struct plan *plan, struct state *state,
                               const char *build_dir)
{
	struct buildlog *log = state->log;
	for (size_t i = log->length; i-- > 0;) {
		const char *output = log->entries[i].output;
		const char *library = log->entries[i].library;
		/* An entry of a version 1 log names no library: it was this one's.
		 * Only objects and libraries are steps' outputs: a damaged log
		 * never makes a source, the log or the lock go. */
		if ((*library && strcmp(library, state->library) != 0) || build_makes(plan, output) ||
		    !(ends_with(output, ".o") || ends_with(output, ".so")))
			continue;
		char *path = arena_printf(&call->arena, "%s/%s", build_dir, output);
		if (unlink(path) != 0 && errno != ENOENT)
			return diag_fail(&call->diag, BCO_ERROR_SYSTEM,
			                 "cannot remove %s, left over from an earlier build: %s", path,
			                 strerror(errno));
		buildlog_forget(log, output);
		state->log_changed = 1;
	}
	return 0;
}

/* Warns, once, of inputs dated in the future. */
static void report_future(struct call *call, struct state *state, int *warned)
{
	if (*warned || state->future.length == 0)
		return;
	*warned = 1;
	char date[64];
	struct tm utc;
	time_t seconds = state->first_future_time.tv_sec;
	if (!gmtime_r(&seconds, &utc) || strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &utc) == 0)
		snprintf(date, sizeof date, "%lld s after the epoch", (long long)seconds);
	const char *first = state->future.items[0];
	char *text = state->future.length == 1
		? arena_printf(&call->arena, "%s is dated %s, in the future; check the clock "
		               "(it is rebuilt when its date changes, not at every build)", first, date)
		: arena_printf(&call->arena, "%zu inputs are dated in the future, such as %s (%s); check "
		               "the clock (each is rebuilt when its date changes, not at every build)",
		               state->future.length, first, date);
	report(call->request, BCO_MESSAGE_WARNING, text);
}

static int jobs_of(const struct bco_request *request)
{
	if (request->jobs > 0)
		return request->jobs;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	return online > 0 ? (int)(online < 256 ? online : 256) : 1;
}

/* What a build has checked and laid out before it writes anything. */
struct layout {
	const char *name;      /* the library's */
	const char *build_dir;
	struct plan plan;
	const char *wrapper;   /* wrapper.cpp's text */
	const char *log_path;
	struct buildlog *log;  /* in the arena: call_end closes its append descriptor even
	                        * after an out-of-memory jump left the frame that opened it */
	int ran_nothing;       /* set by build(): every step was up to date */
};

/* Checks every input, resolves the tools and lays out the steps; writes
 * nothing.  A usage error comes before any file is looked at. */
static int lay_out(struct call *call, struct layout *layout)
{
	const struct bco_request *request = call->request;
	struct arena *arena = &call->arena;
	struct diag *diag = &call->diag;
	unsigned sanitizers;
	if (sanitize_parse(request->sanitize, request->target, &sanitizers, diag) != 0)
		return -1;
	layout->name = inputs_library_name(arena, request->name, diag);
	const char *const *sources = NULL;
	if (!layout->name || validate_request_ops(call) != 0 ||
	    inputs_sources(arena, request, &sources, diag) != 0)
		return -1;
	if (request->jobs < 0) {
		diag_fail(diag, BCO_ERROR_USAGE, "jobs must be at least 1 (0 means one per CPU)");
		return -1;
	}
	if (target_resolve(arena, request, !request->dry_run, &call->toolchain, diag) != 0)
		return -1;
	layout->build_dir = inputs_build_dir(arena, request->build_dir, diag);
	if (!layout->build_dir || inputs_check_users_files(arena, layout->build_dir, diag) != 0)
		return -1;
	int pack = request->target == BCO_TARGET_XTENSA && !cflags_contain(request, "-g");
	if (plan_build(arena, &call->toolchain, layout->build_dir, layout->name, sources,
	               request->source_count, request->multicore, pack, &layout->plan, diag) != 0)
		return -1;
	layout->wrapper = codegen_wrapper(arena, call->ops, call->op_count,
	                                  target_stack_switch_tail(request->target));
	layout->log_path = arena_printf(arena, "%s/.build-custom-op.log", layout->build_dir);
	layout->log = arena_alloc(arena, sizeof *layout->log);
	return 0;
}

/* Reads the build log and marks the steps that are up to date; returns how
 * many are to run.  lock_fd: the lock's descriptor, -1 in a dry run. */
static size_t mark_steps(struct call *call, struct layout *layout, int lock_fd,
                         struct state *state, int *warned)
{
	buildlog_load(&call->arena, layout->log_path, layout->build_dir, layout->log);
	state_init(state, &call->arena, &layout->plan, layout->log, &call->toolchain, layout->name,
	           lock_fd);
	size_t to_run = state_mark_up_to_date(state);
	report_future(call, state, warned);
	return to_run;
}

/* A dry run: reports the commands of the steps that would run, as ninja -n
 * does, and writes nothing, not even the build directory. */
static void report_dry_run(struct call *call, struct layout *layout)
{
	struct plan *plan = &layout->plan;
	struct state state;
	int warned = 0;
	if (!fs_holds(&call->arena, plan->wrapper_source, layout->wrapper, strlen(layout->wrapper)))
		plan->files[plan->compile_count - 1].changed = 1;
	mark_steps(call, layout, -1, &state, &warned);
	for (size_t i = 0; i < plan->step_count; i++) {
		if (plan->steps[i].state != STEP_PENDING)
			continue;
		struct buffer command;
		buffer_init(&command, &call->arena);
		buffer_put_shell_command(&command, plan->steps[i].argv);
		report(call->request, BCO_MESSAGE_COMMAND, command.data);
	}
}

/* Makes the build directory, catches the interrupts, takes the lock and
 * writes compile_commands.json and wrapper.cpp: from here on the build
 * writes, and an interrupt stops it cleanly. */
static int open_build_dir(struct call *call, struct layout *layout)
{
	struct arena *arena = &call->arena;
	struct diag *diag = &call->diag;
	if (fs_make_directories(arena, layout->build_dir, diag) != 0)
		return -1;
	if (interrupt_catch(&call->interrupts, -1) != 0)
		return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot catch SIGINT, SIGTERM and SIGHUP: %s",
		                 strerror(errno));
	call->catching_interrupts = 1;
	if (take_lock(call, layout->build_dir) != 0)
		return -1;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot read the working directory: %s", strerror(errno));
	const char *compdb = arena_printf(arena, "%s/compile_commands.json", layout->build_dir);
	if (compdb_write(arena, &layout->plan, cwd, compdb, diag) != 0 ||
	    inputs_claim_compile_commands(arena, layout->build_dir, diag) != 0)
		return -1;
	return fs_write_atomic(arena, layout->plan.wrapper_source, layout->wrapper,
	                       strlen(layout->wrapper), diag);
}

/* Runs the pending steps in parallel, recording each in the log as it ends. */
static int run_steps(struct call *call, struct layout *layout, struct state *state, int *warned)
{
	const struct bco_request *request = call->request;
	struct arena *arena = &call->arena;
	struct plan *plan = &layout->plan;
	struct recorder recorder = { .state = state, .lock_fd = call->lock_fd };
	recorder.groups = arena_array(arena, plan->step_count, sizeof(pid_t));
	diag_init(&recorder.diag, arena);
	call->log = layout->log;
	if (buildlog_open_append(layout->log, layout->log_path, &call->diag) != 0)
		return -1;
	struct exec_options options = {
		.jobs = jobs_of(request),
		.keep_going = request->keep_going,
		.verbose = request->verbose,
		.environment = call->toolchain.environment,
		.progress = request->progress ? report_step : NULL,
		.progress_context = call,
		.explain_failure = explain_failure,
		.explain_context = call,
		.step_starting = step_starting,
		.step_spawned = step_spawned,
		.step_finished = step_finished,
		.hook_context = &recorder,
	};
	int status = exec_run(arena, plan->steps, plan->step_count, &options, &call->diag);
	buildlog_close_append(layout->log);
	report_future(call, state, warned);
	if (status != 0)
		return -1;
	if (recorder.failed) {
		call->diag = recorder.diag;
		return -1;
	}
	return 0;
}

/* The build itself: the steps that are not up to date run, then a host
 * build's .ops record is written. */
static int build(struct call *call, struct layout *layout)
{
	struct plan *plan = &layout->plan;
	if (open_build_dir(call, layout) != 0)
		return -1;
	struct state state;
	int warned = 0;
	size_t to_run = mark_steps(call, layout, call->lock_fd, &state, &warned);
	if (remove_dead_outputs(call, plan, &state, layout->build_dir) != 0)
		return -1;
	if (to_run > 0 || state.log_changed) {
		/* Forget what is about to be rebuilt first: a build killed
		 * mid-step must not leave a partial output that the log vouches for. */
		for (size_t i = 0; i < plan->step_count; i++)
			if (plan->steps[i].state == STEP_PENDING)
				for (size_t o = 0; o < plan->steps[i].output_count; o++)
					buildlog_forget(layout->log, plan_output_name(plan, plan->steps[i].outputs[o]));
		if (buildlog_save(layout->log, layout->log_path, &call->diag) != 0)
			return -1;
	}
	if (to_run > 0 && run_steps(call, layout, &state, &warned) != 0)
		return -1;
	layout->ran_nothing = to_run == 0 && !state.log_changed && !warned;
	/* Only now: every library it names is linked. */
	if (call->request->target != BCO_TARGET_HOST)
		return 0;
	struct opsrecord_log record_log = {
		.log = layout->log, .path = layout->log_path, .library = layout->name,
		.now = state_file_system_now(&state),
	};
	return opsrecord_write(&call->arena, call->ops, call->op_count, plan->artifacts,
	                       plan->artifact_count,
	                       arena_printf(&call->arena, "%s/%s.ops", layout->build_dir, layout->name),
	                       &record_log, &call->diag);
}

/* What bco_result_settled_path gives: for a host build without sanitizers
 * that ran nothing, what the resolution and the up-to-date check looked at
 * (each once), the build directory, its log and the .ops record; else
 * nothing (an empty list). */
static void settled_of(struct call *call, const struct layout *layout, struct strvec *settled)
{
	const struct toolchain *toolchain = &call->toolchain;
	strvec_init(settled, &call->arena);
	if (call->request->dry_run || !layout->ran_nothing || toolchain->target != BCO_TARGET_HOST ||
	    toolchain->sanitizers)
		return;
	strvec_extend(settled, toolchain->watched->items, toolchain->watched->length);
	strvec_push(settled, (char *)layout->build_dir);
	strvec_push(settled, (char *)layout->log_path);
	strvec_push(settled, arena_printf(&call->arena, "%s/%s.ops", layout->build_dir, layout->name));
	strvec_sort(settled);
	size_t kept = 0;
	for (size_t i = 0; i < settled->length; i++)
		if (kept == 0 || strcmp(settled->items[kept - 1], settled->items[i]) != 0)
			settled->items[kept++] = settled->items[i];
	settled->length = kept;
}

/* A copy of count strings on the heap in *copies; returns 0, or -1 when
 * memory ran out (the strings copied so far freed). */
static int copy_strings(char *const *strings, size_t count, char ***copies)
{
	*copies = calloc(count ? count : 1, sizeof(char *));
	if (!*copies)
		return -1;
	for (size_t i = 0; i < count; i++) {
		(*copies)[i] = strdup(strings[i]);
		if (!(*copies)[i]) {
			for (size_t j = 0; j < i; j++)
				free((*copies)[j]);
			free(*copies);
			*copies = NULL;
			return -1;
		}
	}
	return 0;
}

/* The artifacts' paths and the settled list, as the caller frees them
 * (bco_result_free). */
static bco_result *result_of(struct arena *arena, const struct plan *plan,
                             const struct strvec *settled)
{
	bco_result *out = calloc(1, sizeof *out);
	if (!out)
		arena_fail(arena);
	if (copy_strings(plan->artifacts, plan->artifact_count, &out->paths) != 0) {
		free(out);
		arena_fail(arena);
	}
	out->count = plan->artifact_count;
	if (copy_strings(settled->items, settled->length, &out->settled) != 0) {
		bco_result_free(out);
		arena_fail(arena);
	}
	out->settled_count = settled->length;
	return out;
}

static int run_build(struct call *call, bco_result **result)
{
	struct layout layout;
	if (lay_out(call, &layout) != 0)
		return -1;
	layout.ran_nothing = 0;
	if (call->request->dry_run)
		report_dry_run(call, &layout);
	else if (build(call, &layout) != 0)
		return -1;
	struct strvec settled;
	settled_of(call, &layout, &settled);
	*result = result_of(&call->arena, &layout.plan, &settled);
	return 0;
}

int bco_build(const struct bco_request *request, bco_result **result, bco_error **error)
{
	if (result)
		*result = NULL;
	if (error)
		*error = NULL;
	struct call *call = call_begin(request);
	if (!call)
		return out_of_memory(error);
	if (setjmp(call->out_of_memory))
		return call_end_out_of_memory(call, error);
	if (!request || !result) {
		diag_fail(&call->diag, BCO_ERROR_USAGE, "bco_build needs a request and a place for the result");
		return call_end(call, -1, error);
	}
	int kind = call_end(call, run_build(call, result), error);
	if (kind != BCO_OK) {
		/* An interrupt seen after the last step fails the call: an error
		 * never comes with a result. */
		bco_result_free(*result);
		*result = NULL;
	}
	return kind;
}

int bco_generate_wrapper(const struct bco_request *request, char **text, bco_error **error)
{
	if (text)
		*text = NULL;
	if (error)
		*error = NULL;
	struct call *call = call_begin(request);
	if (!call)
		return out_of_memory(error);
	if (setjmp(call->out_of_memory))
		return call_end_out_of_memory(call, error);
	if (!request || !text) {
		diag_fail(&call->diag, BCO_ERROR_USAGE,
		          "bco_generate_wrapper needs a request and a place for the text");
		return call_end(call, -1, error);
	}
	if (request->target != BCO_TARGET_XTENSA && request->target != BCO_TARGET_HOST) {
		diag_fail(&call->diag, BCO_ERROR_USAGE, "unknown target %d", (int)request->target);
		return call_end(call, -1, error);
	}
	if (validate_request_ops(call) != 0)
		return call_end(call, -1, error);
	/* Written straight into the caller's memory: no copy of megabytes. */
	const char *tail = target_stack_switch_tail(request->target);
	size_t length = codegen_wrapper_length(call->ops, call->op_count, tail);
	*text = length < SIZE_MAX ? malloc(length + 1) : NULL;
	if (!*text)
		arena_fail(&call->arena);
	codegen_wrapper_write(*text, call->ops, call->op_count, tail);
	return call_end(call, 0, error);
}

size_t bco_result_count(const bco_result *result)
{
	return result ? result->count : 0;
}

const char *bco_result_path(const bco_result *result, size_t index)
{
	return result && index < result->count ? result->paths[index] : NULL;
}

size_t bco_result_settled_count(const bco_result *result)
{
	return result ? result->settled_count : 0;
}

const char *bco_result_settled_path(const bco_result *result, size_t index)
{
	return result && index < result->settled_count ? result->settled[index] : NULL;
}

void bco_result_free(bco_result *result)
{
	if (!result)
		return;
	for (size_t i = 0; result->paths && i < result->count; i++)
		free(result->paths[i]);
	free(result->paths);
	for (size_t i = 0; result->settled && i < result->settled_count; i++)
		free(result->settled[i]);
	free(result->settled);
	free(result);
}

void bco_free(void *pointer)
{
	free(pointer);
}

const char *bco_version(void)
{
	return BCO_VERSION;
}
