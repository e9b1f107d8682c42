/* dispositions.c - the signal handlers libruncustomop keeps installed while libraries are open.
 *
 * The process's own disposition of each held signal is read by the
 * library's handlers, in any thread, while normal code may replace it (a
 * refresh): it is kept under a version count, odd while it is written, and
 * a reader copies it again until the count is even and unchanged.  A
 * writer blocks the signal in its own thread first, so no handler of its
 * own thread ever waits for it.
 *
 * SA_ONSTACK is XSI. */
#define _XOPEN_SOURCE 700

#include "dispositions.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "fault.h"

struct held_signal {
	struct sigaction own;     /* the process's own disposition */
	int number;
	enum disposition_group group;
	/* Its default action ends the process, and a handler of the process's
	 * may hand it back to the library's (see call_in_place). */
	int fatal;
	atomic_uint version;      /* odd while own is written */
};

static struct held_signal held[] = {
	{.number = SIGSEGV, .group = DISPOSITIONS_CORES, .fatal = 1},
	{.number = SIGBUS, .group = DISPOSITIONS_CORES, .fatal = 1},
	{.number = SIGFPE, .group = DISPOSITIONS_CORES, .fatal = 1},
	{.number = SIGILL, .group = DISPOSITIONS_CORES, .fatal = 1},
	{.number = SIGABRT, .group = DISPOSITIONS_CORES, .fatal = 1},
	{.number = FAULT_STOP_SIGNAL, .group = DISPOSITIONS_CORES},
	{.number = SIGINT, .group = DISPOSITIONS_INTERRUPT},
};
#define HELD_COUNT (sizeof held / sizeof held[0])
#define GROUP_COUNT 2

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int holders[GROUP_COUNT];
/* The library's handler of each group, set by the first hold. */
static disposition_handler _Atomic handlers[GROUP_COUNT];

static struct held_signal *find(int number)
{
	for (size_t i = 0; i < HELD_COUNT; i++)
		if (held[i].number == number)
			return &held[i];
	return NULL;
}

static void read_own(struct held_signal *signal, struct sigaction *out)
{
	for (;;) {
		unsigned before = atomic_load(&signal->version);
		memcpy(out, &signal->own, sizeof *out);
		atomic_thread_fence(memory_order_acquire);
		if (!(before & 1) && atomic_load(&signal->version) == before)
			return;
	}
}

static void write_own(struct held_signal *signal, const struct sigaction *own)
{
	atomic_fetch_add(&signal->version, 1);
	atomic_thread_fence(memory_order_release);
	memcpy(&signal->own, own, sizeof *own);
	atomic_fetch_add(&signal->version, 1);
}

static int has_function(const struct sigaction *action)
{
	return (action->sa_flags & SA_SIGINFO) ||
	       (action->sa_handler != SIG_DFL && action->sa_handler != SIG_IGN);
}

static int is_ignore(const struct sigaction *action)
{
	return !(action->sa_flags & SA_SIGINFO) && action->sa_handler == SIG_IGN;
}

static int is_ours(const struct sigaction *action, const struct held_signal *signal)
{
	return (action->sa_flags & SA_SIGINFO) &&
	       action->sa_sigaction == atomic_load(&handlers[signal->group]);
}

static int same_handler(const struct sigaction *a, const struct sigaction *b)
{
	if ((a->sa_flags & SA_SIGINFO) != (b->sa_flags & SA_SIGINFO))
		return 0;
	return (a->sa_flags & SA_SIGINFO) ? a->sa_sigaction == b->sa_sigaction
	                                  : a->sa_handler == b->sa_handler;
}

