/* fsutil.c - files: read whole, write atomically, make directories. */
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "buffer.h"
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
		char probe;
		if (used + 1 == capacity) {
			/* As large as fstat said: grow only if the file grew while we
			 * read it, and then take what is there now. */
			ssize_t more = read(fd, &probe, 1);
			if (more < 0 && errno == EINTR)
				continue;
			if (more <= 0) {
				if (more == 0)
					break;
				int saved = errno;
				close(fd);
				errno = saved;
				return -1;
			}
			char *bigger = arena_array(arena, capacity, 2);
			memcpy(bigger, data, used);
			bigger[used++] = probe;
			data = bigger;
			capacity *= 2;
			continue;
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

int fs_holds(struct arena *arena, const char *path, const char *bytes, size_t length)
{
	/* Compared a piece at a time: a wrapper of thousands of ops is
	 * megabytes, and reading it whole would cost as much as writing it. */
	enum { PIECE = 64 * 1024 };
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (uintmax_t)st.st_size != length)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	char *piece = arena_alloc(arena, PIECE);
	size_t compared = 0;
	int same = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uintmax_t)st.st_size == length;
	while (same) {
		ssize_t got = read(fd, piece, PIECE);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			same = got == 0 && compared == length;
			break;
		}
		same = (size_t)got <= length - compared && memcmp(piece, bytes + compared, (size_t)got) == 0;
		compared += (size_t)got;
	}
	close(fd);
	return same;
}

/* Creates a new file beside path, named path.tmpXXXXXX, with the mode a
 * plain creat() gives (0666 less the umask, which is never changed, as
 * another thread may be creating files).  Returns its descriptor and name,
 * or -1 with errno set. */
static int create_temporary(struct arena *arena, const char *path, char **name)
{
	static atomic_uint counter;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t seed = (uint64_t)now.tv_nsec ^ (uint64_t)now.tv_sec << 20 ^ (uint64_t)getpid() << 40;
	for (int attempt = 0; attempt < 100; attempt++) {
		uint64_t value = seed + atomic_fetch_add(&counter, 1) * 0x9e3779b97f4a7c15u;
		value ^= value >> 29;
		*name = arena_printf(arena, "%s.tmp%06llx", path, (unsigned long long)(value & 0xffffff));
		int fd = open(*name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

int fs_write_atomic(struct arena *arena, const char *path, const char *bytes,
                    size_t length, struct diag *diag)
{
	if (fs_holds(arena, path, bytes, length))
		return 0;
	char *temporary;
	int fd = create_temporary(arena, path, &temporary);
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
	if (close(fd) != 0) {
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

void fs_watch(struct strvec *watched, const char *path, int missing)
{
	if (!watched)
		return;
	char *above = arena_strdup(watched->arena, path);
	struct stat st;
	while (missing && stat(above, &st) != 0) {
		char *slash = strrchr(above, '/');
		if (!slash) {
			above = ".";
			break;
		}
		while (slash > above && slash[-1] == '/')
			slash--;
		if (slash == above) {
			above = "/";
			break;
		}
		*slash = '\0';
	}
	strvec_push(watched, above);
}
