/* violation.cpp - a broken device rule ends the op with a message naming the
 * core, the op and the rule; a warning names them too and lets the op go on. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "neuron/host/violation.h"
#include "runtime.h"

namespace neuron_host {
namespace {

// The warnings given during the call in progress, by a hash of their text:
// a kernel that warns in a loop warns once.  Past the table's size, further
// distinct warnings are given every time (too many to tell apart cheaply).
const int warnings_remembered = 64;

struct WarningState {
    uint64_t hashes[warnings_remembered];
    int count;
};

WarningState warnings_given;

uint64_t text_hash(const char *text)
{
    uint64_t hash = 14695981039346656037ull; // FNV-1a
    for (const unsigned char *p = reinterpret_cast<const unsigned char *>(text); *p; p++)
        hash = (hash ^ *p) * 1099511628211ull;
    return hash;
}

// True the first time text is seen since warnings_reset.
bool first_time(const char *text)
{
    uint64_t hash = text_hash(text);
    for (int i = 0; i < warnings_given.count; i++)
        if (warnings_given.hashes[i] == hash)
            return false;
    if (warnings_given.count < warnings_remembered)
        warnings_given.hashes[warnings_given.count++] = hash;
    return true;
}

// How messages name the call's op.
const char *label_of(const customop_host_call *call)
{
    return call->label ? call->label : call->op;
}

} // namespace

void warnings_reset()
{
    warnings_given.count = 0;
}

void warning(const char *format, ...)
{
    customop_host_call *call = current_call();
    char text[CUSTOMOP_HOST_ERROR_SIZE];
    int prefix = call ? snprintf(text, sizeof text, "core %d: op %s: ", core_id(), label_of(call))
                      : snprintf(text, sizeof text, "core %d: ", core_id());
    if (prefix < 0 || static_cast<size_t>(prefix) >= sizeof text)
        return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(text + prefix, sizeof text - static_cast<size_t>(prefix), format, arguments);
    va_end(arguments);
    if (call && !first_time(text))
        return;
    if (call && call->warn)
        call->warn(call->context, core_id(), text);
    else
        fprintf(stderr, "warning: %s\n", text);
}

void set_error(customop_host_call *call, const char *format, va_list arguments)
{
    int prefix = snprintf(call->error, sizeof call->error, "core %d: op %s: ", core_id(), label_of(call));
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
