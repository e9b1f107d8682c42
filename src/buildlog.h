/* buildlog.h - what the last build made, and from what.
 *
 * <build>/.build-custom-op.log records, for each output the build made (by
 * its name in the build directory), the library whose build made it, a hash
 * of the command (argv and the environment it depends on) and a fingerprint
 * of the inputs the command read (their paths, modification times and
 * sizes).  A step is rebuilt when either hash differs from the record; an
 * output recorded for the library that this build does not make is left
 * over from an earlier build (another layout, a dropped source) and goes.
 *
 * The file is text:
 *     # build-custom-op log 2
 *     <command: 16 hex digits> <inputs: 16 hex digits> <library>\t<output>
 * one line per output, a later line for the same output winning, so a
 * finished step can be appended at once.  A version 1 log ("<command>
 * <build>/<output>" lines) is read too: its entries have no inputs
 * fingerprint (written "----------------" until a check finds one) and no
 * library. */
#ifndef BUILDLOG_H
#define BUILDLOG_H

#include <stddef.h>
#include <stdint.h>

struct arena;
struct diag;

struct buildlog_entry {
	char *output;          /* its name in the build directory */
	char *library;         /* the library whose build made it; "" from a version 1 log */
	uint64_t command_hash;
	uint64_t inputs_hash;
	int has_inputs;        /* 0 from a version 1 log: no fingerprint was recorded */
};

struct buildlog {
	struct arena *arena;
	struct buildlog_entry *entries; /* sorted by output */
	size_t length;
	size_t capacity;
	int append_fd;                  /* see buildlog_open_append; -1 when closed */
};

/* Hashes a NULL-terminated argv, then each of the extra strings (any may be
 * NULL, which hashes differently from ""); 64-bit FNV-1a over length-prefixed
 * fields, so word boundaries count. */
uint64_t buildlog_hash_command(char *const *argv, const char *const *extra, size_t extra_count);
/* The running hash for buildlog_hash_field: start with this. */
uint64_t buildlog_hash_start(void);
/* Adds a length-prefixed field (NULL differs from "") to a running hash. */
uint64_t buildlog_hash_field(uint64_t hash, const char *text);
/* Adds a 64-bit number to a running hash. */
uint64_t buildlog_hash_number(uint64_t hash, uint64_t number);

/* Loads the log at path, of the build directory build_dir (which prefixes
 * the outputs of a version 1 log).  A missing, corrupt or truncated log
 * loads as empty (or as its intact entries) and never fails. */
void buildlog_load(struct arena *arena, const char *path, const char *build_dir, struct buildlog *log);
/* Parses the text of a log (length bytes, may contain anything) into *log, as buildlog_load. */
void buildlog_parse(struct arena *arena, const char *text, size_t length, const char *build_dir,
                    struct buildlog *log);
/* The entry of output, or NULL. */
const struct buildlog_entry *buildlog_find(const struct buildlog *log, const char *output);
/* Records (or replaces) the entry of output. */
void buildlog_record(struct buildlog *log, const char *output, const char *library,
                     uint64_t command_hash, uint64_t inputs_hash);
/* Forgets output (its step is about to run, failed, or it was deleted). */
void buildlog_forget(struct buildlog *log, const char *output);
/* Writes the whole log to path atomically, in the current version.
 * Returns 0, or -1 with diag set. */
int buildlog_save(const struct buildlog *log, const char *path, struct diag *diag);
/* Opens the saved log at path for buildlog_append.  Returns 0, or -1 with diag set. */
int buildlog_open_append(struct buildlog *log, const char *path, struct diag *diag);
/* Records the outputs of one finished step and appends their lines to the
 * log in one write.  Returns 0, or -1 with diag set. */
int buildlog_append(struct buildlog *log, char *const *outputs, size_t count, const char *library,
                    uint64_t command_hash, uint64_t inputs_hash, struct diag *diag);
/* Closes what buildlog_open_append opened (if anything). */
void buildlog_close_append(struct buildlog *log);

#endif
