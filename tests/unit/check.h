/* check.h - the assertions of the C unit tests.
 *
 * Each check prints "ok - WHAT" or "not ok - WHAT" with the difference, as
 * tests/run-tests.sh expects; a test program returns check_failures != 0. */
#ifndef CHECK_H
#define CHECK_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Writes text to path, or ends the test program when it cannot. */
static inline void check_write_file(const char *path, const char *text)
{
	FILE *file = fopen(path, "w");
	if (!file || fputs(text, file) == EOF || fclose(file) != 0) {
		printf("not ok - cannot write %s\n", path);
		exit(1);
	}
}

static const char *check_watched;

static inline void check_watchdog_fired(int signal_number)
{
	(void)signal_number;
	ssize_t ignored = write(STDOUT_FILENO, "\nnot ok - ", 10);
	ignored = write(STDOUT_FILENO, check_watched, strlen(check_watched));
	ignored = write(STDOUT_FILENO, " (it hung)\n", 11);
	(void)ignored;
	_exit(1);
}

/* From now on, what must end within seconds: the program fails with
 * "not ok - WHAT (it hung)" rather than hang.  0 stops watching. */
static inline void check_watchdog(unsigned seconds, const char *what)
{
	struct sigaction action;
	memset(&action, 0, sizeof action);
	action.sa_handler = check_watchdog_fired;
	sigemptyset(&action.sa_mask);
	check_watched = what;
	sigaction(SIGALRM, &action, NULL);
	alarm(seconds);
}

#endif
