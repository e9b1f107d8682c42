/* test_buildlog.c - the build log: hashes, the file format, appending, version 1. */
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

static const char *read_text(const char *path)
{
	char *text;
	size_t length;
	if (fs_read_file(&arena, path, &text, &length) != 0)
		return NULL;
	return text;
}

/* The entry of output as "<command> <inputs> <library>", or "missing". */
static const char *lookup(const struct buildlog *log, const char *output)
{
	const struct buildlog_entry *entry = buildlog_find(log, output);
	if (!entry)
		return "missing";
	if (!entry->has_inputs)
		return arena_printf(&arena, "%016llx - [%s]", (unsigned long long)entry->command_hash,
		                    entry->library);
	return arena_printf(&arena, "%016llx %016llx [%s]", (unsigned long long)entry->command_hash,
	                    (unsigned long long)entry->inputs_hash, entry->library);
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
	uint64_t fields = buildlog_hash_field(buildlog_hash_field(buildlog_hash_start(), "a"), "b");
	CHECK(buildlog_hash_number(fields, UINT64_MAX) == hash,
	      "the running hash of fields is the command hash's");
	CHECK(buildlog_hash_number(fields, 1) != buildlog_hash_number(fields, 2), "numbers count");
}

static void test_round_trip(void)
{
	struct diag diag;
	diag_init(&diag, &arena);
	char *path = path_in_directory("round.log");
	struct buildlog log;
	buildlog_load(&arena, path, "build", &log);
	CHECK_INT(log.length, 0, "a missing log loads empty");
	buildlog_record(&log, "b.o", "lib", 0x2, 0x20);
	buildlog_record(&log, "a.o", "lib", 0x1, 0x10);
	buildlog_record(&log, "with space.so", "other lib", 0xfedcba9876543210u, 0x0123456789abcdefu);
	buildlog_record(&log, "b.o", "lib", 0x3, 0x30);
	buildlog_record(&log, "new\nline.o", "lib", 0x4, 0x40);
	buildlog_record(&log, "sub/dir.o", "lib", 0x6, 0x60);
	buildlog_record(&log, "..", "lib", 0x7, 0x70);
	buildlog_record(&log, "gone.o", "lib", 0x5, 0x50);
	buildlog_forget(&log, "gone.o");
	buildlog_forget(&log, "never.o");
	CHECK_STR(lookup(&log, "b.o"), "0000000000000003 0000000000000030 [lib]", "record replaces an entry");
	CHECK_STR(lookup(&log, "gone.o"), "missing", "forget removes an entry");
	CHECK_STR(lookup(&log, "new\nline.o"), "missing", "a name with a newline is not recorded");
	CHECK_STR(lookup(&log, "sub/dir.o"), "missing", "a name outside the build directory is not recorded");
	CHECK_STR(lookup(&log, ".."), "missing", "nor is ..");
	CHECK_INT(buildlog_save(&log, path, &diag), 0, "save succeeds");
	CHECK_STR(read_text(path),
	          "# build-custom-op log 2\n"
	          "0000000000000001 0000000000000010 lib\ta.o\n"
	          "0000000000000003 0000000000000030 lib\tb.o\n"
	          "fedcba9876543210 0123456789abcdef other lib\twith space.so\n",
	          "the saved text: version 2, hashes, library, a tab, the name");
	struct buildlog again;
	buildlog_load(&arena, path, "anywhere", &again);
	CHECK_INT(again.length, 3, "every entry loads back, whatever the build directory is called");
	CHECK_STR(lookup(&again, "with space.so"), "fedcba9876543210 0123456789abcdef [other lib]",
	          "a name and a library with spaces");
	CHECK_STR(lookup(&again, "a.o"), "0000000000000001 0000000000000010 [lib]", "another entry");
	CHECK_INT(buildlog_save(&log, path_in_directory("no/such/dir/x.log"), &diag), -1,
	          "save into a missing directory fails");
	CHECK_INT(diag.kind, BCO_ERROR_SYSTEM, "with a system error");
}

