/* test_output_file.c - writing a user's output path without destroying what is there. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "check.h"
#include "diag.h"
#include "output_file.h"

static char directory[64];

static const char *in_directory(const char *name)
{
	static char paths[4][256];
	static int next;
	char *path = paths[next++ % 4];
	snprintf(path, sizeof paths[0], "%s/%s", directory, name);
	return path;
}

/* The message of the last write_text that failed. */
static char error[512];

static int write_text(const char *path, const char *text)
{
	struct output_part parts[2] = { { text, strlen(text) / 2 },
	                                { text + strlen(text) / 2, strlen(text) - strlen(text) / 2 } };
	jmp_buf out_of_memory;
	struct arena arena;
	arena_init(&arena, &out_of_memory);
	if (setjmp(out_of_memory)) {
		arena_release(&arena);
		snprintf(error, sizeof error, "out of memory");
		return -2;
	}
	struct diag diag;
	diag_init(&diag, &arena);
	error[0] = '\0';
	int status = output_file_write(path, parts, 2, &diag);
	if (status != 0)
		snprintf(error, sizeof error, "%s", diag.message);
	arena_release(&arena);
	return status;
}

static const char *read_text(const char *path)
{
	static char text[256];
	FILE *file = fopen(path, "r");
	if (!file)
		return NULL;
	size_t length = fread(text, 1, sizeof text - 1, file);
	fclose(file);
	text[length] = '\0';
	return text;
}

/* The names in the test directory other than those given, "" when none. */
static const char *strays(const char *const *expected, int count)
{
	static char names[512];
	names[0] = '\0';
	DIR *dir = opendir(directory);
	for (struct dirent *entry; dir && (entry = readdir(dir));) {
		int known = strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0;
		for (int i = 0; i < count; i++)
			known |= strcmp(entry->d_name, expected[i]) == 0;
		if (!known)
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s ", entry->d_name);
	}
	if (dir)
		closedir(dir);
	return names;
}

static mode_t mode_of(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? st.st_mode : 0;
}

/* Reads the FIFO to its end: the writer writes in parts, and a reader that
 * left after the first would end it by SIGPIPE. */
static void *read_fifo(void *path)
{
	static char got[64];
	size_t length = 0;
	int fd = open(path, O_RDONLY);
	while (fd >= 0 && length < sizeof got - 1) {
		ssize_t n = read(fd, got + length, sizeof got - 1 - length);
		if (n <= 0)
			break;
		length += (size_t)n;
	}
	got[length] = '\0';
	if (fd >= 0)
		close(fd);
	return got;
}

