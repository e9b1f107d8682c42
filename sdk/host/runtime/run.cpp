/* run.cpp - customop_host_run: one op invocation on this core's emulated
 * stack, and the way back from a violation. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

#include "neuron/host_abi.h"
#include "neuron/wrapper_api.h"
#include "runtime.h"

namespace neuron_host {
namespace {

struct RunState {
    customop_host_call *call;
    wrapper_fn launcher;
    GuardedStack stack;
    ucontext_t host_context; // customop_host_run, on the caller's stack
    ucontext_t core_context; // the launcher, on the core stack
    bool violated;
};

RunState state;

// The core stack's only frame below the launcher: when it returns, uc_link
// resumes customop_host_run.
void core_entry()
{
    op_begin();
    state.launcher();
    op_end();
}

wrapper_fn find_op(const char *name)
{
    int count = get_func_cnt();
    for (int i = 0; i < count; i++) {
        const char *registered = get_func_name(i);
        if (registered && strcmp(registered, name) == 0)
            return get_func_ptr(i);
    }
    return nullptr;
}

// A call the runner abandoned after a fault in a guard region left its
// stacks and state behind; nothing runs on them any more.
void clean_up_abandoned_run()
{
    guarded_stack_destroy(&state.stack);
    stack_switch_reset();
    marshal_reset();
    state.call = nullptr;
}

__attribute__((format(printf, 2, 3))) bool fail(customop_host_call *call, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    set_error(call, format, arguments);
    va_end(arguments);
    return false;
}

bool check_tensor(customop_host_call *call, const customop_host_tensor &tensor, const char *which)
{
    if (!c10::isDeviceType(tensor.dtype))
        return fail(call, "%s has dtype %d, which is not one of the device's 8 dtypes", which, tensor.dtype);
    if (tensor.rank < 0 || tensor.rank > CUSTOMOP_HOST_MAX_RANK)
        return fail(call, "%s has rank %d (at most %d)", which, tensor.rank, CUSTOMOP_HOST_MAX_RANK);
    for (int d = 0; d < tensor.rank; d++)
        if (tensor.sizes[d] < 0)
            return fail(call, "%s has a negative size", which);
    return true;
}

// The host's side of the contract, checked before any kernel code runs.
bool check_call(customop_host_call *call)
{
    if (call->abi_version != CUSTOMOP_HOST_ABI_VERSION)
        return fail(call, "host ABI version %d, but this runtime speaks version %d", call->abi_version,
                    CUSTOMOP_HOST_ABI_VERSION);
    if (call->arg_count > 10)
        return fail(call, "too many arguments: %d given, the device passes at most 10", call->arg_count);
    if (call->arg_count < 0 || (call->arg_count > 0 && !call->args))
        return fail(call, "bad argument list (%d arguments)", call->arg_count);
    if (!call->output)
        return fail(call, "no output tensor given");
    for (int i = 0; i < call->arg_count; i++) {
        char which[32];
        snprintf(which, sizeof which, "argument %d", i + 1);
        if (!check_tensor(call, call->args[i], which))
            return false;
    }
    return check_tensor(call, *call->output, "the output");
}

} // namespace

customop_host_call *current_call()
{
    return state.call;
}

const GuardedStack &core_stack()
{
    return state.stack;
}

void abandon_run()
{
    state.violated = true;
    setcontext(&state.host_context);
    // setcontext returns only when the context is unusable, which cannot
    // happen for one swapcontext saved; there is nowhere else to go.
    __builtin_trap();
}

} // namespace neuron_host

using namespace neuron_host;

// An archive member is linked only when something refers to it.  Every core
// library has this file (customop_host_run is what the runner calls), so it
// refers to the rest of the host ABI and to the kernel's printf, which must
// be the runtime's and not libc's.
using any_function = void (*)();
__attribute__((used)) static const any_function linked_with_run[] = {
    reinterpret_cast<any_function>(customop_host_register),
    reinterpret_cast<any_function>(customop_host_linked_core),
    reinterpret_cast<any_function>(printf),
};

CUSTOMOP_HOST_EXPORT int customop_host_run(customop_host_call *call)
{
    if (state.stack.mapping || state.call)
        clean_up_abandoned_run();
    call->error[0] = '\0';
    if (!call->op)
        call->op = "(unnamed)";
    if (!check_call(call))
        return -1;
    state.launcher = find_op(call->op);
    if (!state.launcher) {
        fail(call, "no op of that name in this library");
        return -1;
    }
    size_t size = call->core_stack_size ? call->core_stack_size : CUSTOMOP_HOST_DEFAULT_CORE_STACK;
    char description[64];
    snprintf(description, sizeof description, "the core stack (%zu bytes)", size);
    state.call = call;
    if (!guarded_stack_create(&state.stack, size, description)) {
        state.call = nullptr;
        fail(call, "cannot map a core stack of %zu bytes", size);
        return -1;
    }
    tcm_begin_run();
    warnings_reset();
    state.violated = false;
    getcontext(&state.core_context);
    state.core_context.uc_stack.ss_sp = state.stack.low;
    state.core_context.uc_stack.ss_size = state.stack.size;
    state.core_context.uc_link = &state.host_context;
    makecontext(&state.core_context, core_entry, 0);
    // Back here when the launcher returns, or from abandon_run().
    swapcontext(&state.host_context, &state.core_context);
    if (state.violated) {
        stack_switch_reset();
        tcm_release_run();
    }
    guarded_stack_destroy(&state.stack);
    marshal_reset();
    state.call = nullptr;
    return state.violated ? -1 : 0;
}
