/* console.h - how build-custom-op shows a build's progress on the terminal.
 *
 * Status lines ("[2/4] CC src/relu.cpp") are rewritten in place on a
 * terminal, cut to its width, and printed one per line elsewhere; a failure
 * is shown whole, "FAILED:" in red unless NO_COLOR is set.  Everything goes
 * to stderr, except the commands of a dry run, which are the output. */
#ifndef CONSOLE_H
#define CONSOLE_H

#include <stddef.h>

#include "buildcustomop.h"

struct console {
	int status_on_terminal; /* rewrite the status line in place */
	int status_shown;       /* a status line is on screen, unterminated */
	size_t width;           /* the terminal's columns: longer status lines are cut */
	int color;
	int dry_run;
};

/* Looks at stderr and the environment; dry_run sends commands to stdout. */
void console_init(struct console *console, int dry_run);
/* The progress sink of struct bco_request (context: the console). */
void console_show(void *context, enum bco_message_kind kind, const char *text);
/* Ends an unterminated status line, so what follows starts on a clean line. */
void console_clear(struct console *console);

#endif
