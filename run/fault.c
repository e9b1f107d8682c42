/* fault.c - turning a signal in a core's kernel into a report about that core.
 *
 * sigaltstack and SA_ONSTACK are XSI: a stack overflow leaves no stack for
 * the handler, so it must run on a stack of its own.  The handler finds
 * the core it runs for through that stack: Linux saves the thread's
 * alternate stack in the handler's ucontext, and the stacks made here
 * start with a header naming their fault context.  So the handler needs no
 * thread-local variable (which a library loaded with dlopen cannot read
 * safely in a handler) and no table of threads. */
#define _XOPEN_SOURCE 700

#include "fault.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

/* Bigger than MINSIGSTKSZ everywhere, and enough for the handler's frame
 * and a handler of the process's it passes a signal on to. */
#define ALTERNATE_STACK_SIZE ((size_t)64 * 1024)
#define STACK_MAGIC 0x636f726566617574ull /* "corefaut" */

/* At the low end of each alternate stack made here. */
struct stack_header {
	unsigned long long magic;
	struct fault_context *context;
};

static const int handled_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, FAULT_STOP_SIGNAL};
#define HANDLED_COUNT (sizeof handled_signals / sizeof handled_signals[0])

/* The process's handlers while the library's are installed, and how many
 * calls hold each group. */
static struct sigaction saved_actions[HANDLED_COUNT];
static pthread_mutex_t handlers_lock = PTHREAD_MUTEX_INITIALIZER;
static int fault_holders, stop_holders;

static _Thread_local void *thread_alternate_stack;

static struct fault_context *context_of_stack(const void *stack, size_t size)
{
	const struct stack_header *header = stack;
	if (!header || size != ALTERNATE_STACK_SIZE || header->magic != STACK_MAGIC)
		return NULL;
	return header->context;
}

static int find_overflowed_guard(const struct fault_context *context, const char *address)
{
	uintptr_t at = (uintptr_t)address;
	for (int i = 0; i < context->guard_count; i++) {
		uintptr_t start = (uintptr_t)context->guards[i].start;
		uintptr_t lowest = start > FAULT_OVERFLOW_REACH ? start - FAULT_OVERFLOW_REACH : 0;
		if (at >= lowest && at - start < context->guards[i].length)
			return i;
		if (at >= lowest && at < start)
			return i;
	}
	return -1;
}

static size_t signal_index(int signal_number)
{
	size_t i = 0;
	while (i + 1 < HANDLED_COUNT && handled_signals[i] != signal_number)
		i++;
	return i;
}

/* Whether signal_number was raised by the instruction that faulted, so
 * that returning from the handler runs the instruction again. */
static int is_synchronous_fault(int signal_number, const siginfo_t *info)
{
	return signal_number != SIGABRT && signal_number != FAULT_STOP_SIGNAL && info->si_code > 0;
}

static void set_default(int signal_number)
{
	struct sigaction fallback;
	memset(&fallback, 0, sizeof fallback);
	fallback.sa_handler = SIG_DFL;
	sigemptyset(&fallback.sa_mask);
	sigaction(signal_number, &fallback, NULL);
}

/* Gives a signal that is not about a core to the handler the process had. */
static void pass_on(int signal_number, siginfo_t *info, void *ucontext)
{
	const struct sigaction *previous = &saved_actions[signal_index(signal_number)];
	if (previous->sa_flags & SA_SIGINFO) {
		previous->sa_sigaction(signal_number, info, ucontext);
		return;
	}
	if (previous->sa_handler == SIG_IGN) {
		/* The kernel does not let a synchronous fault be ignored either. */
		if (is_synchronous_fault(signal_number, info))
			set_default(signal_number);
		return;
	}
	if (previous->sa_handler == SIG_DFL) {
		if (signal_number == FAULT_STOP_SIGNAL)
			return; /* ignored by default */
		/* The default action, now: a fault happens again on return; a sent
		 * signal is sent again, and arrives when the handler returns. */
		set_default(signal_number);
		if (!is_synchronous_fault(signal_number, info))
			raise(signal_number);
		return;
	}
	previous->sa_handler(signal_number);
}

static void on_signal(int signal_number, siginfo_t *info, void *ucontext)
{
	const ucontext_t *interrupted = ucontext;
	struct fault_context *context =
		context_of_stack(interrupted->uc_stack.ss_sp, interrupted->uc_stack.ss_size);
	if (signal_number == FAULT_STOP_SIGNAL) {
		int ours = context && context->stop_requested && info->si_code == SI_TKILL &&
		           info->si_pid == getpid();
		if (!ours) {
			pass_on(signal_number, info, ucontext);
			return;
		}
		if (!context->armed)
			return; /* the kernel ended on its own meanwhile */
		context->armed = 0;
		context->signal_number = signal_number;
		context->address = NULL;
		context->overflowed_guard = -1;
		siglongjmp(context->resume, 1);
	}
	if (!context || !context->armed) {
		pass_on(signal_number, info, ucontext);
		return;
	}
	context->armed = 0;
	context->signal_number = signal_number;
	context->address = info->si_addr;
	context->overflowed_guard = signal_number == SIGSEGV || signal_number == SIGBUS
	                                    ? find_overflowed_guard(context, info->si_addr)
	                                    : -1;
	siglongjmp(context->resume, 1);
}

