/* test_state.c - what a finished compile may record, when a header is dated
 * at the very time the compile started; what the check notes it looked at. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "buffer.h"
#include "check.h"
#include "fsutil.h"
#include "plan.h"
#include "state.h"

static struct arena arena;
static char directory[] = "/tmp/test_state.XXXXXX";

static char *path_in_directory(const char *name)
{
	return arena_printf(&arena, "%s/%s", directory, name);
}

static void write_text(const char *path, const char *text)
{
	FILE *file = fopen(path, "w");
	if (!file || fputs(text, file) == EOF || fclose(file) != 0) {
		printf("not ok - cannot write %s\n", path);
		exit(1);
	}
}

/* Gives path the time started moved by nanoseconds (either way). */
static void date_at(const char *path, struct timespec started, long nanoseconds)
{
	struct timespec times[2];
	times[0] = started;
	times[0].tv_nsec += nanoseconds;
	if (times[0].tv_nsec < 0) {
		times[0].tv_nsec += 1000000000L;
		times[0].tv_sec--;
	} else if (times[0].tv_nsec >= 1000000000L) {
		times[0].tv_nsec -= 1000000000L;
		times[0].tv_sec++;
	}
	times[1] = times[0];
	if (utimensat(AT_FDCWD, path, times, 0) != 0) {
		printf("not ok - cannot date %s\n", path);
		exit(1);
	}
}

/* Runs one compile of relu.cpp through the state's start and end, with a
 * header that its depfile names for the first time dated offset
 * nanoseconds from the compile's start; returns what state_step_finished
 * says (1: record it).  clock_fd: the file system's clock, or -1.
 * *inclusive: what the start decided. */
static int finish_with_header_at(int clock_fd, long offset, int *inclusive)
{
	char *source = path_in_directory("relu.cpp");
	char *header = path_in_directory("relu.h");
	char *depfile = path_in_directory("relu.d");
	write_text(source, "#include \"relu.h\"\n");
	write_text(header, "int relu_h;\n");
	unlink(depfile);

	char *object = path_in_directory("relu.o");
	struct step step = { .action = "CC", .target = source, .outputs = &object, .output_count = 1 };
	struct step_files files = { .source = source, .depfile = depfile, .inputs = &source, .input_count = 1 };
	struct plan plan = { .steps = &step, .files = &files, .step_count = 1, .compile_count = 1 };
	struct state state;
	state_init(&state, &arena, &plan, NULL, NULL, "lib", clock_fd);

	state_step_starting(&state, 0);
	/* The compile: it writes its object and a depfile naming the header,
	 * and the header is dated as asked. */
	write_text(object, "object\n");
	write_text(depfile, arena_printf(&arena, "%s: %s %s\n", object, source, header));
	date_at(header, files.started, offset);
	uint64_t inputs;
	int recorded = state_step_finished(&state, 0, &inputs);
	*inclusive = files.started_inclusive;
	return recorded;
}

static void test_with_the_clock(void)
{
	int clock_fd = open(path_in_directory("clock"), O_RDWR | O_CREAT, 0644);
	CHECK(clock_fd >= 0, "the clock file opens");
	int inclusive = -1;
	CHECK_INT(finish_with_header_at(clock_fd, 1, &inclusive), 0,
	          "a new header dated after the start: not recorded");
	CHECK_INT(inclusive, 0, "the file system's clock moved past the start before the spawn");
	CHECK_INT(finish_with_header_at(clock_fd, 0, &inclusive), 1,
	          "a new header dated at the start: written before the spawn, so recorded");
	CHECK_INT(finish_with_header_at(clock_fd, -1, &inclusive), 1,
	          "a new header dated before the start: recorded");
	close(clock_fd);
}

static void test_without_the_clock(void)
{
	int inclusive = -1;
	CHECK_INT(finish_with_header_at(-1, 0, &inclusive), 0,
	          "no clock to wait for: a new header dated at the start may be an edit, not recorded");
	CHECK_INT(inclusive, 1, "no clock to wait for: the start time counts as changed");
	CHECK_INT(finish_with_header_at(-1, 1, &inclusive), 0,
	          "no clock to wait for: a new header dated after the start: not recorded");
	CHECK_INT(finish_with_header_at(-1, -1, &inclusive), 1,
	          "no clock to wait for: a new header dated before the start: recorded");
}

/* fs_watch: a path that exists is noted as it is; for a missing one, the
 * nearest directory above it that exists. */
static void test_watching(void)
{
	struct strvec watched;
	strvec_init(&watched, &arena);
	const char *file = path_in_directory("watched.txt");
	write_text(file, "x\n");
	fs_watch(&watched, file, 0);
	fs_watch(&watched, file, 1);
	fs_watch(&watched, path_in_directory("missing/deeper/x.h"), 1);
	fs_watch(&watched, "no-such-directory.test_state/x.h", 1);
	fs_watch(&watched, "/no-such-directory.test_state/x.h", 1);
	fs_watch(NULL, file, 1);
	CHECK_INT(watched.length, 5, "each call notes one path; none without a list");
	if (watched.length != 5)
		return;
	CHECK_STR(watched.items[0], file, "a file is noted as it is");
	CHECK_STR(watched.items[1], file, "a file that exists is noted as it is when missing is asked");
	CHECK_STR(watched.items[2], directory, "a missing path: the nearest directory above it that exists");
	CHECK_STR(watched.items[3], ".", "a missing relative path: the working directory");
	CHECK_STR(watched.items[4], "/", "a missing absolute path: the root");
}

int main(void)
{
	jmp_buf out_of_memory;
	if (setjmp(out_of_memory)) {
		printf("not ok - out of memory\n");
		return 1;
	}
	arena_init(&arena, &out_of_memory);
	if (!mkdtemp(directory)) {
		printf("not ok - cannot create a temporary directory\n");
		return 1;
	}
	test_with_the_clock();
	test_without_the_clock();
	test_watching();
	const char *names[] = { "relu.cpp", "relu.h", "relu.d", "relu.o", "clock", "watched.txt" };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		unlink(path_in_directory(names[i]));
	rmdir(directory);
	arena_release(&arena);
	return check_failures != 0;
}
