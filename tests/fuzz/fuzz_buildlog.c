/* fuzz_buildlog.c - the build-log reader on arbitrary bytes (a corrupt or
 * truncated log must load as its intact entries), with a round trip: what
 * was loaded, written in the log's format and read again, is the same log. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "buffer.h"
#include "buildlog.h"
#include "fuzz.h"

#define HEADER "# build-custom-op log 1\n"

/* Static: the arena changes between setjmp and a longjmp back to it. */
static struct arena arena;

/* The entries must be sorted, unique and writable as one line each. */
static void check_entries(const struct buildlog *log)
{
	for (size_t i = 0; i < log->length; i++) {
		const char *output = log->entries[i].output;
		if (!*output || strchr(output, '\n'))
			abort();
		if (i && strcmp(log->entries[i - 1].output, output) >= 0)
			abort();
		uint64_t hash;
		if (!buildlog_lookup(log, output, &hash) || hash != log->entries[i].command_hash)
			abort();
	}
}

/* The log as buildlog_save writes it, in memory. */
static struct buffer format(const struct buildlog *log)
{
	struct buffer text;
	buffer_init(&text, &arena);
	buffer_puts(&text, HEADER);
	for (size_t i = 0; i < log->length; i++)
		buffer_printf(&text, "%016" PRIx64 " %s\n", log->entries[i].command_hash,
		              log->entries[i].output);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_copy(data, size, 0);
	if (!text)
		return 0;
	jmp_buf out_of_memory;
	if (setjmp(out_of_memory)) {
		arena_release(&arena);
		free(text);
		return 0;
	}
	arena_init(&arena, &out_of_memory);
	struct buildlog log;
	buildlog_parse(&arena, text, size, &log);
	check_entries(&log);

	struct buffer written = format(&log);
	struct buildlog again;
	buildlog_parse(&arena, written.data, written.length, &again);
	if (again.length != log.length)
		abort();
	for (size_t i = 0; i < log.length; i++)
		if (strcmp(again.entries[i].output, log.entries[i].output) != 0 ||
		    again.entries[i].command_hash != log.entries[i].command_hash)
			abort();

	/* Recording then forgetting a new output leaves the log as it was. */
	const char *extra = "fuzz/extra.o";
	uint64_t hash;
	if (!buildlog_lookup(&log, extra, &hash)) {
		buildlog_record(&log, extra, 42);
		if (!buildlog_lookup(&log, extra, &hash) || hash != 42)
			abort();
		buildlog_forget(&log, extra);
		if (log.length != again.length || buildlog_lookup(&log, extra, &hash))
			abort();
		check_entries(&log);
	}
	arena_release(&arena);
	free(text);
	return 0;
}
