/* fsutil.h - files: read whole, write atomically, make directories. */
#ifndef FSUTIL_H
#define FSUTIL_H

#include <stddef.h>
#include <time.h>

struct arena;
struct diag;
struct strvec;

/* Reads path whole into *text (NUL-terminated) and *length.  Returns 0, or
 * -1 with errno set (the arena is untouched then). */
int fs_read_file(struct arena *arena, const char *path, char **text, size_t *length);
/* Returns 1 when path is (or links to) a regular file holding exactly the
 * length bytes, else 0. */
int fs_holds(struct arena *arena, const char *path, const char *bytes, size_t length);
/* Writes length bytes to path through a temporary file and rename, unless
 * path already holds exactly those bytes (its mtime is then kept).  The
 * file gets the mode a plain creat() would give it.
 * Returns 0, or -1 with diag set. */
int fs_write_atomic(struct arena *arena, const char *path, const char *bytes,
                    size_t length, struct diag *diag);
/* Creates directory path and its parents (mode 0777 less umask).  Returns 0,
 * or -1 with diag set. */
int fs_make_directories(struct arena *arena, const char *path, struct diag *diag);
/* The modification time of path in *mtime; returns 0, or -1 when it cannot be read. */
int fs_mtime(const char *path, struct timespec *mtime);
/* Sets the modification time of the open file fd to now and reads it back
 * into *now: the file system's time, as a file written now would get it.
 * Returns 0, or -1 with errno set. */
int fs_touch_now(int fd, struct timespec *now);
/* Returns <0, 0, >0 as a is older than, as old as, or newer than b. */
int fs_time_compare(struct timespec a, struct timespec b);
/* Returns the last path component of path (a pointer into path). */
const char *fs_basename(const char *path);
/* Returns 1 when path names an existing regular file or directory. */
int fs_exists(const char *path);
/* What a build looked at, for bco_result_settled_path: notes path (a
 * copy) in *watched; with missing, and path missing, the nearest directory
 * above it that exists instead (whatever appears at path changes it).
 * Nothing when watched is NULL. */
void fs_watch(struct strvec *watched, const char *path, int missing);

#endif
