/* monitor.c - the thread that stops calls: at their time limit, on rco_stop and on SIGINT.
 *
 * sem_clockwait (waiting on CLOCK_MONOTONIC) is POSIX.1-2024; glibc has it
 * under _GNU_SOURCE. */
#define _GNU_SOURCE

#include "monitor.h"

#include <errno.h>
#include <limits.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dispositions.h"
#include "errors.h"
#include "fault.h"

/* How often the stop signal goes again to the cores of a stopped call
 * that still run. */
#define RESEND_NS 100000000LL
/* While a call with a time limit is in progress, the monitor wakes every
 * TICK_NS; a wake later than GAP_NS after the one before means the process
 * did not run in between (stopped by SIGSTOP or Ctrl-Z, or the machine
 * suspended), and that time, beyond one tick, is not counted: the
 * deadlines move by it. */
#define TICK_NS 100000000LL
#define GAP_NS 200000000LL
#define MONITOR_STACK ((size_t)256 * 1024)

static pthread_mutex_t life = PTHREAD_MUTEX_INITIALIZER;   /* starts and stops the thread */
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct call_watch *list;
static pthread_t thread;
static int running, wake_made;
static atomic_int quit;
static sem_t wake;
/* When the monitor wakes by itself (CLOCK_MONOTONIC ns; LLONG_MAX: when woken). */
static atomic_llong sleep_until = LLONG_MAX;
/* When the monitor last looked at a list with a deadline on it; 0: it had
 * none (the monitor's thread only). */
static long long last_tick;
/* SIGINT, for the calls that stop on it: */
static atomic_int interruptible_calls;   /* in progress */
static atomic_uint interrupts;           /* SIGINTs kept so far */
static atomic_int interrupt_kept;        /* one is kept, not yet delivered */

static long long now_ns(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void on_interrupt(int number, siginfo_t *info, void *ucontext)
{
	int saved_errno = errno;
	if (atomic_load(&interruptible_calls) > 0 && !atomic_exchange(&interrupt_kept, 1)) {
		atomic_fetch_add(&interrupts, 1);
		sem_post(&wake);
		/* The calls may all have ended meanwhile, after they looked for a
		 * kept SIGINT: then it goes on from here. */
		if (atomic_load(&interruptible_calls) == 0 && atomic_exchange(&interrupt_kept, 0))
			dispositions_pass_on(number, info, ucontext);
	} else {
		dispositions_pass_on(number, info, ucontext);
	}
	errno = saved_errno;
}

/* Looks at one watch (under its lock) at now; returns when it must look again. */
static long long look_at(struct call_watch *watch, long long now, unsigned interrupts_now)
{
	if (!watch->in_progress)
		return LLONG_MAX;
	if (watch->stopped) {
		if (now - watch->stop_sent >= RESEND_NS) {
			team_resend_stop(watch->team);
			watch->stop_sent = now;
		}
		return watch->stop_sent + RESEND_NS;
	}
	enum team_stop reason = TEAM_NOT_STOPPED;
	if (watch->deadline && now >= watch->deadline)
		reason = TEAM_TIMED_OUT;
	else if (watch->interruptible && interrupts_now != watch->interrupts_before)
		reason = TEAM_INTERRUPTED;
	else if (atomic_load(&watch->stop_asked) == atomic_load(&watch->generation))
		reason = TEAM_STOP_CALLED;
	if (reason == TEAM_NOT_STOPPED)
		return watch->deadline ? watch->deadline : LLONG_MAX;
	/* The stop signal must reach the library's handler. */
	dispositions_refresh_signal(FAULT_STOP_SIGNAL);
	team_stop(watch->team, reason);
	watch->stopped = 1;
	watch->stop_sent = now;
	return now + RESEND_NS;
}

/* Moves the deadlines of the calls in progress by the time the process
 * did not run since the last tick (see TICK_NS); returns whether any call
 * has a deadline. */
static int discount_stops(long long now)
{
	long long lost = last_tick && now - last_tick > GAP_NS ? now - last_tick - TICK_NS : 0;
	int deadlines = 0;
	for (struct call_watch *watch = list; watch; watch = watch->next) {
		pthread_mutex_lock(&watch->lock);
		if (watch->in_progress && watch->deadline && !watch->stopped) {
			watch->deadline += lost;
			deadlines = 1;
		}
		pthread_mutex_unlock(&watch->lock);
	}
	last_tick = deadlines ? now : 0;
	return deadlines;
}

static void *monitor_main(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&list_lock);
	while (!atomic_load(&quit)) {
		/* A call that begins while the list is looked at wakes the monitor
		 * again (its deadline is before LLONG_MAX). */
		atomic_store(&sleep_until, LLONG_MAX);
		long long now = now_ns(), next = LLONG_MAX;
		unsigned interrupts_now = atomic_load(&interrupts);
		if (discount_stops(now))
			next = now + TICK_NS;
		for (struct call_watch *watch = list; watch; watch = watch->next) {
			pthread_mutex_lock(&watch->lock);
			long long again = look_at(watch, now, interrupts_now);
			pthread_mutex_unlock(&watch->lock);
			if (again < next)
				next = again;
		}
		atomic_store(&sleep_until, next);
		pthread_mutex_unlock(&list_lock);
		if (next == LLONG_MAX) {
			sem_wait(&wake);
		} else {
			struct timespec at;
			at.tv_sec = (time_t)(next / 1000000000LL);
			at.tv_nsec = (long)(next % 1000000000LL);
			sem_clockwait(&wake, CLOCK_MONOTONIC, &at);
		}
		pthread_mutex_lock(&list_lock);
	}
	pthread_mutex_unlock(&list_lock);
	return NULL;
}

