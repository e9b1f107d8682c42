/* output_file.h - writing a file the user named, without destroying what is there.
 *
 * The rule, for any output a user names (--emit-wrapper PATH, run-custom-op
 * --out PATH):
 *   - a regular file, or a name that does not exist yet, is written
 *     atomically: a temporary file in the same directory, then rename(2),
 *     so a reader (or a run killed half-way) sees the old content or the
 *     new, never a part.  An existing file keeps its mode; a new one gets
 *     0644 (less the umask).
 *   - a symbolic link is followed (to any depth) and its target is written
 *     by the same rule; the link itself stays.
 *   - anything else that exists (a character or block device, a FIFO, a
 *     socket) is opened and written through: never renamed over, never
 *     truncated by replacement, never deleted, even when the write fails.
 *   - a directory is refused.
 * build-custom-op and run-custom-op both use it. */
#ifndef OUTPUT_FILE_H
#define OUTPUT_FILE_H

#include <stddef.h>
#include <sys/stat.h>

struct diag;

/* One piece of what is written; the pieces are written in order. */
struct output_part {
	const void *data;
	size_t size;
};

/* Writes the parts to path by the rule above.  Returns 0, or -1 with diag
 * set to "cannot write PATH: REASON" (nothing of a temporary file is left
 * behind then).  Safe to call from several threads, each with its diag. */
int output_file_write(const char *path, const struct output_part *parts, size_t count,
                      struct diag *diag);

/* Follows symbolic links from path to the name that is not one (it may not
 * exist): the name output_file_write writes.  Returns a malloc'ed path and
 * sets *exists and *st, or NULL with errno set. */
char *output_file_resolve(const char *path, int *exists, struct stat *st);

#endif
