/* build.c - one build request, start to end: the only room that knows every other. */
#define _DEFAULT_SOURCE /* flock: one build of a directory at a time */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
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
#include "interrupt.h"
#include "opsrecord.h"
#include "plan.h"
#include "state.h"
#include "target.h"
#include "validate.h"

struct bco_result {
	size_t count;
	char **paths;
};

/* Everything one call holds; on the heap, so it survives an out-of-memory
 * longjmp with its values intact. */
struct call {
	struct arena arena;
	jmp_buf out_of_memory;
	struct diag diag;
	const struct bco_request *request;
	int lock_fd;
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

/* Checks that a list the caller gave has no NULL entries. */
static int check_list(struct diag *diag, const char *what, const char *const *items, size_t count)
{
	if (count && !items)
		return diag_fail(diag, BCO_ERROR_USAGE, "%s: %zu given but the list is NULL", what, count);
	for (size_t i = 0; i < count; i++)
		if (!items[i])
			return diag_fail(diag, BCO_ERROR_USAGE, "%s: entry %zu is NULL", what, i + 1);
	return 0;
}

static int check_request_lists(struct call *call)
{
	const struct bco_request *r = call->request;
	struct diag *diag = &call->diag;
	if (r->function_count && !r->functions)
		return diag_fail(diag, BCO_ERROR_USAGE, "function names: %zu given but the list is NULL",
		                 r->function_count);
	return check_list(diag, "schemas", r->schemas, r->schema_count) ||
	       check_list(diag, "sources", r->sources, r->source_count) ||
	       check_list(diag, "includes", r->includes, r->include_count) ||
	       check_list(diag, "cflags", r->cflags, r->cflag_count) ||
	       check_list(diag, "launcher", r->launcher, r->launcher_count) ? -1 : 0;
}

static int validate_request_ops(struct call *call)
{
	const struct bco_request *r = call->request;
	if (check_request_lists(call) != 0)
		return -1;
	return validate_ops(&call->arena, r->functions, r->function_count, r->schemas, r->schema_count,
	                    r->progress, r->progress_context, &call->ops, &call->op_count, &call->diag);
}

/* The library name without its extension, as the original's splitext. */
static const char *library_name(struct call *call)
{
	const char *name = call->request->name;
	if (!name || !*name) {
		diag_fail(&call->diag, BCO_ERROR_USAGE, "no library name: give one, such as 'relu'");
		return NULL;
	}
	for (const char *p = name; *p; p++) {
		if (*p == '/' || (unsigned char)*p < 0x20) {
			diag_fail(&call->diag, BCO_ERROR_INPUT,
			          "library name '%s' must be a file name, without '/' or control characters",
			          name);
			return NULL;
		}
	}
	const char *dot = strrchr(name, '.');
	const char *first = name;
	while (*first == '.')
		first++;
	size_t length = dot && dot > first ? (size_t)(dot - name) : strlen(name);
	char *base = arena_strndup(&call->arena, name, length);
	if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		diag_fail(&call->diag, BCO_ERROR_INPUT, "library name '%s' is not a file name", name);
		return NULL;
	}
	return base;
}

static int check_sources(struct call *call)
{
	const struct bco_request *r = call->request;
	if (r->source_count == 0)
		return diag_fail(&call->diag, BCO_ERROR_USAGE,
		                 "no kernel sources: give the C++ files that define the ops");
	for (size_t i = 0; i < r->source_count; i++) {
		if (access(r->sources[i], R_OK) != 0)
			return diag_fail(&call->diag, BCO_ERROR_INPUT, "cannot read source %s: %s",
			                 r->sources[i], strerror(errno));
	}
	return 0;
}

