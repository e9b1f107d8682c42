/* core_output.h - what one core printed and warned during a call, kept until it ends.
 *
 * printf output goes into a buffer of the core, as on the device
 * (NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES bytes): when the kernel prints
 * more, the oldest output is overwritten, and what is handed over starts
 * with a line saying how many bytes were lost.  Warnings are kept in a
 * fixed space; past it, one last warning says how many were dropped.
 * Only the core's own thread writes during a call, and only the caller
 * reads after it, so nothing here takes a lock. */
#ifndef CORE_OUTPUT_H
#define CORE_OUTPUT_H

#include <stddef.h>

/* Room before the buffer for the line about lost bytes. */
#define CORE_OUTPUT_LOSS_ROOM 192
#define CORE_OUTPUT_WARNING_SPACE 8192

struct core_output {
	long limit;                 /* the buffer's size; 0: nothing kept; -1: grows to the unset limit */
	char *memory;               /* CORE_OUTPUT_LOSS_ROOM bytes, then the buffer */
	size_t capacity;            /* the buffer's size now (a power of two, or 0) */
	unsigned long long printed; /* bytes printed in this call */
	char warnings[CORE_OUTPUT_WARNING_SPACE]; /* NUL-terminated, one after another */
	size_t warnings_used;
	int warnings_dropped;
};

/* Sets output up for limit (see above); returns 0, or -1 when out of memory. */
int core_output_init(struct core_output *output, long limit);
/* Forgets what the previous call printed and warned. */
void core_output_reset(struct core_output *output);
/* Keeps length bytes the kernel printed. */
void core_output_print(struct core_output *output, const char *text, size_t length);
/* Keeps a warning. */
void core_output_warn(struct core_output *output, const char *text);
/* All that was printed in this call, oldest first, after the line about
 * lost bytes if any; sets *length (0 when nothing was printed).  Valid
 * until the next call of any of these. */
const char *core_output_printed(struct core_output *output, size_t *length);
/* The warning kept at *at (0: the first), advancing *at to the next; NULL
 * after the last. */
const char *core_output_next_warning(const struct core_output *output, size_t *at);
/* Calls each(context, text) with the line about the warnings dropped, if
 * any (prefix starts it: "core N: op NAME: "). */
void core_output_dropped_warnings(const struct core_output *output, const char *prefix,
                                  void (*each)(void *context, const char *text), void *context);
/* Frees the buffer. */
void core_output_free(struct core_output *output);

#endif