/* Starts the monitor thread, with every signal blocked: none is for it. */
static int start(struct rco_error *error)
{
	sigset_t all, mask;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &mask);
	pthread_attr_t attributes;
	pthread_attr_init(&attributes);
	pthread_attr_setstacksize(&attributes, MONITOR_STACK);
	int failed = pthread_create(&thread, &attributes, monitor_main, NULL);
	pthread_attr_destroy(&attributes);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (failed) {
		return error_fail(error, RCO_ERROR_SYSTEM, "cannot start the thread that watches "
		                  "time limits: %s", strerror(failed));
	}
	running = 1;
	return 0;
}

int monitor_watch(struct call_watch *watch, struct core_team *team, int interruptible,
                  struct rco_error *error)
{
	memset(watch, 0, sizeof *watch);
	pthread_mutex_init(&watch->lock, NULL);
	watch->team = team;
	watch->interruptible = interruptible;
	if (interruptible && dispositions_hold(DISPOSITIONS_INTERRUPT, on_interrupt) != 0) {
		error_fail(error, RCO_ERROR_SYSTEM, "cannot install the SIGINT handler: %s",
		           strerror(errno));
		pthread_mutex_destroy(&watch->lock);
		return -1;
	}
	pthread_mutex_lock(&life);
	if (!wake_made) {
		sem_init(&wake, 0, 0);
		wake_made = 1;
	}
	int status = running ? 0 : start(error);
	if (status == 0) {
		pthread_mutex_lock(&list_lock);
		watch->next = list;
		if (list)
			list->previous = watch;
		list = watch;
		pthread_mutex_unlock(&list_lock);
	}
	pthread_mutex_unlock(&life);
	if (status != 0) {
		if (interruptible)
			dispositions_release(DISPOSITIONS_INTERRUPT);
		pthread_mutex_destroy(&watch->lock);
	}
	return status;
}

void monitor_unwatch(struct call_watch *watch)
{
	pthread_mutex_lock(&life);
	pthread_mutex_lock(&list_lock);
	if (watch->previous)
		watch->previous->next = watch->next;
	else
		list = watch->next;
	if (watch->next)
		watch->next->previous = watch->previous;
	int last = list == NULL;
	if (last)
		atomic_store(&quit, 1);
	pthread_mutex_unlock(&list_lock);
	if (last && running) {
		sem_post(&wake);
		pthread_join(thread, NULL);
		running = 0;
		atomic_store(&quit, 0);
		while (sem_trywait(&wake) == 0)
			;
	}
	pthread_mutex_unlock(&life);
	if (watch->interruptible)
		dispositions_release(DISPOSITIONS_INTERRUPT);
	pthread_mutex_destroy(&watch->lock);
}

void monitor_retarget(struct call_watch *watch, struct core_team *team)
{
	pthread_mutex_lock(&watch->lock);
	watch->team = team;
	pthread_mutex_unlock(&watch->lock);
}

void monitor_call_begin(struct call_watch *watch, double timeout)
{
	long long deadline = timeout > 0 ? now_ns() + (long long)(timeout * 1e9) : 0;
	if (watch->interruptible)
		atomic_fetch_add(&interruptible_calls, 1);
	pthread_mutex_lock(&watch->lock);
	watch->in_progress = 1;
	watch->deadline = deadline;
	watch->stopped = 0;
	watch->interrupts_before = atomic_load(&interrupts);
	atomic_fetch_add(&watch->generation, 1);
	pthread_mutex_unlock(&watch->lock);
	/* A monitor that sleeps until later (or until woken) must look again. */
	if (deadline && deadline < atomic_load(&sleep_until))
		sem_post(&wake);
}

void monitor_call_end(struct call_watch *watch)
{
	pthread_mutex_lock(&watch->lock);
	watch->in_progress = 0;
	watch->deadline = 0;
	atomic_fetch_add(&watch->generation, 1);
	pthread_mutex_unlock(&watch->lock);
	if (watch->interruptible)
		atomic_fetch_sub(&interruptible_calls, 1);
}

void monitor_stop(struct call_watch *watch)
{
	unsigned generation = atomic_load(&watch->generation);
	if (generation & 1) {
		atomic_store(&watch->stop_asked, generation);
		sem_post(&wake);
	}
}

void monitor_deliver_interrupt(void)
{
	if (atomic_exchange(&interrupt_kept, 0))
		dispositions_deliver(SIGINT);
}

void monitor_before_fork(void)
{
	pthread_mutex_lock(&life);
	pthread_mutex_lock(&list_lock);
}

void monitor_after_fork_in_parent(void)
{
	pthread_mutex_unlock(&list_lock);
	pthread_mutex_unlock(&life);
}

void monitor_after_fork_in_child(void)
{
	list = NULL;
	running = 0;
	last_tick = 0;
	atomic_store(&quit, 0);
	atomic_store(&sleep_until, LLONG_MAX);
	atomic_store(&interruptible_calls, 0);
	atomic_store(&interrupt_kept, 0);
	if (wake_made)
		sem_init(&wake, 0, 0);
	pthread_mutex_unlock(&list_lock);
	pthread_mutex_unlock(&life);
}
