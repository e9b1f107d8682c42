/* monitor.h - the thread that stops calls: at their time limit, on rco_stop and on SIGINT.
 *
 * One monitor thread runs while any library is open.  Each library has a
 * watch on the monitor's list; a call tells its watch when it begins (with
 * its deadline) and ends, which costs no system call while the monitor is
 * awake or sleeps until an earlier deadline.  The monitor sleeps until the
 * next deadline (at most 100 ms while a call has one), or until rco_stop
 * or the library's SIGINT handler wakes it, then stops the calls concerned (team_stop) and sends their running
 * cores the stop signal again every 100 ms while they run: a kernel that
 * blocks it on the caller's own thread cannot be left behind, as one on a
 * worker can, so the call waits for it.
 *
 * A time limit counts the time the process ran: when the monitor wakes
 * more than 200 ms after its last wake (100 ms before), the process was
 * stopped (SIGSTOP, Ctrl-Z) or the machine suspended, and the deadlines of
 * the calls in progress move by that time beyond 100 ms.
 *
 * SIGINT, for the libraries opened with stop_on_interrupt: while such a
 * call is in progress, the handler keeps the signal and has the monitor
 * stop every such call; the call that ends first delivers it to the
 * process's own disposition (monitor_deliver_interrupt).  A second SIGINT
 * while the first is kept goes to the process's disposition at once. */
#ifndef MONITOR_H
#define MONITOR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "cores.h"

struct call_watch {
	pthread_mutex_t lock;        /* held by the call as it begins and ends, and to stop it */
	struct core_team *team;
	int interruptible;           /* stops on SIGINT */
	/* Under lock: */
	int in_progress;
	long long deadline;          /* CLOCK_MONOTONIC nanoseconds; 0: no limit */
	unsigned interrupts_before;  /* SIGINTs kept before the call began */
	int stopped;                 /* the monitor stopped the call */
	long long stop_sent;         /* when it last sent the stop signal */
	/* For rco_stop, in any thread or handler: */
	atomic_uint generation;      /* odd while a call is in progress */
	atomic_uint stop_asked;      /* the generation rco_stop asked to stop */
	/* The monitor's list, under its lock: */
	struct call_watch *next, *previous;
};

/* Puts watch, for team's calls, on the monitor's list, starting the monitor
 * when it is the first; interruptible: its calls stop on SIGINT (the
 * library's SIGINT handler is then held).  Returns 0, or -1 with error set
 * (RCO_ERROR_SYSTEM). */
int monitor_watch(struct call_watch *watch, struct core_team *team, int interruptible,
                  struct rco_error *error);
/* Watch's calls are now team's (no call in progress; NULL: no team).  The
 * watch stays on the list: rco_stop may use it meanwhile. */
void monitor_retarget(struct call_watch *watch, struct core_team *team);
/* Takes watch off the list; the last stops the monitor. */
void monitor_unwatch(struct call_watch *watch);
/* A call begins, with a time limit of timeout seconds (0: none). */
void monitor_call_begin(struct call_watch *watch, double timeout);
/* The call ends (after team_run returned). */
void monitor_call_end(struct call_watch *watch);
/* Asks the monitor to stop watch's call in progress, if any.  Async-signal-safe. */
void monitor_stop(struct call_watch *watch);
/* After an interruptible call: delivers a SIGINT kept during it to the
 * process's own disposition, now. */
void monitor_deliver_interrupt(void);
/* For pthread_atfork: the prepare step takes the monitor's locks; in the
 * parent they are given back; in the child, which has no monitor thread,
 * the monitor starts afresh (the parent's libraries are not on its list). */
void monitor_before_fork(void);
void monitor_after_fork_in_parent(void);
void monitor_after_fork_in_child(void);

#endif
