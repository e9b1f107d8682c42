/* stack_switch.hpp - the launcher's stack switch, as on the device: when the
 * core stack has less than STACK_SIZE bytes left, the wrapper runs on a heap
 * stack of STACK_SIZE bytes (HBM on the device) and comes back through
 * switchBack(). */
#ifndef STACK_SWITCH_HPP
#define STACK_SWITCH_HPP

#include <stddef.h>
#include <stdint.h>

#define MAX_STACK_SIZE 0x400000
extern bool switched_stack;
#ifndef STACK_SIZE
#define STACK_SIZE 4196
#endif
static_assert(STACK_SIZE <= MAX_STACK_SIZE, "STACK_SIZE cannot be greater than 4MB.");
// The device's header lets a negative size through, which its uint32_t
// parameter turns into 4 GiB; the host refuses it.
static_assert(STACK_SIZE >= 0, "STACK_SIZE cannot be negative.");

// The device's declaration.  A host function pointer does not fit in
// uint32_t, so the generated call below is turned into one of
// customop_host_switch_stack_or_call by the macro that follows.
int (switch_stack_or_call_wrapper)(uint32_t wrapper_fn_ptr, uint32_t stack_size = STACK_SIZE);

// Runs wrapper directly when the current core stack has stack_size bytes
// left, else on a new heap stack of stack_size bytes; returns 0.
int customop_host_switch_stack_or_call(void (*wrapper)(), size_t stack_size);

// The generated launcher passes "(uint32_t)name_wrapper": dropping the
// parenthesised cast leaves the function itself.  STACK_SIZE is read where
// wrapper.cpp expands the call, so -DSTACK_SIZE in the user's cflags counts.
#define CUSTOMOP_HOST_DROP_CAST(type)
#define switch_stack_or_call_wrapper(cast_and_function) \
    customop_host_switch_stack_or_call(CUSTOMOP_HOST_DROP_CAST cast_and_function, STACK_SIZE)

// The generated wrapper's last act after a switch: back to the launcher's
// stack and registers; the launcher then frees the heap stack.
[[noreturn]] void switchBack();

#endif