static void test_append(void)
{
	struct diag diag;
	diag_init(&diag, &arena);
	char *path = path_in_directory("append.log");
	struct buildlog log;
	buildlog_load(&arena, path, "build", &log);
	buildlog_record(&log, "a.o", "lib", 0x1, 0x10);
	buildlog_record(&log, "old.so", "lib", 0x2, 0x20);
	CHECK_INT(buildlog_save(&log, path, &diag), 0, "a log to append to");
	CHECK_INT(buildlog_open_append(&log, path, &diag), 0, "opens for appending");
	char *pack[] = {"lib.packed.so", "lib.stripped.so", "bad/name", NULL};
	CHECK_INT(buildlog_append(&log, pack, 3, "lib", 0x7, 0x70, &diag), 0, "a step's outputs are appended");
	char *again[] = {"a.o", NULL};
	CHECK_INT(buildlog_append(&log, again, 1, "lib", 0x8, 0x80, &diag), 0, "an output appended again");
	buildlog_close_append(&log);
	CHECK_STR(read_text(path),
	          "# build-custom-op log 2\n"
	          "0000000000000001 0000000000000010 lib\ta.o\n"
	          "0000000000000002 0000000000000020 lib\told.so\n"
	          "0000000000000007 0000000000000070 lib\tlib.packed.so\n"
	          "0000000000000007 0000000000000070 lib\tlib.stripped.so\n"
	          "0000000000000008 0000000000000080 lib\ta.o\n",
	          "one line per output, after what was saved");
	CHECK_STR(lookup(&log, "lib.stripped.so"), "0000000000000007 0000000000000070 [lib]",
	          "and the entries are in the log in memory");
	struct buildlog loaded;
	buildlog_load(&arena, path, "build", &loaded);
	CHECK_INT(loaded.length, 4, "the appended log loads");
	CHECK_STR(lookup(&loaded, "a.o"), "0000000000000008 0000000000000080 [lib]", "the later line wins");
	CHECK_INT(buildlog_open_append(&log, path_in_directory("none.log"), &diag), -1,
	          "a log that was never saved cannot be appended to");
	CHECK_STR(diag.message, arena_printf(&arena, "cannot write the build log %s: No such file or directory",
	                                     path_in_directory("none.log")), "and says so");
}

static void test_version_1(void)
{
	struct diag diag;
	diag_init(&diag, &arena);
	char *path = path_in_directory("old.log");
	check_write_file(path, "# build-custom-op log 1\n"
	                 "0000000000000001 build/a.o\n"
	                 "0000000000000002 build/lib_cpu0.so\n"
	                 "0000000000000003 elsewhere/b.o\n"
	                 "0000000000000004 build/\n"
	                 "0000000000000005 build/sub/c.o\n"
	                 "0000000000000006 buildx/d.o\n");
	struct buildlog log;
	buildlog_load(&arena, path, "build", &log);
	CHECK_INT(log.length, 2, "a version 1 log loads its entries of this build directory");
	CHECK_STR(lookup(&log, "a.o"), "0000000000000001 - []", "an entry has its command hash, no inputs fingerprint and no library");
	CHECK_STR(lookup(&log, "lib_cpu0.so"), "0000000000000002 - []", "another");
	buildlog_record(&log, "lib_cpu0.so", "lib", 0x2, 0x22);
	CHECK_INT(buildlog_save(&log, path, &diag), 0, "saves");
	CHECK_STR(read_text(path), "# build-custom-op log 2\n"
	                           "0000000000000001 ---------------- \ta.o\n"
	                           "0000000000000002 0000000000000022 lib\tlib_cpu0.so\n",
	          "as version 2, an entry no check vouched for yet without a fingerprint");
	buildlog_load(&arena, path, "build", &log);
	CHECK_STR(lookup(&log, "a.o"), "0000000000000001 - []", "which loads as it was saved");
}

