/* fuzz_buildlog.c - the build-log reader on arbitrary bytes (a corrupt or
 * truncated log, of version 2 or 1, must load as its intact entries), with a
 * round trip: what was loaded, written in the log's format and read again,
 * is the same log. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "buffer.h"
#include "buildlog.h"
#include "fuzz.h"

#define HEADER "# build-custom-op log 2\n"

/* Static: the arena changes between setjmp and a longjmp back to it. */
static struct arena arena;

/* The entries must be sorted, unique and writable as one line each, as
 * names in the build directory. */
static void check_entries(const struct buildlog *log)
{
	for (size_t i = 0; i < log->length; i++) {
		const char *output = log->entries[i].output;
		if (!*output || strpbrk(output, "/\n") || strchr(log->entries[i].library, '\t'))
			abort();
		if (i && strcmp(log->entries[i - 1].output, output) >= 0)
			abort();
		if (buildlog_find(log, output) != &log->entries[i])
			abort();
	}
}

/* The log as buildlog_save writes it, in memory. */
static struct buffer format(const struct buildlog *log)
{
	struct buffer text;
	buffer_init(&text, &arena);
	buffer_puts(&text, HEADER);
	for (size_t i = 0; i < log->length; i++) {
		const struct buildlog_entry *entry = &log->entries[i];
		buffer_printf(&text, "%016" PRIx64 " ", entry->command_hash);
		if (entry->has_inputs)
			buffer_printf(&text, "%016" PRIx64, entry->inputs_hash);
		else
			buffer_puts(&text, "----------------");
		buffer_printf(&text, " %s\t%s\n", entry->library, entry->output);
	}
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
	buildlog_parse(&arena, text, size, "build", &log);
	check_entries(&log);

	struct buffer written = format(&log);
	struct buildlog again;
	buildlog_parse(&arena, written.data, written.length, "build", &again);
	if (again.length != log.length)
		abort();
	for (size_t i = 0; i < log.length; i++)
		if (strcmp(again.entries[i].output, log.entries[i].output) != 0 ||
		    strcmp(again.entries[i].library, log.entries[i].library) != 0 ||
		    again.entries[i].command_hash != log.entries[i].command_hash ||
		    again.entries[i].inputs_hash != log.entries[i].inputs_hash ||
		    again.entries[i].has_inputs != log.entries[i].has_inputs)
			abort();

	/* Recording then forgetting a new output leaves the log as it was. */
	const char *extra = "fuzz-extra.o";
	if (!buildlog_find(&log, extra)) {
		buildlog_record(&log, extra, "lib", 42, 43);
		const struct buildlog_entry *entry = buildlog_find(&log, extra);
		if (!entry || entry->command_hash != 42 || entry->inputs_hash != 43 || strcmp(entry->library, "lib") != 0)
			abort();
		buildlog_forget(&log, extra);
		if (log.length != again.length || buildlog_find(&log, extra))
			abort();
		check_entries(&log);
	}
	arena_release(&arena);
	free(text);
	return 0;
}
