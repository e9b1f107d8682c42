/* dispositions.h - the signal handlers libruncustomop keeps installed while libraries are open.
 *
 * Two groups of signals: the core signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT and the stop signal SIGURG), held by every open library, and
 * SIGINT, held by the libraries opened with stop_on_interrupt.  The first
 * hold of a group installs the library's handler of each of its signals
 * and remembers the process's own disposition; the last release puts the
 * process's own back wherever the library's is still installed.  A SIGINT
 * the process ignores stays ignored.
 *
 * A signal the library's handler does not take for itself goes on to the
 * process's own disposition (dispositions_pass_on), as if the library's
 * handler had not been there.  When the process installs a handler of its
 * own after the library's (Python's faulthandler.enable(), say),
 * dispositions_refresh notices at the next call, installs the library's
 * again and remembers the process's new one as its own.  Only this file
 * calls sigaction. */
#ifndef DISPOSITIONS_H
#define DISPOSITIONS_H

#include <signal.h>

enum disposition_group {
	DISPOSITIONS_CORES,     /* SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGURG */
	DISPOSITIONS_INTERRUPT  /* SIGINT */
};

typedef void (*disposition_handler)(int signal_number, siginfo_t *info, void *ucontext);

/* Holds group with handler (the same for every hold of a group): the first
 * hold installs it.  Returns 0, or -1 with errno. */
int dispositions_hold(enum disposition_group group, disposition_handler handler);
/* Ends one hold; the last puts back the process's own dispositions. */
void dispositions_release(enum disposition_group group);
/* Looks at one signal of group (SIGSEGV, or SIGINT): when the process has
 * replaced the library's handler, installs it again over every signal of
 * the group that was replaced, remembering the process's new disposition.
 * One system call when nothing changed. */
void dispositions_refresh(enum disposition_group group);
/* The same for one held signal, whatever the others say. */
void dispositions_refresh_signal(int signal_number);
/* Gives a signal that the library's handler does not take to the process's
 * own disposition: calls its handler, or takes the default action (a fault
 * happens again on return, a sent signal is sent again), or ignores it.
 * Async-signal-safe; called by the library's handlers only. */
void dispositions_pass_on(int signal_number, siginfo_t *info, void *ucontext);
/* Delivers signal_number now to the process's own disposition, from normal
 * code (a SIGINT the library kept while it stopped an op): raises it with
 * the process's disposition in place, then puts the library's back. */
void dispositions_deliver(int signal_number);
/* For pthread_atfork: the prepare step takes the lock, the parent and child
 * steps give it back, so a child never finds it held. */
void dispositions_before_fork(void);
void dispositions_after_fork(void);

#endif
