/* console.c - where run-custom-op shows what the cores printed and warned. */
#include "console.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int flagged_note_shown, unset_note_shown;
static int stdout_error; /* errno of the first failed write to stdout, or 0 */

static void print_flagged_line(int core, const char *line, size_t length)
{
	if (!flagged_note_shown) {
		fputs("run-custom-op: note: lines marked [core N] were printed by cores 1-7; on the "
		      "device only core 0's output reaches the host\n", stderr);
		flagged_note_shown = 1;
	}
	fprintf(stderr, "[core %d] %.*s\n", core, (int)length, line);
}

void console_print(void *context, int core, const char *text, size_t length)
{
	const rco_library *const *library = context;
	if (!unset_note_shown && rco_print_buffer_size(*library) < 0) {
		fprintf(stderr, "run-custom-op: note: " RCO_PRINT_BUFFER_VARIABLE " is unset, so all "
		        "that the kernel printed is shown; on the device it must be set (a power of two "
		        "up to %d, the bytes kept per core) for printf to print at all\n",
		        RCO_PRINT_BUFFER_MAX);
		unset_note_shown = 1;
	}
	if (core <= 0) {
		if ((fwrite(text, 1, length, stdout) != length || fflush(stdout) != 0) && !stdout_error)
			stdout_error = errno ? errno : EIO;
		return;
	}
	while (length > 0) {
		const char *newline = memchr(text, '\n', length);
		size_t part = newline ? (size_t)(newline - text) : length;
		print_flagged_line(core, text, part);
		text += part + (newline != NULL);
		length -= part + (newline != NULL);
	}
}

int console_stdout_error(void)
{
	return stdout_error;
}

void console_warn(void *context, int core, const char *text)
{
	(void)context;
	(void)core; /* the text names it */
	fprintf(stderr, "run-custom-op: warning: %s\n", text);
}
