/* runtime.h - what the runtime's files share (not part of the SDK's API).
 *
 * Every core library links its own copy of the runtime, so the state here is
 * per core, as each core's image has its own on the device.  It includes no
 * C++ library header: print.cpp must not see <stdio.h> (see there). */
#ifndef CUSTOMOP_HOST_RUNTIME_H
#define CUSTOMOP_HOST_RUNTIME_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "neuron/host_abi.h"

// The runtime is compiled with hidden visibility; only host_abi.h's
// functions are what a core library exports.
#define CUSTOMOP_HOST_EXPORT __attribute__((visibility("default")))

namespace neuron_host {

// run.cpp: the call in progress on this core (NULL outside one), and the
// way out of it after a violation (the error is already written).
customop_host_call *current_call();
[[noreturn]] void abandon_run();

// violation.cpp: writes "core N: op NAME: " and the formatted rule to
// call->error.
void set_error(customop_host_call *call, const char *format, va_list arguments);

// violation.cpp: forgets the warnings given, so that each call warns anew.
void warnings_reset();

// neuron_utils.cpp: the core id as the kernel sees it (0 in a single-core
// build) and whether this is one of the eight libraries of a multicore build.
int core_id();
bool multicore_build();

// stacks.cpp: a stack of at least size bytes with an inaccessible guard
// region below it, announced to call->guard while it exists.
struct GuardedStack {
    char *mapping;       // NULL when there is no stack
    size_t mapping_size;
    char *low;           // the lowest usable byte
    size_t size;         // usable bytes (size rounded up to 16)
    char description[64];
};
// Maps the stack and announces its guard; false when the memory is missing.
bool guarded_stack_create(GuardedStack *stack, size_t size, const char *description);
// Withdraws the guard announcement and unmaps (nothing if there is no stack).
void guarded_stack_destroy(GuardedStack *stack);

// run.cpp: the emulated core stack of the call in progress.
const GuardedStack &core_stack();

// run.cpp: calls function(argument); a C++ exception that escapes it ends
// the op with a violation naming the exception.  The unwinder cannot cross
// from one stack to another, so the entry of each stack kernel code runs on
// (the core stack, the STACK_SIZE stack) goes through here.
void run_catching_exceptions(void (*function)(void *), void *argument);

// stack_switch.cpp: frees a heap stack left behind when a violation ended
// the op while the wrapper ran on it.
void stack_switch_reset();

// marshal.cpp: forgets the cursor and the output of an abandoned call.
void marshal_reset();

// tcm.cpp: each run gets a serial number; after a violation, the blocks
// allocated during that run go back to the pool (its destructors never ran).
void tcm_begin_run();
void tcm_release_run();

// print.cpp: sends text to call->print (or stdout outside a call).
void print_text(const char *text, size_t length);

} // namespace neuron_host

#endif
