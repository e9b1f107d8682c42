/* console.h - where run-custom-op shows what the cores printed and warned.
 *
 * As on the device, only core 0's output is the op's output: it goes to
 * stdout as printed.  Other cores' output is still worth seeing on the host,
 * so it goes to stderr whole lines at a time, each prefixed "[core N] ",
 * after a one-time note that the device would not show it.  Warnings go to
 * stderr as "run-custom-op: warning: core N: op NAME: ...". */
#ifndef CONSOLE_H
#define CONSOLE_H

#include <stddef.h>

#include "runcustomop.h"

/* The print callback of libruncustomop: all that core printed in one call.
 * context points to the library (an rco_library *): with
 * NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES unset, the first output is
 * preceded by a note that the device would print nothing. */
void console_print(void *context, int core, const char *text, size_t length);
/* The errno of the first write of core 0's output to stdout that failed, or 0. */
int console_stdout_error(void);
/* The warn callback of libruncustomop. */
void console_warn(void *context, int core, const char *text);

#endif
