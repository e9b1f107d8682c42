/* fault.c - turning a signal in a core's kernel into a report about that core.
 *
 * sigaltstack and SA_ONSTACK are XSI: a stack overflow leaves no stack for
 * the handler, so it must run on a stack of its own.  The handler finds
 * the core it runs for through that stack: Linux saves the thread's
 * alternate stack in the handler's ucontext, and the stacks made here
 * start with a header naming the fault context of the core their thread
 * runs.  So the handler needs no thread-local variable (which a library
 * loaded with dlopen cannot read safely in a handler) and no table of
 * threads, and any thread may run any core. */
#define _XOPEN_SOURCE 700

#include "fault.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "dispositions.h"

/* Bigger than MINSIGSTKSZ everywhere, and enough for the handler's frame
 * and a handler of the process's it passes a signal on to. */
#define ALTERNATE_STACK_SIZE ((size_t)64 * 1024)
#define STACK_MAGIC 0x636f726566617574ull /* "corefaut" */

/* At the low end of each fault stack. */
struct fault_stack {
	unsigned long long magic;
	struct fault_context *_Atomic context;
};

static struct fault_context *context_of_stack(const stack_t *stack)
{
	const struct fault_stack *header = stack->ss_sp;
	if ((stack->ss_flags & SS_DISABLE) || !header || stack->ss_size != ALTERNATE_STACK_SIZE ||
	    header->magic != STACK_MAGIC)
		return NULL;
	return atomic_load(&header->context);
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

/* Gives the signal to the process's disposition; what that does in this
 * handler leaves errno as it was for the code the signal interrupted. */
static void pass_on(int signal_number, siginfo_t *info, void *ucontext)
{
	int saved_errno = errno;
	dispositions_pass_on(signal_number, info, ucontext);
	errno = saved_errno;
}

void fault_on_signal(int signal_number, siginfo_t *info, void *ucontext)
{
	const ucontext_t *interrupted = ucontext;
	struct fault_context *context = context_of_stack(&interrupted->uc_stack);
	if (signal_number == FAULT_STOP_SIGNAL) {
		int ours = context && atomic_load(&context->stop_requested) &&
		           info->si_code == SI_TKILL && info->si_pid == getpid();
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

struct fault_stack *fault_stack_create(void)
{
	struct fault_stack *stack = malloc(ALTERNATE_STACK_SIZE);
	if (!stack)
		return NULL;
	stack->magic = STACK_MAGIC;
	atomic_init(&stack->context, NULL);
	return stack;
}

void fault_stack_free(struct fault_stack *stack)
{
	free(stack);
}

int fault_stack_install(struct fault_stack *stack, stack_t *previous)
{
	stack_t ours;
	memset(&ours, 0, sizeof ours);
	ours.ss_sp = stack;
	ours.ss_size = ALTERNATE_STACK_SIZE;
	return sigaltstack(&ours, previous);
}

void fault_stack_restore(const stack_t *previous)
{
	stack_t back = *previous;
	/* Linux reports SS_ONSTACK only while on the stack, which the caller is
	 * not; the flag is not one sigaltstack takes. */
	back.ss_flags &= ~SS_ONSTACK;
	sigaltstack(&back, NULL);
}

void fault_stack_enter(struct fault_stack *stack, struct fault_context *context)
{
	atomic_store(&stack->context, context);
}

void fault_reset(struct fault_context *context)
{
	context->guard_count = 0;
	context->armed = 0;
	atomic_store(&context->stop_requested, 0);
	context->signal_number = 0;
	context->address = NULL;
	context->overflowed_guard = -1;
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

void fault_mark_stop(struct fault_context *context)
{
	atomic_store(&context->stop_requested, 1);
}

int fault_request_stop(pthread_t thread)
{
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
