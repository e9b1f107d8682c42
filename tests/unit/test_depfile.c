/* test_depfile.c - the -MMD depfile reader. */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "buffer.h"
#include "check.h"
#include "depfile.h"

static struct arena arena;

/* Parses length bytes of text and returns the prerequisites joined by '|',
 * or "ERROR" when the parser rejects the text. */
static const char *parse_bytes(const char *text, size_t length)
{
	struct strvec prerequisites;
	strvec_init(&prerequisites, &arena);
	if (depfile_parse(&arena, text, length, &prerequisites) != 0) {
		if (prerequisites.length != 0)
			return "ERROR with leftovers";
		return "ERROR";
	}
	struct buffer joined;
	buffer_init(&joined, &arena);
	for (size_t i = 0; i < prerequisites.length; i++) {
		if (i)
			buffer_putc(&joined, '|');
		buffer_puts(&joined, prerequisites.items[i]);
	}
	return joined.data;
}

static const char *parse(const char *text)
{
	return parse_bytes(text, strlen(text));
}

static void test_gcc_output(void)
{
	CHECK_STR(parse("build/relu.o: src/relu.cpp src/relu.h \\\n"
	                " /opt/sdk/torch/include/torch.h\n"
	                "src/relu.h:\n"
	                "/opt/sdk/torch/include/torch.h:\n"),
	          "src/relu.cpp|src/relu.h|/opt/sdk/torch/include/torch.h",
	          "gcc -MMD -MP output: prerequisites, phony rules add nothing");
	CHECK_STR(parse("a.o: a.c"), "a.c", "no final newline");
	CHECK_STR(parse("a.o:\n"), "", "a rule without prerequisites");
	CHECK_STR(parse("a.o : a.c b.h\n"), "a.c|b.h", "a colon standing alone");
	CHECK_STR(parse("a.o:\ta.c\tb.h\n"), "a.c|b.h", "tabs separate words");
}

static void test_escapes(void)
{
	CHECK_STR(parse("a.o: my\\ dir/a.c /x/y\\ z\\ w.h\n"), "my dir/a.c|/x/y z w.h",
	          "backslash-space is a space in a name");
	CHECK_STR(parse("a.o: cost$$.h\n"), "cost$.h", "$$ is a dollar");
	CHECK_STR(parse("a.o: lone$x.h\n"), "lone$x.h", "a lone $ is kept");
	CHECK_STR(parse("a.o: hash\\#1.h\n"), "hash#1.h", "backslash-hash is a hash");
	CHECK_STR(parse("a.o: dir\\\\\\ x.h\n"), "dir\\ x.h",
	          "an escaped backslash before an escaped space");
	CHECK_STR(parse("a.o: dir\\\\ x.h\n"), "dir\\|x.h",
	          "an escaped backslash before a separating space");
	CHECK_STR(parse("a.o: c:\\path\\x.h\n"), "c:\\path\\x.h",
	          "backslashes inside a name and a colon not followed by a blank are literal");
}

static void test_line_endings(void)
{
	CHECK_STR(parse("a.o: a.c \\\r\n b.h\r\nb.h:\r\n"), "a.c|b.h", "CRLF line endings");
	CHECK_STR(parse("a.o: a.c\\\n b.h\n"), "a.c|b.h", "a continuation right after a word");
	CHECK_STR(parse("a.o: \\\n\\\n a.c\n"), "a.c", "continuation lines with nothing on them");
	CHECK_STR(parse("a.o: a.c\nb.o: b.c\n"), "a.c|b.c", "two rules");
	CHECK_STR(parse("a.o b.o: shared.h\n"), "shared.h", "several targets");
	CHECK_STR(parse("a.o \\\n : a.c\n"), "a.c", "a continuation before the colon");
	CHECK_STR(parse("\n\n# a comment\na.o: a.c # trailing comment\n"), "a.c",
	          "blank lines and comments");
}

static void test_rejects(void)
{
	CHECK_STR(parse(""), "ERROR", "empty text is not a depfile");
	CHECK_STR(parse("\n  \n"), "ERROR", "blank text is not a depfile");
	CHECK_STR(parse("garbage without a colon\n"), "ERROR", "words without a rule");
	CHECK_STR(parse("a.o: a.c\ntruncated"), "ERROR",
	          "a truncated line after a good rule rejects the whole text");
	CHECK_STR(parse(": a.c\n"), "ERROR", "a colon without a target");
	CHECK_STR(parse("a.o: b: c\n"), "ERROR", "two colons on a line");
	CHECK_STR(parse_bytes("a.o: a\0b.h\n", 11), "ERROR", "a NUL byte");
	CHECK_STR(parse("a.o: a.c\\"), "a.c\\", "a final backslash is literal");
	/* Only the length counts: the bytes after it are never read. */
	CHECK_STR(parse_bytes("a.o: a.c b.h", 8), "a.c", "length bounds the text");
	CHECK_STR(parse_bytes("a.o: a.c\\\n b.h", 9), "a.c\\",
	          "a backslash at the end of length is not a continuation");
}

static void test_appends(void)
{
	struct strvec prerequisites;
	strvec_init(&prerequisites, &arena);
	strvec_push_copy(&prerequisites, "kept");
	const char *good = "a.o: a.c\n";
	const char *bad = "a.o: b.c\nnot a rule\n";
	CHECK_INT(depfile_parse(&arena, good, strlen(good), &prerequisites), 0, "a good depfile parses");
	CHECK_INT(depfile_parse(&arena, bad, strlen(bad), &prerequisites), -1, "a bad one fails");
	CHECK_INT(prerequisites.length, 2, "a failed parse leaves the list as it was");
	CHECK_STR(prerequisites.items[1], "a.c", "appended after the existing items");
	CHECK(prerequisites.items[2] == NULL, "the list stays NULL-terminated");
}

/* Feeds pseudo-random bytes drawn from the characters that matter; the
 * parser must neither crash nor read past length (see valgrind/ASan). */
static void test_random_bytes(void)
{
	static const char alphabet[] = "ab:\\ \t\r\n$#\0";
	unsigned state = 12345;
	int survived = 1;
	for (int round = 0; round < 20000; round++) {
		size_t length = (size_t)(round % 40);
		char *text = malloc(length ? length : 1);
		for (size_t i = 0; i < length; i++) {
			state = state * 1103515245u + 12345u;
			text[i] = alphabet[(state >> 16) % (sizeof alphabet - 1)];
		}
		struct strvec prerequisites;
		strvec_init(&prerequisites, &arena);
		int result = depfile_parse(&arena, text, length, &prerequisites);
		if (result != 0 && result != -1)
			survived = 0;
		for (size_t i = 0; i < prerequisites.length; i++)
			if (prerequisites.items[i][0] == '\0')
				survived = 0;
		free(text);
		if (round % 1000 == 0)
			arena_release(&arena);
	}
	CHECK(survived, "random bytes give 0 or -1 and no empty names");
}

int main(void)
{
	jmp_buf out_of_memory;
	if (setjmp(out_of_memory)) {
		printf("not ok - out of memory\n");
		return 1;
	}
	arena_init(&arena, &out_of_memory);
	test_gcc_output();
	test_escapes();
	test_line_endings();
	test_rejects();
	test_appends();
	test_random_bytes();
	arena_release(&arena);
	return check_failures != 0;
}
