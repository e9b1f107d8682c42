/* neuron/host/violation.h - how the SDK reports a broken device rule. */
#ifndef NEURON_HOST_VIOLATION_H
#define NEURON_HOST_VIOLATION_H

namespace neuron_host {

// Where the device asserts and aborts the op, the emulator stops the op too:
// the message (prefixed with the core and the op) becomes the error of
// customop_host_run, which returns -1.  Never returns to its caller.
[[noreturn]] void violation(const char *format, ...) __attribute__((format(printf, 1, 2)));

// Where the device would go on but the op is likely wrong on it (or the
// emulator is stricter than the device documents), the op goes on and the
// message (prefixed with the core and the op) goes to the call's warn
// callback.  The same text is given at most once per op call.
void warning(const char *format, ...) __attribute__((format(printf, 1, 2)));

} // namespace neuron_host

#endif
