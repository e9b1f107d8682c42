/* opsrecord.c - writing the .ops record of a host build, once its libraries are linked. */
#include "opsrecord.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "arena.h"
#include "buildcustomop.h"
#include "buildlog.h"
#include "codegen.h"
#include "diag.h"
#include "fsutil.h"
#include "library_id.h"

/* The fingerprints of the files at paths and of the file at record, added
 * to a hash.  Returns 0, or -1 when one cannot be looked at.  *settled is
 * cleared when one changed within OPSRECORD_SETTLED_NS before since. */
static int fingerprints(char *const *paths, size_t count, const char *record,
                        struct timespec since, uint64_t *hash, int *settled)
{
	uint64_t value = buildlog_hash_number(buildlog_hash_start(), count);
	for (size_t i = 0; i <= count; i++) {
		const char *path = i < count ? paths[i] : record;
		struct stat st;
		if (stat(path, &st) != 0)
			return -1;
		value = buildlog_hash_field(value, path);
		const uint64_t fields[] = {
			(uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
			(uint64_t)st.st_mtim.tv_sec, (uint64_t)st.st_mtim.tv_nsec,
			(uint64_t)st.st_ctim.tv_sec, (uint64_t)st.st_ctim.tv_nsec,
		};
		for (size_t f = 0; f < sizeof fields / sizeof *fields; f++)
			value = buildlog_hash_number(value, fields[f]);
		long long age = ((long long)since.tv_sec - (long long)st.st_ctim.tv_sec) * 1000000000LL +
		                ((long long)since.tv_nsec - (long long)st.st_ctim.tv_nsec);
		if (age <= OPSRECORD_SETTLED_NS)
			*settled = 0;
	}
	*hash = value;
	return 0;
}

/* Saves the log with the record's entry changed.  The entry only spares
 * reads: a log that cannot be written (a read-only build directory, where a
 * build with nothing to do still succeeds) leaves the next build to read the
 * libraries again, and the record is right either way. */
static void save_entry(const struct opsrecord_log *log, struct arena *arena)
{
	struct diag unsaved;
	diag_init(&unsaved, arena);
	(void)buildlog_save(log->log, log->path, &unsaved);
}

int opsrecord_write(struct arena *arena, const struct op *ops, size_t op_count,
                    char *const *libraries, size_t library_count, const char *path,
                    const struct opsrecord_log *log, struct diag *diag)
{
	char **names = arena_alloc(arena, library_count * sizeof *names);
	char **ids = arena_alloc(arena, library_count * sizeof *ids);
	for (size_t i = 0; i < library_count; i++) {
		names[i] = (char *)fs_basename(libraries[i]);
		ids[i] = "";
	}
	/* What the record says but for the ids. */
	uint64_t text = buildlog_hash_field(buildlog_hash_start(),
	                                    codegen_ops_record(arena, ops, op_count, names, ids,
	                                                       library_count));
	const char *output = fs_basename(path);
	const struct buildlog_entry *entry = buildlog_find(log->log, output);
	uint64_t before;
	int settled = 1;
	int looked = fingerprints(libraries, library_count, path, log->now, &before, &settled) == 0;
	if (looked && entry && entry->has_inputs && entry->command_hash == text &&
	    entry->inputs_hash == before)
		return 0;
	for (size_t i = 0; i < library_count; i++) {
		ids[i] = arena_alloc(arena, LIBRARY_ID_SIZE);
		if (library_id_of_file(libraries[i], ids[i]) != 0)
			return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot read %s to record it in %s: %s",
			                 libraries[i], path, strerror(errno));
	}
	const char *record = codegen_ops_record(arena, ops, op_count, names, ids, library_count);
	if (fs_write_atomic(arena, path, record, strlen(record), diag) != 0)
		return -1;
	/* The files as the record was made from them (the libraries unchanged
	 * while they were read), each settled: the entry vouches for them. */
	uint64_t after;
	if (looked && fingerprints(libraries, library_count, path, log->now, &after, &settled) == 0 &&
	    settled && after == before) {
		buildlog_record(log->log, output, log->library, text, after);
		save_entry(log, arena);
	} else if (entry) {
		buildlog_forget(log->log, output);
		save_entry(log, arena);
	}
	return 0;
}
