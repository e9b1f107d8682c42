/* fault.c - turning a core's SIGSEGV, SIGBUS or SIGFPE into a report about that core.
 *
 * sigaltstack and SA_ONSTACK are XSI: a stack overflow leaves no stack for
 * the handler, so it must run on a stack of its own. */
#define _XOPEN_SOURCE 700

#include "fault.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Bigger than MINSIGSTKSZ everywhere, and enough for the handler's frame. */
#define ALTERNATE_STACK_SIZE (64 * 1024)

static const int handled_signals[] = {SIGSEGV, SIGBUS, SIGFPE};

static _Thread_local struct fault_context *thread_context;
static _Thread_local void *thread_alternate_stack;

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

static void on_fault(int signal_number, siginfo_t *info, void *ucontext)
{
	(void)ucontext;
	struct fault_context *context = thread_context;
	if (!context || !context->armed) {
		/* Not a core running an op: let the default action end the process. */
		struct sigaction fatal;
		memset(&fatal, 0, sizeof fatal);
		fatal.sa_handler = SIG_DFL;
		sigemptyset(&fatal.sa_mask);
		sigaction(signal_number, &fatal, NULL);
		raise(signal_number);
		return;
	}
	context->armed = 0;
	context->signal_number = signal_number;
	context->address = info->si_addr;
	context->overflowed_guard = signal_number == SIGFPE
	                                    ? -1
	                                    : find_overflowed_guard(context, info->si_addr);
	siglongjmp(context->resume, 1);
}

int fault_install_handlers(void)
{
	struct sigaction action;
	memset(&action, 0, sizeof action);
	action.sa_sigaction = on_fault;
	action.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&action.sa_mask);
	for (size_t i = 0; i < sizeof handled_signals / sizeof handled_signals[0]; i++)
		if (sigaction(handled_signals[i], &action, NULL) != 0)
			return -1;
	return 0;
}

int fault_thread_begin(struct fault_context *context)
{
	context->guard_count = 0;
	context->armed = 0;
	context->signal_number = 0;
	context->address = NULL;
	context->overflowed_guard = -1;
	thread_alternate_stack = malloc(ALTERNATE_STACK_SIZE);
	if (!thread_alternate_stack)
		return -1;
	stack_t stack;
	memset(&stack, 0, sizeof stack);
	stack.ss_sp = thread_alternate_stack;
	stack.ss_size = ALTERNATE_STACK_SIZE;
	if (sigaltstack(&stack, NULL) != 0) {
		int saved = errno;
		free(thread_alternate_stack);
		thread_alternate_stack = NULL;
		errno = saved;
		return -1;
	}
	thread_context = context;
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
	thread_context = NULL;
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

const char *fault_signal_text(int signal_number)
{
	switch (signal_number) {
	case SIGSEGV: return "segmentation fault (SIGSEGV)";
	case SIGBUS: return "bus error (SIGBUS)";
	case SIGFPE: return "arithmetic exception (SIGFPE), such as an integer division by zero";
	default: return "unexpected signal";
	}
}
