/* console.c - where the cores' printf output goes. */
#include "console.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Serialises the flagged lines of all cores and the one-time note. */
static pthread_mutex_t flagged_lock = PTHREAD_MUTEX_INITIALIZER;
static int flagged_note_shown;

static int is_flagged(const struct console_stream *stream)
{
	return stream->core > 0;
}

static void print_flagged_line(const struct console_stream *stream, const char *line,
                               size_t length)
{
	pthread_mutex_lock(&flagged_lock);
	if (!flagged_note_shown) {
		fputs("run-custom-op: note: lines marked [core N] were printed by cores 1-7; on the "
		      "device only core 0's output reaches the host\n", stderr);
		flagged_note_shown = 1;
	}
	fprintf(stderr, "[core %d] %.*s\n", stream->core, (int)length, line);
	pthread_mutex_unlock(&flagged_lock);
}

void console_open(struct console_stream *stream, int core)
{
	memset(stream, 0, sizeof *stream);
	stream->core = core;
}

/* Keeps an unfinished line; drops what does not fit in memory rather than
 * failing the core over its diagnostics. */
static void keep_pending(struct console_stream *stream, const char *text, size_t length)
{
	if (stream->length + length > stream->capacity) {
		size_t capacity = stream->capacity ? stream->capacity : 256;
		while (capacity < stream->length + length)
			capacity *= 2;
		char *grown = realloc(stream->pending, capacity);
		if (!grown)
			return;
		stream->pending = grown;
		stream->capacity = capacity;
	}
	memcpy(stream->pending + stream->length, text, length);
	stream->length += length;
}

void console_write(struct console_stream *stream, const char *text, size_t length)
{
	if (!is_flagged(stream)) {
		fwrite(text, 1, length, stdout);
		return;
	}
	while (length > 0) {
		const char *newline = memchr(text, '\n', length);
		if (!newline) {
			keep_pending(stream, text, length);
			return;
		}
		size_t part = (size_t)(newline - text);
		if (stream->length > 0) {
			keep_pending(stream, text, part);
			print_flagged_line(stream, stream->pending, stream->length);
			stream->length = 0;
		} else {
			print_flagged_line(stream, text, part);
		}
		text += part + 1;
		length -= part + 1;
	}
}

void console_close(struct console_stream *stream)
{
	if (is_flagged(stream) && stream->length > 0)
		print_flagged_line(stream, stream->pending, stream->length);
	if (!is_flagged(stream))
		fflush(stdout);
	free(stream->pending);
	memset(stream, 0, sizeof *stream);
}
