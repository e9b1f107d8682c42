/* buildlog.c - the command hashes of the last build of each output.
 *
 * The file is text: the header line, then "<16 hex digits> <output>" per
 * line.  In memory the entries stay sorted by output so that a lookup is a
 * binary search; loading sorts once, so a log of many outputs loads in
 * O(n log n). */
#include "buildlog.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "buffer.h"
#include "diag.h"
#include "fsutil.h"

#define BUILDLOG_HEADER "# build-custom-op log 1\n"
#define HASH_DIGITS 16

#define FNV_OFFSET_BASIS 0xcbf29ce484222325u
#define FNV_PRIME 0x100000001b3u
/* Lengths no string has, marking the end of argv and a NULL extra. */
#define END_OF_ARGV UINT64_MAX
#define NULL_FIELD (UINT64_MAX - 1)

static uint64_t hash_bytes(uint64_t hash, const void *bytes, size_t length)
{
	const unsigned char *p = bytes;
	for (size_t i = 0; i < length; i++) {
		hash ^= p[i];
		hash *= FNV_PRIME;
	}
	return hash;
}

/* Hashes a length as 8 little-endian bytes, the same on every machine. */
static uint64_t hash_length(uint64_t hash, uint64_t length)
{
	unsigned char bytes[8];
	for (int i = 0; i < 8; i++)
		bytes[i] = (unsigned char)(length >> (8 * i));
	return hash_bytes(hash, bytes, sizeof bytes);
}

static uint64_t hash_field(uint64_t hash, const char *text)
{
	if (!text)
		return hash_length(hash, NULL_FIELD);
	size_t length = strlen(text);
	hash = hash_length(hash, length);
	return hash_bytes(hash, text, length);
}

uint64_t buildlog_hash_command(char *const *argv, const char *const *extra, size_t extra_count)
{
	uint64_t hash = FNV_OFFSET_BASIS;
	for (size_t i = 0; argv && argv[i]; i++)
		hash = hash_field(hash, argv[i]);
	hash = hash_length(hash, END_OF_ARGV);
	for (size_t i = 0; i < extra_count; i++)
		hash = hash_field(hash, extra[i]);
	return hash;
}

/* Finds output: returns 1 and its index, or 0 and where it would go. */
static int find(const struct buildlog *log, const char *output, size_t *index)
{
	size_t low = 0, high = log->length;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = strcmp(log->entries[middle].output, output);
		if (order == 0) {
			*index = middle;
			return 1;
		}
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	*index = low;
	return 0;
}

/* An output the file format can hold: one line, not empty. */
static int recordable(const char *output)
{
	return *output != '\0' && strchr(output, '\n') == NULL;
}

static int parse_hash(const char *digits, uint64_t *hash)
{
	uint64_t value = 0;
	for (int i = 0; i < HASH_DIGITS; i++) {
		char c = digits[i];
		unsigned digit;
		if (c >= '0' && c <= '9')
			digit = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			digit = (unsigned)(c - 'a' + 10);
		else
			return -1;
		value = value << 4 | digit;
	}
	*hash = value;
	return 0;
}

struct loaded_entry {
	struct buildlog_entry entry;
	size_t line; /* a later line for the same output wins */
};

static int compare_loaded(const void *a, const void *b)
{
	const struct loaded_entry *left = a, *right = b;
	int order = strcmp(left->entry.output, right->entry.output);
	if (order != 0)
		return order;
	return left->line < right->line ? -1 : left->line > right->line;
}

void buildlog_load(struct arena *arena, const char *path, struct buildlog *log)
{
	char *text = NULL;
	size_t length = 0;
	/* A log that cannot be read is an empty one: everything rebuilds. */
	if (fs_read_file(arena, path, &text, &length) != 0) {
		text = NULL;
		length = 0;
	}
	buildlog_parse(arena, text, length, log);
}

void buildlog_parse(struct arena *arena, const char *text, size_t length, struct buildlog *log)
{
	log->arena = arena;
	log->entries = NULL;
	log->length = 0;
	log->capacity = 0;
	size_t header_length = strlen(BUILDLOG_HEADER);
	if (length < header_length || memcmp(text, BUILDLOG_HEADER, header_length) != 0)
		return;

	/* Every entry line is at least HASH_DIGITS + 3 bytes long. */
	size_t most = (length - header_length) / (HASH_DIGITS + 3) + 1;
	struct loaded_entry *loaded = arena_array(arena, most, sizeof *loaded);
	size_t count = 0;
	const char *end = text + length;
	for (const char *line = text + header_length; line < end;) {
		const char *newline = memchr(line, '\n', (size_t)(end - line));
		if (!newline)
			break; /* a truncated last line */
		size_t line_length = (size_t)(newline - line);
		uint64_t hash;
		if (line_length > HASH_DIGITS + 1 && line[HASH_DIGITS] == ' ' &&
		    parse_hash(line, &hash) == 0 &&
		    !memchr(line, '\0', line_length) && count < most) {
			const char *output = line + HASH_DIGITS + 1;
			loaded[count].entry.output =
				arena_strndup(arena, output, (size_t)(newline - output));
			loaded[count].entry.command_hash = hash;
			loaded[count].line = count;
			count++;
		}
		line = newline + 1;
	}
	if (count == 0)
		return;
	qsort(loaded, count, sizeof *loaded, compare_loaded);
	log->entries = arena_array(arena, count, sizeof *log->entries);
	log->capacity = count;
	for (size_t i = 0; i < count; i++) {
		if (i + 1 < count && strcmp(loaded[i].entry.output, loaded[i + 1].entry.output) == 0)
			continue;
		log->entries[log->length++] = loaded[i].entry;
	}
}

int buildlog_lookup(const struct buildlog *log, const char *output, uint64_t *hash)
{
	size_t index;
	if (!find(log, output, &index))
		return 0;
	*hash = log->entries[index].command_hash;
	return 1;
}

void buildlog_record(struct buildlog *log, const char *output, uint64_t hash)
{
	if (!recordable(output))
		return;
	size_t index;
	if (find(log, output, &index)) {
		log->entries[index].command_hash = hash;
		return;
	}
	if (log->length == log->capacity) {
		size_t capacity = log->capacity ? log->capacity * 2 : 16;
		struct buildlog_entry *entries = arena_array(log->arena, capacity, sizeof *entries);
		if (log->length)
			memcpy(entries, log->entries, log->length * sizeof *entries);
		log->entries = entries;
		log->capacity = capacity;
	}
	memmove(&log->entries[index + 1], &log->entries[index],
	        (log->length - index) * sizeof *log->entries);
	log->entries[index].output = arena_strdup(log->arena, output);
	log->entries[index].command_hash = hash;
	log->length++;
}

void buildlog_forget(struct buildlog *log, const char *output)
{
	size_t index;
	if (!find(log, output, &index))
		return;
	memmove(&log->entries[index], &log->entries[index + 1],
	        (log->length - index - 1) * sizeof *log->entries);
	log->length--;
}

int buildlog_save(const struct buildlog *log, const char *path, struct diag *diag)
{
	struct buffer text;
	buffer_init(&text, log->arena);
	buffer_puts(&text, BUILDLOG_HEADER);
	for (size_t i = 0; i < log->length; i++) {
		const struct buildlog_entry *entry = &log->entries[i];
		if (!recordable(entry->output))
			continue;
		buffer_printf(&text, "%016llx %s\n", (unsigned long long)entry->command_hash,
		              entry->output);
	}
	return fs_write_atomic(log->arena, path, text.data, text.length, diag);
}
