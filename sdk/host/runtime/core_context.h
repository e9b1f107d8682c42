/* core_context.h - the switches between the caller's stack and the stacks
 * the runtime runs a kernel on (the core stack, the STACK_SIZE stack).
 *
 * On x86-64 and AArch64 a switch saves and loads the registers that a
 * function call keeps and the floating-point control state, and nothing
 * else: not the signal mask, which the C library's swapcontext() and
 * setcontext() set by a system call at every switch although the runtime's
 * contexts never change it (a kernel's own changes to the mask go back at
 * the end of the call: signals.cpp).  Elsewhere a switch is the C library's
 * ucontext functions. */
#ifndef CUSTOMOP_HOST_CORE_CONTEXT_H
#define CUSTOMOP_HOST_CORE_CONTEXT_H

#include <stddef.h>

#if defined(__x86_64__) || defined(__aarch64__)
#define CUSTOMOP_HOST_OWN_SWITCH 1
#else
#include <ucontext.h>
#endif

namespace neuron_host {

// Where a stack left off.
struct CoreContext {
#ifdef CUSTOMOP_HOST_OWN_SWITCH
    void *stack_pointer; // what the switch saved is there
#else
    ucontext_t context;
#endif
};

// Makes to run entry() from the top of the stack [low, low + size) when it
// is next switched to.  entry never returns: it ends with context_jump.
void context_prepare(CoreContext *to, char *low, size_t size, void (*entry)());

// Saves this stack in from and continues where to left off; returns when
// something switches back to from.
void context_swap(CoreContext *from, CoreContext *to);

// Continues where to left off; this stack is left for good.
[[noreturn]] void context_jump(CoreContext *to);

} // namespace neuron_host

#endif