static int cflags_contain(const struct bco_request *request, const char *flag)
{
	for (size_t i = 0; i < request->cflag_count; i++)
		if (strcmp(request->cflags[i], flag) == 0)
			return 1;
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
			return 0;
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

/* Records the new command hashes of the steps that ran. */
static void update_log(struct buildlog *log, const struct plan *plan, const struct toolchain *toolchain)
{
	for (size_t i = 0; i < plan->step_count; i++) {
		const struct step *step = &plan->steps[i];
		for (size_t o = 0; o < step->output_count; o++) {
			if (step->state == STEP_SUCCEEDED)
				buildlog_record(log, step->outputs[o], state_command_hash(plan, i, toolchain));
			else if (step->state == STEP_FAILED)
				buildlog_forget(log, step->outputs[o]);
		}
	}
}

static int jobs_of(const struct bco_request *request)
{
	if (request->jobs > 0)
		return request->jobs;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	return online > 0 ? (int)(online < 256 ? online : 256) : 1;
}

static int run_build(struct call *call, bco_result **result)
{
	const struct bco_request *request = call->request;
	struct arena *arena = &call->arena;
	struct diag *diag = &call->diag;
	const char *name = library_name(call);
	if (!name || validate_request_ops(call) != 0 || check_sources(call) != 0)
		return -1;
	if (request->jobs < 0)
		return diag_fail(diag, BCO_ERROR_USAGE, "jobs must be at least 1 (0 means one per CPU)");

	struct toolchain toolchain;
	if (target_resolve(arena, request, !request->dry_run, &toolchain, diag) != 0)
		return -1;
	call->toolchain = toolchain;
	const char *build_dir = request->build_dir && *request->build_dir ? request->build_dir : "build";
	int pack = request->target == BCO_TARGET_XTENSA && !cflags_contain(request, "-g");
	struct plan plan;
	if (plan_build(arena, &toolchain, build_dir, name, request->sources, request->source_count,
	               request->multicore, pack, &plan, diag) != 0)
		return -1;

	/* Every input is checked: from here on the build writes, and an
	 * interrupt stops it cleanly. */
	if (fs_make_directories(arena, build_dir, diag) != 0)
		return -1;
	if (interrupt_catch(&call->interrupts, -1) != 0)
		return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot catch SIGINT and SIGTERM: %s", strerror(errno));
	call->catching_interrupts = 1;
	if (take_lock(call, build_dir) != 0)
		return -1;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot read the working directory: %s", strerror(errno));
	if (compdb_write(arena, &plan, cwd, arena_printf(arena, "%s/compile_commands.json", build_dir), diag) != 0)
		return -1;

	if (request->dry_run) {
		for (size_t i = 0; i < plan.step_count; i++) {
			struct buffer command;
			buffer_init(&command, arena);
			buffer_put_shell_command(&command, plan.steps[i].argv);
			report(request, BCO_MESSAGE_COMMAND, command.data);
		}
	} else {
		const char *wrapper = codegen_wrapper(arena, call->ops, call->op_count,
		                                      target_stack_switch_tail(request->target));
		if (fs_write_atomic(arena, plan.wrapper_source, wrapper, strlen(wrapper), diag) != 0)
			return -1;
		char *log_path = arena_printf(arena, "%s/.build-custom-op.log", build_dir);
		struct buildlog log;
		buildlog_load(arena, log_path, &log);
		size_t to_run = state_mark_up_to_date(arena, &plan, &log, &toolchain);
		if (to_run > 0) {
			/* Forget what is about to be rebuilt first: a build killed
			 * mid-step must not leave a partial output that the log vouches for. */
			for (size_t i = 0; i < plan.step_count; i++)
				if (plan.steps[i].state == STEP_PENDING)
					for (size_t o = 0; o < plan.steps[i].output_count; o++)
						buildlog_forget(&log, plan.steps[i].outputs[o]);
			if (buildlog_save(&log, log_path, diag) != 0)
				return -1;
			struct exec_options options = {
				.jobs = jobs_of(request),
				.keep_going = request->keep_going,
				.verbose = request->verbose,
				.environment = toolchain.environment,
				.progress = request->progress ? report_step : NULL,
				.progress_context = call,
				.explain_failure = explain_failure,
				.explain_context = call,
			};
			int status = exec_run(arena, plan.steps, plan.step_count, &options, diag);
			update_log(&log, &plan, &toolchain);
			struct diag save_diag;
			diag_init(&save_diag, arena);
			int saved = buildlog_save(&log, log_path, &save_diag);
			if (status != 0)
				return -1;
			if (saved != 0) {
				*diag = save_diag;
				return -1;
			}
		}
		/* Only now: every library it names is linked. */
		if (request->target == BCO_TARGET_HOST &&
		    opsrecord_write(arena, call->ops, call->op_count, plan.artifacts, plan.artifact_count,
		                    arena_printf(arena, "%s/%s.ops", build_dir, name), diag) != 0)
			return -1;
	}

	bco_result *out = calloc(1, sizeof *out);
	if (!out)
		arena_fail(arena);
	out->paths = calloc(plan.artifact_count, sizeof(char *));
	if (!out->paths) {
		free(out);
		arena_fail(arena);
	}
	out->count = plan.artifact_count;
	for (size_t i = 0; i < plan.artifact_count; i++) {
		out->paths[i] = strdup(plan.artifacts[i]);
		if (!out->paths[i]) {
			bco_result_free(out);
			arena_fail(arena);
		}
	}
	*result = out;
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
	if (setjmp(call->out_of_memory)) {
		diag_init(&call->diag, NULL);
		call->diag.kind = BCO_ERROR_SYSTEM;
		call->diag.message = "out of memory";
		return call_end(call, -1, error);
	}
	if (!request || !result) {
		diag_fail(&call->diag, BCO_ERROR_USAGE, "bco_build needs a request and a place for the result");
		return call_end(call, -1, error);
	}
	return call_end(call, run_build(call, result), error);
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
	if (setjmp(call->out_of_memory)) {
		diag_init(&call->diag, NULL);
		call->diag.kind = BCO_ERROR_SYSTEM;
		call->diag.message = "out of memory";
		return call_end(call, -1, error);
	}
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
	const char *wrapper = codegen_wrapper(&call->arena, call->ops, call->op_count,
	                                      target_stack_switch_tail(request->target));
	*text = strdup(wrapper);
	if (!*text)
		arena_fail(&call->arena);
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

void bco_result_free(bco_result *result)
{
	if (!result)
		return;
	for (size_t i = 0; i < result->count; i++)
		free(result->paths[i]);
	free(result->paths);
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
