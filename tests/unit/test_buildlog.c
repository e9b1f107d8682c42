/* test_buildlog.c - the log of command hashes. */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "buildlog.h"
#include "check.h"
#include "diag.h"
#include "fsutil.h"

static struct arena arena;
static char directory[] = "/tmp/test_buildlog.XXXXXX";

static char *path_in_directory(const char *name)
{
	return arena_printf(&arena, "%s/%s", directory, name);
}

static void write_text(const char *path, const char *text)
{
	FILE *file = fopen(path, "w");
	if (!file) {
		printf("not ok - cannot write %s\n", path);
		exit(1);
	}
	fputs(text, file);
	fclose(file);
}

static const char *read_text(const char *path)
{
	char *text;
	size_t length;
	if (fs_read_file(&arena, path, &text, &length) != 0)
		return NULL;
	return text;
}

/* Returns the recorded hash of output as 16 hex digits, or "missing". */
static const char *lookup(const struct buildlog *log, const char *output)
{
	uint64_t hash;
	if (!buildlog_lookup(log, output, &hash))
		return "missing";
	return arena_printf(&arena, "%016llx", (unsigned long long)hash);
}

static void test_hash(void)
{
	char *ab[] = {"a", "b", NULL};
	char *a_b[] = {"a b", NULL};
	char *a[] = {"a", NULL};
	char *empty[] = {NULL};
	const char *b_extra[] = {"b"};
	const char *null_extra[] = {NULL};
	const char *empty_extra[] = {""};
	uint64_t hash = buildlog_hash_command(ab, NULL, 0);
	CHECK(hash == buildlog_hash_command(ab, NULL, 0), "the hash is stable");
	CHECK(hash != buildlog_hash_command(a_b, NULL, 0), "word boundaries count");
	CHECK(hash != buildlog_hash_command(a, b_extra, 1), "argv and extras are kept apart");
	CHECK(buildlog_hash_command(empty, null_extra, 1) != buildlog_hash_command(empty, empty_extra, 1),
	      "a NULL extra differs from an empty one");
	CHECK(buildlog_hash_command(empty, NULL, 0) != buildlog_hash_command(empty, empty_extra, 1),
	      "the number of extras counts");
	/* Pinned (FNV-1a 64 over 8-byte little-endian lengths and bytes, then an
	 * all-ones length ending argv) so every build reads the log the same. */
	CHECK_STR(arena_printf(&arena, "%016llx", (unsigned long long)hash), "f1740adebd03af8c",
	          "the hash of {a, b} is pinned");
}

static void test_round_trip(void)
{
	struct diag diag;
	diag_init(&diag, &arena);
	char *path = path_in_directory("round.log");
	struct buildlog log;
	buildlog_load(&arena, path, &log);
	CHECK_INT(log.length, 0, "a missing log loads empty");
	buildlog_record(&log, "build/b.o", 0x2);
	buildlog_record(&log, "build/a.o", 0x1);
	buildlog_record(&log, "build/with space.so", 0xfedcba9876543210u);
	buildlog_record(&log, "build/b.o", 0x3);
	buildlog_record(&log, "build/new\nline.o", 0x4);
	buildlog_record(&log, "build/gone.o", 0x5);
	buildlog_forget(&log, "build/gone.o");
	buildlog_forget(&log, "build/never.o");
	CHECK_STR(lookup(&log, "build/b.o"), "0000000000000003", "record replaces a hash");
	CHECK_STR(lookup(&log, "build/gone.o"), "missing", "forget removes an entry");
	CHECK_STR(lookup(&log, "build/new\nline.o"), "missing", "a path with a newline is not recorded");
	CHECK_INT(buildlog_save(&log, path, &diag), 0, "save succeeds");
	CHECK_STR(read_text(path),
	          "# build-custom-op log 1\n"
	          "0000000000000001 build/a.o\n"
	          "0000000000000003 build/b.o\n"
	          "fedcba9876543210 build/with space.so\n",
	          "the saved text");
	struct buildlog again;
	buildlog_load(&arena, path, &again);
	CHECK_INT(again.length, 3, "every entry loads back");
	CHECK_STR(lookup(&again, "build/with space.so"), "fedcba9876543210", "a path with a space");
	CHECK_STR(lookup(&again, "build/a.o"), "0000000000000001", "another entry");
	CHECK_INT(buildlog_save(&log, path_in_directory("no/such/dir/x.log"), &diag), -1,
	          "save into a missing directory fails");
	CHECK_INT(diag.kind, BCO_ERROR_SYSTEM, "with a system error");
}

