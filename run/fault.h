/* fault.h - turning a signal in a core's kernel into a report about that core.
 *
 * Each core thread has an alternate signal stack that knows its fault
 * context, and runs the op with the context armed; a fault (SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL), abort() (SIGABRT) or a stop request (SIGURG sent
 * by fault_request_stop) then jumps back to the sigsetjmp in the thread's
 * loop with what happened recorded.  Any other signal of these, in any
 * thread, goes on to the handler the process had.  The handlers are the
 * process's only while a call holds them (fault_handlers_acquire).
 *
 * The runtime announces the guard region below each stack it runs kernels
 * on: a fault there, or a little below it (a frame big enough to jump over
 * the guard), is that stack's overflow rather than a bad pointer. */
#ifndef FAULT_H
#define FAULT_H

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>

#define FAULT_MAX_GUARDS 16
#define FAULT_DESCRIPTION_SIZE 200
/* How far below a guard region a fault still counts as that stack's overflow. */
#define FAULT_OVERFLOW_REACH ((size_t)256 * 1024)
/* The signal that stops a core's kernel at a time limit. */
#define FAULT_STOP_SIGNAL SIGURG

struct fault_guard {
	const char *start;
	size_t length;
	char description[FAULT_DESCRIPTION_SIZE];
};

/* One per core thread. */
struct fault_context {
	sigjmp_buf resume;                   /* set with sigsetjmp before arming */
	struct fault_guard guards[FAULT_MAX_GUARDS];
	volatile sig_atomic_t guard_count;
	volatile sig_atomic_t armed;
	volatile sig_atomic_t stop_requested;
	/* out, after the jump: */
	volatile sig_atomic_t signal_number; /* FAULT_STOP_SIGNAL when stopped */
	void *volatile address;
	volatile sig_atomic_t overflowed_guard; /* index into guards, or -1 */
};

/* Gives the calling thread an alternate signal stack that leads the
 * handlers to context; returns 0 or -1 with errno.  The thread keeps it
 * until fault_thread_end. */
int fault_thread_begin(struct fault_context *context);
/* Takes the calling thread's alternate signal stack away and frees it. */
void fault_thread_end(void);
/* Makes the library's handlers of the fault signals (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT) the process's, for one call; the first of
 * concurrent calls installs them.  Returns 0 or -1 with errno. */
int fault_handlers_acquire(void);
/* Ends one call's hold; the last puts back the handlers the process had. */
void fault_handlers_release(void);
/* The same for FAULT_STOP_SIGNAL, held by a call that stops cores. */
int fault_stop_acquire(void);
void fault_stop_release(void);
/* Forgets the guard regions and the outcome of the previous call. */
void fault_reset(struct fault_context *context);
/* Records a guard region (description non-NULL) or forgets the one at start
 * (description NULL); returns -1 when FAULT_MAX_GUARDS are in use. */
int fault_guard(struct fault_context *context, const void *start, size_t length,
                const char *description);
/* Arms the context: a fault from now on jumps to context->resume. */
void fault_arm(struct fault_context *context);
/* Disarms it: a fault is again the process's business. */
void fault_disarm(struct fault_context *context);
/* Asks the core thread running under context to stop its kernel (hold
 * fault_stop_acquire first); returns 0 or an errno value. */
int fault_request_stop(struct fault_context *context, pthread_t thread);
/* Names a recorded signal: "segmentation fault (SIGSEGV)", ... */
const char *fault_signal_text(int signal_number);

#endif