/* Installs (or puts back) the handlers of handled_signals[first, end). */
static int acquire(size_t first, size_t end, int *holders)
{
	int status = 0;
	pthread_mutex_lock(&handlers_lock);
	if (*holders == 0) {
		struct sigaction action;
		memset(&action, 0, sizeof action);
		action.sa_sigaction = on_signal;
		action.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigemptyset(&action.sa_mask);
		size_t installed = first;
		for (; installed < end; installed++)
			if (sigaction(handled_signals[installed], &action, &saved_actions[installed]) != 0)
				break;
		if (installed < end) {
			int saved = errno;
			while (installed-- > first)
				sigaction(handled_signals[installed], &saved_actions[installed], NULL);
			errno = saved;
			status = -1;
		}
	}
	if (status == 0)
		++*holders;
	pthread_mutex_unlock(&handlers_lock);
	return status;
}

static void release(size_t first, size_t end, int *holders)
{
	pthread_mutex_lock(&handlers_lock);
	if (*holders > 0 && --*holders == 0)
		for (size_t i = first; i < end; i++)
			sigaction(handled_signals[i], &saved_actions[i], NULL);
	pthread_mutex_unlock(&handlers_lock);
}

/* The fault signals come first; the stop signal, last, is installed only
 * when a call has cores to stop. */
int fault_handlers_acquire(void)
{
	return acquire(0, HANDLED_COUNT - 1, &fault_holders);
}

void fault_handlers_release(void)
{
	release(0, HANDLED_COUNT - 1, &fault_holders);
}

int fault_stop_acquire(void)
{
	return acquire(HANDLED_COUNT - 1, HANDLED_COUNT, &stop_holders);
}

void fault_stop_release(void)
{
	release(HANDLED_COUNT - 1, HANDLED_COUNT, &stop_holders);
}

void fault_reset(struct fault_context *context)
{
	context->guard_count = 0;
	context->armed = 0;
	context->stop_requested = 0;
	context->signal_number = 0;
	context->address = NULL;
	context->overflowed_guard = -1;
}

int fault_thread_begin(struct fault_context *context)
{
	fault_reset(context);
	struct stack_header *header = malloc(ALTERNATE_STACK_SIZE);
	if (!header)
		return -1;
	header->magic = STACK_MAGIC;
	header->context = context;
	stack_t stack;
	memset(&stack, 0, sizeof stack);
	stack.ss_sp = header;
	stack.ss_size = ALTERNATE_STACK_SIZE;
	if (sigaltstack(&stack, NULL) != 0) {
		int saved = errno;
		free(header);
		errno = saved;
		return -1;
	}
	thread_alternate_stack = header;
	return 0;
}

void fault_thread_end(void)
{
	stack_t disable;
	memset(&disable, 0, sizeof disable);
	disable.ss_flags = SS_DISABLE;
	sigaltstack(&disable, NULL);
	free(thread_alternate_stack);
	thread_alternate_stack = NULL;
}

int fault_guard(struct fault_context *context, const void *start, size_t length,
                const char *description)
{
	int count = context->guard_count;
	if (!description) {
		for (int i = 0; i < count; i++) {
			if (context->guards[i].start == start) {
				context->guards[i] = context->guards[count - 1];
				context->guard_count = count - 1;
				break;
			}
		}
		return 0;
	}
	if (count == FAULT_MAX_GUARDS)
		return -1;
	struct fault_guard *guard = &context->guards[count];
	guard->start = start;
	guard->length = length;
	size_t kept = strlen(description);
	if (kept >= sizeof guard->description)
		kept = sizeof guard->description - 1;
	memcpy(guard->description, description, kept);
	guard->description[kept] = '\0';
	context->guard_count = count + 1; /* last, so the handler never sees a half-made entry */
	return 0;
}

void fault_arm(struct fault_context *context)
{
	context->armed = 1;
}

void fault_disarm(struct fault_context *context)
{
	context->armed = 0;
}

int fault_request_stop(struct fault_context *context, pthread_t thread)
{
	context->stop_requested = 1;
	return pthread_kill(thread, FAULT_STOP_SIGNAL);
}

const char *fault_signal_text(int signal_number)
{
	switch (signal_number) {
	case SIGSEGV: return "segmentation fault (SIGSEGV)";
	case SIGBUS: return "bus error (SIGBUS)";
	case SIGFPE: return "arithmetic exception (SIGFPE)";
	case SIGILL: return "illegal instruction (SIGILL)";
	case SIGABRT: return "abort() (SIGABRT)";
	default: return "unexpected signal";
	}
}
