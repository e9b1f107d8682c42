/* fsutil.c - files: read whole, write atomically, make directories. */
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "diag.h"

int fs_read_file(struct arena *arena, const char *path, char **text, size_t *length)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uintmax_t)st.st_size >= SIZE_MAX) {
		int saved = S_ISDIR(st.st_mode) ? EISDIR : errno;
		close(fd);
		errno = saved;
		return -1;
	}
	size_t capacity = (size_t)st.st_size + 1, used = 0;
	char *data = arena_alloc(arena, capacity);
	for (;;) {
		if (used + 1 == capacity) {
			/* The file grew while we read it: take what is there now. */
			char *bigger = arena_array(arena, capacity, 2);
			memcpy(bigger, data, used);
			data = bigger;
			capacity *= 2;
		}
		ssize_t got = read(fd, data + used, capacity - used - 1);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			int saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		if (got == 0)
			break;
		used += (size_t)got;
	}
	close(fd);
	data[used] = '\0';
	*text = data;
	*length = used;
	return 0;
}

int fs_has_content(struct arena *arena, const char *path, const char *bytes, size_t length)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (uintmax_t)st.st_size != length)
		return 0;
	char *old;
	size_t old_length;
	if (fs_read_file(arena, path, &old, &old_length) != 0)
		return 0;
	return old_length == length && memcmp(old, bytes, length) == 0;
}

int fs_write_atomic(struct arena *arena, const char *path, const char *bytes,
                    size_t length, struct diag *diag)
{
	if (fs_has_content(arena, path, bytes, length))
		return 0;
	char *temporary = arena_printf(arena, "%s.tmpXXXXXX", path);
	int fd = mkstemp(temporary);
	if (fd < 0)
		return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot create %s: %s", temporary, strerror(errno));
	size_t done = 0;
	while (done < length) {
		ssize_t wrote = write(fd, bytes + done, length - done);
		if (wrote < 0 && errno == EINTR)
			continue;
		if (wrote <= 0) {
			int saved = errno;
			close(fd);
			unlink(temporary);
			return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot write %s: %s", path, strerror(saved));
		}
		done += (size_t)wrote;
	}
	/* mkstemp creates 0600; give the file the mode a plain creat() would. */
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0 || close(fd) != 0) {
		int saved = errno;
		unlink(temporary);
		return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot write %s: %s", path, strerror(saved));
	}
	if (rename(temporary, path) != 0) {
		int saved = errno;
		unlink(temporary);
		return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot replace %s: %s", path, strerror(saved));
	}
	return 0;
}

int fs_make_directories(struct arena *arena, const char *path, struct diag *diag)
{
	if (*path == '\0')
		return diag_fail(diag, BCO_ERROR_INPUT, "the build directory is empty");
	char *copy = arena_strdup(arena, path);
	for (char *p = copy + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(copy, 0777) != 0 && errno != EEXIST)
			return diag_fail(diag, BCO_ERROR_INPUT, "cannot create build directory %s: %s",
			                 copy, strerror(errno));
		*p = saved;
		if (saved == '\0')
			break;
	}
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return diag_fail(diag, BCO_ERROR_INPUT, "cannot create build directory %s: %s",
		                 path, "a file of that name is in the way");
	return 0;
}

int fs_mtime(const char *path, struct timespec *mtime)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	*mtime = st.st_mtim;
	return 0;
}

int fs_touch_now(int fd, struct timespec *now)
{
	struct stat st;
	if (futimens(fd, NULL) != 0 || fstat(fd, &st) != 0)
		return -1;
	*now = st.st_mtim;
	return 0;
}

int fs_time_compare(struct timespec a, struct timespec b)
{
	if (a.tv_sec != b.tv_sec)
		return a.tv_sec < b.tv_sec ? -1 : 1;
	if (a.tv_nsec != b.tv_nsec)
		return a.tv_nsec < b.tv_nsec ? -1 : 1;
	return 0;
}

const char *fs_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int fs_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}