/* The library's disposition of signal, given the process's own. */
static void ours_for(const struct held_signal *signal, const struct sigaction *own,
                     struct sigaction *action)
{
	memset(action, 0, sizeof *action);
	action->sa_sigaction = atomic_load(&handlers[signal->group]);
	/* On the alternate stack: a core's stack overflow leaves no other. */
	action->sa_flags = SA_SIGINFO | SA_ONSTACK;
	/* A system call the signal interrupts restarts as it did with the
	 * process's own handler; with none (ignored, or the default: SIGURG
	 * mostly) the signal interrupted no call, so it restarts. */
	if (!has_function(own) || (own->sa_flags & SA_RESTART))
		action->sa_flags |= SA_RESTART;
	sigemptyset(&action->sa_mask);
}

/* Installs the library's handler of signal over the process's disposition,
 * which becomes its own; a SIGINT the process ignores stays ignored.
 * Under the lock, with signal blocked in this thread. */
static int install(struct held_signal *signal)
{
	struct sigaction current, ours, previous;
	if (sigaction(signal->number, NULL, &current) != 0)
		return -1;
	if (is_ours(&current, signal))
		return 0;
	write_own(signal, &current);
	if (signal->number == SIGINT && is_ignore(&current))
		return 0;
	ours_for(signal, &current, &ours);
	if (sigaction(signal->number, &ours, &previous) != 0)
		return -1;
	if (!same_handler(&previous, &current) && !is_ours(&previous, signal))
		write_own(signal, &previous); /* changed by another thread meanwhile */
	return 0;
}

static void put_back(struct held_signal *signal)
{
	struct sigaction current, own;
	if (sigaction(signal->number, NULL, &current) == 0 && is_ours(&current, signal)) {
		read_own(signal, &own);
		sigaction(signal->number, &own, NULL);
	}
}

/* Blocks group's signals (or the one signal, when number is not 0) in this
 * thread while its own dispositions are written. */
static void block_while_writing(enum disposition_group group, int number, sigset_t *previous)
{
	sigset_t blocked;
	sigemptyset(&blocked);
	for (size_t i = 0; i < HELD_COUNT; i++)
		if (number ? held[i].number == number : held[i].group == group)
			sigaddset(&blocked, held[i].number);
	pthread_sigmask(SIG_BLOCK, &blocked, previous);
}

int dispositions_hold(enum disposition_group group, disposition_handler handler)
{
	int status = 0;
	pthread_mutex_lock(&lock);
	if (holders[group] == 0) {
		atomic_store(&handlers[group], handler);
		sigset_t mask;
		block_while_writing(group, 0, &mask);
		size_t failed = HELD_COUNT;
		for (size_t i = 0; i < HELD_COUNT && failed == HELD_COUNT; i++)
			if (held[i].group == group && install(&held[i]) != 0)
				failed = i;
		if (failed < HELD_COUNT) {
			int saved = errno;
			for (size_t i = 0; i < failed; i++)
				if (held[i].group == group)
					put_back(&held[i]);
			errno = saved;
			status = -1;
		}
		pthread_sigmask(SIG_SETMASK, &mask, NULL);
	}
	if (status == 0)
		holders[group]++;
	pthread_mutex_unlock(&lock);
	return status;
}

void dispositions_release(enum disposition_group group)
{
	pthread_mutex_lock(&lock);
	if (holders[group] > 0 && --holders[group] == 0)
		for (size_t i = 0; i < HELD_COUNT; i++)
			if (held[i].group == group)
				put_back(&held[i]);
	pthread_mutex_unlock(&lock);
}

static void refresh(enum disposition_group group, int number)
{
	pthread_mutex_lock(&lock);
	if (holders[group] > 0) {
		sigset_t mask;
		block_while_writing(group, number, &mask);
		for (size_t i = 0; i < HELD_COUNT; i++)
			if (number ? held[i].number == number : held[i].group == group)
				install(&held[i]);
		pthread_sigmask(SIG_SETMASK, &mask, NULL);
	}
	pthread_mutex_unlock(&lock);
}

