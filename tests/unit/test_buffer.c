/* test_buffer.c - growable strings, argv lists and shell quoting. */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "buffer.h"
#include "check.h"

static jmp_buf out_of_memory;
static struct arena arena;

static const char *quoted(const char *word)
{
	struct buffer out;
	buffer_init(&out, &arena);
	buffer_put_shell_word(&out, word);
	return out.data;
}

int main(void)
{
	if (setjmp(out_of_memory)) {
		puts("not ok - out of memory");
		return 1;
	}
	arena_init(&arena, &out_of_memory);

	struct buffer text;
	buffer_init(&text, &arena);
	for (int i = 0; i < 1000; i++)
		buffer_printf(&text, "%d,", i % 10);
	CHECK_INT(text.length, 2000, "a buffer grows past its first capacity");
	CHECK(strncmp(text.data + 1990, "5,6,7,8,9,", 10) == 0 && text.data[2000] == '\0',
	      "and keeps its content, NUL-terminated");

	CHECK_STR(quoted("-DSTACK_SIZE=4096"), "-DSTACK_SIZE=4096", "a plain word is not quoted");
	CHECK_STR(quoted("a b"), "'a b'", "a space is quoted");
	CHECK_STR(quoted(""), "''", "an empty word is quoted");
	CHECK_STR(quoted("$(rm -rf /)"), "'$(rm -rf /)'", "command substitution stays literal");
	CHECK_STR(quoted("it's"), "'it'\\''s'", "a single quote is closed, escaped and reopened");
	CHECK_STR(quoted("a\"b`c\\d"), "'a\"b`c\\d'", "other metacharacters are quoted");

	struct strvec argv;
	strvec_init(&argv, &arena);
	for (int i = 0; i < 100; i++)
		strvec_push(&argv, arena_printf(&arena, "w%d", i));
	CHECK_INT(argv.length, 100, "a list grows");
	CHECK(argv.items[100] == NULL, "and stays NULL-terminated");
	CHECK(strvec_contains(&argv, "w99") && !strvec_contains(&argv, "w100"), "contains finds exact items");
	struct strvec command;
	strvec_init(&command, &arena);
	strvec_push(&command, "xt-clang++");
	strvec_push(&command, "-I/my dir");
	strvec_push(&command, "x;y");
	struct buffer line;
	buffer_init(&line, &arena);
	buffer_put_shell_command(&line, command.items);
	CHECK_STR(line.data, "xt-clang++ '-I/my dir' 'x;y'", "a command line quotes each word");

	arena_release(&arena);
	return check_failures != 0;
}
