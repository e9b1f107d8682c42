/* buildlog.c - what the last build made, and from what.
 *
 * In memory the entries stay sorted by output so that a lookup is a binary
 * search; loading sorts once, so a log of many outputs loads in
 * O(n log n). */
#include "buildlog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "buffer.h"
#include "diag.h"
#include "fsutil.h"

#define BUILDLOG_HEADER "# build-custom-op log 2\n"
#define BUILDLOG_HEADER_1 "# build-custom-op log 1\n"
#define HASH_DIGITS 16
/* In place of the inputs hash: an entry of a version 1 log, not yet checked. */
#define NO_INPUTS "----------------"

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

uint64_t buildlog_hash_start(void)
{
	return FNV_OFFSET_BASIS;
}

uint64_t buildlog_hash_number(uint64_t hash, uint64_t number)
{
	return hash_length(hash, number);
}

uint64_t buildlog_hash_field(uint64_t hash, const char *text)
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
		hash = buildlog_hash_field(hash, argv[i]);
	hash = hash_length(hash, END_OF_ARGV);
	for (size_t i = 0; i < extra_count; i++)
		hash = buildlog_hash_field(hash, extra[i]);
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

/* An output the file format can hold: a name in the build directory, on one line. */
static int recordable(const char *output)
{
	return *output != '\0' && strcmp(output, ".") != 0 && strcmp(output, "..") != 0 &&
	       strpbrk(output, "/\n") == NULL;
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

void buildlog_load(struct arena *arena, const char *path, const char *build_dir, struct buildlog *log)
{
	char *text = NULL;
	size_t length = 0;
	/* A log that cannot be read is an empty one: everything rebuilds. */
	if (fs_read_file(arena, path, &text, &length) != 0) {
		text = NULL;
		length = 0;
	}
	buildlog_parse(arena, text, length, build_dir, log);
}

/* Parses one line (without its newline) of a log of the given version into
 * *entry; returns 0, or -1 when the line is damaged. */
static int parse_line(struct arena *arena, const char *line, size_t length, int version,
                      const char *build_dir, struct buildlog_entry *entry)
{
	const char *end = line + length;
	if (memchr(line, '\0', length) || length < HASH_DIGITS + 2 || line[HASH_DIGITS] != ' ' ||
	    parse_hash(line, &entry->command_hash) != 0)
		return -1;
	const char *rest = line + HASH_DIGITS + 1;
	if (version == 1) {
		/* "<command> <build>/<output>": only outputs of this build directory. */
		size_t prefix = strlen(build_dir);
		if ((size_t)(end - rest) <= prefix + 1 || memcmp(rest, build_dir, prefix) != 0 ||
		    rest[prefix] != '/')
			return -1;
		entry->output = arena_strndup(arena, rest + prefix + 1, (size_t)(end - rest) - prefix - 1);
		entry->library = "";
		entry->inputs_hash = 0;
		entry->has_inputs = 0;
	} else {
		if ((size_t)(end - rest) < HASH_DIGITS + 1 || rest[HASH_DIGITS] != ' ')
			return -1;
		entry->has_inputs = memcmp(rest, NO_INPUTS, HASH_DIGITS) != 0;
		entry->inputs_hash = 0;
		if (entry->has_inputs && parse_hash(rest, &entry->inputs_hash) != 0)
			return -1;
		rest += HASH_DIGITS + 1;
		const char *tab = memchr(rest, '\t', (size_t)(end - rest));
		if (!tab)
			return -1;
		entry->library = arena_strndup(arena, rest, (size_t)(tab - rest));
		entry->output = arena_strndup(arena, tab + 1, (size_t)(end - tab - 1));
	}
	return recordable(entry->output) ? 0 : -1;
}

void buildlog_parse(struct arena *arena, const char *text, size_t length, const char *build_dir,
                    struct buildlog *log)
{
	log->arena = arena;
	log->entries = NULL;
	log->length = 0;
	log->capacity = 0;
	log->append_fd = -1;
	int version;
	size_t header_length = strlen(BUILDLOG_HEADER);
	if (length >= header_length && memcmp(text, BUILDLOG_HEADER, header_length) == 0)
		version = 2;
	else if (length >= header_length && memcmp(text, BUILDLOG_HEADER_1, header_length) == 0)
		version = 1;
	else
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
		if (count < most &&
		    parse_line(arena, line, (size_t)(newline - line), version, build_dir, &loaded[count].entry) == 0) {
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

const struct buildlog_entry *buildlog_find(const struct buildlog *log, const char *output)
{
	size_t index;
	return find(log, output, &index) ? &log->entries[index] : NULL;
}

void buildlog_record(struct buildlog *log, const char *output, const char *library,
                     uint64_t command_hash, uint64_t inputs_hash)
{
	if (!recordable(output))
		return;
	size_t index;
	if (!find(log, output, &index)) {
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
		log->length++;
	}
	struct buildlog_entry *entry = &log->entries[index];
	entry->library = arena_strdup(log->arena, library);
	entry->command_hash = command_hash;
	entry->inputs_hash = inputs_hash;
	entry->has_inputs = 1;
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

static void put_entry(struct buffer *text, const struct buildlog_entry *entry)
{
	buffer_printf(text, "%016llx ", (unsigned long long)entry->command_hash);
	if (entry->has_inputs)
		buffer_printf(text, "%016llx", (unsigned long long)entry->inputs_hash);
	else
		buffer_puts(text, NO_INPUTS);
	buffer_printf(text, " %s\t%s\n", entry->library, entry->output);
}

int buildlog_save(const struct buildlog *log, const char *path, struct diag *diag)
{
	struct buffer text;
	buffer_init(&text, log->arena);
	buffer_puts(&text, BUILDLOG_HEADER);
	for (size_t i = 0; i < log->length; i++)
		put_entry(&text, &log->entries[i]);
	return fs_write_atomic(log->arena, path, text.data, text.length, diag);
}

int buildlog_open_append(struct buildlog *log, const char *path, struct diag *diag)
{
	log->append_fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (log->append_fd < 0)
		return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot write the build log %s: %s", path,
		                 strerror(errno));
	return 0;
}

int buildlog_append(struct buildlog *log, char *const *outputs, size_t count, const char *library,
                    uint64_t command_hash, uint64_t inputs_hash, struct diag *diag)
{
	struct buffer text;
	buffer_init(&text, log->arena);
	for (size_t i = 0; i < count; i++) {
		if (!recordable(outputs[i]))
			continue;
		buildlog_record(log, outputs[i], library, command_hash, inputs_hash);
		put_entry(&text, buildlog_find(log, outputs[i]));
	}
	/* One write per step: a build killed meanwhile leaves at most one
	 * truncated last line, which the next load ignores. */
	for (size_t done = 0; done < text.length;) {
		ssize_t wrote = log->append_fd >= 0 ? write(log->append_fd, text.data + done, text.length - done) : -1;
		if (wrote < 0 && errno == EINTR)
			continue;
		if (wrote <= 0)
			return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot write the build log: %s",
			                 wrote < 0 ? strerror(errno) : "nothing was written");
		done += (size_t)wrote;
	}
	return 0;
}

void buildlog_close_append(struct buildlog *log)
{
	if (log->append_fd >= 0)
		close(log->append_fd);
	log->append_fd = -1;
}