void dispositions_refresh(enum disposition_group group)
{
	struct held_signal *canary = find(group == DISPOSITIONS_CORES ? SIGSEGV : SIGINT);
	struct sigaction current, own;
	if (sigaction(canary->number, NULL, &current) != 0 || is_ours(&current, canary))
		return;
	read_own(canary, &own);
	if (canary->number == SIGINT && is_ignore(&current) && is_ignore(&own))
		return; /* ignored, and left so */
	refresh(group, 0);
}

void dispositions_refresh_signal(int number)
{
	struct held_signal *signal = find(number);
	if (signal)
		refresh(signal->group, number);
}

static void set_default(int number)
{
	struct sigaction fallback;
	memset(&fallback, 0, sizeof fallback);
	fallback.sa_handler = SIG_DFL;
	sigemptyset(&fallback.sa_mask);
	sigaction(number, &fallback, NULL);
}

static void call(const struct sigaction *own, int number, siginfo_t *info, void *ucontext)
{
	if (own->sa_flags & SA_SIGINFO)
		own->sa_sigaction(number, info, ucontext);
	else
		own->sa_handler(number);
}

/* Calls the process's handler of a fatal signal with its own disposition
 * in place, as it would run without the library.  A handler that ends by
 * putting back what it found before it was installed and raising the
 * signal again (Python's faulthandler does) would, when that was the
 * library's, hand the signal back here, and the two would pass it to each
 * other for ever: when it leaves the library's handler in place, the
 * default action ends the chain. */
static void call_in_place(const struct held_signal *signal, const struct sigaction *own,
                          int number, siginfo_t *info, void *ucontext)
{
	struct sigaction before, after;
	sigaction(number, own, &before);
	call(own, number, info, ucontext);
	if (sigaction(number, NULL, &after) != 0)
		return;
	if (same_handler(&after, own))
		sigaction(number, &before, NULL);
	else if (is_ours(&after, signal))
		set_default(number);
	/* Else the handler chose a disposition of its own: it stays. */
}

/* Whether signal_number was raised by the instruction that faulted, so
 * that returning from the handler runs the instruction again. */
static int is_synchronous_fault(int number, const siginfo_t *info)
{
	return (number == SIGSEGV || number == SIGBUS || number == SIGFPE || number == SIGILL) &&
	       info->si_code > 0;
}

void dispositions_pass_on(int number, siginfo_t *info, void *ucontext)
{
	struct held_signal *signal = find(number);
	if (!signal)
		return;
	struct sigaction own;
	read_own(signal, &own);
	if (has_function(&own)) {
		if (signal->fatal)
			call_in_place(signal, &own, number, info, ucontext);
		else
			call(&own, number, info, ucontext);
		return;
	}
	if (is_ignore(&own)) {
		/* The kernel does not let a synchronous fault be ignored either. */
		if (is_synchronous_fault(number, info))
			set_default(number);
		return;
	}
	if (number == FAULT_STOP_SIGNAL)
		return; /* ignored by default */
	/* The default action, now: a fault happens again on return; a sent
	 * signal is sent again, and arrives when the handler returns. */
	set_default(number);
	if (!is_synchronous_fault(number, info))
		raise(number);
}

void dispositions_deliver(int number)
{
	struct held_signal *signal = find(number);
	if (!signal)
		return;
	pthread_mutex_lock(&lock);
	struct sigaction own, current, after;
	read_own(signal, &own);
	if (!is_ignore(&own) && sigaction(number, NULL, &current) == 0) {
		if (is_ours(&current, signal)) {
			sigaction(number, &own, NULL);
			raise(number);
			if (sigaction(number, NULL, &after) == 0 && same_handler(&after, &own))
				sigaction(number, &current, NULL);
		} else {
			raise(number);
		}
	}
	pthread_mutex_unlock(&lock);
}

void dispositions_before_fork(void)
{
	pthread_mutex_lock(&lock);
}

void dispositions_after_fork(void)
{
	pthread_mutex_unlock(&lock);
}
