/* interrupt.h - catching SIGINT, SIGTERM and SIGHUP while a build runs.
 *
 * A build catches the three from the moment it takes its build directory's
 * lock until it returns, so an interrupt is always answered by stopping the
 * tools, deleting partial outputs and returning BCO_ERROR_INTERRUPTED, never
 * by dying half-way or by being lost.  A signal whose disposition is SIG_IGN
 * (a background job of a shell, nohup) stays ignored.  While any guard is
 * held, SIGCHLD is neither ignored nor SA_NOCLDWAIT, so the tools' exit
 * statuses can be waited for.
 *
 * Each guard has its own record of what was caught, so builds in several
 * threads at once each see every interrupt, and one's end does not disturb
 * the others; the dispositions are replaced by the first guard of the
 * process and restored by the last.  Guards of one thread nest: an inner
 * guard starts with what its enclosing one caught. */
#ifndef INTERRUPT_H
#define INTERRUPT_H

#include <signal.h>

struct diag;

struct interrupt_guard {
	int slot;                           /* this guard's record in the handler's table */
	struct interrupt_guard *enclosing;  /* the thread's guard before this one, or NULL */
};

/* Starts catching SIGINT, SIGTERM and SIGHUP; each arrival writes a byte to
 * wake_fd (-1: none) so a poll loop wakes up.  Returns 0, or -1 with errno
 * set (EAGAIN: too many guards at once). */
int interrupt_catch(struct interrupt_guard *guard, int wake_fd);
/* The first signal caught by the calling thread's innermost guard, or 0. */
int interrupt_caught(void);
/* Ends this guard (the thread's innermost) and returns the signal it caught
 * (0: none); the last guard of the process restores the previous
 * dispositions.  The three signals are blocked in this thread meanwhile. */
int interrupt_release(struct interrupt_guard *guard);

/* Records in diag that signal_number interrupted the build; returns -1. */
int interrupt_fail(struct diag *diag, int signal_number);

#endif
