/* buildlog.h - the command hashes of the last build of each output.
 *
 * <build>/.build-custom-op.log records, for each output, a hash of the
 * command (argv and the environment it depends on) that last built it.  A
 * step whose command hash differs from the record is rebuilt. */
#ifndef BUILDLOG_H
#define BUILDLOG_H

#include <stddef.h>
#include <stdint.h>

struct arena;
struct diag;

struct buildlog_entry {
	char *output;
	uint64_t command_hash;
};

struct buildlog {
	struct arena *arena;
	struct buildlog_entry *entries;
	size_t length;
	size_t capacity;
};

/* Hashes a NULL-terminated argv, then each of the extra strings (any may be
 * NULL, which hashes differently from ""); 64-bit FNV-1a over length-prefixed
 * fields, so word boundaries count. */
uint64_t buildlog_hash_command(char *const *argv, const char *const *extra, size_t extra_count);
/* Loads the log at path.  A missing, corrupt or truncated log loads as empty
 * (or as its intact entries) and never fails. */
void buildlog_load(struct arena *arena, const char *path, struct buildlog *log);
/* Parses the text of a log (length bytes, may contain anything) into *log, as buildlog_load. */
void buildlog_parse(struct arena *arena, const char *text, size_t length, struct buildlog *log);
/* The recorded hash for output in *hash; returns 1 when found, else 0. */
int buildlog_lookup(const struct buildlog *log, const char *output, uint64_t *hash);
/* Records (or replaces) the hash for output. */
void buildlog_record(struct buildlog *log, const char *output, uint64_t hash);
/* Forgets output (its step failed or was interrupted). */
void buildlog_forget(struct buildlog *log, const char *output);
/* Writes the log to path atomically.  Returns 0, or -1 with diag set. */
int buildlog_save(const struct buildlog *log, const char *path, struct diag *diag);

#endif