int main(void)
{
	snprintf(directory, sizeof directory, "%s", "/tmp/bco-output-file.XXXXXX");
	if (!mkdtemp(directory)) {
		printf("not ok - cannot make a directory: %s\n", strerror(errno));
		return 1;
	}
	mode_t mask = umask(022);

	const char *file = in_directory("out.txt");
	CHECK_INT(write_text(file, "first\n"), 0, "a new file is written");
	CHECK_STR(read_text(file), "first\n", "with all the parts in order");
	CHECK_INT(mode_of(file) & 07777, 0644, "a new file gets 0644 less the umask");
	chmod(file, 0600);
	CHECK_INT(write_text(file, "second\n"), 0, "an existing file is replaced");
	CHECK_STR(read_text(file), "second\n", "with the new content");
	CHECK_INT(mode_of(file) & 07777, 0600, "and keeps its mode");
	const char *only_file[] = { "out.txt" };
	CHECK_STR(strays(only_file, 1), "", "no temporary file is left");

	const char *link = in_directory("link");
	if (symlink("out.txt", link) != 0)
		printf("# symlink: %s\n", strerror(errno));
	CHECK_INT(write_text(link, "through the link\n"), 0, "a symbolic link is followed");
	CHECK(S_ISLNK(mode_of(link)), "the link stays a link");
	CHECK_STR(read_text(file), "through the link\n", "and its target gets the content");
	const char *chained = in_directory("chained");
	if (symlink("link", chained) != 0)
		printf("# symlink: %s\n", strerror(errno));
	CHECK_INT(write_text(chained, "two links\n"), 0, "a chain of links is followed");
	CHECK(S_ISLNK(mode_of(chained)) && S_ISLNK(mode_of(link)), "every link of the chain stays");
	CHECK_STR(read_text(file), "two links\n", "to the file at its end");
	const char *dangling = in_directory("dangling");
	if (symlink("made.txt", dangling) != 0)
		printf("# symlink: %s\n", strerror(errno));
	CHECK_INT(write_text(dangling, "made\n"), 0, "a dangling link is followed");
	CHECK_STR(read_text(in_directory("made.txt")), "made\n", "its target is created");
	CHECK(S_ISLNK(mode_of(dangling)), "and the link stays");
	const char *loop = in_directory("loop");
	if (symlink("loop", loop) != 0)
		printf("# symlink: %s\n", strerror(errno));
	CHECK_INT(write_text(loop, "x"), -1, "a link to itself is refused");
	char expected[512];
	snprintf(expected, sizeof expected, "cannot write %s: %s", loop, strerror(ELOOP));
	CHECK_STR(error, expected, "saying the links loop");

	const char *fifo = in_directory("fifo");
	if (mkfifo(fifo, 0600) != 0)
		printf("# mkfifo: %s\n", strerror(errno));
	pthread_t reader;
	pthread_create(&reader, NULL, read_fifo, (void *)fifo);
	CHECK_INT(write_text(fifo, "to the reader\n"), 0, "a FIFO is written through");
	void *got;
	pthread_join(reader, &got);
	CHECK_STR(got, "to the reader\n", "its reader gets the content");
	CHECK(S_ISFIFO(mode_of(fifo)), "and it stays a FIFO");

	/* /dev/stdout is a link to /proc/self/fd/1, whose link names no path
	 * when it is a pipe ("pipe:[N]"): the kernel still finds the pipe. */
	int ends[2];
	if (pipe(ends) != 0)
		printf("# pipe: %s\n", strerror(errno));
	char through_proc[64];
	snprintf(through_proc, sizeof through_proc, "/proc/self/fd/%d", ends[1]);
	CHECK_INT(write_text(through_proc, "to the pipe\n"), 0,
	          "a pipe behind a /proc link is written through");
	close(ends[1]);
	char piped[64] = "";
	ssize_t piped_length = read(ends[0], piped, sizeof piped - 1);
	piped[piped_length > 0 ? piped_length : 0] = '\0';
	close(ends[0]);
	CHECK_STR(piped, "to the pipe\n", "and its reader gets the content");

	CHECK_INT(write_text("/dev/null", "gone\n"), 0, "a device is written through");
	CHECK(S_ISCHR(mode_of("/dev/null")), "and stays a device");
	if (access("/dev/full", W_OK) == 0) {
		CHECK_INT(write_text("/dev/full", "full\n"), -1, "a failed write fails");
		snprintf(expected, sizeof expected, "cannot write /dev/full: %s", strerror(ENOSPC));
		CHECK_STR(error, expected, "saying why");
		CHECK(S_ISCHR(mode_of("/dev/full")), "and the device is still there");
	} else {
		printf("ok - a failed write fails # skip /dev/full is not writable here\n");
	}

	CHECK_INT(write_text(directory, "x"), -1, "a directory is refused");
	snprintf(expected, sizeof expected, "cannot write %s: it is a directory", directory);
	CHECK_STR(error, expected, "saying it is one");
	const char *missing = in_directory("no/such/dir/out");
	CHECK_INT(write_text(missing, "x"), -1, "a file in a missing directory fails");
	snprintf(expected, sizeof expected,
	         "cannot write %s: cannot create a temporary file beside it: %s", missing,
	         strerror(ENOENT));
	CHECK_STR(error, expected, "saying why");
	CHECK_INT(write_text("", "x"), -1, "an empty path is refused");
	CHECK_STR(error, "cannot write '': the path is empty", "saying so");

	const char *all[] = { "out.txt", "link", "chained", "dangling", "made.txt", "loop", "fifo" };
	CHECK_STR(strays(all, 7), "", "no temporary file is left after any of them");

	umask(mask);
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		unlink(in_directory(all[i]));
	rmdir(directory);
	return check_failures != 0;
}
