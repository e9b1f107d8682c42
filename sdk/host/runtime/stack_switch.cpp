/* stack_switch.cpp - switch_stack_or_call_wrapper and switchBack: the
 * wrapper runs on the core stack when STACK_SIZE bytes are left on it, else
 * on a heap stack (HBM on the device) that switchBack leaves. */
#include <stdint.h>
#include <stdio.h>
#include <ucontext.h>

#include "neuron/host/violation.h"
#include "runtime.h"
#include "stack_switch.hpp"

bool switched_stack = false;

namespace neuron_host {
namespace {

struct SwitchState {
    void (*wrapper)();
    GuardedStack heap_stack;
    ucontext_t launcher_context; // where switchBack returns to
    ucontext_t heap_context;
};

SwitchState state;

void heap_entry()
{
    run_catching_exceptions([](void *) { state.wrapper(); }, nullptr);
    // The generated wrapper ends in switchBack(); on the device, returning
    // from the switched stack instead would crash.
    violation("the wrapper returned on the STACK_SIZE stack instead of calling switchBack()");
}

} // namespace

void stack_switch_reset()
{
    guarded_stack_destroy(&state.heap_stack);
    switched_stack = false;
}

} // namespace neuron_host

using namespace neuron_host;

int customop_host_switch_stack_or_call(void (*wrapper)(), size_t stack_size)
{
    const GuardedStack &core = core_stack();
    char here;
    uintptr_t position = reinterpret_cast<uintptr_t>(&here);
    uintptr_t low = reinterpret_cast<uintptr_t>(core.low);
    if (!current_call() || position < low || position >= low + core.size)
        violation("the launcher ran outside the emulated core stack");
    if (position - low >= stack_size) {
        switched_stack = false;
        wrapper();
        return 0;
    }
    char description[64];
    snprintf(description, sizeof description, "the STACK_SIZE stack (%zu bytes)", stack_size);
    if (!guarded_stack_create(&state.heap_stack, stack_size, description))
        violation("cannot allocate a STACK_SIZE stack of %zu bytes", stack_size);
    state.wrapper = wrapper;
    getcontext(&state.heap_context);
    state.heap_context.uc_stack.ss_sp = state.heap_stack.low;
    state.heap_context.uc_stack.ss_size = state.heap_stack.size;
    state.heap_context.uc_link = nullptr;
    makecontext(&state.heap_context, heap_entry, 0);
    switched_stack = true;
    swapcontext(&state.launcher_context, &state.heap_context);
    // switchBack() brought us back to the core stack.
    stack_switch_reset();
    return 0;
}

void switchBack()
{
    if (!switched_stack || !state.heap_stack.mapping)
        violation("switchBack() called without a stack switch");
    setcontext(&state.launcher_context);
    __builtin_trap();
}
