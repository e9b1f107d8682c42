/* opsrecord.h - writing the .ops record of a host build, once its libraries are linked.
 *
 * Writing the record reads every library to compute its id.  The build log
 * keeps an entry for the record (its name in the build directory): the hash
 * of the record's text with the ids left out, and the stat fingerprints
 * (device, inode, size, mtime, ctime) of the libraries and of the record.
 * While the ops, the libraries' names and every one of those fingerprints
 * are the same, the record on disk is the one written for these very
 * libraries, and nothing is read.  The entry is recorded only when each of
 * those files had settled: its ctime older than the file system's time
 * before the reads by more than OPSRECORD_SETTLED_NS, the coarsest
 * timestamp granularity of Linux's file systems (FAT's 2 s), so that no
 * change made in the same tick as the one a ctime shows can go unseen.  Any
 * change of a file's contents sets its ctime, and nothing sets it back. */
#ifndef OPSRECORD_H
#define OPSRECORD_H

#include <stddef.h>
#include <time.h>

#define OPSRECORD_SETTLED_NS 2000000000LL

struct arena;
struct buildlog;
struct diag;
struct op;

/* Where the record's entry is kept. */
struct opsrecord_log {
	struct buildlog *log;
	const char *path;       /* the log's file, saved when the entry changes */
	const char *library;    /* the library whose build the entry belongs to */
	struct timespec now;    /* the file system's time before anything is read */
};

/* Writes path (BUILD_DIR/NAME.ops): the ops, the layout and each linked
 * library (libraries, in core order) with its id (src/library_id.h), unless
 * log's entry vouches that the record there is already that text.  Call it
 * only when every link has succeeded.  Returns 0, or -1 with diag set. */
int opsrecord_write(struct arena *arena, const struct op *ops, size_t op_count,
                    char *const *libraries, size_t library_count, const char *path,
                    const struct opsrecord_log *log, struct diag *diag);

#endif
