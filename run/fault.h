/* fault.h - turning a core's SIGSEGV, SIGBUS or SIGFPE into a report about that core.
 *
 * Each core thread runs the op with its fault context armed; a fault then
 * jumps back to the sigsetjmp in the thread's entry with what happened
 * recorded, and the thread reports it.  The runtime announces the guard
 * region below each stack it runs kernels on: a fault there, or a little
 * below it (a frame big enough to jump over the guard), is that stack's
 * overflow rather than a bad pointer. */
#ifndef FAULT_H
#define FAULT_H

#include <setjmp.h>
#include <signal.h>
#include <stddef.h>

#define FAULT_MAX_GUARDS 16
#define FAULT_DESCRIPTION_SIZE 200
/* How far below a guard region a fault still counts as that stack's overflow. */
#define FAULT_OVERFLOW_REACH (256 * 1024)

struct fault_guard {
	const char *start;
	size_t length;
	char description[FAULT_DESCRIPTION_SIZE];
};

/* One per core thread. */
struct fault_context {
	sigjmp_buf resume;                   /* set with sigsetjmp(resume, 1) before arming */
	struct fault_guard guards[FAULT_MAX_GUARDS];
	volatile sig_atomic_t guard_count;
	volatile sig_atomic_t armed;
	/* out, after the jump: */
	volatile sig_atomic_t signal_number;
	void *volatile address;
	volatile sig_atomic_t overflowed_guard; /* index into guards, or -1 */
};

/* Installs the process's handlers (SA_ONSTACK); returns 0 or -1 with errno. */
int fault_install_handlers(void);
/* Gives the calling thread an alternate signal stack and binds context to
 * it; returns 0 or -1 with errno. */
int fault_thread_begin(struct fault_context *context);
/* Unbinds the calling thread and frees its alternate signal stack. */
void fault_thread_end(void);
/* Records a guard region (description non-NULL) or forgets the one at start
 * (description NULL); returns -1 when FAULT_MAX_GUARDS are in use. */
int fault_guard(struct fault_context *context, const void *start, size_t length,
                const char *description);
/* Arms the context: a fault from now on jumps to context->resume. */
void fault_arm(struct fault_context *context);
/* Disarms it: a fault is again fatal to the process. */
void fault_disarm(struct fault_context *context);
/* Describes the recorded signal: "segmentation fault", "bus error", ... */
const char *fault_signal_text(int signal_number);

#endif
