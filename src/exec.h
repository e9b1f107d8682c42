/* exec.h - run the steps of a build in parallel.
 *
 * Steps form a graph (each names the steps it waits for).  Ready steps are
 * spawned with posix_spawn and no shell, each in its own process group, with
 * stdout and stderr on one pipe whose content is reported whole when the
 * step ends.  SIGINT, SIGTERM and SIGHUP are caught for the duration of
 * exec_run (see interrupt.h: an ignored one stays ignored, and a caller's
 * guard may already hold them), and every previous disposition is restored
 * before it returns.  SIGCHLD may be blocked by the caller: no wakeup from
 * it is needed. */
#ifndef EXEC_H
#define EXEC_H

#include <stddef.h>
#include <sys/types.h>

#include "buildcustomop.h"

struct arena;
struct buffer;
struct diag;

enum step_state {
	STEP_PENDING,  /* not started yet */
	STEP_UP_TO_DATE, /* set by the caller: counts as succeeded, is not run */
	STEP_SUCCEEDED,
	STEP_FAILED,
	STEP_NOT_RUN   /* never started: a failure or an interrupt came first */
};

struct step {
	/* Set by the caller. */
	const char *action;      /* "CC", "LINK", "PACK" */
	const char *target;      /* what the status line shows after the action */
	char **argv;             /* NULL-terminated; argv[0] is a path or a name looked up on PATH */
	char **outputs;          /* files deleted when the step fails or is interrupted */
	size_t output_count;
	size_t *dependencies;    /* indices of the steps that must succeed first */
	size_t dependency_count;
	enum step_state state;   /* STEP_PENDING or STEP_UP_TO_DATE on entry */
	/* Set by exec_run. */
	int exit_status;         /* as from waitpid's WEXITSTATUS, or 128+signal */
	char *output;            /* the captured stdout+stderr, NUL-terminated (may be "") */
};

struct exec_options {
	int jobs;                /* at most this many steps at once (>= 1) */
	int keep_going;          /* after a failure, go on with steps that do not depend on it */
	int verbose;             /* report each command (BCO_MESSAGE_COMMAND) before it runs */
	int status_is_terminal;  /* unused by exec; the sink decides how to show status */
	char **environment;      /* envp for every step, NULL-terminated */
	bco_progress_fn progress;
	void *progress_context;
	/* Called when a step failed, to add lines to its FAILURE report
	 * (for example what the schema requires of an undefined kernel). */
	void (*explain_failure)(void *context, const struct step *step, struct buffer *report);
	void *explain_context;
	/* Called just before step index is spawned, once it runs in process
	 * group `group`, and once it is over (its state SUCCEEDED or FAILED);
	 * any may be NULL. */
	void (*step_starting)(void *context, size_t index);
	void (*step_spawned)(void *context, size_t index, pid_t group);
	void (*step_finished)(void *context, size_t index);
	void *hook_context;
};

/* Runs every pending step whose dependencies succeeded.
 *
 * Status: before a step starts, reports BCO_MESSAGE_STATUS "[k/N] ACTION TARGET"
 * where N counts the steps that are to run (not those up to date) and k the
 * ones started so far.  After a step ends with output, reports it
 * (BCO_MESSAGE_OUTPUT).  A failed step reports BCO_MESSAGE_FAILURE with
 * "FAILED: <outputs>\n<shell-quoted command>\n<output>" plus the explanation,
 * and its outputs are deleted; no new step starts unless keep_going, but
 * running ones finish.
 *
 * Returns 0 when every step succeeded or was up to date.  Otherwise -1 with
 * diag set: BCO_ERROR_STEP (message: the first failure's report), or
 * BCO_ERROR_INTERRUPTED (diag->signal set, running steps killed by process
 * group and their outputs deleted), or BCO_ERROR_SYSTEM (cannot spawn, etc.:
 * a tool that cannot be spawned counts as a failed step, exit status 127). */
int exec_run(struct arena *arena, struct step *steps, size_t step_count,
             const struct exec_options *options, struct diag *diag);

#endif
