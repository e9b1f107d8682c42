/* console.c - how build-custom-op shows a build's progress on the terminal. */
#include "console.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

void console_init(struct console *console, int dry_run)
{
	memset(console, 0, sizeof *console);
	console->dry_run = dry_run;
	console->status_on_terminal = isatty(STDERR_FILENO);
	console->color = console->status_on_terminal && !getenv("NO_COLOR");
	struct winsize size;
	if (console->status_on_terminal && ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0)
		console->width = size.ws_col;
}

void console_clear(struct console *console)
{
	if (console->status_shown) {
		fputs("\r\033[K", stderr);
		console->status_shown = 0;
	}
}

/* Writes text from offset on, and the newline text lacks. */
static void put_line(const char *text, size_t offset)
{
	fputs(text + offset, stderr);
	if (*text && text[strlen(text) - 1] != '\n')
		fputc('\n', stderr);
}

static void show_status(struct console *console, const char *text)
{
	if (!console->status_on_terminal) {
		fprintf(stderr, "%s\n", text);
		return;
	}
	/* A line that wraps could not be rewritten in place. */
	size_t length = strlen(text);
	console_clear(console);
	if (console->width > 4 && length >= console->width)
		fprintf(stderr, "%.*s...", (int)(console->width - 4), text);
	else
		fputs(text, stderr);
	console->status_shown = 1;
}

void console_show(void *context, enum bco_message_kind kind, const char *text)
{
	struct console *console = context;
	if (kind == BCO_MESSAGE_STATUS) {
		show_status(console, text);
	} else if (kind == BCO_MESSAGE_COMMAND && console->dry_run) {
		printf("%s\n", text);
	} else {
		console_clear(console);
		if (kind == BCO_MESSAGE_WARNING) {
			fprintf(stderr, "build-custom-op: warning: %s\n", text);
		} else if (kind == BCO_MESSAGE_FAILURE && console->color &&
		           strncmp(text, "FAILED:", 7) == 0) {
			fputs("\033[31mFAILED:\033[0m", stderr);
			put_line(text, 7);
		} else {
			put_line(text, 0);
		}
	}
	fflush(stderr);
}
