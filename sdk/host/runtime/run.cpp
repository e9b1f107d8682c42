/* run.cpp - customop_host_run: one op invocation on this core's emulated
 * stack, and the way back from a violation, a fault or an exception. */
#include <cxxabi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <exception>
#include <typeinfo>

#include "neuron/host_abi.h"
#include "neuron/wrapper_api.h"
#include "core_context.h"
#include "ledger.h"
#include "runtime.h"
#include "sanitizer.h"

namespace neuron_host {
namespace {

struct RunState {
    customop_host_call *call;
    wrapper_fn launcher;
    // Kept from call to call while the size asked for stays the same: a
    // runner that calls an op thousands of times maps it once.
    GuardedStack stack;
    CoreContext host_context; // customop_host_run, on the caller's stack
    CoreContext core_context; // the launcher, on the core stack
    bool violated;
    // Here rather than in a frame: the core stack is the kernel's.
    char escaped[CUSTOMOP_HOST_ERROR_SIZE / 2];
    // With ASan: the caller's stack and its fake frames while the core
    // stack runs, and the call's reports.
    FiberStack host_stack;
    void *host_fake_stack;
    customop_host_report_sink reports;
};

RunState state;

// The core stack's only frame below the launcher: when it returns, it
// switches back to customop_host_run.
void core_entry()
{
    fiber_arrive(nullptr);
    run_catching_exceptions([](void *) {
        op_begin();
        state.launcher();
        op_end();
    }, nullptr);
    // Back to customop_host_run; this stack is done with.
    fiber_leave(nullptr, state.host_stack);
    context_jump(&state.host_context);
}

// "std::runtime_error: text", or the type alone when it is no std::exception.
void describe_exception(const std::type_info *type, const char *what)
{
    const char *name = type ? type->name() : "an exception of unknown type";
    int status = -1;
    char *readable = type ? abi::__cxa_demangle(name, nullptr, nullptr, &status) : nullptr;
    if (what)
        snprintf(state.escaped, sizeof state.escaped, "%s: %s", status == 0 ? readable : name, what);
    else
        snprintf(state.escaped, sizeof state.escaped, "%s", status == 0 ? readable : name);
    free(readable);
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

// A call the runner abandoned (a fault, a kernel stopped at a time limit)
// left its state behind; nothing runs on it any more.  Its call is gone,
// so nothing is announced to it; what the kernel held of the TCM pool goes
// back, as after a violation.
void clean_up_abandoned_run()
{
    state.call = nullptr;
    signal_mask_forget();
    stack_switch_reset();
    marshal_reset();
    hbm_release_run();
    tcm_release_run();
}

// customop_host_call.describe_fault: a fault in memory the runtime manages
// for the kernel.
int describe_runtime_fault(const void *address, char *text, size_t size)
{
    return tcm_describe_fault(address, text, size) || windows_describe_fault(address, text, size) ||
           hbm_describe_fault(address, text, size);
}

size_t round_up_16(size_t size)
{
    return (size + 15) / 16 * 16;
}

// Tells the caller of the guard region below the core stack (description
// NULL: that it is gone), as guarded_stack_create and _destroy do.
void announce_core_stack(customop_host_call *call, const char *description)
{
    if (call->guard)
        call->guard(call->context, state.stack.mapping, static_cast<size_t>(state.stack.low - state.stack.mapping),
                    description);
}

__attribute__((format(printf, 2, 3))) bool fail(customop_host_call *call, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    set_error(call, format, arguments);
    va_end(arguments);
    return false;
}

// Argument index + 1 ("argument 2"), or the output for index -1.
struct TensorName {
    char text[32];
    explicit TensorName(int index)
    {
        if (index < 0)
            snprintf(text, sizeof text, "the output");
        else
            snprintf(text, sizeof text, "argument %d", index + 1);
    }
};

bool check_tensor(customop_host_call *call, const customop_host_tensor &tensor, int index)
{
    if (!c10::isDeviceType(tensor.dtype))
        return fail(call, "%s has dtype %d, which is not one of the device's 8 dtypes", TensorName(index).text,
                    tensor.dtype);
    if (tensor.rank < 0 || tensor.rank > CUSTOMOP_HOST_MAX_RANK)
        return fail(call, "%s has rank %d (at most %d)", TensorName(index).text, tensor.rank,
                    CUSTOMOP_HOST_MAX_RANK);
    for (int d = 0; d < tensor.rank; d++)
        if (tensor.sizes[d] < 0)
            return fail(call, "%s has a negative size", TensorName(index).text);
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
    for (int i = 0; i < call->arg_count; i++)
        if (!check_tensor(call, call->args[i], i))
            return false;
    return check_tensor(call, *call->output, -1);
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

void run_catching_exceptions(void (*function)(void *), void *argument)
{
    bool escaped = false;
    try {
        function(argument);
    } catch (abi::__forced_unwind &) {
        throw;
    } catch (const std::exception &error) {
        describe_exception(&typeid(error), error.what());
        escaped = true;
    } catch (...) {
        describe_exception(abi::__cxa_current_exception_type(), nullptr);
        escaped = true;
    }
    // Out of the handler first, so the exception is freed before the op is
    // abandoned.
    if (escaped)
        violation("the kernel threw a C++ exception that it did not catch: %s", state.escaped);
}

void abandon_run()
{
    state.violated = true;
    fiber_leave(nullptr, state.host_stack);
    context_jump(&state.host_context);
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
    if (state.call)
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
    size_t size = call->core_stack_size ? call->core_stack_size
                                         : static_cast<size_t>(CUSTOMOP_HOST_DEFAULT_CORE_STACK);
    state.call = call;
    if (state.stack.mapping && state.stack.size == round_up_16(size)) {
        announce_core_stack(call, state.stack.description);
    } else {
        char description[64];
        snprintf(description, sizeof description, "the core stack (%zu bytes)", size);
        guarded_stack_destroy(&state.stack);
        if (!guarded_stack_create(&state.stack, size, description)) {
            state.call = nullptr;
            fail(call, "cannot map a core stack of %zu bytes", size);
            return -1;
        }
    }
    // Every time: the stack's top is used up by the call.
    context_prepare(&state.core_context, state.stack.low, state.stack.size, core_entry);
    tcm_begin_run();
    call->describe_fault = describe_runtime_fault;
    warnings_reset();
    state.violated = false;
    FiberStack core = fiber_stack(state.stack.low, state.stack.size);
    stack_unpoison(core);
    state.host_stack = thread_stack();
    reports_watch(&state.reports);
    ledger_begin(call);
    fiber_leave(&state.host_fake_stack, core);
    // Back here when the launcher returns, or from abandon_run().
    context_swap(&state.host_context, &state.core_context);
    fiber_arrive(state.host_fake_stack);
    signal_mask_restore();
    ledger_end(call);
    int reports = reports_count(&state.reports);
    if (state.violated) {
        stack_switch_reset();
        hbm_release_run();
        tcm_release_run();
    }
    // ASan reported and let the kernel go on to its end (or to a
    // violation): the first report is the op's error.
    if (reports) {
        int users = 0;
        const char *file = reports_file(&users);
        if (file && users)
            fail(call, "%s (%d AddressSanitizer report%s during the op, in %s: the log_path of ASAN_OPTIONS)",
                 state.reports.summary, reports, reports == 1 ? "" : "s", file);
        else if (file && reports > 1)
            fail(call, "%s (%d AddressSanitizer reports during the op; the first is on stderr, with its stack, and "
                 "the others are in %s)", state.reports.summary, reports, file);
        else
            fail(call, "%s (%d AddressSanitizer report%s during the op; the first is on stderr, with its stack)",
                 state.reports.summary, reports, reports == 1 ? "" : "s");
    }
    announce_core_stack(call, nullptr);
    marshal_reset();
    state.call = nullptr;
    return state.violated || reports ? -1 : 0;
}

// When the library is unloaded: the core stack it kept.
__attribute__((destructor)) static void unmap_core_stack()
{
    if (!state.call)
        guarded_stack_destroy(&state.stack);
}
