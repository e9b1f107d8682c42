/* console.h - where the cores' printf output goes.
 *
 * As on the device, only core 0's output is the op's output: it goes to
 * stdout as printed.  Other cores' output is still worth seeing on the host,
 * so it goes to stderr whole lines at a time, each prefixed "[core N] ",
 * after a one-time note that the device would not show it. */
#ifndef CONSOLE_H
#define CONSOLE_H

#include <stddef.h>

/* One core's output stream; core -1 (a single-core build) counts as core 0. */
struct console_stream {
	int core;
	char *pending;       /* a flagged core's unfinished line */
	size_t length, capacity;
};

/* Starts the stream of core. */
void console_open(struct console_stream *stream, int core);
/* Takes length bytes the core printed. */
void console_write(struct console_stream *stream, const char *text, size_t length);
/* Ends the stream: prints an unfinished line and flushes. */
void console_close(struct console_stream *stream);

#endif
