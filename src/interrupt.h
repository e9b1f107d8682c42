/* interrupt.h - catching SIGINT and SIGTERM while a build runs.
 *
 * A build catches both signals from the moment it takes its build
 * directory's lock until it returns, so an interrupt is always answered by
 * stopping the tools, deleting partial outputs and returning
 * BCO_ERROR_INTERRUPTED, never by dying half-way or by being lost.  A signal
 * whose disposition is SIG_IGN (a background job of a shell) stays ignored.
 * Guards nest; the outermost restores the dispositions it replaced.  One
 * build at a time per process. */
#ifndef INTERRUPT_H
#define INTERRUPT_H

#include <signal.h>

struct diag;

struct interrupt_guard {
	struct sigaction saved[2];
	int replaced[2];
	int previous_wake_fd;
	int outermost;
};

/* Starts catching SIGINT and SIGTERM; each arrival writes a byte to wake_fd
 * (-1: none) so a poll loop wakes up.  Returns 0, or -1 with errno set. */
int interrupt_catch(struct interrupt_guard *guard, int wake_fd);
/* The first signal caught since the outermost interrupt_catch, or 0. */
int interrupt_caught(void);
/* Ends this guard and returns the signal caught so far (0: none); the
 * outermost one restores the previous dispositions.  Signals are blocked
 * meanwhile: one that arrives during the release reaches the restored
 * disposition, never neither. */
int interrupt_release(struct interrupt_guard *guard);

/* Records in diag that signal_number interrupted the build; returns -1. */
int interrupt_fail(struct diag *diag, int signal_number);

#endif
