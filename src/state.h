/* state.h - which steps of a plan are up to date, and what a finished one
 * may record.
 *
 * A step's inputs are the files its plan names (see struct step_files; a
 * directory stands for the files in it) and, for a compile, every header its
 * depfile names.  Their fingerprint hashes each one's path, modification
 * time and size, so a time that moved either way is a change, and one dated
 * in the future is not rebuilt again and again.  A step is up to date when
 * its outputs exist, the build log records for each the step's command hash
 * and the fingerprint its inputs have now, and no step it depends on will
 * run.  An output that a version 1 log recorded has no fingerprint: there it
 * is up to date when no input is newer than it, as that version decided,
 * and the fingerprint is recorded from then on.
 *
 * A finished step records the fingerprint its inputs have afterwards, but
 * only when they are what they were when it started: an input changed while
 * the step ran (an edit during the build) leaves the step unrecorded, to run
 * again next time.  For a header the depfile names for the first time, that
 * is known by its time: one dated after the step started changed meanwhile.
 * For that, a step is spawned only once the file system's clock has moved
 * past its start (at once where timestamps are fine-grained, within a tick
 * of the clock elsewhere); where it has not moved within a few milliseconds
 * (a clock of seconds), a header dated at the start also counts as changed. */
#ifndef STATE_H
#define STATE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "buffer.h"

struct arena;
struct buildlog;
struct plan;
struct toolchain;

struct state {
	struct arena *arena;
	struct plan *plan;
	struct buildlog *log;
	const struct toolchain *toolchain;
	const char *library;   /* recorded with each output */
	int clock_fd;          /* a file of the build directory to read the file system's time
	                          by touching it (the lock), or -1: the system clock */
	/* Set by the functions below. */
	int log_changed;       /* the log in memory differs from the file */
	struct strvec future;  /* the inputs seen dated after the file system's time */
	struct timespec first_future_time;
};

/* Sets up a state (log_changed 0, no future input). */
void state_init(struct state *state, struct arena *arena, struct plan *plan, struct buildlog *log,
                const struct toolchain *toolchain, const char *library, int clock_fd);
/* The file system's time now: the lock's mtime after touching it, which is
 * what a file written now would get (even on a file server with another
 * clock); the system clock when there is no lock (a dry run). */
struct timespec state_file_system_now(const struct state *state);
/* The command hash of step index of plan, as the build log records it. */
uint64_t state_command_hash(const struct plan *plan, size_t index, const struct toolchain *toolchain);
/* Marks every up-to-date step of the plan STEP_UP_TO_DATE, and the others
 * STEP_PENDING; returns how many will run.  Fingerprints found for entries
 * of a version 1 log are recorded (log_changed). */
size_t state_mark_up_to_date(struct state *state);
/* Notes what step index's inputs are as it starts, and waits for the file
 * system's clock to move on (see above). */
void state_step_starting(struct state *state, size_t index);
/* After step index succeeded: returns 1 and the fingerprint to record in
 * *inputs_hash, or 0 when the step must not be recorded. */
int state_step_finished(struct state *state, size_t index, uint64_t *inputs_hash);

#endif