static void test_damaged(void)
{
	char *path = path_in_directory("damaged.log");
	struct buildlog log;

	check_write_file(path, "# some other log 2\n0000000000000001 0000000000000001 l\ta.o\n");
	buildlog_load(&arena, path, "build", &log);
	CHECK_INT(log.length, 0, "a bad header loads as empty");

	check_write_file(path, "# build-custom-op log 2\n"
	                 "0000000000000001 0000000000000011 lib\ta.o\n"
	                 "000000000000000G 0000000000000011 lib\tbad-digit.o\n"
	                 "0000000000000001 000000000000001G lib\tbad-inputs.o\n"
	                 "00000000000000AB 0000000000000011 lib\tupper-case.o\n"
	                 "00000000000001 0000000000000011 lib\tshort.o\n"
	                 "0000000000000002 0000000000000011 lib\t\n"
	                 "0000000000000003 0000000000000011 lib no-tab.o\n"
	                 "0000000000000004-0000000000000011 lib\tno-space.o\n"
	                 "0000000000000005 0000000000000011 lib\tdup.o\n"
	                 "0000000000000006 0000000000000066 lib\tdup.o\n"
	                 "0000000000000008 0000000000000011 \tno-library.o\n"
	                 "0000000000000009 0000000000000011 lib\tbuild/slash.o\n"
	                 "0000000000000007 0000000000000011 lib\ttrunc");
	buildlog_load(&arena, path, "build", &log);
	CHECK_INT(log.length, 3, "only the intact lines load");
	CHECK_STR(lookup(&log, "a.o"), "0000000000000001 0000000000000011 [lib]", "a good line before bad ones");
	CHECK_STR(lookup(&log, "dup.o"), "0000000000000006 0000000000000066 [lib]", "the later of two lines wins");
	CHECK_STR(lookup(&log, "no-library.o"), "0000000000000008 0000000000000011 []", "an empty library is read");
	CHECK_STR(lookup(&log, "trunc"), "missing", "a truncated last line is ignored");
	CHECK_STR(lookup(&log, "bad-inputs.o"), "missing", "a bad inputs hash is ignored");
	CHECK_STR(lookup(&log, "build/slash.o"), "missing", "a name with a slash is ignored");

	check_write_file(path, "# build-custom-op log");
	buildlog_load(&arena, path, "build", &log);
	CHECK_INT(log.length, 0, "a truncated header loads as empty");

	buildlog_load(&arena, directory, "build", &log);
	CHECK_INT(log.length, 0, "a directory loads as empty");
	buildlog_record(&log, "x.o", "lib", 9, 10);
	CHECK_STR(lookup(&log, "x.o"), "0000000000000009 000000000000000a [lib]", "a log loaded empty can be recorded into");
}

/* Many entries, recorded out of order, then loaded back: a check of the
 * sorted structure (every lookup must find its own hash). */
static void test_many(void)
{
	struct diag diag;
	diag_init(&diag, &arena);
	char *path = path_in_directory("many.log");
	struct buildlog log;
	buildlog_load(&arena, path, "build", &log);
	enum { COUNT = 10000 };
	for (unsigned i = 0; i < COUNT; i++) {
		unsigned scrambled = (i * 7919u) % COUNT;
		buildlog_record(&log, arena_printf(&arena, "obj%u.o", scrambled), "lib", scrambled, ~(uint64_t)scrambled);
	}
	CHECK_INT(buildlog_save(&log, path, &diag), 0, "save of 10000 entries");
	struct buildlog loaded;
	buildlog_load(&arena, path, "build", &loaded);
	CHECK_INT(loaded.length, COUNT, "10000 entries load");
	int all_found = 1;
	for (unsigned i = 0; i < COUNT; i++) {
		const struct buildlog_entry *entry = buildlog_find(&loaded, arena_printf(&arena, "obj%u.o", i));
		if (!entry || entry->command_hash != i || entry->inputs_hash != ~(uint64_t)i)
			all_found = 0;
	}
	CHECK(all_found, "each of 10000 entries has its hashes");
	for (unsigned i = 0; i < COUNT; i += 2)
		buildlog_forget(&loaded, arena_printf(&arena, "obj%u.o", i));
	CHECK_INT(loaded.length, COUNT / 2, "forgetting half leaves half");
	CHECK_STR(lookup(&loaded, "obj4001.o"), "0000000000000fa1 fffffffffffff05e [lib]", "an odd one stays");
	CHECK_STR(lookup(&loaded, "obj4000.o"), "missing", "an even one is gone");
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
	test_append();
	test_version_1();
	test_damaged();
	test_many();
	const char *names[] = {"round.log", "append.log", "old.log", "damaged.log", "many.log"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		unlink(path_in_directory(names[i]));
	rmdir(directory);
	arena_release(&arena);
	return check_failures != 0;
}
