/* check.h - the assertions of the C unit tests.
 *
 * Each check prints "ok - WHAT" or "not ok - WHAT" with the difference, as
 * tests/run-tests.sh expects; a test program returns check_failures != 0. */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

/* Reports whether a condition holds. */
#define CHECK(condition, what) check_true((condition) != 0, #condition, what, __FILE__, __LINE__)
/* Reports whether two strings (either may be NULL) are equal, showing both when not. */
#define CHECK_STR(actual, expected, what) check_string(actual, expected, what, __FILE__, __LINE__)
/* Reports whether two integers are equal. */
#define CHECK_INT(actual, expected, what) check_long((long)(actual), (long)(expected), what, __FILE__, __LINE__)

static inline void check_true(int holds, const char *text, const char *what, const char *file, int line)
{
	if (holds) {
		printf("ok - %s\n", what);
		return;
	}
	check_failures++;
	printf("not ok - %s\n# %s:%d: expected %s\n", what, file, line, text);
}

/* Prints text with every line prefixed by "# ". */
static inline void check_show(const char *label, const char *text)
{
	printf("# %s:\n", label);
	if (!text) {
		printf("#   (null)\n");
		return;
	}
	printf("#   |");
	for (const char *p = text; *p; p++) {
		if (*p == '\n')
			printf("\n#   |");
		else
			putchar(*p);
	}
	putchar('\n');
}

static inline void check_string(const char *actual, const char *expected, const char *what,
                                const char *file, int line)
{
	if (actual && expected && strcmp(actual, expected) == 0) {
		printf("ok - %s\n", what);
		return;
	}
	if (!actual && !expected) {
		printf("ok - %s\n", what);
		return;
	}
	check_failures++;
	printf("not ok - %s\n# %s:%d: strings differ\n", what, file, line);
	check_show("expected", expected);
	check_show("actual", actual);
}

static inline void check_long(long actual, long expected, const char *what, const char *file, int line)
{
	if (actual == expected) {
		printf("ok - %s\n", what);
		return;
	}
	check_failures++;
	printf("not ok - %s\n# %s:%d: expected %ld, got %ld\n", what, file, line, expected, actual);
}

#endif
