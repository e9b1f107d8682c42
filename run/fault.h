/* fault.h - turning a signal in a core's kernel into a report about that core.
 *
 * A thread runs a core's kernel with an alternate signal stack made here
 * (a fault stack), which names the fault context of the core it runs, and
 * with that context armed; a fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL),
 * abort() (SIGABRT) or a stop request (SIGURG sent by fault_request_stop)
 * then jumps back to the sigsetjmp before the kernel with what happened
 * recorded.  Any other signal of these, in any thread, goes on to the
 * process's own disposition (dispositions.h, which installs fault_on_signal
 * while a library is open).
 *
 * The runtime announces the guard region below each stack it runs kernels
 * on: a fault there, or a little below it (a frame big enough to jump over
 * the guard), is that stack's overflow rather than a bad pointer. */
#ifndef FAULT_H
#define FAULT_H

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

#define FAULT_MAX_GUARDS 16
#define FAULT_DESCRIPTION_SIZE 200
/* How far below a guard region a fault still counts as that stack's overflow. */
#define FAULT_OVERFLOW_REACH ((size_t)256 * 1024)
/* The signal that stops a core's kernel at a time limit or an interrupt. */
#define FAULT_STOP_SIGNAL SIGURG

struct fault_guard {
	const char *start;
	size_t length;
	char description[FAULT_DESCRIPTION_SIZE];
};

/* One per core. */
struct fault_context {
	sigjmp_buf resume;                   /* set with sigsetjmp before arming */
	struct fault_guard guards[FAULT_MAX_GUARDS];
	volatile sig_atomic_t guard_count;
	volatile sig_atomic_t armed;
	atomic_int stop_requested;
	/* out, after the jump: */
	volatile sig_atomic_t signal_number; /* FAULT_STOP_SIGNAL when stopped */
	void *volatile address;
	volatile sig_atomic_t overflowed_guard; /* index into guards, or -1 */
};

/* An alternate signal stack that names the fault context of the core its
 * thread runs. */
struct fault_stack;

/* Makes a fault stack; NULL when out of memory. */
struct fault_stack *fault_stack_create(void);
void fault_stack_free(struct fault_stack *stack);
/* Makes stack the calling thread's alternate signal stack; *previous (when
 * not NULL) gets the one it had.  Returns 0 or -1 with errno (EPERM: the
 * thread runs on its alternate stack now). */
int fault_stack_install(struct fault_stack *stack, stack_t *previous);
/* Puts back the calling thread's previous alternate signal stack. */
void fault_stack_restore(const stack_t *previous);
/* Names the context of the core the stack's thread runs from now on (NULL: none). */
void fault_stack_enter(struct fault_stack *stack, struct fault_context *context);

/* The library's handler of the core signals (see dispositions.h). */
void fault_on_signal(int signal_number, siginfo_t *info, void *ucontext);

/* Forgets the guard regions, the stop request and the outcome of the previous call. */
void fault_reset(struct fault_context *context);
/* Records a guard region (description non-NULL) or forgets the one at start
 * (description NULL); returns -1 when FAULT_MAX_GUARDS are in use. */
int fault_guard(struct fault_context *context, const void *start, size_t length,
                const char *description);
/* Arms the context: a fault from now on jumps to context->resume. */
void fault_arm(struct fault_context *context);
/* Disarms it: a fault is again the process's business. */
void fault_disarm(struct fault_context *context);
/* Marks the context's kernel as to be stopped (before it is armed, it is
 * then not started).  Async-signal-safe. */
void fault_mark_stop(struct fault_context *context);
/* Sends the stop signal to thread, which runs the kernel of a marked
 * context; returns 0 or an errno value.  Async-signal-safe. */
int fault_request_stop(pthread_t thread);
/* Names a recorded signal: "segmentation fault (SIGSEGV)", ... */
const char *fault_signal_text(int signal_number);

#endif
