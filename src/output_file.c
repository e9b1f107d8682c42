/* output_file.c - writing a file the user named, without destroying what is there. */
#include "output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"

/* As the kernel's own limit on links followed in one lookup. */
#define SYMLINK_DEPTH 40

/* The directory part of path, with its slash ("" when there is none). */
static size_t directory_length(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? (size_t)(slash - path) + 1 : 0;
}

char *output_file_resolve(const char *path, int *exists, struct stat *st)
{
	char *current = strdup(path);
	for (int depth = 0; current; depth++) {
		if (lstat(current, st) != 0) {
			if (errno != ENOENT) {
				free(current);
				return NULL;
			}
			*exists = 0;
			return current;
		}
		if (!S_ISLNK(st->st_mode)) {
			*exists = 1;
			return current;
		}
		if (depth == SYMLINK_DEPTH) {
			free(current);
			errno = ELOOP;
			return NULL;
		}
		size_t capacity = (size_t)st->st_size + 1;
		if (capacity < 2)
			capacity = 4096; /* /proc links report a size of 0 */
		char *target = malloc(capacity);
		ssize_t length = target ? readlink(current, target, capacity) : -1;
		if (length < 0 || (size_t)length >= capacity) {
			if (length >= 0)
				errno = ENAMETOOLONG;
			free(target);
			free(current);
			return NULL;
		}
		target[length] = '\0';
		size_t keep = target[0] == '/' ? 0 : directory_length(current);
		char *next = malloc(keep + (size_t)length + 1);
		if (next) {
			memcpy(next, current, keep);
			memcpy(next + keep, target, (size_t)length + 1);
		}
		free(target);
		free(current);
		current = next;
	}
	errno = ENOMEM;
	return NULL;
}

static int write_all(int fd, const struct output_part *parts, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		const char *data = parts[i].data;
		size_t left = parts[i].size;
		while (left > 0) {
			ssize_t wrote = write(fd, data, left);
			if (wrote < 0 && errno == EINTR)
				continue;
			if (wrote <= 0) {
				if (wrote == 0)
					errno = EIO;
				return -1;
			}
			data += wrote;
			left -= (size_t)wrote;
		}
	}
	return 0;
}

/* A device, FIFO or socket: written through, never replaced or deleted.
 * Returns 0 or an errno value. */
static int write_through(const char *target, const struct output_part *parts, size_t count)
{
	int fd = open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int status = write_all(fd, parts, count);
	int saved = errno;
	if (close(fd) != 0 && status == 0) {
		status = -1;
		saved = errno;
	}
	return status == 0 ? 0 : saved;
}

/* Creates a new temporary file beside target; returns its descriptor and
 * its malloc'ed name in *name, or -1 with errno set. */
static int create_temporary(const char *target, char **name)
{
	static atomic_uint serial;
	size_t keep = directory_length(target);
	const char *base = target + keep;
	size_t size = keep + strlen(base) + 64;
	char *candidate = malloc(size);
	if (!candidate)
		return -1;
	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned number = atomic_fetch_add(&serial, 1);
		snprintf(candidate, size, "%.*s.%s.tmp.%ld.%u", (int)keep, target, base, (long)getpid(),
		         number);
		int fd = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0644);
		if (fd >= 0) {
			*name = candidate;
			return fd;
		}
		if (errno != EEXIST)
			break;
	}
	int saved = errno;
	free(candidate);
	errno = saved;
	return -1;
}

/* A regular file, or a name not yet taken: a temporary file, then rename.
 * Returns 0 or an errno value, with *step set when making the temporary
 * file failed. */
static int write_replacing(const char *target, const struct stat *existing,
                           const struct output_part *parts, size_t count, const char **step)
{
	char *temporary = NULL;
	int fd = create_temporary(target, &temporary);
	if (fd < 0) {
		*step = "cannot create a temporary file beside it: ";
		return errno;
	}
	int status = 0;
	if (existing && fchmod(fd, existing->st_mode & 07777) != 0)
		status = -1;
	if (status == 0)
		status = write_all(fd, parts, count);
	int saved = errno;
	if (close(fd) != 0 && status == 0) {
		status = -1;
		saved = errno;
	}
	if (status == 0 && rename(temporary, target) != 0) {
		status = -1;
		saved = errno;
	}
	if (status != 0)
		unlink(temporary);
	free(temporary);
	return status == 0 ? 0 : saved;
}

/* Writes path by the rule; returns 0, an errno value (with *step set as
 * write_replacing sets it), or -1 when path is a directory.  Everything it
 * allocates is freed before it returns, so the caller's message is the
 * last step. */
static int write_by_rule(const char *path, const struct output_part *parts, size_t count,
                         const char **step)
{
	struct stat st;
	/* What the kernel finds at the end of every link (/proc's magic links to
	 * pipes and sockets too, as /dev/stdout is): if it is no regular file,
	 * it is written through by that name. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return write_through(path, parts, count);
	int exists = 0;
	char *target = output_file_resolve(path, &exists, &st);
	if (!target)
		return errno;
	int failed;
	if (exists && S_ISDIR(st.st_mode))
		failed = -1;
	else if (exists && !S_ISREG(st.st_mode))
		failed = write_through(target, parts, count);
	else
		failed = write_replacing(target, exists ? &st : NULL, parts, count, step);
	free(target);
	return failed;
}

int output_file_write(const char *path, const struct output_part *parts, size_t count,
                      struct diag *diag)
{
	if (!path || !*path)
		return diag_fail(diag, BCO_ERROR_INPUT, "cannot write '': the path is empty");
	const char *step = "";
	int failed = write_by_rule(path, parts, count, &step);
	if (failed < 0)
		return diag_fail(diag, BCO_ERROR_INPUT, "cannot write %s: it is a directory", path);
	if (failed > 0)
		return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot write %s: %s%s", path, step,
		                 strerror(failed));
	return 0;
}
