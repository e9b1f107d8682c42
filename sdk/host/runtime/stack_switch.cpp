/* stack_switch.cpp - switch_stack_or_call_wrapper and switchBack: the
 * wrapper runs on the core stack when STACK_SIZE bytes are left on it, else
 * on a heap stack (HBM on the device) that switchBack leaves. */
#include <stdint.h>
#include <stdio.h>

#include "neuron/host/violation.h"
#include "core_context.h"
#include "elements.h"
#include "runtime.h"
#include "sanitizer.h"
#include "stack_switch.hpp"

bool switched_stack = false;

namespace neuron_host {
namespace {

struct SwitchState {
    void (*wrapper)();
    GuardedStack heap_stack;
    CoreContext launcher_context; // where switchBack returns to
    CoreContext heap_context;
    void *core_fake_stack;       // with ASan: the core stack's fake frames meanwhile
};

SwitchState state;

void heap_entry()
{
    fiber_arrive(nullptr);
    run_catching_exceptions([](void *) { state.wrapper(); }, nullptr);
    // The generated wrapper ends in switchBack(); on the device, returning
    // from the switched stack instead would crash.
    violation("the wrapper returned on the STACK_SIZE stack instead of calling switchBack()");
}

// The generated wrapper ends in "if (switched_stack) switchBack();" inside
// the scope of its local `output`, and switchBack() never returns, so the
// result's destructor never runs: its handle (and the data it owns) leak,
// on the device as here.  The wrapper's text is fixed, so the emulator says
// so instead.
void warn_result_leak(const at::Tensor &result)
{
    if (!result.defined())
        return;
    const TensorImpl &tensor = TensorInternals::impl(result);
    if (tensor.owns_data)
        warning("the op's result leaks on every call that switches stacks: switchBack() skips the destructor of the "
                "wrapper's `output`, so the %s %s tensor of %zu bytes the kernel made is never freed (the device "
                "leaks it too); see run-custom-op(1), THE STACK SWITCH", c10::toString(tensor.dtype),
                format_sizes(tensor.sizes).c_str(), tensor.byte_size());
    else
        warning("the op's result leaks on every call that switches stacks: switchBack() skips the destructor of the "
                "wrapper's `output`, so the tensor's handle is never freed (the device leaks it too); see "
                "run-custom-op(1), THE STACK SWITCH");
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
    context_prepare(&state.heap_context, state.heap_stack.low, state.heap_stack.size, heap_entry);
    switched_stack = true;
    FiberStack heap = fiber_stack(state.heap_stack.low, state.heap_stack.size);
    stack_unpoison(heap);
    fiber_leave(&state.core_fake_stack, heap);
    context_swap(&state.launcher_context, &state.heap_context);
    // switchBack() brought us back to the core stack.
    fiber_arrive(state.core_fake_stack);
    stack_switch_reset();
    return 0;
}

void switchBack()
{
    if (!switched_stack || !state.heap_stack.mapping)
        violation("switchBack() called without a stack switch");
    if (const at::Tensor *result = marshal_returned_result())
        warn_result_leak(*result);
    fiber_leave(nullptr, fiber_stack(core_stack().low, core_stack().size));
    context_jump(&state.launcher_context);
}
