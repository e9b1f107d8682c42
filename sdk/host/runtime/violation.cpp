/* violation.cpp - a broken device rule ends the op with a message naming the
 * core, the op and the rule. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "neuron/host/violation.h"
#include "runtime.h"

namespace neuron_host {

void set_error(customop_host_call *call, const char *format, va_list arguments)
{
    int prefix = snprintf(call->error, sizeof call->error, "core %d: op %s: ", core_id(), call->op);
    if (prefix >= 0 && static_cast<size_t>(prefix) < sizeof call->error)
        vsnprintf(call->error + prefix, sizeof call->error - static_cast<size_t>(prefix), format, arguments);
}

void violation(const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    customop_host_call *call = current_call();
    if (!call) {
        // Kernel code run outside any op (a static constructor, say) has no
        // call to fail and nothing to unwind to.
        fprintf(stderr, "core %d: ", core_id());
        vfprintf(stderr, format, arguments);
        fputc('\n', stderr);
        abort();
    }
    set_error(call, format, arguments);
    va_end(arguments);
    abandon_run();
}

} // namespace neuron_host
