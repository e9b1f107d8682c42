/* assert.cpp - a failed assert() in a kernel: on the device an assertion
 * aborts the op, and the host sees an error from GPSIMD; here it ends the op
 * with a violation that quotes the assertion, instead of aborting the
 * process that runs all the cores.  Linked into each core library
 * (-Wl,-Bsymbolic binds the kernel's calls to it), as printf is. */
#include "neuron/host/violation.h"
#include "runtime.h"

// NOLINTNEXTLINE(bugprone-reserved-identifier): glibc's assert() calls it by this name
extern "C" [[noreturn]] void __assert_fail(const char *assertion, const char *file, unsigned int line,
                                           const char *function)
{
    neuron_host::violation("assertion failed: %s (%s:%u, in %s)", assertion, file, line, function);
}
