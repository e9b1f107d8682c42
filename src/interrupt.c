/* interrupt.c - catching SIGINT and SIGTERM while a build runs. */
#include "interrupt.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"

/* Shared with the signal handler, so they cannot live in a call's arena;
 * every guard puts them back as it found them. */
static volatile sig_atomic_t caught_signal;
static volatile sig_atomic_t wake_fd = -1;
static int depth;

static const int caught_signals[2] = { SIGINT, SIGTERM };

static void on_interrupt(int signal_number)
{
	int saved_errno = errno;
	if (caught_signal == 0)
		caught_signal = signal_number;
	if (wake_fd >= 0) {
		char byte = 0;
		/* A full pipe already holds a pending wakeup, so a failed write loses nothing. */
		ssize_t ignored = write(wake_fd, &byte, 1);
		(void)ignored;
	}
	errno = saved_errno;
}

int interrupt_catch(struct interrupt_guard *guard, int fd)
{
	memset(guard, 0, sizeof *guard);
	guard->previous_wake_fd = wake_fd;
	guard->outermost = depth == 0;
	if (guard->outermost) {
		struct sigaction action;
		memset(&action, 0, sizeof action);
		action.sa_handler = on_interrupt;
		sigemptyset(&action.sa_mask);
		action.sa_flags = SA_RESTART; /* the wake fd, not EINTR, tells a loop */
		caught_signal = 0;
		for (int i = 0; i < 2; i++) {
			struct sigaction current;
			if (sigaction(caught_signals[i], NULL, &current) != 0)
				goto failed;
			if (current.sa_handler == SIG_IGN)
				continue;
			if (sigaction(caught_signals[i], &action, &guard->saved[i]) != 0)
				goto failed;
			guard->replaced[i] = 1;
		}
	}
	wake_fd = fd;
	depth++;
	return 0;
failed:;
	int saved = errno;
	for (int i = 0; i < 2; i++)
		if (guard->replaced[i])
			sigaction(caught_signals[i], &guard->saved[i], NULL);
	errno = saved;
	return -1;
}

int interrupt_caught(void)
{
	return caught_signal;
}

int interrupt_release(struct interrupt_guard *guard)
{
	sigset_t blocked, previous;
	sigemptyset(&blocked);
	for (int i = 0; i < 2; i++)
		sigaddset(&blocked, caught_signals[i]);
	pthread_sigmask(SIG_BLOCK, &blocked, &previous);
	int caught = caught_signal;
	depth--;
	wake_fd = guard->previous_wake_fd;
	if (guard->outermost) {
		for (int i = 0; i < 2; i++)
			if (guard->replaced[i])
				sigaction(caught_signals[i], &guard->saved[i], NULL);
		caught_signal = 0;
	}
	pthread_sigmask(SIG_SETMASK, &previous, NULL);
	return caught;
}

int interrupt_fail(struct diag *diag, int signal_number)
{
	diag_fail(diag, BCO_ERROR_INTERRUPTED, "interrupted by %s",
	          signal_number == SIGINT ? "SIGINT" : signal_number == SIGTERM ? "SIGTERM" : "a signal");
	diag->signal = signal_number;
	return -1;
}