static void test_damaged(void)
{
	char *path = path_in_directory("damaged.log");
	struct buildlog log;

	write_text(path, "# some other log 1\n0000000000000001 a.o\n");
	buildlog_load(&arena, path, &log);
	CHECK_INT(log.length, 0, "a bad header loads as empty");

	write_text(path, "# build-custom-op log 1\n"
	                 "0000000000000001 a.o\n"
	                 "000000000000000G bad-digit.o\n"
	                 "00000000000000AB upper-case.o\n"
	                 "00000000000001 short.o\n"
	                 "0000000000000002\n"
	                 "0000000000000003 \n"
	                 "0000000000000004-no-space.o\n"
	                 "0000000000000005 dup.o\n"
	                 "0000000000000006 dup.o\n"
	                 "0000000000000007 trunc");
	buildlog_load(&arena, path, &log);
	CHECK_INT(log.length, 2, "only the intact lines load");
	CHECK_STR(lookup(&log, "a.o"), "0000000000000001", "a good line before bad ones");
	CHECK_STR(lookup(&log, "dup.o"), "0000000000000006", "the later of two lines wins");
	CHECK_STR(lookup(&log, "trunc"), "missing", "a truncated last line is ignored");
	CHECK_STR(lookup(&log, "bad-digit.o"), "missing", "a bad hash is ignored");

	write_text(path, "# build-custom-op log");
	buildlog_load(&arena, path, &log);
	CHECK_INT(log.length, 0, "a truncated header loads as empty");

	buildlog_load(&arena, directory, &log);
	CHECK_INT(log.length, 0, "a directory loads as empty");
	buildlog_record(&log, "x.o", 9);
	CHECK_STR(lookup(&log, "x.o"), "0000000000000009", "a log loaded empty can be recorded into");
}

/* Many entries, recorded out of order, then loaded back: a check of the
 * sorted structure (every lookup must find its own hash). */
static void test_many(void)
{
	struct diag diag;
	diag_init(&diag, &arena);
	char *path = path_in_directory("many.log");
	struct buildlog log;
	buildlog_load(&arena, path, &log);
	enum { COUNT = 10000 };
	for (unsigned i = 0; i < COUNT; i++) {
		unsigned scrambled = (i * 7919u) % COUNT;
		buildlog_record(&log, arena_printf(&arena, "build/obj%u.o", scrambled), scrambled);
	}
	CHECK_INT(buildlog_save(&log, path, &diag), 0, "save of 10000 entries");
	struct buildlog loaded;
	buildlog_load(&arena, path, &loaded);
	CHECK_INT(loaded.length, COUNT, "10000 entries load");
	int all_found = 1;
	for (unsigned i = 0; i < COUNT; i++) {
		uint64_t hash;
		if (!buildlog_lookup(&loaded, arena_printf(&arena, "build/obj%u.o", i), &hash) || hash != i)
			all_found = 0;
	}
	CHECK(all_found, "each of 10000 entries has its hash");
	for (unsigned i = 0; i < COUNT; i += 2)
		buildlog_forget(&loaded, arena_printf(&arena, "build/obj%u.o", i));
	CHECK_INT(loaded.length, COUNT / 2, "forgetting half leaves half");
	CHECK_STR(lookup(&loaded, "build/obj4001.o"), "0000000000000fa1", "an odd one stays");
	CHECK_STR(lookup(&loaded, "build/obj4000.o"), "missing", "an even one is gone");
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
	test_hash();
	test_round_trip();
	test_damaged();
	test_many();
	const char *names[] = {"round.log", "damaged.log", "many.log"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		unlink(path_in_directory(names[i]));
	rmdir(directory);
	arena_release(&arena);
	return check_failures != 0;
}
