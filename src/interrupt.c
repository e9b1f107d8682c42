/* interrupt.c - catching SIGINT, SIGTERM and SIGHUP while a build runs.
 *
 * The handler marks every guard in use: a table of slots, each with the
 * first signal it caught and the descriptor to wake.  The slots are atomics
 * (lock-free, so safe in a handler); a handler counts itself in a slot's
 * users while it touches it, and a release waits for that count to drop,
 * so no handler writes to a wake descriptor after its owner closed it.  The
 * table, the count of guards and the saved dispositions are process-wide;
 * a mutex orders catch and release, never the handler. */
#include "interrupt.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"

#define SLOT_COUNT 64
#define CAUGHT_COUNT 3

static const int caught_signals[CAUGHT_COUNT] = { SIGINT, SIGTERM, SIGHUP };

struct slot {
	atomic_int in_use;
	atomic_int signal;  /* the first signal caught, or 0 */
	atomic_int wake_fd;
	atomic_int users;   /* handlers touching this slot now */
	int claimed;        /* under the mutex */
};

static struct slot slots[SLOT_COUNT];
static pthread_mutex_t table_mutex = PTHREAD_MUTEX_INITIALIZER;
static int guards;  /* guards held in the process, under the mutex */
static struct sigaction saved[CAUGHT_COUNT];
static int replaced[CAUGHT_COUNT];
static struct sigaction saved_child;
static int child_replaced;
static _Thread_local struct interrupt_guard *innermost;

static void on_interrupt(int signal_number)
{
	int saved_errno = errno;
	for (int i = 0; i < SLOT_COUNT; i++) {
		struct slot *slot = &slots[i];
		atomic_fetch_add(&slot->users, 1);
		if (atomic_load(&slot->in_use)) {
			int none = 0;
			atomic_compare_exchange_strong(&slot->signal, &none, signal_number);
			int fd = atomic_load(&slot->wake_fd);
			if (fd >= 0) {
				char byte = 0;
				/* A full pipe already holds a pending wakeup, so a failed write loses nothing. */
				ssize_t ignored = write(fd, &byte, 1);
				(void)ignored;
			}
		}
		atomic_fetch_sub(&slot->users, 1);
	}
	errno = saved_errno;
}

static void block_caught(sigset_t *previous)
{
	sigset_t blocked;
	sigemptyset(&blocked);
	for (int i = 0; i < CAUGHT_COUNT; i++)
		sigaddset(&blocked, caught_signals[i]);
	pthread_sigmask(SIG_BLOCK, &blocked, previous);
}

static void restore_dispositions(void)
{
	for (int i = 0; i < CAUGHT_COUNT; i++)
		if (replaced[i])
			sigaction(caught_signals[i], &saved[i], NULL);
	if (child_replaced)
		sigaction(SIGCHLD, &saved_child, NULL);
	memset(replaced, 0, sizeof replaced);
	child_replaced = 0;
}

/* Takes over the caught signals, leaving ignored ones alone, and makes
 * SIGCHLD waitable.  Returns 0, or -1 with errno set and nothing changed. */
static int install_dispositions(void)
{
	struct sigaction action;
	memset(&action, 0, sizeof action);
	action.sa_handler = on_interrupt;
	sigemptyset(&action.sa_mask);
	for (int i = 0; i < CAUGHT_COUNT; i++)
		sigaddset(&action.sa_mask, caught_signals[i]);
	action.sa_flags = SA_RESTART; /* the wake fd, not EINTR, tells a loop */
	for (int i = 0; i < CAUGHT_COUNT; i++) {
		struct sigaction current;
		if (sigaction(caught_signals[i], NULL, &current) != 0)
			goto failed;
		if (current.sa_handler == SIG_IGN)
			continue;
		if (sigaction(caught_signals[i], &action, &saved[i]) != 0)
			goto failed;
		replaced[i] = 1;
	}
	/* An ignored SIGCHLD, or SA_NOCLDWAIT, would reap the tools before
	 * their exit status could be read. */
	struct sigaction child;
	if (sigaction(SIGCHLD, NULL, &child) != 0)
		goto failed;
	if (child.sa_handler == SIG_IGN || (child.sa_flags & SA_NOCLDWAIT)) {
		struct sigaction waitable;
		memset(&waitable, 0, sizeof waitable);
		waitable.sa_handler = SIG_DFL;
		sigemptyset(&waitable.sa_mask);
		if (sigaction(SIGCHLD, &waitable, &saved_child) != 0)
			goto failed;
		child_replaced = 1;
	}
	return 0;
failed:;
	int saved_errno = errno;
	restore_dispositions();
	errno = saved_errno;
	return -1;
}

int interrupt_catch(struct interrupt_guard *guard, int wake_fd)
{
	guard->slot = -1;
	guard->enclosing = innermost;
	pthread_mutex_lock(&table_mutex);
	int slot = -1;
	for (int i = 0; i < SLOT_COUNT && slot < 0; i++)
		if (!slots[i].claimed)
			slot = i;
	if (slot < 0) {
		pthread_mutex_unlock(&table_mutex);
		errno = EAGAIN;
		return -1;
	}
	if (guards == 0 && install_dispositions() != 0) {
		int saved_errno = errno;
		pthread_mutex_unlock(&table_mutex);
		errno = saved_errno;
		return -1;
	}
	guards++;
	slots[slot].claimed = 1;
	int inherited = guard->enclosing ? atomic_load(&slots[guard->enclosing->slot].signal) : 0;
	atomic_store(&slots[slot].signal, inherited);
	atomic_store(&slots[slot].wake_fd, wake_fd);
	atomic_store(&slots[slot].in_use, 1);
	pthread_mutex_unlock(&table_mutex);
	guard->slot = slot;
	innermost = guard;
	return 0;
}

int interrupt_caught(void)
{
	/* An enclosing guard may have caught one while this one was being set up. */
	for (const struct interrupt_guard *guard = innermost; guard; guard = guard->enclosing) {
		int caught = atomic_load(&slots[guard->slot].signal);
		if (caught)
			return caught;
	}
	return 0;
}

int interrupt_release(struct interrupt_guard *guard)
{
	if (guard->slot < 0)
		return 0;
	sigset_t previous;
	block_caught(&previous);
	struct slot *slot = &slots[guard->slot];
	pthread_mutex_lock(&table_mutex);
	atomic_store(&slot->in_use, 0);
	atomic_store(&slot->wake_fd, -1);
	/* A handler in another thread may still be writing to the descriptor. */
	while (atomic_load(&slot->users) != 0)
		sched_yield();
	int caught = atomic_load(&slot->signal);
	if (guard->enclosing && caught) {
		int none = 0;
		atomic_compare_exchange_strong(&slots[guard->enclosing->slot].signal, &none, caught);
	}
	slot->claimed = 0;
	if (--guards == 0)
		restore_dispositions();
	pthread_mutex_unlock(&table_mutex);
	innermost = guard->enclosing;
	guard->slot = -1;
	pthread_sigmask(SIG_SETMASK, &previous, NULL);
	return caught;
}

int interrupt_fail(struct diag *diag, int signal_number)
{
	const char *name = signal_number == SIGINT    ? "SIGINT"
	                   : signal_number == SIGTERM ? "SIGTERM"
	                   : signal_number == SIGHUP  ? "SIGHUP"
	                                              : "a signal";
	diag_fail(diag, BCO_ERROR_INTERRUPTED, "interrupted by %s", name);
	diag->signal = signal_number;
	return -1;
}
